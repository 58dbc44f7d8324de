-- Clusterability of keys vs values: greedy k-center covering radius vs k (000 §3.1, a
-- numerical stand-in for 000 Fig. 1, whose t-SNE of Llama-2-7B caches shows "key embeddings
-- are more clusterable than value ones" with k = 16 greedy centers marked). A CPU cannot
-- reproduce the Llama caches; this shows what the claim means on a stream whose keys are
-- (m = 16, δ = 1)-clusterable (000 Def. 1) and whose values are not, and on i.i.d. Gaussian
-- keys and values as the control. radius_rel = radius with k centers / radius with 1 center.
-- What to look for: on the clusterable stream the key radius drops to the cluster radius
-- (a center per cluster covers it within δ = 1: seed 1 gives 0.89 of a one-center radius 7,
-- radius_rel ≈ 0.12) once k reaches m = 16, while its values and
-- the Gaussian control fall slowly (roughly like k^(-1/d)). To run the same study on caches
-- dumped from a model, declare stream "npy" { q = "Q.npy", k = "K.npy", v = "V.npy" }.
name "kcenter_keys_vs_values"
stream "clusterable" { n = 1024, d_key = 16, d_value = 16, m = 16, delta = 1, key_norm = 4,
                       value_spread = 0.5, label = "clusterable_m16" }
stream "gaussian" { n = 1024, d_key = 16, d_value = 16, label = "gaussian" }
probe "kcenter" { on = "keys", label = "keys" }
probe "kcenter" { on = "values", label = "values" }
sweep "centers" { 1, 2, 4, 8, 16, 32, 64, 128, 256 }
trials(8)
-- caption kcenter_radius_vs_k: on the clusterable stream (m = 16) the keys' radius drops tenfold
-- once k reaches 16 while the values' falls slowly; on Gaussian data keys and values behave
-- alike: "keys are more clusterable than values" is a property of the stream, which 000 Fig. 1
-- claims for real caches.
plot { name = "kcenter_radius_vs_k", x = "centers", y = "radius_rel", logx = true, logy = true,
       title = "Greedy k-center radius vs k, keys vs values (n = 1024, d = 16; 000 Fig. 1 analog)",
       xlabel = "k (greedy k-center centers)", ylabel = "covering radius / one-center radius" }

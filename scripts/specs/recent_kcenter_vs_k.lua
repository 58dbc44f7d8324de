-- Recent window + greedy k-center tokens (000 §3.2, 001 §4.1): relative error of attention
-- computed on the l most recent tokens plus k tokens chosen by greedy k-center on the keys,
-- as k grows, on clusterable keys (m = 16 clusters) vs i.i.d. Gaussian keys (a CPU-sized look
-- at the clusterability argument around 000 Fig. 1). What to look for: the kept tokens carry
-- no multiplicity weights, so on clusterable keys one representative per cluster stands for
-- a whole cluster's mass at weight 1; with seed 1 the median relative error on clusterable
-- keys stays above 1 until k = 256, while Gaussian keys reach about 0.23 there.
name "recent_kcenter_vs_k"
stream "clusterable" { n = 1024, d_key = 16, d_value = 16, m = 16, delta = 1, key_norm = 4, r = 1, label = "clusterable_m16" }
stream "gaussian" { n = 1024, d_key = 16, d_value = 16, label = "gaussian" }
method "recent_kcenter" { window = 32, label = "recent32+kcenter" }
sweep "centers" { 1, 4, 16, 64, 256 }
trials(8)
queries { at = { 512, 1024 } }
measures { "error", "memory" }
plot { name = "kcenter_error_vs_k", x = "centers", y = "rel_error", logx = true, logy = true,
       bound = "1", bound_title = "z = 0 (answer 0, keep nothing): relative error 1",
       title = "Recent window (32) + greedy k-center tokens: relative error vs k (n <= 1024, d = 16)",
       xlabel = "k (k-center tokens kept, 000 §3.2)", ylabel = "|z - Attn| / |Attn|" }

-- Clusterability of keys vs values on Gemma 3 270M, per layer (000 Fig. 1 / §1, 001 Fig. 1; the
-- twin of real_kcenter_keys_vs_values): the model run in C over the first 512 tokens of
-- "debian-licenses" (BOS first), its one KV head (dimension 256, QK-norm: keys RMS-normed per head
-- before RoPE) of every layer — local (window 512) and global (5, 11, 17) alike, since a layer's
-- cache is what it is whether or not a method compresses it. The measure is the greedy k-center
-- covering radius with k = 16 centers relative to the one-center radius (lower = more
-- clusterable). The pre-registered verdict is real.gemma3.cluster (global layers). What to look
-- for: whether QK-norm's bounded keys are more clusterable than the values, layer by layer.
name "real_kcenter_keys_vs_values_gemma3"
stream "model" { text = "debian-licenses", model = "gemma3", n = 512, head = 0, label = "kv0" }
probe "kcenter" { on = "keys", centers = 16, label = "keys" }
probe "kcenter" { on = "values", centers = 16, label = "values" }
sweep "layer" { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17 }
trials(1)
plot { name = "real_kcenter_radius_vs_layer_gemma3", x = "layer", y = "radius_rel",
       title = "Gemma 3 270M, 512 tokens: 16-center radius / 1-center radius, keys vs values",
       xlabel = "layer", ylabel = "covering radius (k = 16) / one-center radius" }

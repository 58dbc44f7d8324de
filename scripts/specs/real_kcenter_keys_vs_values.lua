-- Clusterability of keys vs values on a real model, per layer (000 Fig. 1 / §1, 001 Fig. 1):
-- SmolLM2-135M run in C over the first 512 tokens of the text "debian-licenses" (GPL-3 then
-- GFDL-1.3 from Debian's base-files, SHA-256 checked; src/model/README.md, The real model), the stream of
-- KV head 0, 1, 2 of every layer (query heads 0, 3, 6). The measure is the greedy k-center
-- covering radius with k = 16 centers (000 Fig. 1 marks 16 greedy centers) relative to the
-- one-center radius, so keys and values (whose norms differ several-fold) compare on one axis:
-- lower = more clusterable. The pre-registered verdict is the claim real.cluster (a sign test over
-- the 90 (layer, head) units after centering and RMS scaling, plus the online cluster counts m').
-- What to look for: whether the key curves lie below the value curves layer by layer.
name "real_kcenter_keys_vs_values"
stream "model" { text = "debian-licenses", n = 512, head = 0, label = "kv0" }
stream "model" { text = "debian-licenses", n = 512, head = 3, label = "kv1" }
stream "model" { text = "debian-licenses", n = 512, head = 6, label = "kv2" }
probe "kcenter" { on = "keys", centers = 16, label = "keys" }
probe "kcenter" { on = "values", centers = 16, label = "values" }
sweep "layer" { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                22, 23, 24, 25, 26, 27, 28, 29 }
trials(1)
plot { name = "real_kcenter_radius_vs_layer", x = "layer", y = "radius_rel",
       title = "SmolLM2-135M, 512 tokens: 16-center radius / 1-center radius, keys vs values",
       xlabel = "layer", ylabel = "covering radius (k = 16) / one-center radius" }

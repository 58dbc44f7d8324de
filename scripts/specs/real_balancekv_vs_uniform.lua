-- Block BalanceKV vs uniform sampling at equal memory on a real model, per layer (003 Fig. 1,
-- §4.1): SmolLM2-135M over the first 512 tokens of "debian-licenses" (src/model/README.md, The real model),
-- query head 0 with KV head 0 of every layer, scores scaled by 1/sqrt(64) as the model does.
-- Both methods keep the first and last 32 tokens exactly and 2^-T of the middle (block
-- BalanceKV: T halving rounds of the self-balancing walk in blocks of 128, key temperature
-- tau = 0.1 as in 003's single-layer study; uniform: a uniform 2^-T sample weighted m/k). Relative
-- error |z - Attn|/|Attn| at the queries of positions 384, 448 and 512, 2 seeds. The
-- pre-registered verdicts over all 90 (layer, head) units and both temperatures are the claims
-- real.bkvb.fig1 and real.bkvb.fig3. What to look for: the BalanceKV curve of each T below the
-- uniform curve of the same T, layer by layer.
name "real_balancekv_vs_uniform"
stream "model" { text = "debian-licenses", n = 512, head = 0, label = "kv0" }
scale "inv_sqrt_d"
method "balancekv_block" { f = 32, w = 32, b = 128, tau = 0.1, label = "BalanceKV" }
method "uniform_sample" { f = 32, w = 32, label = "uniform" }
sweep "layer" { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                22, 23, 24, 25, 26, 27, 28, 29 }
sweep "T" { 1, 2, 4 }
trials(2)
queries { at = { 384, 448, 512 } }
measures { "error", "memory" }
plot { name = "real_balancekv_error_vs_layer", x = "layer", y = "rel_error", logy = true,
       bound = "1", bound_title = "z = 0 (answer 0, keep nothing): relative error 1",
       title = "SmolLM2-135M, 512 tokens: relative attention error per layer at compression 2^-T",
       xlabel = "layer", ylabel = "|z - Attn| / |Attn|" }

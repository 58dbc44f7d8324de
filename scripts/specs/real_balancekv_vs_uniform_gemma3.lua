-- Block BalanceKV vs uniform sampling at equal memory on Gemma 3 270M, per GLOBAL layer (003
-- Fig. 1, §4.1; the twin of real_balancekv_vs_uniform): the model run in C over the first 512
-- tokens of "debian-licenses" (BOS first), query head 0 with its one KV head (dimension 256,
-- QK-norm) of the three global layers 5, 11 and 17 — the layers a method compresses inside the
-- model; its 15 local layers keep a 512-token window exactly. Scores scaled by 1/sqrt(256) as the
-- model does. Both methods keep the first and last 32 tokens exactly and 2^-T of the middle
-- (block BalanceKV: T halving rounds in blocks of 128, tau = 0.1 as in 003's single-layer study;
-- uniform: a uniform 2^-T sample weighted m/k). Relative error |z - Attn|/|Attn| at the queries
-- of positions 384, 448 and 512, 2 seeds. The pre-registered verdicts are the claims
-- real.gemma3.bkvb.fig1 and real.gemma3.bkvb.fig3. What to look for: the BalanceKV curve of each
-- T below the uniform curve of the same T.
name "real_balancekv_vs_uniform_gemma3"
stream "model" { text = "debian-licenses", model = "gemma3", n = 512, head = 0, label = "kv0" }
scale "inv_sqrt_d"
method "balancekv_block" { f = 32, w = 32, b = 128, tau = 0.1, label = "BalanceKV" }
method "uniform_sample" { f = 32, w = 32, label = "uniform" }
sweep "layer" { 5, 11, 17 }
sweep "T" { 1, 2, 4 }
trials(2)
queries { at = { 384, 448, 512 } }
measures { "error", "memory" }
plot { name = "real_balancekv_error_vs_layer_gemma3", x = "layer", y = "rel_error", logy = true,
       bound = "1", bound_title = "z = 0 (answer 0, keep nothing): relative error 1",
       title = "Gemma 3 270M global layers, 512 tokens: relative attention error at compression 2^-T",
       xlabel = "layer", ylabel = "|z - Attn| / |Attn|" }

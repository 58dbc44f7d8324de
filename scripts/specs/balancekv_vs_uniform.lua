-- BalanceKV vs uniform sampling over compression rates 2^-T (003 Fig. 1 analog, 003 §4.1):
-- the block-parallel BalanceKV of 003's experiments (first/recent tokens exact, T halving
-- rounds by the self-balancing walk) against the baseline that keeps a uniform 2^-T sample of
-- the middle tokens with weight 2^T. Scores scaled by 1/sqrt(d) as in 003. A CPU-sized
-- stand-in for 003's LLM layers: clusterable keys with skewed clusters and heavy-tailed values.
name "balancekv_vs_uniform"
stream "clusterable" { n = 2048, d_key = 32, d_value = 32, m = 16, delta = 2, key_norm = 6, r = 6,
                       value_spread = 0.5, cluster_skew = 1 }
scale "inv_sqrt_d"
method "balancekv_block" { f = 32, w = 32, b = 256, label = "BalanceKV" }
method "uniform_sample" { f = 32, w = 32, label = "uniform" }
sweep "T" { 1, 2, 3, 4 }
trials(16)
queries { every = 512 }
measures { "error", "memory" }
plot { name = "balancekv_vs_uniform", x = "T", y = "rel_error", logy = true,
       title = "003 Fig. 1 analog: relative error vs compression 2^-T (n = 2048, d = 32)",
       xlabel = "T (halving rounds; compression rate 2^-T)", ylabel = "|z - Attn| / |Attn|" }

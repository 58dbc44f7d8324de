-- Lower-bound decoding success vs memory (003 Theorem 3.2, Appendix C). Alice streams the
-- INDEX instance's pairs (k_i, v_i) for her bits x_i = 1 into a method; Bob queries q_i = k_i
-- for every bit and decides x_i = 1 iff ⟨z, v_i⟩ > T = (1/40)e^{r²/√d}/max{d e^{r²/√d}, |U|}.
-- With d = 64, r = 8 (r²/√d = 8) and n = 1024 bits (the theorem's literal n for ε = 2^-5),
-- exact attention lets Bob decode (the appendix's conclusion); by INDEX (Fano) a method that
-- lets Bob decode with error δ keeps at least (1 − H₂(δ))·n bits — far below one stored
-- vector of 64 doubles, so no sketch here can contradict the bound. decode_acc is the fraction of the n bits Bob
-- gets right (0.5 is guessing). Each sketch's budget moves along one axis: uniform sampling
-- and block BalanceKV keep 2^-T of |U|, SubGen (one cluster per distinct key, t = 1) keeps
-- s = 512·2^-T value samples. What to look for: every sketch loses the decoder as its memory
-- falls, close to 1/2 + (kept fraction)/2, i.e. a bit is decoded only if its own pair
-- survives: the accuracy curve against mem_vectors is the empirical face of the lower bound
-- (props/lowerbound.c: lowerbound.decode.exact reports the 0.8 rule cell by cell, literal n and
-- small n, with eq. (2)'s allowed error injected; lowerbound.decode.sketch writes per-sketch
-- rates, the eq. (2) ratio each sketch met and the INDEX check).
name "lowerbound_decode_vs_memory"
stream "index_reduction" { n = 1024, d_key = 64, d_value = 64, r = 8 }
scale "inv_sqrt_d"
method "exact" {}
method "uniform_sample" { f = 0, w = 0, label = "uniform" }
method "balancekv_block" { f = 0, w = 0, b = 256, label = "BalanceKV_block" }
method "subgen" { delta = 0.01, t = 1, label = "SubGen" }
sweep { T = { 0, 1, 2, 3, 4, 5, 6 }, s = { 512, 256, 128, 64, 32, 16, 8 } }
trials(8)
measures { "decode", "memory" }
-- caption decode_vs_memory: Bob decodes above guessing only as memory approaches the n = 1024
-- bits: uniform sampling and block BalanceKV follow one accuracy-vs-memory curve, SubGen below
-- it, none far above guessing under 100 vectors, as 003 Thm. 3.2's space bound requires.
plot { name = "decode_vs_memory", x = "mem_vectors", y = "decode_acc", logx = true,
       bound = "0.5", bound_title = "guessing (0.5)",
       title = "003 Thm. 3.2 INDEX reduction: Bob's decoding accuracy vs memory (n = 1024 bits, d = 64, r = 8)",
       xlabel = "vectors kept (keys + values)", ylabel = "fraction of bits decoded correctly" }
-- caption decode_vs_T: exact attention decodes every bit; each halving of memory costs the
-- compressed methods accuracy, down to guessing (0.5) by T = 4-6.
plot { name = "decode_vs_T", x = "T", y = "decode_acc",
       bound = "0.5", bound_title = "guessing (0.5)",
       title = "INDEX decoding accuracy vs compression 2^-T (n = 1024 bits, d = 64, r = 8)",
       xlabel = "T (compression 2^-T; SubGen s = 512·2^-T)", ylabel = "fraction of bits decoded correctly" }

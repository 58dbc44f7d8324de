-- SubGen error vs the number s of value samples (000 Theorem 1 = 001 Theorem 2.4, eq. (3)).
-- (m, delta)-clusterable keys (000 Def. 1), t large so the normalizer is accurate and the
-- error is dominated by the value sampling; the y axis is ratio_op = |z - Attn| /
-- (|softmax|_2 |V|_op), i.e. the epsilon the run achieved. Theorem 1 needs s = Omega(eps^-2 d):
-- the dashed curve is kvbound's explicit constant (src/subgen_bounds.h: s = 1800 eps^-2 d, so
-- eps = sqrt(1800 d / s), to hold with prob. 0.995), the dotted one the bare rate sqrt(d/s).
name "subgen_error_vs_s"
stream "clusterable" { n = 1024, d_key = 8, d_value = 8, m = 4, delta = 0.5, r = 1, key_norm = 2 }
method "subgen" { delta = 0.5, t = 64 }
sweep "s" { 4, 8, 16, 32, 64, 128, 256, 512 }
trials(24)
queries { every = 256 }
failure { column = "ratio_op", above = 1 }
plot { name = "subgen_ratio_vs_s", x = "s", y = "ratio_op", logx = true, logy = true,
       bound = "sqrt(1800*8/x)", bound_title = "Thm 1 with explicit constants: sqrt(1800 d/s)",
       bound2 = "sqrt(8/x)", bound2_title = "rate sqrt(d/s) (constant 1)",
       title = "SubGen (000 Alg. 1): error/(|softmax| |V|_op) vs s  [n=1024, d=8, m=4, t=64]",
       xlabel = "s (value samples, 000 Alg. 1 line 23)", ylabel = "|z - Attn| / (|softmax|_2 |V|_op)" }
plot { name = "subgen_relerr_vs_s", x = "s", y = "rel_error", logx = true, logy = true,
       bound = "1", bound_title = "z = 0 (answer 0, keep nothing): relative error 1",
       title = "SubGen: relative error |z - Attn|/|Attn| vs s",
       xlabel = "s (value samples)", ylabel = "relative error" }

-- SubGen error vs the number t of samples per cluster (000 Theorem 1: t = Omega(eps^-2
-- e^{2 delta r} log n)). s is large so the value sampling contributes little. Dashed: kvbound's
-- explicit constant (src/subgen_bounds.h: t = 27 eps^-2 e^{2 delta r} ln(400 m), i.e.
-- eps = sqrt(27 e^{2 delta r} ln(400 m) / t)); dotted: the rate e^{delta r} sqrt(ln n / t).
-- With delta = 4, r = 2: e^{2 delta r} = e^16, so the bound is vacuous at every t a CPU can run.
name "subgen_error_vs_t"
stream "clusterable" { n = 1024, d_key = 8, d_value = 8, m = 4, delta = 4, r = 2, key_norm = 8 }
method "subgen" { delta = 4, s = 512 }
sweep "t" { 1, 2, 4, 8, 16, 32, 64, 128 }
trials(24)
queries { every = 256 }
failure { column = "ratio_op", above = 1 }
plot { name = "subgen_ratio_vs_t", x = "t", y = "ratio_op", logx = true, logy = true,
       bound = "sqrt(27*exp(16)*log(400*4)/x)", bound_title = "Thm 1 with explicit constants: sqrt(27 e^{2dr} ln(400m)/t)",
       bound2 = "exp(8)*sqrt(log(1024)/x)", bound2_title = "rate e^{dr} sqrt(ln n / t) (constant 1)",
       title = "SubGen (000 Alg. 1): error/(|softmax| |V|_op) vs t  [n=1024, d=8, m=4, delta=4, r=2, s=512]",
       xlabel = "t (samples per cluster, 000 Alg. 1 line 14)", ylabel = "|z - Attn| / (|softmax|_2 |V|_op)" }

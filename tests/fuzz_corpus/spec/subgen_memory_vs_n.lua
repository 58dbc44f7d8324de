-- Memory vs n for clusterable vs non-clusterable keys (000 Theorem 1: memory O(d(mt + s)) on
-- (m, delta)-clusterable keys, independent of n; 000 Fig. 1 / §1 motivation). On i.i.d.
-- Gaussian keys in d = 8 almost every key is farther than delta from all representatives, so
-- SubGen opens a cluster per key and its memory grows linearly, like exact attention's; keys
-- uniform on a sphere of radius 4 (adversarial/, stream adv_sphere) behave the same way.
name "subgen_memory_vs_n"
stream "clusterable" { n = 4096, d_key = 8, d_value = 8, m = 8, delta = 1, r = 1, key_norm = 4, label = "clusterable_m8" }
stream "gaussian" { n = 4096, d_key = 8, d_value = 8, label = "gaussian" }
stream "adv_sphere" { n = 4096, d_key = 8, d_value = 8, key_norm = 4, r = 1, label = "sphere" }
method "subgen" { delta = 1, t = 8, s = 32 }
method "exact" {}
trials(4)
queries { at = { 64, 128, 256, 512, 1024, 2048, 4096 } }
measures { "error", "memory", "work" }
plot { name = "memory_vs_n", x = "j", y = "mem_bytes", logx = true, logy = true, bands = false,
       bound = "8*8*(8*8+2*32)", bound_title = "8 d(mt + 2s) bytes (m = 8)",
       bound2 = "x*8*16", bound2_title = "exact: n (k, v) pairs",
       title = "Memory vs stream length n: clusterable (m = 8) vs Gaussian and sphere keys (d = 8)",
       xlabel = "n (tokens seen)", ylabel = "bytes kept" }

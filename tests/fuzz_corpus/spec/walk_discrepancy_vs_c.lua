-- Self-Balancing Walk discrepancy and FAIL rate vs the constant c (003 Alg. 3 lines 2, 5-8),
-- at n = 4096 unit keys in d = 4. The paper sets c = 30·log(n/δ) ≈ 456 for δ = 1e-3; a
-- smaller c makes the walk push harder toward balance (p_i = ½ − corr_i/(2c r²)) until
-- |corr_i| exceeds c·r² and the step FAILs (line 5-6; the reference records it and clips p).
-- What to look for: D shrinks as c falls; every run FAILs at c <= 4, some at c = 8 (seed 1:
-- 35/256 runs, 95% CP [0.097, 0.185]), none of 256 from c = 16 on (rate <= 0.0143), so the
-- paper's c is safe by a factor of about 30 here; random
-- signs (which ignore c) are the flat reference. The failure column gives Clopper–Pearson
-- intervals of the rate of runs with at least one FAIL, per c.
name "walk_discrepancy_vs_c"
stream "adv_sphere" { n = 4096, d_key = 4, d_value = 4, key_norm = 1, r = 1, label = "unit_sphere_d4" }
probe "walk" { signs = "walk", label = "walk" }
probe "walk" { signs = "random", label = "random_signs" }
sweep "c" { 0.25, 0.5, 1, 2, 4, 8, 16, 64, 256, 456 }
trials(256)
failure { column = "walk_fails", above = 0 }
plot { name = "walk_disc_vs_c", x = "c", y = "disc", logx = true, logy = true,
       bound = "x", bound_title = "c·r (Theorem A.1 with O = c)",
       title = "003 Alg. 3: discrepancy vs walk constant c (n = 4096 unit keys, d = 4)",
       xlabel = "c (paper: 30 log(n/δ) = 456 at δ = 1e-3)", ylabel = "D = |<sum eps_i u_i, g>|" }
plot { name = "walk_fails_vs_c", x = "c", y = "walk_fails", logx = true, bands = true,
       title = "003 Alg. 3 line 5: FAIL steps per run vs c (n = 4096, d = 4)",
       xlabel = "c", ylabel = "steps with |corr| > c r^2" }

-- Self-Balancing Walk discrepancy vs n (003 Alg. 3, Theorem A.1): the walk run online over
-- unit keys in d = 4 against independent random signs, D = |<Σ ε_i u_i, g>| for a fixed random
-- unit g. Theorem A.1 bounds D by O(log(n/δ))·max‖u_i‖·‖g‖ with probability 1 − δ; the dashed
-- curve reads the O as the walk's own c = 30 (003 Alg. 3 line 2), δ = 1e-3. What to look for:
-- the walk's D grows far slower than random signs' √n (props/balancekv_walk.c asserts the
-- slope and the comparison at α = 1e-6; this plot shows them), and sits two orders of
-- magnitude under the c·r curve — the constant 30 is loose by that much at these n. A walk
-- with c = 16 (no FAIL at these n, see walk_discrepancy_vs_c) keeps D of order 1 at every n.
name "walk_discrepancy_vs_n"
stream "adv_sphere" { n = 1024, d_key = 4, d_value = 4, key_norm = 1, r = 1, label = "unit_sphere_d4" }
probe "walk" { signs = "walk", delta = 1e-3, label = "walk_paper_c" }
probe "walk" { signs = "walk", c = 16, label = "walk_c16" }
probe "walk" { signs = "random", label = "random_signs" }
sweep "n" { 64, 256, 1024, 4096, 16384, 65536 }
trials(64)
plot { name = "walk_disc_vs_n", x = "n", y = "disc", logx = true, logy = true,
       bound = "30*log(x/1e-3)", bound_title = "Theorem A.1 with O = c: 30 log(n/δ)·r",
       bound2 = "sqrt(2*x/(pi*4))", bound2_title = "random signs: E D = sqrt(2n/(π d)), d = 4",
       title = "003 Alg. 3 walk vs random signs: discrepancy along a fixed direction (unit keys, d = 4)",
       xlabel = "n (vectors walked)", ylabel = "D = |<sum eps_i u_i, g>|" }
plot { name = "walk_disc_inf_vs_n", x = "n", y = "disc_inf", logx = true, logy = true,
       bound = "30*log(x/1e-3)", bound_title = "30 log(n/δ)·r",
       title = "Coordinate discrepancy ||sum eps_i u_i||_inf vs n (unit keys, d = 4)",
       xlabel = "n (vectors walked)", ylabel = "max_c |sum eps_i u_i[c]|" }

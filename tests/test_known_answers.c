/* test_known_answers.c — constants, defaults and formulas pinned by values computed OUTSIDE the
 * code under test (the paper's formula typed here from the paper, a hand computation, or
 * python3 + mpmath 1.3.0 at 40 digits; each case names its source). Every case is built so that
 * the plausible wrong readings give a different answer at the tested inputs: the property checks
 * recompute these values with the code they test, so a wrong constant would pass them (as
 * independent mutants that changed such constants showed by surviving).
 *
 * Technique for the random walks: the walks take caller-supplied uniforms and choose +1 exactly
 * when u < p (walk.h; balancekv_block.h). Feeding u = p_expected ∓ 1e-10 must give +1 / −1, which
 * pins p to within 1e-10 — far tighter than the gap between the readings (>= 1e-6 here). */
#include "baselines.h"
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <string.h>

static int close_rel(double a, double b, double tol) { return fabs(a - b) <= tol * fabs(b); }
#define BR 1e-10 /* bracket half-width around an expected p */

/* ---- 003 Alg. 3 line 2 / Alg. 2 line 3 (004 the same, in LaTeX): c = 30·log(n/δ) ----
 * The papers write "log" with no base; walk.h and softmax_balance.h document the natural log,
 * so this pins that documented reading (a change of base must be a deliberate edit here). */
static void test_walk_constant(void) {
  /* 30·ln(1000/0.01) = 30·ln(1e5) = 345.38776394910685260... (mpmath). Wrong readings at these
   * inputs: log2 → 498.29, log10 → 150, 20 instead of 30 → 230.26, n instead of n/δ → 207.23. */
  double c = kvb_walk_paper_c(1000, 0.01);
  CHECK(close_rel(c, 345.38776394910685, 1e-14), "known.walk.paper_c",
        "c(1000, 0.01) = %.17g, want 30·ln(1e5) = 345.38776394910685", c);
  /* SoftmaxBalance's constant for n = 3 pairs, δ = 0.01 (003 Alg. 2 line 3): 30·ln 300 =
   * 171.11347423968603 (mpmath); an explicit c overrides it. */
  kvb_sb_config sb = {1 / sqrt(2.0), 2.0, 0.5, 0.01, 0, 0};
  double c3 = kvb_sb_constant(&sb, 3);
  sb.c = 7.5;
  double co = kvb_sb_constant(&sb, 3);
  CHECK(close_rel(c3, 171.11347423968603, 1e-14) && co == 7.5, "known.sb.constant",
        "c(3, 0.01) = %.17g (want 171.11347423968603), override %g (want 7.5)", c3, co);
}

/* ---- The walk on explicit vectors at r = 2 (003 Alg. 3 lines 5, 8): p_i = ½ − corr/(2c·r²) ----
 * Existing tests ran the walk at r = 1, where r and r² coincide. Vectors in R² with ‖u‖ <= 2:
 * u1 = (1.5, 1), u2 = (1, −1.2), u3 = (−0.5, 1.8); n = 3, δ = 0.1: c = 30·ln 30.
 * Step 1: corr = 0, p = ½, u = 0.25 → ε1 = +1.  Step 2: corr = <u1,u2> = 1.5 − 1.2 = 0.3.
 * Step 3: corr = ε1<u1,u3> + ε2<u2,u3> = (−0.75 + 1.8) + ε2(−0.5 − 2.16) = 1.05 − 2.66·ε2.
 * Computed here from those hand inner products (the code uses a running sum w = Σ ε u). */
static void test_walk_r2(void) {
  const double U[6] = {1.5, 1, 1, -1.2, -0.5, 1.8};
  double r = 2, c = 30 * log(3 / 0.1);
  double p2 = 0.5 - 0.3 / (2 * c * r * r);
  int ok = 1;
  char why[160] = "";
  for (int e2 = 1; e2 >= -1; e2 -= 2) {
    double p3 = 0.5 - (1.05 - 2.66 * e2) / (2 * c * r * r);
    for (int e3 = 1; e3 >= -1; e3 -= 2) {
      double un[3] = {0.25, p2 - e2 * BR, p3 - e3 * BR};
      int eps[3] = {0, 0, 0};
      uint64_t f = 9;
      int rc = kvb_walk_vectors(3, 2, U, r, kvb_walk_paper_c(3, 0.1), un, NULL, 0, eps, &f);
      if (rc != KVB_OK || f != 0 || eps[0] != 1 || eps[1] != e2 || eps[2] != e3) {
        ok = 0;
        snprintf(why, sizeof why, "want (+1,%+d,%+d) got (%+d,%+d,%+d), rc %d fails %llu", e2, e3,
                 eps[0], eps[1], eps[2], rc, (unsigned long long)f);
      }
    }
  }
  CHECK(ok, "known.walk.r2_probabilities", "%s", why);
  /* FAIL threshold, line 5: |corr| > c·r². The first two vectors only (n = 2): step 2 has
   * corr/r² = 0.3/4 = 0.075; an explicit c just above / just below it. */
  double un2[2] = {0.25, 0.5};
  int eps2[2];
  uint64_t fa = 9, fb = 9;
  kvb_walk_vectors(2, 2, U, r, 0.075 * (1 + 1e-9), un2, NULL, 0, eps2, &fa);
  kvb_walk_vectors(2, 2, U, r, 0.075 * (1 - 1e-9), un2, NULL, 0, eps2, &fb);
  CHECK(fa == 0 && fb == 1, "known.walk.r2_fail_threshold",
        "fails at c = 0.075(1±1e-9): %llu, %llu (want 0, 1: FAIL iff |corr| > c·r², r = 2)",
        (unsigned long long)fa, (unsigned long long)fb);
}

/* ---- SoftmaxBalance, 003 Alg. 2 at r_key = 2, r_value = 0.5 (where r and r² differ) ----
 * Typed from 003 Alg. 2 (004 Alg. 2 in LaTeX):
 *   line 2  R = exp(r_key²/(2√d))·r_value
 *   line 3  c = 30·log(n/δ)
 *   line 6  y_ij = exp(<k_i,k_j>/√d)·<v_i,v_j>
 *   line 8  p_j = ½ − yᵀη/(2c·R²)
 * d = 2, n = 3, δ = 0.01, keys (1.2, 0.5), (0.8, −1.1), (−0.3, 1.6) (norms <= 2), values
 * (0.3, 0.2), (0.25, −0.1), (0.1, 0.4) (norms <= 0.5). mpmath at 40 digits:
 *   R = 2.0566251893914638, c = 171.11347423968603, y21/R² = 0.017376421514572851,
 *   p2 (η1 = +1) = 0.49994922544354914,
 *   p3 = 0.49989879300410926 (η2 = +1) or 0.49989375438415687 (η2 = −1).
 * Readings that coincide at radius 1 and differ here: R with r_key instead of r_key² (p2 − ½
 * ×4.1), R without r_value or with r_value² inside R (R² off by ×4 or ×16), log2 in c (×1.44). */
static double sb_y(const double *ki, const double *kj, const double *vi, const double *vj) {
  return exp((ki[0] * kj[0] + ki[1] * kj[1]) / sqrt(2.0)) * (vi[0] * vj[0] + vi[1] * vj[1]);
}
static void test_softmax_balance(void) {
  const double K[6] = {1.2, 0.5, 0.8, -1.1, -0.3, 1.6}, V[6] = {0.3, 0.2, 0.25, -0.1, 0.1, 0.4};
  double R = exp(2.0 * 2.0 / (2 * sqrt(2.0))) * 0.5, c = 30 * log(3 / 0.01), R2 = R * R;
  double p2 = 0.5 - sb_y(K + 2, K, V + 2, V) / (2 * c * R2);
  double p3p = 0.5 - (sb_y(K + 4, K, V + 4, V) + sb_y(K + 4, K + 2, V + 4, V + 2)) / (2 * c * R2);
  double p3m = 0.5 - (sb_y(K + 4, K, V + 4, V) - sb_y(K + 4, K + 2, V + 4, V + 2)) / (2 * c * R2);
  /* the formulas typed above against the independent mpmath values */
  CHECK(close_rel(R, 2.0566251893914638, 1e-14) && close_rel(p2, 0.49994922544354914, 1e-15) &&
            close_rel(p3p, 0.49989879300410926, 1e-15) && close_rel(p3m, 0.49989375438415687, 1e-15),
        "known.sb.hand_values", "R %.17g p2 %.17g p3 %.17g %.17g", R, p2, p3p, p3m);
  kvb_sb_config cfg = {1 / sqrt(2.0), 2.0, 0.5, 0.01, 0, 0};
  int ok = 1;
  char why[200] = "";
  for (int e2 = 1; e2 >= -1; e2 -= 2)
    for (int e3 = 1; e3 >= -1; e3 -= 2) {
      double p3 = e2 > 0 ? p3p : p3m;
      double un[3] = {0.25, p2 - e2 * BR, p3 - e3 * BR};
      int eps[3] = {0, 0, 0};
      size_t keep[3], nk = 99;
      uint64_t f = 9;
      int rc = kvb_softmax_balance(3, 2, 2, K, V, &cfg, un, NULL, eps, keep, &nk, &f);
      /* lines 12-16: the smaller side, +1 on a tie; with ε1 = +1 the −1 side is smaller unless
       * both later signs are −1 */
      size_t want_nk = (e2 + e3 == 2) ? 0 : 1;
      if (rc != KVB_OK || f != 0 || eps[0] != 1 || eps[1] != e2 || eps[2] != e3 || nk != want_nk) {
        ok = 0;
        snprintf(why, sizeof why, "want (+1,%+d,%+d) |C'| %zu, got (%+d,%+d,%+d) |C'| %zu, rc %d",
                 e2, e3, want_nk, eps[0], eps[1], eps[2], nk, rc);
      }
    }
  CHECK(ok, "known.sb.r2_probabilities", "%s", why);
  /* Line 7: FAIL iff |yᵀη| > c·R². n = 2: at step 2, |yᵀη|/R² = y21/R² = 0.017376421514572851
   * (mpmath); an explicit c just above / below it. */
  double thr = 0.017376421514572851, un2[2] = {0.25, 0.5};
  int eps2[2];
  size_t keep2[2], nk2;
  uint64_t fa = 9, fb = 9;
  cfg.c = thr * (1 + 1e-9);
  kvb_softmax_balance(2, 2, 2, K, V, &cfg, un2, NULL, eps2, keep2, &nk2, &fa);
  cfg.c = thr * (1 - 1e-9);
  kvb_softmax_balance(2, 2, 2, K, V, &cfg, un2, NULL, eps2, keep2, &nk2, &fb);
  CHECK(fa == 0 && fb == 1, "known.sb.r2_fail_threshold",
        "fails at c = y21/R²·(1±1e-9): %llu, %llu (want 0, 1)", (unsigned long long)fa,
        (unsigned long long)fb);
}

/* ---- balancekv_block defaults: γ = 4, c₀ = 0.025, τ = 1, β = 0 ----
 * Source: the authors' code github.com/ksheth96/BalanceKV, src/balanced_walk.py (const_denom =
 * 0.025; p = ½ − γ·Σ) and balancekv_press.py (γ = 4, temp 1, β = 0), as balancekv_block.h cites.
 * One head, two tokens (d = 2, d_v = 1), T = 1: keys (1.5, 0), (−1.5, 0) centered by their mean
 * (0, 0) stay as they are; the walk's step 1 (s_0 = +1):
 *   F_01 = exp(τ·<k̃0,k̃1>/√d − β)·(v0·v1 + c₀) = exp(−2.25/√2)·(0.2·0.3 + 0.025)
 *   p_1  = ½ − γ·F_01 = 0.43073391725278858 (mpmath; c₀ = 0: 0.4511; γ = 2: 0.4654).
 * Halving of m = 2 signs (h = 1; kvb_bkvb_halve): (+,+) keeps token 1 ×1, (+,−) keeps token 0 ×2.
 * So the kept token names s_1, and u_1 = p_1 ∓ 1e-10 pins p_1. Both default sources are pinned:
 * kvb_bkvb_opts_default and the method's parameter table (kvb_bkvb_opts_from_params). */
static int bkvb_case(const kvb_bkvb_opts *o, double u1, size_t *idx, double *w) {
  const double K[4] = {1.5, 0, -1.5, 0}, V[2] = {0.2, 0.3};
  double u0[2] = {0.0, u1};
  const double *u[1] = {u0};
  return kvb_bkvb_compress(1, 2, 2, 1, K, V, o, u, NULL, idx, w, NULL);
}
static void test_bkvb_defaults(void) {
  double p1 = 0.5 - 4.0 * exp(-2.25 / sqrt(2.0)) * (0.2 * 0.3 + 0.025);
  CHECK(close_rel(p1, 0.43073391725278858, 1e-15), "known.bkvb.hand_p", "p1 %.17g", p1);
  kvb_bkvb_opts od, op;
  kvb_bkvb_opts_default(&od);
  kvb_params p;
  kvb_params_init(&p);
  kvb_bkvb_opts_from_params(&p, &op);
  const kvb_bkvb_opts *os[2] = {&od, &op};
  const char *names[2] = {"known.bkvb.defaults_struct", "known.bkvb.defaults_params"};
  for (int k = 0; k < 2; k++) {
    size_t ia = 9, ib = 9;
    double wa = 0, wb = 0;
    int ra = bkvb_case(os[k], p1 - BR, &ia, &wa); /* s_1 = +1 → token 1, ×1 */
    int rb = bkvb_case(os[k], p1 + BR, &ib, &wb); /* s_1 = −1 → token 0, ×2 */
    CHECK(ra == KVB_OK && rb == KVB_OK && ia == 1 && wa == 1 && ib == 0 && wb == 2 &&
              os[k]->gamma == 4 && os[k]->c0 == 0.025 && os[k]->tau == 1 && os[k]->beta == 0,
          names[k], "kept (%zu ×%g) and (%zu ×%g), want (1 ×1) and (0 ×2); γ %g c0 %g τ %g β %g",
          ia, wa, ib, wb, os[k]->gamma, os[k]->c0, os[k]->tau, os[k]->beta);
  }
}

/* ---- H2O's default recent window at odd budgets: R = ⌈B/2⌉ ----
 * Source: h2o.c's documented rule ("recent = 0 means ⌈B/2⌉", 2306.14048 §5: heavy hitters and
 * recent tokens share the budget equally; the odd token goes to the recent side). Stream (d = 1):
 * B heavy tokens (key +4) then 3B light ones (key −4), q = 1 after every token. A light token's
 * accumulated weight is < e⁻⁸ of a heavy one's, so once outside the window it is the first
 * evicted: at the end the cache holds exactly the R newest (light) tokens and B − R heavy ones,
 * the earliest (largest accumulated score): positions 0..B−R−1. Floor (B/2) gives R one less. */
static void test_h2o_recent(void) {
  const size_t budgets[4] = {7, 9, 11, 8}, want_R[4] = {4, 5, 6, 4};
  for (int b = 0; b < 4; b++) {
    size_t B = budgets[b], n = 4 * B;
    kvb_method_config cfg = {.d_key = 1, .d_value = 1, .scale = 1.0, .rng = NULL};
    kvb_params p;
    kvb_params_init(&p);
    kvb_params_set(&p, "budget", (double)B);
    kvb_method *m = NULL;
    int ok = kvb_method_alloc("h2o", &cfg, &p, &m) == KVB_OK;
    double q = 1, z;
    for (size_t i = 0; ok && i < n; i++) {
      double k = i < B ? 4.0 : -4.0, v = (double)i;
      ok = !kvb_method_update(m, &k, 1, &v, 1) && !kvb_method_query(m, &q, 1, &z, 1);
    }
    size_t got[64], nk = ok ? kvb_baseline_kept(m, got, 64) : 0, R = want_R[b];
    int same = ok && nk == B;
    for (size_t i = 0; same && i < B; i++)
      same = got[i] == (i < B - R ? i : n - B + i); /* 0..B−R−1, then n−R..n−1 */
    char name[64];
    snprintf(name, sizeof name, "known.h2o.recent_default_B%zu", B);
    CHECK(same, name, "kept %zu tokens, want heavy 0..%zu and the %zu newest (R = ⌈%zu/2⌉)", nk,
          B - R - 1, R, B);
    kvb_method_free(m);
  }
}

/* ---- KS statistic with D⁻ > D⁺ (stats.h kvb_ks_uniform: D = sup|F_n(x) − x| = max(D⁺, D⁻),
 * D⁺ = max_i (i/n − u_(i)), D⁻ = max_i (u_(i) − (i−1)/n)). The existing cases have D⁺ >= D⁻.
 * Hand values; p-values from the closed forms of the Kolmogorov law:
 *   n = 1: P[D >= d] = 2 − 2d (d >= ½);  d >= 1 − 1/n: P[D >= d] = 2(1 − d)^n;
 *   1/(2n) <= d <= 1/n: P[D < d] = n!(2d − 1/n)^n. */
static void test_ks_dminus(void) {
  double D, u1 = 0.8;
  double p = kvb_ks_uniform(&u1, 1, &D); /* D⁺ = 0.2, D⁻ = 0.8 */
  CHECK(close_rel(D, 0.8, 1e-15) && close_rel(p, 0.4, 1e-12), "known.ks.dminus_n1",
        "D %.17g (want 0.8) p %.17g (want 0.4)", D, p);
  /* {0.9, 0.8, 0.7} (unsorted on purpose): D⁺ = max(1/3 − 0.7, 2/3 − 0.8, 1 − 0.9) = 0.1,
   * D⁻ = max(0.7, 0.8 − 1/3, 0.9 − 2/3) = 0.7 >= 1 − 1/3: p = 2·0.3³ = 0.054. */
  double s3[3] = {0.9, 0.8, 0.7};
  p = kvb_ks_uniform(s3, 3, &D);
  CHECK(close_rel(D, 0.7, 1e-15) && close_rel(p, 0.054, 1e-10), "known.ks.dminus_high",
        "D %.17g (want 0.7) p %.17g (want 0.054)", D, p);
  /* {0.55, 0.25, 0.88}: D⁺ = max(1/3 − 0.25, 2/3 − 0.55, 1 − 0.88) = 0.12, D⁻ = max(0.25,
   * 0.55 − 1/3, 0.88 − 2/3) = 0.25 ∈ [1/6, 1/3]: p = 1 − 3!·(0.5 − 1/3)³ = 1 − 1/36. */
  double m3[3] = {0.55, 0.25, 0.88};
  p = kvb_ks_uniform(m3, 3, &D);
  CHECK(close_rel(D, 0.25, 1e-15) && close_rel(p, 35.0 / 36, 1e-12), "known.ks.dminus_low",
        "D %.17g (want 0.25) p %.17g (want 35/36)", D, p);
}

/* ---- kvb_slope_less with unequal df: Welch–Satterthwaite ν = (va + vb)²/(va²/df_a + vb²/df_b)
 * (va = se_a², vb = se_b²), t = (a − b)/√(va + vb), p = P[T_ν <= t]. Expected values from
 * python3 + mpmath 1.3.0 (40 digits; the t cdf as ½·I_{ν/(ν+t²)}(ν/2, ½), mpmath.betainc), not
 * from GSL:
 *   (a, se_a, df_a, b, se_b, df_b) = (−1, 0.1, 5, −0.5, 0.3, 20): ν = 23.529411764705882,
 *     t = −1.5811388300841897, p = 0.063598366044014501
 *     (wrong df: sum 25 → 0.063208, min 5 → 0.087344, df_a ↔ df_b → 0.081849, max 20 → 0.064766)
 *   (0.2, 0.5, 3, 1.0, 0.05, 40): ν = 3.0602770479221406, t = −1.5920595043359826,
 *     p = 0.10391893058279233 (sum 43 → 0.059349, min 3 → 0.104806, swapped → 0.059550). */
static void test_slope_welch(void) {
  struct {
    double a, sa, da, b, sb, db, nu, t, p;
  } cs[2] = {{-1.0, 0.1, 5, -0.5, 0.3, 20, 23.529411764705882, -1.5811388300841897,
              0.063598366044014501},
             {0.2, 0.5, 3, 1.0, 0.05, 40, 3.0602770479221406, -1.5920595043359826,
              0.10391893058279233}};
  for (int i = 0; i < 2; i++) {
    double t, det;
    double p = kvb_slope_less(cs[i].a, cs[i].sa, cs[i].da, cs[i].b, cs[i].sb, cs[i].db, 1e-6, 0.9,
                              &t, &det);
    double se = sqrt(cs[i].sa * cs[i].sa + cs[i].sb * cs[i].sb);
    double want_det = kvb_t_detectable(se, cs[i].nu, 1e-6, 0.9);
    char name[64];
    snprintf(name, sizeof name, "known.slope_less.welch_df_%d", i + 1);
    CHECK(close_rel(t, cs[i].t, 1e-14) && close_rel(p, cs[i].p, 1e-9) &&
              close_rel(det, want_det, 1e-12),
          name, "t %.17g (want %.17g) p %.17g (want %.17g) detectable %.10g (want %.10g at ν %.6f)",
          t, cs[i].t, p, cs[i].p, det, want_det, cs[i].nu);
  }
}

/* ---- SubGen at an exact δ tie on the CPU (000 Alg. 1 line 13: "if ‖k − x_i*‖₂ <= δ") ----
 * δ = 0.625 = 5/8, representative x = (1, −2, 0.5, 0), the second key x + (3/8, 1/2, 0, 0): a
 * 3-4-5 triangle scaled by 1/8, distance exactly 5/8 (every number dyadic: exact in float and
 * double). It must join: m′ = 1, n_1 = 2. A third key at x + (3/8, 1/2 + 2⁻²⁰, 0, 0) is just
 * beyond δ and opens a cluster (m′ = 2). The method's own mutant cluster_lt (line 13 with <)
 * must open a cluster at the tie. The same case runs on the device in kvb-gpucheck
 * (subgen_tie, src/app/tools/gpucheck/subgen.c). */
static void test_subgen_tie(void) {
  const double K[12] = {1, -2, 0.5, 0, 1.375, -1.5, 0.5, 0, 1.375, -1.5 + 0x1p-20, 0.5, 0};
  const double V[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  const char *mut[2] = {NULL, "mutant=cluster_lt"};
  size_t mc2[2] = {0, 0}, mc3[2] = {0, 0};
  uint64_t cnt[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    gsl_rng *rng = kvb_rng_alloc_substream(3, 0);
    kvb_method_config cfg = {4, 4, 0.5, rng};
    kvb_params p;
    kvb_params_init(&p);
    kvb_params_set(&p, "delta", 0.625), kvb_params_set(&p, "t", 2), kvb_params_set(&p, "s", 2);
    if (mut[k]) kvb_params_parse(&p, mut[k]);
    kvb_method *m = NULL;
    if (kvb_method_alloc("subgen", &cfg, &p, &m) == KVB_OK) {
      kvb_method_update(m, K, 4, V, 4);
      kvb_method_update(m, K + 4, 4, V + 4, 4);
      mc2[k] = kvb_subgen_num_clusters(m);
      kvb_subgen_cluster(m, 0, NULL, &cnt[k], NULL, NULL, NULL);
      kvb_method_update(m, K + 8, 4, V + 8, 4);
      mc3[k] = kvb_subgen_num_clusters(m);
    }
    kvb_method_free(m);
    gsl_rng_free(rng);
  }
  CHECK(mc2[0] == 1 && cnt[0] == 2 && mc3[0] == 2, "known.subgen.exact_delta_joins",
        "m′ after the tie %zu (want 1), n_1 %llu (want 2), m′ after the key beyond δ %zu (want 2)",
        mc2[0], (unsigned long long)cnt[0], mc3[0]);
  CHECK(mc2[1] == 2, "known.subgen.exact_delta_rejects_cluster_lt",
        "mutant cluster_lt: m′ after the tie %zu (want 2)", mc2[1]);
}

int main(void) {
  test_walk_constant();
  test_walk_r2();
  test_softmax_balance();
  test_bkvb_defaults();
  test_h2o_recent();
  test_ks_dminus();
  test_slope_welch();
  test_subgen_tie();
  UNIT_EXIT();
}

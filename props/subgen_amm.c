/* subgen_amm.c — two SubGen claims outside Theorem 1's own checks (props/subgen_theorem1.c):
 *   amm.rate     000 §1.3/§2.1: ℓ₂ (squared value norm) sampling of O(ε⁻²·d·log n) pairs
 *                approximates exp(K_n q_n)ᵀV_n to ε relative error in operator norm. SubGen's
 *                matrix-product half (000 Alg. 1 lines 24-29) is run at s = 4…128 slots on
 *                independent streams (value norms log-normal and correlated with the scores, so
 *                the sampling law matters), err = ‖z − exp(Kq)ᵀV‖/(‖exp(Kq)‖‖V‖_op). Asserted:
 *                (a) the second moment: for ℓ₂ sampling E‖z − eᵀV‖² = (‖V‖_F²‖e‖² − ‖eᵀV‖²)/s
 *                exactly, so M = s·err²/ρ (ρ = ‖V‖_F²/‖V‖_op², the stable rank ≤ d) has mean ≤ 1
 *                — the ε⁻²·ρ sample count with constant 1 in mean square (one-sided Welch
 *                against 1, α = 1e-6); (b) the rate: the log-log slope of err on s is −½
 *                (s ∝ ε⁻²), two-sided t-test at α = 1e-6, with its 95% CI. Uniform sampling
 *                (i.i.d. indices, weight n/s: unbiased, same memory) and z ≡ 0 go through the
 *                same tests; the constant (mean M) is reported for every arm.
 *   abs.tight    000 Abstract (= 001 Abstract): "a tight error bound". The paper proves no lower
 *                bound, so the finding is a measured factor: how close SubGen's error comes to
 *                eq. (3)'s bound ε‖softmax‖‖V‖_op, at the t and s kvbound derives
 *                (subgen_bounds.h: 27ε⁻²e^{2δr}ln(400m), 1800ρ/ε²) and at eq. (3)'s own
 *                probability level 0.99. The adversary (Markov's inequality is tight only for
 *                two-point laws): 10 bulk tokens, key 0, value (1, 0), and one special token,
 *                key 1 (its own cluster at δ = 0.05, so τ is exact), value (0, h), query 4 —
 *                its score e⁴ dominates the softmax while its value norm is so small that a slot
 *                holds it with probability x/s (x = 0.03): with probability ≈ x it is sampled
 *                once and z's second coordinate jumps by µe⁴/(sh), error/bound ≈
 *                (1/√x − √x)/√1800 ≈ 0.13. Pre-registered criterion, per cell ε = 1 and ε = 0.7:
 *                HOLDS (tight within a factor 10 at the bound's probability level) when the
 *                one-sided binomial test rejects P[error ≥ bound/10] ≤ 0.01 at α = 1e-6;
 *                NOT-OBSERVED when it does not and the test had power ≥ 0.9 at P = 0.03;
 *                INCONCLUSIVE otherwise. Reported: the 99th percentile of error/bound with its
 *                one-sided lower confidence bound (order statistic, α = 1e-6), i.e. the largest
 *                factor 1/q99 and its upper confidence bound. */
#include "prop.h"
#include "measures.h"
#include "subgen.h"
#include "subgen_bounds.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- amm.rate ---- */

#define AM_N 256
#define AM_DK 4
#define AM_DV 4
#define AM_R 2.0
#define AM_NS 6
static const double am_s[AM_NS] = {4, 8, 16, 32, 64, 128};

enum { ARM_SUBGEN, ARM_UNIFORM, ARM_ZERO, NARM };
static const char *const arm_name[NARM] = {"SubGen ℓ₂ sampling", "uniform sampling", "z ≡ 0"};

/* One stream: value norms e^{z}, z ~ N(0,1), keys along q̂ by z/3 (so large values have large
 * scores), q = AM_R·q̂. Fills K, V, q, the exact eᵀV, ‖e‖, ‖V‖_op and ρ. */
static int am_stream(prop_ctx *ctx, gsl_rng *rng, double *K, double *V, double *q, double *e,
                     double *ev, double *enorm, double *vop, double *rho) {
  double qh[AM_DK];
  kvb_rand_sphere(rng, qh, AM_DK, 1.0);
  for (size_t c = 0; c < AM_DK; c++) q[c] = AM_R * qh[c];
  for (size_t j = 0; j < AM_N; j++) {
    double z = gsl_ran_gaussian(rng, 1.0), a = fmax(-0.9, fmin(0.9, z / 3)), nz[AM_DK];
    kvb_rand_ball(rng, nz, AM_DK, 0.1);
    for (size_t c = 0; c < AM_DK; c++) K[j * AM_DK + c] = a * qh[c] + nz[c];
    kvb_rand_sphere(rng, V + j * AM_DV, AM_DV, exp(z));
  }
  long double acc[AM_DV] = {0}, e2 = 0;
  for (size_t j = 0; j < AM_N; j++) {
    e[j] = exp(kvb_dot(K + j * AM_DK, q, AM_DK));
    e2 += (long double)e[j] * e[j];
    for (size_t c = 0; c < AM_DV; c++) acc[c] += (long double)e[j] * V[j * AM_DV + c];
  }
  for (size_t c = 0; c < AM_DV; c++) ev[c] = (double)acc[c];
  *enorm = sqrt((double)e2);
  double attn[AM_DV];
  kvb_exact_side ex;
  if (kvb_exact_side_compute(AM_N, AM_DK, AM_DV, K, V, q, 1.0, KVB_EXACT_V_OP | KVB_EXACT_V_F,
                             attn, &ex))
    return prop_check(ctx, 0, "exact side: %s", kvb_strerror_last());
  *vop = ex.v_op;
  *rho = ex.v_f * ex.v_f / (ex.v_op * ex.v_op);
  return 1;
}

/* err = ‖z − eᵀV‖/(‖e‖‖V‖_op) of one arm at s slots. */
static double am_trial(prop_ctx *ctx, gsl_rng *rng, int arm, double s, const double *K,
                       const double *V, const double *q, const double *e, const double *ev,
                       double enorm, double vop) {
  double z[AM_DV] = {0};
  if (arm == ARM_UNIFORM) {
    for (size_t i = 0; i < (size_t)s; i++) {
      size_t j = gsl_rng_uniform_int(rng, AM_N);
      for (size_t c = 0; c < AM_DV; c++) z[c] += (double)AM_N / s * e[j] * V[j * AM_DV + c];
    }
  } else if (arm == ARM_SUBGEN) {
    /* δ = 10 > key diameter: one cluster; t = 1 (only the matrix-product half is read) */
    kvb_method *m = prop_subgen(ctx, rng, AM_DK, AM_DV, 1.0, 10.0, 1, s);
    if (!m) return NAN;
    for (size_t j = 0; j < AM_N; j++)
      kvb_method_update(m, K + j * AM_DK, AM_DK, V + j * AM_DV, AM_DV);
    double zs[AM_DV], ts, sh;
    if (kvb_subgen_s(m) > 0) { /* else control:z_zero stands in: z = 0 */
      if (kvb_subgen_query_parts(m, q, zs, &ts, &sh)) {
        kvb_method_free(m);
        prop_check(ctx, 0, "subgen query: %s", kvb_strerror_last());
        return NAN;
      }
      for (size_t c = 0; c < AM_DV; c++) z[c] = isinf(sh) ? 0 : exp(sh) * zs[c];
    }
    kvb_method_free(m);
  }
  double d2 = 0;
  for (size_t c = 0; c < AM_DV; c++) d2 += (z[c] - ev[c]) * (z[c] - ev[c]);
  return sqrt(d2) / (enorm * vop);
}

static void amm_rate(prop_ctx *ctx) {
  unsigned per = prop_trials(ctx, 40, 150), N = per * AM_NS;
  double pred = prop_check_mutant(ctx, "eps_linear") ? -1.0 : -0.5; /* s ∝ ε⁻¹ would be −1 */
  double *lx = malloc(N * sizeof *lx), *ly[NARM], *M[NARM], *ones = malloc(N * sizeof *ones);
  for (int a = 0; a < NARM; a++) ly[a] = malloc(N * sizeof(double)), M[a] = malloc(N * sizeof(double));
  double K[AM_N * AM_DK], V[AM_N * AM_DV], e[AM_N], q[AM_DK], ev[AM_DV], rho_sum = 0;
  gsl_rng *data = prop_rng(ctx, 0), *coins = prop_rng(ctx, 1);
  size_t k = 0;
  int ok = 1;
  for (size_t si = 0; ok && si < AM_NS; si++)
    for (unsigned r = 0; ok && r < per; r++, k++) {
      double enorm = 1, vop = 1, rho = 1;
      ok = am_stream(ctx, data, K, V, q, e, ev, &enorm, &vop, &rho);
      rho_sum += rho;
      lx[k] = log(am_s[si]), ones[k] = 1.0;
      for (int a = 0; ok && a < NARM; a++) {
        double err = am_trial(ctx, coins, a, am_s[si], K, V, q, e, ev, enorm, vop);
        ok = isfinite(err);
        ly[a][k] = log(fmax(err, 1e-300));
        M[a][k] = am_s[si] * err * err / rho;
      }
    }
  if (ok) {
    prop_unit(ctx, "independent (stream, sampler coins) at one s", N,
              "(a) a mean of s·err²/ρ above 1 by the detectable excess printed; (b) a slope off "
              "−½ by the detectable deviation printed");
    int pass[NARM];
    double mean_M[NARM], slope[NARM], lo[NARM], hi[NARM], pa[NARM], pb[NARM], det_a = 0, det_b = 0;
    for (int a = 0; a < NARM; a++) {
      double t, det;
      pa[a] = kvb_welch_less(ones, N, M[a], N, PROP_ALPHA, 0.9, &t, &det);
      if (a == ARM_SUBGEN) det_a = det;
      prop_slope f = prop_fit_slope(N, lx, ly[a]);
      pb[a] = f.se > 0 ? 2 * gsl_cdf_tdist_Q(fabs(f.slope - pred) / f.se, f.df) : 0;
      if (a == ARM_SUBGEN) det_b = kvb_t_detectable(f.se, f.df, PROP_ALPHA / 2, 0.9);
      mean_M[a] = prop_mean(M[a], N), slope[a] = f.slope, lo[a] = f.lo, hi[a] = f.hi;
      pass[a] = pa[a] >= PROP_ALPHA && pb[a] >= PROP_ALPHA;
    }
    prop_pvalue(ctx, pa[ARM_SUBGEN], PROP_ALPHA,
                "(a) mean s·err²/ρ = %.3f ≤ 1 (ℓ₂ sampling's exact second moment; detects an "
                "excess ≥ %.3g with power 0.9)", mean_M[ARM_SUBGEN], det_a);
    prop_pvalue(ctx, pb[ARM_SUBGEN], PROP_ALPHA,
                "(b) slope of log err on log s = %.3f, 95%% CI [%.3f, %.3f], predicted %.2f "
                "(detects a deviation ≥ %.3g with power 0.9)", slope[ARM_SUBGEN], lo[ARM_SUBGEN],
                hi[ARM_SUBGEN], pred, det_b);
    prop_note(ctx, "constant: E err² ≈ C·ρ/s with C = mean s·err²/ρ = %.3f (ℓ₂), %.3f (uniform); "
              "mean stable rank ρ = %.3f (d = %d); so ε relative operator-norm error in mean square "
              "needs s ≈ %.3f·ρ/ε² (ℓ₂ sampling); n = %d, s = 4…128, %u runs per s",
              mean_M[ARM_SUBGEN], mean_M[ARM_UNIFORM], rho_sum / N, AM_DV, mean_M[ARM_SUBGEN],
              AM_N, per);
    for (int a = ARM_UNIFORM; a < NARM; a++)
      prop_control(ctx, a == ARM_UNIFORM ? "uniform" : "z_zero", pass[a],
                   "%s: mean s·err²/ρ = %.3f (p = %.2g), slope %.3f, 95%% CI [%.3f, %.3f] (p = %.2g)",
                   arm_name[a], mean_M[a], pa[a], slope[a], lo[a], hi[a], pb[a]);
  }
  for (int a = 0; a < NARM; a++) free(ly[a]), free(M[a]);
  free(lx), free(ones);
  gsl_rng_free(data), gsl_rng_free(coins);
}

/* ---- abs.tight ---- */

#define TI_BULK 10
#define TI_X 0.03   /* P[the special token is sampled] ≈ x */
#define TI_F0 10.0  /* the pre-registered factor */
#define TI_P 0.01   /* eq. (3)'s failure probability (000 Theorem 1: 0.99) */
#define TI_EFFECT 0.03

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

static void abs_tight(prop_ctx *ctx) {
  static const double eps_cell[2] = {1.0, 0.7};
  const double r = 4.0, delta = 0.05;
  int attack = !prop_check_mutant(ctx, "no_attack");
  /* 6000 runs per cell in the check tier: at 2500 the ε = 1 cell (60 runs over bound/10 against
   * a critical count of ~51) flipped to NOT-OBSERVED on a fresh seed with probability ~0.2
   * (props/README.md, Verdicts that reproduce) */
  unsigned N = prop_trials(ctx, 6000, 8000);
  double *ratio = malloc(N * sizeof *ratio);
  const size_t n = TI_BULK + 1, dk = 1, dv = 2;
  double K[TI_BULK + 1], V[2 * (TI_BULK + 1)], q[1] = {r};
  double worst_miss = 0;
  prop_unit(ctx, "independent SubGen run (its coins) on the fixed adversarial stream", N,
            "P[error ≥ bound/%g] = %.2g against the bound's failure probability %.2g", TI_F0,
            TI_EFFECT, TI_P);
  prop_control_na(ctx, "a tightness finding: the question is how close SubGen itself comes to "
                  "eq. (3)'s bound; a trivial estimator reaching it would say nothing about "
                  "SubGen's bound (the mutant no_attack shows the verdict can come out otherwise)");
  for (int ci = 0; ci < 2; ci++) {
    double eps = eps_cell[ci];
    /* s and h by fixed point: s = ⌈1800ρ/ε²⌉, h² = x·µ/s, µ = 10 + h², ρ = µ/10 */
    double s = 0, h2 = 0, rho = 1, t = 0;
    for (int it = 0; it < 20; it++) {
      kvb_subgen_required_s(eps, rho, &s);
      h2 = attack ? TI_X * TI_BULK / (s - TI_X) : 1.0;
      rho = (TI_BULK + h2) / TI_BULK;
    }
    if (!attack) rho = (TI_BULK + h2) / TI_BULK, kvb_subgen_required_s(eps, rho, &s);
    kvb_subgen_required_t(eps, delta, r, 1.0, 2, &t);
    for (size_t i = 0; i < TI_BULK; i++) K[i] = 0, V[2 * i] = 1, V[2 * i + 1] = 0;
    K[TI_BULK] = 1, V[2 * TI_BULK] = 0, V[2 * TI_BULK + 1] = sqrt(h2);
    double attn[2];
    kvb_exact_side ex;
    if (kvb_exact_side_compute(n, dk, dv, K, V, q, 1.0, KVB_EXACT_SOFTMAX | KVB_EXACT_V_OP, attn, &ex)) {
      prop_check(ctx, 0, "exact side: %s", kvb_strerror_last());
      break;
    }
    gsl_rng *rng = prop_rng(ctx, 1 + ci);
    int ok = 1;
    for (unsigned tr = 0; ok && tr < N; tr++) {
      kvb_method *m = prop_subgen(ctx, rng, dk, dv, 1.0, delta, t, s);
      ok = m != NULL;
      for (size_t j = 0; ok && j < n; j++) ok = !kvb_method_update(m, K + j, dk, V + 2 * j, dv);
      double z[2];
      ok = ok && !kvb_method_query(m, q, dk, z, dv);
      kvb_errors er;
      ok = ok && !kvb_measure_errors(&ex, z, dv, &er);
      if (ok) ratio[tr] = er.ratio_op / eps; /* error / (ε‖softmax‖‖V‖_op) */
      else prop_check(ctx, 0, "subgen run: %s", kvb_strerror_last());
      kvb_method_free(m);
    }
    gsl_rng_free(rng);
    if (!ok) break;
    unsigned F = 0, over = 0;
    for (unsigned i = 0; i < N; i++) F += ratio[i] >= 1 / TI_F0, over += ratio[i] > 1;
    double p = kvb_binom_tail_ge(F, TI_P, N), q99 = kvb_quantile(ratio, N, 0.99);
    unsigned crit;
    double p1 = kvb_binom_detectable_rate(N, TI_P, PROP_ALPHA, 0.9, &crit);
    qsort(ratio, N, sizeof *ratio, cmp_desc);
    double lcb = crit >= 1 && crit <= N ? ratio[crit - 1] : 0; /* crit-th largest */
    char cell[32];
    snprintf(cell, sizeof cell, "eps = %g", eps);
    prop_advantage_cell(ctx, cell, p, p1 - TI_P, TI_EFFECT - TI_P,
                        "P[error ≥ bound/10] = 0.03 (3× eq. (3)'s failure probability)",
                        "ε = %g, t = %.0f, s = %.0f (ρ = %.5f), h = %.4g: %u/%u runs with error ≥ "
                        "bound/10 (binomial vs 0.01: p = %.2g), %u over the bound; 99th percentile "
                        "of error/bound %.4f (factor %.2f), one-sided lower confidence bound %.4f "
                        "(factor ≤ %.2f at α = 1e-6); largest single ratio %.4f",
                        eps, t, s, rho, sqrt(h2), F, N, p, over, q99, 1 / q99, lcb,
                        lcb > 0 ? 1 / lcb : INFINITY, ratio[0]);
    prop_cell_binom(ctx, F, N, TI_P); /* an exact binomial cell: its beta-binomial flip p */
    if (ctx->mutant) {
      double ub = kvb_binom_upper_bound(F, N, PROP_ALPHA);
      worst_miss = fmax(worst_miss, kvb_binom_tail_ge(crit, fmin(ub, 1.0), N));
    }
  }
  if (ctx->mutant) prop_miss(ctx, worst_miss);
  free(ratio);
}

const prop_claim props_subgen_amm[] = {
    {"subgen.amm.rate", "000 §1.3, §2.1 (= 001 §1.3, §2.1)", "scaling",
     "ℓ₂ sampling (SubGen's matrix-product half): mean s·err²/ρ ≤ 1 (one-sided Welch, α = 1e-6) "
     "and slope of log err on log s = −½ (two-sided t, α = 1e-6), s = 4…128, independent streams; "
     "uniform sampling and z ≡ 0 through the same tests",
     {"method:subgen:mp_uniform", "method:subgen:z_no_weight", "check:eps_linear"}, amm_rate,
     {"S-1.3.amm"}},
    {"subgen.abs.tight", "000 Abstract (= 001 Abstract)", "lower-bound",
     "on a two-point (Markov-tight) adversarial stream at kvbound's t, s: P[error ≥ eq. (3) bound/10] "
     "> 0.01 (binomial, α = 1e-6), cells ε = 1, 0.7; the 99th percentile of error/bound with its lower "
     "confidence bound reported",
     {"check:no_attack"}, abs_tight, {"S-ABS.tight"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

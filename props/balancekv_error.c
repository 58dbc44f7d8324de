/* balancekv_error.c — the error guarantees of 003 Theorem 3.4 (MergeAndReduce) and Theorem 3.1
 * (BalanceKV), the walk's advantage they rest on, and the practicality of Theorem 3.1.
 *
 * Every bound below is run through the same assertion with the trivial controls: z ≡ 0 (the
 * method answers 0) and random halving (the walk's line 8 replaced by p = ½, i.e. a uniform
 * half kept each round: uniform sampling at equal memory). A bound that a control meets is
 * reported VACUOUS at those parameters, with both scores. The walk's advantage itself (the
 * 1/t rate of Theorem 3.4, the balancing of Theorem 3.1) is asserted against random halving in
 * the direction the papers claim, in two cells fixed here: [paper c] c = 30·log(n/δ) (003 Alg. 2
 * line 3) and [c = 16] (the smallest constant of the walk.constant grid with no FAIL at any n).
 *
 *   mr.thm34.error  003 Theorem 3.4's bound err_j ≤ ε·j·e^{−r²/√d}·max‖v‖, ε = T√s·log(ts/δ)
 *                   ·e^{2r²/√d}/t (the Õ() of t = Õ(√s e^{2r²/√d}/ε) written out as the proof of
 *                   Theorem 3.4 sums it: T levels, Theorem 3.3 per batch, O() read as 1). At
 *                   n = 1024, t = 8…64 that ε is 19.7…1.71 while z ≡ 0 scores ≤ e^{2r²/√d} = 1.65,
 *                   so the bound is asserted where it is non-trivial: n = 2048, t = 256, T = 3
 *                   (ε = 0.359 < 1 ≤ z ≡ 0's score on the normalizer instance).
 *   mr.thm34.rate   the rate: log mean error against log t (t = 8…64, n = 1024) falls faster for
 *                   the walk than for random halving (one-sided test on the slope difference);
 *                   slopes with 95% CIs (Theorem 3.4: −1; random halving: about −½).
 *   thm31.error     003 Theorem 3.1's bound ‖z − Attn‖ ≤ ε_31·‖softmax‖‖V‖_F with ε_31 =
 *                   4·T·√d·log(td/δ)·e^{2r²/√d}/t (Theorem 3.4's ε with s = d as Theorem 3.1
 *                   states it, times the 4 of the proof's final rescaling ε → ε/4), in two cells:
 *                   [t = 64, n = 1024] and [t = 1024, n = 2048]; a cell where z ≡ 0 meets the
 *                   bound is VACUOUS (z ≡ 0's score ‖Attn‖/(‖softmax‖‖V‖_F) is ≤ 1 always).
 *   thm31.advantage BalanceKV's relative error at t = 64 below the same algorithm with random
 *                   halving (Welch one-sided), cells [paper c] and [c = 16].
 *   thm31.practical the t and memory Theorem 3.1 asks for at the norms of 003 Table 3
 *                   (‖q‖ ≈ 15, ‖k − mean‖ ≈ 15.7, ‖v‖ ≈ 3.3, d = 128). */
#include "prop.h"
#include "measures.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DK 16
#define C_PRACTICAL 16.0 /* pre-registered practical constant (see walk.constant) */

/* What runs in an arm: the method under test (ctx's mutant applied), the random-halving
 * control (the method's own mutant "random_signs"), or z ≡ 0. */
typedef enum { ARM_METHOD, ARM_RANDOM, ARM_ZERO } arm_kind;


static kvb_method *make(prop_ctx *ctx, const char *name, gsl_rng *rng, size_t dv, const char *const *a,
                        double t, double T, double c, arm_kind arm) {
  kvb_params p;
  kvb_params_init(&p);
  for (size_t i = 0; a[i]; i++) kvb_params_parse(&p, a[i]);
  kvb_params_set(&p, "t", t);
  kvb_params_set(&p, "T", T);
  if (c > 0) kvb_params_set(&p, "c", c);
  if (arm == ARM_RANDOM) kvb_params_set_str(&p, "mutant", "random_signs");
  else prop_apply_mutant(ctx, name, &p);
  kvb_method_config cfg = {DK, dv, 1.0 / sqrt((double)DK), rng};
  kvb_method *m = NULL;
  if (kvb_method_alloc(name, &cfg, &p, &m)) prop_check(ctx, 0, "alloc %s: %s", name, kvb_strerror_last());
  return m;
}

static size_t levels_for(size_t n, size_t t) {
  size_t T = 0;
  while ((t << T) < n) T++;
  return T;
}

/* ε of Theorem 3.4 at (t, T, s) with its Õ() written out (see the header). */
static double eps34(size_t t, size_t T, double s, double delta, double r, double scale) {
  return (double)T * sqrt(s) * log((double)t * s / delta) * exp(2 * r * r * scale) / (double)t;
}

/* A one-sided Welch cell: the walk's errors a below random halving's b. */
static prop_verdict welch_cell(prop_ctx *ctx, const char *cell, const char *what, const double *a,
                               size_t na, const double *b, size_t nb) {
  double t, det, p = kvb_welch_less(a, na, b, nb, PROP_ALPHA, 0.9, &t, &det);
  /* unit = one independent run (stream + method draws); the effect a user would care about: a
   * mean error 10% below random halving's */
  prop_verdict v = prop_advantage_cell(ctx, cell, p, det, 0.1 * prop_mean(b, nb),
                             "an advantage of 10% of random halving's mean",
                             "%s: mean %.4g vs random halving %.4g (ratio %.3f); unit = run, N = "
                             "%zu/%zu; one-sided Welch t = %.2f, p = %.2g, alpha = 1e-6, detects "
                             "an advantage >= %.3g with power 0.9",
                             what, prop_mean(a, na), prop_mean(b, nb),
                             prop_mean(a, na) / prop_mean(b, nb), na, nb, t, p, det);
  /* its power gate's flip (det ∝ the Welch se; its df >= min(na, nb) − 1) */
  prop_cell_gate(ctx, det, 0.1 * prop_mean(b, nb), (double)(na < nb ? na : nb) - 1);
  return v;
}

/* ---- Theorem 3.4 ---- */

/* One MergeAndReduce run on n tokens (keys in the r = 1 ball of ℝ^16, values in the unit ball
 * of ℝ²), checked every `every` steps against a fresh query: the error of both instances
 * (numerator, and the normalizer v ≡ 1), normalized by j·e^{−r²/√d}·max‖v‖, the larger of the
 * two. Appends the per-check errors to out (when not NULL); returns the largest. */
static double mr_run(prop_ctx *ctx, gsl_rng *data, gsl_rng *mrng, size_t n, size_t t, double c,
                     arm_kind arm, size_t every, double *out, size_t *nout) {
  const size_t dv = 2;
  const double r = 1.0, scale = 0.25;
  double *K = malloc(n * DK * sizeof *K), *V = malloc(n * dv * sizeof *V), q[DK];
  double vmax = 0, worst = 0;
  for (size_t i = 0; i < n; i++) {
    kvb_rand_ball(data, K + i * DK, DK, r);
    kvb_rand_ball(data, V + i * dv, dv, 1.0);
    vmax = fmax(vmax, kvb_norm2(V + i * dv, dv));
  }
  static const char *const a[] = {"r_key=1", "r_value=1", "delta=1e-3", NULL};
  if (arm == ARM_METHOD && prop_zero_control(ctx)) arm = ARM_ZERO; /* control:z_zero */
  kvb_method *m = arm == ARM_ZERO ? NULL
                                  : make(ctx, "merge_reduce", mrng, dv, a, (double)t,
                                         (double)levels_for(n, t), c, arm);
  for (size_t j = 1; (m || arm == ARM_ZERO) && j <= n; j++) {
    if (m) kvb_method_update(m, K + (j - 1) * DK, DK, V + (j - 1) * dv, dv);
    if (j % every) continue;
    kvb_rand_ball(data, q, DK, r);
    long double ex[3] = {0, 0, 0};
    for (size_t i = 0; i < j; i++) {
      long double e = expl((long double)scale * kvb_dot(K + i * DK, q, DK));
      ex[0] += e * V[i * dv], ex[1] += e * V[i * dv + 1], ex[2] += e;
    }
    double f = 0, fd = 0, acc[2] = {0, 0}, accd = 0;
    if (m) {
      kvb_expsum s, sd;
      kvb_expsum_init(&s, acc, dv);
      kvb_expsum_init(&sd, &accd, 1);
      kvb_mr_expsum(kvb_merge_reduce_numerator(m), q, scale, &s, NULL);
      kvb_mr_expsum(kvb_merge_reduce_denominator(m), q, scale, &sd, NULL);
      f = isinf(s.shift) ? 0 : exp(s.shift), fd = isinf(sd.shift) ? 0 : exp(sd.shift);
    }
    double e0 = (double)(ex[0] - (long double)(f * acc[0])), e1 = (double)(ex[1] - (long double)(f * acc[1]));
    double ed = fabs((double)(ex[2] - (long double)(fd * accd)));
    double base = (double)j * exp(-r * r * scale);
    double rel = fmax(sqrt(e0 * e0 + e1 * e1) / (base * vmax), ed / base);
    if (out) out[(*nout)++] = rel;
    worst = fmax(worst, rel);
  }
  kvb_method_free(m);
  free(K), free(V);
  return worst;
}

/* Theorem 3.4's bound at n = 2048, t = 256, T = 3 (ε = 0.359), every 16th step. The faithful
 * method: runs with any step over ε ≤ δ (binomial, α = 1e-6). z ≡ 0 and random halving are run
 * through the same test. */
static void mr_thm34(prop_ctx *ctx) {
  const size_t n = 2048, t = 256, T = levels_for(n, t), every = 16;
  const double delta = 1e-3, s = 2, r = 1, scale = 0.25;
  const double eps = eps34(t, T, s, delta, r, scale);
  unsigned runs = prop_trials(ctx, 8, 40);
  static const char *const name[] = {"BalanceKV's MergeAndReduce", "random halving", "z = 0"};
  unsigned over[3] = {0, 0, 0};
  double worst[3] = {0, 0, 0}, *wrun = malloc(3 * runs * sizeof *wrun);
  for (int arm = 0; arm < 3; arm++)
    for (unsigned k = 0; k < runs; k++) {
      gsl_rng *data = prop_rng(ctx, 100 * k + 1), *mrng = prop_rng(ctx, 100 * k + 2 + arm);
      double w = mr_run(ctx, data, mrng, n, t, 0.0, (arm_kind)arm, every, NULL, NULL);
      over[arm] += w > eps;
      worst[arm] = fmax(worst[arm], w);
      wrun[arm * runs + k] = w;
      gsl_rng_free(data), gsl_rng_free(mrng);
    }
  prop_note(ctx, "n = %zu, t = %zu, T = %zu, s = 2, r = 1, d = 16, paper's c: theorem ε = %.3f; largest "
            "normalized error over %u runs: method %.4f, random halving %.4f, z = 0 %.4f",
            n, t, T, eps, runs, worst[0], worst[1], worst[2]);
  prop_unit(ctx, "run (a fresh stream and walk; its steps share the run and are one outcome: "
            "any step over ε)", runs, "a failure rate above δ = %g (binomial, notes)", delta);
  prop_binomial_bound(ctx, over[0], runs, delta, "runs with err_j > ε·j·e^{−r²/√d}·max‖v‖ at some step");
  for (int arm = 1; arm < 3; arm++) {
    int passed = kvb_binom_tail_ge(over[arm], delta, runs) >= PROP_ALPHA;
    prop_control(ctx, arm == 1 ? "random_signs" : "z_zero", passed,
                 "%s (%s): %u/%u runs over ε = %.3f, largest error %.4f", name[arm],
                 arm == 1 ? "uniform halving at equal memory" : "answers 0", over[arm], runs, eps,
                 worst[arm]);
    /* its flip (a passing control makes the verdict VACUOUS): z ≡ 0's normalizer error is
     * Σ_{i<=j} e^{⟨k_i, q⟩/√d} >= j·e^{−r²/√d} (|⟨k, q⟩| <= r²), a normalized score >= 1 > ε at
     * every step of every run, so it fails on every seed (0 by design); random halving's from
     * its runs' margins (prop_runs_flip) */
    prop_control_flip(ctx, arm == 2 ? 0 : prop_runs_flip(wrun + runs, runs, eps,
                                                  kvb_binom_crit(runs, delta, PROP_ALPHA)));
  }
  /* What this compares is what Theorem 3.4 (003) states: at every step j the error is within
   * ε·j·e^{−r²/√d}·max‖v‖ with probability 1 − 1/poly(n), so a run's outcome is its largest
   * normalized error over its steps, against ε, and the control is held to that same statement
   * (not to a mean over streams, which the theorem does not bound; the means are compared in
   * balancekv.mr.thm34.rate and thm31.advantage). Random halving's largest error sits just
   * under ε (0.296 over 8 runs, 0.349 over 40, ε = 0.359): a near-tie, so its VACUOUS is
   * seed-fragile and more runs make that worse (more chances to cross ε); the flip is printed,
   * not designed away. */
  if (over[1] < runs && worst[1] <= eps && worst[1] > 0.75 * eps)
    prop_note(ctx, "random halving's largest error is %.0f%% of ε: a near-tie between the control "
              "and the theorem's bound, so whether it meets the bound (VACUOUS) depends on the "
              "seed (flip below); more runs would raise that chance, not lower it",
              100 * worst[1] / eps);
  free(wrun);
}

#define RATE_T 4
/* Per-run mean error for every t of the grid: x = log t, y = log(run mean). */
static void rate_arm(prop_ctx *ctx, double c, arm_kind arm, unsigned runs, uint64_t stream,
                     double *x, double *y) {
  static const size_t ts[RATE_T] = {8, 16, 32, 64};
  double *buf = malloc((1024 / 8) * sizeof *buf);
  for (size_t a = 0; a < RATE_T; a++)
    for (unsigned k = 0; k < runs; k++) {
      /* a fresh stream per (t, run), shared by the arms: the points of one fit are independent */
      gsl_rng *data = prop_rng(ctx, 1000 * a + 100 * k + 1), *mrng = prop_rng(ctx, 1000 * a + 100 * k + stream);
      size_t nb = 0;
      mr_run(ctx, data, mrng, 1024, ts[a], c, arm, 8, buf, &nb);
      x[a * runs + k] = log((double)ts[a]);
      y[a * runs + k] = log(prop_mean(buf, nb));
      gsl_rng_free(data), gsl_rng_free(mrng);
    }
  free(buf);
}

static void mr_rate(prop_ctx *ctx) {
  /* 24 runs per t: with 8, the c = 16 cell fell to p = 6.6e-6 at fresh seed
   * 10727656466119420704 and the random_signs mutant, caught through that cell, survived */
  unsigned runs = prop_trials(ctx, 24, 64);
  size_t np = RATE_T * runs;
  double *x = malloc(np * sizeof *x), *yr = malloc(np * sizeof *yr), *y2 = malloc(np * sizeof *y2),
         *yw = malloc(np * sizeof *yw);
  rate_arm(ctx, 0.0, ARM_RANDOM, runs, 3, x, yr);
  prop_slope fr = prop_fit_slope(np, x, yr);
  prop_note(ctx, "random halving (n = 1024, t = 8..64, %u runs per t): slope of log mean error vs log t "
            "%.3f [95%% CI %.3f, %.3f]", runs, fr.slope, fr.lo, fr.hi);
  prop_unit(ctx, "run (a fresh stream and merge-and-reduce per (t, run): the regression's "
            "points)", np, "a slope below random halving's by the detectable difference in each "
            "cell's note (%u runs at each of %d values of t)", runs, RATE_T);
  static const char *const cell[2] = {"paper c", "c = 16"};
  for (int ci = 0; ci < 2; ci++) {
    rate_arm(ctx, ci ? C_PRACTICAL : 0.0, ARM_METHOD, runs, 4 + ci, x, yw);
    prop_slope fw = prop_fit_slope(np, x, yw);
    double t, det, p = prop_slope_less(fw, fr, &t, &det);
    prop_cell(ctx, p < PROP_ALPHA ? PROP_HOLDS : PROP_NOT_OBSERVED, cell[ci],
              "slope %.3f [95%% CI %.3f, %.3f] (Theorem 3.4: −1, %s the CI) vs random halving's %.3f: "
              "one-sided t = %.2f, p = %.2g, alpha = 1e-6, %zu points each, detects a slope "
              "difference >= %.3f with power 0.9", fw.slope, fw.lo, fw.hi,
              (fw.lo <= -1 && -1 <= fw.hi) ? "inside" : "outside", fr.slope, t, p, np, det);
    prop_cell_pvalue(ctx, p);
  }
  /* The control: random halving in place of the walk, through the same test. */
  rate_arm(ctx, 0.0, ARM_RANDOM, runs, 6, x, y2);
  prop_slope f2 = prop_fit_slope(np, x, y2);
  double t, det, p = prop_slope_less(f2, fr, &t, &det);
  prop_control(ctx, "random_signs", p < PROP_ALPHA, "a second random halving's slope %.3f vs %.3f: "
               "t = %.2f, p = %.2g", f2.slope, fr.slope, t, p);
  prop_control_flip(ctx, kvb_flip_normal(p, PROP_ALPHA)); /* the same test as the cells' */
  free(x), free(yr), free(y2), free(yw);
}

/* ---- Theorem 3.1 ---- */

/* One BalanceKV run on n tokens: keys in the r = 1 ball of ℝ^16; values 2^{U(−2,2)}-norm
 * multiples of a common direction plus a 30% random part (so ‖Attn‖ is a sizeable fraction of
 * ‖softmax‖‖V‖_F and z ≡ 0 scores about 0.8: the bound can be non-trivial), norms over four
 * buckets. Queries every `every` steps; fills rel[] with ‖z − Attn‖/(‖softmax‖‖V‖_F) and zr[]
 * (may be NULL) with z ≡ 0's score ‖Attn‖/(‖softmax‖‖V‖_F). */
static size_t bkv_run(prop_ctx *ctx, gsl_rng *data, gsl_rng *mrng, size_t n, size_t t, double c,
                      arm_kind arm, size_t every, double *rel, double *zr) {
  const size_t dv = 4;
  const double r = 1.0, scale = 0.25;
  double *K = malloc(n * DK * sizeof *K), *V = malloc(n * dv * sizeof *V), q[DK], z[4], ze[4], w[4];
  for (size_t i = 0; i < n; i++) {
    kvb_rand_ball(data, K + i * DK, DK, r);
    kvb_rand_sphere(data, w, dv, 0.3);
    w[0] += 1;
    double nw = kvb_norm2(w, dv), a = exp2(-2 + 4 * gsl_rng_uniform(data));
    for (size_t b = 0; b < dv; b++) V[i * dv + b] = a * w[b] / nw;
  }
  char nstr[32];
  snprintf(nstr, sizeof nstr, "n=%zu", n);
  const char *const a[] = {"r=1", "eps=0.1", "delta=1e-3", nstr, NULL};
  if (arm == ARM_METHOD && prop_zero_control(ctx)) arm = ARM_ZERO; /* control:z_zero */
  kvb_method *m = arm == ARM_ZERO ? NULL
                                  : make(ctx, "balancekv", mrng, dv, a, (double)t,
                                         (double)levels_for(n, t), c, arm);
  size_t nr = 0;
  for (size_t j = 1; (m || arm == ARM_ZERO) && j <= n; j++) {
    if (m) kvb_method_update(m, K + (j - 1) * DK, DK, V + (j - 1) * dv, dv);
    if (j % every) continue;
    kvb_rand_ball(data, q, DK, r);
    if (m) kvb_method_query(m, q, DK, z, dv);
    else memset(z, 0, sizeof z);
    /* ratio_f of z and of z ≡ 0 (measures.h: 003 eq. (2)'s ‖z − Attn‖/(‖softmax‖‖V‖_F)) */
    kvb_exact_side x;
    kvb_errors e = {.ratio_f = NAN}, e0 = {.ratio_f = NAN};
    const double zero[4] = {0, 0, 0, 0};
    if (!kvb_exact_side_compute(j, DK, dv, K, V, q, scale, KVB_EXACT_SOFTMAX | KVB_EXACT_V_F, ze, &x)) {
      kvb_measure_errors(&x, z, dv, &e);
      kvb_measure_errors(&x, zero, dv, &e0);
    }
    if (zr) zr[nr] = e0.ratio_f;
    rel[nr++] = e.ratio_f;
  }
  kvb_method_free(m);
  free(K), free(V);
  return nr;
}

/* Theorem 3.1's bound in two cells. The unit is a run (one stream, one sketch, its queries
 * every 64 steps): queries of one run share the sketch, so the test counts runs with any query
 * over the bound, against δ.
 * Flips (src/core/flip.h): a cell is VACUOUS when a control (z ≡ 0, random halving) meets the
 * bound, so the controls' count tests decide it (kvb_flip_controls): a VACUOUS cell flips only
 * if every passing control fails on a fresh seed (<= the least likely of them); a HOLDS cell if
 * its own count rejects (the check FAILS) or any control comes to pass (check-level controls,
 * prop_control_flip). Each count's flip is prop_runs_flip's. z ≡ 0's score ‖Attn‖/(‖softmax‖‖V‖_F) is
 * <= 1 for every query (‖Σ_i s_i v_i‖ <= Σ_i s_i‖v_i‖ <= ‖s‖‖V‖_F, Cauchy–Schwarz), so where
 * ε_31 >= 1 it meets the bound on every seed: flip 0 by design. */
static void thm31_error(prop_ctx *ctx) {
  static const size_t cn[2] = {1024, 2048}, ct[2] = {64, 1024};
  const double delta = 1e-3, d = DK, r = 1, scale = 0.25;
  unsigned runs = prop_trials(ctx, 8, 40);
  unsigned kcrit = kvb_binom_crit(runs, delta, PROP_ALPHA);
  int any_control = 0;
  prop_unit(ctx, "run (a fresh stream and BalanceKV; its queries share the run and are one "
            "outcome: the largest error)", runs, "a failure rate above δ = %g per cell (binomial, "
            "notes)", delta);
  for (int ci = 0; ci < 2; ci++) {
    size_t n = cn[ci], t = ct[ci], T = levels_for(n, t), every = 64, per = n / every;
    double eps = 4 * eps34(t, T, d, delta, r, scale);
    double *rel = malloc(per * sizeof *rel), *zr = malloc(per * sizeof *zr), *rr = malloc(per * sizeof *rr);
    double *wrun = malloc(3 * runs * sizeof *wrun); /* per run: method, z ≡ 0, random halving maxima */
    unsigned big = 0, zbig = 0, rbig = 0;
    double wm = 0, wz = 1e300, wzmax = 0, wr = 0;
    for (unsigned k = 0; k < runs; k++) {
      gsl_rng *data = prop_rng(ctx, 100 * k + 1 + 50 * ci), *mrng = prop_rng(ctx, 100 * k + 2 + 50 * ci);
      size_t nq = bkv_run(ctx, data, mrng, n, t, 0.0, ARM_METHOD, every, rel, zr);
      gsl_rng_free(data), gsl_rng_free(mrng);
      data = prop_rng(ctx, 100 * k + 1 + 50 * ci), mrng = prop_rng(ctx, 100 * k + 3 + 50 * ci);
      size_t nrr = bkv_run(ctx, data, mrng, n, t, 0.0, ARM_RANDOM, every, rr, NULL);
      gsl_rng_free(data), gsl_rng_free(mrng);
      double m1 = kvb_quantile(rel, nq, 1.0), z0 = kvb_quantile(zr, nq, 0.0), z1 = kvb_quantile(zr, nq, 1.0),
             r1 = kvb_quantile(rr, nrr, 1.0);
      big += m1 > eps, zbig += z1 > eps, rbig += r1 > eps;
      wm = fmax(wm, m1), wz = fmin(wz, z0), wzmax = fmax(wzmax, z1), wr = fmax(wr, r1);
      wrun[k] = m1, wrun[runs + k] = z1, wrun[2 * runs + k] = r1;
    }
    char what[96];
    snprintf(what, sizeof what, "[t = %zu, n = %zu] runs with ‖z − Attn‖ > ε_31·‖softmax‖‖V‖_F", t, n);
    prop_binomial_bound(ctx, big, runs, delta, what);
    double pz = kvb_binom_tail_ge(zbig, delta, runs), pr = kvb_binom_tail_ge(rbig, delta, runs);
    int zpass = pz >= PROP_ALPHA, rpass = pr >= PROP_ALPHA;
    int passed[2] = {zpass, rpass};
    double fl[2] = {eps >= 1
                        ? 0 /* z ≡ 0 scores <= 1 <= ε_31 on every seed (above) */
                        : prop_runs_flip(wrun + runs, runs, eps, kcrit),
                    prop_runs_flip(wrun + 2 * runs, runs, eps, kcrit)};
    char cell[48];
    snprintf(cell, sizeof cell, "t = %zu, n = %zu", t, n);
    if (zpass || rpass) {
      /* the two controls' tests decide this cell without prop_control: their α counts too */
      prop_control_test(ctx, pz), prop_control_test(ctx, pr);
      prop_cell(ctx, PROP_VACUOUS, cell, "ε_31 = %.3g: method max rel. error %.4f (%u/%u runs over); "
                "a trivial control meets the same bound: z = 0 scores %.3f..%.3f (%u runs over), "
                "random halving max %.4f (%u runs over); flip: z = 0 %.3g%s, random halving %.3g "
                "(runs over ε on a fresh seed reaching %u, flip.h kvb_flip_exceed)", eps, wm, big,
                runs, wz, wzmax, zbig, wr, rbig, fl[0], eps >= 1 ? " (fixed: its score <= 1 <= ε_31)" : "",
                fl[1], kcrit);
      prop_cell_controls(ctx, 2, passed, fl);
    } else {
      any_control = 1;
      prop_control(ctx, "z_zero", 0, "[%s] z = 0 scores %.3f..%.3f > ε_31 = %.3g (%u/%u runs over)",
                   cell, wz, wzmax, eps, zbig, runs);
      prop_control_flip(ctx, fl[0]);
      prop_control(ctx, "random_signs", 0, "[%s] random halving: max %.4f, %u/%u runs over", cell,
                   wr, rbig, runs);
      prop_control_flip(ctx, fl[1]);
      prop_cell(ctx, PROP_HOLDS, cell, "ε_31 = %.3g: method max rel. error %.4f (%u/%u runs over), T = %zu",
                eps, wm, big, runs, T);
      /* its own count rejecting on a fresh seed (then the check FAILS); the controls' flips are
       * the check's (prop_control_flip) */
      prop_cell_flip(ctx, prop_runs_flip(wrun, runs, eps, kcrit));
    }
    free(rel), free(zr), free(rr), free(wrun);
  }
  if (!any_control)
    prop_control_na(ctx, "every cell's bound is met by a trivial control (cells VACUOUS; scores in "
                    "the cell notes)");
}

/* Mean relative error of one BalanceKV run (queries every 64 steps): the unit of the Welch test
 * (queries of one run share its sketch, so they are not independent). */
static double bkv_run_mean(prop_ctx *ctx, unsigned k, uint64_t stream, double c, arm_kind arm) {
  double rel[1024 / 64];
  gsl_rng *data = prop_rng(ctx, 100 * k + 1), *mrng = prop_rng(ctx, 100 * k + stream);
  size_t nq = bkv_run(ctx, data, mrng, 1024, 64, c, arm, 64, rel, NULL);
  gsl_rng_free(data), gsl_rng_free(mrng);
  return nq ? prop_mean(rel, nq) : NAN;
}

/* BalanceKV (t = 64, n = 1024) below the same algorithm with random halving: [paper c], [c = 16]. */
static void thm31_advantage(prop_ctx *ctx) {
  unsigned runs = prop_trials(ctx, 64, 160);
  double *rr = malloc(runs * sizeof *rr), *r2 = malloc(runs * sizeof *r2), *rw = malloc(runs * sizeof *rw);
  for (unsigned k = 0; k < runs; k++) {
    rr[k] = bkv_run_mean(ctx, k, 2, 0.0, ARM_RANDOM);
    r2[k] = bkv_run_mean(ctx, k, 3, 0.0, ARM_RANDOM);
  }
  prop_unit(ctx, "run (one stream; the method's run mean over its queries is one number)", runs,
            "the advantage stated in each cell (Welch, notes), random halving on the same %u "
            "streams", runs);
  static const char *const cell[2] = {"paper c", "c = 16"};
  for (int ci = 0; ci < 2; ci++) {
    for (unsigned k = 0; k < runs; k++)
      rw[k] = bkv_run_mean(ctx, k, 4 + ci, ci ? C_PRACTICAL : 0.0, ARM_METHOD);
    welch_cell(ctx, cell[ci], "BalanceKV run-mean relative error ‖z − Attn‖/(‖softmax‖‖V‖_F), t = 64, "
               "n = 1024", rw, runs, rr, runs);
  }
  double tt, det, p = kvb_welch_less(r2, runs, rr, runs, PROP_ALPHA, 0.9, &tt, &det);
  prop_control(ctx, "random_signs", p < PROP_ALPHA, "a second random-halving BalanceKV %.4g vs %.4g: "
               "Welch t = %.2f, p = %.2g", prop_mean(r2, runs), prop_mean(rr, runs), tt, p);
  prop_control_flip(ctx, kvb_flip_normal(p, PROP_ALPHA)); /* the same test as the cells' */
  free(rr), free(r2), free(rw);
}

static void thm31_practical(prop_ctx *ctx) {
  const double d = 128, rq = 15.0, rk = 15.7, eps = 0.1;
  double r = fmax(rq, rk);
  double lg10 = (log(sqrt(d)) + 2 * r * r / sqrt(d) - log(eps)) / log(10.0);
  double mem10 = lg10 + log10(d); /* memory Õ(d·t) words, logs dropped */
  /* Theorem 3.4 per-bucket guarantee factor e^{r²/√d}: the error bound relative to ‖V‖ scale. */
  double lgfac = r * r / sqrt(d) / log(10.0);
  prop_note(ctx, "003 Table 3 norms (‖q‖ ≈ %.0f, ‖k − mean‖ ≈ %.1f, ‖v‖ ≈ 3.3, d = %.0f), ε = %.1f: "
            "Theorem 3.1 asks t ≥ √d·e^{2r²/√d}/ε ≈ 10^%.1f tokens per batch and memory ≈ 10^%.1f "
            "words (logs dropped); e^{r²/√d} = 10^%.1f",
            rq, rk, d, eps, lg10, mem10, lgfac);
  /* A batch larger than any context (1e7 tokens) means no compression is ever reached. */
  prop_check(ctx, isfinite(lg10), "demand not computable");
  if (lg10 > 7)
    prop_vacuous_practical(ctx, "at Table 3 norms the batch size Theorem 3.1 needs (10^%.1f) exceeds any "
                 "context length: the guarantee is vacuous there", lg10);
  /* The formula itself is checked where it is not vacuous: r = 1, d = 16 gives a finite t. */
  double t_small = sqrt(16.0) * exp(2 * 1.0 / 4.0) / eps;
  prop_check(ctx, t_small > 1 && t_small < 1e3, "t at r = 1, d = 16: %g", t_small);
  prop_note(ctx, "for comparison r = 1, d = 16, ε = 0.1: t ≈ %.0f", t_small);
  /* Memory accounting there: t = 64, T = 3, n = t·2^T; every instance ≤ t(T+1) pairs, so the
   * method's stored vectors ≤ (2·buckets + 1)·t(T+1). */
  gsl_rng *data = prop_rng(ctx, 0), *mrng = prop_rng(ctx, 1);
  static const char *const a[] = {"r=1", "eps=0.1", "n=512", NULL};
  kvb_method *m = make(ctx, "balancekv", mrng, 2, a, 64, 3, 0, ARM_METHOD);
  double k[DK], v[2];
  size_t worst = 0, bound = 0;
  for (size_t j = 0; m && j < 512; j++) {
    kvb_rand_ball(data, k, DK, 1.0);
    kvb_rand_sphere(data, v, 2, exp2(-3 + 4 * gsl_rng_uniform(data)));
    kvb_method_update(m, k, DK, v, 2);
    kvb_memory mem;
    kvb_method_memory(m, &mem);
    kvb_balancekv_info info;
    kvb_balancekv_get_info(m, &info);
    size_t b = (2 * info.buckets + 1) * 64 * 4;
    if (mem.vectors > b) prop_check(ctx, 0, "memory %zu vectors > (2·%zu + 1)·t(T+1) = %zu at step %zu",
                                    mem.vectors, info.buckets, b, j + 1);
    if (mem.vectors > worst) worst = mem.vectors, bound = b;
    const kvb_mr *mr;
    for (size_t i = 0; (mr = kvb_balancekv_bucket(m, i, NULL)) || i == 0; i++) {
      if (!mr) mr = kvb_balancekv_denominator(m);
      for (size_t l = 0; l <= 3; l++)
        if (mr->lev[l].cnt > 64)
          prop_check(ctx, 0, "a level holds %zu > t = 64 pairs at step %zu", mr->lev[l].cnt, j + 1);
      if (!kvb_balancekv_bucket(m, i, NULL)) break;
    }
    for (size_t l = 0; l <= 3; l++)
      if (kvb_balancekv_denominator(m)->lev[l].cnt > 64)
        prop_check(ctx, 0, "a denominator level holds > t = 64 pairs at step %zu", j + 1);
  }
  prop_note(ctx, "at t = 64, T = 3, n = 512: peak memory %zu vectors (bound %zu)", worst, bound);
  kvb_method_free(m);
  gsl_rng_free(data), gsl_rng_free(mrng);
}

const prop_claim props_balancekv_error[] = {
    {"balancekv.mr.thm34.error", "003 Theorem 3.4", "bound",
     "err_j ≤ ε·j·e^{−r²/√d}·max‖v‖, ε = T√s·log(ts/δ)e^{2r²/√d}/t, at n = 2048, t = 256, T = 3 "
     "(ε = 0.359, below z ≡ 0's score ≥ 1), every 16th step: runs over it ≤ δ (binomial, α = 1e-6); "
     "z ≡ 0 and random halving (uniform halving at equal memory) through the same test",
     {"control:z_zero"}, mr_thm34, {"B-T3.4"}},
    {"balancekv.mr.thm34.rate", "003 Theorem 3.4 (t = Õ(1/ε))", "scaling",
     "log mean error vs log t (t = 8..64, n = 1024) falls faster for the walk than for random "
     "halving (one-sided slope-difference t test, α = 1e-6), cells [paper c] and [c = 16]; slope "
     "CIs against the theorem's −1; a second random halving through the same test",
     {"method:merge_reduce:random_signs"}, mr_rate, {"B-T3.4"}},
    {"balancekv.thm31.error", "003 Theorem 3.1", "bound",
     "‖z − Attn‖ ≤ ε_31·‖softmax‖‖V‖_F, ε_31 = 4T√d·log(td/δ)e^{2r²/√d}/t, in rate ≤ δ of the "
     "queries (binomial, α = 1e-6), cells [t = 64, n = 1024] and [t = 1024, n = 2048]; a cell whose "
     "bound z ≡ 0 or random halving meets is VACUOUS",
     {"control:z_zero", "method:balancekv:level_weight"}, thm31_error, {"B-T3.1"}},
    {"balancekv.thm31.advantage", "003 Theorem 3.1 (via Theorems 3.3, 3.4)", "comparison",
     "BalanceKV's relative error at t = 64, n = 1024 below the same algorithm with random halving "
     "(one-sided Welch, α = 1e-6), cells [paper c] and [c = 16]; a second random halving through "
     "the same test",
     {"method:balancekv:random_signs"}, thm31_advantage, {NULL},
     "Does BalanceKV err less than the same algorithm with random halving? (003 Theorem 3.1 only "
     "bounds the error; it does not compare with random signs)"},
    {"balancekv.thm31.practical", "003 Theorem 3.1, Table 3", "practicality",
     "t and memory Theorem 3.1 demands at 003 Table 3 norms; VACUOUS when beyond any context; "
     "at the theorem's t for r = 1, d = 16: every level ≤ t and memory ≤ (2·buckets + 1)·t(T+1) "
     "vectors at every step (exact)",
     {"method:balancekv:keep_larger"}, thm31_practical, {"B-PRAC"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

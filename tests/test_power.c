/* test_power.c — known answers for src/core/power.h and src/core/ewc.h. References come by other
 * routes than the code under test: normal tails from libm's erfc with quantiles typed from
 * tables, binomial tails by enumeration in long double, the noncentral t by simulation, and
 * the EWC standard error against the long-run variance of an AR(1) process in closed form. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

static double Phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* P[Bin(n, p) >= k] by enumeration in long double. */
static long double enum_tail_ge(unsigned k, long double p, unsigned n) {
  if (k > n) return 0;
  long double c = 1, s = 0;
  for (unsigned i = 1; i <= k; i++) c = c * (long double)(n - k + i) / (long double)i;
  for (unsigned j = k; j <= n; j++) {
    s += c * powl(p, (long double)j) * powl(1 - p, (long double)(n - j));
    c = c * (long double)(n - j) / (long double)(j + 1);
  }
  return s;
}

static void test_normal_power(void) {
  /* z_0.05 = 1.644854, z_0.1 (= Φ⁻¹(0.9)) = 1.281552 from tables */
  double p = kvb_normal_power_at(1.0, 0.5, 0.05, 0.9);
  double want = Phi(0.5 * (1.644854 + 1.281552) - 1.644854);
  CHECK(fabs(p - want) < 1e-6, "power.normal.half_effect", "%.8f vs %.8f", p, want);
  CHECK(fabs(kvb_normal_power_at(2.5, 2.5, 1e-6, 0.9) - 0.9) < 1e-12, "power.normal.at_detectable",
        "%.15g", kvb_normal_power_at(2.5, 2.5, 1e-6, 0.9));
  CHECK(fabs(kvb_normal_power_at(1.0, 0.0, 1e-6, 0.9) - 1e-6) < 1e-12, "power.normal.null_is_alpha",
        "%.6g", kvb_normal_power_at(1.0, 0.0, 1e-6, 0.9));
  CHECK(kvb_normal_power_at(0, 1, 1e-6, 0.9) == 1 && kvb_normal_power_at(0, 0, 1e-6, 0.9) == 0 &&
            isnan(kvb_normal_power_at(1, 1, 0, 0.9)) && isnan(kvb_normal_power_at(1, 1, 1e-6, 1)),
        "power.normal.edges", "detectable 0 or nonsense alpha/power");
}

static void test_plugin_miss(void) {
  CHECK(fabs(kvb_plugin_miss(1e-6, 1e-6) - 0.5) < 1e-12, "power.plugin_miss.at_alpha", "%.15g",
        kvb_plugin_miss(1e-6, 1e-6));
  /* z_1e-6 = 4.753424; a statistic 1.281552 above it misses with probability 0.1 */
  double p = 0.5 * erfc((4.753424 + 1.281552) / sqrt(2.0));
  CHECK(fabs(kvb_plugin_miss(p, 1e-6) - 0.1) < 1e-5, "power.plugin_miss.tenth", "%.8f",
        kvb_plugin_miss(p, 1e-6));
  CHECK(kvb_plugin_miss(0, 1e-6) == 0 && isnan(kvb_plugin_miss(NAN, 1e-6)) &&
            isnan(kvb_plugin_miss(0.1, 2)),
        "power.plugin_miss.edges", "p 0, NaN, alpha 2");
}

static void test_t_power(void) {
  CHECK(fabs(kvb_t_power(0, 10, 0.05) - 0.05) < 1e-4, "power.t.null_is_alpha", "%.6f",
        kvb_t_power(0, 10, 0.05));
  /* large df: the normal law, Φ(ncp − z_α) */
  double big = kvb_t_power(3, 1e5, 0.05), want = Phi(3 - 1.644854);
  CHECK(fabs(big - want) < 1e-3, "power.t.large_df_normal", "%.6f vs %.6f", big, want);
  /* small df: simulation of (Z + ncp)/sqrt(χ²_df/df) against t_{0.95,5} = 2.015048 (table) */
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 20261125);
  enum { M = 200000 };
  unsigned hit = 0;
  for (int i = 0; i < M; i++) {
    double t = (gsl_ran_gaussian(r, 1) + 2.5) / sqrt(gsl_ran_chisq(r, 5) / 5);
    hit += t > 2.015048;
  }
  double sim = (double)hit / M, se = sqrt(sim * (1 - sim) / M), got = kvb_t_power(2.5, 5, 0.05);
  CHECK(fabs(got - sim) < 5 * se + 1e-4, "power.t.df5_simulated", "%.5f vs simulated %.5f ± %.5f",
        got, sim, se);
  /* the inverse route: the effect kvb_t_detectable says has power 0.9 has power 0.9 */
  double det = kvb_t_detectable(1.0, 12, 1e-6, 0.9), back = kvb_t_power(det, 12, 1e-6);
  CHECK(fabs(back - 0.9) < 2e-3, "power.t.inverse_of_detectable", "%.6f", back);
  CHECK(kvb_t_power(3, 0, 0.05) == 0, "power.t.df0", "df 0 gives power 0");
  gsl_rng_free(r);
}

static void test_sign_power(void) {
  /* α = 1e-6: 2^-20 = 9.5e-7 < α ≤ 2^-19, so N = 20 rejects only at 20 wins, N = 19 never */
  CHECK(fabs(kvb_sign_power(20, 0.95, 1e-6) - pow(0.95, 20)) < 1e-12, "power.sign.n20",
        "%.12g vs %.12g", kvb_sign_power(20, 0.95, 1e-6), pow(0.95, 20));
  CHECK(kvb_sign_power(19, 1.0, 1e-6) == 0, "power.sign.n19_cannot", "%.3g",
        kvb_sign_power(19, 1.0, 1e-6));
  /* N = 40 by enumeration: the critical count, then the tail at p1 */
  unsigned k = 0;
  while (enum_tail_ge(k, 0.5L, 40) >= 1e-6L) k++;
  double want = (double)enum_tail_ge(k, 0.8L, 40), got = kvb_sign_power(40, 0.8, 1e-6);
  CHECK(fabs(got - want) < 1e-10, "power.sign.n40_enumerated", "%.12g vs %.12g (k = %u)", got,
        want, k);
  unsigned n = 20;
  for (;; n++) {
    unsigned c = 0;
    while (enum_tail_ge(c, 0.5L, n) >= 1e-6L) c++;
    if (c <= n && enum_tail_ge(c, 0.9L, n) >= 0.9L) break;
  }
  CHECK(kvb_sign_units_needed(0.9, 1e-6, 0.9) == n, "power.sign.units_needed", "%u vs %u",
        kvb_sign_units_needed(0.9, 1e-6, 0.9), n);
}

static void test_mcnemar_power(void) {
  /* contender never answers: every discordant task is the method's; reject iff b ≥ 20 */
  double want = (double)enum_tail_ge(20, 0.9L, 30), got = kvb_mcnemar_power(30, 0.9, 0, 1e-6);
  CHECK(fabs(got - want) < 1e-10, "power.mcnemar.one_sided_extreme", "%.12g vs %.12g", got, want);
  double eq = kvb_mcnemar_power(200, 0.6, 0.6, 1e-6);
  CHECK(eq <= 1e-6, "power.mcnemar.equal_rates_at_most_alpha", "%.3g", eq);
  CHECK(kvb_mcnemar_power(19, 1.0, 0.0, 1e-6) == 0, "power.mcnemar.too_few", "%.3g",
        kvb_mcnemar_power(19, 1.0, 0.0, 1e-6));
  unsigned need = kvb_mcnemar_tasks_needed(0.9, 0.0, 1e-6, 0.9);
  CHECK(need >= 20 && kvb_mcnemar_power(need, 0.9, 0.0, 1e-6) >= 0.9 &&
            (need == 20 || kvb_mcnemar_power(need - 1, 0.9, 0.0, 1e-6) < 0.9),
        "power.mcnemar.tasks_needed", "%u", need);
}

/* AR(1) y_t = ρ y_{t−1} + e_t, e ~ N(0, 1): long-run variance 1/(1−ρ)². */
static void ar1(gsl_rng *r, double rho, double *y, size_t T) {
  double prev = gsl_ran_gaussian(r, 1) / sqrt(1 - rho * rho);
  for (size_t t = 0; t < T; t++) y[t] = prev = rho * prev + gsl_ran_gaussian(r, 1);
}

static void test_ewc(void) {
  CHECK(kvb_ewc_nu(1000) == 40 && kvb_ewc_nu(8) == 1 && kvb_ewc_nu(1) == 1, "ewc.nu_rule",
        "nu(1000) %u, nu(8) %u", kvb_ewc_nu(1000), kvb_ewc_nu(8));
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  enum { T = 4000, R = 300, TC = 400 };
  static double y[T], x[T];
  double m, se;
  ar1(r, 0.8, y, T);
  unsigned nu = kvb_ewc_mean(y, T, &m, &se);
  double want = 1 / (1 - 0.8) / sqrt((double)T); /* 4.5× the iid standard error */
  CHECK(nu == kvb_ewc_nu(T) && fabs(se / want - 1) < 0.35, "ewc.mean_ar1_long_run",
        "se %.4f, AR(1) long-run %.4f", se, want);
  /* coverage: |t| > t_{ν,0.975} in ~5% of AR(1) series (ρ = 0.5), mean and slope */
  unsigned out_m = 0, out_b = 0;
  for (int i = 0; i < R; i++) {
    ar1(r, 0.5, y, TC);
    kvb_ewc_mean(y, TC, &m, &se);
    double q = gsl_cdf_tdist_Qinv(0.025, kvb_ewc_nu(TC));
    out_m += fabs(m / se) > q;
    for (size_t t = 0; t < TC; t++) x[t] = (double)t, y[t] += 0.01 * (double)t;
    double b, seb;
    kvb_ewc_slope(x, y, TC, &b, &seb);
    out_b += fabs((b - 0.01) / seb) > q;
  }
  /* under 5%, P[Bin(300, 0.05) ∉ [3, 31]] < 1e-3 */
  CHECK(out_m >= 3 && out_m <= 31 && out_b >= 3 && out_b <= 31, "ewc.coverage_ar1",
        "mean: %u of %d outside, slope: %u of %d", out_m, R, out_b, R);
  CHECK(kvb_ewc_mean(y, 2, &m, &se) == 0 && kvb_ewc_slope(y, y, 2, &m, &se) == 0,
        "ewc.too_short", "T < 3 refused");
  for (size_t t = 0; t < 10; t++) x[t] = 1;
  CHECK(kvb_ewc_slope(x, y, 10, &m, &se) == 0, "ewc.constant_x", "refused");
  gsl_rng_free(r);
}

/* The independence-coupling McNemar power, by a route of its own: enumeration over the
 * discordant count k ~ Bin(N, p10 + p01), the critical b of each k found by enumeration, in long
 * double. A mutant that returns the best-case coupling (kvb_mcnemar_power) or swaps p10 and
 * p01 fails power.mcnemar_indep.hand (0.987 and ~0 against 0.186). */
static long double mcnemar_indep_ref(unsigned N, long double p1, long double p2, double alpha) {
  long double p10 = p1 * (1 - p2), p01 = p2 * (1 - p1), pd = p10 + p01, s = 0;
  for (unsigned k = 1; k <= N; k++) {
    unsigned c = 0;
    while (c <= k && enum_tail_ge(c, 0.5L, k) >= alpha) c++;
    if (c > k) continue;
    long double pk = enum_tail_ge(k, pd, N) - enum_tail_ge(k + 1, pd, N);
    s += pk * enum_tail_ge(c, p10 / pd, k);
  }
  return s;
}

static void test_mcnemar_indep(void) {
  double got = kvb_mcnemar_power_indep(150, 0.86, 0.66, 1e-6);
  double want = (double)mcnemar_indep_ref(150, 0.86L, 0.66L, 1e-6);
  CHECK(fabs(got - want) < 1e-9 && fabs(got - 0.1862) < 5e-4, "power.mcnemar_indep.hand",
        "%.6f vs %.6f (hand: 0.1862)", got, want);
  double best = kvb_mcnemar_power(150, 0.86, 0.66, 1e-6);
  CHECK(best > 0.95 && got < 0.2, "power.mcnemar_indep.below_best_case", "independence %.3f, best "
        "case %.3f", got, best);
  /* simulation: independent Bernoulli outcomes, the exact test at α = 1e-3, N = 60, 0.9 vs 0.6 */
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 35);
  enum { REPS = 20000 };
  unsigned hits = 0;
  for (int rep = 0; rep < REPS; rep++) {
    unsigned b = 0, c = 0;
    for (int i = 0; i < 60; i++) {
      int x = gsl_rng_uniform(r) < 0.9, u = gsl_rng_uniform(r) < 0.6;
      b += x && !u, c += !x && u;
    }
    hits += b + c > 0 && kvb_binom_tail_ge(b, 0.5, b + c) < 1e-3;
  }
  gsl_rng_free(r);
  double sim = (double)hits / REPS, pw = kvb_mcnemar_power_indep(60, 0.9, 0.6, 1e-3);
  double se = sqrt(pw * (1 - pw) / REPS);
  CHECK(fabs(sim - pw) < 5 * se, "power.mcnemar_indep.simulation", "simulated %.4f vs %.4f (se "
        "%.4f)", sim, pw, se);
  unsigned need = kvb_mcnemar_units_needed_indep(0.86, 0.66, 1e-6, 0.9);
  CHECK(kvb_mcnemar_power_indep(need, 0.86, 0.66, 1e-6) >= 0.9 &&
            kvb_mcnemar_power_indep(need - 1, 0.86, 0.66, 1e-6) < 0.9 && need > 300 && need < 400,
        "power.mcnemar_indep.units_needed", "N = %u (outside estimate: 337)", need);
  CHECK(isnan(kvb_mcnemar_power_indep(10, 1.5, 0.5, 1e-6)) &&
            kvb_mcnemar_power_indep(10, 0.5, 0.5, 0.5) <= 0.5,
        "power.mcnemar_indep.edges", "marginal 1.5; equal rates");
}

/* Paired t power: G*Power's one-sample t (one-tailed, d = 0.5, α = 0.05, power 0.9) needs N =
 * 36 (its actual power 0.9026); the normal approximation would say 35. A mutant with df = N or
 * ncp = effect·N/sd fails power.paired_t.gpower or .simulation. */
static void test_paired_t_power(void) {
  unsigned need = kvb_paired_t_units_needed(0.5, 1.0, 0.05, 0.9);
  double p36 = kvb_paired_t_power(36, 0.5, 1.0, 0.05);
  CHECK(need == 36 && fabs(p36 - 0.9026) < 1e-3, "power.paired_t.gpower", "N = %u, power(36) = "
        "%.4f (G*Power: 36, 0.9026)", need, p36);
  /* simulation: N = 8 normal differences, effect 1, sd 2, α = 0.05 (t_{0.95,7} = 1.894579) */
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 36);
  enum { REPS = 40000 };
  unsigned hits = 0;
  for (int rep = 0; rep < REPS; rep++) {
    double s = 0, ss = 0, d[8];
    for (int i = 0; i < 8; i++) d[i] = 1 + 2 * gsl_ran_ugaussian(r), s += d[i];
    for (int i = 0; i < 8; i++) ss += (d[i] - s / 8) * (d[i] - s / 8);
    hits += (s / 8) / sqrt(ss / 7 / 8) > 1.894579;
  }
  gsl_rng_free(r);
  double sim = (double)hits / REPS, pw = kvb_paired_t_power(8, 1.0, 2.0, 0.05);
  double se = sqrt(pw * (1 - pw) / REPS);
  CHECK(fabs(sim - pw) < 5 * se + 1e-4, "power.paired_t.simulation", "simulated %.4f vs %.4f",
        sim, pw);
  /* N = 3 (df 2, t_{0.95,2} = 2.919986): where df = N instead of N − 1 moves the power most */
  gsl_rng *r3 = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r3, 37);
  hits = 0;
  for (int rep = 0; rep < REPS; rep++) {
    double s = 0, ss = 0, d[3];
    for (int i = 0; i < 3; i++) d[i] = 1 + gsl_ran_ugaussian(r3), s += d[i];
    for (int i = 0; i < 3; i++) ss += (d[i] - s / 3) * (d[i] - s / 3);
    hits += (s / 3) / sqrt(ss / 2 / 3) > 2.919986;
  }
  gsl_rng_free(r3);
  sim = (double)hits / REPS, pw = kvb_paired_t_power(3, 1.0, 1.0, 0.05);
  se = sqrt(pw * (1 - pw) / REPS);
  CHECK(fabs(sim - pw) < 5 * se + 1e-4, "power.paired_t.simulation_df2", "simulated %.4f vs %.4f",
        sim, pw);
  CHECK(kvb_paired_t_power(1, 1, 1, 0.05) == 0 && isnan(kvb_paired_t_power(10, 1, 0, 0.05)),
        "power.paired_t.edges", "N = 1; sd = 0");
}

/* TOST power (normal approximation): margin/sd = 0.5, α = 0.05, true mean 0 needs 2Φ(0.5√N −
 * 1.644854) − 1 >= 0.9, i.e. 0.5√N >= 1.644854 + 1.644854 → N = 44 (43.3 rounded up). A
 * mutant that takes one side only (Φ(·) alone) gives N = 35 and fails. */
static void test_tost_power(void) {
  unsigned need = kvb_tost_units_needed(0.5, 1.0, 0.05, 0.9);
  double p = kvb_tost_power(44, 0, 0.5, 1.0, 0.05), want = 2 * Phi(0.5 * sqrt(44.0) - 1.644854) - 1;
  CHECK(need == 44 && fabs(p - want) < 1e-6, "power.tost.hand", "N = %u, power(44) %.6f vs %.6f",
        need, p, want);
  CHECK(kvb_tost_power(4, 0, 0.1, 1.0, 0.05) == 0 && isnan(kvb_tost_power(10, 0, 0, 1, 0.05)),
        "power.tost.edges", "floored at 0; margin 0");
}

/* The log-lik effect of an accuracy gap, by hand: 0.86 vs 0.66, gap 12, spread 5.6: δ = 2.4,
 * var = 144·(0.86·0.34 + 0.66·0.14 − 0.04) + 31.36·(0.14 + 0.34) = 144·0.3448 + 15.0528 =
 * 64.704 → σ = 8.0439. Without the within-miss spread (a mutant) σ = 7.046; with the
 * best-case coupling's variance instead of independence's, 144·(0.2 − 0.04) → σ 6.21. */
static void test_loglik_effect(void) {
  double d, s;
  kvb_loglik_effect(0.86, 0.66, 12, 5.6, &d, &s);
  CHECK(fabs(d - 2.4) < 1e-12 && fabs(s - sqrt(64.704)) < 1e-9, "power.loglik_effect.hand",
        "δ %.6f σ %.6f (want 2.4, %.6f)", d, s, sqrt(64.704));
  kvb_loglik_effect(0.5, 0.5, 12, 0, &d, &s);
  CHECK(d == 0 && fabs(s - 12 * sqrt(0.5)) < 1e-12, "power.loglik_effect.equal_rates", "δ %g σ %g", d, s);
  kvb_loglik_effect(1.2, 0.5, 12, 5, &d, &s);
  CHECK(isnan(d) && isnan(s), "power.loglik_effect.edges", "p1 = 1.2");
}

int main(void) {
  test_normal_power();
  test_plugin_miss();
  test_t_power();
  test_sign_power();
  test_mcnemar_power();
  test_mcnemar_indep();
  test_paired_t_power();
  test_tost_power();
  test_loglik_effect();
  test_ewc();
  UNIT_EXIT();
}

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

int main(void) {
  test_normal_power();
  test_plugin_miss();
  test_t_power();
  test_sign_power();
  test_mcnemar_power();
  test_ewc();
  UNIT_EXIT();
}

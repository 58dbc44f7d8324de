/* test_stats.c — known-answer tests for every helper of src/stats.h. The reference numbers come
 * by other routes than the code under test: exact enumeration of binomial pmfs in long double,
 * closed forms (χ² tails with 1 and 2 df, Clopper–Pearson at k = 0 and k = n, the Kolmogorov
 * distribution at its two ends), hand-computed statistics and textbook/table values. */
#include "kvbound.h"
#include "stats.h"
#include "unit.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

/* P[Bin(n, p) >= k] by summing the pmf C(n,j) p^j (1-p)^(n-j), j = k..n, in long double. */
static long double enum_tail_ge(unsigned k, long double p, unsigned n) {
  if (k > n) return 0;
  long double c = 1, s = 0; /* c = C(n, j), built up to j = k, then stepped */
  for (unsigned i = 1; i <= k; i++) c = c * (long double)(n - k + i) / (long double)i;
  for (unsigned j = k; j <= n; j++) {
    s += c * powl(p, (long double)j) * powl(1 - p, (long double)(n - j));
    c = c * (long double)(n - j) / (long double)(j + 1);
  }
  return s;
}
static long double enum_cdf_le(unsigned k, long double p, unsigned n) {
  return 1 - enum_tail_ge(k + 1, p, n);
}

static int close_rel(double a, double b, double rel) {
  return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) || (a == 0 && b == 0);
}

static void test_binom_tail(void) {
  static const unsigned ns[] = {1, 2, 5, 10, 20, 40};
  static const double ps[] = {0.01, 0.05, 0.3, 0.5, 0.9};
  double worst = 0;
  for (size_t a = 0; a < 6; a++)
    for (size_t b = 0; b < 5; b++)
      for (unsigned k = 0; k <= ns[a] + 1; k++) {
        double got = kvb_binom_tail_ge(k, ps[b], ns[a]);
        double want = (double)enum_tail_ge(k, ps[b], ns[a]);
        double err = fabs(got - want) / fmax(want, 1e-300);
        if (want > 1e-280 && err > worst) worst = err;
      }
  CHECK(worst < 1e-11, "stats.binom_tail.enumeration", "worst relative error %.3g", worst);
  /* The index convention: P[X >= k] includes k. Bin(10, ½): P[X >= 5] = 638/1024, while the
   * P[X > k] convention would give P[X > 5] = 386/1024 — the two differ by pmf(5) = 252/1024. */
  CHECK(close_rel(kvb_binom_tail_ge(5, 0.5, 10), 638.0 / 1024, 1e-13),
        "stats.binom_tail.includes_k", "P[Bin(10,.5) >= 5] = %.17g (638/1024 = 0.623046875; the "
        "P[X > 5] convention gives 386/1024)", kvb_binom_tail_ge(5, 0.5, 10));
  CHECK(close_rel(kvb_binom_tail_ge(1, 0.5, 3), 7.0 / 8, 1e-13) &&
            close_rel(kvb_binom_tail_ge(3, 0.5, 3), 1.0 / 8, 1e-13),
        "stats.binom_tail.small", "P[Bin(3,.5)>=1] = %g (7/8), >=3 = %g (1/8)",
        kvb_binom_tail_ge(1, 0.5, 3), kvb_binom_tail_ge(3, 0.5, 3));
  CHECK(kvb_binom_tail_ge(0, 0.3, 7) == 1 && kvb_binom_tail_ge(8, 0.3, 7) == 0 &&
            kvb_binom_tail_ge(100, 0.3, 7) == 0 && kvb_binom_tail_ge(0, 0.3, 0) == 1 &&
            kvb_binom_tail_ge(1, 0.3, 0) == 0,
        "stats.binom_tail.boundaries", "k = 0 must give 1 and k > n 0");
  CHECK(kvb_binom_tail_ge(1, 0.0, 9) == 0 && kvb_binom_tail_ge(9, 1.0, 9) == 1 &&
            kvb_binom_tail_ge(0, 0.0, 9) == 1,
        "stats.binom_tail.p_0_1", "%g %g", kvb_binom_tail_ge(1, 0.0, 9),
        kvb_binom_tail_ge(9, 1.0, 9));
  CHECK(isnan(kvb_binom_tail_ge(2, -0.1, 5)) && isnan(kvb_binom_tail_ge(2, 1.5, 5)) &&
            isnan(kvb_binom_tail_ge(2, NAN, 5)),
        "stats.binom_tail.rejects_bad_p", "p outside [0,1] must give NaN");
  /* A tiny tail stays accurate (no 1 - cdf cancellation): P[Bin(100, .01) >= 20] ~ 1e-19. */
  double tiny = kvb_binom_tail_ge(20, 0.01, 100);
  long double want = enum_tail_ge(20, 0.01L, 100);
  CHECK(close_rel(tiny, (double)want, 1e-9), "stats.binom_tail.small_tail", "%.6g vs %.6Lg", tiny,
        want);
}

static void test_clopper_pearson(void) {
  double lo, hi;
  /* k = 0: hi solves (1 - hi)^n = 0.025 → hi = 1 - 0.025^(1/n). k = n symmetric. */
  kvb_clopper_pearson(0, 10, 0.95, &lo, &hi);
  CHECK(lo == 0 && close_rel(hi, 1 - pow(0.025, 0.1), 1e-10) && close_rel(hi, 0.30849710, 1e-7),
        "stats.cp.k0", "[%g, %.10g], want [0, 0.3084971]", lo, hi);
  kvb_clopper_pearson(10, 10, 0.95, &lo, &hi);
  CHECK(hi == 1 && close_rel(lo, pow(0.025, 0.1), 1e-10), "stats.cp.kn", "[%.10g, %g]", lo, hi);
  /* Textbook: 3/20 at 95%: [0.0321, 0.3789]; both ends by their definitions. */
  kvb_clopper_pearson(3, 20, 0.95, &lo, &hi);
  long double up = enum_tail_ge(3, lo, 20), dn = enum_cdf_le(3, hi, 20);
  CHECK(fabs(lo - 0.0321) < 5e-5 && fabs(hi - 0.3789) < 5e-5 && fabsl(up - 0.025L) < 1e-10 &&
            fabsl(dn - 0.025L) < 1e-10,
        "stats.cp.definition", "[%.5f, %.5f]; P[Bin(20,lo)>=3] = %.12Lg, P[Bin(20,hi)<=3] = %.12Lg "
        "(each 0.025)", lo, hi, up, dn);
  /* Two-sided: each tail (1-conf)/2, not 1-conf. The one-sided bound at alpha = 0.025 is the
   * two-sided hi; at alpha = 0.05 it is strictly inside. */
  double u025 = kvb_binom_upper_bound(3, 20, 0.025), u05 = kvb_binom_upper_bound(3, 20, 0.05);
  CHECK(close_rel(u025, hi, 1e-10) && u05 < hi - 0.02 && fabsl(enum_cdf_le(3, u05, 20) - 0.05L) < 1e-10,
        "stats.cp.two_sided_vs_one_sided", "hi %.6f, one-sided .025 %.6f, .05 %.6f", hi, u025, u05);
  /* Large n, where GSL's own beta inverse returns NaN (514/5000): both ends by definition. */
  int ok = 1;
  static const unsigned kk[] = {514, 1, 50, 2500, 4990};
  for (int i = 0; i < 5; i++) {
    kvb_clopper_pearson(kk[i], 5000, 0.95, &lo, &hi);
    ok &= fabsl(enum_tail_ge(kk[i], lo, 5000) - 0.025L) < 1e-9 &&
          fabsl(enum_cdf_le(kk[i], hi, 5000) - 0.025L) < 1e-9 &&
          fabs(kvb_binom_upper_bound(kk[i], 5000, 0.025) - hi) < 1e-12;
  }
  CHECK(ok, "stats.cp.large_n", "a bound of k/5000 misses its definition");
  kvb_clopper_pearson(0, 0, 0.95, &lo, &hi);
  CHECK(lo == 0 && hi == 1, "stats.cp.n0", "[%g, %g]", lo, hi);
  kvb_clopper_pearson(5, 4, 0.95, &lo, &hi);
  int bad = isnan(lo) && isnan(hi);
  kvb_clopper_pearson(1, 4, 1.0, &lo, &hi);
  bad &= isnan(lo) && isnan(hi);
  kvb_clopper_pearson(1, 4, 0.0, &lo, &hi);
  bad &= isnan(lo) && isnan(hi);
  CHECK(bad, "stats.cp.rejects", "k > n or conf outside (0,1) must give NaN");
}

static void test_upper_bound(void) {
  double u = kvb_binom_upper_bound(0, 10, 0.05);
  CHECK(close_rel(u, 1 - pow(0.05, 0.1), 1e-10) && close_rel(u, 0.2588656, 1e-6),
        "stats.upper_bound.k0", "%.10g, want 1 - 0.05^(1/10) = 0.2588656", u);
  int ok = 1;
  for (unsigned k = 0; k < 30; k += 7) {
    double b = kvb_binom_upper_bound(k, 30, 0.01);
    ok &= fabsl(enum_cdf_le(k, b, 30) - 0.01L) < 1e-10;
  }
  CHECK(ok, "stats.upper_bound.definition", "P[Bin(30, ub) <= k] != 0.01");
  CHECK(kvb_binom_upper_bound(7, 7, 0.05) == 1 && isnan(kvb_binom_upper_bound(8, 7, 0.05)) &&
            isnan(kvb_binom_upper_bound(1, 7, 0)),
        "stats.upper_bound.edges", "k = n gives 1; k > n, alpha = 0 NaN");
}

static void test_detectable_rate(void) {
  static const struct {
    unsigned n;
    double p0, alpha;
  } cs[] = {{20, 0.1, 0.01}, {50, 0.02, 1e-3}, {200, 0.01, 1e-6}, {1000, 0.005, 1e-6}};
  for (size_t c = 0; c < 4; c++) {
    unsigned n = cs[c].n, crit;
    double p1 = kvb_binom_detectable_rate(n, cs[c].p0, cs[c].alpha, 0.9, &crit);
    /* Reference critical value: scan F upward with the enumerated tail. */
    unsigned F = 0;
    while (F <= n && enum_tail_ge(F, cs[c].p0, n) >= cs[c].alpha) F++;
    long double at = enum_tail_ge(crit, p1, n), below = enum_tail_ge(crit, p1 - 1e-9, n);
    char name[64];
    snprintf(name, sizeof name, "stats.detectable_rate.n%u", n);
    CHECK(crit == F && at >= 0.9L - 1e-12L && below < 0.9L && p1 > cs[c].p0, name,
          "crit %u (enumeration %u), p1 %.6g, power there %.12Lg, at p1-1e-9 %.12Lg", crit, F, p1,
          at, below);
  }
  /* p0 = 0: the first failure rejects (crit 1); power 1 - (1-p)^n = 0.9 → p1 = 1 - 0.1^(1/n). */
  unsigned crit;
  double p1 = kvb_binom_detectable_rate(20, 0.0, 1e-6, 0.9, &crit);
  CHECK(crit == 1 && close_rel(p1, 1 - pow(0.1, 0.05), 1e-9), "stats.detectable_rate.p0_zero",
        "crit %u p1 %.10g want %.10g", crit, p1, 1 - pow(0.1, 0.05));
  /* n = 5, p0 = ½: even 5/5 has tail 1/32 >= 0.01, nothing is rejectable. */
  p1 = kvb_binom_detectable_rate(5, 0.5, 0.01, 0.9, &crit);
  CHECK(crit == 6 && p1 == 1, "stats.detectable_rate.none", "crit %u p1 %g", crit, p1);
  CHECK(isnan(kvb_binom_detectable_rate(5, 1.5, 0.01, 0.9, &crit)) && crit == 6 &&
            isnan(kvb_binom_detectable_rate(5, 0.5, 0.01, 1.0, NULL)),
        "stats.detectable_rate.rejects", "bad p0/power must give NaN");
}

static void test_chisq_gof(void) {
  double st;
  size_t df;
  /* (10-20)²/20 + 0 + (30-20)²/20 = 10, df 2, Q(x; 2) = e^{-x/2}. */
  double o1[] = {10, 20, 30}, e1[] = {20, 20, 20};
  double p = kvb_chisq_gof(o1, e1, 3, &st, &df);
  CHECK(st == 10 && df == 2 && close_rel(p, exp(-5.0), 1e-12), "stats.chisq_gof.hand",
        "stat %g df %zu p %.12g (e^-5)", st, df, p);
  /* Merging changes df: expected {1,2,3,14,20} → {1+2 → 3, +3 → 6}, 14, 20: three cells, df 2
   * (4 without merging). observed {4,0,5,10,21} → (9, 10, 21):
   * 3²/6 + 4²/14 + 1²/20 = 1.5 + 8/7 + 0.05. */
  double o2[] = {4, 0, 5, 10, 21}, e2[] = {1, 2, 3, 14, 20};
  double want = 1.5 + 8.0 / 7 + 0.05;
  p = kvb_chisq_gof(o2, e2, 5, &st, &df);
  CHECK(df == 2 && close_rel(st, want, 1e-12) && close_rel(p, exp(-want / 2), 1e-10),
        "stats.chisq_gof.merged_df", "stat %.12g (want %.12g) df %zu (want 2) p %.6g", st, want,
        df, p);
  /* Merging into the next smallest re-sorts: {4,4,4,100} → 4+4 = 8, then 4 + 8 = 12: (12, 100),
   * df 1; observed {6,2,7,97} → (15, 97): 9/12 + 9/100 = 0.84; Q(x; 1) = erfc(√(x/2)). */
  double o3[] = {6, 2, 7, 97}, e3[] = {4, 4, 4, 100};
  p = kvb_chisq_gof(o3, e3, 4, &st, &df);
  CHECK(df == 1 && close_rel(st, 0.84, 1e-12) && close_rel(p, erfc(sqrt(0.42)), 1e-10),
        "stats.chisq_gof.merged_df1", "stat %.12g df %zu p %.10g want %.10g", st, df, p,
        erfc(sqrt(0.42)));
  /* Against GSL's χ² tail for an unmerged 6-cell case. */
  double o4[] = {18, 25, 22, 30, 12, 13}, e4[] = {20, 20, 20, 20, 20, 20};
  double x4 = (4 + 25 + 4 + 100 + 64 + 49) / 20.0;
  p = kvb_chisq_gof(o4, e4, 6, &st, &df);
  CHECK(df == 5 && close_rel(st, x4, 1e-12) && close_rel(p, gsl_cdf_chisq_Q(x4, 5), 1e-12),
        "stats.chisq_gof.gsl", "stat %g df %zu p %g", st, df, p);
  /* Zero-expected cells: skipped when empty, decisive when not. Too few cells: df 0, p 1. */
  double o5[] = {0, 10, 30}, e5[] = {0, 20, 20};
  p = kvb_chisq_gof(o5, e5, 3, &st, &df);
  CHECK(df == 1 && st == 10 && close_rel(p, erfc(sqrt(5.0)), 1e-10), "stats.chisq_gof.empty_cell",
        "df %zu stat %g", df, st);
  double o6[] = {1, 19, 20}, e6[] = {0, 20, 20};
  p = kvb_chisq_gof(o6, e6, 3, &st, &df);
  CHECK(p == 0 && isinf(st), "stats.chisq_gof.impossible", "p %g stat %g", p, st);
  double o7[] = {3, 1}, e7[] = {2, 2};
  p = kvb_chisq_gof(o7, e7, 2, &st, &df);
  CHECK(p == 1 && df == 0, "stats.chisq_gof.one_cell", "p %g df %zu", p, df);
  double o8[] = {-1, 21}, e8[] = {10, 10}, o9[] = {5, 5}, e9[] = {10, 10};
  CHECK(isnan(kvb_chisq_gof(o8, e8, 2, NULL, NULL)) && isnan(kvb_chisq_gof(o9, e9, 2, NULL, NULL)),
        "stats.chisq_gof.rejects", "negative count or different totals must give NaN");
}

static void test_chisq_indep(void) {
  double st;
  size_t df;
  /* 2x2, every expected 25: 4·25/25 = 4, df 1, p = erfc(√2). */
  double t1[] = {20, 30, 30, 20};
  double p = kvb_chisq_independence(t1, 2, 2, &st, &df);
  CHECK(close_rel(st, 4, 1e-12) && df == 1 && close_rel(p, erfc(sqrt(2.0)), 1e-10),
        "stats.chisq_indep.2x2", "stat %g df %zu p %g", st, df, p);
  /* 2x3: rows 60, 60; columns 30, 40, 50; expected 15, 20, 25 per row:
   * 2·(25/15 + 0 + 25/25) = 16/3, df 2, p = e^{-8/3}. */
  double t2[] = {10, 20, 30, 20, 20, 20};
  p = kvb_chisq_independence(t2, 2, 3, &st, &df);
  CHECK(close_rel(st, 16.0 / 3, 1e-12) && df == 2 && close_rel(p, exp(-8.0 / 3), 1e-10),
        "stats.chisq_indep.2x3", "stat %g df %zu p %g", st, df, p);
  /* A sparse row (expected 3·51/103 < 5) is dropped: the 2x2 above remains, df 1. */
  double t3[] = {20, 30, 30, 20, 1, 2};
  p = kvb_chisq_independence(t3, 3, 2, &st, &df);
  CHECK(close_rel(st, 4, 1e-12) && df == 1, "stats.chisq_indep.dropped", "stat %g df %zu", st, df);
  double t4[] = {1, 2, 3, 4};
  p = kvb_chisq_independence(t4, 2, 2, &st, &df);
  CHECK(p == 1 && df == 0, "stats.chisq_indep.too_sparse", "p %g df %zu", p, df);
  double t5[] = {1, -2, 3, 4};
  CHECK(isnan(kvb_chisq_independence(t5, 2, 2, NULL, NULL)), "stats.chisq_indep.rejects",
        "negative count must give NaN");
}

static void test_linear_fit(void) {
  double x[] = {0, 1, 2, 3, 4}, y[5], s, se, df, lo, hi, a;
  for (int i = 0; i < 5; i++) y[i] = 2 + 3 * x[i];
  CHECK(kvb_linear_fit_se(5, x, y, &s, &se, &df) == 0 && s == 3 && se == 0 && df == 3,
        "stats.fit.exact_line", "slope %.17g se %g df %g", s, se, df);
  /* Textbook: x = 1..5, y = 2,4,5,4,5: slope 0.6, intercept 2.2, SSE 2.4, s² = 0.8,
   * se = √(0.8/10); 95% CI 0.6 ± t_{.975,3}·se with t_{.975,3} = 3.182446 (tables). */
  double x2[] = {1, 2, 3, 4, 5}, y2[] = {2, 4, 5, 4, 5};
  kvb_linear_fit_se(5, x2, y2, &s, &se, &df);
  CHECK(close_rel(s, 0.6, 1e-12) && close_rel(se, sqrt(0.08), 1e-12) && df == 3,
        "stats.fit.textbook_se", "slope %.12g se %.12g", s, se);
  kvb_linear_fit(5, x2, y2, 0.95, &s, &lo, &hi, &a);
  CHECK(close_rel(a, 2.2, 1e-12) && fabs(lo - (0.6 - 3.182446 * sqrt(0.08))) < 1e-6 &&
            fabs(hi - (0.6 + 3.182446 * sqrt(0.08))) < 1e-6,
        "stats.fit.textbook_ci", "a %.10g CI [%.8f, %.8f], want 0.6 ± 0.900128", a, lo, hi);
  /* 90%: t_{.95,3} = 2.353363. */
  kvb_linear_fit(5, x2, y2, 0.90, &s, &lo, &hi, NULL);
  CHECK(fabs(hi - (0.6 + 2.353363 * sqrt(0.08))) < 1e-6, "stats.fit.ci_level",
        "hi %.8f", hi);
  double xc[] = {1, 1, 1}, yc[] = {1, 2, 3};
  s = -7;
  CHECK(kvb_linear_fit_se(2, x, y, &s, &se, &df) == -1 && kvb_linear_fit_se(3, xc, yc, &s, &se, &df) == -1 &&
            kvb_linear_fit(5, x2, y2, 1.0, &s, &lo, &hi, NULL) == -1 && s == -7,
        "stats.fit.rejects", "n < 3, constant x, conf 1 must give -1, outputs untouched");
}

static void test_t_detectable(void) {
  /* df → ∞: z_{1-α} + z_power; α = .05, power .9: 1.644854 + 1.281552 (tables). */
  double d = kvb_t_detectable(1, 1e7, 0.05, 0.9);
  CHECK(fabs(d - 2.926405) < 1e-4, "stats.t_detectable.normal_limit", "%.7f", d);
  CHECK(close_rel(kvb_t_detectable(2.5, 1e7, 0.05, 0.9), 2.5 * d, 1e-9), "stats.t_detectable.scales",
        "linear in se");
  /* Exact power at df = 4 by an independent quadrature over the χ²_4 density v e^{-v/2}/4:
   * power = ∫ Φ(δ - c√(v/4)) f(v) dv must be 0.9 at δ = kvb_t_detectable. */
  double c = gsl_cdf_tdist_Qinv(1e-6, 4);
  d = kvb_t_detectable(1, 4, 1e-6, 0.9);
  double pw = 0, h = 1e-3;
  for (double v = h / 2; v < 200; v += h)
    pw += 0.5 * erfc(-(d - c * sqrt(v / 4)) / sqrt(2.0)) * v * exp(-v / 2) / 4 * h;
  double old = c + gsl_cdf_tdist_Pinv(0.9, 4);
  CHECK(fabs(pw - 0.9) < 1e-5 && d > old * 1.2, "stats.t_detectable.noncentral_df4",
        "delta %.5g, power by quadrature %.7f (the shifted-central %.5g would be far below)", d, pw,
        old);
  /* Monte Carlo at df = 43 (a Welch df seen in the props): 2e5 draws, sd 7e-4. */
  gsl_rng *r = kvb_rng_alloc_substream(2026, 4);
  c = gsl_cdf_tdist_Qinv(1e-6, 43);
  d = kvb_t_detectable(1, 43, 1e-6, 0.9);
  unsigned hit = 0, N = 200000;
  for (unsigned i = 0; i < N; i++)
    hit += (gsl_ran_gaussian(r, 1) + d) / sqrt(gsl_ran_chisq(r, 43) / 43) > c;
  gsl_rng_free(r);
  CHECK(fabs((double)hit / N - 0.9) < 0.004, "stats.t_detectable.monte_carlo",
        "power %.4f at delta %.4f", (double)hit / N, d);
  CHECK(isnan(kvb_t_detectable(1, 0, 0.05, 0.9)) && isnan(kvb_t_detectable(-1, 5, 0.05, 0.9)) &&
            isnan(kvb_t_detectable(1, 5, 0.05, 1)),
        "stats.t_detectable.rejects", "df 0, se < 0, power 1 must give NaN");
}

static void test_quantile(void) {
  double v[] = {3, 1, 2, 5, 4}, keep[5];
  memcpy(keep, v, sizeof v);
  /* sorted 1..5, h = q·4: q = .3 → h = 1.2 → 2 + .2·1 = 2.2. */
  CHECK(kvb_quantile(v, 5, 0.5) == 3 && close_rel(kvb_quantile(v, 5, 0.3), 2.2, 1e-12) &&
            kvb_quantile(v, 5, 0) == 1 && kvb_quantile(v, 5, 1) == 5 &&
            close_rel(kvb_quantile(v, 5, 0.9), 4.6, 1e-12),
        "stats.quantile.gsl_convention", "%g %g", kvb_quantile(v, 5, 0.5), kvb_quantile(v, 5, 0.3));
  CHECK(memcmp(v, keep, sizeof v) == 0, "stats.quantile.data_unchanged", "input reordered");
  double one = 7;
  CHECK(kvb_quantile(&one, 1, 0.37) == 7 && isnan(kvb_quantile(v, 0, 0.5)) &&
            isnan(kvb_quantile(v, 5, 1.5)),
        "stats.quantile.edges", "n = 1, n = 0, q > 1");
}

static void test_welch(void) {
  /* a = 1..5: mean 3, s² = 2.5, s²/n = 0.5. b = 2,4,..,16: mean 9, s² = 168/7 = 24, s²/n = 3.
   * t = -6/√3.5; ν = 3.5² / (0.5²/4 + 3²/7) = 85.75/9.4375. */
  double a[] = {1, 2, 3, 4, 5}, b[] = {2, 4, 6, 8, 10, 12, 14, 16}, t;
  double tw = -6 / sqrt(3.5), nu = 85.75 / 9.4375;
  double p = kvb_welch_t(a, 5, b, 8, &t);
  CHECK(close_rel(t, tw, 1e-12) && close_rel(p, 2 * gsl_cdf_tdist_P(tw, nu), 1e-10),
        "stats.welch.textbook", "t %.10g (want %.10g) p %.10g (want %.10g, nu %.6f)", t, tw, p,
        2 * gsl_cdf_tdist_P(tw, nu), nu);
  /* The df matters: the pooled df 11 would give a visibly smaller p. */
  CHECK(p > 2 * gsl_cdf_tdist_P(tw, 11) * 1.1, "stats.welch.not_pooled_df", "p %g pooled %g", p,
        2 * gsl_cdf_tdist_P(tw, 11));
  double p2 = kvb_welch_t(b, 8, a, 5, &t);
  CHECK(close_rel(p, p2, 1e-14) && close_rel(t, -tw, 1e-12), "stats.welch.symmetric", "%g %g", p, p2);
  double c1[] = {1, 1, 1}, c2[] = {1, 1};
  CHECK(kvb_welch_t(c1, 3, c2, 2, &t) == 1 && t == 0 && isnan(kvb_welch_t(a, 1, b, 8, &t)),
        "stats.welch.edges", "no scatter equal means: p 1; na = 1: NaN");

  /* One-sided: H1 mean(a) < mean(b); p = P[T_ν <= t] = half the two-sided p here (t < 0). */
  double det, ts;
  double pl = kvb_welch_less(a, 5, b, 8, 1e-6, 0.9, &ts, &det);
  CHECK(close_rel(pl, gsl_cdf_tdist_P(tw, nu), 1e-10) && close_rel(pl, p / 2, 1e-10),
        "stats.welch_less.direction", "p %.10g want %.10g", pl, gsl_cdf_tdist_P(tw, nu));
  double pr = kvb_welch_less(b, 8, a, 5, 1e-6, 0.9, NULL, NULL);
  CHECK(close_rel(pr, 1 - pl, 1e-10) && pr > 0.99, "stats.welch_less.wrong_direction",
        "reversed p %.10g want %.10g", pr, 1 - pl);
  CHECK(close_rel(det, kvb_t_detectable(sqrt(3.5), 4, 1e-6, 0.9), 1e-12),
        "stats.welch_less.detectable", "detectable %g", det);
  double lo1[] = {0, 0}, hi1[] = {1, 1};
  CHECK(kvb_welch_less(lo1, 2, hi1, 2, 1e-6, 0.9, NULL, NULL) == 0 &&
            kvb_welch_less(hi1, 2, lo1, 2, 1e-6, 0.9, NULL, NULL) == 1 &&
            isnan(kvb_welch_less(a, 5, b, 1, 1e-6, 0.9, NULL, NULL)),
        "stats.welch_less.edges", "no scatter: sign decides; nb = 1 NaN");
}

static double kolmogorov_stephens(double d, size_t n) {
  double l = (sqrt((double)n) + 0.12 + 0.11 / sqrt((double)n)) * d, q = 0;
  for (int k = 1; k < 100; k++) q += 2 * ((k & 1) ? 1 : -1) * exp(-2.0 * k * k * l * l);
  return q;
}

static void test_ks(void) {
  /* n = 1: D = max(u, 1-u), P[D >= d] = 2 - 2d. */
  double u = 0.3, D;
  double p = kvb_ks_uniform(&u, 1, &D);
  CHECK(close_rel(D, 0.7, 1e-15) && close_rel(p, 0.6, 1e-12), "stats.ks.n1", "D %g p %.15g", D, p);
  /* Hand D: {0.9, 0.1, 0.5}: D+ = 1/3 - 0.1, D- = 0.9 - 2/3, both 7/30. Low end of the
   * Kolmogorov law, d in [1/(2n), 1/n]: P[D < d] = n!(2d - 1/n)^n = 6·(4/30)³. */
  double s3[] = {0.9, 0.1, 0.5}, k3[3];
  memcpy(k3, s3, sizeof s3);
  p = kvb_ks_uniform(s3, 3, &D);
  CHECK(close_rel(D, 7.0 / 30, 1e-14) && close_rel(p, 1 - 6 * pow(4.0 / 30, 3), 1e-12) &&
            memcmp(s3, k3, sizeof s3) == 0,
        "stats.ks.hand", "D %.15g p %.15g want %.15g", D, p, 1 - 6 * pow(4.0 / 30, 3));
  /* High end, d >= 1 - 1/n: P[D >= d] = 2(1 - d)^n. */
  CHECK(close_rel(kvb_ks_pvalue(0.85, 5), 2 * pow(0.15, 5), 1e-10) &&
            close_rel(kvb_ks_pvalue(0.97, 40), 2 * pow(0.03, 40), 1e-10),
        "stats.ks.upper_end", "%g", kvb_ks_pvalue(0.85, 5));
  /* Tables (Miller 1956): critical values 0.40925 (n 10, 5%), 0.48893 (n 10, 1%),
   * 0.29408 (n 20, 5%). */
  CHECK(fabs(kvb_ks_pvalue(0.40925, 10) - 0.05) < 5e-5 &&
            fabs(kvb_ks_pvalue(0.48893, 10) - 0.01) < 1e-5 &&
            fabs(kvb_ks_pvalue(0.29408, 20) - 0.05) < 5e-5,
        "stats.ks.tables", "%.6g %.6g %.6g", kvb_ks_pvalue(0.40925, 10),
        kvb_ks_pvalue(0.48893, 10), kvb_ks_pvalue(0.29408, 20));
  /* Large n: Kolmogorov's limit with Stephens' correction agrees within a few percent, in the
   * bulk (exact matrix) and in the tail (the one-sided formula doubled). */
  double worst = 0;
  for (size_t n = 100; n <= 10000; n *= 10)
    for (double l = 1.0; l <= 2.51; l += 0.5) {
      double d = l / sqrt((double)n), a = kvb_ks_pvalue(d, n), b = kolmogorov_stephens(d, n);
      worst = fmax(worst, fabs(a - b) / b);
    }
  CHECK(worst < 0.04, "stats.ks.asymptotic", "worst relative gap to Stephens %.3g", worst);
  /* Monotone and continuous across the switch from the matrix to the doubled one-sided tail
   * (near p = 1e-3, d ≈ 0.06 at n = 1000): second differences of log p on a 1e-4 grid are
   * ~4n·h² = 4e-5 for the smooth law; a jump at the switch would show as its relative size. */
  int mono = 1;
  double l0 = log(kvb_ks_pvalue(0.03, 1000)), l1 = log(kvb_ks_pvalue(0.0301, 1000)), curv = 0;
  for (double d = 0.0302; d < 0.15; d += 1e-4) {
    double l2 = log(kvb_ks_pvalue(d, 1000));
    mono &= l2 <= l1;
    curv = fmax(curv, fabs(l2 - 2 * l1 + l0));
    l0 = l1, l1 = l2;
  }
  CHECK(mono && curv < 1e-3, "stats.ks.continuous", "monotone %d, largest second difference of "
        "log p %.3g", mono, curv);
  double bad[] = {0.2, 1.5};
  CHECK(isnan(kvb_ks_uniform(bad, 2, NULL)) && isnan(kvb_ks_uniform(bad, 0, NULL)),
        "stats.ks.rejects", "value outside [0,1] or n = 0 must give NaN");
  /* Power: at sup-distance Δ = kvb_ks_detectable the test (α = 1e-6, n = 200) rejects in >= 90%
   * of samples of (1-Δ)U, whose cdf is Δ from the uniform's at 1-Δ. */
  double crit, delta = kvb_ks_detectable(200, 1e-6, 0.9, &crit);
  CHECK(fabs(kvb_ks_pvalue(crit, 200) - 1e-6) < 1e-8, "stats.ks.critical", "crit %g p %g", crit,
        kvb_ks_pvalue(crit, 200));
  gsl_rng *r = kvb_rng_alloc_substream(2026, 5);
  unsigned rej = 0, S = 300;
  double x[200];
  for (unsigned s = 0; s < S; s++) {
    for (int i = 0; i < 200; i++) x[i] = (1 - delta) * gsl_rng_uniform(r);
    rej += kvb_ks_uniform(x, 200, NULL) < 1e-6;
  }
  gsl_rng_free(r);
  CHECK(rej >= 0.9 * S, "stats.ks.power", "Δ %.4f (crit %.4f): %u/%u rejected", delta, crit, rej, S);
}

/* kvb_slope_less: equal standard errors and df give df_a + df_b and t = (a − b)/(se·√2); the
 * t cdf at that point is the one GSL gives for the pooled-variance two-sample statistic;
 * swapping the slopes gives 1 − p; nonsense is NaN. */
static void test_slope_less(void) {
  double t, det;
  double p = kvb_slope_less(-1.0, 0.1, 10, -0.5, 0.1, 10, 1e-6, 0.9, &t, &det);
  double want_t = -0.5 / (0.1 * sqrt(2.0));
  CHECK(fabs(t - want_t) < 1e-12 && fabs(p - gsl_cdf_tdist_P(want_t, 20.0)) < 1e-15,
        "stats.slope_less.equal_se", "t %.15g (want %.15g), p %.6g", t, want_t, p);
  double q = kvb_slope_less(-0.5, 0.1, 10, -1.0, 0.1, 10, 1e-6, 0.9, NULL, NULL);
  CHECK(fabs(p + q - 1) < 1e-12, "stats.slope_less.direction", "p %.6g + q %.6g", p, q);
  CHECK(fabs(det - kvb_t_detectable(0.1 * sqrt(2.0), 20.0, 1e-6, 0.9)) < 1e-12,
        "stats.slope_less.detectable", "det %.6g", det);
  CHECK(isnan(kvb_slope_less(0, 0, 1, 0, 1, 1, 1e-6, 0.9, NULL, NULL)) &&
            isnan(kvb_slope_less(0, 1, 0, 0, 1, 1, 1e-6, 0.9, NULL, NULL)),
        "stats.slope_less.nonsense", "se 0 or df 0 must give NaN");
}

int main(void) {
  test_slope_less();
  test_binom_tail();
  test_clopper_pearson();
  test_upper_bound();
  test_detectable_rate();
  test_chisq_gof();
  test_chisq_indep();
  test_linear_fit();
  test_t_detectable();
  test_quantile();
  test_welch();
  test_ks();
  UNIT_EXIT();
}

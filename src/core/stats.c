/* stats.c — hypothesis tests and intervals on top of GSL's cdfs (see stats.h). */
#include "stats.h"
#include "gsl_quiet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

double kvb_binom_tail_ge(unsigned k, double p, unsigned n) {
  if (k == 0) return 1.0;
  if (k > n) return 0.0;
  kvb_gsl_quiet();
  return gsl_cdf_binomial_Q(k - 1, p, n); /* Q(k-1) = P[X > k-1] */
}

void kvb_clopper_pearson(unsigned k, unsigned n, double conf, double *lo, double *hi) {
  kvb_gsl_quiet();
  double a = (1 - conf) / 2;
  *lo = (k == 0) ? 0.0 : gsl_cdf_beta_Pinv(a, k, n - k + 1);
  *hi = (k == n) ? 1.0 : gsl_cdf_beta_Qinv(a, k + 1, n - k);
}

double kvb_binom_detectable_rate(unsigned n, double p0, double alpha, double power,
                                 unsigned *critical) {
  /* The tail is decreasing in F: bisect for the smallest F with tail < alpha. */
  unsigned lo = 0, hi = n + 1;
  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    if (kvb_binom_tail_ge(mid, p0, n) < alpha) hi = mid;
    else lo = mid + 1;
  }
  if (critical) *critical = lo;
  if (lo > n) return 1.0;
  /* P[Bin(n, p) >= lo] is increasing in p. */
  double a = p0, b = 1.0;
  if (kvb_binom_tail_ge(lo, a, n) >= power) return a;
  while (b - a > 1e-12) {
    double mid = 0.5 * (a + b);
    if (kvb_binom_tail_ge(lo, mid, n) >= power) b = mid;
    else a = mid;
  }
  return b;
}

double kvb_binom_upper_bound(unsigned k, unsigned n, double alpha) {
  kvb_gsl_quiet();
  return (k == n) ? 1.0 : gsl_cdf_beta_Qinv(alpha, k + 1, n - k);
}

typedef struct {
  double o, e;
} cell;

static int by_expected(const void *a, const void *b) {
  double x = ((const cell *)a)->e, y = ((const cell *)b)->e;
  return (x > y) - (x < y);
}

double kvb_chisq_gof(const double *observed, const double *expected, size_t k, double *stat,
                     size_t *df) {
  kvb_gsl_quiet();
  cell *c = malloc((k ? k : 1) * sizeof *c);
  size_t m = 0;
  for (size_t i = 0; i < k; i++) {
    if (expected[i] <= 0 && observed[i] <= 0) continue;
    c[m].o = observed[i];
    c[m].e = expected[i];
    m++;
  }
  /* Merge the smallest-expected cell into the next smallest until all are >= 5. */
  qsort(c, m, sizeof *c, by_expected);
  size_t start = 0;
  while (m - start >= 2 && c[start].e < 5) {
    c[start + 1].o += c[start].o;
    c[start + 1].e += c[start].e;
    start++;
    /* keep the merged cell in sorted position */
    for (size_t j = start; j + 1 < m && c[j].e > c[j + 1].e; j++) {
      cell t = c[j];
      c[j] = c[j + 1];
      c[j + 1] = t;
    }
  }
  size_t cells = m - start;
  double x2 = 0;
  for (size_t i = start; i < m; i++) {
    double d = c[i].o - c[i].e;
    x2 += d * d / c[i].e;
  }
  free(c);
  if (stat) *stat = x2;
  if (cells < 2) {
    if (df) *df = 0;
    return 1.0;
  }
  if (df) *df = cells - 1;
  return gsl_cdf_chisq_Q(x2, (double)(cells - 1));
}

double kvb_chisq_independence(const double *table, size_t r, size_t c, double *stat, size_t *df) {
  kvb_gsl_quiet();
  int *keep_r = calloc(r ? r : 1, sizeof *keep_r), *keep_c = calloc(c ? c : 1, sizeof *keep_c);
  double *rs = calloc(r ? r : 1, sizeof *rs), *cs = calloc(c ? c : 1, sizeof *cs);
  for (size_t i = 0; i < r; i++) keep_r[i] = 1;
  for (size_t j = 0; j < c; j++) keep_c[j] = 1;
  /* Drop the sparsest row or column until every expected count is >= 5. Dropping conditions
   * on the kept cells, which keeps the test valid (it only loses power). */
  double x2 = 0;
  size_t kr = 0, kc = 0;
  for (;;) {
    double tot = 0;
    memset(rs, 0, r * sizeof *rs);
    memset(cs, 0, c * sizeof *cs);
    for (size_t i = 0; i < r; i++)
      for (size_t j = 0; j < c; j++)
        if (keep_r[i] && keep_c[j]) {
          rs[i] += table[i * c + j];
          cs[j] += table[i * c + j];
          tot += table[i * c + j];
        }
    double wr = INFINITY, wc = INFINITY;
    size_t ir = 0, jc = 0;
    kr = kc = 0;
    for (size_t i = 0; i < r; i++)
      if (keep_r[i]) {
        kr++;
        if (rs[i] < wr) wr = rs[i], ir = i;
      }
    for (size_t j = 0; j < c; j++)
      if (keep_c[j]) {
        kc++;
        if (cs[j] < wc) wc = cs[j], jc = j;
      }
    if (kr < 2 || kc < 2 || tot <= 0) break;
    if (wr * wc / tot >= 5) {
      for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++)
          if (keep_r[i] && keep_c[j]) {
            double e = rs[i] * cs[j] / tot, d = table[i * c + j] - e;
            x2 += d * d / e;
          }
      break;
    }
    if (wr <= wc) keep_r[ir] = 0;
    else keep_c[jc] = 0;
  }
  free(keep_r);
  free(keep_c);
  free(rs);
  free(cs);
  if (stat) *stat = x2;
  if (kr < 2 || kc < 2) {
    if (df) *df = 0;
    return 1.0;
  }
  size_t dof = (kr - 1) * (kc - 1);
  if (df) *df = dof;
  return gsl_cdf_chisq_Q(x2, (double)dof);
}

int kvb_linear_fit(size_t n, const double *x, const double *y, double conf, double *slope,
                   double *slope_lo, double *slope_hi, double *intercept) {
  if (n < 3) return -1;
  kvb_gsl_quiet();
  double c0, c1, cov00, cov01, cov11, sumsq;
  gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
  double tq = gsl_cdf_tdist_Pinv(1 - (1 - conf) / 2, (double)(n - 2));
  double se = sqrt(cov11);
  if (slope) *slope = c1;
  if (slope_lo) *slope_lo = c1 - tq * se;
  if (slope_hi) *slope_hi = c1 + tq * se;
  if (intercept) *intercept = c0;
  return 0;
}

int kvb_linear_fit_se(size_t n, const double *x, const double *y, double *slope, double *se,
                      double *df) {
  if (n < 3) return -1;
  kvb_gsl_quiet();
  double c0, c1, cov00, cov01, cov11, sumsq;
  gsl_fit_linear(x, 1, y, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
  if (slope) *slope = c1;
  if (se) *se = sqrt(cov11);
  if (df) *df = (double)(n - 2);
  return 0;
}

double kvb_t_detectable(double se, double df, double alpha, double power) {
  kvb_gsl_quiet();
  return (gsl_cdf_tdist_Qinv(alpha, df) + gsl_cdf_tdist_Pinv(power, df)) * se;
}

double kvb_quantile(const double *data, size_t n, double q) {
  if (n == 0) return NAN;
  double *s = malloc(n * sizeof *s);
  if (!s) return NAN;
  memcpy(s, data, n * sizeof *s);
  gsl_sort(s, 1, n);
  double v = gsl_stats_quantile_from_sorted_data(s, 1, n, q);
  free(s);
  return v;
}

double kvb_welch_t(const double *a, size_t na, const double *b, size_t nb, double *t_stat) {
  kvb_gsl_quiet();
  double ma = gsl_stats_mean(a, 1, na), mb = gsl_stats_mean(b, 1, nb);
  double va = na > 1 ? gsl_stats_variance_m(a, 1, na, ma) : 0;
  double vb = nb > 1 ? gsl_stats_variance_m(b, 1, nb, mb) : 0;
  double se2 = va / na + vb / nb;
  if (se2 <= 0) {
    if (t_stat) *t_stat = (ma == mb) ? 0 : INFINITY;
    return ma == mb ? 1.0 : 0.0;
  }
  double t = (ma - mb) / sqrt(se2);
  double nu = se2 * se2 /
              ((va / na) * (va / na) / (double)(na - 1) + (vb / nb) * (vb / nb) / (double)(nb - 1));
  if (t_stat) *t_stat = t;
  return 2 * gsl_cdf_tdist_Q(fabs(t), nu);
}

double kvb_welch_less(const double *a, size_t na, const double *b, size_t nb, double alpha,
                      double power, double *t_stat, double *detectable) {
  kvb_gsl_quiet();
  double ma = gsl_stats_mean(a, 1, na), mb = gsl_stats_mean(b, 1, nb);
  double va = na > 1 ? gsl_stats_variance_m(a, 1, na, ma) : 0;
  double vb = nb > 1 ? gsl_stats_variance_m(b, 1, nb, mb) : 0;
  double se2 = va / na + vb / nb;
  if (!(se2 > 0)) { /* no scatter: the sign decides */
    if (t_stat) *t_stat = (ma < mb) ? -INFINITY : (ma > mb ? INFINITY : 0);
    if (detectable) *detectable = 0;
    return ma < mb ? 0.0 : 1.0;
  }
  double se = sqrt(se2), t = (ma - mb) / se;
  double nu = se2 * se2 /
              ((va / na) * (va / na) / (double)(na - 1) + (vb / nb) * (vb / nb) / (double)(nb - 1));
  if (t_stat) *t_stat = t;
  if (detectable) *detectable = kvb_t_detectable(se, nu, alpha, power);
  return gsl_cdf_tdist_P(t, nu); /* P[T <= t] under H0 at the boundary mean(a) = mean(b) */
}

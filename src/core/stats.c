/* stats.c — hypothesis tests and intervals on top of GSL's cdfs (see stats.h).
 *
 * Invalid input (a probability outside [0, 1], k > n, fewer observations than a test needs,
 * negative counts) gives NaN, or -1 for the functions that return a status, and leaves the
 * outputs untouched: a NaN p-value fails every `p >= alpha` comparison, so a caller that
 * passes nonsense sees a failed assertion, never a silent pass. */
#include "stats.h"
#include "gsl_quiet.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

static int is_prob(double p) { return p >= 0.0 && p <= 1.0; } /* false for NaN */
static int is_open_prob(double p) { return p > 0.0 && p < 1.0; }

static double kvb_binom_tail_ge_unguarded(unsigned k, double p, unsigned n) {
  if (!is_prob(p)) return NAN;
  if (k == 0) return 1.0;
  if (k > n) return 0.0;
  return gsl_cdf_binomial_Q(k - 1, p, n); /* Q(k-1) = P[X > k-1] = P[X >= k] */
}

/* The x in [0, 1] where the Beta(a, b) lower tail P (upper = 0) or upper tail Q (upper = 1)
 * equals `tail`. GSL's gsl_cdf_beta_Pinv/Qinv are tried first and kept when their residual
 * is small; they fail (NaN) for some large parameters — e.g. Qinv(0.025; 515, 4486), the
 * Clopper–Pearson bound of 514/5000 — and then the monotone tail is bisected (GSL's
 * forward cdfs are accurate there). */
static double beta_inv(double tail, double a, double b, int upper) {
  double x = upper ? gsl_cdf_beta_Qinv(tail, a, b) : gsl_cdf_beta_Pinv(tail, a, b);
  if (x >= 0 && x <= 1) {
    double f = upper ? gsl_cdf_beta_Q(x, a, b) : gsl_cdf_beta_P(x, a, b);
    if (fabs(f - tail) <= 1e-9 * tail) return x;
  }
  double lo = 0, hi = 1; /* P increases in x, Q decreases */
  for (int i = 0; i < 2000 && hi - lo > 4 * DBL_EPSILON * hi; i++) {
    double mid = 0.5 * (lo + hi);
    double f = upper ? gsl_cdf_beta_Q(mid, a, b) : gsl_cdf_beta_P(mid, a, b);
    if (upper ? f > tail : f < tail) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

static void kvb_clopper_pearson_unguarded(unsigned k, unsigned n, double conf, double *lo, double *hi) {
  if (k > n || !is_open_prob(conf)) {
    *lo = *hi = NAN;
    return;
  }
  double a = (1 - conf) / 2;
  /* lo solves P[Bin(n, lo) >= k] = a, i.e. the a-quantile of Beta(k, n-k+1); hi solves
   * P[Bin(n, hi) <= k] = a, the (1-a)-quantile of Beta(k+1, n-k). */
  *lo = (k == 0) ? 0.0 : beta_inv(a, k, n - k + 1, 0);
  *hi = (k == n) ? 1.0 : beta_inv(a, k + 1, n - k, 1);
}

static double kvb_binom_detectable_rate_unguarded(unsigned n, double p0, double alpha, double power,
                                 unsigned *critical) {
  if (!is_prob(p0) || !(alpha > 0 && alpha <= 1) || !is_open_prob(power)) {
    if (critical) *critical = n + 1;
    return NAN;
  }
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

static double kvb_binom_upper_bound_unguarded(unsigned k, unsigned n, double alpha) {
  if (k > n || !is_open_prob(alpha)) return NAN;
  /* P[Bin(n, p) <= k] = P[Beta(k+1, n-k) > p]: it equals alpha at the (1-alpha)-quantile. */
  return (k == n) ? 1.0 : beta_inv(alpha, k + 1, n - k, 1);
}

typedef struct {
  double o, e;
} cell;

static int by_expected(const void *a, const void *b) {
  double x = ((const cell *)a)->e, y = ((const cell *)b)->e;
  return (x > y) - (x < y);
}

static double kvb_chisq_gof_unguarded(const double *observed, const double *expected, size_t k, double *stat,
                     size_t *df) {
  double to = 0, te = 0;
  int impossible = 0;
  for (size_t i = 0; i < k; i++) {
    if (!(observed[i] >= 0 && expected[i] >= 0) || !isfinite(observed[i]) ||
        !isfinite(expected[i]))
      return NAN;
    to += observed[i], te += expected[i];
    impossible |= expected[i] == 0 && observed[i] > 0;
  }
  /* The contract: the same total (the null is a fully specified multinomial). */
  if (fabs(to - te) > 1e-6 * (te > 1 ? te : 1)) return NAN;
  if (impossible) {
    /* An observation in a cell of expected count 0 cannot happen under the null: p = 0
     * exactly (merging it into a neighbour would hide a decisive counterexample). */
    if (stat) *stat = INFINITY;
    if (df) *df = k > 0 ? k - 1 : 0;
    return 0.0;
  }
  cell *c = malloc((k ? k : 1) * sizeof *c);
  if (!c) return NAN;
  size_t m = 0;
  for (size_t i = 0; i < k; i++) {
    if (expected[i] <= 0) continue; /* expected 0 and observed 0: no cell */
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

static double kvb_chisq_independence_unguarded(const double *table, size_t r, size_t c, double *stat, size_t *df) {
  for (size_t i = 0; i < r * c; i++)
    if (!(table[i] >= 0) || !isfinite(table[i])) return NAN;
  int *keep_r = calloc(r ? r : 1, sizeof *keep_r), *keep_c = calloc(c ? c : 1, sizeof *keep_c);
  double *rs = calloc(r ? r : 1, sizeof *rs), *cs = calloc(c ? c : 1, sizeof *cs);
  if (!keep_r || !keep_c || !rs || !cs) {
    free(keep_r), free(keep_c), free(rs), free(cs);
    return NAN;
  }
  for (size_t i = 0; i < r; i++) keep_r[i] = 1;
  for (size_t j = 0; j < c; j++) keep_c[j] = 1;
  /* Drop the sparsest row or column until every expected count is >= 5. Under independence
   * the kept rows (columns) are still independent of the columns (rows), so the test on the
   * kept subtable stays valid (it only loses power). */
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
    if (kr < 2 || kc < 2) break;
    /* The smallest expected count is (smallest row sum)(smallest column sum)/total. */
    if (tot > 0 && wr * wc / tot >= 5) {
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

/* Least squares with the residual-scatter standard error of the slope,
 * se² = Σ(y - a - b·x)² / ((n - 2)·Σ(x - x̄)²) (gsl_fit_linear's cov11). -1 when the slope is
 * undefined (n < 3, every x equal, a non-finite value). */
static int fit(size_t n, const double *x, const double *y, double *a, double *b, double *se) {
  if (n < 3) return -1;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]) || !isfinite(y[i])) return -1;
  int spread = 0;
  for (size_t i = 1; i < n; i++) spread |= x[i] != x[0];
  if (!spread) return -1;
  double cov00, cov01, cov11, sumsq;
  gsl_fit_linear(x, 1, y, 1, n, a, b, &cov00, &cov01, &cov11, &sumsq);
  *se = sqrt(cov11);
  return 0;
}

static int kvb_linear_fit_unguarded(size_t n, const double *x, const double *y, double conf, double *slope,
                   double *slope_lo, double *slope_hi, double *intercept) {
  double c0, c1, se;
  if (!is_open_prob(conf) || fit(n, x, y, &c0, &c1, &se)) return -1;
  double tq = gsl_cdf_tdist_Pinv(1 - (1 - conf) / 2, (double)(n - 2));
  if (slope) *slope = c1;
  if (slope_lo) *slope_lo = c1 - tq * se;
  if (slope_hi) *slope_hi = c1 + tq * se;
  if (intercept) *intercept = c0;
  return 0;
}

static int kvb_linear_fit_se_unguarded(size_t n, const double *x, const double *y, double *slope, double *se,
                      double *df) {
  double c0, c1, s;
  if (fit(n, x, y, &c0, &c1, &s)) return -1;
  if (slope) *slope = c1;
  if (se) *se = s;
  if (df) *df = (double)(n - 2);
  return 0;
}

/* Power of the one-sided t test "reject when T > c", c = t_{1-alpha,df}, when the true effect
 * is δ standard errors: T = (Z + δ)/√Y with Z ~ N(0,1) and Y ~ χ²_df/df = Gamma(k, 1/k),
 * k = df/2, independent, so power(δ) = E[Φ(δ - c√Y)] (the noncentral t tail). The expectation
 * is integrated over z = (Y - 1)/σ, σ = √(2/df) (Y's standard deviation), on [-1/σ, 40] (the
 * mass beyond 40σ is below 1e-15 for every df), with the Gamma log-density written through
 * Γ*(k) = Γ(k)/(√(2π) k^{k-1/2} e^{-k}) so that nothing cancels at large df:
 *   log f(y) = ½ log(k/2π) - log Γ*(k) + k(log y - (y - 1)) - log y. */
typedef struct {
  double c, k, sigma, delta, lgs;
} nct_args;

static double nct_integrand(double z, void *v) {
  const nct_args *a = v;
  double ym1 = a->sigma * z, y = 1 + ym1;
  if (y <= 0) return 0;
  double lf = 0.5 * log(a->k / 6.283185307179586476925) - a->lgs + a->k * (log1p(ym1) - ym1) - log1p(ym1);
  return gsl_cdf_ugaussian_P(a->delta - a->c * sqrt(y)) * exp(lf) * a->sigma;
}

static double nct_power(double c, double df, double delta) {
  nct_args a = {c, df / 2, sqrt(2 / df), delta, log(gsl_sf_gammastar(df / 2))};
  gsl_function f = {nct_integrand, &a};
  gsl_integration_workspace *w = gsl_integration_workspace_alloc(512);
  if (!w) return NAN;
  double r = NAN, err;
  gsl_integration_qags(&f, -1 / a.sigma, 40, 1e-14, 1e-11, 512, w, &r, &err);
  gsl_integration_workspace_free(w);
  return r;
}

static double kvb_t_detectable_unguarded(double se, double df, double alpha, double power) {
  if (!(se >= 0) || !(df > 0) || !is_open_prob(alpha) || !is_open_prob(power)) return NAN;
  double c = gsl_cdf_tdist_Qinv(alpha, df);
  /* Bracket δ: the shifted-central value (t_{1-alpha} + t_{power}) is the usual first guess;
   * the noncentral t is wider than the central one, so the answer lies above it. */
  double lo = 0, hi = c + gsl_cdf_tdist_Pinv(power, df);
  if (!(hi > 0)) hi = 1;
  for (int i = 0; i < 200 && nct_power(c, df, hi) < power; i++) lo = hi, hi *= 2;
  for (int i = 0; i < 100 && hi - lo > 1e-10 * hi; i++) {
    double mid = 0.5 * (lo + hi);
    if (nct_power(c, df, mid) >= power) hi = mid;
    else lo = mid;
  }
  return hi * se;
}

static double kvb_quantile_unguarded(const double *data, size_t n, double q) {
  if (n == 0 || !is_prob(q)) return NAN;
  double *s = malloc(n * sizeof *s);
  if (!s) return NAN;
  memcpy(s, data, n * sizeof *s);
  gsl_sort(s, 1, n);
  double v = gsl_stats_quantile_from_sorted_data(s, 1, n, q);
  free(s);
  return v;
}

/* Means, the squared standard error of the difference and the Welch–Satterthwaite df
 * ν = (va/na + vb/nb)² / ((va/na)²/(na-1) + (vb/nb)²/(nb-1)). */
static void welch(const double *a, size_t na, const double *b, size_t nb, double *ma, double *mb,
                  double *se2, double *nu) {
  *ma = gsl_stats_mean(a, 1, na);
  *mb = gsl_stats_mean(b, 1, nb);
  double va = gsl_stats_variance_m(a, 1, na, *ma) / (double)na;
  double vb = gsl_stats_variance_m(b, 1, nb, *mb) / (double)nb;
  *se2 = va + vb;
  *nu = *se2 * *se2 / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
}

static double kvb_welch_t_unguarded(const double *a, size_t na, const double *b, size_t nb, double *t_stat) {
  if (na < 2 || nb < 2) {
    if (t_stat) *t_stat = NAN;
    return NAN;
  }
  double ma, mb, se2, nu;
  welch(a, na, b, nb, &ma, &mb, &se2, &nu);
  if (!(se2 > 0)) {
    if (t_stat) *t_stat = (ma == mb) ? 0 : (ma > mb ? INFINITY : -INFINITY);
    return ma == mb ? 1.0 : 0.0;
  }
  double t = (ma - mb) / sqrt(se2);
  if (t_stat) *t_stat = t;
  return 2 * gsl_cdf_tdist_Q(fabs(t), nu);
}

static double kvb_welch_less_unguarded(const double *a, size_t na, const double *b, size_t nb, double alpha,
                      double power, double *t_stat, double *detectable) {
  if (na < 2 || nb < 2) {
    if (t_stat) *t_stat = NAN;
    if (detectable) *detectable = NAN;
    return NAN;
  }
  double ma, mb, se2, nu;
  welch(a, na, b, nb, &ma, &mb, &se2, &nu);
  if (!(se2 > 0)) { /* no scatter: the sign decides */
    if (t_stat) *t_stat = (ma < mb) ? -INFINITY : (ma > mb ? INFINITY : 0);
    if (detectable) *detectable = 0;
    return ma < mb ? 0.0 : 1.0;
  }
  double se = sqrt(se2), t = (ma - mb) / se;
  if (t_stat) *t_stat = t;
  /* The power statement uses df = min(na, nb) - 1, not ν: Welch's ν̂ is never below it, so
   * the test rejects at least when t passes t_{1-alpha, min-1}, and the noncentral t with the
   * smaller df is the more dispersed. With ν the stated power was not reached (simulated at
   * alpha = 1e-6: 30 vs 30 draws, sd 1 vs 2: 0.895; 10 vs 10: 0.837); with min - 1 it was
   * 0.955 and 0.990 (5 vs 40, sd 4 vs 1: 0.913; 100 vs 100: 0.911). */
  if (detectable) {
    size_t nmin = na < nb ? na : nb;
    *detectable = kvb_t_detectable(se, (double)(nmin - 1), alpha, power);
  }
  return gsl_cdf_tdist_P(t, nu); /* P[T <= t] under H0 at the boundary mean(a) = mean(b) */
}

/* ---- Kolmogorov–Smirnov against U(0, 1) ---- */

/* P[D+_n >= d], the one-sided Smirnov tail, exactly (Birnbaum & Tingey 1951):
 *   d · Σ_{j=0}^{⌊n(1-d)⌋} C(n, j) (1 - d - j/n)^(n-j) (d + j/n)^(j-1),
 * every term positive (no cancellation), summed from logarithms. */
static double smirnov_tail(double d, size_t n) {
  if (d <= 0) return 1.0;
  if (d >= 1) return 0.0;
  double s = 0, nn = (double)n, lgn = lgamma(nn + 1);
  size_t jmax = (size_t)floor(nn * (1 - d));
  for (size_t j = 0; j <= jmax && j < n; j++) {
    double base = 1 - d - (double)j / nn;
    if (base <= 0) break;
    double lt = lgn - lgamma((double)j + 1) - lgamma(nn - (double)j + 1) +
                (nn - (double)j) * log(base) + ((double)j - 1) * log(d + (double)j / nn);
    s += exp(lt);
  }
  return d * s;
}

/* P[D_n < d] by Durbin's matrix formula (Durbin 1973, in the form of Marsaglia, Tsang & Wang
 * 2003, J. Stat. Softw. 8(18)): with k = ⌊nd⌋ + 1, m = 2k - 1, h = k - nd, the m×m matrix
 * H_ij = 1/(i-j+1)! (0 when i-j+1 < 0) with first column and last row corrected by the terms
 * in h, P[D_n < d] = n!/nⁿ · (Hⁿ)_{k-1,k-1}. Hⁿ by repeated squaring; magnitudes are kept in
 * range by scaling with powers of 2 tracked in separate exponents. */
static void matmul(const double *A, const double *B, double *C, size_t m) {
  memset(C, 0, m * m * sizeof *C);
  for (size_t i = 0; i < m; i++)
    for (size_t l = 0; l < m; l++) {
      double a = A[i * m + l];
      if (a == 0) continue; /* H is lower Hessenberg: many zeros in early powers */
      for (size_t j = 0; j < m; j++) C[i * m + j] += a * B[l * m + j];
    }
}

static void rescale(double *A, size_t m, long *e) {
  double mx = 0;
  for (size_t i = 0; i < m * m; i++) mx = fmax(mx, fabs(A[i]));
  if (mx > 0x1p300 || (mx > 0 && mx < 0x1p-300)) {
    int ex;
    frexp(mx, &ex);
    for (size_t i = 0; i < m * m; i++) A[i] = ldexp(A[i], -ex);
    *e += ex;
  }
}

/* 1/g! (0 beyond 170!, where it is below the smallest normal double). */
static double inv_fact(double g) {
  if (g > 170) return 0.0;
  double f = 1;
  for (double i = 2; i <= g; i++) f *= i;
  return 1 / f;
}

static double durbin_cdf(double d, size_t n) {
  double nd = (double)n * d;
  size_t k = (size_t)floor(nd) + 1, m = 2 * k - 1;
  double h = (double)k - nd;
  double *H = malloc(m * m * sizeof *H), *R = malloc(m * m * sizeof *R),
         *T = malloc(m * m * sizeof *T);
  if (!H || !R || !T) {
    free(H), free(R), free(T);
    return NAN;
  }
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < m; j++) {
      long g = (long)i - (long)j + 1;
      H[i * m + j] = g < 0 ? 0.0 : inv_fact((double)g);
    }
  for (size_t i = 0; i < m; i++) {
    H[i * m + 0] -= pow(h, (double)(i + 1)) * inv_fact((double)(i + 1));
    H[(m - 1) * m + i] -= pow(h, (double)(m - i)) * inv_fact((double)(m - i));
  }
  H[(m - 1) * m + 0] += (2 * h - 1 > 0 ? pow(2 * h - 1, (double)m) : 0.0) * inv_fact((double)m);
  /* R = identity; H^n by squaring. */
  long eR = 0, eH = 0;
  for (size_t i = 0; i < m * m; i++) R[i] = 0;
  for (size_t i = 0; i < m; i++) R[i * m + i] = 1;
  for (size_t p = n; p; p >>= 1) {
    if (p & 1) {
      matmul(R, H, T, m);
      memcpy(R, T, m * m * sizeof *R);
      eR += eH;
      rescale(R, m, &eR);
    }
    if (p > 1) {
      matmul(H, H, T, m);
      memcpy(H, T, m * m * sizeof *H);
      eH *= 2;
      rescale(H, m, &eH);
    }
  }
  double s = R[(k - 1) * m + (k - 1)];
  free(H), free(R), free(T);
  /* times n!/nⁿ = Π_{i=1..n} i/n, rescaled on the way. */
  for (size_t i = 1; i <= n; i++) {
    s *= (double)i / (double)n;
    if (s != 0 && fabs(s) < 0x1p-300) {
      int ex;
      frexp(s, &ex);
      s = ldexp(s, -ex);
      eR += ex;
    }
  }
  return ldexp(s, (int)eR);
}

/* Durbin's matrix is used while it is small (k <= KS_EXACT_K, the bulk of the null
 * distribution for n up to ~10⁴); beyond that, or when the two-sided tail is tiny, the
 * p-value is 2·P[D+ >= d]: P[D >= d] = P[D+ >= d] + P[D- >= d] - P[both], D- has the law of
 * D+, and P[both] is of the order of the third power of the one-sided tail (in Kolmogorov's
 * limit the series' next term, 2e^{-8λ²} against 2e^{-2λ²}), and exactly 0 for d > 1/2. */
#define KS_EXACT_K 200
#define KS_TAIL_SWITCH 1e-3

static double kvb_ks_pvalue_unguarded(double d, size_t n) {
  if (n == 0 || !(d == d)) return NAN;
  if (d <= 0) return 1.0;
  if (d >= 1) return 0.0;
  double two_sided = 2 * smirnov_tail(d, n);
  if (d > 0.5 || two_sided < KS_TAIL_SWITCH) return fmin(1.0, two_sided);
  if ((double)n * d + 1 > KS_EXACT_K) return fmin(1.0, two_sided);
  double p = 1 - durbin_cdf(d, n);
  return p < 0 ? 0.0 : (p > 1 ? 1.0 : p);
}

static double kvb_ks_uniform_unguarded(const double *p, size_t n, double *D) {
  if (n == 0) return NAN;
  for (size_t i = 0; i < n; i++)
    if (!is_prob(p[i])) return NAN;
  double *s = malloc(n * sizeof *s);
  if (!s) return NAN;
  memcpy(s, p, n * sizeof *s);
  gsl_sort(s, 1, n);
  /* The empirical cdf jumps at each sorted value: D = max_i max(i/n - u_(i), u_(i) - (i-1)/n)
   * (i from 1). */
  double d = 0;
  for (size_t i = 0; i < n; i++) {
    double up = (double)(i + 1) / (double)n - s[i], dn = s[i] - (double)i / (double)n;
    d = fmax(d, fmax(up, dn));
  }
  free(s);
  if (D) *D = d;
  return kvb_ks_pvalue(d, n);
}

static double kvb_ks_detectable_unguarded(size_t n, double alpha, double power, double *critical) {
  if (n == 0 || !is_open_prob(alpha) || !is_open_prob(power)) {
    if (critical) *critical = NAN;
    return NAN;
  }
  /* The p-value decreases in d: bisect for the d where it crosses alpha. */
  double lo = 0, hi = 1;
  for (int it = 0; it < 60; it++) {
    double mid = 0.5 * (lo + hi);
    if (kvb_ks_pvalue(mid, n) < alpha) hi = mid;
    else lo = mid;
  }
  if (critical) *critical = hi;
  /* If the true cdf F is at sup-distance Δ from the uniform's at x0, D_n >= Δ - |F_n(x0) -
   * F(x0)|, and Hoeffding's inequality bounds P[|F_n(x0) - F(x0)| in the wrong direction >= ε]
   * by exp(-2nε²) = 1 - power. */
  return hi + sqrt(log(1 / (1 - power)) / (2 * (double)n));
}

/* The public entry points: each runs with GSL's abort-on-error handler off, restored after
 * (gsl_quiet.h). */
double kvb_binom_tail_ge(unsigned k, double p, unsigned n) {
  kvb_gsl_quiet_begin();
  double result = kvb_binom_tail_ge_unguarded(k, p, n);
  kvb_gsl_quiet_end();
  return result;
}

void kvb_clopper_pearson(unsigned k, unsigned n, double conf, double *lo, double *hi) {
  kvb_gsl_quiet_begin();
  kvb_clopper_pearson_unguarded(k, n, conf, lo, hi);
  kvb_gsl_quiet_end();
}

double kvb_binom_detectable_rate(unsigned n, double p0, double alpha, double power, unsigned *critical) {
  kvb_gsl_quiet_begin();
  double result = kvb_binom_detectable_rate_unguarded(n, p0, alpha, power, critical);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_binom_upper_bound(unsigned k, unsigned n, double alpha) {
  kvb_gsl_quiet_begin();
  double result = kvb_binom_upper_bound_unguarded(k, n, alpha);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_chisq_gof(const double *observed, const double *expected, size_t k, double *stat, size_t *df) {
  kvb_gsl_quiet_begin();
  double result = kvb_chisq_gof_unguarded(observed, expected, k, stat, df);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_chisq_independence(const double *table, size_t r, size_t c, double *stat, size_t *df) {
  kvb_gsl_quiet_begin();
  double result = kvb_chisq_independence_unguarded(table, r, c, stat, df);
  kvb_gsl_quiet_end();
  return result;
}

int kvb_linear_fit(size_t n, const double *x, const double *y, double conf, double *slope, double *slope_lo, double *slope_hi, double *intercept) {
  kvb_gsl_quiet_begin();
  int result = kvb_linear_fit_unguarded(n, x, y, conf, slope, slope_lo, slope_hi, intercept);
  kvb_gsl_quiet_end();
  return result;
}

int kvb_linear_fit_se(size_t n, const double *x, const double *y, double *slope, double *se, double *df) {
  kvb_gsl_quiet_begin();
  int result = kvb_linear_fit_se_unguarded(n, x, y, slope, se, df);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_t_detectable(double se, double df, double alpha, double power) {
  kvb_gsl_quiet_begin();
  double result = kvb_t_detectable_unguarded(se, df, alpha, power);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_quantile(const double *data, size_t n, double q) {
  kvb_gsl_quiet_begin();
  double result = kvb_quantile_unguarded(data, n, q);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_welch_t(const double *a, size_t na, const double *b, size_t nb, double *t_stat) {
  kvb_gsl_quiet_begin();
  double result = kvb_welch_t_unguarded(a, na, b, nb, t_stat);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_welch_less(const double *a, size_t na, const double *b, size_t nb, double alpha, double power, double *t_stat, double *detectable) {
  kvb_gsl_quiet_begin();
  double result = kvb_welch_less_unguarded(a, na, b, nb, alpha, power, t_stat, detectable);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_ks_pvalue(double d, size_t n) {
  kvb_gsl_quiet_begin();
  double result = kvb_ks_pvalue_unguarded(d, n);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_ks_uniform(const double *p, size_t n, double *D) {
  kvb_gsl_quiet_begin();
  double result = kvb_ks_uniform_unguarded(p, n, D);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_ks_detectable(size_t n, double alpha, double power, double *critical) {
  kvb_gsl_quiet_begin();
  double result = kvb_ks_detectable_unguarded(n, alpha, power, critical);
  kvb_gsl_quiet_end();
  return result;
}

double kvb_slope_less(double a, double se_a, double df_a, double b, double se_b, double df_b,
                      double alpha, double power, double *t_stat, double *detectable) {
  if (!(se_a > 0) || !(se_b > 0) || !(df_a > 0) || !(df_b > 0) || !isfinite(a) || !isfinite(b)) {
    if (t_stat) *t_stat = NAN;
    if (detectable) *detectable = NAN;
    return NAN;
  }
  double va = se_a * se_a, vb = se_b * se_b, se = sqrt(va + vb);
  double df = (va + vb) * (va + vb) / (va * va / df_a + vb * vb / df_b);
  double t = (a - b) / se;
  if (t_stat) *t_stat = t;
  if (detectable) *detectable = kvb_t_detectable(se, df, alpha, power);
  kvb_gsl_quiet_begin();
  double p = gsl_cdf_tdist_P(t, df);
  kvb_gsl_quiet_end();
  return p;
}

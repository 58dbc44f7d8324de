/* flip.c — predictive flip probabilities of one-sided tests (flip.h). */
#include "flip.h"
#include "stats.h"
#include "gsl_quiet.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_gamma.h>

#include <math.h>

/* Φ(−|s − c|/√2): the predictive chance that a replicate falls on the other side of c when the
 * statistic's scale has unit variance around its mean (flat prior on the mean). */
static double predictive(double s, double c) {
  if (!isfinite(s)) return 0;
  return gsl_cdf_ugaussian_P(-fabs(s - c) / sqrt(2.0));
}

double kvb_flip_normal(double p, double alpha) {
  if (!(alpha > 0 && alpha < 1) || isnan(p)) return NAN;
  if (p <= 0 || p >= 1) return 0;
  return predictive(gsl_cdf_ugaussian_Qinv(p), gsl_cdf_ugaussian_Qinv(alpha));
}

/* The noncentral t with df ν > 2 and noncentrality λ has mean c_ν·λ, c_ν = √(ν/2)·Γ((ν−1)/2)/Γ(ν/2),
 * and variance a + b·λ², a = ν/(ν−2), b = a − c_ν² (exact moments). As a function of its mean
 * μ the sd is √(a + (b/c_ν²)·μ²), which g(t) = (c_ν/√b)·asinh(t·√b/(c_ν·√a)) stabilizes to 1
 * (g'(t) = 1/sd at mean t). ν <= 2 (infinite variance) uses ν = 2.5's constants, which spread
 * the statistic less than it is spread, so the estimate there is low; no check's t test has
 * ν <= 2. */
static double t_stabilize(double t, double df) {
  double nu = df > 2.5 ? df : 2.5;
  double a = nu / (nu - 2), cn = sqrt(nu / 2) * exp(lgamma((nu - 1) / 2) - lgamma(nu / 2));
  double b = a - cn * cn;
  if (!(b > 0)) return t / sqrt(a); /* ν so large that c_ν² rounds to a: the normal case */
  return cn / sqrt(b) * asinh(t * sqrt(b) / (cn * sqrt(a)));
}

double kvb_flip_t(double p, double df, double alpha) {
  if (!(alpha > 0 && alpha < 1) || isnan(p) || !(df > 0)) return NAN;
  if (p <= 0 || p >= 1) return 0;
  if (isinf(df)) return kvb_flip_normal(p, alpha);
  kvb_gsl_quiet_begin();
  double t = gsl_cdf_tdist_Qinv(p, df), c = gsl_cdf_tdist_Qinv(alpha, df);
  kvb_gsl_quiet_end();
  if (isnan(t) || isnan(c)) return NAN;
  return predictive(t_stabilize(t, df), t_stabilize(c, df));
}

double kvb_flip_gate(double det, double effect, double df) {
  if (!(det > 0) || !(effect > 0) || !(df > 0) || isinf(det) || isinf(effect)) return NAN;
  if (isinf(df)) return 0;
  double r2 = (effect / det) * (effect / det);
  kvb_gsl_quiet_begin();
  double below = gsl_cdf_fdist_P(r2, df, df), above = gsl_cdf_fdist_Q(r2, df, df);
  kvb_gsl_quiet_end();
  return det <= effect ? above : below;
}

unsigned kvb_binom_crit(unsigned n, double p0, double alpha) {
  unsigned k = 0;
  while (k <= n && kvb_binom_tail_ge(k, p0, n) >= alpha) k++;
  return k;
}

double kvb_flip_binom(unsigned k, unsigned n, unsigned kcrit) {
  if (k > n) return NAN;
  if (kcrit > n) return 0;
  /* BetaBin(n, a, b) pmf: C(n, j)·B(j + a, n − j + b)/B(a, b), a = k + 1, b = n − k + 1 */
  double a = k + 1.0, b = (double)(n - k) + 1.0, lb = gsl_sf_lnbeta(a, b), ge = 0, lt = 0;
  for (unsigned j = 0; j <= n; j++) {
    double pj = exp(gsl_sf_lnchoose(n, j) + gsl_sf_lnbeta(j + a, (double)(n - j) + b) - lb);
    if (j >= kcrit) ge += pj;
    else lt += pj;
  }
  /* rejected now: the replicate flips when it falls below kcrit; else when it reaches it */
  double flip = k >= kcrit ? lt / (lt + ge) : ge / (lt + ge);
  return flip < 0 ? 0 : flip > 1 ? 1 : flip;
}

double kvb_flip_controls(int n, const int *passed, const double *flip) {
  if (n < 0) return NAN;
  double sum = 0, lo = INFINITY;
  int any = 0;
  for (int i = 0; i < n; i++) {
    if (isnan(flip[i]) || flip[i] < 0) return NAN;
    if (passed[i]) any = 1, lo = fmin(lo, flip[i]);
    else sum += flip[i];
  }
  return any ? fmin(1, lo) : fmin(1, sum);
}

/* P[Bin(n, θ) >= k] as the sum of its terms (positive: no cancellation), the pmf by the ratio
 * recurrence from j = k; for the quadrature below, where it runs thousands of times per call. */
static double tail_ge(unsigned k, double th, unsigned n) {
  if (k == 0) return 1;
  if (k > n || th <= 0) return 0;
  if (th >= 1) return 1;
  double lp = gsl_sf_lnchoose(n, k) + k * log(th) + (double)(n - k) * log1p(-th), t = exp(lp), s = t;
  for (unsigned j = k; j < n; j++) s += (t *= (double)(n - j) / (j + 1) * th / (1 - th));
  return s > 1 ? 1 : s;
}

double kvb_flip_exceed(const double *y, unsigned n, double c, unsigned kcrit) {
  if (n < 2 || isnan(c)) return NAN;
  if (kcrit > n) return 0;
  double m = 0, ss = 0;
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) {
    if (!isfinite(y[i])) return NAN;
    m += y[i];
    k += y[i] > c;
  }
  m /= n;
  for (unsigned i = 0; i < n; i++) ss += (y[i] - m) * (y[i] - m);
  double s = sqrt(ss / (n - 1));
  if (!(s > 0)) return NAN;
  enum { JS = 128, JM = 32 };
  double zq[JM], ge = 0;
  for (int i = 0; i < JM; i++) zq[i] = gsl_cdf_ugaussian_Pinv((i + 0.5) / JM);
  kvb_gsl_quiet_begin();
  for (int j = 0; j < JS; j++) {
    double x = gsl_cdf_chisq_Pinv((j + 0.5) / JS, (double)(n - 1));
    double sig = s * sqrt((double)(n - 1) / x);
    for (int i = 0; i < JM; i++) {
      double mu = m + sig / sqrt((double)n) * zq[i];
      ge += tail_ge(kcrit, gsl_cdf_ugaussian_P((mu - c) / sig), n);
    }
  }
  kvb_gsl_quiet_end();
  ge /= (double)JS * JM;
  double flip = k >= kcrit ? 1 - ge : ge;
  return flip < 0 ? 0 : flip > 1 ? 1 : flip;
}

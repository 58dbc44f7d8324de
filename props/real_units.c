/* real_units.c — power of unit-level tests and EWC standard errors (real_units.h). */
#include "real_units.h"
#include "kvbound.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include <math.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Smallest k ≤ N with P[Bin(N, ½) ≥ k] < alpha, or N + 1 when none. */
static unsigned sign_crit(unsigned N, double alpha) {
  unsigned k = 0;
  while (k <= N && kvb_binom_tail_ge(k, 0.5, N) >= alpha) k++;
  return k;
}

double ru_sign_power(unsigned N, double p1, double alpha) {
  unsigned k = sign_crit(N, alpha);
  return k > N ? 0.0 : kvb_binom_tail_ge(k, p1, N);
}

unsigned ru_sign_units_needed(double p1, double alpha, double power) {
  for (unsigned N = 1; N < 100000; N++)
    if (ru_sign_power(N, p1, alpha) >= power) return N;
  return 100000;
}

/* P[discordant-test rejects] for N tasks at one coupling (p10, p01), crit[k] for k ≤ N. */
static double mcnemar_at(unsigned N, double p10, double p01, const unsigned *crit) {
  double pd = p10 + p01, pw = 0;
  if (!(pd > 0)) return 0;
  for (unsigned k = 1; k <= N; k++)
    if (crit[k] <= k) pw += gsl_ran_binomial_pdf(k, pd, N) * kvb_binom_tail_ge(crit[k], p10 / pd, k);
  return pw;
}

static double mcnemar_max(unsigned N, double p1, double p2, const unsigned *crit, int grid) {
  double lo = fmax(0.0, p1 + p2 - 1), hi = fmin(p1, p2), best = 0;
  for (int g = 0; g <= grid; g++) {
    double p11 = lo + (hi - lo) * g / grid;
    best = fmax(best, mcnemar_at(N, p1 - p11, p2 - p11, crit));
  }
  return best;
}

/* crit[k] for k = 0..N (nondecreasing in k, so found incrementally). */
static unsigned *crit_table(unsigned N, double alpha) {
  unsigned *crit = malloc((N + 1) * sizeof *crit);
  if (!crit) return NULL;
  unsigned c = 0;
  for (unsigned k = 0; k <= N; k++) {
    while (c <= k && kvb_binom_tail_ge(c, 0.5, k) >= alpha) c++;
    crit[k] = c;
  }
  return crit;
}

double ru_mcnemar_power(unsigned N, double p1, double p2, double alpha) {
  unsigned *crit = crit_table(N, alpha);
  if (!crit) return NAN;
  double best = mcnemar_max(N, p1, p2, crit, 200);
  free(crit);
  return best;
}

unsigned ru_mcnemar_tasks_needed(double p1, double p2, double alpha, double power) {
  enum { NMAX = 2000 };
  unsigned *crit = crit_table(NMAX, alpha), N;
  if (!crit) return 0;
  for (N = 20; N < NMAX && mcnemar_max(N, p1, p2, crit, 20) < power; N += N < 100 ? 1 : 10) {}
  free(crit);
  return N;
}

double ru_t_power(double ncp, double df, double alpha) {
  if (!(df > 0)) return 0.0;
  double c = gsl_cdf_tdist_Qinv(alpha, df), s = 0;
  enum { NODES = 4000 };
  for (int i = 0; i < NODES; i++) {
    double v = gsl_cdf_chisq_Pinv((i + 0.5) / NODES, df);
    s += gsl_cdf_ugaussian_Q(c * sqrt(v / df) - ncp) / NODES;
  }
  return s;
}

unsigned ru_ewc_nu(size_t T) {
  double nu = floor(0.4 * pow((double)T, 2.0 / 3.0));
  return nu < 1 ? 1 : (unsigned)nu;
}

/* Ω̂ = (1/ν) Σ_{j=1..ν} Λ_j², Λ_j = √(2/T) Σ_t cos(πj(t − ½)/T) z_t: the long-run variance of
 * z (its mean is zero by construction for both uses below). */
static double ewc_lrv(const double *z, size_t T, unsigned nu) {
  double om = 0;
  for (unsigned j = 1; j <= nu; j++) {
    double L = 0;
    for (size_t t = 0; t < T; t++) L += cos(M_PI * j * ((double)t + 0.5) / (double)T) * z[t];
    L *= sqrt(2.0 / (double)T);
    om += L * L / nu;
  }
  return om;
}

unsigned ru_ewc_mean(const double *y, size_t T, double *mean, double *se) {
  if (T < 3) return 0;
  double m = 0, *z = malloc(T * sizeof *z);
  if (!z) return 0;
  for (size_t t = 0; t < T; t++) m += y[t] / (double)T;
  for (size_t t = 0; t < T; t++) z[t] = y[t] - m;
  unsigned nu = ru_ewc_nu(T);
  *mean = m, *se = sqrt(ewc_lrv(z, T, nu) / (double)T);
  free(z);
  return nu;
}

unsigned ru_ewc_slope(const double *x, const double *y, size_t T, double *b, double *se) {
  if (T < 3) return 0;
  double mx = 0, my = 0, sxx = 0, sxy = 0;
  for (size_t t = 0; t < T; t++) mx += x[t] / (double)T, my += y[t] / (double)T;
  for (size_t t = 0; t < T; t++) sxx += (x[t] - mx) * (x[t] - mx), sxy += (x[t] - mx) * (y[t] - my);
  if (!(sxx > 0)) return 0;
  double bb = sxy / sxx, a = my - bb * mx, *z = malloc(T * sizeof *z);
  if (!z) return 0;
  /* b̂ − b = Σ (x_t − x̄) u_t / Sxx: the long-run variance of z_t = (x_t − x̄) û_t */
  for (size_t t = 0; t < T; t++) z[t] = (x[t] - mx) * (y[t] - a - bb * x[t]);
  unsigned nu = ru_ewc_nu(T);
  *b = bb, *se = sqrt((double)T * ewc_lrv(z, T, nu)) / sxx;
  free(z);
  return nu;
}

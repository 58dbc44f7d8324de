/* ewc.c — EWC long-run-variance standard errors (ewc.h). */
#include "ewc.h"

#include <math.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

unsigned kvb_ewc_nu(size_t T) {
  /* cbrt, not pow(T, 2/3): pow(1000, 2/3) is 99.99999999999997, which would floor to 39 */
  double c = cbrt((double)T), nu = floor(0.4 * c * c + 1e-9);
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

unsigned kvb_ewc_mean(const double *y, size_t T, double *mean, double *se) {
  if (T < 3) return 0;
  double m = 0, *z = malloc(T * sizeof *z);
  if (!z) return 0;
  for (size_t t = 0; t < T; t++) m += y[t];
  m /= (double)T;
  for (size_t t = 0; t < T; t++) z[t] = y[t] - m;
  unsigned nu = kvb_ewc_nu(T);
  *mean = m, *se = sqrt(ewc_lrv(z, T, nu) / (double)T);
  free(z);
  return nu;
}

unsigned kvb_ewc_slope(const double *x, const double *y, size_t T, double *b, double *se) {
  if (T < 3) return 0;
  double mx = 0, my = 0, sxx = 0, sxy = 0;
  for (size_t t = 0; t < T; t++) mx += x[t], my += y[t];
  mx /= (double)T, my /= (double)T;
  for (size_t t = 0; t < T; t++) sxx += (x[t] - mx) * (x[t] - mx), sxy += (x[t] - mx) * (y[t] - my);
  double sx2 = 0;
  for (size_t t = 0; t < T; t++) sx2 += x[t] * x[t];
  if (!(sxx > 1e-12 * sx2)) return 0; /* x constant up to rounding */
  double bb = sxy / sxx, a = my - bb * mx, *z = malloc(T * sizeof *z);
  if (!z) return 0;
  /* b̂ − b = Σ (x_t − x̄) u_t / Sxx: the long-run variance of z_t = (x_t − x̄) û_t */
  for (size_t t = 0; t < T; t++) z[t] = (x[t] - mx) * (y[t] - a - bb * x[t]);
  unsigned nu = kvb_ewc_nu(T);
  *b = bb, *se = sqrt((double)T * ewc_lrv(z, T, nu)) / sxx;
  free(z);
  return nu;
}

/* test_ewc.c — the EWC estimator (src/core/ewc.h) on hand-worked cases, so that its phase, its
 * weights and its normalization are pinned, not only its coverage (tests/test_power.c).
 *
 * With Λ_j = √(2/T) Σ_t cos(πj(t − ½)/T) z_t (t = 1..T; the code's t = 0..T−1 with t + ½) and
 * Ω̂ = (1/ν) Σ_{j ≤ ν} Λ_j² (Lazarus, Lewis, Stock & Watson 2018, eq. for the EWC estimator), a
 * series that IS the j-th cosine has Λ_j = √(2/T)·T/2 = √(T/2) (Σ_t cos² = T/2 over the half-
 * integer grid) and Λ_i = 0 for i ≠ j (the cosines are orthogonal on that grid). Hence:
 *   T = 8  (ν = ⌊0.4·4⌋ = 1), y_t = 5 + cos(π(t − ½)/8):  mean 5, Ω̂ = T/2, se = √(Ω̂/T) = 1/√2;
 *   T = 27 (ν = ⌊0.4·9⌋ = 3), y_t = 5 + cos(2π(t − ½)/27): mean 5, Ω̂ = (T/2)/3, se = 1/√6.
 * A phase mutant (t in place of t − ½) gives 0.69352 and 0.40923; a weight 1/(ν+1) or j from 0
 * moves them further. The slope's value (T = 27, x_t = t, y_t = 2 + 0.5t + cos(2π(t − ½)/27) +
 * 0.3 cos(π(t − ½)/27)) was evaluated from the same formula in plain Python double precision,
 * independently of this code: b = 0.47295918431504763, se = 0.05598668485512592 (phase mutant:
 * 0.05558). */
#include "kvbound.h"
#include "ewc.h"
#include "unit.h"

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

int main(void) {
  double y[27], x[27], m = 0, se = 0, b = 0;
  CHECK(kvb_ewc_nu(8) == 1 && kvb_ewc_nu(27) == 3 && kvb_ewc_nu(64) == 6 && kvb_ewc_nu(1000) == 40,
        "ewc.known.nu", "nu(8) %u nu(27) %u nu(64) %u nu(1000) %u (want 1 3 6 40)", kvb_ewc_nu(8),
        kvb_ewc_nu(27), kvb_ewc_nu(64), kvb_ewc_nu(1000));
  for (int t = 0; t < 8; t++) y[t] = 5 + cos(M_PI * (t + 0.5) / 8);
  unsigned nu = kvb_ewc_mean(y, 8, &m, &se);
  CHECK(nu == 1 && fabs(m - 5) < 1e-14 && fabs(se - sqrt(0.5)) < 1e-13, "ewc.known.mean_T8",
        "nu %u mean %.17g se %.17g (want 1, 5, %.17g)", nu, m, se, sqrt(0.5));
  for (int t = 0; t < 27; t++) y[t] = 5 + cos(2 * M_PI * (t + 0.5) / 27);
  nu = kvb_ewc_mean(y, 27, &m, &se);
  CHECK(nu == 3 && fabs(m - 5) < 1e-14 && fabs(se - sqrt(1.0 / 6)) < 1e-13, "ewc.known.mean_T27",
        "nu %u mean %.17g se %.17g (want 3, 5, %.17g)", nu, m, se, sqrt(1.0 / 6));
  /* a constant series has no variation: se 0 (the t statistic is then undefined, callers check) */
  for (int t = 0; t < 27; t++) y[t] = 3;
  kvb_ewc_mean(y, 27, &m, &se);
  CHECK(m == 3 && se == 0, "ewc.known.constant", "mean %g se %g", m, se);
  for (int t = 0; t < 27; t++)
    x[t] = t, y[t] = 2 + 0.5 * t + cos(2 * M_PI * (t + 0.5) / 27) + 0.3 * cos(M_PI * (t + 0.5) / 27);
  nu = kvb_ewc_slope(x, y, 27, &b, &se);
  CHECK(nu == 3 && fabs(b - 0.47295918431504763) < 1e-13 && fabs(se / 0.05598668485512592 - 1) < 1e-11,
        "ewc.known.slope_T27", "nu %u b %.17g se %.17g (want 3, 0.47295918431504763, "
        "0.05598668485512592)", nu, b, se);
  UNIT_EXIT();
}

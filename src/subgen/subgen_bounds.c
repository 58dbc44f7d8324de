/* subgen_bounds.c — explicit t and s for 000 Theorem 1 (see subgen_bounds.h and
 * props/subgen_theorem1_constants.md for the derivation). */
#include "subgen_bounds.h"
#include "kvb_error.h"

#include <math.h>
#include <stddef.h>

static int check_eps(const char *fn, double eps) {
  /* ε ≤ 1 is what lets (2ε/3)/(1 − ε/3) ≤ ε when (5) and (6) are combined (001 A.3). */
  if (!isfinite(eps) || !(eps > 0) || eps > 1)
    return KVB_ERROR(isfinite(eps) ? KVB_EINVAL : KVB_EDOM,
                     "%s: eps must lie in (0, 1], got %g", fn, eps);
  return KVB_OK;
}

int kvb_subgen_required_log_t(double eps, double delta, double r, double scale, double m,
                              double *log_t_out) {
  const char *fn = "kvb_subgen_required_t";
  if (!log_t_out) return KVB_ERROR(KVB_ENULL, "%s: NULL output", fn);
  int rc = check_eps(fn, eps);
  if (rc) return rc;
  if (!isfinite(delta) || !isfinite(r) || !isfinite(scale) || !isfinite(m))
    return KVB_ERROR(KVB_EDOM, "%s: delta, r, scale and m must be finite", fn);
  if (!(delta > 0)) return KVB_ERROR(KVB_EINVAL, "%s: delta must be > 0, got %g", fn, delta);
  if (!(r >= 0)) return KVB_ERROR(KVB_EINVAL, "%s: r must be >= 0, got %g", fn, r);
  if (!(scale > 0)) return KVB_ERROR(KVB_EINVAL, "%s: scale must be > 0, got %g", fn, scale);
  if (!(m >= 1)) return KVB_ERROR(KVB_EINVAL, "%s: m (clusters) must be >= 1, got %g", fn, m);
  /* 27 ε⁻² e^{2δ r scale} ln(2m / FAIL_TAU), and 2/0.005 = 400 (written out so no rounding of
   * 0.005 enters). */
  *log_t_out = log(27.0) - 2 * log(eps) + 2 * delta * r * scale + log(log(400.0 * m));
  return KVB_OK;
}

int kvb_subgen_required_t(double eps, double delta, double r, double scale, double m,
                          double *t_out) {
  if (!t_out) return KVB_ERROR(KVB_ENULL, "kvb_subgen_required_t: NULL output");
  double lt;
  int rc = kvb_subgen_required_log_t(eps, delta, r, scale, m, &lt);
  if (rc) return rc;
  *t_out = ceil(exp(lt)); /* +Inf when it overflows: the guarantee is then unattainable */
  return KVB_OK;
}

int kvb_subgen_required_s(double eps, double rho, double *s_out) {
  const char *fn = "kvb_subgen_required_s";
  if (!s_out) return KVB_ERROR(KVB_ENULL, "%s: NULL output", fn);
  int rc = check_eps(fn, eps);
  if (rc) return rc;
  if (!isfinite(rho)) return KVB_ERROR(KVB_EDOM, "%s: rho must be finite", fn);
  if (!(rho >= 1))
    return KVB_ERROR(KVB_EINVAL, "%s: rho (stable rank or dimension) must be >= 1, got %g", fn,
                     rho);
  /* Markov on E‖z − eᵀV‖² ≤ ‖e‖²‖V‖_F²/s at threshold (ε/3)²‖e‖²‖V‖_op², failure 0.005:
   * s ≥ 9ρ/(0.005 ε²) = 1800 ρ/ε². */
  *s_out = ceil(1800.0 * rho / (eps * eps));
  return KVB_OK;
}

/* softmax_balance.c — SoftmaxBalance, 003 Algorithm 2 (see softmax_balance.h). */
#include "softmax_balance.h"
#include "attention.h"
#include "kvb_error.h"
#include "walk.h"

#include <math.h>
#include <stdlib.h>

/* The installed counters (kvb_sb_count); per thread, so parallel runners do not mix counts. */
static _Thread_local kvb_sb_counters *sb_counters;

kvb_sb_counters *kvb_sb_count(kvb_sb_counters *c) {
  kvb_sb_counters *old = sb_counters;
  sb_counters = c;
  return old;
}

double kvb_sb_constant(const kvb_sb_config *cfg, size_t n) {
  return cfg->c > 0 ? cfg->c : kvb_walk_paper_c(n ? n : 1, cfg->delta); /* line 3 */
}

/* Row i of line 6's y divided by R² (line 2): y_ij/R² = exp(scale(<k_i,k_j> − r_key²))·
 * <v_i,v_j>/r_value² for j < i. */
typedef struct {
  const double *K, *V;
  size_t dk, dv;
  double scale, rk2, rv2;
  uint64_t kernels;
} sb_rows;

static int sb_row(void *ctx, size_t i, double *buf) {
  sb_rows *r = ctx;
  for (size_t j = 0; j < i; j++) {
    double vv = r->V ? kvb_dot(r->V + i * r->dv, r->V + j * r->dv, r->dv) : 1.0;
    buf[j] = exp(r->scale * (kvb_dot(r->K + i * r->dk, r->K + j * r->dk, r->dk) - r->rk2)) * vv / r->rv2;
  }
  r->kernels += i;
  return KVB_OK;
}

int kvb_softmax_balance(size_t n, size_t dk, size_t dv, const double *K, const double *V,
                        const kvb_sb_config *cfg, const double *unif, gsl_rng *rng, int *eps_out,
                        size_t *keep, size_t *n_keep, uint64_t *fails) {
  if (!cfg || !keep || !n_keep || (n && !K)) return KVB_ERROR(KVB_ENULL, "softmax_balance: NULL argument");
  if (dk == 0 || dv == 0 || (!V && dv != 1))
    return KVB_ERROR(KVB_EDIM, "softmax_balance: dimensions %zu/%zu (V NULL needs dv = 1)", dk, dv);
  if (!(cfg->r_key > 0) || !(cfg->r_value > 0) || !isfinite(cfg->r_key) || !isfinite(cfg->r_value))
    return KVB_ERROR(KVB_EINVAL, "softmax_balance: radii %g, %g must be finite and > 0",
                     cfg->r_key, cfg->r_value);
  if (!(cfg->delta > 0 && cfg->delta < 1))
    return KVB_ERROR(KVB_EINVAL, "softmax_balance: δ = %g not in (0,1)", cfg->delta);
  if (!(cfg->c >= 0) || !isfinite(cfg->c) || !(cfg->scale > 0) || !isfinite(cfg->scale))
    return KVB_ERROR(KVB_EINVAL, "softmax_balance: c = %g (want >= 0, 0 = paper) or scale = %g",
                     cfg->c, cfg->scale);
  for (size_t i = 0; i < n; i++) {
    const double *k = K + i * dk;
    for (size_t j = 0; j < dk; j++)
      if (!isfinite(k[j])) return KVB_ERROR(KVB_EDOM, "softmax_balance: key %zu not finite", i);
    if (kvb_norm2(k, dk) > cfg->r_key * (1 + 1e-12))
      return KVB_ERROR(KVB_EINVAL, "softmax_balance: ‖k_%zu‖ = %.17g > r_key = %.17g", i,
                       kvb_norm2(k, dk), cfg->r_key);
    if (V) {
      const double *v = V + i * dv;
      for (size_t j = 0; j < dv; j++)
        if (!isfinite(v[j])) return KVB_ERROR(KVB_EDOM, "softmax_balance: value %zu not finite", i);
      if (kvb_norm2(v, dv) > cfg->r_value * (1 + 1e-12))
        return KVB_ERROR(KVB_EINVAL, "softmax_balance: ‖v_%zu‖ > r_value = %.17g", i, cfg->r_value);
    } else if (cfg->r_value < 1) {
      return KVB_ERROR(KVB_EINVAL, "softmax_balance: all-ones values need r_value >= 1");
    }
  }
  /* Line 6's y, one row per step: the walk reads y_ij (j < i) only at step i, so the row is
   * formed then, in O(n) memory instead of the n×n Gram matrix (Theorem 3.3: O((d+s)·n)). */
  double *row = malloc((n ? n : 1) * sizeof *row);
  int *eps = eps_out ? eps_out : malloc((n ? n : 1) * sizeof *eps);
  if (!row || !eps) {
    free(row);
    if (!eps_out) free(eps);
    return KVB_ERROR(KVB_ENOMEM, "softmax_balance: out of memory for n = %zu", n);
  }
  sb_rows rows = {K, V, dk, dv, cfg->scale, cfg->r_key * cfg->r_key,
                  cfg->r_value * cfg->r_value, 0};
  if (sb_counters) {
    kvb_sb_counters *sc = sb_counters;
    sc->last_bytes = (uint64_t)(n * dk + (V ? n * dv : 0)) * sizeof(double) +
                     (uint64_t)(n ? n : 1) * sizeof *row +
                     (eps_out ? 0 : (uint64_t)(n ? n : 1) * sizeof *eps);
    if (sc->last_bytes > sc->peak_bytes) sc->peak_bytes = sc->last_bytes;
  }
  uint64_t nf = 0;
  int rc = kvb_walk_gram_rows(n, sb_row, &rows, row, kvb_sb_constant(cfg, n), unif, rng,
                              cfg->flags, eps, &nf);
  free(row);
  if (sb_counters) {
    kvb_sb_counters *sc = sb_counters;
    sc->calls++;
    sc->pairs += n;
    sc->kernels += rows.kernels;
    sc->madds += rows.kernels * (dk + (V ? dv : 0));
  }
  if (rc != KVB_OK && rc != KVB_EFAIL) {
    if (!eps_out) free(eps);
    return rc;
  }
  int side = kvb_walk_output_sign(n, eps, cfg->flags); /* lines 12-16 */
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (eps[i] == side) keep[m++] = i;
  *n_keep = m;
  if (fails) *fails = nf;
  if (!eps_out) free(eps);
  return nf ? KVB_EFAIL : KVB_OK;
}

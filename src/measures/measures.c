/* measures.c — the exact side, the error ratios, the INDEX decode and the quantiles (see the
 * header). */
#include "measures.h"

#include "attention.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_sort.h>

/* ---- the exact side ---- */

int kvb_exact_side_compute(size_t n, size_t dk, size_t dv, const double *K, const double *V,
                           const double *q, double scale, unsigned what, double *attn,
                           kvb_exact_side *out) {
  if (!K || !V || !q || !attn || !out) return KVB_ERROR(KVB_ENULL, "exact side: NULL argument");
  if (n == 0) return KVB_ERROR(KVB_EINVAL, "exact side: the prefix is empty (n = 0)");
  if (dk == 0 || dv == 0)
    return KVB_ERROR(KVB_EDIM, "exact side: d_key = %zu, d_value = %zu (both must be >= 1)", dk, dv);
  if (!(isfinite(scale) && scale > 0))
    return KVB_ERROR(KVB_EINVAL, "exact side: scale must be finite and > 0 (got %g)", scale);
  if (what & ~(unsigned)KVB_EXACT_NORMS)
    return KVB_ERROR(KVB_EINVAL, "exact side: unknown flags 0x%x", what);
  if (!kvb_all_finite(q, dk) || !kvb_all_finite(K, n * dk) || !kvb_all_finite(V, n * dv))
    return KVB_ERROR(KVB_EDOM, "exact side: q, K or V has a non-finite entry");
  kvb_exact_side x = {.n = n, .d_value = dv, .attn = attn};
  int st = kvb_attention_exact(n, dk, dv, K, V, q, scale, attn, &x.log_sum);
  if (st) return st;
  x.attn_norm = kvb_norm2(attn, dv);
  /* finite inputs whose Attn or ‖Attn‖ leave double range (values near 1e200): every ratio
   * against them would be NaN, so this is an error, not a row of NaN measures */
  if (!kvb_all_finite(attn, dv) || !isfinite(x.attn_norm))
    return KVB_ERROR(KVB_ERANGE, "exact side: Attn or its norm is outside double range at "
                     "token %zu (the values are too large to measure against)", n);
  x.softmax_norm = x.v_op = x.v_f = x.max_score = x.log_exp_norm = NAN;
  if (what & KVB_EXACT_V_OP) {
    st = kvb_operator_norm(n, dv, V, &x.v_op);
    if (st) return st;
  }
  if (what & KVB_EXACT_V_F) x.v_f = kvb_frobenius_norm(n, dv, V);
  if (!(isfinite(x.v_op) || isnan(x.v_op)) || !(isfinite(x.v_f) || isnan(x.v_f)))
    return KVB_ERROR(KVB_ERANGE, "exact side: ‖V‖_op or ‖V‖_F is outside double range at token "
                     "%zu", n);
  if (what & KVB_EXACT_SOFTMAX) {
    x.softmax_norm = kvb_softmax_norm2(n, dk, K, q, scale);
    double M = -INFINITY, s2 = 0;
    for (size_t j = 0; j < n; j++) M = fmax(M, kvb_score(K + j * dk, q, dk, scale));
    /* ‖exp(s)‖₂ = e^M ‖exp(s − M)‖₂: every term of the sum is in (0, 1], the first 1 */
    for (size_t j = 0; j < n; j++) s2 += exp(2 * (kvb_score(K + j * dk, q, dk, scale) - M));
    x.max_score = M;
    x.log_exp_norm = M + 0.5 * log(s2);
  }
  *out = x;
  return KVB_OK;
}

/* ---- error ratios ---- */

double kvb_measure_ratio(double num, double den) {
  if (isnan(num) || isnan(den)) return NAN;
  if (den > 0) return num / den;
  return num == 0 ? 0 : INFINITY;
}

int kvb_measure_errors(const kvb_exact_side *x, const double *z, size_t dv, kvb_errors *out) {
  if (!x || !z || !out || !x->attn) return KVB_ERROR(KVB_ENULL, "errors: NULL argument");
  if (dv == 0 || dv != x->d_value)
    return KVB_ERROR(KVB_EDIM, "errors: the answer has %zu components, the exact side %zu", dv,
                     x->d_value);
  if (!kvb_all_finite(z, dv)) return KVB_ERROR(KVB_EDOM, "errors: the answer has a non-finite entry");
  if (!kvb_all_finite(x->attn, dv) || !isfinite(x->attn_norm))
    return KVB_ERROR(KVB_EDOM, "errors: the exact side has a non-finite entry");
  double err = kvb_dist2(z, x->attn, dv);
  kvb_errors e;
  e.err_abs = err;
  e.rel_error = kvb_measure_ratio(err, x->attn_norm);
  e.ratio_op = kvb_measure_ratio(err, x->softmax_norm * x->v_op);
  e.ratio_f = kvb_measure_ratio(err, x->softmax_norm * x->v_f);
  *out = e;
  return KVB_OK;
}

/* ---- the INDEX decode ---- */

/* Row v of an INDEX stream is σ·e_c: exactly one non-zero coordinate, ±1. */
static int signed_unit(const double *v, size_t d, size_t *c, signed char *sigma) {
  size_t nz = 0;
  for (size_t a = 0; a < d; a++)
    if (v[a] != 0) {
      if (v[a] != 1 && v[a] != -1) return 0;
      *c = a;
      *sigma = v[a] > 0 ? 1 : -1;
      nz++;
    }
  return nz == 1;
}

int kvb_measure_index_view(const kvb_stream *s, kvb_index_instance **out) {
  if (!s || !out) return KVB_ERROR(KVB_ENULL, "INDEX view: NULL argument");
  size_t n = s->n, d = s->d_key;
  if (n == 0 || d == 0 || s->d_value != d)
    return KVB_ERROR(KVB_EINVAL, "INDEX view: needs n >= 1 and d_key = d_value >= 1 (got n = %zu, "
                     "d_key = %zu, d_value = %zu)", n, d, s->d_value);
  if (!(isfinite(s->r) && s->r > 0))
    return KVB_ERROR(KVB_EINVAL, "INDEX view: the stream records no key norm r (not an "
                     "index_reduction stream)");
  if (!s->K || !s->V || !s->Q) return KVB_ERROR(KVB_ENULL, "INDEX view: the stream has no data");
  if (memcmp(s->K, s->Q, n * d * sizeof *s->K) != 0)
    return KVB_ERROR(KVB_EINVAL, "INDEX view: q_i differs from k_i (not an index_reduction stream)");
  kvb_index_instance *I = calloc(1, sizeof *I);
  if (!I) return KVB_ERROR(KVB_ENOMEM, "INDEX view: out of memory");
  I->n = n, I->d = d, I->groups = n, I->r = s->r;
  I->mutant = kvb_index_stream_mutant(s); /* a decoder mutant the stream carries reaches Bob */
  I->key = malloc(n * d * sizeof *I->key);
  I->group = malloc(n * sizeof *I->group);
  I->coord = malloc(n * sizeof *I->coord);
  I->sigma = malloc(n);
  if (!I->key || !I->group || !I->coord || !I->sigma) {
    kvb_index_free(I);
    return KVB_ERROR(KVB_ENOMEM, "INDEX view: out of memory for n = %zu", n);
  }
  memcpy(I->key, s->K, n * d * sizeof *I->key);
  for (size_t i = 0; i < n; i++) {
    I->group[i] = i;
    if (!signed_unit(s->V + i * d, d, &I->coord[i], &I->sigma[i])) {
      kvb_index_free(I);
      return KVB_ERROR(KVB_EINVAL, "INDEX view: value %zu is not ±e_c (not an index_reduction "
                       "stream)", i + 1);
    }
  }
  *out = I;
  return KVB_OK;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int kvb_measure_decode(const kvb_index_instance *I, const unsigned char *x, kvb_method *m,
                       kvb_decode *out) {
  if (!I || !x || !m || !out) return KVB_ERROR(KVB_ENULL, "decode: NULL argument");
  kvb_decode r = {.n = I->n};
  double t0 = now_s();
  int st = kvb_index_alice(I, x, m, &r.u_size);
  r.update_s = now_s() - t0;
  t0 = now_s();
  for (size_t i = 0; i < I->n && !st; i++) {
    int bit = 0;
    st = kvb_index_bob(I, m, i, r.u_size, &bit, NULL);
    r.correct += !st && bit == (x[i] != 0);
  }
  r.query_s = now_s() - t0;
  if (st) return st;
  r.accuracy = (double)r.correct / (double)r.n;
  *out = r;
  return KVB_OK;
}

/* ---- quantiles ---- */

/* GSL's gsl_stats_quantile_from_sorted_data (level f at index f·(n − 1), linear between the
 * neighbours), bit for bit on finite data, except that an exact index returns its order
 * statistic: GSL's 0·x[lhs + 1] makes the median of (1, 2, +Inf) NaN. */
static double quantile_sorted(const double *x, size_t n, double f) {
  double index = f * (double)(n - 1);
  size_t lhs = (size_t)index;
  double delta = index - (double)lhs;
  if (lhs >= n - 1 || delta == 0) return x[lhs < n ? lhs : n - 1];
  return (1 - delta) * x[lhs] + delta * x[lhs + 1];
}

int kvb_quantiles_of(double *x, size_t n, kvb_quantiles *out) {
  if (!out || (!x && n)) return KVB_ERROR(KVB_ENULL, "quantiles: NULL argument");
  size_t k = 0; /* NaN to the back, the rest sorted */
  for (size_t i = 0; i < n; i++)
    if (!isnan(x[i])) {
      double t = x[k];
      x[k++] = x[i];
      x[i] = t;
    }
  kvb_quantiles q = {.n = k};
  double *lv[7] = {&q.q10, &q.q25, &q.median, &q.q75, &q.q90, &q.q99, &q.max};
  static const double level[7] = {0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0};
  if (k) gsl_sort(x, 1, k);
  for (int l = 0; l < 7; l++) *lv[l] = k ? quantile_sorted(x, k, level[l]) : NAN;
  *out = q;
  return KVB_OK;
}

/* streams_values.c — adversarial value norms and token orders, attacking the ℓ2 value
 * sampling of 000 Alg. 1 lines 24-28 (= 001 lines 23-27; Lemma 1) and 003's value-norm buckets. One generator,
 * adv_values, with a norm profile and an order:
 *   profile spread   ‖v‖ = 2^e, e uniform in [−30, 30] (norms spanning 2⁻³⁰…2³⁰)
 *           heavy    `heavy` tokens of norm 2^20 among tokens of norm 2^−10 (heavy hitters)
 *           onehot   v = e_j, j uniform (every norm 1: ℓ2 sampling is uniform sampling)
 *   order   stream | sorted (‖v‖ ascending) | reversed (descending) | interleaved
 *           (smallest, largest, 2nd smallest, 2nd largest, ...)
 * A reservoir sampler's final law must not depend on the order (Lemma 1 is order-free). */
#include "streams_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const kvb_param_spec values_params[] = {
    KVB_ADV_DIMS(64, 4, 4),
    {"profile", KVB_PARAM_STRING, 0, 0, 0, "spread", "spread | heavy | onehot"},
    {"order", KVB_PARAM_STRING, 0, 0, 0, "stream", "stream | sorted | reversed | interleaved"},
    {"heavy", KVB_PARAM_INT, 4, 0, 1e6, NULL, "number of heavy tokens (profile heavy)"},
    {"r", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "query norm"},
    KVB_ADV_END};

typedef struct {
  double norm;
  size_t idx;
} norm_idx;

static int by_norm(const void *a, const void *b) {
  const norm_idx *x = a, *y = b;
  if (x->norm != y->norm) return x->norm < y->norm ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static int gen_values(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  const char *prof = kvb_params_get_str(p, sp, "profile"), *ord = kvb_params_get_str(p, sp, "order");
  size_t heavy = (size_t)kvb_params_get(p, sp, "heavy"), n = s->n, dk = s->d_key, dv = s->d_value;
  double r = kvb_params_get(p, sp, "r");
  int spread = !strcmp(prof, "spread"), hv = !strcmp(prof, "heavy"), oh = !strcmp(prof, "onehot");
  if (!spread && !hv && !oh)
    return KVB_ERROR(KVB_EINVAL, "adv_values: profile '%s' is not spread | heavy | onehot", prof);
  int o_stream = !strcmp(ord, "stream"), o_sorted = !strcmp(ord, "sorted"),
      o_rev = !strcmp(ord, "reversed"), o_int = !strcmp(ord, "interleaved");
  if (!o_stream && !o_sorted && !o_rev && !o_int)
    return KVB_ERROR(KVB_EINVAL, "adv_values: order '%s' is not stream | sorted | reversed | "
                     "interleaved", ord);
  double *K = malloc(n * dk * sizeof *K), *V = malloc(n * dv * sizeof *V);
  norm_idx *ni = malloc(n * sizeof *ni);
  if (!K || !V || !ni) {
    free(K), free(V), free(ni);
    return KVB_ERROR(KVB_ENOMEM, "adv_values: out of memory");
  }
  for (size_t i = 0; i < n; i++) {
    kvb_rand_sphere(rng, K + i * dk, dk, 1.0);
    kvb_rand_sphere(rng, s->Q + i * dk, dk, r);
    double *v = V + i * dv, nv;
    if (oh) {
      memset(v, 0, dv * sizeof *v);
      v[gsl_rng_uniform_int(rng, dv)] = 1.0;
      nv = 1.0;
    } else {
      nv = spread ? ldexp(1.0, (int)gsl_rng_uniform_int(rng, 61) - 30)
                  : ldexp(1.0, i < heavy ? 20 : -10);
      kvb_rand_sphere(rng, v, dv, nv);
    }
    ni[i].norm = nv;
    ni[i].idx = i;
  }
  if (!o_stream) qsort(ni, n, sizeof *ni, by_norm);
  for (size_t j = 0; j < n; j++) {
    size_t src;
    if (o_stream || o_sorted) src = ni[j].idx;
    else if (o_rev) src = ni[n - 1 - j].idx;
    else src = ni[j % 2 ? n - 1 - j / 2 : j / 2].idx;
    memcpy(s->K + j * dk, K + src * dk, dk * sizeof *K);
    memcpy(s->V + j * dv, V + src * dv, dv * sizeof *V);
  }
  free(K), free(V), free(ni);
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_adv_values = {
    "adv_values", "value norms spanning 2^-30..2^30, heavy hitters or one-hot; sorted/reversed/interleaved",
    "000 Lemma 1 (ℓ2 reservoir: slot = token i w.p. ‖v_i‖²/µ, independent of the order) and "
    "003 Alg. 1's value-norm buckets: the law must hold exactly whatever the norms span and "
    "whatever the order; the suite tests the law per profile and order (chi-square)",
    values_params, NULL, gen_values};

/* model_ops.c — the pieces both model files use (model_ops.h). */
#include "model_ops.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>

#include "kvb_error.h"

/* Dequantizes tensor `name`, which must have shape [ne0, ne1] (ne1 = 1 for vectors), into *at
 * and advances it. */
int kvb_mo_take(const kvb_gguf *g, const char *name, uint64_t ne0, uint64_t ne1, float **at,
                float **dst) {
  const kvb_gguf_tensor *t = kvb_gguf_tensor_find(g, name);
  if (!t) return KVB_ERROR(KVB_EFORMAT, "the model has no tensor \"%s\"", name);
  if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1)
    return KVB_ERROR(KVB_EFORMAT, "tensor \"%s\" has shape [%llu, %llu], expected [%llu, %llu]",
                     name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                     (unsigned long long)ne0, (unsigned long long)ne1);
  int st = kvb_gguf_dequant(t->type, t->data, t->n_elements, *at);
  if (st) {
    char why[256]; /* the message buffer is reused by KVB_ERROR: copy it first */
    snprintf(why, sizeof why, "%s", kvb_strerror_last());
    return KVB_ERROR(KVB_EFORMAT, "tensor \"%s\": %s", name, why);
  }
  for (uint64_t i = 0; i < t->n_elements; i++)
    if (!isfinite((*at)[i])) return KVB_ERROR(KVB_EFORMAT, "tensor \"%s\" holds a non-finite value", name);
  *dst = *at;
  *at += t->n_elements;
  return KVB_OK;
}

int kvb_mo_get_int(const kvb_gguf *g, const char *key, int lo, int hi, int *out) {
  uint64_t v;
  int st = kvb_gguf_get_uint(g, key, &v);
  if (st) return KVB_EFORMAT; /* the message kvb_gguf_get_uint recorded names the key */
  if (v < (uint64_t)lo || v > (uint64_t)hi)
    return KVB_ERROR(KVB_EFORMAT, "GGUF metadata %s = %llu is outside [%d, %d]", key,
                     (unsigned long long)v, lo, hi);
  *out = (int)v;
  return KVB_OK;
}

void kvb_mo_rmsnorm(const float *x, const float *w, size_t d, double eps, float *out) {
  double ss = 0;
  for (size_t i = 0; i < d; i++) ss += (double)x[i] * x[i];
  float r = (float)(1.0 / sqrt(ss / (double)d + eps));
  for (size_t i = 0; i < d; i++) out[i] = x[i] * r * w[i];
}

/* y[n][out] (+)= x[n][in] · W[out][in]ᵀ */
void kvb_mo_matmul(const float *x, const float *W, size_t n, size_t in, size_t out, float *y, float beta) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)out, (int)in, 1.0f, x, (int)in,
              W, (int)in, beta, y, (int)out);
}

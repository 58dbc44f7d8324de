/* model_ops.h — what the two forward passes share (model.c: SmolLM2's Llama block;
 * model_gemma3.c: Gemma 3's block): reading a GGUF tensor into the float32 weight arena,
 * bounded integer metadata, RMSNorm and the sgemm product. Each model file keeps only its own
 * block structure. */
#ifndef KVB_MODEL_OPS_H
#define KVB_MODEL_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "gguf.h"

/* Dequantizes tensor `name`, which must have shape [ne0, ne1] (ne1 = 1 for vectors), into *at,
 * points *dst at it and advances *at. KVB_EFORMAT naming the tensor when it is missing, of
 * another shape, of an unreadable type or holds a non-finite value. */
int kvb_mo_take(const kvb_gguf *g, const char *name, uint64_t ne0, uint64_t ne1, float **at,
                float **dst);
/* Unsigned metadata `key` within [lo, hi] into *out; KVB_EFORMAT otherwise. */
int kvb_mo_get_int(const kvb_gguf *g, const char *key, int lo, int hi, int *out);
/* out = x / √(mean(x²) + eps) · w over d entries (the sum in double). */
void kvb_mo_rmsnorm(const float *x, const float *w, size_t d, double eps, float *out);
/* y[n][out] (+)= x[n][in] · W[out][in]ᵀ (beta 0 overwrites, 1 accumulates). */
void kvb_mo_matmul(const float *x, const float *W, size_t n, size_t in, size_t out, float *y,
                   float beta);

#endif

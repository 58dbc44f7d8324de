/* model_ops.h — the pieces of the one forward pass (model.c, parameterized by arch.h):
 * reading a GGUF tensor into the float32 weight arena,
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

/* The gated feed-forward activations, g[i] = act(g[i]) · u[i] over n entries:
 *   SwiGLU (Llama): silu(g) = g·σ(g), σ(g) = 1/(1 + e) for g >= 0 and e/(1 + e) below, with
 *     e = e^−|g| by the attention softmax's float expf (below; 1–2 ulp from libm's), one pass,
 *     the same bits on every instruction set;
 *   GeGLU (Gemma), exp by the vectorized libm-exact expf (vexpf.h): gelu_tanh(g) = g/2·(1 + tanh(√(2/π)(g + 0.044715g³))), computed as
 *     g / (1 + expf(−2√(2/π)(g + 0.044715g³))) (½(1 + tanh z) = 1/(1 + e^(−2z))), the exponent
 *     clamped to ±80 where the result is g or 0 to float precision. */
void kvb_mo_swiglu(float *g, const float *u, size_t n);
void kvb_mo_geglu(float *g, const float *u, size_t n);

/* Causal self-attention of a prefill, every query head: q [H][n][hd], k and v [Hk][n][hd]
 * (query head j reads key/value head j / (H / Hk)); query p sees key p′ when p′ ≤ p and, for
 * window > 0, p − p′ < window (a sliding-window layer). Head j's output row p is written to
 * att[p·ldo + j·hd ..]. Scores are scale·q·k; the softmax is the usual one with the running
 * maximum (online softmax): query rows in blocks of KVB_MO_QB, those of all heads sharing a key/
 * value head together, keys in tiles of KVB_MO_KB that stay in cache, each tile's scores and
 * its P·V product by sgemm, exp by a float Cephes-style expf (1 ulp from libm's, the same bits
 * on every instruction set; model_ops.c says why not vexpf.h), the normalizer summed in double.
 * Only the tiles a block can see are touched, so a window of w costs O(n·w), not O(n²). Items
 * (key/value head, query block) run on kvb_threads_default() workers (parallel.h; the result
 * does not depend on the count). KVB_ENOMEM when the scratch cannot be allocated. */
#define KVB_MO_QB 64
#define KVB_MO_KB 256
int kvb_mo_attention(const float *q, const float *k, const float *v, size_t n, size_t H,
                     size_t Hk, size_t hd, float scale, size_t window, float *att, size_t ldo);

#endif

/* gpu_ops.h — kvbound's algorithms on a device (gpu.h), host side: argument checks (NaN/Inf
 * rejected before any launch, as on the CPU), upload, launches, download. Each call reports the
 * time spent in kernels (launch to completion, transfers excluded) through *kernel_s (may be NULL).
 * See k_attention.cl for what the kernels compute. */
#ifndef KVB_GPU_OPS_H
#define KVB_GPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "gpu.h"

/* IEEE binary16 conversions (round to nearest even; used for the float16 K/V path). */
uint16_t kvb_f32_to_f16(float x);
float kvb_f16_to_f32(uint16_t h);

/* Decode attention. Q: nq×H×dk floats; K: H×n×dk, V: H×n×dv, float (kv_half = 0) or binary16
 * bits (kv_half = 1); logw: H×n log-weights or NULL (exact attention). chunk: tokens per split,
 * 1..KVB_GPU_CHUNK_MAX. Z: nq×H×dv. Errors: KVB_ENULL, KVB_EINVAL (a size 0 or too large),
 * KVB_EDOM (a non-finite input), KVB_ENOMEM, KVB_EFAIL (a device error). */
int kvb_gpu_attention(kvb_gpu *g, size_t H, size_t n, size_t dk, size_t dv, size_t nq,
                      double scale, int kv_half, const float *Q, const void *K, const void *V,
                      const float *logw, size_t chunk, float *Z, double *kernel_s);

/* Uniform sampling's compression: rows pos[h·kk + j] (head-local, < n) of each head gathered
 * into Kc: H×kk×dk and Vc: H×kk×dv. */
int kvb_gpu_usample_compress(kvb_gpu *g, size_t H, size_t n, size_t dk, size_t dv, const float *K,
                             const float *V, size_t kk, const int *pos, float *Kc, float *Vc,
                             double *kernel_s);

/* Uniform sampling's query (the estimator of uniform_sample.h): over the compressed cache of kk
 * rows per head, rows [0, nexact) weight 1 and rows [nexact, kk) weight wmid (= m/k) — done as the
 * decode kernel with log-weights. */
int kvb_gpu_usample_query(kvb_gpu *g, size_t H, size_t kk, size_t nexact, double wmid, size_t dk,
                          size_t dv, size_t nq, double scale, const float *Q, const float *Kc,
                          const float *Vc, size_t chunk, float *Z, double *kernel_s);

/* Block BalanceKV compression (balancekv_block.h, k_bkvb.cl): H heads of n tokens, K: H×n×d,
 * V: H×n×dv, block b <= KVB_GPU_BMAX, T rounds, u[r] the H·⌊n/2^r⌋ uniforms of round r (as
 * kvb_bkvb_compress; rounded to float on the device). Writes idx/w: H×⌊n/2^T⌋ as the CPU does;
 * P (may be NULL): for each round r, H·⌊n/2^r⌋ walk probabilities p, concatenated. */
int kvb_gpu_bkvb_compress(kvb_gpu *g, size_t H, size_t n, size_t d, size_t dv, const float *K,
                          const float *V, size_t b, unsigned T, double gamma, double c0,
                          double tau, double beta, const double *const *u, size_t *idx,
                          double *w, float *P, double *kernel_s);

#endif

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

/* Block BalanceKV's weighted query (k_bkvb.cl kvb_wquery), log-sum-exp form: for nq queries × H
 * heads (Q: nq×H×dk, Z: nq×H×dv) over kk entries per head, entry j of head h reading token row
 * idx[h·kk + j] (< n) of K: H×n×dk, V: H×n×dv, with log-weights lnum (numerator) and lden
 * (denominator), H×kk each:  z = Σ_j e^{s_j + lnum_j} v_j / Σ_j e^{s_j + lden_j}. */
int kvb_gpu_wquery(kvb_gpu *g, size_t H, size_t n, size_t dk, size_t dv, size_t kk, const int *idx,
                   const float *lnum, const float *lden, size_t nq, double scale, const float *Q,
                   const float *K, const float *V, float *Z, double *kernel_s);

/* SubGen (000 Alg. 1) for H independent heads on a device (k_subgen.cl). The state lives on the
 * host in float32/int (the layout of k_subgen.cl) and travels to the device for each call. */
typedef struct {
  size_t H, dk, dv, t, s;
  double delta;   /* clustering threshold δ (line 13) */
  size_t cap;     /* clusters per head the arrays have room for (grown by update) */
  size_t n;       /* tokens absorbed per head */
  int *mc;        /* H: clusters m′ */
  float *rep;     /* H×cap×dk: representatives */
  int *rep_pos;   /* H×cap */
  int *cnt;       /* H×cap: n_i */
  float *S;       /* H×cap×t×dk: samples */
  int *S_pos;     /* H×cap×t */
  float *mu;      /* H: µ */
  float *Mk, *Mv; /* H×s×dk, H×s×dv: slots of M */
  int *M_pos;     /* H×s: −1 for a null slot */
} kvb_gpu_subgen;

/* An empty state. Errors: KVB_EINVAL (a size 0, dk or dv > KVB_GPU_DMAX, δ not > 0 or not finite),
 * KVB_ENOMEM. */
int kvb_gpu_subgen_init(kvb_gpu_subgen *st, size_t H, size_t dk, size_t dv, size_t t, size_t s,
                        double delta);
void kvb_gpu_subgen_free(kvb_gpu_subgen *st);
/* Absorbs nt tokens per head: K: H×nt×dk, V: H×nt×dv (row h·nt + i), u: H×nt×(t+s) uniforms in
 * [0, 1), consumed as k_subgen.cl says (the CPU's draw order). The state is unchanged on error
 * (KVB_EDOM for a non-finite input or a uniform outside [0, 1)). */
int kvb_gpu_subgen_update(kvb_gpu *g, kvb_gpu_subgen *st, size_t nt, const float *K, const float *V,
                          const float *u, double *kernel_s);
/* The estimator (lines 29-31) for Q: nq×H×dk; Z: nq×H×dv. KVB_ESTATE before any token. */
int kvb_gpu_subgen_query(kvb_gpu *g, const kvb_gpu_subgen *st, size_t nq, double scale,
                         const float *Q, float *Z, double *kernel_s);

#endif

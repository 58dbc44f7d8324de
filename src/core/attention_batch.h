/* attention_batch.h — exact decode attention for many heads × many queries, float32 and
 * float64, parallel (parallel.h), one pass over K and V (the fast path; attention.h's
 * kvb_attention_exact stays the plain double reference it is checked against).
 *
 * For head h and query i:  z = softmax(scale·K_h q)ᵀ V_h,  lse = log Σ_t exp(scale·<q, k_t>).
 *
 * Layout (row-major, one token per row): K is H×n×d (head h token t at (h·n + t)·d), V is
 * H×n×dv, Q is H×nq×d, Z is H×nq×dv, lse (may be NULL) is H×nq doubles.
 *
 * Why one pass: decode attention does one multiply-add per key entry and one per value entry,
 * so it is bound by memory bandwidth once K and V outgrow the caches. The two-pass form (max
 * score first, as kvb_attention_exact) reads K twice (1.5× the traffic); here every tile of
 * KVB_ATTB_TILE tokens is read once: its scores, its own maximum m_t, e_t = exp(s_t − m_t), the
 * tile sums Σ e_t·v_t and Σ e_t, then merged into a running (M, den, acc) in double with
 * exp(m_t − M) rescaling (the online log-sum-exp; every exponent is ≤ 0, so nothing overflows
 * whatever the scores' size).
 *
 * Precision (the float32 path): products and the tile sums are float32, the running sums across
 * tiles and chunks are double. Why: float32 throughout would let the error of Σ_t e_t v_t grow
 * with n (a relative n·2⁻²⁴ worst case: 1e-3 at n = 16384), while double everywhere would
 * halve the SIMD width of the inner loops; float32 inside a tile of 64 tokens and double across
 * tiles gives an error bound independent of n (tile length 64 in float32, n/64 merges in
 * double) at the float32 loop speed. Scores are sums of 16 interleaved float32 partial sums
 * (d/16 terms each, then a fixed tree), so the score error is ≈ (d/16 + 5)·2⁻²⁴·scale·Σ|k_j q_j|.
 * The float64 path is the same algorithm in double. tests/test_attention_batch.c derives the
 * full error bound and checks both paths against kvb_attention_exact within it.
 *
 * Determinism: the work is split into items (head, query block, token chunk) whose boundaries
 * depend on the shape only, never on the thread count; each item writes its own partial
 * (M, den, acc) and the partials are merged in chunk order, so Z and lse are bit-identical for
 * any number of threads.
 *
 * Errors (nothing is written to Z or lse on error): KVB_ENULL (K, V, Q or Z NULL), KVB_EINVAL
 * (H, n, nq, d or dv zero; sizes overflowing; scale not finite), KVB_EDOM (a NaN/Inf entry in
 * Q, K or V, reported with its head and token), KVB_ERANGE (finite inputs whose score or value
 * sum overflows the working precision: |score| or Σ e·v beyond FLT_MAX for float32, DBL_MAX for
 * float64 — kvb_attention_exact rescales such inputs; this fast path reports them),
 * KVB_ENOMEM. */
#ifndef KVB_ATTENTION_BATCH_H
#define KVB_ATTENTION_BATCH_H

#include <stddef.h>
#include <stdint.h>

/* Tokens per tile (float32 tile sums run over at most this many terms). */
#define KVB_ATTB_TILE 64
/* Queries of one head handled together (each tile of K/V is read once per query block). */
#define KVB_ATTB_QBLOCK 16

/* threads <= 0: kvb_threads_default(). */
int kvb_attention_batch_f32(size_t H, size_t n, size_t nq, size_t d, size_t dv, const float *K,
                            const float *V, const float *Q, double scale, int threads, float *Z,
                            double *lse);
int kvb_attention_batch_f64(size_t H, size_t n, size_t nq, size_t d, size_t dv, const double *K,
                            const double *V, const double *Q, double scale, int threads,
                            double *Z, double *lse);

/* The number of token chunks the n tokens of a head are split into for a shape (a function of
 * H, n and nq only; the error analysis counts its merges). */
size_t kvb_attention_batch_chunks(size_t H, size_t n, size_t nq);

/* The read probe (for benchmarks: kvb-bench's exact decode line): reads K and V (float32 when f32,
 * else float64; layout as above) exactly as kvb_attention_batch_f32/f64 do for this shape — the
 * same items on the same kvb_parallel_for workers, the same tiles in the same order, the same
 * software prefetch, the same SIMD width — but adds the loaded bytes as integers instead of
 * computing attention. Its bytes per second are the most this kernel's access order and
 * threading can move on the machine: the kernel's time over the probe's is what its arithmetic
 * costs, the probe's rate over a STREAM pass's what its access order and threads cost. *sink
 * gets the wrapping (mod 2^64) sum, over the items, of every row's 8-byte words (a float32 row
 * of odd length adds its last 4 bytes as a 32-bit word); each item reads its head's chunk once
 * per query block of KVB_ATTB_QBLOCK queries, as the kernel does. Errors: KVB_ENULL, KVB_EINVAL
 * (a size zero or overflowing), KVB_ENOMEM. */
int kvb_attention_batch_read_probe(int f32, size_t H, size_t n, size_t nq, size_t d, size_t dv,
                                   const void *K, const void *V, int threads, uint64_t *sink);

#endif

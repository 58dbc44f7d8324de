/* gpu_limits.h — what the kernels (k_*.cl) still compute in 32-bit `int`, checked before a launch.
 * Every offset into a buffer is a kvb_idx (64-bit) in the kernels, so n·d·heads·queries may pass
 * 2^31; what stays `int` is each kernel argument (a size: n, d, H, kk, chunk, nsplit, ...), the
 * work-group id (CUDA's gridDim.x is also limited to 2^31 − 1), a few head-local products
 * (SubGen's h·cap + i, m′·t, stream positions n0 + step) and the token indices stored as int (the
 * BalanceKV walk's cur[], the weighted query's idx[]). These functions say whether a shape keeps
 * all of those below 2^31 (and every byte count below SIZE_MAX); gpu_ops.c calls them and
 * tests/test_gpu_index64.c checks them at shapes beyond 32-bit offsets. Pure functions: no device. */
#ifndef KVB_GPU_LIMITS_H
#define KVB_GPU_LIMITS_H

#include <stddef.h>

/* Each returns 1 when the shape fits, 0 otherwise (a size 0 is the caller's own check). */
int kvb_gpu_fits_attention(size_t H, size_t n, size_t dk, size_t dv, size_t nq, size_t chunk);
int kvb_gpu_fits_gather(size_t H, size_t n, size_t dk, size_t dv, size_t kk);
int kvb_gpu_fits_wquery(size_t H, size_t n, size_t dk, size_t dv, size_t kk, size_t nq);
int kvb_gpu_fits_bkvb(size_t H, size_t n, size_t d, size_t dv, size_t b);
/* SubGen: n_after = tokens per head after the update, cap = clusters per head the state holds. */
int kvb_gpu_fits_subgen(size_t H, size_t dk, size_t dv, size_t t, size_t s, size_t cap, size_t n_after,
                        size_t nt, size_t nq);

/* The device-resident state (gpu_resident.h, k_resident.cl, k_decode_coop.cl, k_subgen_batch.cl,
 * k_bkvb_gram.cl). A KV cache of Hkv heads with row capacity cap: the int row stride ld of every
 * kernel reading it and the rows (< cap) stored as int in block BalanceKV's lists; Hkv·cap and
 * Hkv·cap·d are kvb_idx in the kernels (fills and copies take the count as int factors). */
int kvb_gpu_fits_kvcache(size_t Hkv, size_t cap, size_t dk, size_t dv);
/* The cooperative decode over n tokens of a cache with row stride ld >= n: H query heads (a
 * multiple of Hkv), nq queries, chunk tokens per split (int group ids nsplit·npack·Hkv·nq and
 * H·nq of the combine; the partials). */
int kvb_gpu_fits_coop(size_t Hkv, size_t H, size_t n, size_t ld, size_t dk, size_t dv, size_t nq, size_t chunk);
/* SubGen's batched update: chunks of `chunk` tokens, kvb_subgen_prep's int group id H·⌈chunk/16⌉
 * (on top of kvb_gpu_fits_subgen). */
int kvb_gpu_fits_subgen_batch(size_t H, size_t chunk);

#endif

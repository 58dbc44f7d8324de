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

#endif

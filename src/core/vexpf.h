/* vexpf.h — expf on many floats at once, returning exactly the C library's bits.
 *
 * Why bit-identical: block BalanceKV's walk compares u_j with ½ − γ·Σ K_ij s_i, and exact decode
 * promises the same result on every instruction set; a faster exp that differs in one bit could
 * flip a sign or a last digit. glibc's expf on x86-64 (2.28 and later, with FMA) is a short
 * double-precision algorithm; the vector versions here repeat its operations lane by lane (AVX2:
 * 8 lanes, AVX-512: 16), send the library's special inputs (|x| >= 88, Inf, NaN) to the library
 * itself, and are used only after a self-test against the library's expf at first use
 * (kvb_vexpf_level). build/bench/bench_balancekv_block --exp-exhaustive compares all 2^32 floats
 * (at the level $KVBOUND_SIMD allows). */
#ifndef KVB_VEXPF_H
#define KVB_VEXPF_H

#include <stddef.h>
#include <stdint.h>

/* The SIMD level (simd.h) whose vector expf passed its self-test and is to be used now, or 0:
 * use the C library's expf. Cheap after the first call of each level. */
int kvb_vexpf_level(void);

/* x[i] = expf(x[i]), i < n, with the vector path of level lvl (0: the library, one by one). */
void kvb_vexpf_inplace(float *x, size_t n, int lvl);

/* g[i] = expf(ks·g[i] − β)·(gv[i] + c₀), each operation rounded to float as written (block
 * BalanceKV's kernel row; one pass instead of three). */
void kvb_vexpf_krow(float *g, const float *gv, float ks, float beta, float c0, size_t n, int lvl);

/* Compares the vector path of the current SIMD level with the library's expf on the bit
 * patterns first + k·stride (mod 2^32), k < count: the number that differ, or (size_t)−1 when
 * there is no vector path. */
size_t kvb_vexpf_check(uint64_t first, uint64_t count, uint64_t stride);

#endif

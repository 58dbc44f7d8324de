/* block_gram.h — the upper-triangle Gram products of block BalanceKV's blocks (keys and values),
 * with one summation order on every CPU.
 *
 * Why not BLAS. The walk of 003 App. B needs K_ij for i < j of a b×b block (b = 64…256, inner
 * dimension d = 128): small products where OpenBLAS's SYRK ran at 1.3–1.7× the time of the same
 * flops in a large SGEMM, and whose rounding depends on the kernel OpenBLAS picks for the CPU.
 * Here every entry is defined as ONE chain of fused multiply-adds in the order a = 0 … k−1,
 *     G_ij = fma(x_{k−1,i}, x_{k−1,j}, … fma(x_{1,i}, x_{1,j}, fma(x_{0,i}, x_{0,j}, 0)) …),
 * and the AVX-512, AVX2 and portable versions all compute exactly that (each entry is its own
 * accumulator lane; no reassociation), so the result is the same on every machine and for every
 * $KVBOUND_SIMD (tests/test_block_gram.c compares them bit for bit and against a long-double
 * reference within the fma chain's error bound).
 *
 * Layout. A block of len tokens is first packed column-wise: token i's vector becomes column i of
 * P (k rows, leading dimension ld = kvb_gram_ld(len), columns [len, ld) zero), so the
 * products run over contiguous columns. G has kvb_gram_rows(len) rows and leading dimension
 * ldg >= ld; on return G[i·ldg + j] holds G_ij for every 0 <= i < j < len (the upper triangle,
 * so that for a fixed i the entries of consecutive j are contiguous: the walk sums column j of
 * many rows side by side). Other entries of those rows (j <= i, up to column ld) are
 * overwritten with unspecified values. */
#ifndef KVB_BLOCK_GRAM_H
#define KVB_BLOCK_GRAM_H

#include <stddef.h>

/* Leading dimension of a packed block of len tokens (at least len rounded up to 32) and the rows
 * G needs. */
size_t kvb_gram_ld(size_t len);
size_t kvb_gram_rows(size_t len);

/* P[a·ld + i] = mul[i]·rows[i][a] (mul != NULL, one rounded product) or rows[i][a], for i < len,
 * a < k; P[a·ld + i] = 0 for len <= i < ld. With sum != NULL also sum[a] += rows[i][a] for
 * i = 0, 1, …, len − 1 in that order (the raw rows, before mul). */
void kvb_gram_pack_f32(size_t len, size_t k, const float *const *rows, const float *mul,
                       float *sum, float *P, size_t ld);
void kvb_gram_pack_f64(size_t len, size_t k, const double *const *rows, const double *mul,
                       double *sum, double *P, size_t ld);

/* P[a·ld + i] −= m[a] for i < len (the padding stays 0): centering after packing, so the rows
 * are read once for both their sum and their copy. */
void kvb_gram_center_f32(size_t len, size_t k, float *P, size_t ld, const float *m);
void kvb_gram_center_f64(size_t len, size_t k, double *P, size_t ld, const double *m);

/* Memory to bring towards the core while the products run (a hint; no effect on any value):
 * nrows rows of row_bytes each, e.g. the next block's keys, which would otherwise be read from
 * memory only when that block starts. NULL: none. */
typedef struct {
  const void *const *rows;
  size_t nrows, row_bytes;
} kvb_gram_pf;

/* G_ij (0 <= i < j < len) of the packed block P (k × ld), as defined above; pf may be NULL. */
void kvb_gram_upper_f32(size_t len, size_t k, const float *P, size_t ld, float *G, size_t ldg,
                        const kvb_gram_pf *pf);
void kvb_gram_upper_f64(size_t len, size_t k, const double *P, size_t ld, double *G, size_t ldg,
                        const kvb_gram_pf *pf);

#endif

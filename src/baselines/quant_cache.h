/* quant_cache.h — quantized KV caches: KIVI (`kivi`) and llama.cpp's block formats applied to the
 * cache (`q8_0`, `q4_0`). Unlike the eviction baselines (baselines.h), which keep a subset of
 * whole tokens exactly, these keep EVERY token, each stored in fewer bits; the field's standard
 * comparison puts the two families side by side at equal bytes (src/README.md, Methods and streams).
 *
 * Bytes as stored. kvbound's full precision is float64: an exact (kept) token costs
 * 8·(d_key + d_value) bytes in every eviction method (method.h). The quantized caches count
 * what they store in the precision they store it: packed b-bit codes (⌈m·b/8⌉ bytes for a group
 * of m codes), their scales and zero points (KIVI: two doubles per group; q8_0/q4_0: one fp16
 * scale per block of 32, as the format has it) and KIVI's full-precision residual window
 * (doubles). Each file states its formula. The query fuses the dequantization into its dot
 * products and its weighted sum of values (quant_attend.h; KIVI §4.2 fuses dequantization into
 * the matrix product the same way), so no dequantized copy is made; its scratch is the n scores,
 * reused between queries and not counted. The memory is the packed store.
 *
 * This header also gives the quantizers themselves (the unit tests check them on hand-computed
 * blocks) and read-back of the dequantized cache. The fault switches (KVB_QB_MUT_*, the
 * `offset` and scale arguments) exist for the methods' mutant tables (method.h, README
 * "Mutants") and are reachable only through them. */
#ifndef KVB_QUANT_CACHE_H
#define KVB_QUANT_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "method.h"

/* ---- llama.cpp's q8_0 and q4_0 blocks (ggml's block_q8_0, block_q4_0) ----
 * A block holds 32 consecutive values: bytes 0–1 the scale d as fp16 (little-endian), then
 * q8_0: 32 int8 codes, x ≈ q·d, d = max|x|/127, q = round(x/d) (half away from zero);
 * q4_0: 16 bytes of 4-bit codes, byte j holding element j in its low nibble and element j + 16
 *       in its high nibble; d = max/−8 where max is the element of largest magnitude with its
 *       sign (the first one on a tie), q = min(15, ⌊x/d + 8.5⌋), x ≈ (q − 8)·d.
 * The codes are computed with the exact quotient d; only the stored scale is rounded to fp16
 * (so dequantization uses fp16(d)). An all-zero block has d = 0 and codes 0 (q8_0) or 8 (q4_0).
 * A row shorter than 32 (`len` < 32) is padded with zeros: a zero changes neither max|x| nor the
 * signed max, and quantizes to exactly 0, so the `len` real values get the codes they would get
 * in a full block; the padded block is stored whole. */
#define KVB_QBLOCK 32
#define KVB_Q8_0_BYTES 34
#define KVB_Q4_0_BYTES 18

/* Fault switches (mutants only). */
#define KVB_QB_MUT_TRUNC 1u       /* q8_0: codes truncated toward zero instead of rounded */
#define KVB_QB_MUT_UNSIGNED_MAX 2u /* q4_0: d = |max|/−8, the sign of max dropped */
#define KVB_QB_MUT_NIBBLE_SWAP 4u /* q4_0: element j packed in the high nibble, j + 16 in the low */

/* Quantize x[0..len) (1 ≤ len ≤ 32) into blk. d_exact (may be NULL) receives the unrounded scale.
 * KVB_ERANGE (blk untouched, message set) when fp16(d) would be infinite: q8_0 needs
 * max|x| < 127·65520, q4_0 max|x| < 8·65520. Inputs must be finite. */
int kvb_q8_0_quantize_block(const double *x, size_t len, unsigned flags, uint8_t *blk,
                            double *d_exact);
int kvb_q4_0_quantize_block(const double *x, size_t len, unsigned flags, uint8_t *blk,
                            double *d_exact);
/* The scale stored in a block (fp16 → double). */
double kvb_qblock_scale(const uint8_t *blk);
/* Dequantize the 32 values of a block with scale d (the format: d = kvb_qblock_scale(blk)):
 * q8_0 x_i = q_i·d; q4_0 x_i = (q_i − offset)·d (the format: offset = 8). */
void kvb_q8_0_dequantize_block(const uint8_t *blk, double d, double *x);
void kvb_q4_0_dequantize_block(const uint8_t *blk, double d, int offset, double *x);

/* ---- KIVI's asymmetric b-bit quantizer (KIVI §3.1) ----
 * For m values x_j = x[j·stride]: zero point z = min_j x_j, scale s = (max − min)/(2^b − 1),
 * code c_j = round((x_j − z)/s) ∈ [0, 2^b − 1] (half up), x_j ≈ c_j·s + z, so |x_j − x̂_j| ≤ s/2
 * (up to one rounding of the double arithmetic). s = 0 (all equal) gives codes 0 and x̂ = z
 * exactly. Codes are packed little-endian within bytes, code j at bits [j·b mod 8, +b) of byte
 * ⌊j·b/8⌋ (b ∈ {2, 4} divides 8, so no code straddles bytes); ⌈m·b/8⌉ bytes. */
#define KVB_ASYM_MUT_SCALE_2B 1u /* s = (max − min)/2^b: the top code is never reached */
void kvb_asym_quantize(const double *x, size_t m, size_t stride, unsigned bits, unsigned flags,
                       double *zero, double *scale, uint8_t *packed);
unsigned kvb_asym_code(const uint8_t *packed, size_t j, unsigned bits);
size_t kvb_asym_packed_bytes(size_t m, unsigned bits);

/* ---- read-back (tests, props) ----
 * For a kivi, q8_0 or q4_0 method: writes the cache as the query sees it, token by token in
 * stream order — K (n × d_key) and V (n × d_value), dequantized where the token is quantized
 * and exact where it is held in full precision — and returns n (the tokens absorbed). Writes
 * nothing when n > cap, and returns 0 for any other method. K or V may be NULL. */
size_t kvb_quant_cache_read(const kvb_method *m, double *K, double *V, size_t cap);

/* KIVI's layout now: key tokens quantized (a multiple of the group size G) and held in the
 * full-precision key residual; value tokens quantized and in the value residual. Returns 0 for
 * another method (outputs untouched), 1 for kivi. Any pointer may be NULL. */
int kvb_kivi_layout(const kvb_method *m, size_t *key_quantized, size_t *key_residual,
                    size_t *value_quantized, size_t *value_residual);

/* ---- internal: the per-file halves of kvb_quant_cache_read (kivi.c, q_block_cache.c) ---- */
size_t kvb_kivi_read_(const kvb_method *m, double *K, double *V, size_t cap);
size_t kvb_qblock_read_(const kvb_method *m, double *K, double *V, size_t cap);

#endif

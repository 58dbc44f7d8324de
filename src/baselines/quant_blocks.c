/* quant_blocks.c — the quantizers of quant_cache.h: llama.cpp's q8_0 and q4_0 blocks (the
 * format's definition, written from its description; no code of llama.cpp's) and KIVI's
 * asymmetric b-bit group quantizer (KIVI §3.1). */
#include "fp16.h"
#include "kvb_error.h"
#include "quant_cache.h"

#include <math.h>
#include <string.h>

static void put_scale(uint8_t *blk, uint16_t h) { blk[0] = (uint8_t)(h & 0xFF), blk[1] = (uint8_t)(h >> 8); }

double kvb_qblock_scale(const uint8_t *blk) {
  return kvb_fp16_to_double((uint16_t)(blk[0] | (blk[1] << 8)));
}

/* x padded with zeros to a full block (quant_cache.h: zeros change neither maximum). */
static void pad_block(const double *x, size_t len, double *out) {
  for (size_t i = 0; i < KVB_QBLOCK; i++) out[i] = i < len ? x[i] : 0.0;
}

int kvb_q8_0_quantize_block(const double *x, size_t len, unsigned flags, uint8_t *blk,
                            double *d_exact) {
  double y[KVB_QBLOCK], amax = 0;
  pad_block(x, len, y);
  for (size_t i = 0; i < KVB_QBLOCK; i++) amax = fmax(amax, fabs(y[i]));
  double d = amax / 127.0;
  uint16_t h = kvb_fp16_from_double(d);
  if ((h & 0x7C00u) == 0x7C00u)
    return KVB_ERROR(KVB_ERANGE, "q8_0: a block's largest |x| = %g gives the scale max|x|/127 = %g, "
                     "beyond fp16's range (65504): the format cannot store it (|x| < %g needed)",
                     amax, d, 127.0 * 65520.0);
  put_scale(blk, h);
  for (size_t i = 0; i < KVB_QBLOCK; i++) {
    /* over the unrounded scale (only the stored one is fp16), halves away from zero: llama.cpp's
     * quantize_row_q8_0_ref (ggml/src/ggml-quants.c) takes roundf(x · (1/d)) with d = amax/127
     * (tests/test_quant_cache.c, block C, pins both at a .5 boundary of the fp16 scale) */
    double t = d > 0 ? y[i] / d : 0.0; /* |t| ≤ 127 */
    double q = (flags & KVB_QB_MUT_TRUNC) ? trunc(t) : round(t);
    q = fmin(127.0, fmax(-127.0, q));
    blk[2 + i] = (uint8_t)(int8_t)q;
  }
  if (d_exact) *d_exact = d;
  return KVB_OK;
}

void kvb_q8_0_dequantize_block(const uint8_t *blk, double d, double *x) {
  for (size_t i = 0; i < KVB_QBLOCK; i++) x[i] = (double)(int8_t)blk[2 + i] * d;
}

int kvb_q4_0_quantize_block(const double *x, size_t len, unsigned flags, uint8_t *blk,
                            double *d_exact) {
  double y[KVB_QBLOCK], amax = 0, max = 0;
  pad_block(x, len, y);
  for (size_t i = 0; i < KVB_QBLOCK; i++)
    if (fabs(y[i]) > amax) amax = fabs(y[i]), max = y[i]; /* strict: the first on a tie */
  if (flags & KVB_QB_MUT_UNSIGNED_MAX) max = amax;
  double d = max / -8.0;
  uint16_t h = kvb_fp16_from_double(d);
  if ((h & 0x7C00u) == 0x7C00u)
    return KVB_ERROR(KVB_ERANGE, "q4_0: a block's largest |x| = %g gives the scale |max|/8 = %g, "
                     "beyond fp16's range (65504): the format cannot store it (|x| < %g needed)",
                     amax, fabs(d), 8.0 * 65520.0);
  put_scale(blk, h);
  uint8_t q[KVB_QBLOCK];
  for (size_t i = 0; i < KVB_QBLOCK; i++) {
    /* x/d ∈ [−8, 8] (its sign chosen by max's), so x/d + 8.5 ∈ [0.5, 16.5]: the integer part is
     * the floor, 0..16, and 16 (x = −max) is clipped to 15. */
    double t = d != 0 ? y[i] / d + 8.5 : 8.5;
    int qi = (int)t;
    q[i] = (uint8_t)(qi < 0 ? 0 : qi > 15 ? 15 : qi);
  }
  for (size_t j = 0; j < KVB_QBLOCK / 2; j++) {
    uint8_t lo = q[j], hi = q[j + KVB_QBLOCK / 2];
    if (flags & KVB_QB_MUT_NIBBLE_SWAP) lo = hi, hi = q[j];
    blk[2 + j] = (uint8_t)(lo | (hi << 4));
  }
  if (d_exact) *d_exact = d;
  return KVB_OK;
}

void kvb_q4_0_dequantize_block(const uint8_t *blk, double d, int offset, double *x) {
  for (size_t j = 0; j < KVB_QBLOCK / 2; j++) {
    x[j] = (double)((blk[2 + j] & 0x0F) - offset) * d;
    x[j + KVB_QBLOCK / 2] = (double)((blk[2 + j] >> 4) - offset) * d;
  }
}

size_t kvb_asym_packed_bytes(size_t m, unsigned bits) { return (m * bits + 7) / 8; }

unsigned kvb_asym_code(const uint8_t *packed, size_t j, unsigned bits) {
  size_t bit = j * bits;
  return (packed[bit / 8] >> (bit % 8)) & ((1u << bits) - 1u);
}

void kvb_asym_quantize(const double *x, size_t m, size_t stride, unsigned bits, unsigned flags,
                       double *zero, double *scale, uint8_t *packed) {
  double lo = x[0], hi = x[0];
  for (size_t j = 1; j < m; j++) lo = fmin(lo, x[j * stride]), hi = fmax(hi, x[j * stride]);
  double levels = (double)((1u << bits) - 1u);
  double s = (hi - lo) / ((flags & KVB_ASYM_MUT_SCALE_2B) ? levels + 1 : levels);
  /* hi − lo may overflow for finite inputs of opposite signs near 1.8e308; the scale is then
   * taken in halves (s = hi/L − lo/L) so it stays finite. */
  if (!isfinite(s)) s = hi / ((flags & KVB_ASYM_MUT_SCALE_2B) ? levels + 1 : levels) -
                        lo / ((flags & KVB_ASYM_MUT_SCALE_2B) ? levels + 1 : levels);
  memset(packed, 0, kvb_asym_packed_bytes(m, bits));
  for (size_t j = 0; j < m; j++) {
    double t = s > 0 ? round((x[j * stride] - lo) / s) : 0.0;
    if (!(t >= 0)) t = 0; /* also catches an inf − inf NaN, impossible for finite s */
    if (t > levels) t = levels;
    size_t bit = j * bits;
    packed[bit / 8] |= (uint8_t)((unsigned)t << (bit % 8));
  }
  *zero = lo, *scale = s;
}

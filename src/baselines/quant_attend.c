/* quant_attend.c — fused dequantize-and-dot and dequantize-and-axpy (see quant_attend.h). */
#include "quant_attend.h"

#include "fp16.h"
#include "kvb_error.h"
#include "quant_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int kvb_qa_reserve(double **buf, size_t *cap, size_t n, const char *who) {
  if (n <= *cap) return KVB_OK;
  size_t c = *cap ? *cap : 64;
  while (c < n) c *= 2;
  double *b = realloc(*buf, c * sizeof *b);
  if (!b) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory for the scores of %zu tokens", who, n);
  *buf = b, *cap = c;
  return KVB_OK;
}

/* A block's fp16 scale as a double: the bits of a normal fp16 number moved into a double's
 * fields (exactly kvb_fp16_to_double's value, without its ldexp); zero, subnormals, Inf and NaN
 * through kvb_fp16_to_double. */
static inline double scale_of(const uint8_t *blk) {
  uint16_t h = (uint16_t)(blk[0] | (blk[1] << 8));
  unsigned ex = (h >> 10) & 0x1Fu;
  if (ex == 0 || ex == 31) return kvb_fp16_to_double(h);
  uint64_t bits = ((uint64_t)(h & 0x8000u) << 48) | ((uint64_t)(ex + 1008u) << 52) |
                  ((uint64_t)(h & 0x3FFu) << 42);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static inline double blk_scale(const uint8_t *row, size_t b, size_t bs, const double *dex) {
  return dex ? dex[b] : scale_of(row + b * bs);
}

/* ---- q8_0 ---- */

void kvb_qa_q8_0_scores(size_t n, size_t d, const uint8_t *K, size_t rb, const double *dex,
                        size_t nb, const double *q, double scale, double *sc) {
  const size_t bs = KVB_Q8_0_BYTES;
  size_t i = 0;
  /* four tokens at a time: four independent running sums, each in kvb_dot's order */
  for (; i + 4 <= n; i += 4) {
    const uint8_t *r0 = K + i * rb, *r1 = r0 + rb, *r2 = r1 + rb, *r3 = r2 + rb;
    const double *x0 = dex ? dex + i * nb : NULL, *x1 = dex ? x0 + nb : NULL,
                 *x2 = dex ? x1 + nb : NULL, *x3 = dex ? x2 + nb : NULL;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
      size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK;
      double d0 = blk_scale(r0, b, bs, x0), d1 = blk_scale(r1, b, bs, x1),
             d2 = blk_scale(r2, b, bs, x2), d3 = blk_scale(r3, b, bs, x3);
      const int8_t *c0 = (const int8_t *)(r0 + b * bs + 2), *c1 = (const int8_t *)(r1 + b * bs + 2),
                   *c2 = (const int8_t *)(r2 + b * bs + 2), *c3 = (const int8_t *)(r3 + b * bs + 2);
      const double *qq = q + lo;
      for (size_t j = 0; j < len; j++) {
        double qj = qq[j];
        s0 += ((double)c0[j] * d0) * qj;
        s1 += ((double)c1[j] * d1) * qj;
        s2 += ((double)c2[j] * d2) * qj;
        s3 += ((double)c3[j] * d3) * qj;
      }
    }
    sc[i] = scale * s0, sc[i + 1] = scale * s1, sc[i + 2] = scale * s2, sc[i + 3] = scale * s3;
  }
  for (; i < n; i++) {
    const uint8_t *r = K + i * rb;
    const double *x = dex ? dex + i * nb : NULL;
    double s = 0;
    for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
      size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK;
      double dd = blk_scale(r, b, bs, x);
      const int8_t *c = (const int8_t *)(r + b * bs + 2);
      for (size_t j = 0; j < len; j++) s += ((double)c[j] * dd) * q[lo + j];
    }
    sc[i] = scale * s;
  }
}

void kvb_qa_q8_0_axpy(size_t d, const uint8_t *row, const double *dex, double e, double *z) {
  for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
    size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK;
    double dd = blk_scale(row, b, KVB_Q8_0_BYTES, dex);
    const int8_t *c = (const int8_t *)(row + b * KVB_Q8_0_BYTES + 2);
    double *zz = z + lo;
    for (size_t j = 0; j < len; j++) zz[j] += e * ((double)c[j] * dd);
  }
}

/* ---- q4_0: element j < 16 in the low nibble of byte j, element j + 16 in its high nibble ---- */

static inline int q4_code(const uint8_t *codes, size_t j) {
  return j < KVB_QBLOCK / 2 ? (codes[j] & 0x0F) : (codes[j - KVB_QBLOCK / 2] >> 4);
}

void kvb_qa_q4_0_scores(size_t n, size_t d, const uint8_t *K, size_t rb, const double *dex,
                        size_t nb, int off, const double *q, double scale, double *sc) {
  const size_t bs = KVB_Q4_0_BYTES, H = KVB_QBLOCK / 2;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint8_t *r0 = K + i * rb, *r1 = r0 + rb, *r2 = r1 + rb, *r3 = r2 + rb;
    const double *x0 = dex ? dex + i * nb : NULL, *x1 = dex ? x0 + nb : NULL,
                 *x2 = dex ? x1 + nb : NULL, *x3 = dex ? x2 + nb : NULL;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
      size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK;
      double d0 = blk_scale(r0, b, bs, x0), d1 = blk_scale(r1, b, bs, x1),
             d2 = blk_scale(r2, b, bs, x2), d3 = blk_scale(r3, b, bs, x3);
      const uint8_t *c0 = r0 + b * bs + 2, *c1 = r1 + b * bs + 2, *c2 = r2 + b * bs + 2,
                    *c3 = r3 + b * bs + 2;
      const double *qq = q + lo;
      size_t lenlo = len < H ? len : H;
      for (size_t j = 0; j < lenlo; j++) { /* low nibbles: elements 0..15 */
        double qj = qq[j];
        s0 += ((double)((c0[j] & 0x0F) - off) * d0) * qj;
        s1 += ((double)((c1[j] & 0x0F) - off) * d1) * qj;
        s2 += ((double)((c2[j] & 0x0F) - off) * d2) * qj;
        s3 += ((double)((c3[j] & 0x0F) - off) * d3) * qj;
      }
      for (size_t j = H; j < len; j++) { /* high nibbles: elements 16..31 */
        double qj = qq[j];
        s0 += ((double)((c0[j - H] >> 4) - off) * d0) * qj;
        s1 += ((double)((c1[j - H] >> 4) - off) * d1) * qj;
        s2 += ((double)((c2[j - H] >> 4) - off) * d2) * qj;
        s3 += ((double)((c3[j - H] >> 4) - off) * d3) * qj;
      }
    }
    sc[i] = scale * s0, sc[i + 1] = scale * s1, sc[i + 2] = scale * s2, sc[i + 3] = scale * s3;
  }
  for (; i < n; i++) {
    const uint8_t *r = K + i * rb;
    const double *x = dex ? dex + i * nb : NULL;
    double s = 0;
    for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
      size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK;
      double dd = blk_scale(r, b, bs, x);
      const uint8_t *c = r + b * bs + 2;
      for (size_t j = 0; j < len; j++) s += ((double)(q4_code(c, j) - off) * dd) * q[lo + j];
    }
    sc[i] = scale * s;
  }
}

void kvb_qa_q4_0_axpy(size_t d, const uint8_t *row, const double *dex, int off, double e,
                      double *z) {
  const size_t H = KVB_QBLOCK / 2;
  double x[16];
  for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
    size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK, lenlo = len < H ? len : H;
    double dd = blk_scale(row, b, KVB_Q4_0_BYTES, dex);
    /* e·((c − offset)·d) for the 16 codes: the reference's two products, tabled */
    for (int c = 0; c < 16; c++) x[c] = e * ((double)(c - off) * dd);
    const uint8_t *c = row + b * KVB_Q4_0_BYTES + 2;
    double *zz = z + lo;
    for (size_t j = 0; j < lenlo; j++) zz[j] += x[c[j] & 0x0F];
    for (size_t j = H; j < len; j++) zz[j] += x[c[j - H] >> 4];
  }
}

/* ---- KIVI (b ∈ {2, 4}: kvb_asym_code's packing, code j at bits [j·b mod 8, +b) of byte j·b/8) ----
 * A group shares (z, s), so its numbers take only 2^b values: x_c = c·s + z is formed once per
 * group into a table (the same expression, so the same bits), and the products that do not
 * change along a group are tabled too — e·x_c for a value row (its weight e is fixed), x_c·q_ch
 * for a key channel (fixed q_ch over its G tokens) — each again the very product the reference
 * forms. The loops then load a table entry per code instead of converting and multiplying. */

static inline unsigned acode(const uint8_t *p, size_t j, unsigned bits) {
  size_t bit = j * bits;
  return (p[bit / 8] >> (bit % 8)) & ((1u << bits) - 1u);
}

/* x_c = c·s + z for every code c (zz = 0 under no_zero_point, as the reference dequantizes). */
static inline void asym_table(double ss, double zz, unsigned bits, double *x) {
  for (unsigned c = 0; c < (1u << bits); c++) x[c] = (double)c * ss + zz;
}

/* One row's dot, its groups in order; `bits` a constant in each caller below. */
static inline double asym_row_dot(const kvb_qa_asym_rows *r, size_t i, const double *q,
                                  unsigned bits) {
  double s = 0, x[16];
  const uint8_t *row = r->c + i * r->row_bytes;
  for (size_t g = 0; g < r->ng; g++) {
    size_t lo = g * r->G, m = r->d - lo < r->G ? r->d - lo : r->G;
    asym_table(r->s[i * r->ng + g], r->no_zero ? 0.0 : r->z[i * r->ng + g], bits, x);
    const uint8_t *c = row + g * r->gbytes;
    for (size_t j = 0; j < m; j++) s += x[acode(c, j, bits)] * q[lo + j];
  }
  return s;
}

void kvb_qa_asym_rows_scores(const kvb_qa_asym_rows *r, size_t n, const double *q, double scale,
                             double *sc) {
  if (r->bits == 2)
    for (size_t i = 0; i < n; i++) sc[i] = scale * asym_row_dot(r, i, q, 2);
  else if (r->bits == 4)
    for (size_t i = 0; i < n; i++) sc[i] = scale * asym_row_dot(r, i, q, 4);
  else
    for (size_t i = 0; i < n; i++) sc[i] = scale * asym_row_dot(r, i, q, r->bits);
}

static inline void asym_row_axpy(const kvb_qa_asym_rows *r, size_t i, double e, double *z,
                                 unsigned bits) {
  const uint8_t *row = r->c + i * r->row_bytes;
  double x[16];
  for (size_t g = 0; g < r->ng; g++) {
    size_t lo = g * r->G, m = r->d - lo < r->G ? r->d - lo : r->G;
    asym_table(r->s[i * r->ng + g], r->no_zero ? 0.0 : r->z[i * r->ng + g], bits, x);
    for (unsigned c = 0; c < (1u << bits); c++) x[c] = e * x[c]; /* e·x_c, the reference's product */
    const uint8_t *c = row + g * r->gbytes;
    double *zo = z + lo;
    for (size_t j = 0; j < m; j++) zo[j] += x[acode(c, j, bits)];
  }
}

void kvb_qa_asym_rows_axpy(const kvb_qa_asym_rows *r, size_t i, double e, double *z) {
  if (r->bits == 2) asym_row_axpy(r, i, e, z, 2);
  else if (r->bits == 4) asym_row_axpy(r, i, e, z, 4);
  else asym_row_axpy(r, i, e, z, r->bits);
}

/* Channel-major keys: the G tokens of a group accumulate side by side, channel after channel —
 * each token's running sum still takes its channels in order 0..d−1, as kvb_dot does. */
static inline void asym_chan(size_t ngroups, size_t G, size_t d, size_t gbytes, unsigned bits,
                             int no_zero, const double *z, const double *s, const uint8_t *c,
                             const double *q, double scale, double *sc) {
  double x[16];
  for (size_t g = 0; g < ngroups; g++) {
    double *acc = sc + g * G;
    for (size_t j = 0; j < G; j++) acc[j] = 0;
    for (size_t ch = 0; ch < d; ch++) {
      asym_table(s[g * d + ch], no_zero ? 0.0 : z[g * d + ch], bits, x);
      double qc = q[ch];
      for (unsigned k = 0; k < (1u << bits); k++) x[k] = x[k] * qc; /* x_c·q_ch, as kvb_dot */
      const uint8_t *p = c + (g * d + ch) * gbytes;
      for (size_t j = 0; j < G; j++) acc[j] += x[acode(p, j, bits)];
    }
    for (size_t j = 0; j < G; j++) acc[j] = scale * acc[j];
  }
}

void kvb_qa_asym_chan_scores(size_t ngroups, size_t G, size_t d, size_t gbytes, unsigned bits,
                             int no_zero, const double *z, const double *s, const uint8_t *c,
                             const double *q, double scale, double *sc) {
  if (bits == 2) asym_chan(ngroups, G, d, gbytes, 2, no_zero, z, s, c, q, scale, sc);
  else if (bits == 4) asym_chan(ngroups, G, d, gbytes, 4, no_zero, z, s, c, q, scale, sc);
  else asym_chan(ngroups, G, d, gbytes, bits, no_zero, z, s, c, q, scale, sc);
}

/* ---- the softmax-weighted sum (kvb_attention_exact's exact_pass at vscale = 1) ---- */

int kvb_qa_softmax_sum(size_t n, size_t dv, const double *sc, kvb_qa_value_fn value, void *ctx,
                       double *z) {
  if (n == 0) return 1;
  double mx = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(sc[i])) return 1;
    if (sc[i] > mx) mx = sc[i];
  }
  double den = 0;
  memset(z, 0, dv * sizeof *z);
  for (size_t i = 0; i < n; i++) {
    double e = exp(sc[i] - mx);
    den += e;
    value(ctx, i, e, z);
  }
  int finite = 1;
  for (size_t j = 0; j < dv; j++) {
    z[j] /= den;
    finite &= isfinite(z[j]);
  }
  return finite ? 0 : 1;
}

/* quant_attend.c — fused dequantize-and-dot and dequantize-and-axpy (see quant_attend.h).
 *
 * Two versions of every kernel: portable C (the running sums of four tokens side by side) and,
 * on x86-64, AVX2 (kvb_simd_level; $KVBOUND_SIMD=generic forces the portable one). The AVX2
 * kernels keep each number's arithmetic and each sum's order exactly as the portable ones —
 * a score's lanes are tokens, each lane still adding its channels 0..d−1 in order, and a value
 * sum's lanes are channels, each still adding its tokens in order; mul and add stay separate
 * instructions (no FMA: target("avx2") does not enable it and -std=c11 does not contract) — so
 * both give the same bits (tests/test_quant_fused.c compares them with memcmp). */
#include "quant_attend.h"

#include "fp16.h"
#include "kvb_error.h"
#include "quant_cache.h"
#include "simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define QA_AVX2 1
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))
#endif

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* clang would contract a·b + c where the target has FMA */
#endif

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

/* The block whose scale block b uses: b itself (mutant KVB_QA_MUT_SCALE_NEXT: the next one). */
static inline size_t sblk(size_t b, size_t nb, unsigned mut) {
  return (mut & KVB_QA_MUT_SCALE_NEXT) ? (b + 1) % nb : b;
}

static inline double blk_scale(const uint8_t *row, size_t b, size_t bs, const double *dex) {
  return dex ? dex[b] : scale_of(row + b * bs);
}

static int use_avx2(void) {
#ifdef QA_AVX2
  return kvb_simd_level() >= KVB_SIMD_AVX2;
#else
  return 0;
#endif
}

#ifdef QA_AVX2
/* ---- AVX2: scores of 16 tokens at a time (four vectors of four token lanes) ----
 * The 32 codes of one block of four rows, transposed so that the four codes of element j lie
 * next to each other (t[4j .. 4j+3] = rows 0..3): two byte interleaves, then the 128-bit
 * halves put in element order. */
AVX2 static inline void tr4(__m256i a0, __m256i a1, __m256i a2, __m256i a3, int8_t *t) {
  __m256i l01 = _mm256_unpacklo_epi8(a0, a1), h01 = _mm256_unpackhi_epi8(a0, a1);
  __m256i l23 = _mm256_unpacklo_epi8(a2, a3), h23 = _mm256_unpackhi_epi8(a2, a3);
  __m256i u0 = _mm256_unpacklo_epi16(l01, l23); /* j 0..3 | 16..19 */
  __m256i u1 = _mm256_unpackhi_epi16(l01, l23); /* j 4..7 | 20..23 */
  __m256i u2 = _mm256_unpacklo_epi16(h01, h23); /* j 8..11 | 24..27 */
  __m256i u3 = _mm256_unpackhi_epi16(h01, h23); /* j 12..15 | 28..31 */
  _mm256_storeu_si256((__m256i *)(t + 0), _mm256_permute2x128_si256(u0, u1, 0x20));
  _mm256_storeu_si256((__m256i *)(t + 32), _mm256_permute2x128_si256(u2, u3, 0x20));
  _mm256_storeu_si256((__m256i *)(t + 64), _mm256_permute2x128_si256(u0, u1, 0x31));
  _mm256_storeu_si256((__m256i *)(t + 96), _mm256_permute2x128_si256(u2, u3, 0x31));
}

/* Four signed bytes → four doubles. */
AVX2 static inline __m256d cvt4(const int8_t *p) {
  int32_t w;
  memcpy(&w, p, 4);
  return _mm256_cvtepi32_pd(_mm_cvtepi8_epi32(_mm_cvtsi32_si128(w)));
}

/* A q4_0 block's 16 code bytes as 32 signed bytes code − off in element order (j < 16 the low
 * nibble of byte j, j ≥ 16 the high nibble of byte j − 16; mutant KVB_QA_MUT_NIBBLE_INTERLEAVE:
 * element 2k the low and 2k + 1 the high nibble of byte k). */
AVX2 static inline __m256i q4_codes(const uint8_t *c, int off, unsigned mut) {
  __m128i b = _mm_loadu_si128((const __m128i *)c), m = _mm_set1_epi8(0x0F);
  __m128i lo = _mm_and_si128(b, m), hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
  if (mut & KVB_QA_MUT_NIBBLE_INTERLEAVE) {
    __m128i x = _mm_unpacklo_epi8(lo, hi), y = _mm_unpackhi_epi8(lo, hi);
    lo = x, hi = y;
  }
  __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  return _mm256_sub_epi8(v, _mm256_set1_epi8((char)off));
}

/* Rows r..r+15 of K: sc[r + t] = scale·Σ_j (c_tj·d_t)·q_j, j in order. q4: 0 for q8_0. */
AVX2 static void scores16(const uint8_t *K, size_t rb, size_t bs, const double *dex, size_t nb,
                          size_t d, int q4, int off, unsigned mut, const double *q, double scale,
                          size_t r, double *sc) {
  int8_t t[4][128];
  __m256d s[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(),
                  _mm256_setzero_pd()};
  for (size_t b = 0; b * KVB_QBLOCK < d; b++) {
    size_t sb = sblk(b, nb, mut);
    __m256d D[4];
    for (int g = 0; g < 4; g++) {
      const uint8_t *rows[4];
      double dd[4];
      __m256i a[4];
      for (int u = 0; u < 4; u++) {
        size_t i = r + (size_t)(4 * g + u);
        rows[u] = K + i * rb + b * bs + 2;
        dd[u] = dex ? dex[i * nb + sb] : scale_of(K + i * rb + sb * bs);
        a[u] = q4 ? q4_codes(rows[u], off, mut) : _mm256_loadu_si256((const __m256i *)rows[u]);
      }
      D[g] = _mm256_set_pd(dd[3], dd[2], dd[1], dd[0]);
      tr4(a[0], a[1], a[2], a[3], t[g]);
    }
    const double *qq = q + b * KVB_QBLOCK;
    for (int j = 0; j < KVB_QBLOCK; j++) {
      __m256d Q = _mm256_set1_pd(qq[j]);
      s[0] = _mm256_add_pd(s[0], _mm256_mul_pd(_mm256_mul_pd(cvt4(t[0] + 4 * j), D[0]), Q));
      s[1] = _mm256_add_pd(s[1], _mm256_mul_pd(_mm256_mul_pd(cvt4(t[1] + 4 * j), D[1]), Q));
      s[2] = _mm256_add_pd(s[2], _mm256_mul_pd(_mm256_mul_pd(cvt4(t[2] + 4 * j), D[2]), Q));
      s[3] = _mm256_add_pd(s[3], _mm256_mul_pd(_mm256_mul_pd(cvt4(t[3] + 4 * j), D[3]), Q));
    }
  }
  __m256d S = _mm256_set1_pd(scale);
  for (int g = 0; g < 4; g++) _mm256_storeu_pd(sc + r + 4 * (size_t)g, _mm256_mul_pd(S, s[g]));
}

/* z[0..d) += Σ_i e_i·((c_ij·d_i)) for rows 0..n−1 in order: per block, its 32 sums held in
 * eight vectors of four channel lanes while the rows go by. */
AVX2 static void values_blocks(size_t n, size_t d, const uint8_t *V, size_t rb, size_t bs,
                               const double *dex, size_t nb, int q4, int off, unsigned mut,
                               const double *e, double *z) {
  for (size_t b = 0; b * KVB_QBLOCK < d; b++) {
    size_t sb = sblk(b, nb, mut);
    double *zb = z + b * KVB_QBLOCK;
    __m256d Z[8];
    for (int k = 0; k < 8; k++) Z[k] = _mm256_loadu_pd(zb + 4 * k);
    for (size_t i = 0; i < n; i++) {
      const uint8_t *row = V + i * rb;
      __m256d E = _mm256_set1_pd(e[i]),
              DD = _mm256_set1_pd(dex ? dex[i * nb + sb] : scale_of(row + sb * bs));
      int8_t c[32];
      if (q4) _mm256_storeu_si256((__m256i *)c, q4_codes(row + b * bs + 2, off, mut));
      else memcpy(c, row + b * bs + 2, 32);
      for (int k = 0; k < 8; k++)
        Z[k] = _mm256_add_pd(Z[k], _mm256_mul_pd(E, _mm256_mul_pd(cvt4(c + 4 * k), DD)));
    }
    for (int k = 0; k < 8; k++) _mm256_storeu_pd(zb + 4 * k, Z[k]);
  }
}
#endif

/* ---- q8_0 ---- */

void kvb_qa_q8_0_scores(size_t n, size_t d, const uint8_t *K, size_t rb, const double *dex,
                        size_t nb, const double *q, double scale, unsigned mut, double *sc) {
  const size_t bs = KVB_Q8_0_BYTES;
  size_t i = 0;
#ifdef QA_AVX2
  if (d % KVB_QBLOCK == 0 && use_avx2())
    for (; i + 16 <= n; i += 16) scores16(K, rb, bs, dex, nb, d, 0, 0, mut, q, scale, i, sc);
#endif
  /* four tokens at a time: four independent running sums, each in kvb_dot's order */
  for (; i + 4 <= n; i += 4) {
    const uint8_t *r0 = K + i * rb, *r1 = r0 + rb, *r2 = r1 + rb, *r3 = r2 + rb;
    const double *x0 = dex ? dex + i * nb : NULL, *x1 = dex ? x0 + nb : NULL,
                 *x2 = dex ? x1 + nb : NULL, *x3 = dex ? x2 + nb : NULL;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
      size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK, sb = sblk(b, nb, mut);
      double d0 = blk_scale(r0, sb, bs, x0), d1 = blk_scale(r1, sb, bs, x1),
             d2 = blk_scale(r2, sb, bs, x2), d3 = blk_scale(r3, sb, bs, x3);
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
      double dd = blk_scale(r, sblk(b, nb, mut), bs, x);
      const int8_t *c = (const int8_t *)(r + b * bs + 2);
      for (size_t j = 0; j < len; j++) s += ((double)c[j] * dd) * q[lo + j];
    }
    sc[i] = scale * s;
  }
}

void kvb_qa_q8_0_axpy(size_t d, const uint8_t *row, const double *dex, unsigned mut, double e,
                      double *z) {
  size_t nb = (d + KVB_QBLOCK - 1) / KVB_QBLOCK;
  for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
    size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK;
    double dd = blk_scale(row, sblk(b, nb, mut), KVB_Q8_0_BYTES, dex);
    const int8_t *c = (const int8_t *)(row + b * KVB_Q8_0_BYTES + 2);
    double *zz = z + lo;
    for (size_t j = 0; j < len; j++) zz[j] += e * ((double)c[j] * dd);
  }
}

void kvb_qa_q8_0_values(size_t n, size_t d, const uint8_t *V, size_t rb, const double *dex,
                        size_t nb, const double *e, unsigned mut, double *z) {
#ifdef QA_AVX2
  if (d % KVB_QBLOCK == 0 && use_avx2()) {
    values_blocks(n, d, V, rb, KVB_Q8_0_BYTES, dex, nb, 0, 0, mut, e, z);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) kvb_qa_q8_0_axpy(d, V + i * rb, dex ? dex + i * nb : NULL, mut, e[i], z);
}

/* ---- q4_0: element j < 16 in the low nibble of byte j, element j + 16 in its high nibble ---- */

static inline int q4_code(const uint8_t *codes, size_t j, unsigned mut) {
  if (mut & KVB_QA_MUT_NIBBLE_INTERLEAVE) return j % 2 ? codes[j / 2] >> 4 : codes[j / 2] & 0x0F;
  return j < KVB_QBLOCK / 2 ? (codes[j] & 0x0F) : (codes[j - KVB_QBLOCK / 2] >> 4);
}

void kvb_qa_q4_0_scores(size_t n, size_t d, const uint8_t *K, size_t rb, const double *dex,
                        size_t nb, int off, const double *q, double scale, unsigned mut,
                        double *sc) {
  const size_t bs = KVB_Q4_0_BYTES, H = KVB_QBLOCK / 2;
  size_t i = 0;
#ifdef QA_AVX2
  if (d % KVB_QBLOCK == 0 && use_avx2())
    for (; i + 16 <= n; i += 16) scores16(K, rb, bs, dex, nb, d, 1, off, mut, q, scale, i, sc);
#endif
  for (; i + 4 <= n && !(mut & KVB_QA_MUT_NIBBLE_INTERLEAVE); i += 4) {
    const uint8_t *r0 = K + i * rb, *r1 = r0 + rb, *r2 = r1 + rb, *r3 = r2 + rb;
    const double *x0 = dex ? dex + i * nb : NULL, *x1 = dex ? x0 + nb : NULL,
                 *x2 = dex ? x1 + nb : NULL, *x3 = dex ? x2 + nb : NULL;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
      size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK, sb = sblk(b, nb, mut);
      double d0 = blk_scale(r0, sb, bs, x0), d1 = blk_scale(r1, sb, bs, x1),
             d2 = blk_scale(r2, sb, bs, x2), d3 = blk_scale(r3, sb, bs, x3);
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
      double dd = blk_scale(r, sblk(b, nb, mut), bs, x);
      const uint8_t *c = r + b * bs + 2;
      for (size_t j = 0; j < len; j++) s += ((double)(q4_code(c, j, mut) - off) * dd) * q[lo + j];
    }
    sc[i] = scale * s;
  }
}

void kvb_qa_q4_0_axpy(size_t d, const uint8_t *row, const double *dex, int off, unsigned mut,
                      double e, double *z) {
  const size_t H = KVB_QBLOCK / 2, nb = (d + KVB_QBLOCK - 1) / KVB_QBLOCK;
  double x[16];
  for (size_t b = 0, lo = 0; lo < d; b++, lo += KVB_QBLOCK) {
    size_t len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK, lenlo = len < H ? len : H;
    double dd = blk_scale(row, sblk(b, nb, mut), KVB_Q4_0_BYTES, dex);
    /* e·((c − offset)·d) for the 16 codes: the reference's two products, tabled */
    for (int c = 0; c < 16; c++) x[c] = e * ((double)(c - off) * dd);
    const uint8_t *c = row + b * KVB_Q4_0_BYTES + 2;
    double *zz = z + lo;
    if (mut & KVB_QA_MUT_NIBBLE_INTERLEAVE) {
      for (size_t j = 0; j < len; j++) zz[j] += x[q4_code(c, j, mut)];
      continue;
    }
    for (size_t j = 0; j < lenlo; j++) zz[j] += x[c[j] & 0x0F];
    for (size_t j = H; j < len; j++) zz[j] += x[c[j - H] >> 4];
  }
}

void kvb_qa_q4_0_values(size_t n, size_t d, const uint8_t *V, size_t rb, const double *dex,
                        size_t nb, int off, const double *e, unsigned mut, double *z) {
#ifdef QA_AVX2
  if (d % KVB_QBLOCK == 0 && use_avx2()) {
    values_blocks(n, d, V, rb, KVB_Q4_0_BYTES, dex, nb, 1, off, mut, e, z);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++)
    kvb_qa_q4_0_axpy(d, V + i * rb, dex ? dex + i * nb : NULL, off, mut, e[i], z);
}

/* ---- KIVI (b ∈ {2, 4}: kvb_asym_code's packing, code j at bits [j·b mod 8, +b) of byte j·b/8) ----
 * A group shares (z, s), so its numbers take only 2^b values: x_c = c·s + z is formed once per
 * group into a table (the same expression, so the same bits), and the products that do not
 * change along a group are tabled too — e·x_c for a value row (its weight e is fixed), x_c·q_ch
 * for a key channel (fixed q_ch over its G tokens) — each again the very product the reference
 * forms. The loops then load a table entry per code instead of converting and multiplying.
 * Under AVX2 at b = 2 the four-entry table is one vector and a byte's four codes pick their
 * entries with one permute (idx2: byte → the four codes' double indices as int32 pairs). */

static inline unsigned acode(const uint8_t *p, size_t j, unsigned bits) {
  size_t bit = j * bits;
  return (p[bit / 8] >> (bit % 8)) & ((1u << bits) - 1u);
}

/* The (z, s) group a group g of `ng` uses: g (mutant KVB_QA_MUT_SCALE_NEXT: the next). */
static inline size_t zs_of(size_t g, size_t ng, unsigned mut) { return sblk(g, ng, mut); }

/* x_c = c·s + z for every code c (zz = 0 under no_zero_point, as the reference dequantizes). */
static inline void asym_table(double ss, double zz, unsigned bits, double *x) {
  for (unsigned c = 0; c < (1u << bits); c++) x[c] = (double)c * ss + zz;
}

#ifdef QA_AVX2
#define I2(c) 2 * (c), 2 * (c) + 1
#define E4(b) {I2((b) & 3), I2(((b) >> 2) & 3), I2(((b) >> 4) & 3), I2(((b) >> 6) & 3)}
#define R4(b) E4(b), E4((b) + 1), E4((b) + 2), E4((b) + 3)
#define R16(b) R4(b), R4((b) + 4), R4((b) + 8), R4((b) + 12)
#define R64(b) R16(b), R16((b) + 16), R16((b) + 32), R16((b) + 48)
static const int32_t idx2[256][8] __attribute__((aligned(32))) = {R64(0), R64(64), R64(128), R64(192)};
#undef I2
#undef E4
#undef R4
#undef R16
#undef R64

/* The table x_c (c = 0..3) as one vector, times w unless w is NULL: (c·s + z)·w. */
AVX2 static inline __m256d tab2(double ss, double zz) {
  return _mm256_add_pd(_mm256_mul_pd(_mm256_set_pd(3, 2, 1, 0), _mm256_set1_pd(ss)),
                       _mm256_set1_pd(zz));
}

AVX2 static inline __m256d pick2(__m256d x, uint8_t byte) {
  __m256i i = _mm256_load_si256((const __m256i *)idx2[byte]);
  return _mm256_castsi256_pd(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(x), i));
}

/* Per-token rows at b = 2 (G, d multiples of 4): z[lo..lo+m) += e_i·x_{code} per group, the
 * rows in order, up to 32 channels of a group held in vectors while the rows go by. */
AVX2 static void asym_rows_values2(const kvb_qa_asym_rows *r, size_t n, const double *e,
                                   double *z) {
  for (size_t g = 0; g < r->ng; g++) {
    size_t lo = g * r->G, m = r->d - lo < r->G ? r->d - lo : r->G, zg = zs_of(g, r->ng, r->mut);
    for (size_t c0 = 0; c0 < m; c0 += 32) {
      size_t nv = (m - c0 < 32 ? m - c0 : 32) / 4;
      __m256d Z[8];
      for (size_t k = 0; k < nv; k++) Z[k] = _mm256_loadu_pd(z + lo + c0 + 4 * k);
      for (size_t i = 0; i < n; i++) {
        const double *zs = r->z + i * r->ng, *ss = r->s + i * r->ng;
        __m256d x = _mm256_mul_pd(_mm256_set1_pd(e[i]), tab2(ss[zg], r->no_zero ? 0.0 : zs[zg]));
        const uint8_t *c = r->c + i * r->row_bytes + g * r->gbytes + c0 / 4;
        if (nv == 8)
          for (int k = 0; k < 8; k++) Z[k] = _mm256_add_pd(Z[k], pick2(x, c[k]));
        else
          for (size_t k = 0; k < nv; k++) Z[k] = _mm256_add_pd(Z[k], pick2(x, c[k]));
      }
      for (size_t k = 0; k < nv; k++) _mm256_storeu_pd(z + lo + c0 + 4 * k, Z[k]);
    }
  }
}

/* Channel-major keys at b = 2 (G a multiple of 4): 32 tokens of a group (or fewer) in eight
 * vectors of token lanes, the channels added in order 0..d−1 as kvb_dot adds them. */
AVX2 static void asym_chan2(size_t ngroups, size_t G, size_t d, size_t gbytes, int no_zero,
                            unsigned mut, const double *z, const double *s, const uint8_t *c,
                            const double *q, double scale, double *sc) {
  __m256d S = _mm256_set1_pd(scale);
  for (size_t g = 0; g < ngroups; g++)
    for (size_t t0 = 0; t0 < G; t0 += 32) {
      size_t nv = (G - t0 < 32 ? G - t0 : 32) / 4;
      __m256d A[8];
      for (int k = 0; k < 8; k++) A[k] = _mm256_setzero_pd();
      for (size_t ch = 0; ch < d; ch++) {
        size_t zc = g * d + zs_of(ch, d, mut);
        __m256d x = _mm256_mul_pd(tab2(s[zc], no_zero ? 0.0 : z[zc]), _mm256_set1_pd(q[ch]));
        const uint8_t *p = c + (g * d + ch) * gbytes + t0 / 4;
        if (nv == 8)
          for (int k = 0; k < 8; k++) A[k] = _mm256_add_pd(A[k], pick2(x, p[k]));
        else
          for (size_t k = 0; k < nv; k++) A[k] = _mm256_add_pd(A[k], pick2(x, p[k]));
      }
      for (size_t k = 0; k < nv; k++) _mm256_storeu_pd(sc + g * G + t0 + 4 * k, _mm256_mul_pd(S, A[k]));
    }
}
#endif

/* One row's dot, its groups in order; `bits` a constant in each caller below. */
static inline double asym_row_dot(const kvb_qa_asym_rows *r, size_t i, const double *q,
                                  unsigned bits) {
  double s = 0, x[16];
  const uint8_t *row = r->c + i * r->row_bytes;
  for (size_t g = 0; g < r->ng; g++) {
    size_t lo = g * r->G, m = r->d - lo < r->G ? r->d - lo : r->G, zg = zs_of(g, r->ng, r->mut);
    asym_table(r->s[i * r->ng + zg], r->no_zero ? 0.0 : r->z[i * r->ng + zg], bits, x);
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
    size_t lo = g * r->G, m = r->d - lo < r->G ? r->d - lo : r->G, zg = zs_of(g, r->ng, r->mut);
    asym_table(r->s[i * r->ng + zg], r->no_zero ? 0.0 : r->z[i * r->ng + zg], bits, x);
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

void kvb_qa_asym_rows_values(const kvb_qa_asym_rows *r, size_t n, const double *e, double *z) {
#ifdef QA_AVX2
  if (r->bits == 2 && r->G % 4 == 0 && r->d % 4 == 0 && use_avx2()) {
    asym_rows_values2(r, n, e, z);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) kvb_qa_asym_rows_axpy(r, i, e[i], z);
}

/* Channel-major keys: the G tokens of a group accumulate side by side, channel after channel —
 * each token's running sum still takes its channels in order 0..d−1, as kvb_dot does. */
static inline void asym_chan(size_t ngroups, size_t G, size_t d, size_t gbytes, unsigned bits,
                             int no_zero, unsigned mut, const double *z, const double *s,
                             const uint8_t *c, const double *q, double scale, double *sc) {
  double x[16];
  for (size_t g = 0; g < ngroups; g++) {
    double *acc = sc + g * G;
    for (size_t j = 0; j < G; j++) acc[j] = 0;
    for (size_t ch = 0; ch < d; ch++) {
      size_t zc = g * d + zs_of(ch, d, mut);
      asym_table(s[zc], no_zero ? 0.0 : z[zc], bits, x);
      double qc = q[ch];
      for (unsigned k = 0; k < (1u << bits); k++) x[k] = x[k] * qc; /* x_c·q_ch, as kvb_dot */
      const uint8_t *p = c + (g * d + ch) * gbytes;
      for (size_t j = 0; j < G; j++) acc[j] += x[acode(p, j, bits)];
    }
    for (size_t j = 0; j < G; j++) acc[j] = scale * acc[j];
  }
}

void kvb_qa_asym_chan_scores(size_t ngroups, size_t G, size_t d, size_t gbytes, unsigned bits,
                             int no_zero, unsigned mut, const double *z, const double *s,
                             const uint8_t *c, const double *q, double scale, double *sc) {
#ifdef QA_AVX2
  if (bits == 2 && G % 4 == 0 && use_avx2()) {
    asym_chan2(ngroups, G, d, gbytes, no_zero, mut, z, s, c, q, scale, sc);
    return;
  }
#endif
  if (bits == 2) asym_chan(ngroups, G, d, gbytes, 2, no_zero, mut, z, s, c, q, scale, sc);
  else if (bits == 4) asym_chan(ngroups, G, d, gbytes, 4, no_zero, mut, z, s, c, q, scale, sc);
  else asym_chan(ngroups, G, d, gbytes, bits, no_zero, mut, z, s, c, q, scale, sc);
}

/* ---- the softmax weights and the division (kvb_attention_exact's exact_pass at vscale = 1) ---- */

int kvb_qa_softmax_weights(size_t n, double *sc, double *den) {
  if (n == 0) return 1;
  double mx = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(sc[i])) return 1;
    if (sc[i] > mx) mx = sc[i];
  }
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    sc[i] = exp(sc[i] - mx);
    sum += sc[i];
  }
  *den = sum;
  return 0;
}

int kvb_qa_normalize(size_t dv, double den, double *z) {
  int finite = 1;
  for (size_t j = 0; j < dv; j++) {
    z[j] /= den;
    finite &= isfinite(z[j]);
  }
  return finite ? 0 : 1;
}

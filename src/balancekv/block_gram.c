/* block_gram.c — upper-triangle Gram products of packed blocks, one fma order on every CPU
 * (see block_gram.h for the definition and why block BalanceKV does not use BLAS here). */
#include "block_gram.h"
#include "simd.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* + 16: rows of P at a power-of-two stride (b = 128, 256) would all map to a few L1 sets, and the
 * Gram kernel walks down all k rows for every tile. */
size_t kvb_gram_ld(size_t len) { return (len + 31) / 32 * 32 + 16; }
size_t kvb_gram_rows(size_t len) { return (len + 7) / 8 * 8; }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BKG_X86 1
#include <immintrin.h>
#define BKG_T512 __attribute__((target("avx512f,fma")))
#define BKG_T256 __attribute__((target("avx2,fma")))
#endif

/* ---- prefetching while the products run (kvb_gram_pf) ----
 * A core keeps only a few misses in flight (16 to 24 on current x86 cores): a burst of prefetches
 * stalls it until they drain, which only moves the gather's wait into the products. So the
 * SIMD tiles request one line every `stride` steps of their inner loop (bkg_pf_tick), spread so
 * that the last line goes out before the products end; the portable kernel requests whole rows
 * in proportion to the share of the products done (bkg_pf_to). */
typedef struct {
  const kvb_gram_pf *pf;
  size_t lines, row, line; /* lines per row; next line to request: rows[row] + 64·line */
  size_t stride, count;    /* tile steps between requests; steps left to the next one */
} bkg_pf_walk;

static bkg_pf_walk bkg_pf_start(const kvb_gram_pf *pf) {
  bkg_pf_walk w = {pf, 0, 0, 0, SIZE_MAX, SIZE_MAX};
  if (pf && pf->nrows && pf->row_bytes) w.lines = (pf->row_bytes + 63) / 64;
  else w.row = SIZE_MAX; /* nothing to request */
  return w;
}

/* Tile steps between requests when the products take about `steps` steps in all: every line
 * requested by about 4/5 of them. */
static void bkg_pf_pace(bkg_pf_walk *w, size_t steps) {
  if (!w->lines) return;
  size_t total = w->pf->nrows * w->lines;
  w->stride = steps / (total + total / 4);
  if (w->stride < 1) w->stride = 1;
  w->count = w->stride;
}

static inline __attribute__((always_inline)) void bkg_pf_line(bkg_pf_walk *w) {
  if (w->row >= w->pf->nrows) return;
  __builtin_prefetch((const char *)w->pf->rows[w->row] + 64 * w->line, 0, 2);
  if (++w->line == w->lines) w->line = 0, w->row++;
}

/* One tile step: a request every stride steps. */
static inline __attribute__((always_inline)) void bkg_pf_tick(bkg_pf_walk *w) {
  if (--w->count) return;
  w->count = w->stride;
  if (w->row != SIZE_MAX) bkg_pf_line(w);
}

/* The share of the upper triangle in rows before i: row i has len − 1 − i entries. */
static double bkg_upper_done(size_t i, size_t len) {
  double r = (double)(len - i) / (double)len;
  return 1.0 - r * r;
}

/* About how many inner steps the tiles of a triangle take: row blocks of 8, tiles about `width`
 * columns wide (for pacing only). */
static size_t bkg_tile_steps(size_t len, size_t k, size_t width) {
  size_t tiles = 0;
  for (size_t i0 = 0; i0 + 1 < len; i0 += 8) tiles += (len - i0 + width - 1) / width;
  return tiles * k;
}

/* Requests lines up to the share `done` of all of them (done = 1: everything left). */
static void bkg_pf_to(bkg_pf_walk *w, double done) {
  if (!w->lines) return;
  size_t n = w->pf->nrows;
  size_t upto = done >= 1.0 ? n : (size_t)(done * (double)n);
  while (w->row < upto) bkg_pf_line(w);
}

/* ---- the kernels, once per type (block_gram_kernels.h names the intrinsics from VS) ---- */
#define R float
#define SFX(name) name##_f32
#define FMA1 fmaf
#define VS ps
#define V512 __m512
#define V256 __m256
#define L512 16
#define L256 8
#include "block_gram_kernels.h"

#define R double
#define SFX(name) name##_f64
#define FMA1 fma
#define VS pd
#define V512 __m512d
#define V256 __m256d
#define L512 8
#define L256 4
#include "block_gram_kernels.h"

/* ---- packing: 8×8 (float) and 4×4 (double) register transposes; the one operation per entry
 * (mul·x) is done lane by lane before the transpose, and the sums are kept lane by lane with
 * rows taken in token order, so the values are the generic loop's. ---- */
#ifdef BKG_X86
BKG_T256 static inline __attribute__((always_inline)) void tr8_f32(__m256 r[8]) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}
/* One group of 8 tokens; HAS_SUM / HAS_MUL are constants at each call, so each mode compiles
 * to its own loop with the 8 rows in registers. */
BKG_T256 static inline __attribute__((always_inline)) void
pack8_f32(size_t i0, size_t k8, const float *const *rows, const float *mul, float *sum, float *P,
          size_t ld, int HAS_SUM, int HAS_MUL) {
  const float *p0 = rows[i0], *p1 = rows[i0 + 1], *p2 = rows[i0 + 2], *p3 = rows[i0 + 3];
  const float *p4 = rows[i0 + 4], *p5 = rows[i0 + 5], *p6 = rows[i0 + 6], *p7 = rows[i0 + 7];
  __m256 w0 = _mm256_setzero_ps(), w1 = w0, w2 = w0, w3 = w0, w4 = w0, w5 = w0, w6 = w0, w7 = w0;
  if (HAS_MUL) {
    w0 = _mm256_set1_ps(mul[i0]), w1 = _mm256_set1_ps(mul[i0 + 1]);
    w2 = _mm256_set1_ps(mul[i0 + 2]), w3 = _mm256_set1_ps(mul[i0 + 3]);
    w4 = _mm256_set1_ps(mul[i0 + 4]), w5 = _mm256_set1_ps(mul[i0 + 5]);
    w6 = _mm256_set1_ps(mul[i0 + 6]), w7 = _mm256_set1_ps(mul[i0 + 7]);
  }
  for (size_t a0 = 0; a0 < k8; a0 += 8) {
    __m256 r[8] = {_mm256_loadu_ps(p0 + a0), _mm256_loadu_ps(p1 + a0), _mm256_loadu_ps(p2 + a0),
                   _mm256_loadu_ps(p3 + a0), _mm256_loadu_ps(p4 + a0), _mm256_loadu_ps(p5 + a0),
                   _mm256_loadu_ps(p6 + a0), _mm256_loadu_ps(p7 + a0)};
    if (HAS_SUM) { /* token order: i0, i0 + 1, … */
      __m256 sm = _mm256_loadu_ps(sum + a0);
      sm = _mm256_add_ps(sm, r[0]), sm = _mm256_add_ps(sm, r[1]), sm = _mm256_add_ps(sm, r[2]);
      sm = _mm256_add_ps(sm, r[3]), sm = _mm256_add_ps(sm, r[4]), sm = _mm256_add_ps(sm, r[5]);
      sm = _mm256_add_ps(sm, r[6]), sm = _mm256_add_ps(sm, r[7]);
      _mm256_storeu_ps(sum + a0, sm);
    }
    if (HAS_MUL) {
      r[0] = _mm256_mul_ps(w0, r[0]), r[1] = _mm256_mul_ps(w1, r[1]);
      r[2] = _mm256_mul_ps(w2, r[2]), r[3] = _mm256_mul_ps(w3, r[3]);
      r[4] = _mm256_mul_ps(w4, r[4]), r[5] = _mm256_mul_ps(w5, r[5]);
      r[6] = _mm256_mul_ps(w6, r[6]), r[7] = _mm256_mul_ps(w7, r[7]);
    }
    tr8_f32(r);
    float *q = P + a0 * ld + i0;
    _mm256_storeu_ps(q, r[0]), _mm256_storeu_ps(q + ld, r[1]);
    _mm256_storeu_ps(q + 2 * ld, r[2]), _mm256_storeu_ps(q + 3 * ld, r[3]);
    _mm256_storeu_ps(q + 4 * ld, r[4]), _mm256_storeu_ps(q + 5 * ld, r[5]);
    _mm256_storeu_ps(q + 6 * ld, r[6]), _mm256_storeu_ps(q + 7 * ld, r[7]);
  }
}

BKG_T256 static size_t pack_f32_avx2(size_t len, size_t k, const float *const *rows,
                                     const float *mul, float *sum, float *P, size_t ld) {
  size_t i0 = 0, k8 = k & ~(size_t)7;
  for (; i0 + 8 <= len; i0 += 8) {
    if (sum && mul) pack8_f32(i0, k8, rows, mul, sum, P, ld, 1, 1);
    else if (sum) pack8_f32(i0, k8, rows, mul, sum, P, ld, 1, 0);
    else if (mul) pack8_f32(i0, k8, rows, mul, sum, P, ld, 0, 1);
    else pack8_f32(i0, k8, rows, mul, sum, P, ld, 0, 0);
    for (size_t q = i0; q < i0 + 8; q++)
      for (size_t a = k8; a < k; a++) {
        if (sum) sum[a] += rows[q][a];
        P[a * ld + q] = mul ? mul[q] * rows[q][a] : rows[q][a];
      }
  }
  return i0;
}
BKG_T256 static size_t pack_f64_avx2(size_t len, size_t k, const double *const *rows,
                                     const double *mul, double *sum, double *P, size_t ld) {
  size_t i0 = 0, k4 = k & ~(size_t)3;
  for (; i0 + 4 <= len; i0 += 4) {
    for (size_t a0 = 0; a0 < k4; a0 += 4) {
      __m256d r[4];
      __m256d sm = sum ? _mm256_loadu_pd(sum + a0) : _mm256_setzero_pd();
      for (int q = 0; q < 4; q++) {
        __m256d x = _mm256_loadu_pd(rows[i0 + q] + a0);
        if (sum) sm = _mm256_add_pd(sm, x);
        if (mul) x = _mm256_mul_pd(_mm256_set1_pd(mul[i0 + q]), x);
        r[q] = x;
      }
      if (sum) _mm256_storeu_pd(sum + a0, sm);
      __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
      __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
      _mm256_storeu_pd(P + (a0 + 0) * ld + i0, _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd(P + (a0 + 1) * ld + i0, _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd(P + (a0 + 2) * ld + i0, _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd(P + (a0 + 3) * ld + i0, _mm256_permute2f128_pd(t1, t3, 0x31));
    }
    for (size_t q = i0; q < i0 + 4; q++)
      for (size_t a = k4; a < k; a++) {
        if (sum) sum[a] += rows[q][a];
        P[a * ld + q] = mul ? mul[q] * rows[q][a] : rows[q][a];
      }
  }
  return i0;
}
BKG_T256 static void center_f32_avx2(size_t len, size_t k, float *P, size_t ld, const float *m) {
  for (size_t a = 0; a < k; a++) {
    float *p = P + a * ld;
    __m256 v = _mm256_set1_ps(m[a]);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) _mm256_storeu_ps(p + i, _mm256_sub_ps(_mm256_loadu_ps(p + i), v));
    for (; i < len; i++) p[i] -= m[a];
  }
}
BKG_T256 static void center_f64_avx2(size_t len, size_t k, double *P, size_t ld,
                                     const double *m) {
  for (size_t a = 0; a < k; a++) {
    double *p = P + a * ld;
    __m256d v = _mm256_set1_pd(m[a]);
    size_t i = 0;
    for (; i + 4 <= len; i += 4) _mm256_storeu_pd(p + i, _mm256_sub_pd(_mm256_loadu_pd(p + i), v));
    for (; i < len; i++) p[i] -= m[a];
  }
}
#endif

#ifdef BKG_X86
#define BKG_AVX2(call) if (kvb_simd_level() >= KVB_SIMD_AVX2) call
#else
#define BKG_AVX2(call)
#endif

/* The public packing and centering, once for both types. */
#define BKG_API(T, S)                                                                          \
  void kvb_gram_pack_##S(size_t len, size_t k, const T *const *rows, const T *mul, T *sum,    \
                         T *P, size_t ld) {                                                    \
    size_t i0 = 0;                                                                             \
    BKG_AVX2(i0 = pack_##S##_avx2(len, k, rows, mul, sum, P, ld));                             \
    pack_generic_##S(i0, len, k, rows, mul, sum, P, ld);                                       \
    if (ld > len)                                                                              \
      for (size_t a = 0; a < k; a++) memset(P + a * ld + len, 0, (ld - len) * sizeof *P);      \
  }                                                                                            \
  void kvb_gram_center_##S(size_t len, size_t k, T *P, size_t ld, const T *m) {                \
    BKG_AVX2({                                                                                 \
      center_##S##_avx2(len, k, P, ld, m);                                                     \
      return;                                                                                  \
    });                                                                                        \
    for (size_t a = 0; a < k; a++)                                                             \
      for (size_t i = 0; i < len; i++) P[a * ld + i] -= m[a];                                  \
  }
BKG_API(float, f32)
BKG_API(double, f64)

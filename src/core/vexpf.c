/* vexpf.c — expf on many floats at once, returning the C library's bits (see vexpf.h). */
#include "vexpf.h"
#include "simd.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* the scalar tails must round each operation, as the vector bodies */
#endif

/* ---- expf, eight or sixteen at a time, bit-identical to the C library's ----
 * Callers may only replace the C library's expf by something that returns the same bits for
 * every float (vexpf.h). On x86-64 glibc (2.28 and later) selects
 * at load time an expf built with FMA when the CPU has AVX2 and FMA; its algorithm is public
 * (glibc sysdeps/ieee754/flt-32/e_expf.c, from ARM's optimized-routines): in double precision,
 * k = round(x·32/ln2) by adding 1.5·2^52, r = x·32/ln2 − k, 2^(k/32) = table[k mod 32] with the
 * exponent k/32 added to its bits, and exp(x) ≈ 2^(k/32)·(C0 r³ + C1 r² + C2 r + 1), rounded once
 * to float; with FMA the compiler fused x·32/ln2 + shift, x·32/ln2 − k and the polynomial steps.
 * vexpf_exp4 / vexpf_exp8 do exactly those double operations on four / eight lanes at a time. Inputs
 * with |x| >= 88 or not finite (the library's special paths: overflow, underflow, errno) go to
 * the library itself. Because an equal algorithm is not a proof, the fast path is used only after
 * a self-test against the library's expf on 2^16 + 4096 inputs spread over every exponent
 * (kvb_vexpf_check), at the first call of each SIMD level; a library that differs anywhere in
 * the test keeps the plain loop. tests/bench_balancekv_block --exp-exhaustive compares all 2^32 floats. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KVB_VEXPF 1
#include <immintrin.h>

/* 2^(i/32) as IEEE doubles with i·2^47 subtracted from their bits (so that adding k·2^47 for
 * k ≡ i mod 32 gives 2^(k/32)): the table the library's expf indexes. */
static const uint64_t vexpf_exp2_tab[32] = {
    0x3ff0000000000000ull, 0x3fefd9b0d3158574ull, 0x3fefb5586cf9890full, 0x3fef9301d0125b51ull,
    0x3fef72b83c7d517bull, 0x3fef54873168b9aaull, 0x3fef387a6e756238ull, 0x3fef1e9df51fdee1ull,
    0x3fef06fe0a31b715ull, 0x3feef1a7373aa9cbull, 0x3feedea64c123422ull, 0x3feece086061892dull,
    0x3feebfdad5362a27ull, 0x3feeb42b569d4f82ull, 0x3feeab07dd485429ull, 0x3feea47eb03a5585ull,
    0x3feea09e667f3bcdull, 0x3fee9f75e8ec5f74ull, 0x3feea11473eb0187ull, 0x3feea589994cce13ull,
    0x3feeace5422aa0dbull, 0x3feeb737b0cdc5e5ull, 0x3feec49182a3f090ull, 0x3feed503b23e255dull,
    0x3feee89f995ad3adull, 0x3feeff76f2fb5e47ull, 0x3fef199bdd85529cull, 0x3fef3720dcef9069ull,
    0x3fef5818dcfba487ull, 0x3fef7c97337b9b5full, 0x3fefa4afa2a490daull, 0x3fefd0765b6e4540ull};

/* Four floats (as doubles) → exp in double before the final rounding, the library's steps. */
__attribute__((target("avx2,fma"))) static inline __m256d vexpf_exp4(__m256d xd) {
  const __m256d invln2n = _mm256_set1_pd(0x1.71547652b82fep+5); /* 32/ln 2 */
  const __m256d shift = _mm256_set1_pd(0x1.8p52);
  const __m256d c0 = _mm256_set1_pd(0x1.c6af84b912394p-20); /* 0x1.c6af84b912394p-5 / 32³ */
  const __m256d c1 = _mm256_set1_pd(0x1.ebfce50fac4f3p-13); /* 0x1.ebfce50fac4f3p-3 / 32² */
  const __m256d c2 = _mm256_set1_pd(0x1.62e42ff0c52d6p-6);  /* 0x1.62e42ff0c52d6p-1 / 32 */
  __m256d kds = _mm256_fmadd_pd(invln2n, xd, shift);        /* x·32/ln2 + shift, one rounding */
  __m256i ki = _mm256_castpd_si256(kds);
  __m256d kd = _mm256_sub_pd(kds, shift);
  __m256d r = _mm256_fmsub_pd(invln2n, xd, kd);              /* x·32/ln2 − k, one rounding */
  __m256i t = _mm256_i64gather_epi64((const long long *)vexpf_exp2_tab,
                                     _mm256_and_si256(ki, _mm256_set1_epi64x(31)), 8);
  t = _mm256_add_epi64(t, _mm256_slli_epi64(ki, 47));
  __m256d z = _mm256_fmadd_pd(r, c0, c1);
  __m256d r2 = _mm256_mul_pd(r, r);
  __m256d y = _mm256_fmadd_pd(r, c2, _mm256_set1_pd(1.0));
  y = _mm256_fmadd_pd(z, r2, y);
  return _mm256_mul_pd(y, _mm256_castsi256_pd(t));
}

__attribute__((target("avx2,fma"))) static void exprow_f32_vec(float *g, size_t n) {
  size_t i = 0;
  const __m256i expmask = _mm256_set1_epi32(0x7ff), lim = _mm256_set1_epi32(0x42a);
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(g + i);
    /* the library's test for its special paths: (bits >> 20) & 0x7ff >= top12(88.0f) */
    __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), expmask);
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi32(top, lim))) {
      for (size_t k = i; k < i + 8; k++) g[k] = expf(g[k]);
      continue;
    }
    __m128 lo = _mm256_cvtpd_ps(vexpf_exp4(_mm256_cvtps_pd(_mm256_castps256_ps128(x))));
    __m128 hi = _mm256_cvtpd_ps(vexpf_exp4(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))));
    _mm256_storeu_ps(g + i, _mm256_set_m128(hi, lo));
  }
  for (; i < n; i++) g[i] = expf(g[i]);
}

/* One kernel row in one pass: g = exp(ks·g − β)·(gv + c₀), the same float operations as the
 * three loops of the core (product, difference, the library's expf, sum, product), eight at a
 * time; separate multiply and subtract (no fusing: FP_CONTRACT is off and these are separate
 * instructions). Lanes the library treats specially take the scalar route for their group. */
__attribute__((target("avx2,fma"))) static void krow_f32_vec(float *g, const float *gv, float ks,
                                                              float beta, float c0, size_t n) {
  size_t i = 0;
  const __m256i expmask = _mm256_set1_epi32(0x7ff), lim = _mm256_set1_epi32(0x42a);
  const __m256 vks = _mm256_set1_ps(ks), vbeta = _mm256_set1_ps(beta), vc0 = _mm256_set1_ps(c0);
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_sub_ps(_mm256_mul_ps(vks, _mm256_loadu_ps(g + i)), vbeta);
    __m256 f = _mm256_add_ps(_mm256_loadu_ps(gv + i), vc0);
    __m256i top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), expmask);
    __m256 e;
    if (_mm256_movemask_epi8(_mm256_cmpgt_epi32(top, lim))) {
      float t[8];
      _mm256_storeu_ps(t, x);
      for (int k = 0; k < 8; k++) t[k] = expf(t[k]);
      e = _mm256_loadu_ps(t);
    } else {
      __m128 lo = _mm256_cvtpd_ps(vexpf_exp4(_mm256_cvtps_pd(_mm256_castps256_ps128(x))));
      __m128 hi = _mm256_cvtpd_ps(vexpf_exp4(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))));
      e = _mm256_set_m128(hi, lo);
    }
    _mm256_storeu_ps(g + i, _mm256_mul_ps(e, f));
  }
  for (; i < n; i++) {
    float x = ks * g[i] - beta;
    g[i] = expf(x) * (gv[i] + c0);
  }
}

/* The same, sixteen floats at a time on AVX-512: the table lookup by two-source permutes (no
 * gather), every floating-point operation the one above, lane by lane. */
#define VEXPF_T512 __attribute__((target("avx512f,fma")))
VEXPF_T512 static inline __m512d vexpf_exp8(__m512d xd) {
  const __m512d invln2n = _mm512_set1_pd(0x1.71547652b82fep+5);
  const __m512d shift = _mm512_set1_pd(0x1.8p52);
  const __m512d c0 = _mm512_set1_pd(0x1.c6af84b912394p-20);
  const __m512d c1 = _mm512_set1_pd(0x1.ebfce50fac4f3p-13);
  const __m512d c2 = _mm512_set1_pd(0x1.62e42ff0c52d6p-6);
  const __m512i *tab = (const __m512i *)vexpf_exp2_tab;
  __m512d kds = _mm512_fmadd_pd(invln2n, xd, shift);
  __m512i ki = _mm512_castpd_si512(kds);
  __m512d kd = _mm512_sub_pd(kds, shift);
  __m512d r = _mm512_fmsub_pd(invln2n, xd, kd);
  /* entry k mod 32: bits 0–3 pick within a 16-entry half, bit 4 picks the half */
  __m512i lo = _mm512_permutex2var_epi64(_mm512_loadu_si512(tab), ki, _mm512_loadu_si512(tab + 1));
  __m512i hi = _mm512_permutex2var_epi64(_mm512_loadu_si512(tab + 2), ki, _mm512_loadu_si512(tab + 3));
  __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), lo, hi);
  t = _mm512_add_epi64(t, _mm512_slli_epi64(ki, 47));
  __m512d z = _mm512_fmadd_pd(r, c0, c1);
  __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, c2, _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  return _mm512_mul_pd(y, _mm512_castsi512_pd(t));
}

VEXPF_T512 static inline __m512 vexpf_expf16(__m512 x) {
  __m256 lo = _mm512_cvtpd_ps(vexpf_exp8(_mm512_cvtps_pd(_mm512_castps512_ps256(x))));
  __m256 hi = _mm512_cvtpd_ps(
      vexpf_exp8(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)))));
  return _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
}

/* a lane the library treats specially (|x| >= 88 or not finite) in this group of sixteen? */
VEXPF_T512 static inline int vexpf_special16(__m512 x) {
  __m512i top = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(x), 20),
                                 _mm512_set1_epi32(0x7ff));
  return _mm512_cmpgt_epi32_mask(top, _mm512_set1_epi32(0x42a)) != 0;
}

VEXPF_T512 static void exprow_f32_avx512(float *g, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(g + i);
    if (vexpf_special16(x)) {
      for (size_t k = i; k < i + 16; k++) g[k] = expf(g[k]);
      continue;
    }
    _mm512_storeu_ps(g + i, vexpf_expf16(x));
  }
  exprow_f32_vec(g + i, n - i);
}

VEXPF_T512 static void krow_f32_avx512(float *g, const float *gv, float ks, float beta, float c0,
                                      size_t n) {
  size_t i = 0;
  const __m512 vks = _mm512_set1_ps(ks), vbeta = _mm512_set1_ps(beta), vc0 = _mm512_set1_ps(c0);
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_sub_ps(_mm512_mul_ps(vks, _mm512_loadu_ps(g + i)), vbeta);
    __m512 f = _mm512_add_ps(_mm512_loadu_ps(gv + i), vc0);
    __m512 e;
    if (vexpf_special16(x)) {
      float t[16];
      _mm512_storeu_ps(t, x);
      for (int k = 0; k < 16; k++) t[k] = expf(t[k]);
      e = _mm512_loadu_ps(t);
    } else {
      e = vexpf_expf16(x);
    }
    _mm512_storeu_ps(g + i, _mm512_mul_ps(e, f));
  }
  if (i < n) { /* the last 1–15: masked lanes (loaded as 0) compute something and are not stored */
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    __m512 x = _mm512_sub_ps(_mm512_mul_ps(vks, _mm512_maskz_loadu_ps(m, g + i)), vbeta);
    __m512 f = _mm512_add_ps(_mm512_maskz_loadu_ps(m, gv + i), vc0);
    if (vexpf_special16(x)) {
      for (size_t k = i; k < n; k++) g[k] = expf(ks * g[k] - beta) * (gv[k] + c0);
      return;
    }
    _mm512_mask_storeu_ps(g + i, m, _mm512_mul_ps(vexpf_expf16(x), f));
  }
}

#endif


size_t kvb_vexpf_check(uint64_t first, uint64_t count, uint64_t stride) {
#ifdef KVB_VEXPF
  int lvl = kvb_simd_level();
  if (lvl < KVB_SIMD_AVX2) return (size_t)-1;
  float x[64], y[64];
  size_t bad = 0;
  uint64_t k = 0;
  while (k < count) {
    size_t m = 0;
    for (; m < 64 && k < count; m++, k++) {
      uint32_t bits = (uint32_t)(first + k * stride);
      memcpy(&x[m], &bits, sizeof bits);
      y[m] = x[m];
    }
    if (lvl >= KVB_SIMD_AVX512) exprow_f32_avx512(y, m);
    else exprow_f32_vec(y, m);
    for (size_t i = 0; i < m; i++) {
      float e = expf(x[i]);
      bad += memcmp(&e, &y[i], sizeof e) != 0;
    }
  }
  return bad;
#else
  (void)first, (void)count, (void)stride;
  return (size_t)-1;
#endif
}

/* Per SIMD level: 0 = not decided, 1 = the vector path, 2 = the library's loop. */
#ifdef KVB_VEXPF
static atomic_int vexpf_state[3];
#endif

int kvb_vexpf_level(void) {
#ifdef KVB_VEXPF
  int lvl = kvb_simd_level();
  if (lvl < KVB_SIMD_AVX2) return 0;
  int st = atomic_load_explicit(&vexpf_state[lvl], memory_order_relaxed);
  if (st) return st == 1 ? lvl : 0;
  /* every 65537th bit pattern (all signs and exponents) and 4096 points of [−90, 90) */
  size_t bad = kvb_vexpf_check(0, 65536, 65537);
  float x[64], y[64];
  for (int c = 0; c < 64 && bad == 0; c++) {
    for (int i = 0; i < 64; i++) x[i] = y[i] = -90.0f + 180.0f * (float)(64 * c + i) / 4096.0f;
    if (lvl >= KVB_SIMD_AVX512) exprow_f32_avx512(y, 64);
    else exprow_f32_vec(y, 64);
    for (int i = 0; i < 64; i++) {
      float e = expf(x[i]);
      bad += memcmp(&e, &y[i], sizeof e) != 0;
    }
  }
  st = bad == 0 ? 1 : 2;
  atomic_store_explicit(&vexpf_state[lvl], st, memory_order_relaxed);
  return st == 1 ? lvl : 0;
#else
  return 0;
#endif
}

void kvb_vexpf_inplace(float *x, size_t n, int lvl) {
#ifdef KVB_VEXPF
  if (lvl >= KVB_SIMD_AVX512) {
    exprow_f32_avx512(x, n);
    return;
  }
  if (lvl >= KVB_SIMD_AVX2) {
    exprow_f32_vec(x, n);
    return;
  }
#endif
  (void)lvl;
  for (size_t i = 0; i < n; i++) x[i] = expf(x[i]);
}

void kvb_vexpf_krow(float *g, const float *gv, float ks, float beta, float c0, size_t n, int lvl) {
#ifdef KVB_VEXPF
  if (lvl >= KVB_SIMD_AVX512) {
    krow_f32_avx512(g, gv, ks, beta, c0, n);
    return;
  }
  if (lvl >= KVB_SIMD_AVX2) {
    krow_f32_vec(g, gv, ks, beta, c0, n);
    return;
  }
#endif
  (void)lvl;
  for (size_t i = 0; i < n; i++) {
    float x = ks * g[i] - beta;
    g[i] = expf(x) * (gv[i] + c0);
  }
}

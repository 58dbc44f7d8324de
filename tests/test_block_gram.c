/* test_block_gram.c — the Gram kernels of block BalanceKV (src/balancekv/block_gram.h):
 *   - every vector version (AVX-512, AVX2, portable, by $KVBOUND_SIMD) returns the same bits
 *     for every entry i < j, over lengths with partial row and column tiles and odd k;
 *   - those bits are the fma chain a = 0 … k−1: equal to a scalar fma loop written here, and
 *     within the chain's error bound k·u·Σ_a |x_ai x_aj| of a long-double reference;
 *   - packing: the one operation per entry (mul·x, x, then x − m when centered), the sums in
 *     token order, and zero padding;
 *   - the comparison can fail: a chain summed in reverse order differs in some entry (so "same
 *     bits" is not met by accident: the summation order is visible in the bits). */
#include "block_gram.h"
#include "pcg32.h"
#include "simd.h"
#include "unit.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *levels[] = {"generic", "avx2", NULL}; /* NULL: the CPU's best */

static double unif(kvb_pcg32 *g) { return (double)kvb_pcg32_next(g) / 4294967296.0; }

/* One shape, one type: returns the number of failed sub-checks. Written once for both types
 * (the bound k·u·Σ|x x| is first order; ×1.01 covers the (1 − k·u)⁻¹ factor for k <= 128). */
#define SHAPE_FN(NAME, T, PACK, CENTER, UPPER, FMA, EPS)                                    \
static int NAME(size_t len, size_t k, kvb_pcg32 *g, int *reverse_differs) {                        \
  size_t ld = kvb_gram_ld(len), rows = kvb_gram_rows(len);                                         \
  T *X = malloc(len * k * sizeof *X), *sub = malloc(k * sizeof *sub);                              \
  T *mul = malloc(len * sizeof *mul), *P = malloc(k * ld * sizeof *P);                             \
  const T **rp = malloc(len * sizeof *rp);                                                         \
  kvb_gram_pf pf = {(const void *const *)rp, len, k * sizeof(T)}; /* a hint: no effect */          \
  T *G[3];                                                                                         \
  for (int l = 0; l < 3; l++) G[l] = malloc(rows * ld * sizeof(T));                                \
  for (size_t i = 0; i < len * k; i++) X[i] = (T)(4 * unif(g) - 2);                                \
  for (size_t a = 0; a < k; a++) sub[a] = (T)(unif(g) - 0.5);                                      \
  for (size_t i = 0; i < len; i++) mul[i] = (T)(1 << (kvb_pcg32_next(g) % 3)), rp[i] = X + i * k;  \
  int bad = 0;                                                                                     \
  for (int mode = 0; mode < 3; mode++) {                                                           \
    /* mode 0: sum and center (the keys), 1: weights (the values), 2: plain */                     \
    const T *s = mode == 0 ? sub : NULL, *m = mode == 1 ? mul : NULL;                              \
    for (int l = 0; l < 3; l++) {                                                                  \
      if (levels[l]) setenv("KVBOUND_SIMD", levels[l], 1);                                         \
      memset(P, 0x7f, k * ld * sizeof *P); /* pads must be written */                              \
      T *sum = calloc(k + 1, sizeof *sum), *want_sum = calloc(k + 1, sizeof *sum);                 \
      PACK(len, k, rp, m, s ? sum : NULL, P, ld);                                                  \
      if (s) {                                                                                     \
        for (size_t i = 0; i < len; i++)                                                           \
          for (size_t a = 0; a < k; a++) want_sum[a] += X[i * k + a];                              \
        if (memcmp(sum, want_sum, k * sizeof *sum)) bad++;                                         \
        CENTER(len, k, P, ld, s);                                                                  \
      }                                                                                            \
      free(sum), free(want_sum);                                                                   \
      for (size_t a = 0; a < k; a++)                                                               \
        for (size_t i = 0; i < ld; i++) {                                                          \
          T want = i >= len ? 0.0f : s ? X[i * k + a] - s[a] : m ? m[i] * X[i * k + a]             \
                                                                  : X[i * k + a];                  \
          if (memcmp(&want, &P[a * ld + i], sizeof want)) bad++;                                   \
        }                                                                                          \
      UPPER(len, k, P, ld, G[l], ld, &pf);                                                         \
      unsetenv("KVBOUND_SIMD");                                                                    \
    }                                                                                              \
    for (size_t j = 1; j < len; j++)                                                               \
      for (size_t i = 0; i < j; i++) {                                                             \
        T chain = 0, rev = 0;                                                                      \
        long double ref = 0, mag = 0;                                                              \
        for (size_t a = 0; a < k; a++) {                                                           \
          chain = FMA(P[a * ld + i], P[a * ld + j], chain);                                        \
          ref += (long double)P[a * ld + i] * P[a * ld + j];                                       \
          mag += fabsl((long double)P[a * ld + i] * P[a * ld + j]);                                \
        }                                                                                          \
        for (size_t a = k; a-- > 0;) rev = FMA(P[a * ld + i], P[a * ld + j], rev);                 \
        if (memcmp(&rev, &chain, sizeof rev)) *reverse_differs = 1;                                \
        for (int l = 0; l < 3; l++)                                                                \
          if (memcmp(&G[l][i * ld + j], &chain, sizeof chain)) bad++;                              \
        if (fabsl(chain - ref) > (long double)k * EPS / 2 * mag * 1.01L) bad++;                    \
      }                                                                                            \
  }                                                                                                \
  free(X), free(sub), free(mul), free(P), free(rp);                                                \
  for (int l = 0; l < 3; l++) free(G[l]);                                                          \
  return bad;                                                                                      \
}

SHAPE_FN(shape_f32, float, kvb_gram_pack_f32, kvb_gram_center_f32, kvb_gram_upper_f32, fmaf,
         FLT_EPSILON)
SHAPE_FN(shape_f64, double, kvb_gram_pack_f64, kvb_gram_center_f64, kvb_gram_upper_f64, fma,
         DBL_EPSILON)

int main(void) {
  kvb_pcg32 g;
  kvb_pcg32_seed(&g, 2026, 1123);
  static const size_t lens[] = {1, 2, 7, 8, 9, 17, 31, 33, 50, 64, 100, 128, 256};
  static const size_t ks[] = {1, 3, 8, 13, 128};
  int best = kvb_simd_level();
  printf("# SIMD level of this CPU: %d (0 generic, 1 AVX2+FMA, 2 AVX-512F)\n", best);
  setenv("KVBOUND_SIMD", "generic", 1);
  int lg = kvb_simd_level();
  setenv("KVBOUND_SIMD", "avx2", 1);
  int la = kvb_simd_level();
  setenv("KVBOUND_SIMD", "no-such-level", 1);
  int lx = kvb_simd_level();
  unsetenv("KVBOUND_SIMD");
  CHECK(lg == 0 && la == (best < 1 ? best : 1) && lx == best,
        "KVBOUND_SIMD: generic -> 0, avx2 caps at 1, another value -> the CPU's best",
        "generic %d, avx2 %d, other %d, best %d", lg, la, lx, best);
  int bad32 = 0, bad64 = 0, rev32 = 0, rev64 = 0;
  for (size_t a = 0; a < sizeof lens / sizeof *lens; a++)
    for (size_t b = 0; b < sizeof ks / sizeof *ks; b++) {
      bad32 += shape_f32(lens[a], ks[b], &g, &rev32);
      bad64 += shape_f64(lens[a], ks[b], &g, &rev64);
    }
  CHECK(bad32 == 0, "gram f32: packing, every SIMD level = the fma chain, within k·u·Σ|x x|",
        "%d entries differ", bad32);
  CHECK(bad64 == 0, "gram f64: packing, every SIMD level = the fma chain, within k·u·Σ|x x|",
        "%d entries differ", bad64);
  CHECK(rev32 && rev64, "gram: the reverse-order chain differs somewhere (bit equality is a test)",
        "reverse order gave the same bits everywhere (f32 %d, f64 %d)", rev32, rev64);
  UNIT_EXIT();
}

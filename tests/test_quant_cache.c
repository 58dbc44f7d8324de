/* test_quant_cache.c — the quantized caches (src/baselines/quant_cache.h: kivi, q8_0, q4_0) and
 * the fp16 conversion they rest on (src/core/fp16.h).
 *
 * Independent routes, not the code under test: the expected codes, bytes and dequantized numbers
 * of the small blocks below are worked out by hand in the comments; the round-trip bounds are
 * computed from the raw data by the rules of the papers/format (range/(2^b − 1)/2 for KIVI,
 * d/2 plus the fp16 rounding of d for q8_0); the attention bound follows from the per-number
 * error bounds alone (see attention_bound). Every mutant of the three types must fail a check
 * the faithful method passes (the *.mutant.*.caught lines). No randomness in the methods:
 * the data below come from fixed PCG32 substreams. */
#include "kvbound.h"
#include "unit.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * (1 + fabs(b)); }

/* Builds `name` with d_key, d_value, scale and assignments ("k=v", NULL-terminated; a NULL
 * entry list is fine); NULL on error (the status in *st when st is not NULL). */
static kvb_method *mk(const char *name, size_t dk, size_t dv, double scale, const char *const *as,
                      int *st) {
  kvb_method_config cfg = {.d_key = dk, .d_value = dv, .scale = scale, .rng = NULL};
  kvb_params p;
  kvb_params_init(&p);
  for (; as && *as; as++) kvb_params_parse(&p, *as);
  kvb_method *m = NULL;
  int rc = kvb_method_alloc(name, &cfg, &p, &m);
  if (st) *st = rc;
  return rc ? NULL : m;
}

/* ---------------------------------------------------------------- fp16 */

static void test_fp16(void) {
  /* Known answers (binary16: bias 15, 10 fraction bits):
   *   1.0 = 1.0·2^0               → exponent 15 → 0x3C00
   *   65504 = (2 − 2^-10)·2^15    → 0x7BFF (largest finite)
   *   2^-24                       → smallest subnormal 0x0001
   *   2^-14                       → smallest normal 0x0400
   *   −2.0                        → 0xC000
   *   1/3 = 1.0101…·2^-2: 4096/3 = 1365.33 → 1365 = 1024 + 0x155 → 0x3400 | 0x155 = 0x3555
   *   0.1 = 1.6·2^-4: 0.1·2^14 = 1638.4 → 1638 = 1024 + 0x266 → 0x2C00 | 0x266 = 0x2E66
   *   1 + 2^-11: halfway between 0x3C00 and 0x3C01 → the even one, 0x3C00
   *   1 + 3·2^-11: halfway between 0x3C01 and 0x3C02 → the even one, 0x3C02
   *   65519 (< 65520, the midpoint to 2^16) → 0x7BFF; 65520 ties to the even 2^16 → Inf 0x7C00
   *   2^-25: halfway between 0 and 2^-24 → 0 (even); 1.5·2^-25 → 0x0001; 3·2^-25 = 1.5·2^-24:
   *   halfway between 0x0001 and 0x0002 → 0x0002
   *   −0.0 → 0x8000; Inf → 0x7C00; NaN → 0x7E00 */
  struct { double x; unsigned h; } ka[] = {
      {1.0, 0x3C00}, {65504.0, 0x7BFF}, {ldexp(1, -24), 0x0001}, {ldexp(1, -14), 0x0400},
      {-2.0, 0xC000}, {1.0 / 3.0, 0x3555}, {0.1, 0x2E66}, {1 + ldexp(1, -11), 0x3C00},
      {1 + 3 * ldexp(1, -11), 0x3C02}, {65519.0, 0x7BFF}, {65520.0, 0x7C00},
      {ldexp(1, -25), 0x0000}, {1.5 * ldexp(1, -25), 0x0001}, {3 * ldexp(1, -25), 0x0002},
      {-0.0, 0x8000}, {INFINITY, 0x7C00}, {-INFINITY, 0xFC00}, {NAN, 0x7E00}};
  int ok = 1;
  char why[128] = "";
  for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++) {
    unsigned h = kvb_fp16_from_double(ka[i].x);
    if (h != ka[i].h && ok) ok = 0, snprintf(why, sizeof why, "%.17g → 0x%04X, want 0x%04X", ka[i].x, h, ka[i].h);
  }
  CHECK(ok, "fp16.from_double.known_answers", "%s", why);
  CHECK(kvb_fp16_to_double(0x3555) == 1365.0 / 4096.0 && kvb_fp16_to_double(0x0001) == ldexp(1, -24) &&
            kvb_fp16_to_double(0x7BFF) == 65504.0 && kvb_fp16_to_double(0xC000) == -2.0 &&
            isinf(kvb_fp16_to_double(0x7C00)) && isnan(kvb_fp16_to_double(0x7E00)) &&
            kvb_fp16_to_double(0x2E66) == 1638.0 / 16384.0,
        "fp16.to_double.known_answers", "0x3555 → %.17g", kvb_fp16_to_double(0x3555));
  /* Every finite pattern survives the round trip, and the midpoint between two neighbours
   * rounds to the one with the even fraction (exhaustive over the positive finite ones). */
  size_t bad = 0, badtie = 0;
  for (unsigned h = 0; h < 0x10000u; h++) {
    if (((h >> 10) & 0x1F) == 31) continue;
    double x = kvb_fp16_to_double((uint16_t)h);
    if (kvb_fp16_from_double(x) != h && !(x == 0 && (h & 0x7FFF) == 0)) bad++;
    if (h < 0x7BFF) {
      double mid = 0.5 * (x + kvb_fp16_to_double((uint16_t)(h + 1)));
      unsigned want = (h & 1) ? h + 1 : h;
      if (kvb_fp16_from_double(mid) != want) badtie++;
    }
  }
  CHECK(bad == 0 && badtie == 0, "fp16.round_trip_and_ties_exhaustive", "%zu round trips, %zu ties wrong", bad, badtie);
  /* the decoder against the npy reader's own half decoder (src/core/npy.h), all 65536 patterns */
  size_t differ = 0;
  for (unsigned h = 0; h < 0x10000u; h++) {
    double a = kvb_fp16_to_double((uint16_t)h), b = kvb_half_to_double(h);
    differ += !(a == b && signbit(a) == signbit(b)) && !(isnan(a) && isnan(b));
  }
  CHECK(differ == 0, "fp16.to_double.matches_npy_decoder", "%zu patterns differ", differ);
}

/* ---------------------------------------------------------------- blocks */

/* q8_0 block A: max|x| = 127 → d = 1 (fp16 0x3C00, exact). x = 127, −127, 0.5, −0.5, 1.49,
 * 2.5, −63.5, 3, zeros. Codes round(x/1), half away from zero: 127, −127, 1, −1, 1, 3, −64, 3,
 * 0…; bytes: 00 3C | 7F 81 01 FF 01 03 C0 03 00…; dequantized: 127, −127, 1, −1, 1, 3, −64, 3.
 * q8_0 block B: x = 1, −1, 0.25, zeros → d = 1/127 = 0.0078740…; fp16: in [2^-7, 2^-6), so
 * spacing 2^-17: 2^17/127 = 1032.06 → 1032·2^-17 = 0.00787353515625 (0x2008: exponent 8,
 * fraction 8). Codes 127, −127, round(31.75) = 32; dequantized with fp16(d): ±127·0.00787353515625
 * = ±0.99993896484375, 32·0.00787353515625 = 0.251953125 (with the exact d: ±1, 0.2519685…). */
static const double Q8A[8] = {127, -127, 0.5, -0.5, 1.49, 2.5, -63.5, 3};
static const uint8_t Q8A_BYTES[10] = {0x00, 0x3C, 0x7F, 0x81, 0x01, 0xFF, 0x01, 0x03, 0xC0, 0x03};
static const double Q8A_DEQ[8] = {127, -127, 1, -1, 1, 3, -64, 3};
static const double Q8B[3] = {1, -1, 0.25};
static const double Q8B_DEQ[3] = {0.99993896484375, -0.99993896484375, 0.251953125};

/* q4_0 block: x[0..8] = −8, 8, 0, 1.5, −1.5, 7.4, 7.5, 2.49, −3.5, x[16] = 4, x[17] = −4, the
 * rest 0. max (largest magnitude, sign kept, first on a tie) = −8 → d = −8/−8 = 1 (0x3C00).
 * q = min(15, ⌊x + 8.5⌋): −8 → 0; 8 → 16 → 15; 0 → 8; 1.5 → 10; −1.5 → 7; 7.4 → 15; 7.5 → 16 →
 * 15; 2.49 → 10; −3.5 → 5; 4 → 12; −4 → 4; zeros → 8. Byte j = q[j] | q[j+16] << 4:
 * C0 4F 88 8A 87 8F 8F 8A 85 88 88 88 88 88 88 88. Dequantized (q − 8)·1: −8, 7, 0, 2, −1, 7, 7,
 * 2, −3, 0…, [16] = 4, [17] = −4. */
static const double Q4X[18] = {-8, 8, 0, 1.5, -1.5, 7.4, 7.5, 2.49, -3.5, 0, 0, 0, 0, 0, 0, 0, 4, -4};
static const uint8_t Q4_BYTES[18] = {0x00, 0x3C, 0xC0, 0x4F, 0x88, 0x8A, 0x87, 0x8F, 0x8F,
                                     0x8A, 0x85, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88};
static const double Q4_DEQ[18] = {-8, 7, 0, 2, -1, 7, 7, 2, -3, 0, 0, 0, 0, 0, 0, 0, 4, -4};

/* q8_0 block C: the .5 boundaries of the fp16 scale. max|x| = 127·(1 + 2^-12) → d = 1 + 2^-12
 * exactly, which fp16 stores as 1.0 (0x3C00: 2^-12 is below half of fp16's spacing 2^-10 at 1).
 * llama.cpp's reference quantizer (ggml-org/llama.cpp, ggml/src/ggml-quants.c,
 * quantize_row_q8_0_ref) divides by the unrounded scale (id = 1/d, d = amax/127; only the
 * stored scale is fp16) and rounds with roundf, which rounds halfway cases away from zero
 * (C11 7.12.9.6). So: x = ±2.5 is exactly ±2.5 over the fp16 scale but ±2.4994 over d → ±2
 * (a quantizer using the stored scale gives ±3); x = ±2.5·d and ±0.5·d and 126.5·d are exact
 * halves over d → ±3, ±1, 127 (half to even would give ±2, 0, 126; floor(t + 0.5) gives −2, 0
 * for the negative ones). Bytes: 00 3C | 7F 02 FE 03 FD 01 FF 7F 00… */
static const double Q8C_D = 1.0 + 1.0 / 4096;
static const uint8_t Q8C_BYTES[10] = {0x00, 0x3C, 0x7F, 0x02, 0xFE, 0x03, 0xFD, 0x01, 0xFF, 0x7F};

static void test_blocks(void) {
  uint8_t blk[KVB_Q8_0_BYTES];
  double y[32], de;
  {
    const double d = Q8C_D;
    const double x[8] = {127 * d, 2.5, -2.5, 2.5 * d, -2.5 * d, 0.5 * d, -0.5 * d, 126.5 * d};
    int rc = kvb_q8_0_quantize_block(x, 8, 0, blk, &de);
    CHECK(rc == KVB_OK && de == d && memcmp(blk, Q8C_BYTES, 10) == 0,
          "q8_0.block_c.half_boundaries_of_the_fp16_scale",
          "rc %d d %.17g, bytes %02X %02X | %02X %02X %02X %02X %02X %02X %02X %02X", rc, de, blk[0],
          blk[1], blk[2], blk[3], blk[4], blk[5], blk[6], blk[7], blk[8], blk[9]);
  }
  int rc = kvb_q8_0_quantize_block(Q8A, 8, 0, blk, &de);
  int ok = rc == KVB_OK && memcmp(blk, Q8A_BYTES, 10) == 0 && de == 1.0;
  for (size_t i = 10; i < KVB_Q8_0_BYTES; i++) ok &= blk[i] == 0; /* padding: code 0 */
  CHECK(ok, "q8_0.block_a.bytes", "rc %d, bytes %02X %02X %02X %02X %02X %02X %02X %02X %02X %02X", rc,
        blk[0], blk[1], blk[2], blk[3], blk[4], blk[5], blk[6], blk[7], blk[8], blk[9]);
  kvb_q8_0_dequantize_block(blk, kvb_qblock_scale(blk), y);
  ok = 1;
  for (size_t i = 0; i < 32; i++) ok &= y[i] == (i < 8 ? Q8A_DEQ[i] : 0.0);
  CHECK(ok, "q8_0.block_a.dequantized", "y = %g %g %g %g %g %g %g %g", y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7]);
  rc = kvb_q8_0_quantize_block(Q8B, 3, 0, blk, &de);
  kvb_q8_0_dequantize_block(blk, kvb_qblock_scale(blk), y);
  CHECK(rc == KVB_OK && blk[0] == 0x08 && blk[1] == 0x20 && blk[2] == 0x7F && blk[3] == 0x81 &&
            blk[4] == 0x20 && y[0] == Q8B_DEQ[0] && y[1] == Q8B_DEQ[1] && y[2] == Q8B_DEQ[2] &&
            de == 1.0 / 127.0,
        "q8_0.block_b.fp16_scale", "scale bytes %02X %02X, y = %.17g %.17g %.17g", blk[0], blk[1], y[0], y[1], y[2]);

  uint8_t b4[KVB_Q4_0_BYTES];
  rc = kvb_q4_0_quantize_block(Q4X, 18, 0, b4, &de);
  CHECK(rc == KVB_OK && memcmp(b4, Q4_BYTES, 18) == 0 && de == 1.0, "q4_0.block.bytes",
        "rc %d, bytes %02X %02X | %02X %02X %02X %02X", rc, b4[0], b4[1], b4[2], b4[3], b4[4], b4[5]);
  kvb_q4_0_dequantize_block(b4, kvb_qblock_scale(b4), 8, y);
  ok = 1;
  for (size_t i = 0; i < 32; i++) ok &= y[i] == (i < 18 ? Q4_DEQ[i] : 0.0);
  CHECK(ok, "q4_0.block.dequantized", "y = %g %g %g %g %g %g", y[0], y[1], y[2], y[3], y[16], y[17]);
  /* all zeros: q8_0 d = 0/127 = +0 (bytes 00 00), codes 0; q4_0 d = max/−8 = 0/−8 = −0 by IEEE
   * division, stored as fp16 −0 (bytes 00 80), codes 8 (bytes 0x88); all dequantize to 0 */
  double zero[32] = {0};
  kvb_q8_0_quantize_block(zero, 32, 0, blk, NULL);
  kvb_q4_0_quantize_block(zero, 32, 0, b4, NULL);
  ok = blk[0] == 0 && blk[1] == 0 && b4[0] == 0 && b4[1] == 0x80 && b4[2] == 0x88 && b4[17] == 0x88;
  kvb_q4_0_dequantize_block(b4, kvb_qblock_scale(b4), 8, y);
  for (size_t i = 0; i < 32; i++) ok &= y[i] == 0;
  CHECK(ok, "q4_0_q8_0.zero_block", "q4 bytes %02X %02X %02X", b4[0], b4[1], b4[2]);

  /* Round trip, 2000 random blocks of N(0, σ²) with σ from 1e-2 to 1e2 (normal fp16 scales):
   * q8_0 |x − x̂| ≤ d/2 + 127·|fp16(d) − d|, d = max|x|/127 computed here; q4_0 ≤ |d| + 8·|fp16(d) − d|
   * (the clip at q = 15 costs up to one step, else d/2), d = max|x|/8. */
  gsl_rng *r = kvb_rng_alloc_substream(11, 0);
  double worst8 = 0, worst4 = 0, seen8 = 0;
  size_t viol8 = 0, viol4 = 0;
  for (int t = 0; t < 2000; t++) {
    double x[32], sigma = pow(10, -2 + 4 * (t % 100) / 99.0), amax = 0;
    for (size_t i = 0; i < 32; i++) x[i] = gsl_ran_gaussian(r, sigma), amax = fmax(amax, fabs(x[i]));
    double d8 = amax / 127, d4 = amax / 8;
    double b8 = d8 / 2 + 127 * fabs(kvb_fp16_round(d8) - d8), b4b = d4 + 8 * fabs(kvb_fp16_round(d4) - d4);
    kvb_q8_0_quantize_block(x, 32, 0, blk, NULL);
    kvb_q8_0_dequantize_block(blk, kvb_qblock_scale(blk), y);
    for (size_t i = 0; i < 32; i++) {
      double e = fabs(x[i] - y[i]);
      viol8 += e > b8 * (1 + 1e-12);
      worst8 = fmax(worst8, e / b8), seen8 = fmax(seen8, e / (d8 / 2));
    }
    kvb_q4_0_quantize_block(x, 32, 0, b4, NULL);
    kvb_q4_0_dequantize_block(b4, kvb_qblock_scale(b4), 8, y);
    for (size_t i = 0; i < 32; i++) {
      double e = fabs(x[i] - y[i]);
      viol4 += e > b4b * (1 + 1e-12);
      worst4 = fmax(worst4, e / b4b);
    }
  }
  gsl_rng_free(r);
  CHECK(viol8 == 0 && worst8 > 0.5, "q8_0.round_trip_bound", "%zu violations; worst error/bound %.3f", viol8, worst8);
  CHECK(viol4 == 0 && worst4 > 0.4, "q4_0.round_trip_bound", "%zu violations; worst error/bound %.3f", viol4, worst4);
  /* without the fp16 term the bound d/2 is exceeded: the rounding of d is visible */
  CHECK(seen8 > 1.0, "q8_0.round_trip.fp16_scale_visible", "worst error/(d/2) %.6f", seen8);

  /* scale overflow: refused, block untouched */
  double big[2] = {1e7, 1};
  memset(blk, 0xAB, sizeof blk);
  rc = kvb_q8_0_quantize_block(big, 2, 0, blk, NULL);
  CHECK(rc == KVB_ERANGE && blk[0] == 0xAB && strstr(kvb_strerror_last(), "fp16"),
        "q8_0.block.scale_overflow_refused", "rc %d: %s", rc, kvb_strerror_last());
  big[0] = -6e5;
  rc = kvb_q4_0_quantize_block(big, 2, 0, b4, NULL);
  CHECK(rc == KVB_ERANGE && strstr(kvb_strerror_last(), "fp16"), "q4_0.block.scale_overflow_refused",
        "rc %d: %s", rc, kvb_strerror_last());
}

/* KIVI's quantizer (KIVI §3.1). b = 2: x = 0, 1, 2, 3 → z = 0, s = 3/3 = 1, codes 0 1 2 3,
 * packed 0 | 1<<2 | 2<<4 | 3<<6 = 0xE4. x = 1, 1.4, 1.5, 4 → z = 1, s = 1, (x − z)/s = 0, 0.4,
 * 0.5, 3 → codes 0 0 1 3 (half up), packed 0x10 | 0xC0 = 0xD0, x̂ = 1, 1, 2, 4 (error 0.5 = s/2 at
 * 1.5). b = 4: x = −1, 0.5, 14 → z = −1, s = 15/15 = 1, codes 0, round(1.5) = 2, 15 → bytes
 * 0x20, 0x0F; x̂ = −1, 1, 14. Flat x = 2, 2, 2 → s = 0, codes 0, x̂ = 2. */
static void test_asym(void) {
  double z, s;
  uint8_t p[4];
  const double a[4] = {0, 1, 2, 3}, b[4] = {1, 1.4, 1.5, 4}, c[3] = {-1, 0.5, 14}, f[3] = {2, 2, 2};
  kvb_asym_quantize(a, 4, 1, 2, 0, &z, &s, p);
  int ok = z == 0 && s == 1 && p[0] == 0xE4;
  kvb_asym_quantize(b, 4, 1, 2, 0, &z, &s, p);
  ok &= z == 1 && s == 1 && p[0] == 0xD0 && kvb_asym_code(p, 2, 2) == 1;
  kvb_asym_quantize(c, 3, 1, 4, 0, &z, &s, p);
  ok &= z == -1 && s == 1 && p[0] == 0x20 && p[1] == 0x0F && kvb_asym_code(p, 2, 4) == 15;
  kvb_asym_quantize(f, 3, 1, 2, 0, &z, &s, p);
  ok &= z == 2 && s == 0 && p[0] == 0;
  CHECK(ok, "kivi.asym.known_answers", "last z %g s %g p %02X", z, s, p[0]);
  /* strided (a channel of a row-major matrix): column 1 of {{0, 9}, {5, 3}, {7, 1}} = 9, 3, 1 →
   * z = 1, s = 8/3, (x − 1)/s = 3, 0.75, 0 → codes 3, 1, 0 → 0b00_01_11 = 0x07 */
  const double M[6] = {0, 9, 5, 3, 7, 1};
  kvb_asym_quantize(M + 1, 3, 2, 2, 0, &z, &s, p);
  CHECK(z == 1 && s == 8.0 / 3.0 && p[0] == 0x07, "kivi.asym.strided", "z %g s %g p %02X", z, s, p[0]);
  CHECK(kvb_asym_packed_bytes(32, 2) == 8 && kvb_asym_packed_bytes(5, 2) == 2 &&
            kvb_asym_packed_bytes(3, 4) == 2 && kvb_asym_packed_bytes(1, 2) == 1,
        "kivi.asym.packed_bytes", "%zu %zu", kvb_asym_packed_bytes(32, 2), kvb_asym_packed_bytes(5, 2));
  /* round trip: |x − x̂| ≤ s/2 with s = range/(2^b − 1) computed here */
  gsl_rng *r = kvb_rng_alloc_substream(11, 1);
  size_t viol = 0;
  double worst = 0;
  for (int t = 0; t < 4000; t++) {
    unsigned bits = t % 2 ? 4 : 2;
    size_t m = 1 + (size_t)(t % 40);
    double x[40], lo = INFINITY, hi = -INFINITY;
    uint8_t pk[40];
    for (size_t j = 0; j < m; j++) x[j] = gsl_ran_gaussian(r, 3.0), lo = fmin(lo, x[j]), hi = fmax(hi, x[j]);
    double sw = (hi - lo) / ((1u << bits) - 1);
    kvb_asym_quantize(x, m, 1, bits, 0, &z, &s, pk);
    for (size_t j = 0; j < m; j++) {
      double e = fabs(x[j] - (kvb_asym_code(pk, j, bits) * s + z));
      viol += e > sw / 2 * (1 + 1e-12) + 1e-15;
      if (sw > 0) worst = fmax(worst, e / (sw / 2));
    }
  }
  gsl_rng_free(r);
  CHECK(viol == 0 && worst > 0.9, "kivi.asym.round_trip_bound", "%zu violations, worst error/(s/2) %.4f", viol, worst);
}

/* ---------------------------------------------------------------- the methods on hand examples */

/* KIVI, b = 2, G = 4, R = 4, d_key = 2, d_value = 4, nine tokens.
 * keys  t0..t8: (0,8) (1,0) (2.5,4) (3,6) | (9,9) (10,1) (11,1) (12,5) | (7,7)
 * values t0..t8: (0,1,2,3) (0,.4,.5,3) (1,1,1,1) (−3,0,0,3) (5,6,7,8) | (.1,.2,.3,.4) (1,2,3,4.5)
 *               (2,2,2,2.25) (−1,−1,0,.7)
 * Keys (Algorithm 1: the residual is quantized when it holds R = 4): after t3 and after t7, one
 * group of 4 tokens per channel; t8 stays in the residual.
 *   group 1, channel 0: 0, 1, 2.5, 3 → z 0, s 1 → codes 0 1 3 3 (2.5 half up) → 0, 1, 3, 3
 *   group 1, channel 1: 8, 0, 4, 6 → z 0, s 8/3 → 3, 0, 1.5→2, 2.25→2 → 8, 0, 16/3, 16/3
 *   group 2, channel 0: 9..12 → z 9, s 1 → exact
 *   group 2, channel 1: 9, 1, 1, 5 → z 1, s 8/3 → 3, 0, 0, 1.5→2 → 9, 1, 1, 1 + 16/3
 * Values (quantized once more than R = 4 wait: the oldest): t0..t4 quantized, t5..t8 exact.
 *   v0 0,1,2,3 → exact; v1 0,.4,.5,3 → z 0, s 1 → 0, 0, 1, 3; v2 flat → exact;
 *   v3 −3,0,0,3 → z −3, s 2 → 0, 1.5→2, 2, 3 → −3, 1, 1, 3; v4 5..8 → exact.
 * Layout: 8 keys quantized, 1 in the residual; 5 values quantized, 4 in the residual.
 * Bytes: keys 2 groups · 2 channels · (⌈4·2/8⌉ = 1 + 16) = 68; values 5 · (1 + 16) = 85;
 * residual (1·2 + 4·4)·8 = 144; total 297. Vectors 18.
 * Mutants: keys_per_token quantizes each 2-channel key by itself, exact at b = 2 with 2 numbers
 * (2.5 stays 2.5); scale_2b gives s = 3/4 in group 1 channel 0 (x̂ = 0, .75, 2.25, 2.25);
 * no_zero_point drops z = 9 (group 2 channel 0 reads 0..3); value_residual_short quantizes
 * 6 values (layout 6 + 3, bytes 297 + 17 − 32 = 282). */
static const double KIVI_K[9][2] = {{0, 8}, {1, 0}, {2.5, 4}, {3, 6}, {9, 9}, {10, 1}, {11, 1}, {12, 5}, {7, 7}};
static const double KIVI_V[9][4] = {{0, 1, 2, 3}, {0, .4, .5, 3}, {1, 1, 1, 1}, {-3, 0, 0, 3}, {5, 6, 7, 8},
                                    {.1, .2, .3, .4}, {1, 2, 3, 4.5}, {2, 2, 2, 2.25}, {-1, -1, 0, .7}};
static double KIVI_KD[9][2], KIVI_VD[9][4];

static void kivi_expected(void) {
  const double e = 16.0 / 3.0;
  const double kd[9][2] = {{0, 8}, {1, 0}, {3, e}, {3, e}, {9, 9}, {10, 1}, {11, 1}, {12, 1 + e}, {7, 7}};
  const double vd[5][4] = {{0, 1, 2, 3}, {0, 0, 1, 3}, {1, 1, 1, 1}, {-3, 1, 1, 3}, {5, 6, 7, 8}};
  memcpy(KIVI_KD, kd, sizeof kd);
  memcpy(KIVI_VD, KIVI_V, sizeof KIVI_V);
  memcpy(KIVI_VD, vd, sizeof vd);
}

/* Runs the hand example on kivi with `mutant` (NULL: faithful); 1 when every read-back number,
 * the layout and the bytes match the hand values. */
static int kivi_hand_ok(const char *mutant, char *why, size_t nwhy) {
  char mu[64];
  snprintf(mu, sizeof mu, "mutant=%s", mutant ? mutant : "");
  const char *as[] = {"bits=2", "group=4", "residual=4", mutant ? mu : NULL, NULL};
  kvb_method *m = mk("kivi", 2, 4, 1.0, as, NULL);
  if (!m) return snprintf(why, nwhy, "create: %s", kvb_strerror_last()), 0;
  int ok = 1;
  for (size_t t = 0; t < 9; t++) ok &= kvb_method_update(m, KIVI_K[t], 2, KIVI_V[t], 4) == KVB_OK;
  double K[9][2], V[9][4];
  size_t n = kvb_quant_cache_read(m, &K[0][0], &V[0][0], 9), kq = 0, kr = 0, vq = 0, vr = 0;
  kvb_kivi_layout(m, &kq, &kr, &vq, &vr);
  kvb_memory mem;
  kvb_method_memory(m, &mem);
  ok &= n == 9 && kq == 8 && kr == 1 && vq == 5 && vr == 4 && mem.bytes == 297 && mem.vectors == 18;
  snprintf(why, nwhy, "n %zu layout %zu+%zu / %zu+%zu bytes %zu", n, kq, kr, vq, vr, mem.bytes);
  for (size_t t = 0; t < 9 && ok; t++) {
    for (size_t c = 0; c < 2; c++)
      if (!near(K[t][c], KIVI_KD[t][c], 1e-14))
        ok = 0, snprintf(why, nwhy, "K[%zu][%zu] = %.17g, want %.17g", t, c, K[t][c], KIVI_KD[t][c]);
    for (size_t c = 0; c < 4; c++)
      if (!near(V[t][c], KIVI_VD[t][c], 1e-14))
        ok = 0, snprintf(why, nwhy, "V[%zu][%zu] = %.17g, want %.17g", t, c, V[t][c], KIVI_VD[t][c]);
  }
  /* residual tokens bit-exact: key t8, values t5..t8 */
  ok &= K[8][0] == 7 && K[8][1] == 7 && memcmp(V[5], KIVI_V[5], 4 * 4 * sizeof(double)) == 0;
  /* the answer is attention over the read-back cache (q = (0.3, −0.2)) */
  double q[2] = {0.3, -0.2}, z[4], zr[4];
  ok &= kvb_method_query(m, q, 2, z, 4) == KVB_OK;
  kvb_attention_exact(9, 2, 4, &K[0][0], &V[0][0], q, 1.0, zr, NULL);
  for (size_t c = 0; c < 4; c++) ok &= z[c] == zr[c];
  kvb_method_free(m);
  return ok;
}

/* q8_0 / q4_0 on one token whose key and value are the hand blocks (d = 32 for the byte
 * layout's sake; quant_cache.h pads shorter rows). q8_0: key = block A, value = block B;
 * q4_0: key = value = its block. Bytes 1·(1 + 1)·34 = 68 and ·18 = 36. Then a d = 4 method
 * (padded) gets the same first four numbers and pays a whole block per row. */
static int qblock_hand_ok(const char *type, const char *mutant, char *why, size_t nwhy) {
  char mu[64];
  snprintf(mu, sizeof mu, "mutant=%s", mutant ? mutant : "");
  const char *as[] = {mutant ? mu : NULL, NULL};
  int q4 = strcmp(type, "q4_0") == 0;
  kvb_method *m = mk(type, 32, 32, 1.0, as, NULL);
  if (!m) return snprintf(why, nwhy, "create: %s", kvb_strerror_last()), 0;
  double k[32] = {0}, v[32] = {0}, K[32], V[32], wk[32] = {0}, wv[32] = {0};
  if (q4) {
    memcpy(k, Q4X, sizeof Q4X), memcpy(v, Q4X, sizeof Q4X);
    memcpy(wk, Q4_DEQ, sizeof Q4_DEQ), memcpy(wv, Q4_DEQ, sizeof Q4_DEQ);
  } else {
    memcpy(k, Q8A, sizeof Q8A), memcpy(v, Q8B, sizeof Q8B);
    memcpy(wk, Q8A_DEQ, sizeof Q8A_DEQ), memcpy(wv, Q8B_DEQ, sizeof Q8B_DEQ);
  }
  int ok = kvb_method_update(m, k, 32, v, 32) == KVB_OK;
  size_t n = kvb_quant_cache_read(m, K, V, 1);
  kvb_memory mem;
  kvb_method_memory(m, &mem);
  ok &= n == 1 && mem.bytes == (q4 ? 36u : 68u) && mem.vectors == 2;
  snprintf(why, nwhy, "n %zu bytes %zu", n, mem.bytes);
  for (size_t i = 0; i < 32 && ok; i++)
    if (K[i] != wk[i] || V[i] != wv[i])
      ok = 0, snprintf(why, nwhy, "element %zu: K %.17g (want %.17g), V %.17g (want %.17g)", i, K[i], wk[i], V[i], wv[i]);
  kvb_method_free(m);
  /* d = 4, padded: the first four numbers of the same blocks */
  m = mk(type, 4, 4, 1.0, as, NULL);
  if (!m) return 0;
  ok &= kvb_method_update(m, k, 4, v, 4) == KVB_OK && kvb_method_update(m, k, 4, v, 4) == KVB_OK;
  n = kvb_quant_cache_read(m, K, V, 2);
  kvb_method_memory(m, &mem);
  ok &= n == 2 && mem.bytes == 2 * 2 * (q4 ? 18u : 34u);
  for (size_t t = 0; t < 2; t++)
    for (size_t i = 0; i < 4; i++) {
      /* a zero-padded row's block is the hand block's first 4 numbers: for q8_0's block B and
       * q4_0's block, max is among them; block A's max (127) too */
      ok &= K[t * 4 + i] == wk[i] && V[t * 4 + i] == wv[i];
    }
  if (!ok && !why[0]) snprintf(why, nwhy, "padded d = 4 differs");
  kvb_method_free(m);
  return ok;
}

static void test_hand_methods(void) {
  kivi_expected();
  char why[256] = "";
  CHECK(kivi_hand_ok(NULL, why, sizeof why), "kivi.hand_example", "%s", why);
  const char *kivi_mut[] = {"keys_per_token", "scale_2b", "no_zero_point", "value_residual_short"};
  for (size_t i = 0; i < 4; i++) {
    char name[96];
    snprintf(name, sizeof name, "kivi.mutant.%s.caught", kivi_mut[i]);
    why[0] = 0;
    CHECK(!kivi_hand_ok(kivi_mut[i], why, sizeof why), name, "the mutant passed the hand example");
    printf("  (%s: %s)\n", kivi_mut[i], why);
  }
  why[0] = 0;
  CHECK(qblock_hand_ok("q8_0", NULL, why, sizeof why), "q8_0.hand_example", "%s", why);
  why[0] = 0;
  CHECK(qblock_hand_ok("q4_0", NULL, why, sizeof why), "q4_0.hand_example", "%s", why);
  const char *mut[][2] = {{"q8_0", "scale_fp32"}, {"q8_0", "trunc_codes"}, {"q4_0", "no_offset"},
                          {"q4_0", "unsigned_max"}, {"q4_0", "nibble_swap"}};
  for (size_t i = 0; i < 5; i++) {
    char name[96];
    snprintf(name, sizeof name, "%s.mutant.%s.caught", mut[i][0], mut[i][1]);
    why[0] = 0;
    CHECK(!qblock_hand_ok(mut[i][0], mut[i][1], why, sizeof why), name, "the mutant passed the hand example");
    printf("  (%s: %s)\n", mut[i][1], why);
  }
  /* every mutant of the three tables is one of those above (a new row needs a catch here) */
  const char *types[] = {"kivi", "q8_0", "q4_0"};
  size_t counts[] = {4, 2, 3};
  int all = 1;
  for (size_t i = 0; i < 3; i++) all &= kvb_mutant_count(kvb_method_lookup(types[i])->mutants) == counts[i];
  CHECK(all, "quant.mutant_tables_covered", "a mutant table changed size");
}

/* ---------------------------------------------------------------- stream tests */

/* Per-number error bounds of the cache after n tokens, from the raw stream alone, by the rules
 * (not from the code): kivi's quantized keys are the first ⌊n/R⌋·R, its quantized values the
 * first n − R; bound = (group range)/(2^b − 1)/2, 0 for the residual. q8_0 d/2 + 127·|fp16(d) − d|
 * with d = max|x|/127; q4_0 with d = max/−8: |d|/2 + 8·|fp16(d) − d|, or |d| + … for the numbers
 * clipped to code 15 (x/d ≥ 7.5); per block of 32. */
static void error_bounds(const char *type, unsigned bits, size_t G, size_t R, size_t n, size_t dk,
                         size_t dv, const double *K, const double *V, double *ek, double *ev) {
  if (strcmp(type, "kivi") == 0) {
    double L = (double)((1u << bits) - 1);
    size_t nkq = n / R * R, nvq = n > R ? n - R : 0;
    for (size_t t = 0; t < n; t++)
      for (size_t c = 0; c < dk; c++) {
        double e = 0;
        if (t < nkq) {
          size_t g0 = t / G * G;
          double lo = INFINITY, hi = -INFINITY;
          for (size_t u = g0; u < g0 + G; u++) lo = fmin(lo, K[u * dk + c]), hi = fmax(hi, K[u * dk + c]);
          e = (hi - lo) / L / 2;
        }
        ek[t * dk + c] = e;
      }
    for (size_t t = 0; t < n; t++)
      for (size_t c0 = 0; c0 < dv; c0 += G) {
        size_t c1 = c0 + G < dv ? c0 + G : dv;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t c = c0; c < c1; c++) lo = fmin(lo, V[t * dv + c]), hi = fmax(hi, V[t * dv + c]);
        for (size_t c = c0; c < c1; c++) ev[t * dv + c] = t < nvq ? (hi - lo) / L / 2 : 0;
      }
    return;
  }
  int q4 = strcmp(type, "q4_0") == 0;
  for (int which = 0; which < 2; which++) {
    size_t d = which ? dv : dk;
    const double *X = which ? V : K;
    double *E = which ? ev : ek;
    for (size_t t = 0; t < n; t++)
      for (size_t b0 = 0; b0 < d; b0 += 32) {
        size_t b1 = b0 + 32 < d ? b0 + 32 : d;
        double amax = 0, max = 0;
        for (size_t c = b0; c < b1; c++)
          if (fabs(X[t * d + c]) > amax) amax = fabs(X[t * d + c]), max = X[t * d + c];
        double dd = q4 ? max / -8 : amax / 127, r = fabs(kvb_fp16_round(dd) - dd);
        /* q4_0: x/d < 7.5 rounds to the nearest step (error ≤ |d|/2); x/d ∈ [7.5, 8] (the
         * opposite sign of max) is clipped to code 15 (error ≤ |d|) */
        for (size_t c = b0; c < b1; c++)
          E[t * d + c] = q4 ? (X[t * d + c] / dd >= 7.5 ? fabs(dd) : fabs(dd) / 2) + 8 * r
                            : dd / 2 + 127 * r;
      }
  }
}

/* |z'_j − z_j| ≤ max_i ev_ij + (e^{2δ} − 1)·max_i |v_ij|, δ = max_i scale·Σ_c |q_c|·ek_ic:
 * scores move by at most δ_i ≤ δ, so each softmax weight moves by a factor in [e^{−2δ}, e^{2δ}],
 * |p'_i − p_i| ≤ (e^{2δ} − 1)·p_i; z' − z = Σ p'_i (v'_i − v_i) + Σ (p'_i − p_i) v_i. */
static void attention_bound(size_t n, size_t dk, size_t dv, const double *V, const double *ek,
                            const double *ev, const double *q, double scale, double *bound) {
  double delta = 0;
  for (size_t i = 0; i < n; i++) {
    double s = 0;
    for (size_t c = 0; c < dk; c++) s += fabs(q[c]) * ek[i * dk + c];
    delta = fmax(delta, scale * s);
  }
  for (size_t j = 0; j < dv; j++) {
    double me = 0, mv = 0;
    for (size_t i = 0; i < n; i++) me = fmax(me, ev[i * dv + j]), mv = fmax(mv, fabs(V[i * dv + j]));
    bound[j] = me + expm1(2 * delta) * mv;
  }
}

/* Streams n tokens (keys N(0,1) with a shifted channel — the outlier channels that make KIVI
 * quantize keys per channel, §3.2 — values N(0,1)); after the last, reads back the cache and
 * checks every number against its bound, then the answer to 8 queries against exact attention
 * within attention_bound. */
static void stream_case(const char *type, const char *const *as, unsigned bits, size_t G, size_t R,
                        size_t n, size_t dk, size_t dv, const char *label, const char *mutant) {
  double scale = 1 / sqrt((double)dk);
  const char *as2[8];
  char mu[64];
  size_t na = 0;
  for (; as && as[na]; na++) as2[na] = as[na];
  if (mutant) snprintf(mu, sizeof mu, "mutant=%s", mutant), as2[na++] = mu;
  as2[na] = NULL;
  kvb_method *m = mk(type, dk, dv, scale, as2, NULL);
  double *K = malloc(n * dk * sizeof *K), *V = malloc(n * dv * sizeof *V);
  double *Kd = malloc(n * dk * sizeof *K), *Vd = malloc(n * dv * sizeof *V);
  double *ek = malloc(n * dk * sizeof *K), *ev = malloc(n * dv * sizeof *V);
  gsl_rng *r = kvb_rng_alloc_substream(29, 0);
  for (size_t t = 0; t < n; t++) {
    for (size_t c = 0; c < dk; c++) K[t * dk + c] = gsl_ran_gaussian(r, 1.0) + (c == 1 ? 6.0 : 0.0);
    for (size_t c = 0; c < dv; c++) V[t * dv + c] = gsl_ran_gaussian(r, 1.0);
  }
  int ok = m != NULL;
  for (size_t t = 0; ok && t < n; t++) ok &= kvb_method_update(m, K + t * dk, dk, V + t * dv, dv) == KVB_OK;
  ok &= ok && kvb_quant_cache_read(m, Kd, Vd, n) == n;
  error_bounds(type, bits, G, R, n, dk, dv, K, V, ek, ev);
  size_t viol = 0;
  double worst = 0;
  for (size_t i = 0; ok && i < n * dk; i++) {
    double e = fabs(K[i] - Kd[i]);
    viol += e > ek[i] * (1 + 1e-12) + 1e-14;
    if (ek[i] > 0) worst = fmax(worst, e / ek[i]);
  }
  for (size_t i = 0; ok && i < n * dv; i++) {
    double e = fabs(V[i] - Vd[i]);
    viol += e > ev[i] * (1 + 1e-12) + 1e-14;
    if (ev[i] > 0) worst = fmax(worst, e / ev[i]);
  }
  size_t aviol = 0;
  double aworst = 0, maxerr = 0;
  for (int qi = 0; ok && qi < 8; qi++) {
    double q[128], z[128], zx[128], bound[128];
    for (size_t c = 0; c < dk; c++) q[c] = gsl_ran_gaussian(r, 1.0);
    ok &= kvb_method_query(m, q, dk, z, dv) == KVB_OK;
    kvb_attention_exact(n, dk, dv, K, V, q, scale, zx, NULL);
    attention_bound(n, dk, dv, V, ek, ev, q, scale, bound);
    for (size_t j = 0; j < dv; j++) {
      double e = fabs(z[j] - zx[j]);
      aviol += e > bound[j] * (1 + 1e-9) + 1e-13;
      aworst = fmax(aworst, e / bound[j]), maxerr = fmax(maxerr, e);
    }
  }
  gsl_rng_free(r);
  char name[128];
  if (!mutant) {
    snprintf(name, sizeof name, "%s.stream.%s.round_trip_bound", type, label);
    CHECK(ok && viol == 0 && worst > 0.3, name, "%zu violations, worst error/bound %.4f", viol, worst);
    snprintf(name, sizeof name, "%s.stream.%s.attention_within_bound", type, label);
    CHECK(ok && aviol == 0 && maxerr > 0, name, "%zu violations, worst error/bound %.3g, max error %.3g", aviol, aworst, maxerr);
    printf("  (%s %s: worst number error/bound %.3f, attention error max %.3g = %.3g of its bound)\n",
           type, label, worst, maxerr, aworst);
  } else {
    snprintf(name, sizeof name, "%s.mutant.%s.caught_by_stream_bounds", type, mutant);
    /* a mutant is caught when some number or answer breaks its bound */
    CHECK(ok && viol + aviol > 0, name, "no bound broken (numbers: %zu violations; attention: %zu)", viol, aviol);
    printf("  (%s %s: %zu numbers and %zu answer coordinates beyond their bounds)\n", type, mutant, viol, aviol);
  }
  kvb_method_free(m);
  free(K), free(V), free(Kd), free(Vd), free(ek), free(ev);
}

static void test_streams(void) {
  const char *k2[] = {"bits=2", "group=8", "residual=16", NULL};
  const char *k4[] = {"bits=4", "group=8", "residual=16", NULL};
  const char *kd[] = {"bits=2", NULL}; /* the paper's G = 32, R = 128 */
  stream_case("kivi", k2, 2, 8, 16, 203, 16, 12, "b2_G8_R16", NULL);
  stream_case("kivi", k4, 4, 8, 16, 203, 16, 12, "b4_G8_R16", NULL);
  stream_case("kivi", kd, 2, 32, 128, 300, 64, 64, "b2_G32_R128", NULL);
  stream_case("q8_0", NULL, 0, 0, 0, 200, 64, 40, "d64_40", NULL);
  stream_case("q4_0", NULL, 0, 0, 0, 200, 64, 40, "d64_40", NULL);
  /* the mutants that change numbers also break these bounds */
  stream_case("kivi", k2, 2, 8, 16, 203, 16, 12, "", "keys_per_token");
  stream_case("kivi", k2, 2, 8, 16, 203, 16, 12, "", "no_zero_point");
  stream_case("kivi", k2, 2, 8, 16, 203, 16, 12, "", "scale_2b");
  stream_case("kivi", k2, 2, 8, 16, 203, 16, 12, "", "value_residual_short");
  stream_case("q8_0", NULL, 0, 0, 0, 200, 64, 40, "", "trunc_codes");
  stream_case("q4_0", NULL, 0, 0, 0, 200, 64, 40, "", "no_offset");
  stream_case("q4_0", NULL, 0, 0, 0, 200, 64, 40, "", "unsigned_max");
  stream_case("q4_0", NULL, 0, 0, 0, 200, 64, 40, "", "nibble_swap");
}

/* ---------------------------------------------------------------- memory known answers */

static void test_memory(void) {
  /* kivi defaults (b 2, G 32, R 128), d = 128, n = 1000: keys quantized ⌊1000/128⌋·128 = 896 =
   * 28 groups · 128 channels · (⌈32·2/8⌉ = 8 + 16) = 86016; key residual 104·128·8 = 106496;
   * values quantized 1000 − 128 = 872 · 4 groups · (8 + 16) = 83712; value residual
   * 128·128·8 = 131072; total 407296. Exact storage of 1000 tokens: 1000·256·8 = 2048000. */
  kvb_method *m = mk("kivi", 128, 128, 1.0, NULL, NULL);
  double k[128], v[128];
  for (size_t c = 0; c < 128; c++) k[c] = sin((double)c), v[c] = cos((double)c);
  int ok = m != NULL;
  for (size_t t = 0; ok && t < 1000; t++) ok &= kvb_method_update(m, k, 128, v, 128) == KVB_OK;
  kvb_memory mem = {0, 0};
  kvb_method_memory(m, &mem);
  CHECK(ok && mem.bytes == 407296 && mem.vectors == 2000, "kivi.memory.defaults_d128_n1000",
        "bytes %zu, vectors %zu", mem.bytes, mem.vectors);
  kvb_method_free(m);
  /* kivi b = 4, G = 8, R = 8, d_key 3, d_value 10, n = 20: keys quantized 16 = 2 groups · 3 ·
   * (⌈8·4/8⌉ = 4 + 16) = 120; key residual 4·3·8 = 96; values quantized 12, each 2 groups
   * (8 + 2 channels): (4 + 16) + (⌈2·4/8⌉ = 1 + 16) = 37 → 444; value residual 8·10·8 = 640;
   * total 1300. */
  const char *as[] = {"bits=4", "group=8", "residual=8", NULL};
  m = mk("kivi", 3, 10, 1.0, as, NULL);
  ok = m != NULL;
  for (size_t t = 0; ok && t < 20; t++) ok &= kvb_method_update(m, k, 3, v, 10) == KVB_OK;
  kvb_method_memory(m, &mem);
  CHECK(ok && mem.bytes == 1300 && mem.vectors == 40, "kivi.memory.b4_G8_R8_d3_10_n20", "bytes %zu", mem.bytes);
  kvb_method_free(m);
  /* q8_0 / q4_0, d_key 64 (2 blocks), d_value 40 (2 blocks, the second padded), n = 3:
   * 3·4·34 = 408 and 3·4·18 = 216; d = 1 (all-ones values, one padded block each): n = 5:
   * 5·2·34 = 340 */
  size_t want[2] = {408, 216};
  const char *ty[2] = {"q8_0", "q4_0"};
  for (int i = 0; i < 2; i++) {
    m = mk(ty[i], 64, 40, 1.0, NULL, NULL);
    ok = m != NULL;
    for (size_t t = 0; ok && t < 3; t++) ok &= kvb_method_update(m, k, 64, v, 40) == KVB_OK;
    kvb_method_memory(m, &mem);
    char name[64];
    snprintf(name, sizeof name, "%s.memory.d64_40_n3", ty[i]);
    CHECK(ok && mem.bytes == want[i] && mem.vectors == 6, name, "bytes %zu", mem.bytes);
    kvb_method_free(m);
  }
  m = mk("q8_0", 1, 1, 1.0, NULL, NULL);
  ok = m != NULL;
  double one = 1;
  for (size_t t = 0; ok && t < 5; t++) ok &= kvb_method_update(m, k, 1, &one, 1) == KVB_OK;
  kvb_method_memory(m, &mem);
  CHECK(ok && mem.bytes == 340, "q8_0.memory.d1_padded", "bytes %zu", mem.bytes);
  /* all-ones values survive q8_0 exactly (d = 1/127 → fp16; 127·fp16(1/127) ≠ 1, so check the
   * normalizer answer is within the bound, not exact) */
  double z;
  ok &= kvb_method_query(m, k, 1, &z, 1) == KVB_OK;
  CHECK(ok && fabs(z - 1) <= 127 * fabs(kvb_fp16_round(1.0 / 127) - 1.0 / 127) + 1e-15,
        "q8_0.ones_values", "z %.17g", z);
  kvb_method_free(m);
}

/* ---------------------------------------------------------------- bad input */

typedef struct {
  uint64_t n;
  kvb_memory mem;
  double K[64 * 8], V[64 * 8], z[8];
} snapshot;

static int snap(kvb_method *m, size_t dk, size_t dv, snapshot *s) {
  memset(s, 0, sizeof *s);
  s->n = m->n;
  kvb_method_memory(m, &s->mem);
  kvb_quant_cache_read(m, s->K, s->V, 64);
  double q[8] = {0.5, -1, 0.25, 2, 0, 1, -0.5, 0.1};
  return kvb_method_query(m, q, dk, s->z, dv);
}

static void test_bad_input(void) {
  const char *types[] = {"kivi", "q8_0", "q4_0"};
  const char *kas[] = {"bits=2", "group=2", "residual=4", NULL};
  for (size_t ti = 0; ti < 3; ti++) {
    const char *ty = types[ti];
    size_t dk = 5, dv = 3;
    kvb_method *m = mk(ty, dk, dv, 0.5, ti == 0 ? kas : NULL, NULL);
    double k[8] = {1, -2, 3, 0.5, 0}, v[8] = {2, 1, -1};
    double qz[8] = {0}, zz[8];
    int st0 = kvb_method_query(m, qz, dk, zz, dv);
    char name[96];
    snprintf(name, sizeof name, "%s.bad.query_before_update", ty);
    CHECK(st0 == KVB_ESTATE, name, "st %d", st0);
    for (int t = 0; t < 7; t++) {
      k[t % 5] += 0.3 * t, v[t % 3] -= 0.7;
      kvb_method_update(m, k, dk, v, dv);
    }
    snapshot a, b;
    snap(m, dk, dv, &a);
    double kn[8], vn[8];
    memcpy(kn, k, sizeof k), memcpy(vn, v, sizeof v);
    kn[2] = NAN;
    int s1 = kvb_method_update(m, kn, dk, v, dv);
    memcpy(kn, k, sizeof k), vn[1] = INFINITY;
    int s2 = kvb_method_update(m, k, dk, vn, dv);
    int s3 = kvb_method_update(m, k, dk + 1, v, dv);
    int s4 = kvb_method_update(m, k, dk, v, dv - 1);
    /* beyond what the format can store (fp16 scale overflow); kivi stores any finite number */
    memcpy(kn, k, sizeof k), kn[0] = ti == 0 ? 1e300 : 1e7;
    int s5 = kvb_method_update(m, kn, dk, v, dv);
    int want5 = ti == 0 ? KVB_OK : KVB_ERANGE;
    const char *msg5 = kvb_strerror_last();
    int s5ok = s5 == want5 && (ti == 0 || strstr(msg5, "fp16") != NULL);
    if (ti == 0) { /* kivi took the token: rebuild the reference state without it */
      kvb_method_free(m);
      m = mk(ty, dk, dv, 0.5, kas, NULL);
      memcpy(k, (double[8]){1, -2, 3, 0.5, 0}, sizeof k), memcpy(v, (double[8]){2, 1, -1}, sizeof v);
      for (int t = 0; t < 7; t++) {
        k[t % 5] += 0.3 * t, v[t % 3] -= 0.7;
        kvb_method_update(m, k, dk, v, dv);
      }
    }
    snap(m, dk, dv, &b);
    snprintf(name, sizeof name, "%s.bad.refused_state_unchanged", ty);
    CHECK(s1 == KVB_EDOM && s2 == KVB_EDOM && s3 == KVB_EDIM && s4 == KVB_EDIM && s5ok &&
              memcmp(&a, &b, sizeof a) == 0,
          name, "statuses %d %d %d %d %d, state same %d (%s)", s1, s2, s3, s4, s5,
          memcmp(&a, &b, sizeof a) == 0, msg5);
    kvb_method_free(m);
  }
  /* parameters */
  struct { const char *type; const char *as[4]; int st; const char *msg; } bad[] = {
      {"kivi", {"bits=3", NULL}, KVB_EINVAL, "2 or 4"},
      {"kivi", {"bits=8", NULL}, KVB_EINVAL, "bits"},
      {"kivi", {"group=0", NULL}, KVB_EINVAL, "group"},
      {"kivi", {"group=4", "residual=6", NULL}, KVB_EINVAL, "multiple"},
      {"kivi", {"group=8", "residual=4", NULL}, KVB_EINVAL, "multiple"},
      {"kivi", {"bits=2.5", NULL}, KVB_EINVAL, "bits"},
      {"q8_0", {"bits=4", NULL}, KVB_ENOTFOUND, "bits"},
      {"q4_0", {"group=32", NULL}, KVB_ENOTFOUND, "group"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int st = 0;
    kvb_method *m = mk(bad[i].type, 4, 4, 1.0, bad[i].as, &st);
    char name[96];
    snprintf(name, sizeof name, "%s.bad.params.%s%s%s", bad[i].type, bad[i].as[0],
             bad[i].as[1] ? "," : "", bad[i].as[1] ? bad[i].as[1] : "");
    CHECK(!m && st != KVB_OK && strstr(kvb_strerror_last(), bad[i].msg), name, "st %d (want %d): %s", st,
          bad[i].st, kvb_strerror_last());
    kvb_method_free(m);
  }
}

/* ---------------------------------------------------------------- determinism, registry */

static void test_determinism(void) {
  const char *types[] = {"kivi", "q8_0", "q4_0"};
  for (size_t ti = 0; ti < 3; ti++) {
    const kvb_method_type *t = kvb_method_lookup(types[ti]);
    double z[2][16];
    for (int run = 0; run < 2; run++) {
      gsl_rng *rng = kvb_rng_alloc_substream(run ? 99 : 1, 0);
      kvb_method_config cfg = {16, 16, 0.25, run ? rng : NULL};
      kvb_params p;
      kvb_params_init(&p);
      if (ti == 0) kvb_params_parse(&p, "group=4"), kvb_params_parse(&p, "residual=8");
      kvb_method *m = NULL;
      kvb_method_alloc_type(t, &cfg, &p, &m);
      gsl_rng *data = kvb_rng_alloc_substream(5, 0);
      double k[16], v[16], q[16];
      for (int s = 0; s < 50; s++) {
        for (int c = 0; c < 16; c++) k[c] = gsl_ran_gaussian(data, 1), v[c] = gsl_ran_gaussian(data, 1);
        kvb_method_update(m, k, 16, v, 16);
      }
      for (int c = 0; c < 16; c++) q[c] = gsl_ran_gaussian(data, 1);
      kvb_method_query(m, q, 16, z[run], 16);
      kvb_method_free(m);
      gsl_rng_free(data), gsl_rng_free(rng);
    }
    char name[64];
    snprintf(name, sizeof name, "%s.deterministic_no_rng", types[ti]);
    CHECK(t && !t->randomized && memcmp(z[0], z[1], sizeof z[0]) == 0, name, "randomized %d", t ? t->randomized : -1);
  }
}

int main(void) {
  test_fp16();
  test_blocks();
  test_asym();
  test_hand_methods();
  test_streams();
  test_memory();
  test_bad_input();
  test_determinism();
  UNIT_EXIT();
}

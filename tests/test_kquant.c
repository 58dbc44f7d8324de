/* test_kquant.c — dequantization of the block types Gemma 3's Q4_K_M file uses beyond
 * SmolLM2's (Q5_0, Q4_K, Q6_K; gguf.h gives the layouts). Each hand-built block's bytes are
 * written out here and the expected floats are literals worked out by hand from the layout
 * (the worked arithmetic is in the comments), not computed by a second decoder. Then fuzzed
 * blocks: random bytes with finite fp16 scales must decode to finite values inside the block's
 * scale bound (Q5_0 |x| ≤ 16|d|; Q4_K |x| ≤ 63·15|d| + 63|dmin|; Q6_K |x| ≤ 128·32|d|), and the
 * bound must be reached by the extreme codes. Needs no model file. */
#include "gguf.h"
#include "kvb_error.h"
#include "pcg32.h"
#include "unit.h"

#include <math.h>
#include <string.h>

typedef struct { int at; float want; } expect;

static int count_bad(const float *out, const expect *e, int n, int *first) {
  int bad = 0;
  *first = -1;
  for (int i = 0; i < n; i++)
    if (out[e[i].at] != e[i].want) {
      if (*first < 0) *first = e[i].at;
      bad++;
    }
  return bad;
}

static void test_q5_0(void) {
  /* d = 0.5 (fp16 0x3800); qh = 0x8001000F (bits 0..3, 16 and 31 set); byte j of the nibbles
   * = j | (15 − j) << 4. Element j < 16: q = j | bit_j·16; element j + 16: (15 − j) | bit_{j+16}·16;
   * x = 0.5·(q − 16). */
  unsigned char b[22] = {0x00, 0x38, 0x0F, 0x00, 0x01, 0x80};
  for (int j = 0; j < 16; j++) b[6 + j] = (unsigned char)(j | (15 - j) << 4);
  static const expect e[] = {
      {0, 0.0f},    /* q = 0 | 16 → 0 */
      {1, 0.5f},    /* 1 | 16 = 17 → 1 */
      {3, 1.5f},    /* 3 | 16 = 19 → 3 */
      {4, -6.0f},   /* 4, bit 4 clear → −12 */
      {15, -0.5f},  /* 15 → −1 */
      {16, 7.5f},   /* j = 0: 15 | 16 = 31 → 15 */
      {17, -1.0f},  /* j = 1: 14 → −2 */
      {30, -7.5f},  /* j = 14: 1 → −15 */
      {31, 0.0f},   /* j = 15: 0 | 16 (bit 31) → 0 */
  };
  float out[32];
  int st = kvb_gguf_dequant(KVB_GGML_Q5_0, b, 32, out), first;
  int bad = count_bad(out, e, (int)(sizeof e / sizeof *e), &first);
  CHECK(st == KVB_OK && bad == 0, "kquant.q5_0_hand_block", "status %d, %d wrong (first at %d: %g)",
        st, bad, first, first >= 0 ? out[first] : 0.0);
}

static void test_q4_k(void) {
  /* d = 0.5 (0x3800), dmin = 0.25 (0x3400). Wanted sub-block scales sc = 1 2 3 4 17 33 50 63
   * and mins mn = 0 5 10 63 16 32 48 7, packed by hand:
   *   bytes 0..3  = sc[0..3] | (sc[4..7] >> 4) << 6 = 1|1<<6, 2|2<<6, 3|3<<6, 4|3<<6
   *               = 0x41 0x82 0xC3 0xC4;
   *   bytes 4..7  = mn[0..3] | (mn[4..7] >> 4) << 6 = 0|1<<6, 5|2<<6, 10|3<<6, 63|0<<6
   *               = 0x40 0x85 0xCA 0x3F;
   *   bytes 8..11 = (sc[4..7] & 15) | (mn[4..7] & 15) << 4 = 0x01 0x01 0x02 0x7F.
   * Nibble byte 32c + i = (i % 16) | (15 − i % 16) << 4, so sub-block 2c (low nibbles) has
   * q = i % 16 and sub-block 2c + 1 (high nibbles) q = 15 − i % 16; x = 0.5·sc·q − 0.25·mn. */
  unsigned char b[144] = {0x00, 0x38, 0x00, 0x34, 0x41, 0x82, 0xC3, 0xC4, 0x40, 0x85,
                          0xCA, 0x3F, 0x01, 0x01, 0x02, 0x7F};
  for (int c = 0; c < 4; c++)
    for (int i = 0; i < 32; i++) b[16 + 32 * c + i] = (unsigned char)((i % 16) | (15 - i % 16) << 4);
  static const expect e[] = {
      {0, 0.0f},          /* s0: 0.5·1·0 − 0 */
      {15, 7.5f},         /* s0: 0.5·1·15 */
      {31, 7.5f},         /* s0: i = 31, q = 15 */
      {32, 13.75f},       /* s1: 0.5·2·15 − 0.25·5 */
      {47, -1.25f},       /* s1: q = 0 */
      {65, -1.0f},        /* s2: 0.5·3·1 − 2.5 */
      {79, 20.0f},        /* s2: 0.5·3·15 − 2.5 */
      {96, 14.25f},       /* s3: 0.5·4·15 − 15.75 */
      {127, -15.75f},     /* s3: q = 0 */
      {130, 13.0f},       /* s4: 0.5·17·2 − 4 */
      {163, 190.0f},      /* s5: 0.5·33·12 − 8 */
      {196, 88.0f},       /* s6: 0.5·50·4 − 12 */
      {229, 313.25f},     /* s7: 0.5·63·10 − 1.75 */
      {255, -1.75f},      /* s7: q = 0 */
  };
  float out[512];
  int st = kvb_gguf_dequant(KVB_GGML_Q4_K, b, 256, out), first;
  int bad = count_bad(out, e, (int)(sizeof e / sizeof *e), &first);
  CHECK(st == KVB_OK && bad == 0, "kquant.q4_k_hand_block", "status %d, %d wrong (first at %d: %g)",
        st, bad, first, first >= 0 ? out[first] : 0.0);
  /* Every element, from the literal scale and min tables and the nibble pattern. */
  static const float sc[8] = {1, 2, 3, 4, 17, 33, 50, 63}, mn[8] = {0, 5, 10, 63, 16, 32, 48, 7};
  bad = 0;
  for (int s = 0; s < 8; s++)
    for (int i = 0; i < 32; i++) {
      float q = (float)(s % 2 ? 15 - i % 16 : i % 16);
      bad += out[32 * s + i] != 0.5f * sc[s] * q - 0.25f * mn[s];
    }
  CHECK(st == KVB_OK && bad == 0, "kquant.q4_k_every_element", "%d elements wrong", bad);
  /* Two super-blocks: the second (dmin = 0, d = 1, all scales 1, all nibbles 0x21) decodes to
   * 1 and 2 alternating by sub-block, and leaves the first's values alone. */
  unsigned char two[288];
  memcpy(two, b, 144);
  memset(two + 144, 0, 144);
  two[145] = 0x3C; /* d = 1.0 */
  for (int k = 0; k < 4; k++) two[148 + k] = 1;       /* sc[0..3] = 1, mn 0 */
  for (int k = 0; k < 4; k++) two[156 + k] = 0x01;    /* sc[4..7] low bits = 1 */
  memset(two + 160, 0x21, 128);
  st = kvb_gguf_dequant(KVB_GGML_Q4_K, two, 512, out);
  bad = 0;
  for (int i = 0; i < 256; i++) bad += out[256 + i] != ((i / 32) % 2 ? 2.0f : 1.0f);
  bad += out[229] != 313.25f;
  CHECK(st == KVB_OK && bad == 0, "kquant.q4_k_two_superblocks", "status %d, %d wrong", st, bad);
}

static void test_q6_k(void) {
  /* Block 1: d = 0.25 (0x3400) at bytes 208..209; scales (bytes 192..207, int8)
   * 1 −1 2 −2 3 −3 4 −4 5 −5 6 −6 7 −7 127 −128; every ql byte 0xA5 (low nibble 5, high 10),
   * every qh byte 0xE4 (2-bit fields 0, 1, 2, 3 from the bottom). Element 128h + 32r + i:
   * r = 0: q = 5 | 0<<4 = 5; r = 1: 5 | 1<<4 = 21; r = 2: 10 | 2<<4 = 42; r = 3: 10 | 3<<4 = 58;
   * x = 0.25·scale[8h + 2r + i/16]·(q − 32). */
  unsigned char b[210];
  memset(b, 0xA5, 128);
  memset(b + 128, 0xE4, 64);
  static const signed char scl[16] = {1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 127, -128};
  memcpy(b + 192, scl, 16);
  b[208] = 0x00, b[209] = 0x34;
  static const expect e1[] = {
      {0, -6.75f},    /* h0 r0 i0: 0.25·1·(5 − 32) */
      {16, 6.75f},    /* i = 16 → scale[1] = −1 */
      {32, -5.5f},    /* r1: 0.25·2·(21 − 32) */
      {70, 7.5f},     /* r2 i6: 0.25·3·(42 − 32) */
      {127, -26.0f},  /* r3 i31: scale[7] = −4: 0.25·(−4)·26 */
      {228, 825.5f},  /* h1 r3 i4: scale[14] = 127: 0.25·127·26 */
      {255, -832.0f}, /* h1 r3 i31: scale[15] = −128 */
  };
  float out[256];
  int st = kvb_gguf_dequant(KVB_GGML_Q6_K, b, 256, out), first;
  int bad = count_bad(out, e1, (int)(sizeof e1 / sizeof *e1), &first);
  CHECK(st == KVB_OK && bad == 0, "kquant.q6_k_hand_block_scales", "status %d, %d wrong (first at %d: %g)",
        st, bad, first, first >= 0 ? out[first] : 0.0);
  /* Block 2: d = 1 (0x3C00), all scales 1; ql[k] = (k % 16) | ((k / 8) % 16) << 4,
   * qh[j] = j. Element 128h + 32r + i reads ql[k], k = 64h + 32(r & 1) + i (low nibble for
   * r < 2, high for r ≥ 2) and bits 2r, 2r+1 of qh[32h + i]. */
  for (int k = 0; k < 128; k++) b[k] = (unsigned char)((k % 16) | ((k / 8) % 16) << 4);
  for (int j = 0; j < 64; j++) b[128 + j] = (unsigned char)j;
  memset(b + 192, 1, 16);
  b[208] = 0x00, b[209] = 0x3C;
  static const expect e2[] = {
      {0, -32.0f},   /* k = 0: q = 0 */
      {35, -29.0f},  /* h0 r1 i3: k = 35, low 3; qh[3] = 3, bits 2..3 = 0 → q = 3 */
      {85, -14.0f},  /* h0 r2 i21: k = 21, high (21/8) % 16 = 2; qh[21] = 0b10101, bits 4..5 = 1 → 18 */
      {127, -25.0f}, /* h0 r3 i31: k = 63, high 7; qh[31] bits 6..7 = 0 → 7 */
      {170, 10.0f},  /* h1 r1 i10: k = 106, low 10; qh[42] = 0b101010, bits 2..3 = 2 → 42 */
      {204, 9.0f},   /* h1 r2 i12: k = 76, high 9; qh[44] = 0b101100, bits 4..5 = 2 → 41 */
      {253, -17.0f}, /* h1 r3 i29: k = 125, high 15; qh[61] bits 6..7 = 0 → 15 */
  };
  st = kvb_gguf_dequant(KVB_GGML_Q6_K, b, 256, out);
  bad = count_bad(out, e2, (int)(sizeof e2 / sizeof *e2), &first);
  CHECK(st == KVB_OK && bad == 0, "kquant.q6_k_hand_block_layout", "status %d, %d wrong (first at %d: %g)",
        st, bad, first, first >= 0 ? out[first] : 0.0);
}

/* Random bytes with every fp16 field forced finite (an exponent of 31 is lowered to 30). */
static void finite_half(unsigned char *p) {
  if (((p[1] >> 2) & 31) == 31) p[1] = (unsigned char)(p[1] & ~0x04);
}

static void test_fuzz_bounds(void) {
  kvb_pcg32 g;
  kvb_pcg32_seed(&g, 20260425u, 7u);
  static const uint32_t types[3] = {KVB_GGML_Q5_0, KVB_GGML_Q4_K, KVB_GGML_Q6_K};
  static const char *names[3] = {"kquant.fuzz_q5_0_within_bound", "kquant.fuzz_q4_k_within_bound",
                                 "kquant.fuzz_q6_k_within_bound"};
  for (int t = 0; t < 3; t++) {
    uint64_t be, bb;
    kvb_ggml_type_block(types[t], &be, &bb);
    unsigned char blk[210];
    float out[256];
    int bad = 0, reached = 0, trials = 2000;
    double worst = 0;
    for (int trial = 0; trial < trials; trial++) {
      for (uint64_t k = 0; k < bb; k++) blk[k] = (unsigned char)kvb_pcg32_next(&g);
      double bound;
      if (types[t] == KVB_GGML_Q5_0) {
        finite_half(blk);
        bound = 16.0 * fabs(kvb_half_to_float((uint16_t)(blk[0] | blk[1] << 8)));
      } else if (types[t] == KVB_GGML_Q4_K) {
        finite_half(blk), finite_half(blk + 2);
        bound = 63.0 * 15.0 * fabs(kvb_half_to_float((uint16_t)(blk[0] | blk[1] << 8))) +
                63.0 * fabs(kvb_half_to_float((uint16_t)(blk[2] | blk[3] << 8)));
      } else {
        finite_half(blk + 208);
        bound = 128.0 * 32.0 * fabs(kvb_half_to_float((uint16_t)(blk[208] | blk[209] << 8)));
      }
      if (trial == 0) { /* the extreme codes reach the bound: all scale bits and quants set */
        if (types[t] == KVB_GGML_Q5_0) memset(blk + 2, 0x00, 20); /* q = 0 → −16·d */
        if (types[t] == KVB_GGML_Q4_K) {
          blk[0] = 0x00, blk[1] = 0x3C, blk[2] = 0x00, blk[3] = 0x3C; /* d = dmin = 1 */
          memset(blk + 4, 0xFF, 12);                                 /* sc = mn = 63 */
          memset(blk + 16, 0xFF, 128);                               /* q = 15 → 63·15 − 63 */
          bound = 63.0 * 15.0 + 63.0;
        }
        if (types[t] == KVB_GGML_Q6_K) {
          memset(blk, 0, 192);            /* q = 0 → −32 */
          memset(blk + 192, 0x80, 16);    /* scale −128 */
        }
      }
      kvb_gguf_dequant(types[t], blk, be, out);
      for (uint64_t i = 0; i < be; i++) {
        double a = fabs((double)out[i]);
        if (!isfinite(out[i]) || a > bound * (1 + 1e-6)) bad++;
        if (bound > 0 && a / bound > worst) worst = a / bound;
        if (trial == 0 && types[t] != KVB_GGML_Q4_K && a == bound) reached = 1;
        if (trial == 0 && types[t] == KVB_GGML_Q4_K && a == 63.0 * 15.0 - 63.0) reached = 1;
      }
    }
    CHECK(bad == 0 && reached, names[t], "%d values non-finite or outside the bound (worst |x|/bound "
          "%.3f), extreme codes %s", bad, worst, reached ? "reached it" : "did not reach it");
  }
}

static void test_sizes(void) {
  uint64_t e4, b4, e6, b6, e5, b5;
  CHECK(!kvb_ggml_type_block(KVB_GGML_Q4_K, &e4, &b4) && e4 == 256 && b4 == 144 &&
            !kvb_ggml_type_block(KVB_GGML_Q6_K, &e6, &b6) && e6 == 256 && b6 == 210 &&
            !kvb_ggml_type_block(KVB_GGML_Q5_0, &e5, &b5) && e5 == 32 && b5 == 22 &&
            strcmp(kvb_ggml_type_name(KVB_GGML_Q4_K), "Q4_K") == 0 &&
            strcmp(kvb_ggml_type_name(KVB_GGML_Q6_K), "Q6_K") == 0,
        "kquant.block_sizes", "wrong block sizes or names");
  float out[256];
  unsigned char z[210] = {0};
  CHECK(kvb_gguf_dequant(KVB_GGML_Q4_K, z, 128, out) == KVB_EINVAL &&
            kvb_gguf_dequant(KVB_GGML_Q6_K, z, 32, out) == KVB_EINVAL,
        "kquant.partial_superblock_refused", "a partial super-block was accepted");
}

int main(void) {
  test_sizes();
  test_q5_0();
  test_q4_k();
  test_q6_k();
  test_fuzz_bounds();
  UNIT_EXIT();
}

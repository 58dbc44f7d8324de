/* test_quant_kernels.c — the fused quantized-cache kernels (src/baselines/quant_attend.h) against
 * the straightforward path — dequantize each row with the format's own dequantizer
 * (kvb_q8_0_dequantize_block, kvb_q4_0_dequantize_block, KIVI's x = code·s + z), then kvb_dot
 * for a score and z += e·x token by token for a value sum — on random blocks: random codes
 * (every byte value, so int8 −128 and every nibble and 2-bit code), random fp16 scales (normal,
 * subnormal and zero), random KIVI zero points and scales; token counts around the AVX2
 * kernels' stride of 16, head dimensions of whole q-blocks and not (40: the portable path), KIVI
 * groups that are multiples of 4 (the vector path) and not.
 *
 * Tolerance: none — memcmp. The kernels form every number with the dequantizer's expression
 * (code·d, (code − 8)·d, code·s + z), multiply and add as separate roundings (no FMA), and add
 * each score's channels and each output's tokens in the reference's order; the AVX2 kernels
 * only put different tokens (scores) or channels (value sums) in different lanes. Nothing is
 * reassociated, so there is nothing to tolerate, and any reassociation (or a wrong code or
 * scale) shows. Every case runs at the CPU's level and again with KVBOUND_SIMD=generic.
 *
 * Mutants the check must reject (KVB_QA_MUT_*, passed to the kernels directly): SCALE_NEXT (a
 * block's scale — KIVI: a group's or channel's (z, s) — read from the next one) in every kernel,
 * and NIBBLE_INTERLEAVE (q4_0 element 2k/2k + 1 from the low/high nibble of byte k) in q4_0's. */
#include "kvbound.h"
#include "quant_attend.h"
#include "quant_cache.h"
#include "simd.h"
#include "unit.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x243F6A8885A308D3ull;
static uint32_t rnd(void) {
  rs = rs * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rs >> 33);
}
static double unif(void) { return (double)rnd() / 2147483648.0; } /* [0, 1) */

/* A random fp16 scale: mostly normal numbers of either sign, sometimes subnormal or zero. */
static uint16_t rnd_fp16(void) {
  uint32_t k = rnd() % 16, sign = (rnd() & 1u) << 15, man = rnd() & 0x3FFu;
  if (k == 0) return (uint16_t)sign;               /* ±0 */
  if (k == 1) return (uint16_t)(sign | (man ? man : 1)); /* subnormal */
  return (uint16_t)(sign | ((5 + rnd() % 20) << 10) | man);
}

static void rnd_rows(uint8_t *buf, size_t n, size_t nb, size_t bs) {
  for (size_t i = 0; i < n * nb; i++) {
    uint8_t *blk = buf + i * bs;
    uint16_t h = rnd_fp16();
    blk[0] = (uint8_t)(h & 0xFF), blk[1] = (uint8_t)(h >> 8);
    for (size_t j = 2; j < bs; j++) blk[j] = (uint8_t)rnd();
  }
}

/* Row i dequantized by the format's dequantizer (scale: the stored one, or dex[i·nb + b]). */
static void deq_row(int q4, const uint8_t *row, size_t nb, const double *dex, size_t i, double *x) {
  size_t bs = q4 ? KVB_Q4_0_BYTES : KVB_Q8_0_BYTES;
  for (size_t b = 0; b < nb; b++) {
    const uint8_t *blk = row + b * bs;
    double d = dex ? dex[i * nb + b] : kvb_qblock_scale(blk);
    if (q4) kvb_q4_0_dequantize_block(blk, d, 8, x + b * KVB_QBLOCK);
    else kvb_q8_0_dequantize_block(blk, d, x + b * KVB_QBLOCK);
  }
}

/* Scores and value sums of one random q-block cache, fused against the reference; *bad counts
 * differing scores and outputs (mutant mut passed to the kernels). */
static void qblock_case(int q4, size_t n, size_t d, int with_dex, unsigned mut, size_t *bad) {
  size_t bs = q4 ? KVB_Q4_0_BYTES : KVB_Q8_0_BYTES, nb = (d + KVB_QBLOCK - 1) / KVB_QBLOCK,
         rb = nb * bs;
  uint8_t *K = malloc(n * rb), *V = malloc(n * rb);
  double *dex = with_dex ? malloc(n * nb * sizeof *dex) : NULL, *q = malloc(d * sizeof *q),
         *e = malloc(n * sizeof *e), *sc = malloc(n * sizeof *sc),
         *x = malloc(nb * KVB_QBLOCK * sizeof *x), *z = calloc(d, sizeof *z),
         *zr = calloc(d, sizeof *zr);
  rnd_rows(K, n, nb, bs), rnd_rows(V, n, nb, bs);
  for (size_t i = 0; dex && i < n * nb; i++) dex[i] = (unif() - 0.5) * 0.01;
  for (size_t j = 0; j < d; j++) q[j] = 4 * unif() - 2;
  for (size_t i = 0; i < n; i++) e[i] = unif();
  double scale = 1.0 / sqrt((double)d);
  if (q4) kvb_qa_q4_0_scores(n, d, K, rb, dex, nb, 8, q, scale, mut, sc);
  else kvb_qa_q8_0_scores(n, d, K, rb, dex, nb, q, scale, mut, sc);
  for (size_t i = 0; i < n; i++) {
    deq_row(q4, K + i * rb, nb, dex, i, x);
    double ref = scale * kvb_dot(x, q, d);
    *bad += memcmp(&ref, &sc[i], sizeof ref) != 0;
  }
  if (q4) kvb_qa_q4_0_values(n, d, V, rb, dex, nb, 8, e, mut, z);
  else kvb_qa_q8_0_values(n, d, V, rb, dex, nb, e, mut, z);
  for (size_t i = 0; i < n; i++) {
    deq_row(q4, V + i * rb, nb, dex, i, x);
    for (size_t j = 0; j < d; j++) zr[j] += e[i] * x[j];
  }
  for (size_t j = 0; j < d; j++) *bad += memcmp(&z[j], &zr[j], sizeof z[j]) != 0;
  free(K), free(V), free(dex), free(q), free(e), free(sc), free(x), free(z), free(zr);
}

/* KIVI: keys per channel (ngroups groups of G tokens) and values per token (groups of G
 * channels), b bits, fused against x = code·s + z then kvb_dot / z += e·x. */
static void kivi_case(unsigned bits, size_t ngroups, size_t G, size_t d, int no_zero, unsigned mut,
                      size_t *bad) {
  size_t n = ngroups * G, kgb = kvb_asym_packed_bytes(G, bits);
  size_t ng = (d + G - 1) / G, gb = kvb_asym_packed_bytes(G < d ? G : d, bits),
         rowb = (ng - 1) * gb + kvb_asym_packed_bytes(d - (ng - 1) * G, bits);
  uint8_t *kc = malloc(ngroups * d * kgb), *vc = malloc(n * rowb);
  double *kz = malloc(ngroups * d * sizeof *kz), *ks = malloc(ngroups * d * sizeof *ks),
         *vz = malloc(n * ng * sizeof *vz), *vs = malloc(n * ng * sizeof *vs),
         *q = malloc(d * sizeof *q), *e = malloc(n * sizeof *e), *sc = malloc(n * sizeof *sc),
         *x = malloc(d * sizeof *x), *z = calloc(d, sizeof *z), *zr = calloc(d, sizeof *zr);
  for (size_t i = 0; i < ngroups * d * kgb; i++) kc[i] = (uint8_t)rnd();
  for (size_t i = 0; i < n * rowb; i++) vc[i] = (uint8_t)rnd();
  for (size_t i = 0; i < ngroups * d; i++) kz[i] = 6 * unif() - 3, ks[i] = unif();
  for (size_t i = 0; i < n * ng; i++) vz[i] = 6 * unif() - 3, vs[i] = unif();
  for (size_t j = 0; j < d; j++) q[j] = 4 * unif() - 2;
  for (size_t i = 0; i < n; i++) e[i] = unif();
  double scale = 1.0 / sqrt((double)d);
  kvb_qa_asym_chan_scores(ngroups, G, d, kgb, bits, no_zero, mut, kz, ks, kc, q, scale, sc);
  for (size_t t = 0; t < n; t++) {
    size_t g = t / G, j = t % G;
    for (size_t c = 0; c < d; c++)
      x[c] = (double)kvb_asym_code(kc + (g * d + c) * kgb, j, bits) * ks[g * d + c] +
             (no_zero ? 0.0 : kz[g * d + c]);
    double ref = scale * kvb_dot(x, q, d);
    *bad += memcmp(&ref, &sc[t], sizeof ref) != 0;
  }
  kvb_qa_asym_rows r = {d, G, ng, gb, rowb, bits, no_zero, vz, vs, vc, mut};
  kvb_qa_asym_rows_values(&r, n, e, z);
  for (size_t i = 0; i < n; i++) {
    for (size_t g = 0; g < ng; g++) {
      size_t lo = g * G, m = d - lo < G ? d - lo : G;
      for (size_t j = 0; j < m; j++)
        x[lo + j] = (double)kvb_asym_code(vc + i * rowb + g * gb, j, bits) * vs[i * ng + g] +
                    (no_zero ? 0.0 : vz[i * ng + g]);
    }
    for (size_t j = 0; j < d; j++) zr[j] += e[i] * x[j];
  }
  for (size_t j = 0; j < d; j++) *bad += memcmp(&z[j], &zr[j], sizeof z[j]) != 0;
  free(kc), free(vc), free(kz), free(ks), free(vz), free(vs), free(q), free(e), free(sc), free(x);
  free(z), free(zr);
}

int main(void) {
  static const char *const levels[] = {NULL, "generic"};
  static const size_t ns[] = {1, 15, 16, 17, 47, 100};
  static const size_t ds[] = {32, 64, 128, 40};
  static const struct {
    unsigned bits;
    size_t ngroups, G, d;
    int no_zero;
  } kv[] = {{2, 3, 32, 64, 0}, {2, 2, 8, 40, 0}, {2, 2, 12, 64, 0}, {2, 1, 64, 128, 0},
            {2, 2, 36, 64, 1}, {2, 3, 6, 30, 0},  {4, 2, 32, 64, 0}, {4, 2, 8, 40, 1}};
  for (size_t lv = 0; lv < 2; lv++) {
    if (levels[lv]) setenv("KVBOUND_SIMD", levels[lv], 1);
    else unsetenv("KVBOUND_SIMD");
    int level = kvb_simd_level();
    const char *ln = level >= KVB_SIMD_AVX2 ? "avx2" : "generic";
    char nm[300];
    for (int q4 = 0; q4 < 2; q4++) {
      size_t bad = 0, cases = 0;
      for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof ds / sizeof *ds; b++, cases++)
          qblock_case(q4, ns[a], ds[b], (a + b) % 3 == 0, 0, &bad);
      snprintf(nm, sizeof nm, "quant_kernels[%s]: %s scores and value sums on random blocks "
               "(%zu shapes, n 1..100, d 32/64/128/40) equal dequantize-then-dot bit for bit",
               ln, q4 ? "q4_0" : "q8_0", cases);
      CHECK(bad == 0, nm, "%zu numbers differ", bad);
      static const unsigned muts[] = {KVB_QA_MUT_SCALE_NEXT, KVB_QA_MUT_NIBBLE_INTERLEAVE};
      for (int k = 0; k < 1 + q4; k++) {
        size_t mbad = 0;
        qblock_case(q4, 47, 64, 0, muts[k], &mbad);
        snprintf(nm, sizeof nm, "quant_kernels[%s]: %s mutant %s is rejected (scores or value "
                 "sums differ from the reference)", ln, q4 ? "q4_0" : "q8_0",
                 k ? "NIBBLE_INTERLEAVE" : "SCALE_NEXT");
        CHECK(mbad > 0, nm, "the mutant's %zu numbers all equal the reference's", (size_t)47 + 64);
      }
    }
    size_t bad = 0, mbad2 = 0, mbad4 = 0;
    for (size_t i = 0; i < sizeof kv / sizeof *kv; i++)
      kivi_case(kv[i].bits, kv[i].ngroups, kv[i].G, kv[i].d, kv[i].no_zero, 0, &bad);
    snprintf(nm, sizeof nm, "quant_kernels[%s]: KIVI-2/4 per-channel key scores and per-token "
             "value sums on random codes (%zu shapes, G 6..64, d 30..128) equal dequantize-then-"
             "dot bit for bit", ln, sizeof kv / sizeof *kv);
    CHECK(bad == 0, nm, "%zu numbers differ", bad);
    kivi_case(2, 3, 32, 64, 0, KVB_QA_MUT_SCALE_NEXT, &mbad2);
    kivi_case(4, 2, 32, 64, 0, KVB_QA_MUT_SCALE_NEXT, &mbad4);
    snprintf(nm, sizeof nm, "quant_kernels[%s]: KIVI mutant SCALE_NEXT (a channel's or group's "
             "(z, s) from the next) is rejected at 2 and 4 bits", ln);
    CHECK(mbad2 > 0 && mbad4 > 0, nm, "differing numbers: %zu (2 bits), %zu (4 bits)", mbad2, mbad4);
  }
  unsetenv("KVBOUND_SIMD");
  UNIT_EXIT();
}

/* test_quant_fused.c — the quantized caches' fused query (src/baselines/quant_attend.h) answers
 * bit for bit what kvb_attention_exact answers on the dequantized cache (kvb_quant_cache_read):
 * q8_0 and q4_0 at a head dimension of whole blocks (64) and of a padded one (40), KIVI-2 and
 * KIVI-4 with their residuals part full, each mutant that changes the dequantization
 * (scale_fp32, no_offset, no_zero_point, keys_per_token), token counts that are not multiples
 * of the four-token stride, queries on the way and at the end; and a score beyond double range,
 * where the fused path must hand over to the reference (same answer, same error).
 *
 * The comparison is memcmp of the outputs: a kernel that rounds differently anywhere (the scale
 * factored out of the dot, d·Σ c_i·q_i instead of Σ (c_i·d)·q_i — the mutant below) fails it. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static kvb_method *mk(const char *name, size_t d, const char *a1, const char *a2) {
  kvb_method_config cfg = {.d_key = d, .d_value = d, .scale = 1.0 / sqrt((double)d), .rng = NULL};
  kvb_params p;
  kvb_params_init(&p);
  if (a1) kvb_params_parse(&p, a1);
  if (a2) kvb_params_parse(&p, a2);
  kvb_method *m = NULL;
  return kvb_method_alloc(name, &cfg, &p, &m) ? NULL : m;
}

/* The reference answer: the cache read back dequantized, then kvb_attention_exact. */
static int reference(const kvb_method *m, size_t d, const double *q, double *z, double **K,
                     double **V) {
  size_t n = kvb_quant_cache_read(m, NULL, NULL, 0);
  *K = realloc(*K, (n ? n : 1) * d * sizeof **K), *V = realloc(*V, (n ? n : 1) * d * sizeof **V);
  kvb_quant_cache_read(m, *K, *V, n);
  return kvb_attention_exact(n, d, d, *K, *V, q, 1.0 / sqrt((double)d), z, NULL);
}

/* Feeds n tokens of a fixed pseudo-random stream; after every `every` tokens (and at the end)
 * compares the method's answer with the reference bit for bit. Returns mismatches (−1: error). */
static int run(const char *name, size_t d, const char *a1, const char *a2, size_t n, size_t every,
               unsigned seed) {
  kvb_method *m = mk(name, d, a1, a2);
  if (!m) return -1;
  double *k = malloc(d * sizeof *k), *v = malloc(d * sizeof *v), *q = malloc(d * sizeof *q),
         *z = malloc(d * sizeof *z), *zr = malloc(d * sizeof *zr), *K = NULL, *V = NULL;
  uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
  int bad = 0;
  for (size_t t = 1; t <= n && bad >= 0; t++) {
    for (size_t j = 0; j < d; j++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      double u = (double)(s >> 11) / 9007199254740992.0; /* [0, 1) */
      k[j] = 3.0 * (u - 0.5) + (j % 7 == 0 ? 4.0 : 0.0); /* an outlier channel, as real keys */
      v[j] = sin((double)(t * d + j)) * (1 + (double)(j % 3));
      q[j] = cos((double)(t + 3 * j)) * 2.0;
    }
    if (kvb_method_update(m, k, d, v, d)) bad = -1;
    if (bad >= 0 && (t % every == 0 || t == n)) {
      int e1 = kvb_method_query(m, q, d, z, d), e2 = reference(m, d, q, zr, &K, &V);
      if (e1 || e2) bad = -1;
      else if (memcmp(z, zr, d * sizeof *z) != 0) bad++;
    }
  }
  kvb_method_free(m);
  free(k), free(v), free(q), free(z), free(zr), free(K), free(V);
  return bad;
}

int main(void) {
  static const struct {
    const char *name, *a1, *a2;
    size_t d, n, every;
  } cases[] = {
      {"q8_0", NULL, NULL, 64, 203, 17},
      {"q8_0", NULL, NULL, 40, 99, 7},
      {"q8_0", "mutant=scale_fp32", NULL, 64, 101, 11},
      {"q4_0", NULL, NULL, 64, 203, 17},
      {"q4_0", NULL, NULL, 40, 99, 7},
      {"q4_0", "mutant=no_offset", NULL, 64, 101, 11},
      {"q4_0", "mutant=nibble_swap", NULL, 48, 77, 5},
      {"kivi", "bits=2", NULL, 64, 333, 13},
      {"kivi", "bits=4", NULL, 64, 333, 13},
      {"kivi", "bits=2", "group=8", 40, 150, 3},
      {"kivi", "bits=4", "residual=64", 64, 200, 9},
      {"kivi", "bits=2", "mutant=no_zero_point", 64, 300, 23},
      {"kivi", "bits=4", "mutant=keys_per_token", 64, 300, 23},
      {"kivi", "bits=2", "mutant=scale_2b", 64, 300, 23},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int bad = run(cases[i].name, cases[i].d, cases[i].a1, cases[i].a2, cases[i].n, cases[i].every,
                  (unsigned)i);
    char nm[200];
    snprintf(nm, sizeof nm, "quant_fused: %s %s %s d=%zu, n=%zu: the query equals "
             "kvb_attention_exact on the dequantized cache bit for bit", cases[i].name,
             cases[i].a1 ? cases[i].a1 : "", cases[i].a2 ? cases[i].a2 : "", cases[i].d,
             cases[i].n);
    CHECK(bad == 0, nm, "%d mismatching queries (-1: an error: %s)", bad,
          bad < 0 ? kvb_strerror_last() : "");
  }

  /* Beyond double range: two channels at ±1e308 and a query of 10 on both make the plain
   * score's products overflow to +Inf and −Inf (NaN summed) although the score is finite;
   * kvb_score rescales (the reference's path), and the fused query must hand over to it — same
   * status, same answer. KIVI with G = R = 2 quantizes the keys after two tokens (a channel
   * constant over its group keeps its value exactly: s = 0, x̂ = z). */
  {
    size_t d = 8;
    kvb_method *m = mk("kivi", d, "group=2", "residual=2");
    double k[8], v[8], q[8], z[8], zr[8], *K = NULL, *V = NULL;
    int ok = m != NULL;
    for (size_t t = 0; t < 6 && ok; t++) {
      for (size_t j = 0; j < d; j++)
        k[j] = j == 0 ? 1e308 : j == 1 ? -1e308 : 0.1 * (double)(j + t), v[j] = (double)j - (double)t;
      ok = kvb_method_update(m, k, d, v, d) == 0;
    }
    for (size_t j = 0; j < d; j++) q[j] = j < 2 ? 10.0 : 1.0;
    int e1 = ok ? kvb_method_query(m, q, d, z, d) : -1, e2 = ok ? reference(m, d, q, zr, &K, &V) : -1;
    CHECK(ok && e1 == 0 && e2 == 0 && memcmp(z, zr, sizeof z) == 0 && isfinite(z[0]),
          "quant_fused: a score whose products overflow hands over to the reference (same "
          "answer)", "ok %d, status %d vs %d, z0 %g vs %g", ok, e1, e2, z[0], zr[0]);
    kvb_method_free(m);
    free(K), free(V);
  }

  /* The check's own mutant: the score with the scale factored out of the sum, d·Σ c_i·q_i, as
   * a faster kernel might form it. It agrees to ~1e-16 relative but not bit for bit, and memcmp
   * must see it. */
  {
    size_t d = 64, differ = 0;
    kvb_method *m = mk("q8_0", d, NULL, NULL);
    double k[64], q[64];
    uint64_t s = 12345;
    for (size_t trial = 0; trial < 50 && m; trial++) {
      for (size_t j = 0; j < d; j++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        k[j] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
        q[j] = sin((double)(j + trial));
      }
      kvb_method_update(m, k, d, k, d);
    }
    size_t n = m ? kvb_quant_cache_read(m, NULL, NULL, 0) : 0;
    double *KK = malloc((n ? n : 1) * d * sizeof *KK);
    if (m && KK) kvb_quant_cache_read(m, KK, NULL, n);
    for (size_t i = 0; i < n && KK; i++) {
      double ref = 0, fac = 0;
      for (size_t j = 0; j < d; j++) ref += KK[i * d + j] * q[j];
      /* factored: per block, scale · Σ (x/scale)·q with scale = the block's max |x| / 127 */
      for (size_t b = 0; b < 2; b++) {
        double mx = 0, part = 0;
        for (size_t j = 0; j < 32; j++) mx = fmax(mx, fabs(KK[i * d + b * 32 + j]));
        double sc = mx / 127.0;
        for (size_t j = 0; j < 32 && sc > 0; j++) part += (KK[i * d + b * 32 + j] / sc) * q[b * 32 + j];
        fac += sc * part;
      }
      differ += memcmp(&ref, &fac, sizeof ref) != 0;
    }
    CHECK(n == 50 && differ > 0, "quant_fused: mutant scale-factored dot (d·Σ c·q) differs from "
          "the reference's bits in some score, so the bit-for-bit check would reject it",
          "n %zu, %zu of 50 scores differ", n, differ);
    free(KK);
    kvb_method_free(m);
  }
  UNIT_EXIT();
}

/* test_pcg32.c — PCG32 against the published reference output, advance, GSL registration. */
#include "kvbound.h"
#include "unit.h"

#include <string.h>

int main(void) {
  /* Reference: O'Neill's pcg32-demo (pcg-c-basic), initstate 42, initseq 54, first six outputs. */
  static const uint32_t ref[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                  0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
  kvb_pcg32 g;
  kvb_pcg32_seed(&g, 42u, 54u);
  int ok = 1;
  for (int i = 0; i < 6; i++) ok &= kvb_pcg32_next(&g) == ref[i];
  CHECK(ok, "pcg32.known_answer", "first six outputs differ from pcg32-demo's");

  /* advance(k) equals k single steps, and advance(-k) undoes it (the LCG period is 2^64). */
  kvb_pcg32 a, b;
  kvb_pcg32_seed(&a, 7u, 3u);
  b = a;
  for (int i = 0; i < 12345; i++) kvb_pcg32_next(&a);
  kvb_pcg32_advance(&b, 12345u);
  CHECK(a.state == b.state && a.inc == b.inc, "pcg32.advance_matches_steps", "state differs");
  kvb_pcg32_advance(&b, (uint64_t)0 - 12345u);
  kvb_pcg32 c;
  kvb_pcg32_seed(&c, 7u, 3u);
  CHECK(b.state == c.state, "pcg32.advance_inverse", "advance(-k) did not undo advance(k)");

  /* GSL registration: gsl_rng_set(r, 42) is the reference stream 54. */
  gsl_rng *r = gsl_rng_alloc(kvb_rng_pcg32);
  gsl_rng_set(r, 42);
  ok = 1;
  for (int i = 0; i < 6; i++) ok &= gsl_rng_get(r) == ref[i];
  CHECK(ok, "pcg32.gsl_type", "gsl_rng_get differs from the reference");
  CHECK(strcmp(gsl_rng_name(r), "kvb-pcg32") == 0 && gsl_rng_max(r) == 0xffffffffUL,
        "pcg32.gsl_metadata", "name %s max %lu", gsl_rng_name(r), gsl_rng_max(r));
  /* Flat state: a clone continues identically (GSL copies `size` bytes). */
  gsl_rng *cl = gsl_rng_clone(r);
  ok = 1;
  for (int i = 0; i < 100; i++) ok &= gsl_rng_get(r) == gsl_rng_get(cl);
  CHECK(ok, "pcg32.clone", "clone diverged");
  double u = 0;
  ok = 1;
  for (int i = 0; i < 100000; i++) {
    u = gsl_rng_uniform(r);
    ok &= u >= 0 && u < 1;
  }
  CHECK(ok, "pcg32.uniform_range", "uniform outside [0,1): %g", u);
  gsl_rng_free(cl);
  gsl_rng_free(r);

  /* Substreams: reproducible, and distinct for distinct indices. */
  gsl_rng *s1 = kvb_rng_alloc_substream(99, 5), *s2 = kvb_rng_alloc_substream(99, 5),
          *s3 = kvb_rng_alloc_substream(99, 6);
  uint32_t x1 = gsl_rng_get(s1), x2 = gsl_rng_get(s2), x3 = gsl_rng_get(s3);
  CHECK(x1 == x2 && x1 != x3, "pcg32.substreams", "%u %u %u", x1, x2, x3);
  gsl_rng_free(s1);
  gsl_rng_free(s2);
  gsl_rng_free(s3);

  /* Bounded draws stay in range and hit every value. */
  kvb_pcg32_seed(&g, 1, 1);
  int seen[7] = {0};
  ok = 1;
  for (int i = 0; i < 7000; i++) {
    uint32_t v = kvb_pcg32_bounded(&g, 7);
    ok &= v < 7;
    if (v < 7) seen[v] = 1;
  }
  for (int i = 0; i < 7; i++) ok &= seen[i];
  CHECK(ok, "pcg32.bounded", "out of range or value never drawn");
  UNIT_EXIT();
}

/* pcg32.c — PCG32 XSH-RR 64/32 and its gsl_rng_type registration (see pcg32.h). */
#include "pcg32.h"
#include "kvb_error.h"

#define PCG_MULT 6364136223846793005ULL

static void step(kvb_pcg32 *g) { g->state = g->state * PCG_MULT + g->inc; }

void kvb_pcg32_seed(kvb_pcg32 *g, uint64_t initstate, uint64_t initseq) {
  g->state = 0u;
  g->inc = (initseq << 1u) | 1u;
  step(g);
  g->state += initstate;
  step(g);
}

uint32_t kvb_pcg32_next(kvb_pcg32 *g) {
  uint64_t old = g->state;
  step(g);
  /* Output from the old state: xorshift the high bits down, keep 32, rotate by the top 5. */
  uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
  uint32_t rot = (uint32_t)(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

void kvb_pcg32_advance(kvb_pcg32 *g, uint64_t delta) {
  /* Brown (1994), "Random number generation with arbitrary strides": compose the affine
   * map x -> a x + c with itself by repeated squaring; total mult/plus give delta steps. */
  uint64_t cur_mult = PCG_MULT, cur_plus = g->inc;
  uint64_t acc_mult = 1u, acc_plus = 0u;
  while (delta > 0) {
    if (delta & 1u) {
      acc_mult *= cur_mult;
      acc_plus = acc_plus * cur_mult + cur_plus;
    }
    cur_plus = (cur_mult + 1u) * cur_plus;
    cur_mult *= cur_mult;
    delta >>= 1u;
  }
  g->state = acc_mult * g->state + acc_plus;
}

double kvb_pcg32_uniform(kvb_pcg32 *g) {
  uint64_t hi = kvb_pcg32_next(g) >> 5; /* 27 bits */
  uint64_t lo = kvb_pcg32_next(g) >> 6; /* 26 bits */
  return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

uint32_t kvb_pcg32_bounded(kvb_pcg32 *g, uint32_t bound) {
  /* Reject the first (2^32 mod bound) values so every residue is equally likely. */
  uint32_t threshold = (uint32_t)(-bound) % bound;
  for (;;) {
    uint32_t r = kvb_pcg32_next(g);
    if (r >= threshold) return r % bound;
  }
}

/* ---- gsl_rng_type glue: flat state, as GSL's rng/mt.c does ---- */

static void gsl_set(void *vstate, unsigned long int s) {
  kvb_pcg32_seed((kvb_pcg32 *)vstate, (uint64_t)s, 54u);
}
static unsigned long int gsl_get(void *vstate) { return kvb_pcg32_next((kvb_pcg32 *)vstate); }
static double gsl_get_double(void *vstate) {
  /* GSL requires [0,1); 32-bit resolution like its other 32-bit generators. */
  return kvb_pcg32_next((kvb_pcg32 *)vstate) / 4294967296.0;
}

static const gsl_rng_type pcg32_type = {"kvb-pcg32", 0xffffffffUL, 0UL, sizeof(kvb_pcg32),
                                        &gsl_set, &gsl_get, &gsl_get_double};
const gsl_rng_type *kvb_rng_pcg32 = &pcg32_type;

kvb_pcg32 *kvb_rng_pcg32_state(gsl_rng *r) {
  if (!r || r->type != kvb_rng_pcg32) return 0;
  return (kvb_pcg32 *)r->state;
}

int kvb_rng_set_substream(gsl_rng *r, uint64_t seed, uint64_t index) {
  kvb_pcg32 *g = kvb_rng_pcg32_state(r);
  if (!g) return KVB_ERROR(KVB_EINVAL, "generator is not a kvb_rng_pcg32");
  kvb_pcg32_seed(g, seed, index);
  /* Distinct streams already differ; the jump also separates equal-stream uses of one seed. */
  kvb_pcg32_advance(g, index << 40);
  return KVB_OK;
}

gsl_rng *kvb_rng_alloc_substream(uint64_t seed, uint64_t index) {
  gsl_rng *r = gsl_rng_alloc(kvb_rng_pcg32);
  if (!r) {
    KVB_ERROR(KVB_ENOMEM, "cannot allocate PCG32 generator");
    return 0;
  }
  kvb_rng_set_substream(r, seed, index);
  return r;
}

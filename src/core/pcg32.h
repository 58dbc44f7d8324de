/* pcg32.h — PCG32 (XSH-RR 64/32), written from O'Neill's definition
 * (PCG: A Family of Simple Fast Space-Efficient Statistically Good Algorithms
 * for Random Number Generation, 2014): a 64-bit LCG with multiplier
 * 6364136223846793005 and an odd increment selecting the stream, output by
 * xorshift-high then random rotation.
 *
 * It is the only source of randomness in kvbound. It is also registered as a
 * gsl_rng_type (kvb_rng_pcg32) so every gsl_ran_* distribution draws from it;
 * its GSL state is flat (no pointers), so gsl_rng_clone/memcpy copies it.
 *
 * Reproducible parallel substreams: kvb_pcg32_substream(seed, index) seeds
 * stream `index` and then jumps ahead by index * 2^40 steps (advance is
 * O(log steps) by Brown's LCG jump-ahead), so trial i of an experiment draws
 * the same numbers however many jobs run it — and, later, on the GPU too. */
#ifndef KVB_PCG32_H
#define KVB_PCG32_H

#include <stdint.h>
#include <gsl/gsl_rng.h>

typedef struct {
  uint64_t state; /* LCG state */
  uint64_t inc;   /* stream increment; always odd */
} kvb_pcg32;

/* Seeds as the reference pcg32_srandom_r does: stream from initseq, one step, add initstate, one step. */
void kvb_pcg32_seed(kvb_pcg32 *g, uint64_t initstate, uint64_t initseq);
uint32_t kvb_pcg32_next(kvb_pcg32 *g);
/* Advances the generator by `delta` steps (mod 2^64) in O(log delta). */
void kvb_pcg32_advance(kvb_pcg32 *g, uint64_t delta);
/* Uniform double in [0, 1) with 53 random bits (two outputs). */
double kvb_pcg32_uniform(kvb_pcg32 *g);
/* Unbiased integer in [0, bound) (bound >= 1) by rejection of the short tail. */
uint32_t kvb_pcg32_bounded(kvb_pcg32 *g, uint32_t bound);

/* The GSL registration. gsl_rng_set(r, s) seeds with initstate = s, initseq = 54
 * (the reference demo's stream); use kvb_rng_alloc_substream for substreams. */
extern const gsl_rng_type *kvb_rng_pcg32;

/* Allocates a GSL generator on PCG32 stream derived from (seed, index):
 * initseq = index, then jump ahead index * 2^40. NULL on allocation failure
 * (message recorded). Free with gsl_rng_free. */
gsl_rng *kvb_rng_alloc_substream(uint64_t seed, uint64_t index);
/* Re-seeds an existing PCG32 gsl_rng onto substream (seed, index). */
int kvb_rng_set_substream(gsl_rng *r, uint64_t seed, uint64_t index);
/* Direct access to the PCG state inside a kvb_rng_pcg32 gsl_rng (NULL if another type). */
kvb_pcg32 *kvb_rng_pcg32_state(gsl_rng *r);

#endif

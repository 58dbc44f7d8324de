/* stream.h — streams of (q, k, v) triplets and their generators.
 *
 * A stream is materialized (row-major Q, K: n×d_key; V: n×d_value) so that the exact oracle,
 * the shadow checks and every method see the very same tokens, and so .npy dumps and
 * generators share one type. It records the generating parameters a check needs: the
 * clusterability (m, δ) the generator guarantees (000 Definition 1), the query-norm bound r.
 * Generators are registered by name like methods; adversarial/ adds its own.
 *
 * Mutants (mutant.h): a stream type lists its deliberately wrong variants (e.g. an attack
 * switched off) in its `mutants` table; "mutant=NAME" selects one, kvb_stream_generate_type
 * validates it and records it in the stream, and the generator asks
 * kvb_stream_is_mutant(s, "NAME"). */
#ifndef KVB_STREAM_H
#define KVB_STREAM_H

#include <stddef.h>
#include <gsl/gsl_rng.h>

#include "mutant.h"
#include "params.h"

typedef struct kvb_stream_type kvb_stream_type;

typedef struct {
  char name[64];
  size_t n, d_key, d_value;
  double *Q, *K, *V;
  /* What the generator guarantees; NAN where it guarantees nothing. */
  double m;     /* keys are (m, delta)-clusterable (000 Definition 1) */
  double delta; /* every two keys of one generating cluster are within delta */
  double r;     /* every query has ‖q‖₂ <= r */
  kvb_params params; /* the generating parameters as given ("mutant" included) */
  const kvb_stream_type *type; /* the generator, NULL for a stream built by hand */
  int mutant;        /* 0: faithful; i+1: type->mutants[i] */
} kvb_stream;

struct kvb_stream_type {
  const char *name;
  const char *summary;
  const char *attacks; /* for adversarial streams: the assumption or proof step attacked; else NULL */
  const kvb_param_spec *params;
  const kvb_mutant_spec *mutants; /* NULL-name terminated, or NULL */
  /* Fills s (arrays allocated by the caller from n, d_key, d_value params; s->type and
   * s->mutant already set). p holds the validated parameters without "mutant". */
  int (*generate)(const kvb_params *p, const kvb_param_spec *spec, gsl_rng *rng, kvb_stream *s);
};

int kvb_stream_alloc(size_t n, size_t d_key, size_t d_value, kvb_stream **out);
void kvb_stream_free(kvb_stream *s); /* NULL is fine */

/* Generates a stream of type t with parameters p (callers by name use kvb_stream_generate,
 * registry.h). Every generator takes n, d_key, d_value. */
int kvb_stream_generate_type(const kvb_stream_type *t, const kvb_params *p, gsl_rng *rng,
                             kvb_stream **out);

/* Name of the stream's mutant, or NULL when faithful (or built by hand). */
const char *kvb_stream_mutant_name(const kvb_stream *s);
/* Whether the stream was generated as mutant `name` (for the generator's own `if`s). */
int kvb_stream_is_mutant(const kvb_stream *s, const char *name);

/* For generators that read their data (npy files, a model's caches): replaces s's arrays by
 * copies of q, k (n × d_key) and v (n × d_value), sets n and the dimensions, and records
 * r = max‖q_i‖ (m and δ stay unknown: nothing is guaranteed about real keys). KVB_ENOMEM (a
 * message naming `who`) leaves s unchanged. */
int kvb_stream_set_data(kvb_stream *s, size_t n, size_t d_key, size_t d_value, const double *q,
                        const double *k, const double *v, const char *who);

/* Building blocks for generators (all draw from rng). */
void kvb_rand_gaussian_vec(gsl_rng *rng, double *x, size_t d, double sigma);
/* Uniform on the sphere of radius rad. */
void kvb_rand_sphere(gsl_rng *rng, double *x, size_t d, double rad);
/* Uniform in the ball of radius rad. */
void kvb_rand_ball(gsl_rng *rng, double *x, size_t d, double rad);

#endif

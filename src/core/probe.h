/* probe.h — measurements of a stream that are not attention estimates: the quantities the
 * papers plot or bound besides the error of a method.
 *
 *   walk     the discrepancy of the Self-Balancing Walk (003 Alg. 3, Theorem A.1) run online
 *            over the stream's keys or values, against independent random signs: at each
 *            query position j, D_j = |<Σ_{i≤j} ε_i u_i, g>| for a fixed random unit g drawn
 *            before the walk (Theorem A.1 is "for any vector u", so g must not depend on the
 *            signs), and ‖Σ_{i≤j} ε_i u_i‖_∞ (the d coordinate directions).
 *   kcenter  greedy k-center covering radius of the first j keys or values (000 §3.1,
 *            Fig. 1: "key embeddings are more clusterable than value ones"), absolute and
 *            relative to the one-center radius so keys and values compare on one axis.
 *
 * A probe sees the whole materialized stream and the increasing query positions js[0..nq)
 * (prefix lengths, 1-based), and writes nq rows of its columns (out[a·ncols + c]). It draws
 * only from the rng it is given, in a documented order, so a run is reproducible.
 * Probes are registered by name like methods and streams (`kvbound list`).
 *
 * Mutants (mutant.h): a probe type lists its deliberately wrong variants in its `mutants`
 * table; "mutant=NAME" selects one, kvb_probe_run_type validates it and hands the probe a
 * kvb_probe naming it, and the probe asks kvb_probe_is_mutant(pr, "NAME"). */
#ifndef KVB_PROBE_H
#define KVB_PROBE_H

#include <stddef.h>
#include <gsl/gsl_rng.h>

#include "mutant.h"
#include "params.h"
#include "stream.h"

#define KVB_PROBE_MAX_COLS 4

typedef struct kvb_probe_type kvb_probe_type;

/* One run of a probe: its type and the mutant it runs (0: faithful; i+1: type->mutants[i]). */
typedef struct {
  const kvb_probe_type *type;
  int mutant;
} kvb_probe;

struct kvb_probe_type {
  const char *name;
  const char *summary;
  const char *source;                        /* the paper and number it measures */
  const kvb_param_spec *params;
  const kvb_mutant_spec *mutants;            /* NULL-name terminated, or NULL */
  const char *columns[KVB_PROBE_MAX_COLS + 1]; /* NULL-terminated column names */
  const char *column_doc;                    /* one line per column, for `kvbound list` */
  /* Arguments validated; p holds the parameters without "mutant", sp = pr->type->params. */
  int (*run)(const kvb_probe *pr, const kvb_stream *s, const kvb_params *p,
             const kvb_param_spec *sp, gsl_rng *rng, size_t nq, const size_t *js, double *out);
};

size_t kvb_probe_ncols(const kvb_probe_type *t);

/* Validates p against the probe's parameters and js (nq >= 1, strictly increasing, within
 * 1..s->n), then runs probe type t (callers by name use kvb_probe_run, registry.h).
 * out: nq × kvb_probe_ncols. On error nothing is written. */
int kvb_probe_run_type(const kvb_probe_type *t, const kvb_stream *s, const kvb_params *p,
                       gsl_rng *rng, size_t nq, const size_t *js, double *out);

/* Name of the probe run's mutant, or NULL when faithful. */
const char *kvb_probe_mutant_name(const kvb_probe *pr);
/* Whether the probe runs mutant `name` (for the probe's own `if`s). */
int kvb_probe_is_mutant(const kvb_probe *pr, const char *name);

#endif

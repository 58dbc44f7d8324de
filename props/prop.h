/* prop.h — the property-check harness: one registry of claims, each a function that returns
 * a verdict, run once faithfully and once per mutant it must catch (DESIGN.md, Claims).
 *
 * Conventions every claim follows:
 *   - randomness only from prop_rng(ctx, i): PCG32 substream i of (seed, claim id), so a
 *     claim's numbers do not depend on which other claims ran or in which order;
 *   - every stochastic assertion is a hypothesis test at false-alarm probability
 *     <= PROP_ALPHA (1e-6), made through prop_pvalue() so the p-value and α are printed;
 *   - exact invariants go through prop_check();
 *   - a claim applies ctx->mutant to the method it builds with prop_apply_mutant();
 *   - measured numbers for the report go through prop_note() (one line each). */
#ifndef KVB_PROP_H
#define KVB_PROP_H

#include <stdint.h>
#include <stdio.h>

#include <gsl/gsl_rng.h>

#include "kvbound.h"

#define PROP_ALPHA 1e-6

typedef enum { PROP_HOLDS = 0, PROP_FAILS = 1, PROP_VACUOUS = 2, PROP_SKIPPED = 3 } prop_verdict;

typedef struct {
  uint64_t seed;        /* base seed (fixed in make check; KVBOUND_SEED overrides) */
  const char *id;       /* claim id */
  const char *mutant;   /* "method:mutant" being injected, or NULL for the faithful run */
  int full;             /* 1 in make check-full: more trials, larger grids */
  int failures;         /* assertions failed so far */
  int vacuous;          /* set by prop_vacuous() */
  FILE *log;            /* details (stdout for faithful runs, /dev/null-like for mutants) */
  char notes[4096];     /* measured numbers for the report */
} prop_ctx;

typedef struct {
  const char *id;        /* "subgen.lemma1.mu" */
  const char *source;    /* "000 Lemma 1" */
  const char *kind;      /* invariant | distribution | bound | scaling | practicality | comparison */
  const char *statement; /* what is checked, with α */
  const char *mutants[8];/* "method:mutant" names this claim must reject; at least one */
  void (*run)(prop_ctx *ctx);
} prop_claim;

/* A generator on substream i of this claim. Caller frees with gsl_rng_free. */
gsl_rng *prop_rng(const prop_ctx *ctx, uint64_t i);
/* Sets "mutant" in p when ctx->mutant is "method:NAME" for this method. */
void prop_apply_mutant(const prop_ctx *ctx, const char *method, kvb_params *p);
/* Exact assertion. Returns cond. */
int prop_check(prop_ctx *ctx, int cond, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Hypothesis test: fails when pvalue < alpha (alpha must be <= PROP_ALPHA). Returns 1 if it held. */
int prop_pvalue(prop_ctx *ctx, double pvalue, double alpha, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records a measured number for the report (and the log). */
void prop_note(prop_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Marks the claim's guarantee as vacuous at practical parameters (a legitimate verdict). */
void prop_vacuous(prop_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Trials scaled by tier. */
unsigned prop_trials(const prop_ctx *ctx, unsigned check, unsigned full);

/* Helpers shared by many claims. */
/* Generates stream `name` with "k=v" assignments (NULL-terminated), substream i. */
kvb_stream *prop_stream(prop_ctx *ctx, uint64_t i, const char *name, const char *const *assign);
/* SubGen (000 Alg. 1) with ctx's mutant applied when it targets "subgen"; NULL (and a failed
 * check naming the error) when creation fails. */
kvb_method *prop_subgen(prop_ctx *ctx, gsl_rng *rng, size_t d_key, size_t d_value, double scale,
                        double delta, double t, double s);
/* Binomial bound test: F failures in N trials against claimed failure probability p. */
int prop_binomial_bound(prop_ctx *ctx, unsigned F, unsigned N, double p, const char *what);

#endif

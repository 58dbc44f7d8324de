/* registry.h — everything kvbound can run, by name: methods, stream generators and probes.
 *
 * The tables list every registered type, one line each (registry_methods.c,
 * registry_streams.c, registry_probes.c). Adding a method is one new file in its family's folder
 * (src/subgen/, src/balancekv/, src/baselines/) defining a kvb_method_type, plus one line in
 * registry_methods.c; streams and probes the same way. The lookups below are the only place a
 * name becomes a type, so `kvbound list`, specs, the props and the library agree on names. */
#ifndef KVB_REGISTRY_H
#define KVB_REGISTRY_H

#include <stddef.h>
#include <gsl/gsl_rng.h>

#include "method.h"
#include "params.h"
#include "probe.h"
#include "stream.h"

extern const kvb_method_type *const kvb_method_registry[]; /* NULL-terminated */
extern const kvb_stream_type *const kvb_stream_registry[];
extern const kvb_probe_type *const kvb_probe_registry[];

/* Registered type `name`, or NULL. */
const kvb_method_type *kvb_method_lookup(const char *name);
const kvb_stream_type *kvb_stream_lookup(const char *name);
const kvb_probe_type *kvb_probe_lookup(const char *name);
/* i-th registered type, NULL past the end. */
const kvb_method_type *kvb_method_type_at(size_t i);
const kvb_stream_type *kvb_stream_type_at(size_t i);
const kvb_probe_type *kvb_probe_type_at(size_t i);

/* Creates method `name` (kvb_method_alloc_type). On error *out is NULL and a message names the
 * problem (an unknown name: KVB_ENOTFOUND, "see `kvbound list`"). */
int kvb_method_alloc(const char *name, const kvb_method_config *cfg, const kvb_params *p,
                     kvb_method **out);
/* Generates stream `name` (kvb_stream_generate_type). */
int kvb_stream_generate(const char *name, const kvb_params *p, gsl_rng *rng, kvb_stream **out);
/* Runs probe `name` (kvb_probe_run_type). */
int kvb_probe_run(const char *name, const kvb_stream *s, const kvb_params *p, gsl_rng *rng,
                  size_t nq, const size_t *js, double *out);

#endif

/* registry.c — names to types (registry.h). One lookup serves the three tables: every type
 * struct begins with its `const char *name`, so a pointer to it is a pointer to its name. */
#include "registry.h"

#include <string.h>

#include "kvb_error.h"

static const void *find(const void *const *table, const char *name) {
  for (size_t i = 0; name && table[i]; i++)
    if (strcmp(*(const char *const *)table[i], name) == 0) return table[i];
  return NULL;
}

static const void *nth(const void *const *table, size_t i) {
  for (size_t k = 0; table[k]; k++)
    if (k == i) return table[k];
  return NULL;
}

#define TABLE(t) ((const void *const *)(t))

const kvb_method_type *kvb_method_lookup(const char *name) { return find(TABLE(kvb_method_registry), name); }
const kvb_stream_type *kvb_stream_lookup(const char *name) { return find(TABLE(kvb_stream_registry), name); }
const kvb_probe_type *kvb_probe_lookup(const char *name) { return find(TABLE(kvb_probe_registry), name); }
const kvb_method_type *kvb_method_type_at(size_t i) { return nth(TABLE(kvb_method_registry), i); }
const kvb_stream_type *kvb_stream_type_at(size_t i) { return nth(TABLE(kvb_stream_registry), i); }
const kvb_probe_type *kvb_probe_type_at(size_t i) { return nth(TABLE(kvb_probe_registry), i); }

int kvb_method_alloc(const char *name, const kvb_method_config *cfg, const kvb_params *p,
                     kvb_method **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "output pointer is NULL");
  *out = NULL;
  if (!name) return KVB_ERROR(KVB_ENULL, "method name is NULL");
  const kvb_method_type *t = kvb_method_lookup(name);
  if (!t) return KVB_ERROR(KVB_ENOTFOUND, "no method named '%s' (see `kvbound list`)", name);
  return kvb_method_alloc_type(t, cfg, p, out);
}

int kvb_stream_generate(const char *name, const kvb_params *p, gsl_rng *rng, kvb_stream **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "stream output pointer is NULL");
  *out = NULL;
  const kvb_stream_type *t = kvb_stream_lookup(name);
  if (!t)
    return KVB_ERROR(KVB_ENOTFOUND, "no stream named '%s' (see `kvbound list`)", name ? name : "(null)");
  return kvb_stream_generate_type(t, p, rng, out);
}

int kvb_probe_run(const char *name, const kvb_stream *s, const kvb_params *p, gsl_rng *rng,
                  size_t nq, const size_t *js, double *out) {
  const kvb_probe_type *t = kvb_probe_lookup(name);
  if (!t) return KVB_ERROR(KVB_EINVAL, "no probe named '%s' is registered", name ? name : "(null)");
  return kvb_probe_run_type(t, s, p, rng, nq, js, out);
}

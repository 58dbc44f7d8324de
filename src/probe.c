/* probe.c — the probe registry and the argument checks every probe shares (probe.h). */
#include "probe.h"

#include <math.h>
#include <string.h>

#include "kvb_error.h"

extern const kvb_probe_type kvb_probe_walk, kvb_probe_kcenter;

static const kvb_probe_type *const registry[] = {&kvb_probe_walk, &kvb_probe_kcenter, NULL};

const kvb_probe_type *kvb_probe_type_at(size_t i) {
  return i < sizeof registry / sizeof registry[0] ? registry[i] : NULL;
}

const kvb_probe_type *kvb_probe_lookup(const char *name) {
  for (size_t i = 0; name && registry[i]; i++)
    if (strcmp(registry[i]->name, name) == 0) return registry[i];
  return NULL;
}

size_t kvb_probe_ncols(const kvb_probe_type *t) {
  size_t n = 0;
  while (t && n < KVB_PROBE_MAX_COLS && t->columns[n]) n++;
  return n;
}

int kvb_probe_run(const char *name, const kvb_stream *s, const kvb_params *p, gsl_rng *rng,
                  size_t nq, const size_t *js, double *out) {
  const kvb_probe_type *t = kvb_probe_lookup(name);
  if (!t) return KVB_ERROR(KVB_EINVAL, "no probe named '%s' is registered", name ? name : "(null)");
  if (!s || !p || !rng || !js || !out) return KVB_ERROR(KVB_ENULL, "probe %s: NULL argument", name);
  if (nq == 0) return KVB_ERROR(KVB_EINVAL, "probe %s: no query position", name);
  for (size_t a = 0; a < nq; a++) {
    if (js[a] < 1 || js[a] > s->n)
      return KVB_ERROR(KVB_EINVAL, "probe %s: query position %zu outside 1..%zu", name, js[a], s->n);
    if (a && js[a] <= js[a - 1])
      return KVB_ERROR(KVB_EINVAL, "probe %s: query positions must increase", name);
  }
  int st = kvb_params_validate(p, t->params, name);
  if (st) return st;
  return t->run(s, p, t->params, rng, nq, js, out);
}

/* probe.c — the argument checks every probe shares (probe.h); the registry is the
 * application's (src/app/registry.c). */
#include "probe.h"

#include <math.h>
#include <string.h>

#include "kvb_error.h"

size_t kvb_probe_ncols(const kvb_probe_type *t) {
  size_t n = 0;
  while (t && n < KVB_PROBE_MAX_COLS && t->columns[n]) n++;
  return n;
}

int kvb_probe_run_type(const kvb_probe_type *t, const kvb_stream *s, const kvb_params *p,
                       gsl_rng *rng, size_t nq, const size_t *js, double *out) {
  if (!t) return KVB_ERROR(KVB_ENULL, "probe type is NULL");
  const char *name = t->name;
  if (!s || !p || !rng || !js || !out) return KVB_ERROR(KVB_ENULL, "probe %s: NULL argument", name);
  if (nq == 0) return KVB_ERROR(KVB_EINVAL, "probe %s: no query position", name);
  for (size_t a = 0; a < nq; a++) {
    if (js[a] < 1 || js[a] > s->n)
      return KVB_ERROR(KVB_EINVAL, "probe %s: query position %zu outside 1..%zu", name, js[a], s->n);
    if (a && js[a] <= js[a - 1])
      return KVB_ERROR(KVB_EINVAL, "probe %s: query positions must increase", name);
  }
  /* The generic layer owns "mutant" (mutant.h); the probe sees the rest. */
  kvb_probe pr = {t, 0};
  kvb_params rest;
  int st = kvb_mutant_split(p, t->mutants, "probe", name, &rest, &pr.mutant);
  if (st) return st;
  st = kvb_params_validate(&rest, t->params, name);
  if (st) return st;
  return t->run(&pr, s, &rest, t->params, rng, nq, js, out);
}

const char *kvb_probe_mutant_name(const kvb_probe *pr) {
  return pr && pr->type ? kvb_mutant_name(pr->type->mutants, pr->mutant) : NULL;
}

int kvb_probe_is_mutant(const kvb_probe *pr, const char *name) {
  const char *cur = kvb_probe_mutant_name(pr);
  return cur && name && strcmp(cur, name) == 0;
}

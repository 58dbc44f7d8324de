/* method.c — the validating wrappers every method goes through (see method.h). The registry of
 * methods by name is the application's (src/app/registry.c). */
#include "method.h"
#include "kvb_error.h"
#include "attention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A callback that returned an error status must leave a message; one that did not (a plugin's
 * init returning KVB_EINVAL bare) would otherwise surface as an empty reason, or as a stale
 * message of an earlier call. The wrappers note the thread's message count before each callback
 * (n0) and fill in this default when the callback failed without recording one. The last
 * message is never cleared: it stays the last failing call's (kvb_error.h). */
static int with_reason(int st, unsigned long long n0, const char *name, const char *callback) {
  if (st && (kvb_error_count() == n0 || !kvb_strerror_last()[0]))
    KVB_ERROR(st, "method %s: its %s callback failed with %s " KVB_METHOD_NO_REASON, name,
              callback, kvb_status_name(st));
  return st;
}

static void free_now(kvb_method *m) {
  if (m->type->free_state) m->type->free_state(m->state);
  free(m);
}

/* Every callback runs between enter and leave; leave performs a free that a callback asked for
 * (kvb_method_free while busy) once the outermost callback is done. After leave, m may be gone:
 * the wrappers read what they need from m before calling it. */
static void enter(kvb_method *m) { m->busy++; }
static void leave(kvb_method *m) {
  if (--m->busy == 0 && m->free_pending) free_now(m);
}

int kvb_method_alloc_type(const kvb_method_type *t, const kvb_method_config *cfg,
                          const kvb_params *p, kvb_method **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "output pointer is NULL");
  *out = NULL;
  if (!t || !cfg) return KVB_ERROR(KVB_ENULL, "method type or config is NULL");
  const char *name = t->name;
  if (cfg->d_key == 0 || cfg->d_value == 0)
    return KVB_ERROR(KVB_EINVAL, "%s: d_key and d_value must be positive (got %zu, %zu)", name,
                     cfg->d_key, cfg->d_value);
  if (!isfinite(cfg->scale) || cfg->scale <= 0)
    return KVB_ERROR(KVB_EINVAL, "%s: scale must be finite and > 0 (got %g)", name, cfg->scale);
  if (t->randomized && !cfg->rng)
    return KVB_ERROR(KVB_ENULL, "%s is randomized and needs a generator (cfg.rng is NULL)", name);

  /* The generic layer owns "mutant" (mutant.h); the type sees the rest. */
  kvb_params rest;
  int mutant = 0;
  int st = kvb_mutant_split(p, t->mutants, "method", name, &rest, &mutant);
  if (st) return st;
  st = kvb_params_validate(&rest, t->params, name);
  if (st) return st;

  kvb_method *m = calloc(1, sizeof *m);
  if (!m) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory", name);
  m->type = t;
  m->d_key = cfg->d_key;
  m->d_value = cfg->d_value;
  m->scale = cfg->scale;
  m->rng = cfg->rng;
  m->mutant = mutant;
  unsigned long long n0 = kvb_error_count();
  st = with_reason(t->init(m, &rest), n0, name, "init");
  if (st) {
    free(m);
    return st;
  }
  *out = m;
  return KVB_OK;
}

void kvb_method_free(kvb_method *m) {
  if (!m) return;
  if (m->busy) { /* closed from inside its own callback: free when that callback returns */
    m->free_pending = 1;
    return;
  }
  free_now(m);
}

int kvb_method_update(kvb_method *m, const double *k, size_t d_key, const double *v,
                      size_t d_value) {
  if (!m || !k || !v) return KVB_ERROR(KVB_ENULL, "update: method, key or value is NULL");
  if (d_key != m->d_key || d_value != m->d_value)
    return KVB_ERROR(KVB_EDIM, "%s update: got key/value dimensions %zu/%zu, method has %zu/%zu",
                     m->type->name, d_key, d_value, m->d_key, m->d_value);
  if (!kvb_all_finite(k, d_key))
    return KVB_ERROR(KVB_EDOM, "%s update: key has a NaN or Inf component", m->type->name);
  if (!kvb_all_finite(v, d_value))
    return KVB_ERROR(KVB_EDOM, "%s update: value has a NaN or Inf component", m->type->name);
  const char *name = m->type->name;
  unsigned long long n0 = kvb_error_count();
  enter(m);
  int st = m->type->update(m, k, v);
  if (st == KVB_OK) m->n++;
  st = with_reason(st, n0, name, "update");
  leave(m);
  return st;
}

int kvb_method_query(kvb_method *m, const double *q, size_t d_key, double *z, size_t d_value) {
  if (!m || !q || !z) return KVB_ERROR(KVB_ENULL, "query: method, query or output is NULL");
  if (d_key != m->d_key || d_value != m->d_value)
    return KVB_ERROR(KVB_EDIM, "%s query: got query/output dimensions %zu/%zu, method has %zu/%zu",
                     m->type->name, d_key, d_value, m->d_key, m->d_value);
  if (!kvb_all_finite(q, d_key))
    return KVB_ERROR(KVB_EDOM, "%s query: query has a NaN or Inf component", m->type->name);
  if (m->n == 0)
    return KVB_ERROR(KVB_ESTATE, "%s query: no token has been streamed yet (attention over an "
                     "empty context is undefined)", m->type->name);
  const char *name = m->type->name;
  unsigned long long n0 = kvb_error_count();
  enter(m);
  int st = with_reason(m->type->query(m, q, z), n0, name, "query");
  leave(m);
  /* Every input is finite here (keys and values checked at update, q above), so a NaN or Inf
   * answer means a score scale·<q,k> or a weighted value sum left double range inside the
   * algorithm. Such an answer is never handed out with KVB_OK. */
  if (st == KVB_OK && !kvb_all_finite(z, d_value))
    return KVB_ERROR(KVB_ERANGE, "%s query: the answer has a NaN or Inf component although every "
                     "key, value and query is finite (a score scale·<q,k>, a squared norm |v|^2 or a "
                     "weighted sum of values beyond double range, |x| > 1.8e308); rescale the "
                     "inputs",
                     name);
  return st;
}

void kvb_method_memory(const kvb_method *m, kvb_memory *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!m || !m->type->memory) return;
  /* m is const for the caller, not as an object: every kvb_method is calloc'ed, so the guard
   * may count this callback (a memory() that closes its own method, freed after it returns) */
  kvb_method *mm = (kvb_method *)m;
  enter(mm);
  m->type->memory(m, out);
  leave(mm);
}

const char *kvb_method_mutant_name(const kvb_method *m) {
  return m ? kvb_mutant_name(m->type->mutants, m->mutant) : NULL;
}

int kvb_method_is_mutant(const kvb_method *m, const char *name) {
  const char *cur = kvb_method_mutant_name(m);
  return cur && strcmp(cur, name) == 0;
}

/* ---- accessors (ABI v1, method.h) ---- */
void *kvb_method_state(const kvb_method *m) { return m ? m->state : NULL; }
void kvb_method_set_state(kvb_method *m, void *state) {
  if (m) m->state = state;
}
size_t kvb_method_d_key(const kvb_method *m) { return m ? m->d_key : 0; }
size_t kvb_method_d_value(const kvb_method *m) { return m ? m->d_value : 0; }
double kvb_method_scale(const kvb_method *m) { return m ? m->scale : NAN; }
double kvb_method_uniform(kvb_method *m) {
  if (!m || !m->rng) return NAN;
  m->work.coins++;
  return gsl_rng_uniform(m->rng);
}

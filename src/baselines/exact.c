/* exact.c — exact streaming attention as a method: stores every (k, v) and answers
 * softmax(scale·K q)ᵀ V by log-sum-exp (000 eq. (1); 003 §1). The oracle every sketch is
 * measured against. */
#include "attention.h"
#include "kv_store.h"
#include "kvb_error.h"
#include "method.h"

#include <stdlib.h>
#include <string.h>

typedef kvb_kv_store exact_state; /* every token: exact attention needs them all */

static const kvb_param_spec exact_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

static int exact_init(kvb_method *m, const kvb_params *p) {
  (void)p;
  exact_state *s = calloc(1, sizeof *s);
  if (!s) return KVB_ERROR(KVB_ENOMEM, "exact: out of memory");
  kvb_kv_init(s, m->d_key, m->d_value);
  m->state = s;
  return KVB_OK;
}

static int exact_update(kvb_method *m, const double *k, const double *v) {
  return kvb_kv_append(m->state, k, v, "exact");
}

static int exact_query(kvb_method *m, const double *q, double *z) {
  exact_state *s = m->state;
  int st = kvb_attention_exact(s->n, m->d_key, m->d_value, s->K, s->V, q, m->scale, z, NULL);
  if (st) return st; /* KVB_ERANGE: a score beyond double range (message set) */
  m->work.dots += s->n;
  m->work.exps += s->n;
  return KVB_OK;
}

static void exact_memory(const kvb_method *m, kvb_memory *out) {
  const exact_state *s = m->state;
  out->vectors = 2 * s->n;
  out->bytes = s->n * (m->d_key + m->d_value) * sizeof(double);
}

static void exact_free(void *state) {
  exact_state *s = state;
  if (!s) return;
  kvb_kv_free(s);
  free(s);
}

const kvb_method_type kvb_method_exact = {
    "exact", "exact streaming attention (stores every token)", "000 eq. (1); 003 eq. (1)",
    exact_params, NULL, 0, exact_init, exact_update, exact_query, exact_memory, exact_free};

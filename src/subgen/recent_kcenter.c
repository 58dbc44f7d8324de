/* method_recent_kcenter.c — "recent_kcenter": sliding window of ℓ tokens + k greedy k-center
 * tokens of the rest, exact attention over the kept tokens (000 §3.2, 001 §4.1). The reading
 * (one-shot selection at query time; memory accounting) is documented in recent_kcenter.h. */
#include "recent_kcenter.h"
#include "attention.h"
#include "kcenter.h"
#include "kv_store.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

typedef struct {
  size_t window, centers; /* ℓ, k */
  kvb_kv_store kv;        /* the raw stream (not counted as memory: method.h) */
  size_t *kept;           /* positions attended to by the last query */
  size_t nkept;
  size_t prompt;          /* compress once (parameter prompt; 0: re-select at every query) */
  size_t sealed;          /* stream length the selection was frozen at (0: not frozen) */
  size_t *frozen, nfrozen;/* the frozen selection (positions < sealed, increasing) */
} rk_state;

static const kvb_param_spec rk_params[] = {
    {"window", KVB_PARAM_INT, NAN, 0, 1e9, NULL,
     "ℓ: most recent tokens kept exactly (000 §3.2 'r', 001 §4.1 'ℓ')"},
    {"centers", KVB_PARAM_INT, NAN, 0, 1e9, NULL,
     "k: tokens kept among the older ones, by greedy k-center on keys (000 §3.2, 001 §4.1)"},
    {"prompt", KVB_PARAM_INT, 0, 0, 1e12, NULL,
     "compress once (001 §4.1: 'once to compress the entire KV caches'): the first selection at "
     ">= prompt tokens is frozen and later tokens are kept exactly (0: re-select at every query)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec rk_mutants[] = {
    {"random_centers", "k uniformly random older tokens instead of greedy k-center"},
    {"window_off_by_one", "window of ℓ−1 tokens; centers chosen from tokens 0..n−ℓ"},
    {"nearest_centers", "k-center adds the nearest instead of the farthest point"},
    {NULL, NULL}};


static int rk_init(kvb_method *m, const kvb_params *p) {
  size_t w = (size_t)kvb_params_get(p, rk_params, "window");
  size_t c = (size_t)kvb_params_get(p, rk_params, "centers");
  if (w + c == 0)
    return KVB_ERROR(KVB_EINVAL, "recent_kcenter: window + centers must be >= 1 (nothing kept)");
  if (kvb_method_is_mutant(m, "random_centers") && !m->rng)
    return KVB_ERROR(KVB_ENULL, "recent_kcenter mutant random_centers needs cfg.rng");
  rk_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "recent_kcenter: out of memory");
  kvb_kv_init(&st->kv, m->d_key, m->d_value);
  st->window = w;
  st->centers = c;
  st->prompt = (size_t)kvb_params_get(p, rk_params, "prompt");
  m->state = st;
  return KVB_OK;
}

static void rk_free(void *state) {
  rk_state *st = state;
  if (!st) return;
  kvb_kv_free_reference(&st->kv);
  free(st->kept), free(st->frozen);
  free(st);
}

static int rk_update(kvb_method *m, const double *k, const double *v) {
  rk_state *st = m->state;
  int rc = kvb_kv_append_reference(&st->kv, k, v, "recent_kcenter");
  if (rc) return rc;
  return KVB_OK;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* Chooses the kept positions (increasing) into idx; returns their number or 0 on error. */
static size_t select_kept(kvb_method *m, rk_state *st, size_t *idx, size_t *pool, int *rc) {
  size_t n = st->kv.n, k = st->centers;
  size_t w = st->window;
  if (kvb_method_is_mutant(m, "window_off_by_one") && w > 0) w--;
  size_t old = n > w ? n - w : 0; /* tokens 0..old-1 are outside the window */
  size_t nk = 0;
  *rc = KVB_OK;
  if (st->sealed) { /* the frozen selection, then every token after it exactly */
    memcpy(idx, st->frozen, st->nfrozen * sizeof *idx);
    nk = st->nfrozen;
    for (size_t i = st->sealed; i < n; i++) idx[nk++] = i;
    return nk;
  }
  if (old <= k) { /* nothing to drop: every token is kept */
    for (size_t i = 0; i < n; i++) idx[i] = i;
    return n;
  }
  if (k > 0) {
    if (kvb_method_is_mutant(m, "random_centers")) {
      for (size_t i = 0; i < old; i++) pool[i] = i;
      gsl_ran_choose(m->rng, idx, k, pool, old, sizeof *idx); /* sorted, without replacement */
      m->work.coins += old;
    } else {
      *rc = kvb_kcenter_greedy_variant(old, m->d_key, st->kv.K, k, 0, idx, NULL,
                                       kvb_kcenter_variant_for(kvb_method_mutant_name(m)));
      if (*rc) return 0;
      m->work.distances += (uint64_t)old * k;
      qsort(idx, k, sizeof *idx, cmp_size);
    }
    nk = k;
  }
  for (size_t i = old; i < n; i++) idx[nk++] = i; /* the window, ℓ most recent */
  return nk;
}

static int rk_query(kvb_method *m, const double *q, double *z) {
  rk_state *st = m->state;
  size_t dk = m->d_key, dv = m->d_value;
  size_t cap = st->window + st->centers + 1;
  if (st->sealed) cap = st->nfrozen + (st->kv.n - st->sealed);
  if (cap > st->kv.n) cap = st->kv.n;
  size_t *idx = malloc(cap * sizeof *idx), *pool = malloc(st->kv.n * sizeof *pool);
  double *Kb = malloc(cap * dk * sizeof *Kb), *Vb = malloc(cap * dv * sizeof *Vb);
  int rc = KVB_OK;
  if (!idx || !pool || !Kb || !Vb) {
    rc = KVB_ERROR(KVB_ENOMEM, "recent_kcenter query: out of memory (n = %zu)", st->kv.n);
    goto done;
  }
  size_t nk = select_kept(m, st, idx, pool, &rc);
  if (rc) goto done;
  if (st->prompt && !st->sealed && st->kv.n >= st->prompt) { /* compress once: freeze it */
    st->frozen = malloc((nk ? nk : 1) * sizeof *st->frozen);
    if (!st->frozen) {
      rc = KVB_ERROR(KVB_ENOMEM, "recent_kcenter query: out of memory");
      goto done;
    }
    memcpy(st->frozen, idx, nk * sizeof *idx);
    st->nfrozen = nk, st->sealed = st->kv.n;
  }
  for (size_t j = 0; j < nk; j++) { /* gather the kept rows in stream order */
    memcpy(Kb + j * dk, st->kv.K + idx[j] * dk, dk * sizeof *Kb);
    memcpy(Vb + j * dv, st->kv.V + idx[j] * dv, dv * sizeof *Vb);
  }
  rc = kvb_attention_exact(nk, dk, dv, Kb, Vb, q, m->scale, z, NULL);
  if (rc) goto done; /* KVB_ERANGE: a score beyond double range (message set) */
  m->work.dots += nk;
  m->work.exps += nk;
  free(st->kept); /* record what was attended to (introspection only) */
  st->kept = idx;
  st->nkept = nk;
  idx = NULL;
done:
  free(idx);
  free(pool);
  free(Kb);
  free(Vb);
  return rc;
}

static void rk_memory(const kvb_method *m, kvb_memory *out) {
  const rk_state *st = m->state;
  size_t budget = st->window + st->centers, kept = st->kv.n < budget ? st->kv.n : budget;
  if (st->sealed) kept = st->nfrozen + (st->kv.n - st->sealed); /* frozen + exact tail */
  /* The compressed cache (the paper's ℓ + k budget), not the reference's full-stream store. */
  out->vectors = 2 * kept;
  out->bytes = kept * (m->d_key + m->d_value) * sizeof(double);
}

const kvb_method_type kvb_method_recent_kcenter = {
    "recent_kcenter",
    "recent window ℓ + k greedy k-center tokens, one-shot selection at query time (reference "
    "stores the full stream; memory reports the ℓ+k compressed cache)",
    "000 §3.2; 001 §4.1 (greedy k-center: 000 §3.1, Dyer & Frieze 1985)",
    rk_params,
    rk_mutants,
    0,
    rk_init,
    rk_update,
    rk_query,
    rk_memory,
    rk_free,
    .in_model = KVB_IN_MODEL_ONCE_AT_PROMPT};

size_t kvb_recent_kcenter_stored_tokens(const kvb_method *m) {
  if (!m || m->type != &kvb_method_recent_kcenter) return 0;
  return ((const rk_state *)m->state)->kv.n;
}

size_t kvb_recent_kcenter_kept(const kvb_method *m, size_t *idx, size_t cap) {
  if (!m || m->type != &kvb_method_recent_kcenter) return 0;
  const rk_state *st = m->state;
  for (size_t j = 0; idx && j < st->nkept && j < cap; j++) idx[j] = st->kept[j];
  return st->nkept;
}

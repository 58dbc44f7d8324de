/* tova.c — TOVA (Token Omission Via Attention): Oren, Hassid, Yarden, Adi, Schwartz,
 * "Transformers are Multi-State RNNs", arXiv 2401.06104 (EMNLP 2024), §3.3: when the cache
 * exceeds its size, drop the token with the lowest attention weight from the current query
 * (averaged over heads; one head here). kvpress offers it as TOVAPress.
 *
 * Reading (how the queries reach it, baselines.h). The paper's step i: query i attends over the
 * cache plus token i (k + 1 tokens), then the lowest-weight token is dropped (back to k).
 * kvbound splits that step: query(q) attends over the kept set and records q; the next
 * update evicts, from a full cache, the token with the lowest weight under the recorded query
 * (softmax is monotone, so: the lowest score ⟨q, k_j⟩; ties: the earliest position), then
 * appends. With every token queried this is exactly the paper's rule with k = budget − 1 plus
 * the current token (props check it against that literal form). With sparse queries the last
 * recorded query decides every eviction until the next one; before any query the earliest
 * token is evicted (a sliding window: no attention has been observed yet).
 *
 * kvpress's TOVAPress scores a prompt once by its last token's attention (prefill); kvbound
 * follows the paper's per-step form (the method is a multi-state RNN update).
 *
 * Memory: 2·min(n, B) stored vectors; bytes the kept keys and values plus the recorded query
 * (d_key doubles; the paper holds it only within the step, kvbound between query and update).
 * Parameters: budget B ≥ 1. */
#include "attention.h"
#include "baselines.h"
#include "kvb_error.h"
#include "method.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  kvb_tcache c; /* first member (baselines.h); c.score = ⟨q_last, k⟩ at eviction time */
  size_t budget;
  double *q;    /* the last query asked */
  double *q0;   /* mutant stale_query: the first query asked */
  int seen;
} tova_state;

static const kvb_param_spec tova_params[] = {
    {"budget", KVB_PARAM_INT, NAN, 1, 1e9, NULL,
     "B: tokens kept (the paper's multi-state size k, plus the current token)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec tova_mutants[] = {
    {"evict_highest", "drops the token with the HIGHEST attention weight"},
    {"stale_query", "scores with the first query ever asked instead of the current one"},
    {NULL, NULL}};

static int tova_init(kvb_method *m, const kvb_params *p) {
  size_t B = (size_t)kvb_params_get(p, tova_params, "budget");
  tova_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "tova: out of memory");
  st->q = malloc(m->d_key * sizeof *st->q);
  st->q0 = malloc(m->d_key * sizeof *st->q0);
  int rc = st->q && st->q0 ? kvb_tcache_init(&st->c, B, m->d_key, m->d_value, "tova")
                           : KVB_ERROR(KVB_ENOMEM, "tova: out of memory");
  if (rc) {
    free(st->q), free(st->q0), free(st);
    return rc;
  }
  st->budget = B;
  m->state = st;
  return KVB_OK;
}

static int tova_update(kvb_method *m, const double *k, const double *v) {
  tova_state *st = m->state;
  if (st->c.n == st->budget) {
    size_t out = 0; /* no query seen yet: the earliest token */
    if (st->seen) {
      const double *q = kvb_method_is_mutant(m, "stale_query") ? st->q0 : st->q;
      for (size_t i = 0; i < st->c.n; i++)
        st->c.score[i] = kvb_score(st->c.K + i * m->d_key, q, m->d_key, m->scale);
      m->work.dots += st->c.n;
      out = kvb_tcache_argext(&st->c, 0, st->c.n, kvb_method_is_mutant(m, "evict_highest"));
    }
    kvb_tcache_remove(&st->c, out);
  }
  kvb_tcache_push(&st->c, (size_t)m->n, k, v, 0.0);
  return KVB_OK;
}

static int tova_query(kvb_method *m, const double *q, double *z) {
  tova_state *st = m->state;
  int rc = kvb_tcache_attend(&st->c, q, m->scale, z, NULL);
  if (rc) return rc;
  memcpy(st->q, q, m->d_key * sizeof *q);
  if (!st->seen) memcpy(st->q0, q, m->d_key * sizeof *q);
  st->seen = 1;
  m->work.dots += st->c.n, m->work.exps += st->c.n;
  return KVB_OK;
}

static void tova_memory(const kvb_method *m, kvb_memory *out) {
  const tova_state *st = m->state;
  out->vectors = 2 * st->c.n;
  out->bytes = (st->c.n * (m->d_key + m->d_value) + (st->seen ? m->d_key : 0)) * sizeof(double);
}

static void tova_free(void *state) {
  tova_state *st = state;
  if (!st) return;
  kvb_tcache_free(&st->c);
  free(st->q), free(st->q0), free(st);
}

const kvb_method_type kvb_method_tova = {
    "tova",
    "TOVA: a full cache drops the token with the lowest attention from the current query",
    "Oren et al., Transformers are Multi-State RNNs, arXiv 2401.06104 §3.3",
    tova_params, tova_mutants, 0, tova_init, tova_update, tova_query, tova_memory, tova_free,
    .observe = KVB_OBSERVE_PROMPT};

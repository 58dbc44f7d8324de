/* sink_recent.c — StreamingLLM: Xiao, Tian, Chen, Han, Lewis, "Efficient Streaming Language
 * Models with Attention Sinks", arXiv 2309.17453 (ICLR 2024). The cache holds the first `sink`
 * tokens (the "attention sinks", §3.2: 4 initial tokens suffice) and a rolling window of the most
 * recent budget − sink tokens (§3.2, Fig. 4). It is the "Attention Sink" baseline of 000 §5 /
 * 001 §5 and the "StreamingLLM" one of 003 §4.2.
 *
 * Reading. The rule reads no query, so it is the same under any query schedule: after n
 * tokens the kept set is {0..s−1} ∪ {n−(B−s) .. n−1} (all n tokens while n ≤ B). StreamingLLM
 * also re-assigns positions inside the cache for the rotary embedding (§3.2, "positions within
 * the cache"); kvbound's methods see keys that already carry their positions (or none), so that
 * part has no counterpart here. kvpress's StreamingLLMPress (n_sink = 4, prefill compression of
 * the prompt) keeps the same set for a prompt; kvbound follows the paper's streaming form, which
 * at a query point gives the same set.
 *
 * Memory: 2·min(n, B) stored vectors; bytes the kept keys and values (no per-item score).
 * Parameters: budget B ≥ 2 (tokens kept), sink 0 ≤ s < B (the window keeps ≥ 1 token). */
#include "baselines.h"
#include "kvb_error.h"
#include "method.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  kvb_tcache c; /* first member (baselines.h) */
  size_t sink, budget;
} sr_state;

static const kvb_param_spec sr_params[] = {
    {"budget", KVB_PARAM_INT, NAN, 2, 1e9, NULL,
     "B: tokens kept, sinks plus recent window (2309.17453 §3.2 cache size)"},
    {"sink", KVB_PARAM_INT, 4, 0, 1e9, NULL,
     "s: initial tokens kept as attention sinks, < budget (2309.17453 §3.2: 4)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec sr_mutants[] = {
    {"sink_off_by_one", "evicts the last sink instead of the oldest window token (s−1 sinks)"},
    {"evict_newest", "a full cache drops its newest token instead of the oldest window token"},
    {NULL, NULL}};

static int sr_init(kvb_method *m, const kvb_params *p) {
  size_t B = (size_t)kvb_params_get(p, sr_params, "budget");
  size_t s = (size_t)kvb_params_get(p, sr_params, "sink");
  if (s >= B)
    return KVB_ERROR(KVB_EINVAL, "sink_recent: sink = %zu must be below budget = %zu (the recent "
                     "window must keep at least the newest token)", s, B);
  sr_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "sink_recent: out of memory");
  int rc = kvb_tcache_init(&st->c, B, m->d_key, m->d_value, "sink_recent");
  if (rc) {
    free(st);
    return rc;
  }
  st->sink = s, st->budget = B;
  m->state = st;
  return KVB_OK;
}

static int sr_update(kvb_method *m, const double *k, const double *v) {
  sr_state *st = m->state;
  if (st->c.n == st->budget) {
    size_t out = st->sink; /* the oldest token of the window (cache index s) */
    if (kvb_method_is_mutant(m, "sink_off_by_one") && st->sink > 0) out = st->sink - 1;
    if (kvb_method_is_mutant(m, "evict_newest")) out = st->c.n - 1;
    kvb_tcache_remove(&st->c, out);
  }
  kvb_tcache_push(&st->c, (size_t)m->n, k, v, 0.0);
  return KVB_OK;
}

static int sr_query(kvb_method *m, const double *q, double *z) {
  sr_state *st = m->state;
  int rc = kvb_tcache_attend(&st->c, q, m->scale, z, NULL);
  if (rc) return rc;
  m->work.dots += st->c.n, m->work.exps += st->c.n;
  return KVB_OK;
}

static void sr_memory(const kvb_method *m, kvb_memory *out) {
  const sr_state *st = m->state;
  out->vectors = 2 * st->c.n;
  out->bytes = st->c.n * (m->d_key + m->d_value) * sizeof(double);
}

static void sr_free(void *state) {
  sr_state *st = state;
  if (!st) return;
  kvb_tcache_free(&st->c);
  free(st);
}

const kvb_method_type kvb_method_sink_recent = {
    "sink_recent",
    "StreamingLLM: the first `sink` tokens + the most recent budget−sink tokens, exact attention",
    "Xiao et al., Efficient Streaming Language Models with Attention Sinks, arXiv 2309.17453 §3.2",
    sr_params, sr_mutants, 0, sr_init, sr_update, sr_query, sr_memory, sr_free};

/* h2o.c — Heavy-Hitter Oracle: Zhang, Sheng, Zhou, Chen, Zheng, Cai, Song, Tian, Ré, Barrett,
 * Wang, Chen, "H2O: Heavy-Hitter Oracle for Efficient Generative Inference of Large Language
 * Models", arXiv 2306.14048 (NeurIPS 2023). The cache keeps the `recent` most recent tokens and,
 * of the older ones, the "heavy hitters": those with the largest attention accumulated over
 * the queries seen so far (§3.2 eq. (2), Alg. 1: greedy, one eviction per step; §5: heavy
 * hitters and recent tokens share the budget equally). The H2O baseline of 000 §5 / 001 §5.
 *
 * Reading (how the queries reach it, baselines.h). The paper's step i: query i attends over the
 * cache S_{i−1} ∪ {i}, its softmax weights are added to every attended token's score, and the
 * lowest-scoring non-recent token is evicted so that |S_i| = k. kvbound splits that step:
 * update(k_i, v_i) evicts first — the non-recent token with the smallest accumulated score
 * (ties: the earliest position) — and appends token i with score 0; query(q) attends over the
 * kept set and adds its softmax weights. With every token queried this is exactly Alg. 1 with
 * k = budget − 1 plus the current token (one eviction is merely moved to the next update): the
 * props check the kept set against that literal form. Scores are the attention the token actually
 * received: from queries it was kept for (Alg. 1); with sparse queries (the runner's query
 * points) tokens between queries receive nothing, so eviction falls to the earliest non-recent
 * token among equals — a sliding window until the first query. The newest token must be kept
 * (its own query has not been seen at its update), so recent ≥ 1.
 *
 * kvpress's ObservedAttentionPress scores a prompt once, at prefill, by the attention its
 * queries paid to each token (it needs the attention weights materialized); kvbound follows the
 * paper's per-step accumulation with eviction, the form 000/001 compare against.
 *
 * Memory: 2·min(n, B) stored vectors; bytes the kept keys and values plus one accumulated score
 * (a double) per kept token. Parameters: budget B ≥ 1; recent 1 ≤ R ≤ B (0: ⌈B/2⌉, §5's
 * equal split). */
#include "baselines.h"
#include "kvb_error.h"
#include "method.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  kvb_tcache c; /* first member (baselines.h); c.score = accumulated attention */
  size_t budget, recent;
  double *p; /* softmax weights of the current query (scratch, budget entries) */
} h2o_state;

static const kvb_param_spec h2o_params[] = {
    {"budget", KVB_PARAM_INT, NAN, 1, 1e9, NULL,
     "B: tokens kept, heavy hitters plus recent (2306.14048 Alg. 1 'k')"},
    {"recent", KVB_PARAM_INT, 0, 0, 1e9, NULL,
     "R: most recent tokens always kept, 1..B; 0 means ⌈B/2⌉ (2306.14048 §5 equal split)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec h2o_mutants[] = {
    {"evict_largest", "evicts the non-recent token with the LARGEST accumulated score"},
    {"last_query_only", "scores are the last query's weights, not accumulated (TOVA-like)"},
    {NULL, NULL}};

static int h2o_init(kvb_method *m, const kvb_params *p) {
  size_t B = (size_t)kvb_params_get(p, h2o_params, "budget");
  size_t R = (size_t)kvb_params_get(p, h2o_params, "recent");
  if (R == 0) R = (B + 1) / 2;
  if (R > B)
    return KVB_ERROR(KVB_EINVAL, "h2o: recent = %zu exceeds budget = %zu", R, B);
  h2o_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "h2o: out of memory");
  st->p = malloc(B * sizeof *st->p);
  int rc = st->p ? kvb_tcache_init(&st->c, B, m->d_key, m->d_value, "h2o")
                 : KVB_ERROR(KVB_ENOMEM, "h2o: out of memory");
  if (rc) {
    free(st->p), free(st);
    return rc;
  }
  st->budget = B, st->recent = R;
  m->state = st;
  return KVB_OK;
}

static int h2o_update(kvb_method *m, const double *k, const double *v) {
  h2o_state *st = m->state;
  if (st->c.n == st->budget) {
    /* After the append the window is the R−1 newest held tokens plus token n; the candidates
     * are the B − R + 1 held tokens before them. */
    size_t hi = st->c.n - (st->recent - 1);
    size_t out = kvb_tcache_argext(&st->c, 0, hi, kvb_method_is_mutant(m, "evict_largest"));
    kvb_tcache_remove(&st->c, out);
  }
  kvb_tcache_push(&st->c, (size_t)m->n, k, v, 0.0);
  return KVB_OK;
}

static int h2o_query(kvb_method *m, const double *q, double *z) {
  h2o_state *st = m->state;
  int rc = kvb_tcache_attend(&st->c, q, m->scale, z, st->p);
  if (rc) return rc;
  int last = kvb_method_is_mutant(m, "last_query_only");
  for (size_t i = 0; i < st->c.n; i++) st->c.score[i] = (last ? 0 : st->c.score[i]) + st->p[i];
  m->work.dots += st->c.n, m->work.exps += st->c.n;
  return KVB_OK;
}

static void h2o_memory(const kvb_method *m, kvb_memory *out) {
  const h2o_state *st = m->state;
  out->vectors = 2 * st->c.n;
  out->bytes = st->c.n * (m->d_key + m->d_value + 1) * sizeof(double);
}

static void h2o_free(void *state) {
  h2o_state *st = state;
  if (!st) return;
  kvb_tcache_free(&st->c);
  free(st->p), free(st);
}

const kvb_method_type kvb_method_h2o = {
    "h2o",
    "H2O: recent window + heavy hitters by accumulated attention, one eviction per token",
    "Zhang et al., H2O: Heavy-Hitter Oracle for Efficient Generative Inference of LLMs, arXiv "
    "2306.14048 Alg. 1",
    h2o_params, h2o_mutants, 0, h2o_init, h2o_update, h2o_query, h2o_memory, h2o_free,
    .observe = KVB_OBSERVE_PROMPT};

/* knorm.c — K-norm: Devoto, Zhao, Scardapane, Minervini, "A Simple and Effective L2 Norm-Based
 * Strategy for KV Cache Compression", arXiv 2406.11430 (EMNLP 2024): keys with a LOW L2 norm
 * draw high attention (§3), so keep the tokens whose keys have the smallest ‖k‖₂ (kvpress's
 * KnormPress). The rule reads no query.
 *
 * Reading. Streaming, kvbound keeps after n tokens exactly the B tokens of smallest ‖k‖₂ among all n
 * (ties: the earlier position), maintained by one eviction per token: the largest norm among
 * the B held and the new one leaves — the new token itself when its key is the largest, so the
 * current token need not be attended. Which layers and heads are compressed is a model-level
 * choice the single-stream method does not make. kvpress compresses the prompt once at prefill with the same score (−‖k‖); at a query point
 * both keep the same set.
 *
 * Memory: 2·min(n, B) stored vectors; bytes the kept keys and values plus one norm (a double)
 * per kept token. Parameters: budget B ≥ 1. */
#include "attention.h"
#include "baselines.h"
#include "kvb_error.h"
#include "method.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  kvb_tcache c; /* first member (baselines.h); c.score = ‖k‖₂ (−‖k‖₂ under keep_largest) */
  size_t budget;
} kn_state;

static const kvb_param_spec kn_params[] = {
    {"budget", KVB_PARAM_INT, NAN, 1, 1e9, NULL, "B: tokens kept (those of smallest ‖k‖₂)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec kn_mutants[] = {
    {"keep_largest", "keeps the keys of LARGEST norm"},
    {NULL, NULL}};

static int kn_init(kvb_method *m, const kvb_params *p) {
  size_t B = (size_t)kvb_params_get(p, kn_params, "budget");
  kn_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "knorm: out of memory");
  int rc = kvb_tcache_init(&st->c, B, m->d_key, m->d_value, "knorm");
  if (rc) {
    free(st);
    return rc;
  }
  st->budget = B;
  m->state = st;
  return KVB_OK;
}

static int kn_update(kvb_method *m, const double *k, const double *v) {
  kn_state *st = m->state;
  double nk = kvb_norm2(k, m->d_key);
  if (!isfinite(nk))
    return KVB_ERROR(KVB_ERANGE, "knorm: ‖k‖₂ of token %llu beyond double range",
                     (unsigned long long)m->n);
  double s = kvb_method_is_mutant(m, "keep_largest") ? -nk : nk;
  if (st->c.n == st->budget) {
    size_t out = kvb_tcache_argext(&st->c, 0, st->c.n, 1);
    /* ties go to the earlier position: among equal largest scores the LAST held one leaves */
    for (size_t i = out + 1; i < st->c.n; i++)
      if (st->c.score[i] == st->c.score[out]) out = i;
    if (s >= st->c.score[out]) return KVB_OK; /* the new token is (tied) largest: not kept */
    kvb_tcache_remove(&st->c, out);
  }
  kvb_tcache_push(&st->c, (size_t)m->n, k, v, s);
  return KVB_OK;
}

static int kn_query(kvb_method *m, const double *q, double *z) {
  kn_state *st = m->state;
  if (st->c.n == 0) return KVB_ERROR(KVB_ESTATE, "knorm: nothing kept");
  int rc = kvb_tcache_attend(&st->c, q, m->scale, z, NULL);
  if (rc) return rc;
  m->work.dots += st->c.n, m->work.exps += st->c.n;
  return KVB_OK;
}

static void kn_memory(const kvb_method *m, kvb_memory *out) {
  const kn_state *st = m->state;
  out->vectors = 2 * st->c.n;
  out->bytes = st->c.n * (m->d_key + m->d_value + 1) * sizeof(double);
}

static void kn_free(void *state) {
  kn_state *st = state;
  if (!st) return;
  kvb_tcache_free(&st->c);
  free(st);
}

const kvb_method_type kvb_method_knorm = {
    "knorm",
    "K-norm: keeps the B tokens whose keys have the smallest L2 norm",
    "Devoto et al., A Simple and Effective L2 Norm-Based Strategy for KV Cache Compression, "
    "arXiv 2406.11430 (kvpress KnormPress)",
    kn_params, kn_mutants, 0, kn_init, kn_update, kn_query, kn_memory, kn_free};

/* token_cache.c — the kept-token cache shared by the eviction baselines (baselines.h). */
#include "attention.h"
#include "baselines.h"
#include "kvb_error.h"

#include <stdlib.h>
#include <string.h>

int kvb_tcache_init(kvb_tcache *c, size_t cap, size_t d_key, size_t d_value, const char *who) {
  memset(c, 0, sizeof *c);
  if (cap == 0) cap = 1;
  c->pos = malloc(cap * sizeof *c->pos);
  c->K = malloc(cap * d_key * sizeof *c->K);
  c->V = malloc(cap * d_value * sizeof *c->V);
  c->score = malloc(cap * sizeof *c->score);
  if (!c->pos || !c->K || !c->V || !c->score) {
    kvb_tcache_free(c);
    return KVB_ERROR(KVB_ENOMEM, "%s: out of memory (cache of %zu tokens)", who, cap);
  }
  c->cap = cap, c->d_key = d_key, c->d_value = d_value;
  return KVB_OK;
}

void kvb_tcache_free(kvb_tcache *c) {
  free(c->pos), free(c->K), free(c->V), free(c->score);
  memset(c, 0, sizeof *c);
}

void kvb_tcache_remove(kvb_tcache *c, size_t i) {
  size_t tail = c->n - i - 1, dk = c->d_key, dv = c->d_value;
  memmove(c->pos + i, c->pos + i + 1, tail * sizeof *c->pos);
  memmove(c->score + i, c->score + i + 1, tail * sizeof *c->score);
  memmove(c->K + i * dk, c->K + (i + 1) * dk, tail * dk * sizeof *c->K);
  memmove(c->V + i * dv, c->V + (i + 1) * dv, tail * dv * sizeof *c->V);
  c->n--;
}

void kvb_tcache_push(kvb_tcache *c, size_t pos, const double *k, const double *v, double score) {
  size_t i = c->n++;
  c->pos[i] = pos, c->score[i] = score;
  memcpy(c->K + i * c->d_key, k, c->d_key * sizeof *k);
  memcpy(c->V + i * c->d_value, v, c->d_value * sizeof *v);
}

int kvb_tcache_attend(const kvb_tcache *c, const double *q, double scale, double *z, double *p) {
  int rc = kvb_attention_exact(c->n, c->d_key, c->d_value, c->K, c->V, q, scale, z, NULL);
  if (rc) return rc;
  if (p) kvb_softmax(c->n, c->d_key, c->K, q, scale, p);
  return KVB_OK;
}

size_t kvb_tcache_argext(const kvb_tcache *c, size_t lo, size_t hi, int largest) {
  size_t best = lo;
  for (size_t i = lo + 1; i < hi; i++)
    if (largest ? c->score[i] > c->score[best] : c->score[i] < c->score[best]) best = i;
  return best;
}

extern const kvb_method_type kvb_method_sink_recent, kvb_method_h2o, kvb_method_snapkv,
    kvb_method_pyramidkv, kvb_method_tova, kvb_method_knorm;

size_t kvb_baseline_kept(const kvb_method *m, size_t *pos, size_t cap) {
  if (!m || !m->state) return 0;
  const kvb_method_type *t = m->type;
  if (t != &kvb_method_sink_recent && t != &kvb_method_h2o && t != &kvb_method_snapkv &&
      t != &kvb_method_pyramidkv && t != &kvb_method_tova && t != &kvb_method_knorm)
    return 0;
  const kvb_tcache *c = m->state; /* first member of every baseline's state */
  for (size_t i = 0; pos && i < c->n && i < cap; i++) pos[i] = c->pos[i];
  return c->n;
}

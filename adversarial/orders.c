/* orders.c — adversarial token orders (see orders.h) and the "ties_at_delta" generator. */
#include "orders.h"
#include "kvb_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

int kvb_stream_permute(const kvb_stream *s, const size_t *perm, kvb_stream **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "permute: output pointer is NULL");
  *out = NULL;
  if (!s || !perm) return KVB_ERROR(KVB_ENULL, "permute: stream or permutation is NULL");
  unsigned char *seen = calloc(s->n, 1);
  if (!seen) return KVB_ERROR(KVB_ENOMEM, "permute: out of memory");
  for (size_t i = 0; i < s->n; i++) {
    if (perm[i] >= s->n || seen[perm[i]]) {
      free(seen);
      return KVB_ERROR(KVB_EINVAL, "permute: entry %zu (= %zu) makes it no permutation of 0..%zu",
                       i, perm[i], s->n - 1);
    }
    seen[perm[i]] = 1;
  }
  free(seen);
  kvb_stream *o;
  int st = kvb_stream_alloc(s->n, s->d_key, s->d_value, &o);
  if (st) return st;
  size_t dk = s->d_key, dv = s->d_value;
  for (size_t i = 0; i < s->n; i++) {
    memcpy(o->Q + i * dk, s->Q + perm[i] * dk, dk * sizeof(double));
    memcpy(o->K + i * dk, s->K + perm[i] * dk, dk * sizeof(double));
    memcpy(o->V + i * dv, s->V + perm[i] * dv, dv * sizeof(double));
  }
  memcpy(o->name, s->name, sizeof o->name);
  o->m = s->m;
  o->delta = s->delta;
  o->r = s->r;
  o->params = s->params;
  o->type = s->type;
  o->mutant = s->mutant;
  *out = o;
  return KVB_OK;
}

/* A stable sort of token indices by a key, without qsort's instability or a global. */
typedef struct {
  double key;
  size_t idx;
} keyed;

static int by_key(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->idx < y->idx ? -1 : (x->idx > y->idx); /* ties: stream order */
}

static int reorder_by_norm(const kvb_stream *s, int values, int descending, kvb_stream **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "reorder: output pointer is NULL");
  *out = NULL;
  if (!s) return KVB_ERROR(KVB_ENULL, "reorder: stream is NULL");
  keyed *kx = malloc(s->n * sizeof *kx);
  size_t *perm = malloc(s->n * sizeof *perm);
  if (!kx || !perm) {
    free(kx);
    free(perm);
    return KVB_ERROR(KVB_ENOMEM, "reorder: out of memory");
  }
  size_t d = values ? s->d_value : s->d_key;
  const double *X = values ? s->V : s->K;
  for (size_t i = 0; i < s->n; i++) {
    double a = 0;
    for (size_t c = 0; c < d; c++) a += X[i * d + c] * X[i * d + c];
    kx[i].key = descending ? -a : a;
    kx[i].idx = i;
  }
  qsort(kx, s->n, sizeof *kx, by_key);
  for (size_t i = 0; i < s->n; i++) perm[i] = kx[i].idx;
  int st = kvb_stream_permute(s, perm, out);
  free(kx);
  free(perm);
  return st;
}

int kvb_stream_reorder_by_key_norm(const kvb_stream *s, int descending, kvb_stream **out) {
  return reorder_by_norm(s, 0, descending, out);
}

int kvb_stream_reorder_by_value_norm(const kvb_stream *s, int descending, kvb_stream **out) {
  return reorder_by_norm(s, 1, descending, out);
}

int kvb_stream_interleave_clusters(const kvb_stream *s, const size_t *label, size_t num_labels,
                                   kvb_stream **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "interleave: output pointer is NULL");
  *out = NULL;
  if (!s || !label) return KVB_ERROR(KVB_ENULL, "interleave: stream or labels NULL");
  for (size_t i = 0; i < s->n; i++)
    if (label[i] >= num_labels)
      return KVB_ERROR(KVB_EINVAL, "interleave: label[%zu] = %zu is not below %zu", i, label[i],
                       num_labels);
  /* next[c]: the next unused token of label c, found by scanning forward. */
  size_t *next = calloc(num_labels, sizeof *next), *perm = malloc(s->n * sizeof *perm);
  if (!next || !perm) {
    free(next);
    free(perm);
    return KVB_ERROR(KVB_ENOMEM, "interleave: out of memory");
  }
  size_t filled = 0;
  while (filled < s->n) {
    for (size_t c = 0; c < num_labels; c++) {
      while (next[c] < s->n && label[next[c]] != c) next[c]++;
      if (next[c] < s->n) perm[filled++] = next[c]++;
    }
  }
  int st = kvb_stream_permute(s, perm, out);
  free(next);
  free(perm);
  return st;
}

/* ---- ties_at_delta: keys at distance exactly δ from a representative ----
 * Attacks 000 Alg. 1 line 13 (= 001 line 12: ‖k − x_i*‖ ≤ δ joins; < would open a new cluster).
 * δ must be a power of two and every coordinate a multiple of δ/8 with magnitude below 2^40·δ,
 * so each difference, its square, their sum and the square root are exact in double: the
 * distance kvb_dist2 computes between a center and its tie key is δ itself, not δ ± 1 ulp.
 * Cluster j has center c_j = δ·(integer vector, entries in [-16, 16]), centers pairwise more
 * than 3δ apart; its keys are c_j + δ·(u/8)·e_0 with u in 0..8 (u = 8, the exact tie, with
 * probability tie_fraction), and the first key drawn from a cluster is c_j itself, so in stream
 * order it becomes the representative and every u = 8 key is at distance exactly δ from it.
 * Each cluster lies on a segment of length δ: the keys are (m, δ)-clusterable (000 Def. 1). */
static const kvb_param_spec ties_params[] = {
    {"n", KVB_PARAM_INT, 256, 1, 1e9, NULL, "stream length"},
    {"d_key", KVB_PARAM_INT, 4, 2, 65536, NULL, "key/query dimension"},
    {"d_value", KVB_PARAM_INT, 4, 1, 65536, NULL, "value dimension"},
    {"m", KVB_PARAM_INT, 4, 1, 64, NULL, "number of clusters (000 Def. 1)"},
    {"delta", KVB_PARAM_REAL, 1, 0x1p-500, 0x1p500, NULL,
     "δ, a power of two so the tie distance is exactly δ in double"},
    {"tie_fraction", KVB_PARAM_REAL, 0.5, 0, 1, NULL,
     "probability that a key sits at distance exactly δ from its center"},
    {"r", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "query norm ‖q‖ = r"},
    {"value_spread", KVB_PARAM_REAL, 1, 0, 20, NULL, "value norms exp(value_spread·N(0,1))"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static int gen_ties(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  size_t m = (size_t)kvb_params_get(p, sp, "m"), dk = s->d_key, dv = s->d_value;
  double delta = kvb_params_get(p, sp, "delta"), tf = kvb_params_get(p, sp, "tie_fraction"),
         r = kvb_params_get(p, sp, "r"), spread = kvb_params_get(p, sp, "value_spread");
  int e;
  if (frexp(delta, &e) != 0.5)
    return KVB_ERROR(KVB_EINVAL, "ties_at_delta: delta = %g is not a power of two", delta);
  double *c = malloc(m * dk * sizeof *c);
  unsigned char *used = calloc(m, 1);
  if (!c || !used) {
    free(c);
    free(used);
    return KVB_ERROR(KVB_ENOMEM, "ties_at_delta: out of memory");
  }
  for (size_t j = 0; j < m; j++) {
    for (int tries = 0;; tries++) {
      if (tries == 10000) {
        free(c);
        free(used);
        return KVB_ERROR(KVB_EINVAL, "ties_at_delta: cannot place %zu centers 3δ apart in d = %zu",
                         m, dk);
      }
      for (size_t a = 0; a < dk; a++)
        c[j * dk + a] = delta * (double)((long)gsl_rng_uniform_int(rng, 33) - 16);
      int ok = 1;
      for (size_t i = 0; i < j && ok; i++) {
        double d2 = 0;
        for (size_t a = 0; a < dk; a++) {
          double t = (c[i * dk + a] - c[j * dk + a]) / delta;
          d2 += t * t;
        }
        ok = d2 > 9;
      }
      if (ok) break;
    }
  }
  for (size_t i = 0; i < s->n; i++) {
    size_t j = gsl_rng_uniform_int(rng, m);
    double *k = s->K + i * dk;
    memcpy(k, c + j * dk, dk * sizeof *k);
    if (used[j]) {
      unsigned u = gsl_rng_uniform(rng) < tf ? 8 : (unsigned)gsl_rng_uniform_int(rng, 8);
      k[0] += delta * (double)u / 8;
    }
    used[j] = 1;
    kvb_rand_sphere(rng, s->Q + i * dk, dk, r);
    kvb_rand_sphere(rng, s->V + i * dv, dv, exp(spread * gsl_ran_gaussian(rng, 1.0)));
  }
  free(c);
  free(used);
  s->m = (double)m;
  s->delta = delta;
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_ties_at_delta = {
    "ties_at_delta",
    "(m, δ)-clusterable keys, many at distance exactly δ from their cluster's first key",
    "000 Alg. 1 line 13 (001 line 12): the ≤ in the δ test (a < opens spurious clusters)", ties_params, NULL,
    gen_ties};

/* snapkv.c — SnapKV: Li, Huang, Yang, Venkitesh, Locatelli, Ye, Cai, Lewis, Chen, "SnapKV: LLM
 * Knows What You are Looking for Before Generation", arXiv 2404.14469 (NeurIPS 2024), §4.1,
 * Listing 1. An "observation window" of the last w queries of the prompt votes on the earlier
 * tokens: each window query's softmax (causal: over the tokens up to its own position) is summed
 * over the window, the votes are smoothed by a 1-D pooling of kernel size k along positions
 * ("clustering via pooling", stride 1, padding k/2), and the top B − w earlier tokens by pooled
 * vote are kept together with the window itself. A baseline of 003 §4.2 (LongBench, via
 * MInference's implementation).
 *
 * Reading (how the queries reach it, baselines.h). SnapKV compresses a prompt once, after its
 * prefill; kvbound treats the prefix absorbed before a query as the prompt: the first query
 * after an update selects anew from the whole prefix (the reference keeps the raw stream, not
 * counted, as recent_kcenter and balancekv_block do), later queries without an update reuse
 * that selection (SnapKV does not recompress during generation). The observation window is the
 * last w queries asked, the current one included, each with the position it was asked at; when
 * every token is queried these are the prompt's last w queries exactly (the props check this
 * against the literal Listing 1); with sparse queries they are the last w query points, and
 * fewer than w before w queries have been asked. The window's KEYS are the last w tokens.
 * Pooling: "avg" (the authors' code default and kvpress's, zero padding counted, PyTorch's
 * count_include_pad) or "max" (padding ignored). Ties in the top-k go to the earlier position.
 * kvpress's SnapKVPress averages (rather than sums) the window's weights — the same ranking —
 * and compresses by a ratio of the prompt; kvbound takes the budget in tokens so methods compare
 * at equal memory.
 *
 * Compress once (parameter prompt = P > 0; default 0, the reading above). kvpress and SCBench
 * compress a context once, before its questions are known, and feed the question and answer as
 * new tokens appended to the compressed cache; SnapKV's own generation does the same. With the
 * reading above a question fed after the prompt would instead take over the observation window
 * and re-select from the whole raw prompt (the question-agnostic evaluation would see the
 * question). With prompt = P the first selection made when the stream holds ≥ P tokens is
 * sealed: every later token is appended to the kept set exactly, nothing is re-selected, and the
 * memory grows by one token per update (kvbound decode --mode agnostic|aware sets P = n₀).
 *
 * Memory: 2·min(n, B) stored vectors (the compressed cache; sealed: plus the appended tokens);
 * bytes the kept keys and values.
 * The raw stream and the window's queries are what a prefill holds transiently and are not
 * counted (method.h). Parameters: window 1 ≤ w ≤ B, kernel odd ≥ 1, pooling avg|max. */
#include "attention.h"
#include "kvb_error.h"
#include "method.h"
#include "snap_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t kvb_pyramidkv_layer_budget(size_t budget, size_t window, size_t layers, size_t layer,
                                  double beta, size_t n) {
  /* PyramidKV (arXiv 2406.02069 §3.2; its authors' code): with c = B − w selected tokens per
   * layer on average, the top layer gets c/β and the bottom 2c − c/β, the layers between an
   * arithmetic sequence; when the bottom budget exceeds the prefix n − w it is clamped to it and
   * the top raised so the average stays c. Integer divisions as in that code. */
  size_t c = budget - window;
  if (layers <= 1 || n <= window) return budget;
  size_t L = n - window;
  size_t lo = (size_t)floor((double)c / beta), hi = 2 * c - lo;
  if (hi >= L) {
    hi = L, lo = 2 * c - L;
    if (lo >= hi) return n; /* every layer's budget covers the prefix: all kept */
  }
  size_t step = (hi - lo) / (layers - 1);
  return hi - layer * step + window;
}

int kvb_snap_init(kvb_method *m, size_t budget, size_t window, size_t kernel, int maxpool,
                  size_t layers, size_t layer, double beta, const char *who) {
  if (window == 0 || window > budget)
    return KVB_ERROR(KVB_EINVAL, "%s: window = %zu must be in 1..budget = %zu", who, window,
                     budget);
  if (kernel % 2 == 0)
    return KVB_ERROR(KVB_EINVAL, "%s: kernel = %zu must be odd (centred pooling)", who, kernel);
  kvb_snap_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory", who);
  st->Qw = malloc(window * m->d_key * sizeof *st->Qw);
  st->qpos = malloc(window * sizeof *st->qpos);
  size_t cap = layers > 1 ? 2 * budget : budget; /* a pyramid's bottom layer: up to 2c + w */
  int rc = st->Qw && st->qpos ? kvb_tcache_init(&st->c, cap, m->d_key, m->d_value, who)
                              : KVB_ERROR(KVB_ENOMEM, "%s: out of memory", who);
  if (rc) {
    free(st->Qw), free(st->qpos), free(st);
    return rc;
  }
  kvb_kv_init(&st->kv, m->d_key, m->d_value);
  st->budget = budget, st->window = window, st->kernel = kernel, st->maxpool = maxpool;
  st->layers = layers, st->layer = layer, st->beta = beta, st->who = who;
  m->state = st;
  return KVB_OK;
}

void kvb_snap_free(void *state) {
  kvb_snap_state *st = state;
  if (!st) return;
  kvb_tcache_free(&st->c);
  kvb_kv_free_reference(&st->kv);
  free(st->Qw), free(st->qpos), free(st);
}

/* Appends one token to the kept set, doubling its capacity when full. */
static int sealed_append(kvb_snap_state *st, size_t pos, const double *k, const double *v) {
  kvb_tcache *c = &st->c;
  if (c->n == c->cap) {
    kvb_tcache g;
    int rc = kvb_tcache_init(&g, 2 * c->cap, c->d_key, c->d_value, st->who);
    if (rc) return rc;
    for (size_t i = 0; i < c->n; i++)
      kvb_tcache_push(&g, c->pos[i], c->K + i * c->d_key, c->V + i * c->d_value, c->score[i]);
    kvb_tcache_free(c);
    *c = g;
  }
  kvb_tcache_push(c, pos, k, v, 0);
  return KVB_OK;
}

int kvb_snap_update(kvb_method *m, const double *k, const double *v) {
  kvb_snap_state *st = m->state;
  if (st->sealed) { /* compress once: the token joins the sealed selection (header) */
    int rc = sealed_append(st, st->kv.n, k, v);
    if (rc) return rc;
    rc = kvb_kv_append_reference(&st->kv, k, v, st->who);
    if (rc) st->c.n--; /* undo: the method is left unchanged */
    return rc;
  }
  int rc = kvb_kv_append_reference(&st->kv, k, v, st->who);
  if (rc) return rc;
  st->fresh = 0;
  return KVB_OK;
}

/* The budget in force at prefix length n (PyramidKV: its layer's). */
static size_t cur_budget(const kvb_method *m, const kvb_snap_state *st, size_t n) {
  if (!st->layers) return st->budget;
  size_t layer = st->layer;
  if (kvb_method_is_mutant(m, "layer_reversed")) layer = st->layers - 1 - layer;
  return kvb_pyramidkv_layer_budget(st->budget, st->window, st->layers, layer, st->beta, n);
}

typedef struct {
  double s;
  size_t i;
} ranked;
static int by_score_desc(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->s != y->s) return x->s > y->s ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}
static int by_pos(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* Selects the kept positions (increasing) into idx; returns their number, or (size_t)-1 with
 * *rc set on error. The q just asked is already in the window ring. */
static size_t select_kept(kvb_method *m, kvb_snap_state *st, size_t *idx, int *rc) {
  size_t n = st->kv.n, dk = m->d_key, B = cur_budget(m, st, n), w = st->window;
  *rc = KVB_OK;
  if (n <= B) {
    for (size_t i = 0; i < n; i++) idx[i] = i;
    return n;
  }
  int excl = kvb_method_is_mutant(m, "window_excluded");
  size_t L = excl ? n : n - w;      /* the tokens that are voted on */
  size_t pick = excl ? B : B - w;   /* how many of them are kept */
  double *vote = calloc(n, sizeof *vote), *pool = malloc(L * sizeof *pool);
  double *sc = malloc(n * sizeof *sc);
  ranked *r = malloc(L * sizeof *r);
  if (!vote || !pool || !sc || !r) {
    *rc = KVB_ERROR(KVB_ENOMEM, "%s: out of memory (n = %zu)", st->who, n);
    free(vote), free(pool), free(sc), free(r);
    return (size_t)-1;
  }
  for (size_t a = 0; a < st->nq; a++) { /* votes: Σ over the window of causal softmax weights */
    const double *q = st->Qw + a * dk;
    size_t P = st->qpos[a];
    double mx = -INFINITY, sum = 0;
    for (size_t j = 0; j < P; j++) {
      sc[j] = kvb_score(st->kv.K + j * dk, q, dk, m->scale);
      if (sc[j] > mx) mx = sc[j];
    }
    if (!isfinite(mx)) {
      *rc = KVB_ERROR(KVB_ERANGE, "%s: a window score beyond double range", st->who);
      break;
    }
    for (size_t j = 0; j < P; j++) sum += exp(sc[j] - mx);
    for (size_t j = 0; j < P && j < L; j++) vote[j] += exp(sc[j] - mx) / sum;
    m->work.dots += P, m->work.exps += P;
  }
  size_t h = kvb_method_is_mutant(m, "no_pooling") ? 0 : st->kernel / 2;
  for (size_t j = 0; j < L && !*rc; j++) { /* 1-D pooling, stride 1, padding h */
    double acc = st->maxpool ? -INFINITY : 0;
    for (size_t i = j >= h ? j - h : 0; i <= j + h && i < L; i++)
      acc = st->maxpool ? fmax(acc, vote[i]) : acc + vote[i];
    pool[j] = st->maxpool ? acc : acc / (double)(2 * h + 1);
    r[j].s = pool[j], r[j].i = j;
  }
  size_t nk = 0;
  if (!*rc) {
    qsort(r, L, sizeof *r, by_score_desc);
    for (size_t j = 0; j < pick; j++) idx[nk++] = r[j].i;
    qsort(idx, nk, sizeof *idx, by_pos);
    for (size_t i = L; i < n; i++) idx[nk++] = i; /* the window's tokens */
  }
  free(vote), free(pool), free(sc), free(r);
  return *rc ? (size_t)-1 : nk;
}

int kvb_snap_query(kvb_method *m, const double *q, double *z) {
  kvb_snap_state *st = m->state;
  size_t dk = m->d_key, w = st->window;
  /* record q (undone below if the query fails: the method is left unchanged) */
  size_t slot = st->qhead, oldpos = st->qpos[slot], oldnq = st->nq;
  double *save = malloc(dk * sizeof *save);
  size_t *idx = malloc(st->c.cap * sizeof *idx);
  if (!save || !idx) {
    free(save), free(idx);
    return KVB_ERROR(KVB_ENOMEM, "%s: out of memory", st->who);
  }
  memcpy(save, st->Qw + slot * dk, dk * sizeof *save);
  memcpy(st->Qw + slot * dk, q, dk * sizeof *q);
  st->qpos[slot] = st->kv.n;
  st->qhead = (slot + 1) % w;
  if (st->nq < w) st->nq++;
  int rc = KVB_OK;
  if (!st->fresh) {
    size_t nk = select_kept(m, st, idx, &rc);
    if (!rc) {
      kvb_tcache c = st->c; /* rebuild the cache from the raw rows */
      c.n = 0;
      for (size_t j = 0; j < nk; j++)
        kvb_tcache_push(&c, idx[j], st->kv.K + idx[j] * dk, st->kv.V + idx[j] * m->d_value, 0);
      rc = kvb_tcache_attend(&c, q, m->scale, z, NULL);
      if (!rc) {
        st->c = c, st->fresh = 1;
        if (st->prompt && st->kv.n >= st->prompt) st->sealed = 1;
      } else { /* on failure the old rows are gone: refilled at the next query */
        st->c.n = 0, st->fresh = 0;
      }
    }
  } else {
    rc = kvb_tcache_attend(&st->c, q, m->scale, z, NULL);
  }
  if (rc) { /* undo the recording */
    memcpy(st->Qw + slot * dk, save, dk * sizeof *save);
    st->qpos[slot] = oldpos, st->qhead = slot, st->nq = oldnq;
  } else {
    m->work.dots += st->c.n, m->work.exps += st->c.n;
  }
  free(save), free(idx);
  return rc;
}

void kvb_snap_memory(const kvb_method *m, kvb_memory *out) {
  const kvb_snap_state *st = m->state;
  size_t kept = st->fresh ? st->c.n : st->kv.n;
  size_t B = cur_budget(m, st, st->kv.n);
  if (!st->fresh && kept > B) kept = B; /* what the next selection keeps */
  out->vectors = 2 * kept;
  out->bytes = kept * (m->d_key + m->d_value) * sizeof(double);
}

static const kvb_param_spec snap_params[] = {
    {"budget", KVB_PARAM_INT, NAN, 1, 1e9, NULL,
     "B: tokens kept, window included (2404.14469 §4.1 prompt capacity)"},
    {"window", KVB_PARAM_INT, 32, 1, 1e9, NULL,
     "w: observation window, the last w queries vote and the last w tokens are kept (≤ B)"},
    {"kernel", KVB_PARAM_INT, 5, 1, 1e6, NULL, "pooling kernel size, odd (2404.14469 §4.1)"},
    {"pooling", KVB_PARAM_STRING, 0, 0, 0, "avg", "avg | max (2404.14469 Listing 1 pool1d)"},
    {"prompt", KVB_PARAM_INT, 0, 0, 1e12, NULL,
     "P > 0: compress once, at the first selection with >= P tokens; later tokens are appended"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec snap_mutants[] = {
    {"no_pooling", "ranks the raw votes (kernel 1)"},
    {"window_excluded", "the window's tokens are not kept by right: top-B over all tokens"},
    {NULL, NULL}};

int kvb_snap_pooling(const char *s, int *maxpool, const char *who) {
  if (strcmp(s, "avg") == 0) *maxpool = 0;
  else if (strcmp(s, "max") == 0) *maxpool = 1;
  else return KVB_ERROR(KVB_EINVAL, "%s: pooling = '%s' (avg or max)", who, s);
  return KVB_OK;
}

static int snap_init(kvb_method *m, const kvb_params *p) {
  int mp = 0, rc = kvb_snap_pooling(kvb_params_get_str(p, snap_params, "pooling"), &mp, "snapkv");
  if (rc) return rc;
  rc = kvb_snap_init(m, (size_t)kvb_params_get(p, snap_params, "budget"),
                     (size_t)kvb_params_get(p, snap_params, "window"),
                     (size_t)kvb_params_get(p, snap_params, "kernel"), mp, 0, 0, 1, "snapkv");
  if (!rc) ((kvb_snap_state *)m->state)->prompt = (size_t)kvb_params_get(p, snap_params, "prompt");
  return rc;
}

const kvb_method_type kvb_method_snapkv = {
    "snapkv",
    "SnapKV: the last w queries vote (pooled attention) on earlier tokens; top B−w + the window",
    "Li et al., SnapKV: LLM Knows What You are Looking for Before Generation, arXiv 2404.14469 "
    "§4.1",
    snap_params, snap_mutants, 0, snap_init, kvb_snap_update, kvb_snap_query, kvb_snap_memory,
    kvb_snap_free, .in_model = KVB_IN_MODEL_ONCE_AT_PROMPT, .observe = KVB_OBSERVE_WINDOW};

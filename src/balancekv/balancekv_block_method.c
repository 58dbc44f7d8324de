/* method_balancekv_block.c — the method "balancekv_block": first/recent tokens exact, the middle
 * compressed by the block-parallel BalanceKV variant at query time (balancekv_block.h; 003 §4 and
 * App. B.1; the authors' code github.com/ksheth96/BalanceKV, src/balanced_walk.py). */
#include "attention.h"
#include "balancekv_block.h"
#include "kv_store.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t f, wr;          /* first f and last wr tokens kept exactly (003 App. B.1) */
  kvb_bkvb_opts o;
  int consistent;        /* denominator: 0 = "paper" (Σ 2^T e^s), 1 = "consistent" (Σ w e^s) */
  kvb_kv_store kv;        /* the raw stream (not counted as memory: method.h) */
  int fresh;             /* compression valid for the current n */
  size_t prompt;         /* compress once (parameter prompt; 0: recompress after every update) */
  size_t sealed;         /* the stream length the compression was frozen at (0: not frozen) */
  size_t kept;           /* kept middle tokens */
  size_t *pos;           /* their stream positions */
  double *w;             /* their weights */
  kvb_bkvb_stats stats;
  double *scratch;       /* 3·(d_value + 1) */
} bkvb_state;

static const kvb_param_spec bkvb_params[] = {
    {"f", KVB_PARAM_INT, 32, 0, 1e9, NULL, "first tokens kept exactly (003 App. B.1: 256; B.2: 32)"},
    {"w", KVB_PARAM_INT, 32, 0, 1e9, NULL, "recent tokens kept exactly (003 App. B.1: 256; B.2: 32)"},
    {"b", KVB_PARAM_INT, 256, 1, 1e9, NULL, "block length (003 App. B; Fig. 3: 64, 128, 256)"},
    {"T", KVB_PARAM_INT, 1, 0, 62, NULL, "halving rounds; compression 2^-T (003 §4.1: 1..4)"},
    {"gamma", KVB_PARAM_REAL, 4, 0, 1e300, NULL, "walk strength γ (authors' balancekv_press.py: 4)"},
    {"c0", KVB_PARAM_REAL, 0.025, 0, 1e300, NULL, "kernel offset c₀ >= 0 (authors' balanced_walk.py: 0.025)"},
    {"tau", KVB_PARAM_REAL, 1, -1e300, 1e300, NULL, "key temperature τ (1; 0.1 in 003 §4.1)"},
    {"beta", KVB_PARAM_REAL, 0, -1e300, 1e300, NULL, "kernel shift β (0)"},
    {"threads", KVB_PARAM_INT, 1, 0, 256, NULL,
     "workers of the compression (0 = all cores; results identical for any value; 1 by default "
     "because runs already go in parallel over trials)"},
    {"prompt", KVB_PARAM_INT, 0, 0, 1e12, NULL,
     "compress once: the first compression of a stream of >= prompt tokens is frozen and later "
     "tokens are kept exactly (0: recompress after every update, the streaming reading)"},
    {"denominator", KVB_PARAM_STRING, 0, 0, 0, "paper",
     "\"paper\": Σ 2^T e^s (003's experiments) or \"consistent\": Σ w e^s"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec bkvb_mutants[] = {
    {"no_center", "keys not centered by their block mean"},
    {"keep_wrong_side", "halving keeps the tokens whose sign equals the sign at c"},
    {"weight_not_doubled", "the weight-2 candidates keep weight ×1"},
    {"sign_flip", "the walk pushes towards the partial sum (½ + γΣK s)"},
    {"first_not_exact", "the first f tokens are compressed with the middle (f ignored)"},
    {"random_signs", "the walk's p replaced by ½ (random signs, no balancing)"},
    {NULL, NULL}};

static const kvb_method_type *self_type(void);
static int is_bkvb(const kvb_method *m) { return m && m->type == self_type(); }

static int bkvb_init(kvb_method *m, const kvb_params *p) {
  const char *den = kvb_params_get_str(p, bkvb_params, "denominator");
  int consistent;
  if (strcmp(den, "paper") == 0) consistent = 0;
  else if (strcmp(den, "consistent") == 0) consistent = 1;
  else
    return KVB_ERROR(KVB_EINVAL, "balancekv_block: denominator=\"%s\" is not paper|consistent",
                     den);
  bkvb_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "balancekv_block: out of memory");
  kvb_kv_init(&st->kv, m->d_key, m->d_value);
  st->scratch = malloc(3 * (m->d_value + 1) * sizeof(double));
  if (!st->scratch) {
    free(st);
    return KVB_ERROR(KVB_ENOMEM, "balancekv_block: out of memory");
  }
  st->consistent = consistent;
  st->f = (size_t)kvb_params_get(p, bkvb_params, "f");
  st->wr = (size_t)kvb_params_get(p, bkvb_params, "w");
  st->prompt = (size_t)kvb_params_get(p, bkvb_params, "prompt");
  kvb_bkvb_opts_from_params(p, &st->o);
  st->o.mutant = kvb_bkvb_flags_for(kvb_method_mutant_name(m)); /* the core's flags */
  if (kvb_method_is_mutant(m, "first_not_exact")) st->f = 0;
  m->state = st;
  return KVB_OK;
}

static void bkvb_free(void *state) {
  bkvb_state *st = state;
  if (!st) return;
  kvb_kv_free_reference(&st->kv), free(st->pos), free(st->w), free(st->scratch);
  free(st);
}

void kvb_bkvb_opts_from_params(const kvb_params *p, kvb_bkvb_opts *o) {
  kvb_bkvb_opts_default(o);
  o->b = (size_t)kvb_params_get(p, bkvb_params, "b");
  o->T = (unsigned)kvb_params_get(p, bkvb_params, "T");
  o->gamma = kvb_params_get(p, bkvb_params, "gamma");
  o->c0 = kvb_params_get(p, bkvb_params, "c0");
  o->tau = kvb_params_get(p, bkvb_params, "tau");
  o->beta = kvb_params_get(p, bkvb_params, "beta");
  o->threads = (int)kvb_params_get(p, bkvb_params, "threads");
}

static int bkvb_update(kvb_method *m, const double *k, const double *v) {
  bkvb_state *st = m->state;
  int rc = kvb_kv_append_reference(&st->kv, k, v, "balancekv_block");
  if (rc) return rc;
  if (!st->sealed) st->fresh = 0; /* the middle changed (a frozen one does not) */
  return KVB_OK;
}

/* Middle = positions [f, n − w) (empty when n <= f + w), n the stream length, or the length the
 * compression was frozen at (prompt > 0: the tokens after it are kept exactly, as the recent
 * window is — how kvpress and 003's experiments decode after compressing the prompt). */
static size_t middle_len(const bkvb_state *st) {
  size_t n = st->sealed ? st->sealed : st->kv.n;
  return n > st->f + st->wr ? n - st->f - st->wr : 0;
}

static int compress(kvb_method *m) {
  bkvb_state *st = m->state;
  if (st->fresh) return KVB_OK;
  size_t mid = middle_len(st);
  if (mid == 0) {
    st->kept = 0;
    st->fresh = 1;
    return KVB_OK;
  }
  size_t kept = kvb_bkvb_kept(mid, st->o.T);
  if (kept == 0)
    return KVB_ERROR(KVB_EINVAL,
                     "balancekv_block: T = %u larger than log2 of the middle length %zu "
                     "(n = %zu, f = %zu, w = %zu)",
                     st->o.T, mid, st->kv.n, st->f, st->wr);
  size_t *pos = malloc(kept * sizeof *pos);
  double *w = malloc(kept * sizeof *w);
  if (!pos || !w) {
    free(pos), free(w);
    return KVB_ERROR(KVB_ENOMEM, "balancekv_block: out of memory");
  }
  kvb_bkvb_stats s = {0};
  int rc = kvb_bkvb_compress(1, mid, m->d_key, m->d_value, st->kv.K + st->f * m->d_key,
                             st->kv.V + st->f * m->d_value, &st->o, NULL, m->rng, pos, w, &s);
  if (rc) {
    free(pos), free(w);
    return rc;
  }
  for (size_t i = 0; i < kept; i++) pos[i] += st->f; /* stream positions */
  free(st->pos), free(st->w);
  st->pos = pos, st->w = w, st->kept = kept, st->fresh = 1;
  if (st->prompt && st->kv.n >= st->prompt) st->sealed = st->kv.n;
  st->stats.steps += s.steps, st->stats.clipped0 += s.clipped0;
  st->stats.clipped1 += s.clipped1, st->stats.nan_p += s.nan_p, st->stats.exps += s.exps;
  st->stats.t_center += s.t_center, st->stats.t_gram += s.t_gram, st->stats.t_exp += s.t_exp;
  st->stats.t_walk += s.t_walk, st->stats.t_gather += s.t_gather;
  m->work.exps += s.exps;
  m->work.coins += s.steps;
  return KVB_OK;
}

/* Numerator and both denominators for q (003 App. B.1's estimator). */
static void sums(kvb_method *m, const double *q, kvb_expsum *num, kvb_expsum *dp,
                 kvb_expsum *dc) {
  bkvb_state *st = m->state;
  size_t dk = m->d_key, dv = m->d_value;
  size_t mid = middle_len(st);
  double W = ldexp(1.0, (int)st->o.T); /* 2^T */
  for (size_t i = 0; i < st->kv.n; i++) {
    if (i >= st->f && i < st->f + mid) continue; /* the middle: its kept tokens come below */
    double a = m->scale * kvb_dot(q, st->kv.K + i * dk, dk);
    kvb_expsum_add(num, 1.0, a, st->kv.V + i * dv);
    kvb_expsum_add(dp, 1.0, a, NULL);
    kvb_expsum_add(dc, 1.0, a, NULL);
  }
  for (size_t k = 0; k < st->kept; k++) {
    size_t i = st->pos[k];
    double a = m->scale * kvb_dot(q, st->kv.K + i * dk, dk);
    kvb_expsum_add(num, st->w[k], a, st->kv.V + i * dv);
    kvb_expsum_add(dp, W, a, NULL);
    kvb_expsum_add(dc, st->w[k], a, NULL);
  }
  m->work.dots += st->kv.n - mid + st->kept;
  m->work.exps += st->kv.n - mid + st->kept;
}

static int query_both(kvb_method *m, const double *q, double *zp, double *zc) {
  int rc = compress(m);
  if (rc) return rc;
  bkvb_state *st = m->state;
  size_t dv = m->d_value;
  kvb_expsum num, dp, dc;
  double ap, ac;
  kvb_expsum_init(&num, st->scratch, dv);
  kvb_expsum_init(&dp, &ap, 1);
  kvb_expsum_init(&dc, &ac, 1);
  sums(m, q, &num, &dp, &dc);
  if ((zp && kvb_expsum_ratio(&num, &dp, zp)) || (zc && kvb_expsum_ratio(&num, &dc, zc)))
    return KVB_ERROR(KVB_ESTATE, "balancekv_block query: zero denominator");
  return KVB_OK;
}

static int bkvb_query(kvb_method *m, const double *q, double *z) {
  bkvb_state *st = m->state;
  return st->consistent ? query_both(m, q, NULL, z) : query_both(m, q, z, NULL);
}

static void bkvb_memory(const kvb_method *m, kvb_memory *out) {
  const bkvb_state *st = m->state;
  size_t mid = middle_len(st);
  size_t cache = st->kv.n - mid + (st->fresh ? st->kept : mid);
  /* The compressed cache the paper's method holds (keys, values, and a weight per kept middle
   * token); the raw stream this reference keeps to recompress is not counted (method.h). */
  out->vectors = 2 * cache;
  out->bytes = cache * (m->d_key + m->d_value) * sizeof(double) +
               (st->fresh ? st->kept : mid) * sizeof(double);
}

int kvb_bkvb_compress_now(kvb_method *m) {
  if (!is_bkvb(m)) return KVB_ERROR(KVB_EINVAL, "not a balancekv_block method");
  return compress(m);
}

int kvb_bkvb_kept_set(const kvb_method *m, size_t *count, const size_t **pos, const double **w) {
  if (!is_bkvb(m)) return KVB_ERROR(KVB_EINVAL, "not a balancekv_block method");
  const bkvb_state *st = m->state;
  if (!st->fresh) return KVB_ERROR(KVB_ESTATE, "balancekv_block: not compressed since last update");
  if (count) *count = st->kept;
  if (pos) *pos = st->pos;
  if (w) *w = st->w;
  return KVB_OK;
}

int kvb_bkvb_get_stats(const kvb_method *m, kvb_bkvb_stats *out) {
  if (!is_bkvb(m) || !out) return KVB_ERROR(KVB_EINVAL, "not a balancekv_block method");
  *out = ((const bkvb_state *)m->state)->stats;
  return KVB_OK;
}

int kvb_bkvb_query_both(kvb_method *m, const double *q, size_t d_key, double *z_paper,
                        double *z_consistent, size_t d_value) {
  if (!is_bkvb(m)) return KVB_ERROR(KVB_EINVAL, "not a balancekv_block method");
  if (!q || !z_paper || !z_consistent)
    return KVB_ERROR(KVB_ENULL, "balancekv_block query_both: NULL argument");
  if (d_key != m->d_key || d_value != m->d_value)
    return KVB_ERROR(KVB_EDIM, "balancekv_block query_both: dims %zu/%zu, method %zu/%zu", d_key,
                     d_value, m->d_key, m->d_value);
  if (!kvb_all_finite(q, d_key)) return KVB_ERROR(KVB_EDOM, "balancekv_block: non-finite query");
  if (m->n == 0) return KVB_ERROR(KVB_ESTATE, "balancekv_block: query before any update");
  return query_both(m, q, z_paper, z_consistent);
}

const kvb_method_type kvb_method_balancekv_block = {
    "balancekv_block",
    "block-parallel BalanceKV as run in 003's experiments (first/recent exact, T halving rounds)",
    "003 §4, App. B, B.1; 004 §4; github.com/ksheth96/BalanceKV src/balanced_walk.py",
    bkvb_params,
    bkvb_mutants,
    1,
    bkvb_init,
    bkvb_update,
    bkvb_query,
    bkvb_memory,
    bkvb_free,
    .in_model = KVB_IN_MODEL_ONCE_AT_PROMPT};

static const kvb_method_type *self_type(void) { return &kvb_method_balancekv_block; }

/* method_uniform_sample.c — the baseline of 003 §4.1 / App. B.1: "we replace the application of
 * BalanceKV with sampling a 2^-T fraction of key and value embeddings ... uniformly at random".
 * First f and last w tokens exact (as balancekv_block); of the m middle tokens, k = ⌊m/2^T⌋ (the
 * count balancekv_block keeps, so both use the same memory) are drawn uniformly without
 * replacement, each with weight m/k in both numerator and denominator. Like balancekv_block,
 * sampling runs at the first query after the stream changed (see balancekv_block.h, "Streaming").
 *
 * Why m/k and not 2^T. A uniform k-subset S of the m middle tokens includes each token with
 * probability k/m, so the Horvitz–Thompson sums Σ_{i∈S} (m/k)·e^{s_i}·x_i are unbiased for
 * Σ_{i middle} e^{s_i}·x_i — for the denominator (x = 1: E[τ̂] = τ) and for every coordinate of
 * the numerator (x = v_i: E[ẑ] = exp(scale·Kq)ᵀV). Weight 2^T equals m/k only when 2^T divides
 * m; otherwise k·2^T < m and both sums are biased low by the factor k·2^T/m (at m = 47, T = 4:
 * 32/47). We keep k = ⌊m/2^T⌋ rather than ⌈m/2^T⌉ so that the baseline never holds more tokens
 * than balancekv_block at the same T (equal memory, the comparison of 003 Fig. 1); the weight is
 * one scalar per head computed from (m, k), so the memory accounting is unchanged. The old
 * weighting survives as the test-only mutant "weight_2T". The ratio ẑ/τ̂ (the output) is, as for
 * every sampling estimator, not unbiased; only its two sums are. */
#include "attention.h"
#include "balancekv_block.h"
#include "uniform_sample.h"
#include "kv_store.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t f, wr;
  unsigned T;
  kvb_kv_store kv;        /* the raw stream (not counted as memory: method.h) */
  int fresh;
  size_t prompt, sealed; /* compress once (as balancekv_block's parameter prompt) */
  size_t kept;
  size_t *pos;
  double *scratch; /* d_value */
} us_state;

static const kvb_param_spec us_params[] = {
    {"f", KVB_PARAM_INT, 32, 0, 1e9, NULL, "first tokens kept exactly (003 App. B.1)"},
    {"w", KVB_PARAM_INT, 32, 0, 1e9, NULL, "recent tokens kept exactly (003 App. B.1)"},
    {"T", KVB_PARAM_INT, 1, 0, 62, NULL, "keep a 2^-T fraction of the middle (003 §4.1)"},
    {"prompt", KVB_PARAM_INT, 0, 0, 1e12, NULL,
     "compress once: the first sample of a stream of >= prompt tokens is frozen and later tokens "
     "are kept exactly (0: resample after every update)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec us_mutants[] = {
    {"front_half", "samples only from the first half of the middle"},
    {"weight_2T", "weights each of the ⌊m/2^T⌋ kept tokens by 2^T (biased low when 2^T ∤ m)"},
    {NULL, NULL}};

static const kvb_method_type *self_type(void);

static int us_init(kvb_method *m, const kvb_params *p) {
  us_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "uniform_sample: out of memory");
  kvb_kv_init(&st->kv, m->d_key, m->d_value);
  st->scratch = malloc(m->d_value * sizeof(double));
  if (!st->scratch) {
    free(st);
    return KVB_ERROR(KVB_ENOMEM, "uniform_sample: out of memory");
  }
  st->f = (size_t)kvb_params_get(p, us_params, "f");
  st->wr = (size_t)kvb_params_get(p, us_params, "w");
  st->T = (unsigned)kvb_params_get(p, us_params, "T");
  st->prompt = (size_t)kvb_params_get(p, us_params, "prompt");
  m->state = st;
  return KVB_OK;
}

static void us_free(void *state) {
  us_state *st = state;
  if (!st) return;
  kvb_kv_free_reference(&st->kv), free(st->pos), free(st->scratch);
  free(st);
}

static int us_update(kvb_method *m, const double *k, const double *v) {
  us_state *st = m->state;
  int rc = kvb_kv_append_reference(&st->kv, k, v, "uniform_sample");
  if (rc) return rc;
  if (!st->sealed) st->fresh = 0;
  return KVB_OK;
}

/* [f, n − w), n frozen at the sampled length when prompt > 0 (later tokens exact). */
static size_t middle_len(const us_state *st) {
  size_t n = st->sealed ? st->sealed : st->kv.n;
  return n > st->f + st->wr ? n - st->f - st->wr : 0;
}

static int sample(kvb_method *m) {
  us_state *st = m->state;
  if (st->fresh) return KVB_OK;
  size_t mid = middle_len(st);
  size_t kept = kvb_bkvb_kept(mid, st->T);
  if (mid > 0 && kept == 0)
    return KVB_ERROR(KVB_EINVAL, "uniform_sample: T = %u larger than log2 of the middle length %zu",
                     st->T, mid);
  size_t *perm = malloc((mid ? mid : 1) * sizeof *perm);
  if (!perm) return KVB_ERROR(KVB_ENOMEM, "uniform_sample: out of memory");
  /* partial Fisher–Yates: the first `kept` entries are a uniform random subset */
  for (size_t i = 0; i < mid; i++) perm[i] = st->f + i;
  size_t range = kvb_method_is_mutant(m, "front_half") && mid / 2 >= kept ? mid / 2 : mid;
  for (size_t i = 0; i < kept; i++) {
    size_t j = i + (size_t)gsl_rng_uniform_int(m->rng, (unsigned long)(range - i));
    size_t t = perm[i];
    perm[i] = perm[j], perm[j] = t;
    m->work.coins++;
  }
  free(st->pos);
  st->pos = perm, st->kept = kept, st->fresh = 1;
  if (st->prompt && st->kv.n >= st->prompt) st->sealed = st->kv.n;
  return KVB_OK;
}

/* Weight of each kept middle token: m/k (Horvitz–Thompson for inclusion probability k/m), or
 * 2^T under the mutant "weight_2T". */
static double kept_weight(const kvb_method *m, const us_state *st) {
  if (kvb_method_is_mutant(m, "weight_2T")) return ldexp(1.0, (int)st->T);
  return st->kept ? (double)middle_len(st) / (double)st->kept : 0.0;
}

/* num = Σ_fr e^{s_i} v_i + W Σ_S e^{s_i} v_i and den = Σ_fr e^{s_i} + W Σ_S e^{s_i}. */
static int sums(kvb_method *m, const double *q, kvb_expsum *num, double *numacc, kvb_expsum *den,
                double *denacc) {
  int rc = sample(m);
  if (rc) return rc;
  us_state *st = m->state;
  size_t dk = m->d_key, dv = m->d_value, mid = middle_len(st);
  double W = kept_weight(m, st);
  kvb_expsum_init(num, numacc, dv);
  kvb_expsum_init(den, denacc, 1);
  for (size_t i = 0; i < st->kv.n; i++) {
    if (i >= st->f && i < st->f + mid) continue;
    double a = m->scale * kvb_dot(q, st->kv.K + i * dk, dk);
    kvb_expsum_add(num, 1.0, a, st->kv.V + i * dv);
    kvb_expsum_add(den, 1.0, a, NULL);
  }
  for (size_t k = 0; k < st->kept; k++) {
    size_t i = st->pos[k];
    double a = m->scale * kvb_dot(q, st->kv.K + i * dk, dk);
    kvb_expsum_add(num, W, a, st->kv.V + i * dv);
    kvb_expsum_add(den, W, a, NULL);
  }
  m->work.dots += st->kv.n - mid + st->kept;
  m->work.exps += st->kv.n - mid + st->kept;
  return KVB_OK;
}

static int us_query(kvb_method *m, const double *q, double *z) {
  us_state *st = m->state;
  double acc;
  kvb_expsum num, den;
  int rc = sums(m, q, &num, st->scratch, &den, &acc);
  if (rc) return rc;
  if (kvb_expsum_ratio(&num, &den, z)) return KVB_ERROR(KVB_ESTATE, "uniform_sample: zero denominator");
  return KVB_OK;
}

static void us_memory(const kvb_method *m, kvb_memory *out) {
  const us_state *st = m->state;
  size_t mid = middle_len(st);
  size_t cache = st->kv.n - mid + (st->fresh ? st->kept : mid);
  /* The kept tokens only (their weight m/k is one scalar per head, derived from m and k); the
   * raw stream this reference keeps to resample is not counted (method.h). */
  out->vectors = 2 * cache;
  out->bytes = cache * (m->d_key + m->d_value) * sizeof(double);
}

int kvb_usample_sums(kvb_method *m, const double *q, size_t d_key, double shift, double *num,
                     size_t d_value, double *den) {
  if (!m || m->type != self_type()) return KVB_ERROR(KVB_EINVAL, "not a uniform_sample method");
  if (!q || !num || !den) return KVB_ERROR(KVB_ENULL, "uniform_sample sums: NULL argument");
  if (d_key != m->d_key || d_value != m->d_value)
    return KVB_ERROR(KVB_EDIM, "uniform_sample sums: dims %zu/%zu, method %zu/%zu", d_key,
                     d_value, m->d_key, m->d_value);
  if (!kvb_all_finite(q, d_key) || !isfinite(shift))
    return KVB_ERROR(KVB_EDOM, "uniform_sample sums: non-finite query or shift");
  if (m->n == 0) return KVB_ERROR(KVB_ESTATE, "uniform_sample: sums before any update");
  us_state *st = m->state;
  double acc;
  kvb_expsum en, ed;
  int rc = sums(m, q, &en, st->scratch, &ed, &acc);
  if (rc) return rc;
  double fn = isinf(en.shift) ? 0.0 : exp(en.shift - shift);
  double fd = isinf(ed.shift) ? 0.0 : exp(ed.shift - shift);
  for (size_t a = 0; a < d_value; a++) num[a] = fn * st->scratch[a];
  *den = fd * acc;
  return KVB_OK;
}

double kvb_usample_weight(const kvb_method *m) {
  if (!m || m->type != self_type() || !((const us_state *)m->state)->fresh) return NAN;
  return kept_weight(m, m->state);
}

int kvb_usample_kept_set(const kvb_method *m, size_t *count, const size_t **pos) {
  if (!m || m->type != self_type()) return KVB_ERROR(KVB_EINVAL, "not a uniform_sample method");
  const us_state *st = m->state;
  if (!st->fresh) return KVB_ERROR(KVB_ESTATE, "uniform_sample: not sampled since last update");
  if (count) *count = st->kept;
  if (pos) *pos = st->pos;
  return KVB_OK;
}

const kvb_method_type kvb_method_uniform_sample = {
    "uniform_sample",
    "baseline: first/recent exact + uniform sample of ⌊m/2^T⌋ of the m middle tokens, weight m/k",
    "003 §4.1, App. B.1",
    us_params,
    us_mutants,
    1,
    us_init,
    us_update,
    us_query,
    us_memory,
    us_free,
    .in_model = KVB_IN_MODEL_ONCE_AT_PROMPT};

static const kvb_method_type *self_type(void) { return &kvb_method_uniform_sample; }

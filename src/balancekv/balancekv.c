/* balancekv.c — BalanceKV, 003 Algorithm 1 (see balancekv.h). */
#include "balancekv.h"
#include "kvb_error.h"
#include "walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int idx;
  kvb_mr mr;
} bkv_bucket;

typedef struct {
  double r, eps, n_param;
  size_t t, T;
  kvb_sb_config sb;
  bkv_bucket *b;
  size_t nb, capb;
  kvb_mr den;
  double vmax;
  uint64_t zero_values;
  kvb_balancekv_erasure *er;
  size_t ner, caper;
  double *scratch;
  int broken; /* an allocation failed inside a MergeAndReduce cascade: numerator and denominator
                 may be out of step, so the sketch refuses further use (it must be recreated) */
} bkv_state;

static const kvb_param_spec bkv_params[] = {
    {"r", KVB_PARAM_REAL, NAN, 1e-300, INFINITY, NULL, "bound on ‖q‖, ‖k‖ (003 Alg. 1 input r)"},
    {"t", KVB_PARAM_INT, NAN, 1, 1e8, NULL, "batch size t (003 Alg. 1/4)"},
    {"T", KVB_PARAM_INT, NAN, 1, 60, NULL, "compression 2^-T (003 Alg. 1/4)"},
    {"eps", KVB_PARAM_REAL, NAN, 1e-300, INFINITY, NULL, "precision ε (003 Alg. 1 line 8)"},
    {"delta", KVB_PARAM_REAL, 1e-6, 1e-300, 0.999999, NULL,
     "SoftmaxBalance failure probability (1/poly(n) in 003)"},
    {"c", KVB_PARAM_REAL, 0, 1e-300, INFINITY, NULL,
     "explicit walk constant; absent = 30·log(n/δ) (003 Alg. 2 line 3)"},
    {"n", KVB_PARAM_REAL, NAN, 1, 1e18, NULL,
     "stream length n of line 8 (required: 003 Alg. 1 takes n as input, T = log(n/t))"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec bkv_mutants[] = {
    {"walk_sign", "003 Alg. 3 line 8 with the wrong sign"},
    {"random_signs", "003 Alg. 3 line 8 replaced by p = ½ (independent random signs)"},
    {"keep_larger", "003 Alg. 2 lines 12-16 output the larger side"},
    {"level_weight", "line 13 numerator weighs level l by 2^{l+1}"},
    {"bucket_low", "line 5 picks bucket i−1 (‖v‖ up to 2^{i+1} in bucket i)"},
    {"erase_2x", "line 8 threshold doubled"},
    {"no_erase", "line 8 never erases"},
    {"zero_skip_den", "zero-norm values also skipped by MR-DENOMINATOR"},
    {"n_so_far", "line 8 with n = j (tokens so far) instead of the stream length n: a stricter "
                 "variant that erases more early on (not 003 Alg. 1)"},
    {NULL, NULL}};


extern const kvb_method_type kvb_method_balancekv;

int kvb_balancekv_bucket_of(double norm) {
  int e;
  double f = frexp(norm, &e); /* norm = f·2^e, f ∈ [½, 1) */
  return f == 0.5 ? e - 1 : e; /* 2^{i−1} < norm ≤ 2^i */
}

static int bkv_init(kvb_method *m, const kvb_params *p) {
  if (!(m->scale > 0) || !isfinite(m->scale))
    return KVB_ERROR(KVB_EINVAL, "balancekv: scale = %g must be > 0 (1/√d in 003)", m->scale);
  bkv_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "balancekv: out of memory");
  st->r = kvb_params_get(p, bkv_params, "r");
  st->eps = kvb_params_get(p, bkv_params, "eps");
  st->n_param = kvb_params_get(p, bkv_params, "n");
  st->t = (size_t)kvb_params_get(p, bkv_params, "t");
  st->T = (size_t)kvb_params_get(p, bkv_params, "T");
  kvb_sb_config sb = {m->scale, st->r, 1.0, kvb_params_get(p, bkv_params, "delta"),
                      kvb_params_get(p, bkv_params, "c"),
                      kvb_walk_flags_for(kvb_method_mutant_name(m))};
  st->sb = sb;
  st->scratch = malloc(m->d_value * sizeof(double));
  int rc = st->scratch ? kvb_mr_init(&st->den, m->d_key, 1, 1, st->t, st->T, &sb)
                       : KVB_ERROR(KVB_ENOMEM, "balancekv: out of memory");
  if (rc) {
    free(st->scratch);
    free(st);
    return rc;
  }

  m->state = st;
  return KVB_OK;
}

static void bkv_free(void *state) {
  bkv_state *st = state;
  if (!st) return;
  for (size_t i = 0; i < st->nb; i++) kvb_mr_free(&st->b[i].mr);
  free(st->b);
  kvb_mr_free(&st->den);
  free(st->er);
  free(st->scratch);
  free(st);
}

static double erase_threshold(const kvb_method *m, const bkv_state *st, uint64_t j, double vmax,
                              double *n_used) {
  /* 003 Alg. 1 line 8 uses the stream length n (an input of the algorithm). The mutant n_so_far
   * uses j instead: (ε/2j) > (ε/2n) for j < n, so it erases more, earlier. */
  double n = kvb_method_is_mutant(m, "n_so_far") ? (double)j : st->n_param;
  *n_used = n;
  double th = st->eps / (2.0 * n) * exp(-st->r * st->r * m->scale) * vmax; /* line 8 */
  return kvb_method_is_mutant(m, "erase_2x") ? 2 * th : th;
}

static int refuse_broken(void) {
  return KVB_ERROR(KVB_ESTATE, "balancekv: an earlier allocation failure left the numerator and "
                   "denominator sketches out of step; free it and create a new one");
}

static int bkv_update(kvb_method *m, const double *k, const double *v) {
  bkv_state *st = m->state;
  if (st->broken) return refuse_broken();
  if (kvb_norm2(k, m->d_key) > st->r * (1 + 1e-12))
    return KVB_ERROR(KVB_EINVAL, "balancekv update: ‖k‖ = %.17g exceeds r = %.17g",
                     kvb_norm2(k, m->d_key), st->r);
  double nv = kvb_norm2(v, m->d_value);
  uint64_t j = m->n + 1;
  int zero = !(nv > 0);
  int idx = zero ? 0 : kvb_balancekv_bucket_of(nv);   /* line 5 */
  if (!zero && kvb_method_is_mutant(m, "bucket_low")) idx -= 1;
  /* Reserve bucket and log slots first so nothing changes on allocation failure. */
  if (st->nb == st->capb) {
    size_t cap = st->capb ? 2 * st->capb : 8;
    bkv_bucket *b = realloc(st->b, cap * sizeof *b);
    if (!b) return KVB_ERROR(KVB_ENOMEM, "balancekv: out of memory");
    st->b = b, st->capb = cap;
  }
  if (st->ner + st->nb + 1 > st->caper) {
    size_t cap = 2 * (st->ner + st->nb + 1);
    kvb_balancekv_erasure *e = realloc(st->er, cap * sizeof *e);
    if (!e) return KVB_ERROR(KVB_ENOMEM, "balancekv: out of memory");
    st->er = e, st->caper = cap;
  }
  if (!zero) {
    size_t bi = st->nb;
    for (size_t i = 0; i < st->nb; i++)
      if (st->b[i].idx == idx) bi = i;
    int created = 0;
    if (bi == st->nb) {
      kvb_sb_config sb = st->sb;
      /* bucket bound 2^i */
      sb.r_value = ldexp(1.0, kvb_method_is_mutant(m, "bucket_low") ? idx + 1 : idx);
      int rc = kvb_mr_init(&st->b[bi].mr, m->d_key, m->d_value, 0, st->t, st->T, &sb);
      if (rc) return rc;
      st->b[bi].idx = idx;
      st->b[bi].mr.weight_shift = kvb_method_is_mutant(m, "level_weight");
      created = 1;
    }
    int rc = kvb_mr_push(&st->b[bi].mr, k, v, m->n, m->rng, &m->work); /* line 6 */
    if (rc) {
      if (created) kvb_mr_free(&st->b[bi].mr);
      return rc;
    }
    if (created) st->nb++;
  } else {
    st->zero_values++;
  }
  if (!(zero && kvb_method_is_mutant(m, "zero_skip_den"))) {
    /* line 11. Its inputs were checked above, so only allocation can fail here — after the
     * numerator took the token: the two would be out of step, which no later answer may hide. */
    int rc = kvb_mr_push(&st->den, k, NULL, m->n, m->rng, &m->work);
    if (rc) {
      st->broken = 1;
      return rc;
    }
  }
  if (nv > st->vmax) st->vmax = nv; /* line 7 */
  double n_used, th = erase_threshold(m, st, j, st->vmax, &n_used);
  if (!kvb_method_is_mutant(m, "no_erase")) {
    for (size_t i = 0; i < st->nb;) { /* line 8 */
      if (ldexp(1.0, st->b[i].idx) <= th) {
        kvb_balancekv_erasure e = {st->b[i].idx, j, st->vmax, n_used, th};
        st->er[st->ner++] = e;
        kvb_mr_free(&st->b[i].mr);
        st->b[i] = st->b[--st->nb];
      } else {
        i++;
      }
    }
  }
  return KVB_OK;
}

static int bkv_query(kvb_method *m, const double *q, double *z) {
  bkv_state *st = m->state;
  if (st->broken) return refuse_broken();
  kvb_expsum num, den;
  double dacc;
  kvb_expsum_init(&num, st->scratch, m->d_value);
  kvb_expsum_init(&den, &dacc, 1);
  for (size_t i = 0; i < st->nb; i++) kvb_mr_expsum(&st->b[i].mr, q, m->scale, &num, &m->work);
  kvb_mr_expsum(&st->den, q, m->scale, &den, &m->work);
  if (kvb_expsum_ratio(&num, &den, z) != 0)
    return KVB_ERROR(KVB_ESTATE, "balancekv query: the denominator sketch is empty "
                                 "(every stored key was halved away)");
  if (isinf(num.shift)) /* numerator empty (all values erased or zero): z = 0 */
    for (size_t a = 0; a < m->d_value; a++) z[a] = 0;
  return KVB_OK;
}

static void bkv_memory(const kvb_method *m, kvb_memory *out) {
  const bkv_state *st = m->state;
  size_t a = 0, b = kvb_mr_stored(&st->den);
  for (size_t i = 0; i < st->nb; i++) a += kvb_mr_stored(&st->b[i].mr);
  out->vectors = 2 * a + b;
  out->bytes = (a * (m->d_key + m->d_value) + b * m->d_key) * sizeof(double) +
               (a + b) * sizeof(uint64_t) + st->nb * sizeof(bkv_bucket);
}

const kvb_method_type kvb_method_balancekv = {
    "balancekv",
    "BalanceKV: value-norm buckets of MergeAndReduce over a MergeAndReduce normalizer",
    "003 Algorithm 1, Theorem 3.1",
    bkv_params,
    bkv_mutants,
    1,
    bkv_init,
    bkv_update,
    bkv_query,
    bkv_memory,
    bkv_free};

int kvb_balancekv_get_info(const kvb_method *m, kvb_balancekv_info *out) {
  if (!m || m->type != &kvb_method_balancekv || !out) return KVB_EINVAL;
  const bkv_state *st = m->state;
  out->buckets = st->nb;
  out->zero_values = st->zero_values;
  out->vmax = st->vmax;
  out->erasures = st->ner;
  return KVB_OK;
}

const kvb_mr *kvb_balancekv_bucket(const kvb_method *m, size_t i, int *index) {
  if (!m || m->type != &kvb_method_balancekv) return NULL;
  const bkv_state *st = m->state;
  if (i >= st->nb) return NULL;
  if (index) *index = st->b[i].idx;
  return &st->b[i].mr;
}

const kvb_mr *kvb_balancekv_denominator(const kvb_method *m) {
  if (!m || m->type != &kvb_method_balancekv) return NULL;
  return &((const bkv_state *)m->state)->den;
}

const kvb_balancekv_erasure *kvb_balancekv_erasures(const kvb_method *m, size_t *n) {
  if (!m || m->type != &kvb_method_balancekv) return NULL;
  const bkv_state *st = m->state;
  if (n) *n = st->ner;
  return st->er;
}

/* merge_reduce.c — MergeAndReduce, 003 Algorithm 4 (see merge_reduce.h). */
#include "merge_reduce.h"
#include "kvb_error.h"
#include "walk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int kvb_mr_init(kvb_mr *mr, size_t dk, size_t dv, int ones, size_t t, size_t T,
                const kvb_sb_config *sb) {
  if (t < 1 || T < 1) return KVB_ERROR(KVB_EINVAL, "merge_reduce: t = %zu, T = %zu must be >= 1", t, T);
  memset(mr, 0, sizeof *mr);
  mr->lev = calloc(T + 1, sizeof *mr->lev);
  if (!mr->lev) return KVB_ERROR(KVB_ENOMEM, "merge_reduce: out of memory");
  mr->dk = dk, mr->dv = ones ? 1 : dv, mr->ones = ones, mr->t = t, mr->T = T, mr->sb = *sb;
  return KVB_OK;
}

void kvb_mr_free(kvb_mr *mr) {
  if (!mr || !mr->lev) return;
  for (size_t i = 0; i <= mr->T; i++) {
    free(mr->lev[i].K);
    free(mr->lev[i].V);
    free(mr->lev[i].pos);
  }
  free(mr->lev);
  mr->lev = NULL;
}

static int reserve(kvb_mr *mr, kvb_mr_level *L, size_t need) {
  if (need <= L->cap) return KVB_OK;
  size_t cap = L->cap ? L->cap : 8;
  while (cap < need) cap *= 2;
  double *K = realloc(L->K, cap * mr->dk * sizeof *K);
  if (K) L->K = K;
  double *V = mr->ones ? NULL : realloc(L->V, cap * mr->dv * sizeof *V);
  if (V) L->V = V;
  uint64_t *P = realloc(L->pos, cap * sizeof *P);
  if (P) L->pos = P;
  if (!K || (!mr->ones && !V) || !P) return KVB_ERROR(KVB_ENOMEM, "merge_reduce: out of memory");
  L->cap = cap;
  return KVB_OK;
}

/* After a cascade the levels it emptied (003 Alg. 4 line 14: C^i ← ∅) still hold the capacity
 * reserved for its worst case; kept, the instance would hold several times the vectors it stores
 * (the battery's measured memory saw 3-13×). What the algorithm keeps between tokens is its
 * levels' contents, so an emptied level gives its buffers back. Only free: a trim that could
 * fail (a shrinking realloc) would be an allocation failure the update has to report. */
static void trim(kvb_mr_level *L) {
  if (L->cnt != 0) return;
  free(L->K), free(L->V), free(L->pos);
  L->K = NULL, L->V = NULL, L->pos = NULL, L->cap = 0;
}

static void append(kvb_mr *mr, kvb_mr_level *L, const double *k, const double *v, uint64_t pos) {
  memcpy(L->K + L->cnt * mr->dk, k, mr->dk * sizeof *k);
  if (!mr->ones) memcpy(L->V + L->cnt * mr->dv, v, mr->dv * sizeof *v);
  L->pos[L->cnt++] = pos;
}

int kvb_mr_push(kvb_mr *mr, const double *k, const double *v, uint64_t pos, gsl_rng *rng,
                kvb_work *work) {
  if (kvb_norm2(k, mr->dk) > mr->sb.r_key * (1 + 1e-12))
    return KVB_ERROR(KVB_EINVAL, "merge_reduce: ‖k‖ = %.17g exceeds r_key = %.17g",
                     kvb_norm2(k, mr->dk), mr->sb.r_key);
  if (!mr->ones && kvb_norm2(v, mr->dv) > mr->sb.r_value * (1 + 1e-12))
    return KVB_ERROR(KVB_EINVAL, "merge_reduce: ‖v‖ = %.17g exceeds r_value = %.17g",
                     kvb_norm2(v, mr->dv), mr->sb.r_value);
  /* Reserve everything the cascade can need first, so an allocation failure changes nothing:
   * level i+1 can receive at most what level i holds after its own arrivals. */
  uint64_t j = mr->j + 1;
  size_t incoming = 1;
  int rc = reserve(mr, &mr->lev[0], mr->lev[0].cnt + 1);
  if (rc) return rc;
  if (j % mr->t == 0) {
    uint64_t p = j / mr->t;
    for (size_t i = 0; i < mr->T; i++) {
      size_t have = mr->lev[i].cnt + incoming;
      rc = reserve(mr, &mr->lev[i + 1], mr->lev[i + 1].cnt + have);
      if (rc) return rc;
      incoming = have;
      if (p % 2) break;
      p /= 2;
    }
  }
  size_t maxn = mr->lev[0].cnt + 1;
  for (size_t i = 1; i <= mr->T; i++) maxn = mr->lev[i].cap > maxn ? mr->lev[i].cap : maxn;
  size_t *keep = malloc(maxn * sizeof *keep);
  if (!keep) return KVB_ERROR(KVB_ENOMEM, "merge_reduce: out of memory");

  append(mr, &mr->lev[0], k, v, pos); /* line 5 */
  mr->j = j;
  if (j % mr->t == 0) {               /* line 6 (j a multiple of t) */
    uint64_t p = j / mr->t;           /* line 11 */
    size_t i = 0;
    int integral = 1;
    while (integral && i < mr->T) {   /* line 12 */
      kvb_mr_level *C = &mr->lev[i], *D = &mr->lev[i + 1];
      size_t nk = 0;
      uint64_t nf = 0;
      /* line 13: C^{i+1} ← C^{i+1} ∪ SoftmaxBalance(C^i, r_key, r_value, δ) */
      rc = kvb_softmax_balance(C->cnt, mr->dk, mr->dv, C->K, mr->ones ? NULL : C->V, &mr->sb,
                               NULL, rng, NULL, keep, &nk, &nf);
      if (rc != KVB_OK && rc != KVB_EFAIL) { /* only ENOMEM can get here (inputs checked) */
        free(keep);
        return rc;
      }
      mr->balances++;
      mr->fails += nf;
      if (work) {
        work->fails += nf;
        work->coins += C->cnt;
        work->exps += C->cnt * (C->cnt - (C->cnt > 0)) / 2;
        work->dots += C->cnt * (C->cnt - (C->cnt > 0)) / (mr->ones ? 2 : 1);
      }
      for (size_t a = 0; a < nk; a++)
        append(mr, D, C->K + keep[a] * mr->dk, mr->ones ? NULL : C->V + keep[a] * mr->dv,
               C->pos[keep[a]]);
      C->cnt = 0; /* line 14 */
      i++;        /* line 15 */
      integral = (p % 2 == 0); /* line 16: p ← p/2 stays an integer iff p was even */
      p /= 2;
    }
    for (size_t a = 0; a <= mr->T; a++) trim(&mr->lev[a]);
  }
  free(keep);
  return KVB_OK;
}

void kvb_mr_expsum(const kvb_mr *mr, const double *q, double scale, kvb_expsum *s, kvb_work *work) {
  for (size_t i = 0; i <= mr->T; i++) {
    const kvb_mr_level *L = &mr->lev[i];
    double w = ldexp(1.0, (int)i + mr->weight_shift); /* 2^i (Theorem 3.4 estimator) */
    for (size_t a = 0; a < L->cnt; a++) {
      kvb_expsum_add(s, w, scale * kvb_dot(q, L->K + a * mr->dk, mr->dk),
                     mr->ones ? NULL : L->V + a * mr->dv);
      if (work) work->exps++, work->dots++;
    }
  }
}

size_t kvb_mr_stored(const kvb_mr *mr) {
  size_t s = 0;
  for (size_t i = 0; i <= mr->T; i++) s += mr->lev[i].cnt;
  return s;
}

/* ---- the method "merge_reduce" ---- */

typedef struct {
  kvb_mr num, den;
  double *scratch;
  int broken; /* the denominator's push failed after the numerator's: out of step for good */
} mr_state;

static const kvb_param_spec mr_params[] = {
    {"r_key", KVB_PARAM_REAL, NAN, 1e-300, INFINITY, NULL, "key-norm bound r (003 Alg. 2 r_key)"},
    {"r_value", KVB_PARAM_REAL, NAN, 1e-300, INFINITY, NULL, "value-norm bound (003 Alg. 2 r_value)"},
    {"t", KVB_PARAM_INT, NAN, 1, 1e8, NULL, "batch size t (003 Alg. 4)"},
    {"T", KVB_PARAM_INT, NAN, 1, 60, NULL, "levels: compression 2^-T (003 Alg. 4)"},
    {"delta", KVB_PARAM_REAL, 1e-6, 1e-300, 0.999999, NULL,
     "SoftmaxBalance failure probability (003 Alg. 4 line 13: 1/poly(n))"},
    {"c", KVB_PARAM_REAL, 0, 1e-300, INFINITY, NULL,
     "explicit walk constant; absent = 30·log(n/δ) (003 Alg. 2 line 3)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec mr_mutants[] = {
    {"walk_sign", "003 Alg. 3 line 8 with the wrong sign: p = ½ + corr/(2cr²)"},
    {"random_signs", "003 Alg. 3 line 8 replaced by p = ½ (independent random signs)"},
    {"walk_nofail", "003 Alg. 3 line 5 ignored: FAIL never reported"},
    {"keep_larger", "003 Alg. 2 lines 12-16 output the larger side"},
    {"level_weight", "Theorem 3.4 estimator weighs C^i by 2^{i+1} (numerator instance)"},
    {NULL, NULL}};

extern const kvb_method_type kvb_method_merge_reduce;

static int mr_method_init(kvb_method *m, const kvb_params *p) {
  mr_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "merge_reduce: out of memory");
  kvb_sb_config sb = {m->scale, kvb_params_get(p, mr_params, "r_key"),
                      kvb_params_get(p, mr_params, "r_value"), kvb_params_get(p, mr_params, "delta"),
                      kvb_params_has(p, "c") ? kvb_params_get(p, mr_params, "c") : 0.0,
                      kvb_walk_flags_for(kvb_method_mutant_name(m))};
  size_t t = (size_t)kvb_params_get(p, mr_params, "t"), T = (size_t)kvb_params_get(p, mr_params, "T");
  kvb_sb_config sbd = sb;
  sbd.r_value = 1.0; /* the (k, 1) instance: values of norm 1 */
  st->scratch = malloc(m->d_value * sizeof(double));
  int rc = st->scratch ? kvb_mr_init(&st->num, m->d_key, m->d_value, 0, t, T, &sb)
                       : KVB_ERROR(KVB_ENOMEM, "merge_reduce: out of memory");
  if (!rc) {
    rc = kvb_mr_init(&st->den, m->d_key, 1, 1, t, T, &sbd);
    if (rc) kvb_mr_free(&st->num);
  }
  if (rc) {
    free(st->scratch);
    free(st);
    return rc;
  }
  st->num.weight_shift = kvb_method_is_mutant(m, "level_weight"); /* numerator only: doubling both would cancel */
  m->state = st;
  return KVB_OK;
}

static void mr_method_free(void *state) {
  mr_state *st = state;
  if (!st) return;
  kvb_mr_free(&st->num);
  kvb_mr_free(&st->den);
  free(st->scratch);
  free(st);
}

static int mr_refuse_broken(void) {
  return KVB_ERROR(KVB_ESTATE, "merge_reduce: an earlier allocation failure left the numerator and "
                   "denominator sketches out of step; free it and create a new one");
}

static int mr_method_update(kvb_method *m, const double *k, const double *v) {
  mr_state *st = m->state;
  if (st->broken) return mr_refuse_broken();
  /* Check both radii before touching either instance, so a rejection changes nothing. */
  if (kvb_norm2(k, m->d_key) > st->num.sb.r_key * (1 + 1e-12) ||
      kvb_norm2(v, m->d_value) > st->num.sb.r_value * (1 + 1e-12))
    return KVB_ERROR(KVB_EINVAL, "merge_reduce update: ‖k‖ = %g or ‖v‖ = %g exceeds r_key = %g / r_value = %g",
                     kvb_norm2(k, m->d_key), kvb_norm2(v, m->d_value), st->num.sb.r_key,
                     st->num.sb.r_value);
  int rc = kvb_mr_push(&st->num, k, v, m->n, m->rng, &m->work);
  if (rc) return rc;
  rc = kvb_mr_push(&st->den, k, NULL, m->n, m->rng, &m->work);
  if (rc) st->broken = 1; /* inputs already passed the numerator: only allocation fails here */
  return rc;
}

static int mr_method_query(kvb_method *m, const double *q, double *z) {
  mr_state *st = m->state;
  if (st->broken) return mr_refuse_broken();
  kvb_expsum num, den;
  double dacc;
  kvb_expsum_init(&num, st->scratch, m->d_value);
  kvb_expsum_init(&den, &dacc, 1);
  kvb_mr_expsum(&st->num, q, m->scale, &num, &m->work);
  kvb_mr_expsum(&st->den, q, m->scale, &den, &m->work);
  if (kvb_expsum_ratio(&num, &den, z) != 0)
    return KVB_ERROR(KVB_ESTATE, "merge_reduce query: the denominator sketch is empty "
                                 "(every stored key was halved away)");
  return KVB_OK;
}

static void mr_method_memory(const kvb_method *m, kvb_memory *out) {
  const mr_state *st = m->state;
  size_t a = kvb_mr_stored(&st->num), b = kvb_mr_stored(&st->den);
  out->vectors = 2 * a + b; /* numerator: key + value; denominator: key (value 1 implicit) */
  out->bytes = (a * (m->d_key + m->d_value) + b * m->d_key) * sizeof(double) +
               (a + b) * sizeof(uint64_t);
}

const kvb_method_type kvb_method_merge_reduce = {
    "merge_reduce",
    "MergeAndReduce on (k,v) over MergeAndReduce on (k,1) (003 Alg. 4 with Alg. 2)",
    "003 Algorithm 4, Theorem 3.4",
    mr_params,
    mr_mutants,
    1,
    mr_method_init,
    mr_method_update,
    mr_method_query,
    mr_method_memory,
    mr_method_free};

const kvb_mr *kvb_merge_reduce_numerator(const kvb_method *m) {
  return (m && m->type == &kvb_method_merge_reduce) ? &((const mr_state *)m->state)->num : NULL;
}
const kvb_mr *kvb_merge_reduce_denominator(const kvb_method *m) {
  return (m && m->type == &kvb_method_merge_reduce) ? &((const mr_state *)m->state)->den : NULL;
}

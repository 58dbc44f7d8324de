/* subgen.c — SubGen, 000 Algorithm 1, line by line (see subgen.h). */
#include "subgen.h"
#include "attention.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

typedef struct {
  size_t t, s;
  double delta;
  /* D = {(x_i, S_i, n_i)}: m′ clusters, capacity cap */
  size_t mc, cap;
  double *rep;       /* cap × d_key: x_i */
  uint64_t *rep_pos; /* stream position of x_i */
  uint64_t *count;   /* n_i */
  double *S;         /* cap × t × d_key */
  uint64_t *S_pos;   /* cap × t */
  /* M: s slots of (k, v), µ */
  double mu;
  double *Mk, *Mv;   /* s × d_key, s × d_value */
  uint64_t *M_pos;   /* s; UINT64_MAX = null */
  double *scratch;   /* d_value + 1 */
  double *extra;     /* mutant keep_every_key only: a copy of every key, nextra × d_key */
  size_t nextra;
} subgen_state;

static const kvb_param_spec subgen_params[] = {
    {"delta", KVB_PARAM_REAL, NAN, 1e-300, INFINITY, NULL,
     "clustering threshold δ > 0 (000 Alg. 1 line 13)"},
    {"t", KVB_PARAM_INT, NAN, 1, 1e8, NULL, "samples per cluster (000 Alg. 1 lines 15, 20)"},
    {"s", KVB_PARAM_INT, NAN, 1, 1e8, NULL, "value-sampling slots (000 Alg. 1 line 24)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

/* Deliberately wrong variants; each is rejected by at least one check in props/. */
static const kvb_mutant_spec subgen_mutants[] = {
    {"cluster_lt", "line 13 with < instead of <= (keys at distance exactly δ open clusters)"},
    {"cluster_no_count", "line 14 never increments n_i"},
    {"cluster_prob_half", "line 17 replaces with probability 1/(2 n_i)"},
    {"cluster_shared_coin", "line 17 flips one coin for all t slots of a cluster"},
    {"cluster_farthest", "line 12 picks the first representative within δ, not the nearest"},
    {"mp_prob_half", "line 26 replaces with half the probability (after the first token)"},
    {"mp_uniform", "line 26 replaces with probability 1/n (uniform, not ℓ2, sampling)"},
    {"mp_shared_coin", "line 26 flips one coin for all s slots"},
    {"mu_norm", "line 6 adds ‖v‖ instead of ‖v‖²"},
    {"tau_no_count", "line 30 drops the n_i/t weight (uses 1/t)"},
    {"z_no_weight", "line 29 drops the µ/‖v‖² importance weight (uses 1/s)"},
    {"cluster_never_join", "line 13 never joins: every key opens a cluster (m′ = n)"},
    {"keep_every_key", "also keeps a copy of every key outside D and M (memory grows with n; "
                       "the memory accounting does not see it)"},
    {NULL, NULL}};


static int is_subgen(const kvb_method *m);

static int subgen_init(kvb_method *m, const kvb_params *p) {
  subgen_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "subgen: out of memory");
  st->delta = kvb_params_get(p, subgen_params, "delta");
  st->t = (size_t)kvb_params_get(p, subgen_params, "t");
  st->s = (size_t)kvb_params_get(p, subgen_params, "s");
  st->Mk = malloc(st->s * m->d_key * sizeof(double));
  st->Mv = malloc(st->s * m->d_value * sizeof(double));
  st->M_pos = malloc(st->s * sizeof(uint64_t));
  st->scratch = malloc((m->d_value + 1) * sizeof(double));
  if (!st->Mk || !st->Mv || !st->M_pos || !st->scratch) {
    free(st->Mk);
    free(st->Mv);
    free(st->M_pos);
    free(st->scratch);
    size_t slots = st->s;
    free(st);
    return KVB_ERROR(KVB_ENOMEM, "subgen: out of memory for s = %zu slots", slots);
  }
  for (size_t j = 0; j < st->s; j++) st->M_pos[j] = UINT64_MAX; /* line 2: M = [null, ...] */
  m->state = st;
  return KVB_OK;
}

static void subgen_free(void *state) {
  subgen_state *st = state;
  if (!st) return;
  free(st->rep);
  free(st->rep_pos);
  free(st->count);
  free(st->S);
  free(st->S_pos);
  free(st->Mk);
  free(st->Mv);
  free(st->M_pos);
  free(st->scratch);
  free(st->extra);
  free(st);
}

/* Makes room for one more cluster before anything is changed, so an allocation failure
 * leaves the sketch as it was. */
static int reserve_cluster(kvb_method *m, subgen_state *st) {
  if (st->mc < st->cap) return KVB_OK;
  size_t cap = st->cap ? 2 * st->cap : 16, dk = m->d_key, t = st->t;
  double *rep = realloc(st->rep, cap * dk * sizeof *rep);
  if (rep) st->rep = rep;
  uint64_t *rp = realloc(st->rep_pos, cap * sizeof *rp);
  if (rp) st->rep_pos = rp;
  uint64_t *cnt = realloc(st->count, cap * sizeof *cnt);
  if (cnt) st->count = cnt;
  double *S = realloc(st->S, cap * t * dk * sizeof *S);
  if (S) st->S = S;
  uint64_t *Sp = realloc(st->S_pos, cap * t * sizeof *Sp);
  if (Sp) st->S_pos = Sp;
  if (!rep || !rp || !cnt || !S || !Sp)
    return KVB_ERROR(KVB_ENOMEM, "subgen: out of memory growing to %zu clusters", cap);
  st->cap = cap;
  return KVB_OK;
}

/* 000 Alg. 1 lines 11-22. */
static void update_softmax_normalizer(kvb_method *m, subgen_state *st, const double *k) {
  size_t dk = m->d_key, t = st->t;
  uint64_t pos = m->n;
  /* line 12: i* = argmin_i ‖x_i − k‖₂ (ties: earliest) */
  size_t best = 0;
  double bestd = INFINITY;
  for (size_t i = 0; i < st->mc; i++) {
    double d = kvb_dist2(st->rep + i * dk, k, dk);
    m->work.distances++;
    if (kvb_method_is_mutant(m, "cluster_farthest") && d <= st->delta) {
      best = i, bestd = d;
      break;
    }
    if (d < bestd) best = i, bestd = d;
  }
  int joins = kvb_method_is_mutant(m, "cluster_lt") ? (bestd < st->delta)
                                                     : (bestd <= st->delta); /* line 13 */
  if (kvb_method_is_mutant(m, "cluster_never_join")) joins = 0;
  if (st->mc > 0 && joins) {
    if (!kvb_method_is_mutant(m, "cluster_no_count")) st->count[best]++; /* line 14 */
    double p = 1.0 / (double)st->count[best];        /* line 17 */
    if (kvb_method_is_mutant(m, "cluster_prob_half")) p *= 0.5;
    double shared = kvb_method_is_mutant(m, "cluster_shared_coin") ? gsl_rng_uniform(m->rng) : 0;
    for (size_t j = 0; j < t; j++) { /* line 16 */
      double u = kvb_method_is_mutant(m, "cluster_shared_coin") ? shared : gsl_rng_uniform(m->rng);
      m->work.coins++;
      if (u < p) {
        memcpy(st->S + (best * t + j) * dk, k, dk * sizeof *k);
        st->S_pos[best * t + j] = pos;
      }
    }
  } else { /* lines 19-20: a new cluster (k, [k, ..., k], 1) */
    size_t i = st->mc++;
    memcpy(st->rep + i * dk, k, dk * sizeof *k);
    st->rep_pos[i] = pos;
    st->count[i] = 1;
    for (size_t j = 0; j < t; j++) {
      memcpy(st->S + (i * t + j) * dk, k, dk * sizeof *k);
      st->S_pos[i * t + j] = pos;
    }
  }
}

/* 000 Alg. 1 lines 24-28, then line 6. */
static void update_matrix_product(kvb_method *m, subgen_state *st, const double *k,
                                  const double *v) {
  size_t dk = m->d_key, dv = m->d_value;
  double v2 = kvb_dot(v, v, dv);
  double den = st->mu + v2;
  /* 0/0 (zero value while µ = 0) reads as probability 0: see subgen.h. */
  double p = den > 0 ? v2 / den : 0.0;
  if (kvb_method_is_mutant(m, "mp_prob_half") && st->mu > 0) p *= 0.5;
  if (kvb_method_is_mutant(m, "mp_uniform")) p = (v2 > 0) ? 1.0 / (double)(m->n + 1) : 0.0;
  double shared = kvb_method_is_mutant(m, "mp_shared_coin") ? gsl_rng_uniform(m->rng) : 0;
  for (size_t i = 0; i < st->s; i++) { /* line 25 */
    double u = kvb_method_is_mutant(m, "mp_shared_coin") ? shared : gsl_rng_uniform(m->rng);
    m->work.coins++;
    if (u < p) { /* line 26 */
      memcpy(st->Mk + i * dk, k, dk * sizeof *k);
      memcpy(st->Mv + i * dv, v, dv * sizeof *v);
      st->M_pos[i] = m->n;
    }
  }
  st->mu += kvb_method_is_mutant(m, "mu_norm") ? sqrt(v2) : v2; /* line 6 */
}

static int subgen_update(kvb_method *m, const double *k, const double *v) {
  subgen_state *st = m->state;
  int rc = reserve_cluster(m, st);
  if (rc) return rc;
  update_softmax_normalizer(m, st, k); /* line 4 */
  update_matrix_product(m, st, k, v);  /* lines 5-6 */
  if (kvb_method_is_mutant(m, "keep_every_key")) {
    double *x = realloc(st->extra, (st->nextra + 1) * m->d_key * sizeof *x);
    if (!x) return KVB_ERROR(KVB_ENOMEM, "subgen: out of memory");
    memcpy(x + st->nextra++ * m->d_key, k, m->d_key * sizeof *x);
    st->extra = x;
  }
  return KVB_OK;
}

/* Lines 28-29 as two shifted sums that share one shift. */
static void query_sums(kvb_method *m, subgen_state *st, const double *q, kvb_expsum *zs,
                       kvb_expsum *ts) {
  size_t dk = m->d_key, dv = m->d_value, t = st->t;
  for (size_t i = 0; i < st->s; i++) { /* line 29 */
    if (st->M_pos[i] == UINT64_MAX) continue; /* null slot: only while every value was zero */
    const double *v = st->Mv + i * dv;
    double w = kvb_method_is_mutant(m, "z_no_weight") ? 1.0 / (double)st->s
                                  : st->mu / ((double)st->s * kvb_dot(v, v, dv));
    kvb_expsum_add(zs, w, kvb_score(q, st->Mk + i * dk, dk, m->scale), v);
    m->work.exps++;
    m->work.dots++;
  }
  for (size_t i = 0; i < st->mc; i++) { /* line 30 */
    double w = kvb_method_is_mutant(m, "tau_no_count") ? 1.0 / (double)t
                                                       : (double)st->count[i] / (double)t;
    for (size_t j = 0; j < t; j++) {
      kvb_expsum_add(ts, w, kvb_score(q, st->S + (i * t + j) * dk, dk, m->scale), NULL);
      m->work.exps++;
      m->work.dots++;
    }
  }
}

static int subgen_query(kvb_method *m, const double *q, double *z) {
  subgen_state *st = m->state;
  kvb_expsum zs, ts;
  double tacc;
  kvb_expsum_init(&zs, st->scratch, m->d_value);
  kvb_expsum_init(&ts, &tacc, 1);
  query_sums(m, st, q, &zs, &ts);
  if (zs.shift == INFINITY || ts.shift == INFINITY) /* kvb_score: |score| > 1.8e308 */
    return KVB_ERROR(KVB_ERANGE, "subgen query: a score scale·<q,k> is beyond double range "
                     "(|score| > 1.8e308); rescale the inputs");
  if (kvb_expsum_ratio(&zs, &ts, z) != 0) /* τ > 0 always once a key arrived; defensive */
    return KVB_ERROR(KVB_ESTATE, "subgen query: τ is zero");
  return KVB_OK; /* line 31: z/τ */
}

int kvb_subgen_query_parts(kvb_method *m, const double *q, double *z_scaled, double *tau_scaled,
                           double *log_shift) {
  if (!is_subgen(m))
    return KVB_ERROR(KVB_EINVAL, "not a subgen method");
  if (!q || !z_scaled || !tau_scaled || !log_shift)
    return KVB_ERROR(KVB_ENULL, "subgen query_parts: NULL argument");
  if (m->n == 0) return KVB_ERROR(KVB_ESTATE, "subgen query_parts: empty stream");
  subgen_state *st = m->state;
  kvb_expsum zs, ts;
  double tacc;
  kvb_expsum_init(&zs, st->scratch, m->d_value);
  kvb_expsum_init(&ts, &tacc, 1);
  query_sums(m, st, q, &zs, &ts);
  if (zs.shift == INFINITY || ts.shift == INFINITY)
    return KVB_ERROR(KVB_ERANGE, "subgen query_parts: a score scale·<q,k> is beyond double range "
                     "(|score| > 1.8e308)");
  /* Express both on the larger shift. */
  double sh = fmax(zs.shift, ts.shift);
  double fz = isinf(zs.shift) ? 0 : exp(zs.shift - sh), ft = exp(ts.shift - sh);
  for (size_t j = 0; j < m->d_value; j++) z_scaled[j] = fz * zs.acc[j];
  *tau_scaled = ft * tacc;
  *log_shift = sh;
  return KVB_OK;
}

static void subgen_memory(const kvb_method *m, kvb_memory *out) {
  const subgen_state *st = m->state;
  size_t dk = m->d_key, dv = m->d_value;
  /* D: m′ representatives, m′·t samples, m′ counts; M: s (k, v) pairs; µ. */
  out->vectors = st->mc * (1 + st->t) + 2 * st->s;
  out->bytes = sizeof(double) * (st->mc * (1 + st->t) * dk + st->s * (dk + dv) + 1) +
               sizeof(uint64_t) * st->mc;
}

size_t kvb_subgen_num_clusters(const kvb_method *m) {
  return is_subgen(m) ? ((const subgen_state *)m->state)->mc : 0;
}
size_t kvb_subgen_t(const kvb_method *m) {
  return is_subgen(m) ? ((const subgen_state *)m->state)->t : 0;
}
size_t kvb_subgen_s(const kvb_method *m) {
  return is_subgen(m) ? ((const subgen_state *)m->state)->s : 0;
}
double kvb_subgen_delta(const kvb_method *m) {
  return is_subgen(m) ? ((const subgen_state *)m->state)->delta : 0;
}
double kvb_subgen_mu(const kvb_method *m) {
  return is_subgen(m) ? ((const subgen_state *)m->state)->mu : 0;
}

int kvb_subgen_cluster(const kvb_method *m, size_t i, const double **rep, uint64_t *count,
                       const double **samples, const uint64_t **sample_pos, uint64_t *rep_pos) {
  if (!is_subgen(m)) return KVB_ERROR(KVB_EINVAL, "not a subgen method");
  const subgen_state *st = m->state;
  if (i >= st->mc) return KVB_ERROR(KVB_EINVAL, "cluster %zu of %zu", i, st->mc);
  if (rep) *rep = st->rep + i * m->d_key;
  if (count) *count = st->count[i];
  if (samples) *samples = st->S + i * st->t * m->d_key;
  if (sample_pos) *sample_pos = st->S_pos + i * st->t;
  if (rep_pos) *rep_pos = st->rep_pos[i];
  return KVB_OK;
}

int kvb_subgen_slot(const kvb_method *m, size_t j, const double **k, const double **v,
                    uint64_t *pos) {
  if (!is_subgen(m)) return KVB_ERROR(KVB_EINVAL, "not a subgen method");
  const subgen_state *st = m->state;
  if (j >= st->s) return KVB_ERROR(KVB_EINVAL, "slot %zu of %zu", j, st->s);
  int null = st->M_pos[j] == UINT64_MAX;
  if (k) *k = null ? NULL : st->Mk + j * m->d_key;
  if (v) *v = null ? NULL : st->Mv + j * m->d_value;
  if (pos) *pos = st->M_pos[j];
  return KVB_OK;
}

const kvb_method_type kvb_method_subgen = {
    "subgen",
    "SubGen: online δ-clustering of keys + ℓ2 sampling of values (sublinear memory)",
    "000 Algorithm 1 (001 Algorithm 1); guarantee 000 Theorem 1",
    subgen_params,
    subgen_mutants,
    1,
    subgen_init,
    subgen_update,
    subgen_query,
    subgen_memory,
    subgen_free};

static int is_subgen(const kvb_method *m) { return m && m->type == &kvb_method_subgen; }

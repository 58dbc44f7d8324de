/* stream.c — stream allocation, registry and the basic synthetic generators (see stream.h). */
#include "stream.h"
#include "attention.h"
#include "kvb_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

int kvb_stream_alloc(size_t n, size_t d_key, size_t d_value, kvb_stream **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "stream output pointer is NULL");
  *out = NULL;
  if (n == 0 || d_key == 0 || d_value == 0)
    return KVB_ERROR(KVB_EINVAL, "stream needs n, d_key, d_value >= 1 (got %zu, %zu, %zu)", n,
                     d_key, d_value);
  kvb_stream *s = calloc(1, sizeof *s);
  if (!s) return KVB_ERROR(KVB_ENOMEM, "stream: out of memory");
  s->n = n;
  s->d_key = d_key;
  s->d_value = d_value;
  s->Q = malloc(n * d_key * sizeof(double));
  s->K = malloc(n * d_key * sizeof(double));
  s->V = malloc(n * d_value * sizeof(double));
  s->m = s->delta = s->r = NAN;
  if (!s->Q || !s->K || !s->V) {
    kvb_stream_free(s);
    return KVB_ERROR(KVB_ENOMEM, "stream: out of memory for n = %zu tokens", n);
  }
  *out = s;
  return KVB_OK;
}

void kvb_stream_free(kvb_stream *s) {
  if (!s) return;
  free(s->Q);
  free(s->K);
  free(s->V);
  free(s);
}

int kvb_stream_generate_type(const kvb_stream_type *t, const kvb_params *p, gsl_rng *rng,
                             kvb_stream **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "stream output pointer is NULL");
  *out = NULL;
  if (!t) return KVB_ERROR(KVB_ENULL, "stream type is NULL");
  const char *name = t->name;
  if (!rng) return KVB_ERROR(KVB_ENULL, "stream '%s' needs a generator", name);
  /* The generic layer owns "mutant" (mutant.h); the generator sees the rest. */
  kvb_params rest;
  int mutant = 0;
  int st = kvb_mutant_split(p, t->mutants, "stream", name, &rest, &mutant);
  if (st) return st;
  st = kvb_params_validate(&rest, t->params, name);
  if (st) return st;
  size_t n = (size_t)kvb_params_get(&rest, t->params, "n");
  size_t dk = (size_t)kvb_params_get(&rest, t->params, "d_key");
  size_t dv = (size_t)kvb_params_get(&rest, t->params, "d_value");
  kvb_stream *s;
  st = kvb_stream_alloc(n, dk, dv, &s);
  if (st) return st;
  snprintf(s->name, sizeof s->name, "%s", name);
  if (p) s->params = *p;
  s->type = t;
  s->mutant = mutant;
  st = t->generate(&rest, t->params, rng, s);
  if (st) {
    kvb_stream_free(s);
    return st;
  }
  *out = s;
  return KVB_OK;
}

const char *kvb_stream_mutant_name(const kvb_stream *s) {
  return s && s->type ? kvb_mutant_name(s->type->mutants, s->mutant) : NULL;
}

int kvb_stream_is_mutant(const kvb_stream *s, const char *name) {
  const char *cur = kvb_stream_mutant_name(s);
  return cur && name && strcmp(cur, name) == 0;
}

void kvb_rand_gaussian_vec(gsl_rng *rng, double *x, size_t d, double sigma) {
  for (size_t i = 0; i < d; i++) x[i] = gsl_ran_gaussian(rng, sigma);
}

void kvb_rand_sphere(gsl_rng *rng, double *x, size_t d, double rad) {
  double nrm;
  do {
    kvb_rand_gaussian_vec(rng, x, d, 1.0);
    nrm = 0;
    for (size_t i = 0; i < d; i++) nrm += x[i] * x[i];
  } while (nrm == 0);
  nrm = sqrt(nrm);
  for (size_t i = 0; i < d; i++) x[i] *= rad / nrm;
}

void kvb_rand_ball(gsl_rng *rng, double *x, size_t d, double rad) {
  kvb_rand_sphere(rng, x, d, rad * pow(gsl_rng_uniform(rng), 1.0 / (double)d));
}

/* ---- gaussian: every coordinate i.i.d. normal ---- */

#define KVB_STREAM_DIMS(n_def, dk_def, dv_def)                                         \
  {"n", KVB_PARAM_INT, n_def, 1, 1e9, NULL, "stream length"},                          \
      {"d_key", KVB_PARAM_INT, dk_def, 1, 65536, NULL, "key/query dimension"},         \
      {"d_value", KVB_PARAM_INT, dv_def, 1, 65536, NULL, "value dimension"}

static const kvb_param_spec gaussian_params[] = {
    KVB_STREAM_DIMS(1024, 16, 16),
    {"key_sigma", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "std. dev. of key coordinates"},
    {"query_sigma", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "std. dev. of query coordinates"},
    {"value_sigma", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "std. dev. of value coordinates"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static int gen_gaussian(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng,
                        kvb_stream *s) {
  double ks = kvb_params_get(p, sp, "key_sigma"), qs = kvb_params_get(p, sp, "query_sigma"),
         vs = kvb_params_get(p, sp, "value_sigma");
  for (size_t i = 0; i < s->n; i++) {
    kvb_rand_gaussian_vec(rng, s->Q + i * s->d_key, s->d_key, qs);
    kvb_rand_gaussian_vec(rng, s->K + i * s->d_key, s->d_key, ks);
    kvb_rand_gaussian_vec(rng, s->V + i * s->d_value, s->d_value, vs);
  }
  double r = 0;
  for (size_t i = 0; i < s->n; i++) {
    double nq = 0;
    for (size_t j = 0; j < s->d_key; j++) nq += s->Q[i * s->d_key + j] * s->Q[i * s->d_key + j];
    r = fmax(r, sqrt(nq));
  }
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_gaussian = {"gaussian", "i.i.d. Gaussian queries, keys and values",
                                             NULL, gaussian_params, NULL, gen_gaussian};

/* ---- clusterable: (m, delta)-clusterable keys in the sense of 000 Definition 1 ---- */

static const kvb_param_spec clusterable_params[] = {
    KVB_STREAM_DIMS(1024, 16, 16),
    {"m", KVB_PARAM_INT, 8, 1, 1e9, NULL, "number of generating clusters (000 Def. 1)"},
    {"delta", KVB_PARAM_REAL, 1, 1e-12, 1e6, NULL,
     "cluster diameter: keys of a cluster lie in a ball of radius delta/2 (000 Def. 1)"},
    {"key_norm", KVB_PARAM_REAL, 4, 0, 1e6, NULL, "norm of the cluster centers"},
    {"r", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "query norm: every query has ‖q‖ = r (000 Thm. 1)"},
    {"value_spread", KVB_PARAM_REAL, 1, 0, 20, NULL,
     "value norms are exp(value_spread·N(0,1)) times a Gaussian direction"},
    {"cluster_skew", KVB_PARAM_REAL, 0, 0, 10, NULL,
     "cluster j drawn with probability ∝ (j+1)^-cluster_skew (0: uniform)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static int gen_clusterable(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng,
                           kvb_stream *s) {
  size_t m = (size_t)kvb_params_get(p, sp, "m"), dk = s->d_key, dv = s->d_value;
  double delta = kvb_params_get(p, sp, "delta"), kn = kvb_params_get(p, sp, "key_norm"),
         r = kvb_params_get(p, sp, "r"), spread = kvb_params_get(p, sp, "value_spread"),
         skew = kvb_params_get(p, sp, "cluster_skew");
  double *centers = malloc(m * dk * sizeof *centers), *cw = malloc(m * sizeof *cw);
  if (!centers || !cw) {
    free(centers);
    free(cw);
    return KVB_ERROR(KVB_ENOMEM, "clusterable: out of memory for %zu centers", m);
  }
  for (size_t j = 0; j < m; j++) {
    kvb_rand_sphere(rng, centers + j * dk, dk, kn);
    cw[j] = pow((double)(j + 1), -skew);
  }
  gsl_ran_discrete_t *pick = gsl_ran_discrete_preproc(m, cw);
  if (!pick) {
    free(centers);
    free(cw);
    return KVB_ERROR(KVB_ENOMEM, "clusterable: out of memory");
  }
  for (size_t i = 0; i < s->n; i++) {
    size_t j = gsl_ran_discrete(rng, pick);
    double *k = s->K + i * dk;
    /* Radius delta/2 around a center makes every pairwise distance <= delta. The 1-1e-12 keeps
     * rounding from pushing a pair just past delta. */
    kvb_rand_ball(rng, k, dk, 0.5 * delta * (1 - 1e-12));
    for (size_t c = 0; c < dk; c++) k[c] += centers[j * dk + c];
    kvb_rand_sphere(rng, s->Q + i * dk, dk, r);
    double *v = s->V + i * dv;
    kvb_rand_sphere(rng, v, dv, exp(spread * gsl_ran_gaussian(rng, 1.0)));
  }
  gsl_ran_discrete_free(pick);
  free(centers);
  free(cw);
  s->m = (double)m;
  s->delta = delta;
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_clusterable = {
    "clusterable", "(m, delta)-clusterable keys around m random centers (000 Def. 1)", NULL,
    clusterable_params, NULL, gen_clusterable};

int kvb_stream_set_data(kvb_stream *s, size_t n, size_t d_key, size_t d_value, const double *q,
                        const double *k, const double *v, const char *who) {
  double *Q = malloc(n * d_key * sizeof *Q), *K = malloc(n * d_key * sizeof *K),
         *V = malloc(n * d_value * sizeof *V);
  if (!Q || !K || !V) {
    free(Q), free(K), free(V);
    return KVB_ERROR(KVB_ENOMEM, "%s: out of memory for %zu tokens", who, n);
  }
  memcpy(Q, q, n * d_key * sizeof *Q);
  memcpy(K, k, n * d_key * sizeof *K);
  memcpy(V, v, n * d_value * sizeof *V);
  free(s->Q), free(s->K), free(s->V);
  s->Q = Q, s->K = K, s->V = V;
  s->n = n, s->d_key = d_key, s->d_value = d_value;
  double r = 0;
  for (size_t i = 0; i < n; i++) r = fmax(r, sqrt(kvb_dot(Q + i * d_key, Q + i * d_key, d_key)));
  s->r = r;
  return KVB_OK;
}

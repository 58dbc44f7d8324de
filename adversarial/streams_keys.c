/* streams_keys.c — adversarial key/query geometries, each attacking one assumption of
 * 000 Theorem 1 (SubGen). What the suite expects is stated in each `attacks` field and
 * checked in props/adversarial.c. */
#include "streams_common.h"

#include <math.h>
#include <string.h>

/* ---- adv_sphere: keys uniform on a sphere (not clusterable) ---- */

static const kvb_param_spec sphere_params[] = {
    KVB_ADV_DIMS(1024, 16, 8),
    {"key_norm", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "every key has this norm"},
    {"r", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "every query has this norm"},
    KVB_ADV_END};

static const kvb_mutant_spec sphere_mutants[] = {
    {"clustered", "keys at 4 fixed points of the sphere: clusterable, the attack switched off"},
    {NULL, NULL}};

static int gen_sphere(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  double kn = kvb_params_get(p, sp, "key_norm"), r = kvb_params_get(p, sp, "r");
  /* mutant "clustered": keys at 4 fixed points — clusterable, so the attack disappears */
  int clustered = kvb_stream_is_mutant(s, "clustered");
  if (clustered && s->d_key > 64) return KVB_ERROR(KVB_EINVAL, "adv_sphere: mutant needs d_key <= 64");
  double fixed[4][64];
  for (int j = 0; j < 4 && clustered; j++) kvb_rand_sphere(rng, fixed[j], s->d_key, kn);
  for (size_t i = 0; i < s->n; i++) {
    double *k = s->K + i * s->d_key;
    if (clustered) memcpy(k, fixed[gsl_rng_uniform_int(rng, 4)], s->d_key * sizeof *k);
    else kvb_rand_sphere(rng, k, s->d_key, kn);
    kvb_rand_sphere(rng, s->Q + i * s->d_key, s->d_key, r);
    kvb_rand_gaussian_vec(rng, s->V + i * s->d_value, s->d_value, 1.0);
  }
  s->r = r; /* m, delta stay NAN: no clusterability is guaranteed */
  return KVB_OK;
}

const kvb_stream_type kvb_stream_adv_sphere = {
    "adv_sphere", "keys uniform on a sphere: no cluster structure",
    "000 Definition 1 / Theorem 1 memory O(d(mt+s)) with m′ <= m: uniform keys are not "
    "(m, δ)-clusterable for any small m once n grows, so SubGen's m′ grows like n and its "
    "memory goes linear. No guarantee is promised; the suite measures the slope of m′ vs n",
    sphere_params, sphere_mutants, gen_sphere};

/* ---- adv_ties: keys at distance exactly δ from their representative ---- */

static const kvb_param_spec ties_params[] = {
    KVB_ADV_DIMS(256, 8, 4),
    {"delta", KVB_PARAM_REAL, 0.5, 1e-6, 1e6, NULL,
     "distance of every follower from its base key; a power of two keeps it exact"},
    {"bases", KVB_PARAM_INT, 4, 1, 1e6, NULL, "number of base keys (first tokens)"},
    KVB_ADV_END};

static int gen_ties(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  double delta = kvb_params_get(p, sp, "delta");
  size_t bases = (size_t)kvb_params_get(p, sp, "bases"), dk = s->d_key;
  if (dk < 2) return KVB_ERROR(KVB_EINVAL, "adv_ties: needs d_key >= 2");
  if (bases > s->n) return KVB_ERROR(KVB_EINVAL, "adv_ties: bases (%zu) > n (%zu)", bases, s->n);
  for (size_t i = 0; i < s->n; i++) {
    double *k = s->K + i * dk;
    size_t b = i < bases ? i : gsl_rng_uniform_int(rng, bases);
    memset(k, 0, dk * sizeof *k);
    k[0] = 64.0 * (double)b * delta; /* bases 64δ apart: only their own followers are near */
    if (i >= bases) { /* ±δ along one axis j >= 1: distance to the base exactly δ */
      size_t j = 1 + gsl_rng_uniform_int(rng, dk - 1);
      k[j] = gsl_rng_uniform_int(rng, 2) ? delta : -delta;
    }
    kvb_rand_sphere(rng, s->Q + i * dk, dk, 1.0);
    kvb_rand_gaussian_vec(rng, s->V + i * s->d_value, s->d_value, 1.0);
  }
  s->r = 1.0;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_adv_ties = {
    "adv_ties", "followers at distance exactly δ from the first key of their group",
    "000 Alg. 1 line 13 (= 001 line 12; join when ‖k − x_i*‖ <= δ): with <= every follower joins its base, "
    "m′ = bases exactly; the '<' reading (mutant method:subgen:cluster_lt) opens a cluster per follower",
    ties_params, NULL, gen_ties};

/* ---- adv_duplicates: few distinct keys, each repeated ---- */

static const kvb_param_spec dup_params[] = {
    KVB_ADV_DIMS(512, 8, 4),
    {"distinct", KVB_PARAM_INT, 4, 1, 1e6, NULL, "number of distinct keys"},
    {"r", KVB_PARAM_REAL, 2, 0, 1e6, NULL, "query norm"},
    KVB_ADV_END};

static int gen_dup(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  size_t m = (size_t)kvb_params_get(p, sp, "distinct"), dk = s->d_key;
  double r = kvb_params_get(p, sp, "r");
  for (size_t i = 0; i < s->n; i++) {
    double *k = s->K + i * dk;
    if (i < m) kvb_rand_sphere(rng, k, dk, 2.0);
    else memcpy(k, s->K + gsl_rng_uniform_int(rng, m) * dk, dk * sizeof *k);
    kvb_rand_sphere(rng, s->Q + i * dk, dk, r);
    kvb_rand_gaussian_vec(rng, s->V + i * s->d_value, s->d_value, 1.0);
  }
  s->m = (double)(m < s->n ? m : s->n);
  s->delta = 0;
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_adv_duplicates = {
    "adv_duplicates", "a few distinct keys, each repeated many times (exact duplicates)",
    "000 Alg. 1 lines 13-18 and 30 (= 001 lines 12-17, 29) and eq. (5): with δ-clusters of identical keys every sample equals "
    "its representative, so τ = Σ_i (n_i/t)·Σ_{S_i} e^{⟨q,k⟩} must equal the exact softmax "
    "normalizer to rounding; the bound holds with zero error",
    dup_params, NULL, gen_dup};

/* ---- adv_large_q: clusters spread along one axis, queries along that axis with large r ---- */

static const kvb_param_spec largeq_params[] = {
    KVB_ADV_DIMS(512, 8, 4),
    {"m", KVB_PARAM_INT, 2, 1, 1e6, NULL, "clusters"},
    {"delta", KVB_PARAM_REAL, 1, 1e-9, 1e6, NULL, "cluster diameter (000 Def. 1)"},
    {"r", KVB_PARAM_REAL, 4, 0, 1e6, NULL, "query norm"},
    KVB_ADV_END};

static const kvb_mutant_spec largeq_mutants[] = {
    {"orthogonal", "queries orthogonal to the clusters' spread: the e^{δr} factor disappears "
                   "(needs d_key >= 3)"},
    {NULL, NULL}};

static int gen_largeq(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  size_t m = (size_t)kvb_params_get(p, sp, "m"), dk = s->d_key;
  double delta = kvb_params_get(p, sp, "delta"), r = kvb_params_get(p, sp, "r");
  if (dk < 2) return KVB_ERROR(KVB_EINVAL, "adv_large_q: needs d_key >= 2");
  /* mutant "orthogonal": queries orthogonal to the spread — the e^{δr} factor disappears */
  int orth = kvb_stream_is_mutant(s, "orthogonal");
  if (orth && dk < 3) return KVB_ERROR(KVB_EINVAL, "adv_large_q: mutant needs d_key >= 3");
  for (size_t i = 0; i < s->n; i++) {
    double *k = s->K + i * dk, *q = s->Q + i * dk;
    memset(k, 0, dk * sizeof *k);
    memset(q, 0, dk * sizeof *q);
    /* cluster c centered at 4δ·c·e_1 (spread δ along e_0: uniform in [−δ/2, δ/2]) */
    k[1] = 4.0 * delta * (double)gsl_rng_uniform_int(rng, m);
    k[0] = delta * (gsl_rng_uniform(rng) - 0.5);
    q[orth ? dk - 1 : 0] = r; /* ⟨q, k⟩ varies by δr inside a cluster (along e_0) */
    kvb_rand_gaussian_vec(rng, s->V + i * s->d_value, s->d_value, 1.0);
  }
  s->m = (double)m;
  s->delta = delta;
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_adv_large_q = {
    "adv_large_q", "δ-clusters spread along e_0, queries r·e_0 with large r",
    "000 Theorem 1's t = Ω(ε⁻² e^{2δr} log n): scores inside one cluster differ by δr, so the "
    "τ estimate's relative spread grows like e^{δr}/√t at fixed t; the theorem's t exceeds n "
    "(VACUOUS) once e^{2δr} > ε²n/log n. (003's e^{r²/√d} plays the same role for BalanceKV.)",
    largeq_params, largeq_mutants, gen_largeq};

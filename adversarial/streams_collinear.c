/* streams_collinear.c — near-collinear keys, attacking the Self-Balancing Walk's FAIL test
 * (003 Alg. 3 lines 5-6, Theorem A.1) that SoftmaxBalance and MergeAndReduce run on. */
#include "streams_common.h"

#include <math.h>

#include <gsl/gsl_randist.h>

static const kvb_param_spec collinear_params[] = {
    KVB_ADV_DIMS(512, 16, 4),
    {"r", KVB_PARAM_REAL, 1, 1e-12, 1e6, NULL, "every key and query has norm r"},
    {"spread", KVB_PARAM_REAL, 1e-3, 0, 1e6, NULL,
     "keys are r·(u + spread·g)/‖u + spread·g‖, u one fixed unit vector, g ~ N(0, I/d)"},
    KVB_ADV_END};

static int gen_collinear(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng,
                         kvb_stream *s) {
  double r = kvb_params_get(p, sp, "r"), spread = kvb_params_get(p, sp, "spread");
  size_t dk = s->d_key;
  kvb_rand_sphere(rng, s->Q, dk, 1.0); /* u, kept in Q row 0 until the end */
  for (size_t i = 0; i < s->n; i++) {
    double *k = s->K + i * dk, nk = 0;
    for (size_t c = 0; c < dk; c++) {
      k[c] = s->Q[c] + spread * gsl_ran_gaussian(rng, 1.0 / sqrt((double)dk));
      nk += k[c] * k[c];
    }
    nk = sqrt(nk);
    for (size_t c = 0; c < dk; c++) k[c] *= r / nk;
    kvb_rand_gaussian_vec(rng, s->V + i * s->d_value, s->d_value, 1.0);
  }
  for (size_t i = 0; i < s->n; i++) kvb_rand_sphere(rng, s->Q + i * dk, dk, r);
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_adv_collinear = {
    "adv_collinear", "near-collinear keys (all within angle ~spread of one direction)",
    "003 Alg. 3 lines 5-6 (FAIL when |corr| > c·r²) and Theorem A.1 (P[FAIL] <= δ for "
    "c = 30 log(n/δ)): collinear inputs make every correlation as large as possible, so the "
    "walk's drift alone keeps |corr| below c·r²; the guarantee must still hold, and the suite "
    "reports how close max|corr|/(c r²) comes to 1",
    collinear_params, NULL, gen_collinear};

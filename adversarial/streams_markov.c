/* streams_markov.c — near-worst-case streams for the explicit constants of 000 Theorem 1
 * (props/subgen_theorem1_constants.md). One generator, adv_markov: a bulk cluster and one
 * special token, everything on the first axis e₁ (values rank one, so the value matrix's stable
 * rank ρ is 1 and the bound s = 1800ρ/ε² is the one the check uses at d_value = 1).
 *
 *   every query   q = r·e₁
 *   bulk tokens   the first bulk token has key key_bulk·e₁; every other bulk key is uniform in
 *                 the ball of radius spread/2 around it (so the bulk cluster has diameter
 *                 <= spread and every bulk key is within spread/2 of the first one, the
 *                 representative SubGen keeps, 000 Alg. 1 line 20 = 001 line 19); value value_bulk·e₁
 *   special token at position `special` (−1: the last); key key_special·e₁, value
 *                 value_special·e₁
 *
 * Why it is near-worst-case for eq. (6) (001 App. A.3): the proof bounds
 * P[‖z − eᵀV‖ > (ε/3)‖e‖‖V‖_op] by Markov's inequality on ‖z − eᵀV‖². Markov is tight for a
 * two-point law: zero most of the time, large with small probability. A special token with a
 * large score e* = exp(r·key_special) and a small value norm is drawn into a slot of M with the
 * small probability p* = ‖v*‖²/µ (000 Lemma 1), and a single draw then adds e*·µ/(s‖v*‖)
 * along e₁: the error is (nearly) zero unless the token is drawn, and the check places p* just
 * below the point where one draw breaks the bound, so the failure rate is ≈ s·p* ≈ the 0.005
 * budget. The claim in props/subgen_theorem1.c computes the parameters. With spread > 0 the
 * bulk cluster's scores span a factor up to e^{spread·r}, the e^{2δr} step of the same proof
 * (keys of one cluster within 2δ), which the diameter check uses at spread = 2δ. */
#include "streams_common.h"

#include <math.h>
#include <string.h>

static const kvb_param_spec markov_params[] = {
    KVB_ADV_DIMS(4, 1, 1),
    {"r", KVB_PARAM_REAL, 1, 0, 1e6, NULL, "every query is r·e₁"},
    {"key_bulk", KVB_PARAM_REAL, 0, -1e6, 1e6, NULL, "first bulk key: key_bulk·e₁"},
    {"key_special", KVB_PARAM_REAL, 4, -1e6, 1e6, NULL, "special key: key_special·e₁"},
    {"spread", KVB_PARAM_REAL, 0, 0, 1e6, NULL,
     "other bulk keys uniform in the ball of radius spread/2 around the first"},
    {"value_bulk", KVB_PARAM_REAL, 1, -1e300, 1e300, NULL, "bulk value: value_bulk·e₁"},
    {"value_special", KVB_PARAM_REAL, 1, -1e300, 1e300, NULL,
     "special value: value_special·e₁"},
    {"special", KVB_PARAM_INT, -1, -1, 1e9, NULL, "position of the special token (−1: last)"},
    KVB_ADV_END};

static int gen_markov(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  double r = kvb_params_get(p, sp, "r"), kb = kvb_params_get(p, sp, "key_bulk"),
         ks = kvb_params_get(p, sp, "key_special"), spread = kvb_params_get(p, sp, "spread"),
         vb = kvb_params_get(p, sp, "value_bulk"), vs = kvb_params_get(p, sp, "value_special");
  double sp_pos = kvb_params_get(p, sp, "special");
  size_t n = s->n, dk = s->d_key, dv = s->d_value;
  if (n < 2) return KVB_ERROR(KVB_EINVAL, "adv_markov: needs n >= 2 (a bulk and a special token)");
  size_t special = sp_pos < 0 ? n - 1 : (size_t)sp_pos;
  if (special >= n)
    return KVB_ERROR(KVB_EINVAL, "adv_markov: special = %zu must be < n = %zu", special, n);
  /* The special token must lie outside the bulk ball, or the stream is not the two-cluster
   * stream it reports (m = 2). */
  if (!(fabs(ks - kb) > spread))
    return KVB_ERROR(KVB_EINVAL, "adv_markov: |key_special − key_bulk| = %g must exceed spread = %g",
                     fabs(ks - kb), spread);
  size_t first_bulk = special == 0 ? 1 : 0;
  for (size_t i = 0; i < n; i++) {
    double *q = s->Q + i * dk, *k = s->K + i * dk, *v = s->V + i * dv;
    memset(q, 0, dk * sizeof *q);
    memset(k, 0, dk * sizeof *k);
    memset(v, 0, dv * sizeof *v);
    q[0] = r;
    if (i == special) {
      k[0] = ks;
      v[0] = vs;
      continue;
    }
    if (i != first_bulk && spread > 0) kvb_rand_ball(rng, k, dk, spread / 2);
    k[0] += kb;
    v[0] = vb;
  }
  s->m = 2;
  s->delta = spread; /* the bulk cluster's diameter bound; the special token is a singleton */
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_adv_markov = {
    "adv_markov",
    "a bulk cluster and one special token on one axis: the Markov boundary of 000 Thm. 1 eq. (6)",
    "000 Theorem 1 proof eq. (6) (001 App. A.3): the Markov step P[‖z − eᵀV‖ > (ε/3)‖e‖‖V‖_op] "
    "<= 9ρ/(sε²) is tight for one token of large score and small value norm, drawn with "
    "probability p* = ‖v*‖²/µ; placed at the boundary its failure rate approaches the 0.005 "
    "budget, so a constant for s that is 2× too small fails. Also the e^{2δr} step (keys of one "
    "cluster within 2δ) at spread = 2δ",
    markov_params, NULL, gen_markov};

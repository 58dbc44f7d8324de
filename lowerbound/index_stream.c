/* index_stream.c — the INDEX reduction's dataset as a registered stream "index_reduction"
 * (003 App. C): all n pairs (k_i, v_i) in bit order, i.e. Alice's stream for x = 1ⁿ, with
 * query q_i = k_i (Bob's query for bit i) in row i. A sub-stream U for other x is obtained by
 * dropping rows. Scores are meant with scale 1/√d; every ‖q‖ = ‖k‖ = r. Its mutants are the
 * instance's (kvb_index_mutants): shared_key, coord_collide and identity_pi change the rows;
 * threshold_flip and no_sign are carried by the stream (s->mutant) to Bob's rule. */
#include "index_reduction.h"
#include "kvb_error.h"
#include "stream.h"

#include <math.h>

static const kvb_param_spec index_stream_params[] = {
    {"n", KVB_PARAM_INT, 256, 1, 1e8, NULL, "bit positions = stream length; a multiple of d_key"},
    {"d_key", KVB_PARAM_INT, 16, 1, 65536, NULL, "d (003 App. C)"},
    {"d_value", KVB_PARAM_INT, 16, 1, 65536, NULL, "must equal d_key (values are e_{π(i)₂})"},
    {"r", KVB_PARAM_REAL, 4, 1e-12, 1e6, NULL, "key norm r, with r² <= d (003 Thm. 3.2)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static int gen_index(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  if (s->d_value != s->d_key)
    return KVB_ERROR(KVB_EINVAL, "index_reduction: d_value (%zu) must equal d_key (%zu)",
                     s->d_value, s->d_key);
  double r = kvb_params_get(p, sp, "r");
  kvb_index_instance *I = NULL;
  /* the stream's mutant table is the instance's (kvb_index_mutants): same index */
  int st = kvb_index_alloc(s->n, s->d_key, r, s->mutant, rng, &I);
  if (st) return st;
  for (size_t i = 0; i < s->n; i++) {
    kvb_index_pair(I, i, s->K + i * s->d_key, s->V + i * s->d_value);
    for (size_t c = 0; c < s->d_key; c++) s->Q[i * s->d_key + c] = s->K[i * s->d_key + c];
  }
  kvb_index_free(I);
  s->r = r;
  return KVB_OK;
}

const kvb_stream_type kvb_stream_index_reduction = {
    "index_reduction",
    "003 App. C INDEX-reduction dataset: n/d keys in {±r/√d}^d, one-hot signed values; q_i = k_i",
    "003 Theorem 3.2 (space lower bound): no sketch with o(min{1/ε², d e^{2r²/√d}}) memory can "
    "let Bob decode x_i from Attn(k_i) — the suite measures decoding success vs memory",
    index_stream_params, kvb_index_mutants, gen_index};

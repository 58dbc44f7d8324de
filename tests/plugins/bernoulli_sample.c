/* bernoulli_sample.c — a worked example of a plugin that DECLARES properties (method.h, ABI v1):
 * each token is kept independently with probability p, drawn from the method's own generator
 * (kvb_method_uniform, so a seed reproduces it). Its estimates of N = Σ e^{s_j} v_j and
 * D = Σ e^{s_j} divide the kept tokens' sums by p (Horvitz–Thompson), so both are unbiased: it
 * declares UNBIASED_NUM | UNBIASED_DEN and kvb-props --method z-tests them. It also declares an
 * error bound, deliberately a trivial one (‖z − Attn‖ ≤ 2·max‖v‖ with probability 1, true of
 * any convex combination of values, and of z = 0): the battery's z ≡ 0 control meets it too, so
 * the verdict is VACUOUS — what a bound that says nothing earns.
 *
 *   cc -shared -fPIC bernoulli_sample.c $(pkg-config --cflags --libs kvbound) -o bernoulli_sample.so */
#include <kvbound.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double p;
  size_t kept, cap;
  double *k, *v;
} bern;

static const kvb_param_spec bern_params[] = {
    {"p", KVB_PARAM_REAL, 0.25, 1e-6, 1, NULL, "probability of keeping each token"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static int bern_init(kvb_method *m, const kvb_params *p) {
  bern *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "bernoulli_sample: out of memory");
  st->p = kvb_params_get(p, bern_params, "p");
  kvb_method_set_state(m, st);
  return KVB_OK;
}

static int bern_update(kvb_method *m, const double *k, const double *v) {
  bern *st = kvb_method_state(m);
  size_t dk = kvb_method_d_key(m), dv = kvb_method_d_value(m);
  if (st->kept == st->cap) { /* grow first: a failed allocation changes nothing */
    size_t cap = st->cap ? 2 * st->cap : 16;
    double *nk = realloc(st->k, cap * dk * sizeof *nk);
    if (!nk) return KVB_ERROR(KVB_ENOMEM, "bernoulli_sample: out of memory");
    st->k = nk;
    double *nv = realloc(st->v, cap * dv * sizeof *nv);
    if (!nv) return KVB_ERROR(KVB_ENOMEM, "bernoulli_sample: out of memory");
    st->v = nv;
    st->cap = cap;
  }
  if (kvb_method_uniform(m) < st->p) {
    memcpy(st->k + st->kept * dk, k, dk * sizeof *k);
    memcpy(st->v + st->kept * dv, v, dv * sizeof *v);
    st->kept++;
  }
  return KVB_OK;
}

/* N̂ = Σ_kept e^{s} v / p, D̂ = Σ_kept e^{s} / p: unbiased, each token counted with prob. p. */
static int bern_parts(kvb_method *m, const double *q, double *num, double *den) {
  bern *st = kvb_method_state(m);
  size_t dk = kvb_method_d_key(m), dv = kvb_method_d_value(m);
  memset(num, 0, dv * sizeof *num);
  *den = 0;
  for (size_t i = 0; i < st->kept; i++) {
    double s = 0;
    for (size_t j = 0; j < dk; j++) s += q[j] * st->k[i * dk + j];
    double w = exp(kvb_method_scale(m) * s) / st->p;
    *den += w;
    for (size_t j = 0; j < dv; j++) num[j] += w * st->v[i * dv + j];
  }
  return KVB_OK;
}

/* z = N̂/D̂ (softmax over the kept tokens); 0 while nothing is kept. */
static int bern_query(kvb_method *m, const double *q, double *z) {
  bern *st = kvb_method_state(m);
  size_t dv = kvb_method_d_value(m);
  double den;
  bern_parts(m, q, z, &den);
  for (size_t j = 0; j < dv && st->kept; j++) z[j] /= den;
  return KVB_OK;
}

static int bern_bound(const kvb_method *m, const kvb_bound_input *in, double *eps, double *delta) {
  (void)m;
  *eps = 2 * in->max_value_norm;
  *delta = 0;
  return KVB_OK;
}

static void bern_memory(const kvb_method *m, kvb_memory *out) {
  const bern *st = kvb_method_state(m);
  out->vectors = 2 * st->kept;
  out->bytes = st->kept * (kvb_method_d_key(m) + kvb_method_d_value(m)) * sizeof(double);
}

static void bern_free(void *state) {
  bern *st = state;
  if (st) free(st->k), free(st->v), free(st);
}

static const kvb_method_type bernoulli_sample = {
    .name = "bernoulli_sample",
    .summary = "keeps each token with probability p; unbiased N and D estimates (Horvitz-Thompson)",
    .source = "kvbound worked example (tests/plugins/bernoulli_sample.c)",
    .params = bern_params,
    .randomized = 1,
    .init = bern_init,
    .update = bern_update,
    .query = bern_query,
    .memory = bern_memory,
    .free_state = bern_free,
    .declares = KVB_DECLARES_UNBIASED_NUM | KVB_DECLARES_UNBIASED_DEN | KVB_DECLARES_ERROR_BOUND,
    .query_parts = bern_parts,
    .error_bound = bern_bound,
};

static const kvb_method_type *const methods[] = {&bernoulli_sample};
static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION, sizeof(kvb_method_type), 1, methods};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

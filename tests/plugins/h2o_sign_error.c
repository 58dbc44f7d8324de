/* h2o_sign_error.c — a worked example of a KNOWN-WRONG method (src/README.md, "Your own method"): H2O
 * (Zhang et al., arXiv 2306.14048, Alg. 1) re-implemented with one sign error — each query's
 * softmax weights are SUBTRACTED from the accumulated scores instead of added, so the eviction
 * that should drop the least-attended old token drops the most-attended one (the heavy hitter).
 * It declares itself equivalent to kvbound's built-in h2o (as a faster re-implementation would),
 * so kvb-props --method h2o_sign_error replays it against h2o, and it is compared at equal memory
 * with the controls; the battery must FAIL it and say why. Everything else (the contract, memory
 * accounting, determinism) is right, so those checks pass.
 *
 *   cc -shared -fPIC h2o_sign_error.c $(pkg-config --cflags --libs kvbound) -o h2o_sign_error.so */
#include <kvbound.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t budget, recent, n;  /* n: tokens kept, in stream order */
  double *k, *v, *score, *w; /* budget rows each; w: scratch softmax weights */
} h2o_se;

static const kvb_param_spec h2o_se_params[] = {
    {"budget", KVB_PARAM_INT, NAN, 1, 1e9, NULL, "B: tokens kept, heavy hitters plus recent"},
    {"recent", KVB_PARAM_INT, 0, 0, 1e9, NULL, "R: most recent tokens always kept; 0 means ceil(B/2)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static void h2o_se_free(void *state) {
  h2o_se *st = state;
  if (!st) return;
  free(st->k), free(st->v), free(st->score), free(st->w), free(st);
}

static int h2o_se_init(kvb_method *m, const kvb_params *p) {
  size_t B = (size_t)kvb_params_get(p, h2o_se_params, "budget");
  size_t R = (size_t)kvb_params_get(p, h2o_se_params, "recent");
  if (R == 0) R = (B + 1) / 2;
  if (R > B) return KVB_ERROR(KVB_EINVAL, "h2o_sign_error: recent = %zu exceeds budget = %zu", R, B);
  h2o_se *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "h2o_sign_error: out of memory");
  st->budget = B, st->recent = R;
  st->k = malloc(B * kvb_method_d_key(m) * sizeof *st->k);
  st->v = malloc(B * kvb_method_d_value(m) * sizeof *st->v);
  st->score = malloc(B * sizeof *st->score);
  st->w = malloc(B * sizeof *st->w);
  if (!st->k || !st->v || !st->score || !st->w) {
    h2o_se_free(st);
    return KVB_ERROR(KVB_ENOMEM, "h2o_sign_error: out of memory");
  }
  kvb_method_set_state(m, st);
  return KVB_OK;
}

/* Full cache: evict the old (non-recent) token with the smallest score, earliest on ties, then
 * append the new token with score 0 (as the built-in h2o does). */
static int h2o_se_update(kvb_method *m, const double *k, const double *v) {
  h2o_se *st = kvb_method_state(m);
  size_t dk = kvb_method_d_key(m), dv = kvb_method_d_value(m);
  if (st->n == st->budget) {
    size_t hi = st->n - (st->recent - 1), out = 0;
    for (size_t i = 1; i < hi; i++)
      if (st->score[i] < st->score[out]) out = i;
    memmove(st->k + out * dk, st->k + (out + 1) * dk, (st->n - out - 1) * dk * sizeof *st->k);
    memmove(st->v + out * dv, st->v + (out + 1) * dv, (st->n - out - 1) * dv * sizeof *st->v);
    memmove(st->score + out, st->score + out + 1, (st->n - out - 1) * sizeof *st->score);
    st->n--;
  }
  memcpy(st->k + st->n * dk, k, dk * sizeof *k);
  memcpy(st->v + st->n * dv, v, dv * sizeof *v);
  st->score[st->n++] = 0;
  return KVB_OK;
}

static int h2o_se_query(kvb_method *m, const double *q, double *z) {
  h2o_se *st = kvb_method_state(m);
  size_t dk = kvb_method_d_key(m), dv = kvb_method_d_value(m);
  double scale = kvb_method_scale(m), top = -INFINITY, sum = 0;
  for (size_t i = 0; i < st->n; i++) {
    double s = 0;
    for (size_t j = 0; j < dk; j++) s += q[j] * st->k[i * dk + j];
    st->w[i] = scale * s;
    if (st->w[i] > top) top = st->w[i];
  }
  for (size_t i = 0; i < st->n; i++) sum += st->w[i] = exp(st->w[i] - top);
  memset(z, 0, dv * sizeof *z);
  for (size_t i = 0; i < st->n; i++) {
    st->w[i] /= sum;
    for (size_t j = 0; j < dv; j++) z[j] += st->w[i] * st->v[i * dv + j];
    st->score[i] -= st->w[i]; /* THE BUG: H2O accumulates attention, score += w */
  }
  return KVB_OK;
}

/* Honest accounting: kept keys and values plus one score per kept token (as h2o counts). */
static void h2o_se_memory(const kvb_method *m, kvb_memory *out) {
  const h2o_se *st = kvb_method_state(m);
  out->vectors = 2 * st->n;
  out->bytes = st->n * (kvb_method_d_key(m) + kvb_method_d_value(m) + 1) * sizeof(double);
}

static const kvb_method_type h2o_sign_error = {
    .name = "h2o_sign_error",
    .summary = "H2O with a sign error in the accumulated attention (known wrong; a test example)",
    .source = "kvbound worked example (tests/plugins/h2o_sign_error.c) after arXiv 2306.14048 Alg. 1",
    .params = h2o_se_params,
    .init = h2o_se_init,
    .update = h2o_se_update,
    .query = h2o_se_query,
    .memory = h2o_se_memory,
    .free_state = h2o_se_free,
    .equivalent_to = "h2o", /* what it claims to re-implement */
    .equivalence_tol = 1e-12, /* rounding: its sums run in another order than the built-in's */
};

static const kvb_method_type *const methods[] = {&h2o_sign_error};
static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION, sizeof(kvb_method_type), 1, methods};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

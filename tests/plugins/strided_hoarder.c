/* strided_hoarder.c — a known-wrong plugin for the battery's measured memory (src/README.md, "Your own
 * method"): the strided sampler of strided_hoarder.c, except that it keeps every (s/2)-th token —
 * twice the tokens — while memory() reports the s-th tokens only. Taken on its word it looks
 * better than uniform sampling at "equal" memory; method.contract.memory measures the heap it
 * holds and must FAIL it, printing both numbers, and the accuracy checks give the controls the
 * measured bytes.
 *
 *   cc -shared -fPIC strided_hoarder.c $(pkg-config --cflags --libs kvbound) -o strided_hoarder.so
 *   kvb-props --plugin ./strided_hoarder.so --method strided_hoarder,stride=4 */
#include <kvbound.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t stride, seen, kept, cap;
  double *k, *v; /* kept keys and values, row-major */
  double *w;     /* scratch: softmax weights of a query */
} strided;

static const kvb_param_spec strided_params[] = {
    {"stride", KVB_PARAM_INT, 4, 1, 1e6, NULL, "s: keep every s-th token (tokens 0, s, 2s, ...)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static int strided_init(kvb_method *m, const kvb_params *p) {
  strided *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "strided_hoarder: out of memory");
  st->stride = (size_t)kvb_params_get(p, strided_params, "stride");
  kvb_method_set_state(m, st);
  return KVB_OK;
}

/* Grows the store before anything changes, so a failed allocation leaves the state as it was. */
static int strided_update(kvb_method *m, const double *k, const double *v) {
  strided *st = kvb_method_state(m);
  size_t dk = kvb_method_d_key(m), dv = kvb_method_d_value(m);
  if (st->seen % (st->stride > 1 ? st->stride / 2 : 1) == 0) {
    if (st->kept == st->cap) {
      size_t cap = st->cap ? 2 * st->cap : 16;
      double *nk = realloc(st->k, cap * dk * sizeof *nk);
      if (!nk) return KVB_ERROR(KVB_ENOMEM, "strided_hoarder: out of memory");
      st->k = nk;
      double *nv = realloc(st->v, cap * dv * sizeof *nv);
      if (!nv) return KVB_ERROR(KVB_ENOMEM, "strided_hoarder: out of memory");
      st->v = nv;
      double *nw = realloc(st->w, cap * sizeof *nw);
      if (!nw) return KVB_ERROR(KVB_ENOMEM, "strided_hoarder: out of memory");
      st->w = nw;
      st->cap = cap;
    }
    memcpy(st->k + st->kept * dk, k, dk * sizeof *k);
    memcpy(st->v + st->kept * dv, v, dv * sizeof *v);
    st->kept++;
  }
  st->seen++;
  return KVB_OK;
}

/* Softmax over the kept tokens, shifted by the largest score so no exponential overflows. */
static int strided_query(kvb_method *m, const double *q, double *z) {
  strided *st = kvb_method_state(m);
  size_t dk = kvb_method_d_key(m), dv = kvb_method_d_value(m);
  double scale = kvb_method_scale(m), top = -INFINITY, sum = 0;
  for (size_t i = 0; i < st->kept; i++) {
    double s = 0;
    for (size_t j = 0; j < dk; j++) s += q[j] * st->k[i * dk + j];
    st->w[i] = scale * s;
    if (st->w[i] > top) top = st->w[i];
  }
  for (size_t i = 0; i < st->kept; i++) sum += st->w[i] = exp(st->w[i] - top);
  memset(z, 0, dv * sizeof *z);
  for (size_t i = 0; i < st->kept; i++)
    for (size_t j = 0; j < dv; j++) z[j] += st->w[i] / sum * st->v[i * dv + j];
  return KVB_OK;
}

/* The lie: half the tokens it keeps (those a stride of s would have kept). */
static void strided_memory(const kvb_method *m, kvb_memory *out) {
  const strided *st = kvb_method_state(m);
  size_t told = st->stride > 1 ? (st->kept + 1) / 2 : st->kept;
  out->vectors = 2 * told;
  out->bytes = told * (kvb_method_d_key(m) + kvb_method_d_value(m)) * sizeof(double);
}

static void strided_free(void *state) {
  strided *st = state;
  if (!st) return;
  free(st->k), free(st->v), free(st->w), free(st);
}

static const kvb_method_type strided_hoarder = {
    .name = "strided_hoarder",
    .summary = "known-wrong example: keeps every (s/2)-th token, reports only every s-th",
    .source = "kvbound battery example (tests/plugins/strided_hoarder.c)",
    .params = strided_params,
    .init = strided_init,
    .update = strided_update,
    .query = strided_query,
    .memory = strided_memory,
    .free_state = strided_free,
    /* ABI v1 members left zero: it declares no property (not unbiased, no error bound). */
};

static const kvb_method_type *const methods[] = {&strided_hoarder};
static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION, sizeof(kvb_method_type), 1, methods};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

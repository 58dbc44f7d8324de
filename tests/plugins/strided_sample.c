/* strided_sample.c — a worked example of a kvbound plugin (src/README.md, "Your own method"): a
 * deterministic strided sampler. It keeps tokens 0, s, 2s, ... (every s-th key and value) and
 * answers a query with exact softmax attention over what it kept. A simple, correct method:
 * kvb-props --method strided_sample runs the battery on it.
 *
 * Built outside kvbound's tree against the installed headers:
 *   cc -shared -fPIC strided_sample.c $(pkg-config --cflags --libs kvbound) -o strided_sample.so
 * It uses only the public interface: kvb_method_type (method.h), the accessors (kvb_method_state,
 * kvb_method_d_key, ...), kvb_params_get and KVB_ERROR, and exports kvb_plugin_entry
 * (plugin.h). */
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
  if (!st) return KVB_ERROR(KVB_ENOMEM, "strided_sample: out of memory");
  st->stride = (size_t)kvb_params_get(p, strided_params, "stride");
  kvb_method_set_state(m, st);
  return KVB_OK;
}

/* Grows the store before anything changes, so a failed allocation leaves the state as it was. */
static int strided_update(kvb_method *m, const double *k, const double *v) {
  strided *st = kvb_method_state(m);
  size_t dk = kvb_method_d_key(m), dv = kvb_method_d_value(m);
  if (st->seen % st->stride == 0) {
    if (st->kept == st->cap) {
      size_t cap = st->cap ? 2 * st->cap : 16;
      double *nk = realloc(st->k, cap * dk * sizeof *nk);
      if (!nk) return KVB_ERROR(KVB_ENOMEM, "strided_sample: out of memory");
      st->k = nk;
      double *nv = realloc(st->v, cap * dv * sizeof *nv);
      if (!nv) return KVB_ERROR(KVB_ENOMEM, "strided_sample: out of memory");
      st->v = nv;
      double *nw = realloc(st->w, cap * sizeof *nw);
      if (!nw) return KVB_ERROR(KVB_ENOMEM, "strided_sample: out of memory");
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

/* What it must keep: the kept keys and values (float64), nothing else. */
static void strided_memory(const kvb_method *m, kvb_memory *out) {
  const strided *st = kvb_method_state(m);
  out->vectors = 2 * st->kept;
  out->bytes = st->kept * (kvb_method_d_key(m) + kvb_method_d_value(m)) * sizeof(double);
}

static void strided_free(void *state) {
  strided *st = state;
  if (!st) return;
  free(st->k), free(st->v), free(st->w), free(st);
}

static const kvb_method_type strided_sample = {
    .name = "strided_sample",
    .summary = "deterministic strided sampler: keeps every s-th token, exact softmax over them",
    .source = "kvbound worked example (tests/plugins/strided_sample.c)",
    .params = strided_params,
    .init = strided_init,
    .update = strided_update,
    .query = strided_query,
    .memory = strided_memory,
    .free_state = strided_free,
    /* ABI v1 members left zero: it declares no property (not unbiased, no error bound). */
};

static const kvb_method_type *const methods[] = {&strided_sample};
static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION, sizeof(kvb_method_type), 1, methods};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

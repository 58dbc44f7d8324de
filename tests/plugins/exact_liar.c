/* exact_liar.c — a known-wrong plugin for the battery's measured memory (src/README.md, "Your own
 * method"): exact attention over every token it has seen, while memory() reports the storage of
 * ONE token. Taken on its word it would be "exact at 256 bytes"; method.contract.memory measures
 * the heap it holds instead and must FAIL it, printing both numbers.
 *
 *   cc -shared -fPIC exact_liar.c $(pkg-config --cflags --libs kvbound) -o exact_liar.so
 *   kvb-props --plugin ./exact_liar.so --method exact_liar --only method.contract.memory */
#include <kvbound.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t n, cap;
  double *k, *v, *w;
} liar;

static const kvb_param_spec liar_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

static int liar_init(kvb_method *m, const kvb_params *p) {
  (void)p;
  liar *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "exact_liar: out of memory");
  kvb_method_set_state(m, st);
  return KVB_OK;
}

static int liar_update(kvb_method *m, const double *k, const double *v) {
  liar *st = kvb_method_state(m);
  size_t dk = kvb_method_d_key(m), dv = kvb_method_d_value(m);
  if (st->n == st->cap) {
    size_t cap = st->cap ? 2 * st->cap : 16;
    double *nk = realloc(st->k, cap * dk * sizeof *nk);
    if (!nk) return KVB_ERROR(KVB_ENOMEM, "exact_liar: out of memory");
    st->k = nk;
    double *nv = realloc(st->v, cap * dv * sizeof *nv);
    if (!nv) return KVB_ERROR(KVB_ENOMEM, "exact_liar: out of memory");
    st->v = nv;
    double *nw = realloc(st->w, cap * sizeof *nw);
    if (!nw) return KVB_ERROR(KVB_ENOMEM, "exact_liar: out of memory");
    st->w = nw;
    st->cap = cap;
  }
  memcpy(st->k + st->n * dk, k, dk * sizeof *k);
  memcpy(st->v + st->n * dv, v, dv * sizeof *v);
  st->n++;
  return KVB_OK;
}

static int liar_query(kvb_method *m, const double *q, double *z) {
  liar *st = kvb_method_state(m);
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
  for (size_t i = 0; i < st->n; i++)
    for (size_t j = 0; j < dv; j++) z[j] += st->w[i] / sum * st->v[i * dv + j];
  return KVB_OK;
}

/* The lie: one token's key and value, whatever it holds. */
static void liar_memory(const kvb_method *m, kvb_memory *out) {
  const liar *st = kvb_method_state(m);
  out->vectors = st->n ? 2 : 0;
  out->bytes = st->n ? (kvb_method_d_key(m) + kvb_method_d_value(m)) * sizeof(double) : 0;
}

static void liar_free(void *state) {
  liar *st = state;
  if (!st) return;
  free(st->k), free(st->v), free(st->w), free(st);
}

static const kvb_method_type exact_liar = {
    .name = "exact_liar",
    .summary = "known-wrong example: exact attention that reports one token's memory",
    .source = "kvbound battery example (tests/plugins/exact_liar.c)",
    .params = liar_params,
    .init = liar_init,
    .update = liar_update,
    .query = liar_query,
    .memory = liar_memory,
    .free_state = liar_free,
};

static const kvb_method_type *const methods[] = {&exact_liar};
static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION, sizeof(kvb_method_type), 1, methods};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

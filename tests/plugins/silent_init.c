/* silent_init.c — a plugin whose method's init fails without recording a message (returns
 * KVB_EINVAL bare): creating it must give a stated default reason naming the method, the status
 * and this plugin's path, never an empty or stale one (tests/test_plugin.c). */
#include <kvbound.h>

static const kvb_param_spec no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};
static int silent_init(kvb_method *m, const kvb_params *p) { (void)m, (void)p; return KVB_EINVAL; }
static int nop_update(kvb_method *m, const double *k, const double *v) {
  (void)m, (void)k, (void)v;
  return KVB_OK;
}
static int nop_query(kvb_method *m, const double *q, double *z) {
  (void)m, (void)q, (void)z;
  return KVB_OK;
}
static void nop_memory(const kvb_method *m, kvb_memory *out) { (void)m, (void)out; }
static void nop_free(void *state) { (void)state; }

static const kvb_method_type silent = {.name = "silent_init", .summary = "init fails silently",
                                       .source = "test", .params = no_params,
                                       .init = silent_init, .update = nop_update, .query = nop_query,
                                       .memory = nop_memory, .free_state = nop_free};
static const kvb_method_type *const methods[] = {&silent};
static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION, sizeof(kvb_method_type), 1, methods};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

/* null_callback.c — a plugin whose method type has no query callback: loading it must be refused
 * with a message naming the NULL callback, and nothing of it registered (tests/test_plugin.c,
 * scripts/check-plugins). */
#include <kvbound.h>

static const kvb_param_spec no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};
static int nop_init(kvb_method *m, const kvb_params *p) { (void)m, (void)p; return KVB_OK; }
static int nop_update(kvb_method *m, const double *k, const double *v) {
  (void)m, (void)k, (void)v;
  return KVB_OK;
}
static void nop_memory(const kvb_method *m, kvb_memory *out) { (void)m, (void)out; }
static void nop_free(void *state) { (void)state; }

static const kvb_method_type no_query = {.name = "no_query", .summary = "lacks its query",
                                         .source = "test", .params = no_params,
                                         .init = nop_init, .update = nop_update, .query = NULL,
                                         .memory = nop_memory, .free_state = nop_free};
static const kvb_method_type *const methods[] = {&no_query};
static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION, sizeof(kvb_method_type), 1, methods};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

/* old_abi.c — a plugin built for the plugin ABI version before this kvbound's: the rule
 * (plugin.h) accepts exactly KVB_PLUGIN_ABI_VERSION, so loading it must be refused with a message
 * naming the version, as a newer one is (bad_abi.c; tests/test_plugin.c). */
#include <kvbound.h>

static const kvb_param_spec no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};
static int init(kvb_method *m, const kvb_params *p) { (void)m, (void)p; return KVB_OK; }
static int update(kvb_method *m, const double *k, const double *v) {
  (void)m, (void)k, (void)v;
  return KVB_OK;
}
static int query(kvb_method *m, const double *q, double *z) { (void)m, (void)q, (void)z; return KVB_OK; }
static void memory(const kvb_method *m, kvb_memory *out) { (void)m, out->vectors = 0, out->bytes = 0; }
static void free_state(void *s) { (void)s; }

/* otherwise a valid method: only the version is wrong */
static const kvb_method_type old_type = {.name = "old_abi_method", .summary = "old", .source = "test",
                                         .params = no_params, .init = init, .update = update,
                                         .query = query, .memory = memory,
                                         .free_state = free_state};
static const kvb_method_type *const types[] = {&old_type};
static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION - 1, sizeof(kvb_method_type), 1, types};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

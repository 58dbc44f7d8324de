/* bad_abi.c — a plugin that claims a plugin ABI version this kvbound does not speak: loading it
 * must be refused with a message naming the version (tests/test_plugin.c, scripts/check-plugins). */
#include <kvbound.h>

static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION + 98, sizeof(kvb_method_type), 0, NULL};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

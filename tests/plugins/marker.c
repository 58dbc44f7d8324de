/* marker.c — a plugin whose loading is visible: its constructor (run by dlopen, before any
 * check kvbound could make) creates the file named by $KVB_TEST_MARKER. tests/test_shard_trust.c
 * plants it in a shard's metadata and shows that a merge runs nothing a results directory
 * names: after the merge the marker must not exist. It registers nothing (n_methods 0), so a
 * load that did happen is also refused afterwards — too late, which is the point. */
#include <kvbound.h>

#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void leave_marker(void) {
  const char *p = getenv("KVB_TEST_MARKER");
  FILE *f = p && *p ? fopen(p, "w") : NULL;
  if (f) fclose(f);
}

static const kvb_plugin_info info = {KVB_PLUGIN_ABI_VERSION, sizeof(kvb_method_type), 0, NULL};

const kvb_plugin_info *kvb_plugin_entry(void);
const kvb_plugin_info *kvb_plugin_entry(void) { return &info; }

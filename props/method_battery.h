/* method_battery.h — the battery for any registered method (kvb-props --method NAME[,PARAMS];
 * src/README.md, "Your own method"): contract, accuracy at equal memory against the controls, and the
 * properties the method declares (method.h, ABI v1). */
#ifndef KVB_METHOD_BATTERY_H
#define KVB_METHOD_BATTERY_H

#include <stddef.h>

#include "method.h"
#include "prop.h"

/* The battery's checks ("method.*"); run only under --method. */
extern const prop_claim props_method_battery[];

/* Sets the method under test from "NAME[,k=v,...]": the name must be registered and the
 * parameters valid for it (a trial instance is created). Returns 0, or -1 with the reason. */
int method_battery_set_target(const char *spec, char *why, size_t cap);
/* Forgets the method under test (kvb_props_main may run twice in one process). */
void method_battery_reset(void);
/* method.long_context runs only when this was set (kvb-props --long-context): it costs about a
 * minute per task and its default 3 tasks cannot reach alpha = 1e-6. */
void method_battery_set_long_context(int on);
/* The spec given to method_battery_set_target, or NULL. */
const char *method_battery_target(void);
/* The registered type of the method under test, or NULL (no target): what the shard metadata
 * asks for the plugin identity (kvb_plugin_identity_of). */
const kvb_method_type *method_battery_target_type(void);

#endif

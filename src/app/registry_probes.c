/* registry_probes.c — every probe, one line each (registry.h). */
#include "registry.h"

extern const kvb_probe_type kvb_probe_walk;    /* src/balancekv/walk_probe.c */
extern const kvb_probe_type kvb_probe_kcenter; /* src/subgen/kcenter_probe.c */

const kvb_probe_type *const kvb_probe_registry[] = {&kvb_probe_walk, &kvb_probe_kcenter, NULL};

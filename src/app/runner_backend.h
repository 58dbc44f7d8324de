/* runner_backend.h — a method on its spec's backend (runner.c; src/gpu/README.md, GPU kernels):
 * what runner_units.c calls to create each method of a unit. */
#ifndef KVB_CLI_RUNNER_BACKEND_H
#define KVB_CLI_RUNNER_BACKEND_H

#include "runner.h"

/* "cpu" (the default) or a device. */
int runner_method_alloc(const kvb_run_item *it, const kvb_method_config *cfg, const kvb_params *p,
                        kvb_method **m);

#endif

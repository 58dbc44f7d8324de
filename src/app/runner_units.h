/* runner_units.h — executing work units on the worker pool (runner_units.c). */
#ifndef KVB_CLI_RUNNER_UNITS_H
#define KVB_CLI_RUNNER_UNITS_H

#include "runner_rows.h"

/* Runs units first, first + stride, ... (units of them) into res[u]; returns the wall seconds. */
double runner_pool(const kvb_experiment *e, unit_result *res, size_t first, size_t stride,
                   size_t units, int jobs, int progress);
void runner_free_results(unit_result *res, size_t units);

#endif

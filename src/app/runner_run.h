/* runner_run.h — what a run and a shard share before and after their units (runner_run.c): the
 * checks before any trial and the tally of the units' rows. */
#ifndef KVB_CLI_RUNNER_RUN_H
#define KVB_CLI_RUNNER_RUN_H

#include "runner_rows.h"

/* What a run and a shard check before any trial (jobs clamped to >= 1); *units gets the run's
 * units. */
int runner_prepare(const kvb_experiment *e, const char *dir, int *jobs, size_t *units);
/* The run report of units first, first + step, ... below units; the first whole-unit failure
 * as an error status. */
int runner_tally(const kvb_experiment *e, const unit_result *res, size_t first, size_t step,
                 size_t units, kvb_run_report *rep);

#endif

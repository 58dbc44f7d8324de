/* runner_run.c — a run (runner.h, kvb_experiment_run): the checks before any trial, every unit on
 * the worker pool (runner_units.c), the tally of their rows, and the outputs (runner_output.c,
 * runner_stage.c); a spec with tasks{} runs runner_tasks.c instead. Shards (runner_shard.c) share
 * the checks and the tally (runner_run.h). */
#include "runner_run.h"

#include "runner_output.h"
#include "runner_stage.h"
#include "runner_units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What a run and a shard check before any trial: the spec has a stream and a method, its trials
 * are countable, and the output directory exists (created). *jobs < 1 becomes 1. */
int runner_prepare(const kvb_experiment *e, const char *dir, int *jobs, size_t *units) {
  if (*jobs < 1) *jobs = 1;
  if (e->nstreams == 0) return KVB_ERROR(KVB_EINVAL, "the spec declares no stream");
  if (e->nmethods == 0) return KVB_ERROR(KVB_EINVAL, "the spec declares no method or probe");
  if (kvb_experiment_units(e, NULL, units) != 0 || *units > KVB_RUN_MAX_UNITS)
    return KVB_ERROR(KVB_EINVAL, "the sweep points x trials exceed %.0e trials", (double)KVB_RUN_MAX_UNITS);
  return runner_mkdir_p(dir);
}

/* The run report of the units u = first, first + step, ... below units (the whole run: 0, 1;
 * shard I of N: I, N): rows, failed rows and the first failed row's message, in unit order.
 * Returns an error naming the first unit that failed as a whole (a stream, a probe, memory),
 * which stops a run or shard before anything is written; else KVB_OK. */
int runner_tally(const kvb_experiment *e, const unit_result *res, size_t first, size_t step,
                 size_t units, kvb_run_report *rep) {
  int st = KVB_OK;
  memset(rep, 0, sizeof *rep);
  for (size_t u = first; u < units; u += step) {
    const unit_result *r = &res[u];
    rep->rows += r->nrows;
    for (size_t i = 0; i < r->nrows; i++) {
      const row *w = &r->rows[i];
      if (!w->status) continue;
      rep->failed_rows++;
      if (!rep->first_error[0])
        snprintf(rep->first_error, sizeof rep->first_error, "%s",
                 w->msg ? w->msg : kvb_status_name(w->status));
    }
    if (r->status && !st)
      st = KVB_ERROR(r->status, "trial %zu (sweep point %zu, trial %zu): %s", u, u / e->trials,
                     u % e->trials, r->msg);
  }
  return st;
}

int kvb_experiment_run(const kvb_experiment *e, const char *dir, int jobs, int progress,
                       kvb_run_report *rep) {
  if (!e || !dir || !rep) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  memset(rep, 0, sizeof *rep);
  if (e->tasks.on) return kvb_experiment_run_tasks(e, dir, progress, rep); /* runner_tasks.c */
  size_t units = 0;
  int st = runner_prepare(e, dir, &jobs, &units);
  if (st) return st;
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return KVB_ERROR(KVB_EINVAL, "%s is not a directory", dir);
  unit_result *res = calloc(units ? units : 1, sizeof *res);
  if (!res) return KVB_ERROR(KVB_ENOMEM, "run: out of memory for %zu trials", units);
  double wall = runner_pool(e, res, 0, 1, units, jobs, progress);
  kvb_run_report r;
  st = runner_tally(e, res, 0, 1, units, &r); /* a whole trial failed: nothing is written */
  if (!st) st = runner_write_outputs(e, dir, res, units, jobs, r.rows, r.failed_rows, wall, NULL);
  if (!st) *rep = r;
  runner_free_results(res, units);
  return st;
}

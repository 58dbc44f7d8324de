/* runner_internal.h — what the runner's files share, and nothing else includes: a unit's rows,
 * and the few functions one runner file calls in another (runner.h is the public side).
 *   runner.c         the public entry points: the experiment, columns, backends, kvb_experiment_run
 *   runner_units.c   executing a unit (streams, methods, probes, decode rows) on the worker pool
 *   runner_output.c  writing every output format (results.csv, summary, quantiles, plots, meta)
 *   runner_stage.c   the output directory: preparing and locking it, staging and committing files
 *   runner_shard.c   shards (rows.tsv and its digest, shard.json, FAILED) and their merge */
#ifndef KVB_CLI_RUNNER_INTERNAL_H
#define KVB_CLI_RUNNER_INTERNAL_H

#include <stdio.h>

#include "runner.h"

/* The measure columns (runner.c's column table, in order). */
enum {
  C_REL, C_ABS, C_ATTN, C_SM, C_VOP, C_VF, C_ROP, C_RF, C_MB, C_MV, C_MB16,
  C_DIST, C_EXPS, C_COINS, C_DOTS, C_FAILS, C_TU, C_TQ,
  C_DISC, C_DISCI, C_DISCB, C_WFAIL, C_RAD, C_RADR, C_DEC, C_USZ
};

/* One row of results.csv, and one work unit's rows (runner.h: unit u = point·trials + trial). */
typedef struct {
  size_t stream, method, j;
  int status;
  char *msg;                   /* owned; why the row failed ("spec:line: ..."), NULL when OK */
  double v[KVB_RUN_NCOLS];
} row;

typedef struct {
  row *rows;
  size_t nrows;
  int status;
  char msg[1400];
} unit_result;

/* ---- runner.c ---- */
/* A method on its spec's backend: "cpu" (the default) or a device. */
int runner_method_alloc(const kvb_run_item *it, const kvb_method_config *cfg, const kvb_params *p,
                        kvb_method **m);
/* What a run and a shard check before any trial (jobs clamped to >= 1); *units gets the run's
 * units. */
int runner_prepare(const kvb_experiment *e, const char *dir, int *jobs, size_t *units);
/* The run report of units first, first + step, ... below units; the first whole-unit failure
 * as an error status. */
int runner_tally(const kvb_experiment *e, const unit_result *res, size_t first, size_t step,
                 size_t units, kvb_run_report *rep);

/* ---- runner_units.c ---- */
/* Runs units first, first + stride, ... (units of them) into res[u]; returns the wall seconds. */
double runner_pool(const kvb_experiment *e, unit_result *res, size_t first, size_t stride,
                   size_t units, int jobs, int progress);
void runner_free_results(unit_result *res, size_t units);

/* ---- runner_stage.c ---- */
/* Outputs are written to hidden temporary files DIR/.NAME.tmp.XXXXXX (out_file.h: created
 * exclusively, so a planted link is never followed) and renamed over DIR/NAME
 * only once every output is complete (rename is atomic within a directory), meta.json last:
 * an interrupted run leaves either the previous complete set or temporary files, never a
 * truncated results.csv that looks whole. */
#define KVB_RUN_OUTPUTS 6
typedef struct {
  char tmp[KVB_RUN_OUTPUTS][1200], final[KVB_RUN_OUTPUTS][1200];
  size_t n;
} runner_staged;
FILE *runner_stage_open(runner_staged *sg, const char *dir, const char *name);
int runner_stage_close(FILE *f, const char *what);
void runner_stage_discard(runner_staged *sg);
int runner_stage_commit(runner_staged *sg, const char *dir);
int runner_mkdir_p(const char *dir);
int runner_dir_fits(const char *what, const char *dir);
int runner_meta_field(const char *json, const char *key, char *buf, size_t cap);
char *runner_slurp_small(const char *path, size_t max);

/* ---- runner_output.c ---- */
/* meta.json's and shard.json's identity fields (version, spec name, path, real path, hash). */
void runner_json_spec(FILE *f, const kvb_experiment *e, const char *real_given);
uint64_t runner_text_hash(const char *s);
void runner_app(char *b, size_t cap, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int runner_write_csv(const kvb_experiment *e, FILE *f, const unit_result *res, size_t units);
int runner_write_outputs(const kvb_experiment *e, const char *dir, const unit_result *res,
                         size_t units, int jobs, size_t rows, size_t failed, double wall,
                         const char *real);

#endif

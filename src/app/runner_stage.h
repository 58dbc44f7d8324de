/* runner_stage.h — the output directory (runner_stage.c): preparing and locking it, and staging
 * output files that are committed together. */
#ifndef KVB_CLI_RUNNER_STAGE_H
#define KVB_CLI_RUNNER_STAGE_H

#include <stddef.h>
#include <stdio.h>

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

#endif

/* runner_rows.h — a unit's rows (types only): the measure columns' indices and one row of
 * results.csv per (stream, method, query point), kept per work unit (runner.h: unit u =
 * point·trials + trial). runner_units.c fills them; runner_output.c, runner_shard.c and
 * runner_run.c read them. */
#ifndef KVB_CLI_RUNNER_ROWS_H
#define KVB_CLI_RUNNER_ROWS_H

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

#endif

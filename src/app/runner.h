/* runner.h — the experiment runner behind `kvbound run`.
 *
 * An experiment (built from a Lua spec by lua_spec.c) is: streams × methods, each with named
 * parameters; sweeps (a parameter over a list of values, applied to every declared stream and
 * method that has that parameter; several sweeps form a Cartesian product); trials per sweep
 * point; query points (token positions j at which q_j is asked against the first j tokens).
 *
 * Determinism: work unit u = point·trials + trial draws everything (the streams, then every
 * method's coins) from PCG32 substream (seed, u) (kvb_rng_alloc_substream). Units run on
 * `jobs` threads, but rows are written in unit order, so results.csv is byte-identical for any
 * --jobs (except the opt-in time columns).
 *
 * Measures per (unit, stream, method, query point j), against exact attention on the prefix
 * (src/measures/measures.h, the one definition the props and plots use too):
 *   rel_error  = ‖z − Attn‖₂ / ‖Attn‖₂                  err_abs = ‖z − Attn‖₂
 *   ratio_op   = ‖z − Attn‖₂ / (‖softmax‖₂ ‖V_j‖_op)    (000 eq. (3) is ratio_op <= ε)
 *   ratio_f    = ‖z − Attn‖₂ / (‖softmax‖₂ ‖V_j‖_F)     (003 eq. (2) is ratio_f <= ε)
 *   mem_bytes, mem_vectors (kvb_method_memory), the work counters, and (opt-in) time.
 *
 * Quantiles (q10 q25 median q75 q90 q99 max of every measured column, NaN left out) are
 * computed once per (sweep point, stream, method), pooled over trials and query points and per
 * query point j, and written to quantiles.csv; the summary shows the pooled ones and
 * `kvbound plot` draws them from that file. A summary line's headline column ("measure") is the
 * spec's own: the y of its first plot{} that the item measures, else its failure{} column,
 * else a probe's first column, decode_acc under the decode measure, or rel_error.
 *
 * Probes (probe.h: walk discrepancy, k-center radius) are declared like methods and measured
 * at the same query points; their rows carry the probe group's columns (NaN elsewhere).
 *
 * The decode measure (003 Theorem 3.2, App. C) replaces the query-point rows on an
 * "index_reduction" stream by one row per (trial, method): Alice's bits x ~ Unif{0,1}ⁿ are
 * drawn once per stream and trial (after the streams, before any method's coins), the method
 * is fed U = {(k_i, v_i) : x_i = 1} in bit order, and Bob decodes every bit i from the answer
 * to q_i: x_i = 1 iff ⟨z, v_i⟩ > T(d, r, |U|) — kvb_index_alice / kvb_index_bob on the
 * stream's instance (kvb_measure_index_view, kvb_measure_decode). decode_acc is the
 * fraction of the n bits decoded correctly, u_size = |U|. Scores must be <k,q>/√d.
 *
 * The runner's files, lowest first; each calls only files above it in this list, through their
 * one-purpose headers (the import graph is a DAG: scripts/check-layers fails on a cycle):
 *   runner.c         the experiment, its sweep points, the measure columns, method backends
 *                    (runner_backend.h: a method on its spec's backend)
 *   runner_stage.c   the output directory: preparing and locking it, staging and committing files
 *                    (runner_stage.h)
 *   runner_units.c   executing a unit (streams, methods, probes, decode rows) on the worker pool
 *                    (runner_units.h; a unit's rows: runner_rows.h, types only)
 *   runner_output.c  writing every output format (results.csv, summary, quantiles, plots, meta)
 *                    (runner_output.h)
 *   runner_tasks.c   the model/task stage of a spec with tasks{} (kvb_experiment_run_tasks)
 *   runner_run.c     kvb_experiment_run: the checks before any trial, the units, their tally, the
 *                    outputs (runner_run.h: the checks and the tally, which shards share)
 *   runner_shard.c   shards (rows.tsv and its digest, shard.json, FAILED) and their merge */
#ifndef KVB_CLI_RUNNER_H
#define KVB_CLI_RUNNER_H

#include <stddef.h>
#include <stdint.h>

#include "kvbound.h"

#define KVB_RUN_MAX_STREAMS 8
#define KVB_RUN_MAX_METHODS 16
#define KVB_RUN_MAX_SWEEPS 4
/* The longest output or shard directory path a run, merge or plot accepts (bytes): longer is
 * an error naming the limit, never a path silently cut (every file name is built from it). */
#define KVB_RUN_DIR_MAX 800
#define KVB_RUN_MAX_PLOTS 8
#define KVB_RUN_MAX_QUERIES 256
#define KVB_LABEL_MAX 48

enum {
  KVB_MEASURE_ERROR = 1,  /* rel_error, err_abs, attn_norm */
  KVB_MEASURE_BOUND = 2,  /* softmax_norm, v_op, v_f, ratio_op, ratio_f */
  KVB_MEASURE_MEMORY = 4, /* mem_bytes, mem_vectors */
  KVB_MEASURE_WORK = 8,   /* distances, exps, coins, dots, fails */
  KVB_MEASURE_TIME = 16,  /* update_s, query_s (wall clock: not reproducible) */
  KVB_MEASURE_PROBE = 32, /* disc, disc_inf, disc_bound, walk_fails, radius, radius_rel */
  KVB_MEASURE_DECODE = 64,/* decode_acc, u_size (index_reduction streams only) */
  KVB_MEASURE_DEFAULT = 15
};

typedef struct {
  char type[64];               /* registry name */
  char label[KVB_LABEL_MAX];   /* column value in the CSV; defaults to the type name */
  kvb_params params;
  int line;                    /* spec line, for messages */
  int probe;                   /* 1: a probe (probe.h) declared with probe "TYPE" {...} */
  char backend[16];            /* a method's backend = "cpu" (also when empty), "opencl", "cuda" */
} kvb_run_item;

typedef struct {
  char param[KVB_PARAM_NAME_MAX];
  size_t nvals;
  double *vals;
  int line;                    /* spec line, for messages */
  int zip_with;                /* -1: its own axis of the product; else the index of the
                                  sweep it moves in step with (same length): sweep { a = {..},
                                  b = {..} } gives each method its own budget parameter */
} kvb_run_sweep;

typedef struct {
  char name[KVB_LABEL_MAX];
  char x[KVB_PARAM_NAME_MAX];  /* a sweep parameter, "j" (token position), or a measure
                                  column (then each sweep point is one x: its median) */
  char y[32];                  /* a results.csv column */
  char bound[256];             /* gnuplot expression in x drawn as the bound curve ("" none) */
  char bound_title[128];
  char bound2[256];            /* a second curve (e.g. the rate with constant 1) */
  char bound2_title[128];
  char title[160];
  char xlabel[96], ylabel[96];
  int logx, logy, bands;
  int line;
} kvb_run_plot;

/* The model/task stage (spec directive tasks{}; runner_tasks.c): instead of streams, generated
 * long-context tasks (src/model/tasks.h) answered inside a real model (tasks{}'s model:
 * SmolLM2-135M or Gemma 3 270M, lm.h) by every declared method
 * (src/model/task_run.h), question-agnostic or question-aware. Bounded by the limits below. */
#define KVB_RUN_MAX_TASK_LENGTHS 8
#define KVB_RUN_MAX_TASK_DEPTHS 11
#define KVB_RUN_MAX_TASKS 10000   /* tasks in all (lengths x depths x per_cell) */
typedef struct {
  int on, line;
  int family;                  /* kvb_task_family */
  size_t lengths[KVB_RUN_MAX_TASK_LENGTHS], nlengths;
  double depths[KVB_RUN_MAX_TASK_DEPTHS];
  size_t ndepths;              /* 0: "spread" — task k of a length's per_cell at (k + ½)/per_cell */
  size_t per_cell;             /* tasks per (length, depth), or per length when spread */
  int aware;                   /* 1: question-aware; 0: question-agnostic */
  uint64_t task_seed;          /* task i's seed is task_seed + i */
  int model;                   /* kvb_lm_kind (lm.h): 0 SmolLM2-135M (the default), 1 Gemma 3 270M */
} kvb_run_tasks;

typedef struct {
  char spec_path[512];
  char *spec_text;             /* owned */
  char name[KVB_LABEL_MAX];
  kvb_run_item streams[KVB_RUN_MAX_STREAMS];
  size_t nstreams;
  kvb_run_item methods[KVB_RUN_MAX_METHODS]; /* methods and probes, in declaration order */
  size_t nmethods;
  kvb_run_sweep sweeps[KVB_RUN_MAX_SWEEPS];
  size_t nsweeps;
  size_t trials;
  uint64_t seed;
  double scale;                /* > 0: fixed; 0: 1/sqrt(d_key) (003/004 convention) */
  size_t q_every;              /* 0: the last token only */
  size_t q_at[KVB_RUN_MAX_QUERIES];
  size_t nq_at;
  int queries_line;            /* the line of queries{} (0: none), for the tasks{} check */
  unsigned measures;
  char fail_col[32];           /* failure := fail_col > fail_above (for the CP rates) */
  double fail_above;
  kvb_run_plot plots[KVB_RUN_MAX_PLOTS];
  size_t nplots;
  kvb_run_tasks tasks;         /* the model/task stage (tasks.on: no streams) */
  int threads;                 /* threads a method may use inside one trial (`kvbound run
                                  --threads`): given to every method whose parameter table has
                                  a "threads" parameter the spec does not set; <= 0:
                                  kvb_threads_default(). Not part of the results: such methods
                                  return identical numbers for any value. */
} kvb_experiment;

/* The numeric measure columns of results.csv, in order; which group each belongs to. */
#define KVB_RUN_NCOLS 26
const char *kvb_run_column_name(size_t i);
unsigned kvb_run_column_group(size_t i);
/* Index of a measure column, or -1. */
int kvb_run_column_find(const char *name);
/* The column mem_bytes_fp16 from a method's bytes and vectors: bytes/4 for a method holding its
 * vectors in float64 (bytes >= 8·min(d_key, d_value)·vectors), bytes as stored otherwise. */
double kvb_run_bytes_fp16(double bytes, double vectors, size_t d_key, size_t d_value);

void kvb_experiment_init(kvb_experiment *e);
void kvb_experiment_free(kvb_experiment *e);

/* At most this many trials (sweep points x trials) per run. */
#define KVB_RUN_MAX_UNITS 100000000u

/* Number of sweep points (product of the lengths of the sweeps that are not zipped to
 * another; 1 without sweeps); SIZE_MAX when the product overflows. */
size_t kvb_experiment_points(const kvb_experiment *e);
/* Sweep points and points x trials, overflow-checked: returns -1 (outputs unspecified) when a
 * product does not fit in size_t, else 0. */
int kvb_experiment_units(const kvb_experiment *e, size_t *points, size_t *units);
/* The parameter table of an item (stream, method or probe). */
const kvb_param_spec *kvb_experiment_item_spec(const kvb_experiment *e, const kvb_run_item *it);
/* Parameters of stream/method item at sweep point p (item's params with the sweep values). */
void kvb_experiment_item_params(const kvb_experiment *e, const kvb_run_item *it, size_t point,
                                kvb_params *out);
/* Value of sweep s at point p. */
double kvb_experiment_sweep_value(const kvb_experiment *e, size_t s, size_t point);

/* Checks the output directory before any trial runs: creates it, refuses a path that is a file
 * or not writable, and refuses a directory holding another spec's results (its meta.json names
 * another spec name or spec file) unless force. Returns a KVB status (kvb_strerror_last). */
int kvb_experiment_prepare_out(const kvb_experiment *e, const char *dir, int force);

typedef struct {
  size_t rows;             /* rows written to results.csv */
  size_t failed_rows;      /* rows whose method update/query (or the reference) failed */
  char first_error[1024];  /* the first failed row's message ("spec:line: method 'x' ...") */
} kvb_run_report;

/* Runs e on `jobs` threads and writes DIR/results.csv, summary.{txt,md}, quantiles.csv,
 * plots.tsv and meta.json (each to a temporary file, renamed into place when all are complete, meta.json
 * last; the previous run's plot files are removed). Prints the summary to stdout. progress:
 * draw a progress bar on stderr. A failing method update or query does not stop the run: the
 * row gets its status and message (the CSV's error column, the summary) and is counted in
 * rep->failed_rows. Returns a KVB status (message via kvb_strerror_last) when the run itself
 * failed (a stream or probe could not run, an output could not be written): nothing is then
 * written. */
int kvb_experiment_run(const kvb_experiment *e, const char *dir, int jobs, int progress,
                       kvb_run_report *rep);
/* The model/task stage (e->tasks.on; kvb_experiment_run calls it): for every task (length,
 * depth, seed) the exact attention pass and one pass per method (kvb_task_pass_run), one row
 * each in DIR/results.csv (family, length, depth, task_seed, mode, method, right, score, loglik,
 * delta, bytes, vectors, answer), the summary (exact-match accuracy, mean delta log-lik and bytes
 * per method and length) in summary.{txt,md}, an empty plots.tsv and meta.json last, staged as a
 * run's outputs. The model is the default path's (model.h); its absence is an error. A method's
 * failure on a task fails the run (nothing is written). */
int kvb_experiment_run_tasks(const kvb_experiment *e, const char *dir, int progress,
                             kvb_run_report *rep);

/* ---- shards (README "Beyond one machine") ----
 * A run splits into N shards without changing a number: the units u = point·trials + trial are
 * enumerated in the runner's order and unit u belongs to shard u mod N (round robin, so the
 * sweep points' different costs spread over the shards; shard I of N holds
 * kvb_shard_units(units, I, N) units, none when I >= units). Each unit still draws from PCG32
 * substream (seed, u), so a shard's rows are the single run's rows of its units. */
size_t kvb_shard_units(size_t units, size_t shard, size_t nshards);

/* As kvb_experiment_prepare_out, and refuses a directory holding another run's shard or
 * another shard (its shard.json) unless force. */
int kvb_experiment_prepare_shard_out(const kvb_experiment *e, const char *dir, size_t shard,
                                     size_t nshards, int force);

/* Runs the units of shard `shard` of `nshards` (0 <= shard < nshards) and writes DIR/rows.tsv
 * (every row exactly: measures as hexadecimal floats, messages escaped), DIR/results.csv (the
 * shard's rows, as the single run writes them) and DIR/shard.json last (version, spec name,
 * path, real path and hash, seed, shard, nshards, units_total, units, rows, failed_rows, jobs,
 * wall_seconds), staged like a run's outputs. Removes a previous DIR/shard.json and DIR/FAILED
 * first; when the shard fails (a whole trial, or an output) it writes DIR/FAILED ("shard I/N
 * failed: why"), which the merge reports. Row failures are as in kvb_experiment_run. */
int kvb_experiment_run_shard(const kvb_experiment *e, const char *dir, size_t shard,
                             size_t nshards, int jobs, int progress, kvb_run_report *rep);

/* Merges shard directories into OUT: checks they are the shards of one run (same kvbound
 * version, spec name, path and hash, seed and N), that none is given twice and none is missing
 * (the error names every missing I/N, and a directory's FAILED marker), loads the spec the
 * shards ran (its hash must still match) and writes OUT's results.csv, quantiles.csv,
 * summary.{txt,md}, plots.tsv and meta.json exactly as kvb_experiment_run would, byte for byte,
 * except meta.json's execution fields: "jobs" (the largest of the shards'), "wall_seconds"
 * (the sum of the shards'), "finished_utc" (the merge's) and "machine" (the merging machine).
 * A spec measuring time (KVB_MEASURE_TIME) is refused unless allow_time: its wall-clock
 * columns make no two runs byte-identical. */
int kvb_experiment_merge(const char *const *dirs, size_t ndirs, const char *out, int force,
                         int allow_time, kvb_run_report *rep);

/* Whether method `type` can run on `backend` in this build (src/gpu/README.md, GPU kernels): KVB_OK, or an
 * error with a message (unknown backend, a build without OpenCL, no device implementation). */
int kvb_run_backend_check(const char *type, const char *backend);
/* `kvbound devices`: the OpenCL and CUDA platforms and devices; 0, or 1 with a message on stderr
 * naming the package to install when there is no device. */
int kvb_run_devices(void);

#endif

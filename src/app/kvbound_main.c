/* kvbound_main.c — the kvbound command: `list` (methods, streams, measures), `run` (a Lua
 * experiment spec, runner*.c + lua_spec.c; --shard I/N for one shard), `merge` (shards into the
 * outputs of one run, runner_shard.c), `plot` (gnuplot, plot.c), `dump-kv` (the real model's caches as
 * .npy, dump_kv_cli.c), `decode` (decode_cli.c). Exit status: 0 success,
 * 1 a run or plot failed (including a run whose rows failed: its outputs are written), 2 usage
 * or spec error (nothing ran). */
#include "kvbound.h"

#include <math.h>
#include <errno.h>
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump_kv_cli.h"
#include "lua_spec.h"
#include "probe.h"
#include "plot.h"
#include "runner.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: kvbound COMMAND [options]\n"
          "  list        the available methods, streams, probes and measures, with parameters and defaults\n"
          "  run SPEC.lua [--jobs N] [--threads N] [--out DIR] [--seed S] [--force] [--shard I/N]   run a Lua experiment spec\n"
          "  merge SHARD_DIR... --out DIR   merge the shards of a run (byte-identical to one run)\n"
          "  plot DIR    PNG and SVG plots of a run's results through gnuplot\n"
          "  devices     the OpenCL and CUDA devices a spec's backend = \"opencl\" | \"cuda\" can use\n"
          "  dump-kv --text FILE [--tokens N] --out DIR   the real model's per-layer Q, K, V as .npy\n"
          "  decode --method NAME ...   compressed decoding inside the real model (perplexity, KL, pass key)\n"
          "  version     print the version\n"
          "  --plugin PATH  (any command, repeatable) load a method plugin first; so does\n"
          "              $KVBOUND_PLUGINS=path1:path2 (README, \"Your own method\")\n"
          "  --help      this text (COMMAND --help for a command's own)\n");
}

/* One line per parameter: kind, whether it is required or its default, its range, its help.
 * A numeric default outside [min, max], or a help text saying what absence means ("absent =
 * ...", "(default: every token)"), marks a parameter computed when absent: the table's number
 * is then a placeholder and is shown as "optional", never as a value the range forbids. */
static void print_params(const kvb_param_spec *p) {
  for (; p && p->name; p++) {
    if (p->kind == KVB_PARAM_STRING) {
      if (p->sdef && p->sdef[0])
        printf("      %-14s string  default '%s'  %s\n", p->name, p->sdef, p->help);
      else
        printf("      %-14s string  optional  %s\n", p->name, p->help);
      continue;
    }
    char range[96], what[64];
    if (p->kind == KVB_PARAM_INT)
      snprintf(range, sizeof range, "integer in [%.15g, %.15g]", p->min, p->max);
    else
      snprintf(range, sizeof range, "in [%.15g, %.15g]", p->min, p->max);
    if (isnan(p->def))
      snprintf(what, sizeof what, "required");
    else if (p->def < p->min || p->def > p->max || strstr(p->help, "default:") ||
             strstr(p->help, "absent"))
      snprintf(what, sizeof what, "optional (when absent: see help)");
    else
      snprintf(what, sizeof what, "default %.15g", p->def);
    printf("      %-14s %-7s %s, %s  %s\n", p->name, p->kind == KVB_PARAM_INT ? "int" : "real",
           what, range, p->help);
  }
}

/* A type's mutants (mutant.h), one per line with its help; nothing for a type without any. */
static void print_mutants(const kvb_mutant_spec *t) {
  if (!t || !t->name) return;
  printf("      mutants (test-only deliberate faults, mutant = \"NAME\"; kvb-props --mutant "
         "KIND:TYPE:NAME):\n");
  for (; t->name; t++) printf("        %-20s %s\n", t->name, t->help);
}

static int cmd_list(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("usage: kvbound list\n  prints every registered method, stream generator and probe with "
           "its parameters, defaults, ranges and source, and the measures `kvbound run` records\n");
    return 0;
  }
  printf("methods:\n");
  for (size_t i = 0; kvb_method_type_at(i); i++) {
    const kvb_method_type *t = kvb_method_type_at(i);
    printf("  %-20s %s\n      source: %s\n", t->name, t->summary, t->source);
    if (kvb_method_origin(t)) printf("      plugin: %s\n", kvb_method_origin(t));
    print_params(t->params);
    print_mutants(t->mutants);
  }
  printf("streams:\n");
  for (size_t i = 0; kvb_stream_type_at(i); i++) {
    const kvb_stream_type *t = kvb_stream_type_at(i);
    printf("  %-20s %s\n", t->name, t->summary);
    if (t->attacks) printf("      attacks: %s\n", t->attacks);
    print_params(t->params);
    print_mutants(t->mutants);
  }
  printf("probes (declared with probe \"TYPE\" {...}; measured at the query points):\n");
  for (size_t i = 0; kvb_probe_type_at(i); i++) {
    const kvb_probe_type *t = kvb_probe_type_at(i);
    printf("  %-20s %s\n      source: %s\n      columns:", t->name, t->summary, t->source);
    for (size_t c = 0; t->columns[c]; c++) printf(" %s", t->columns[c]);
    printf("\n      ");
    for (const char *c = t->column_doc; *c; c++) {
      putchar(*c);
      if (*c == '\n') printf("      ");
    }
    printf("\n");
    print_params(t->params);
    print_mutants(t->mutants);
  }
  static const char *const groups[] = {"error", "bound", "memory", "work", "time", "probe", "decode"};
  static const char *const notes[] = {
      "", "", "", "", "  (opt-in: wall clock, not reproducible)", "  (rows of probes)",
      "  (opt-in: 003 App. C decoding, index_reduction streams)"};
  printf("measures (results.csv columns, by measures{} group):\n");
  for (unsigned g = 0; g < 7; g++) {
    printf("  %-8s", groups[g]);
    for (size_t c = 0; c < KVB_RUN_NCOLS; c++)
      if (kvb_run_column_group(c) == (1u << g)) printf(" %s", kvb_run_column_name(c));
    printf("%s\n", notes[g]);
  }
  printf("  rel_error = |z - Attn|/|Attn|; ratio_op = |z - Attn|/(|softmax|_2 |V|_op) (000 eq. (3));\n"
         "  ratio_f = |z - Attn|/(|softmax|_2 |V|_F); all on the first j tokens, query q_j;\n"
         "  decode_acc = fraction of the n INDEX bits Bob decodes from the method's answers\n"
         "  (003 Thm. 3.2), u_size = |U|, the tokens Alice streamed\n");
  return 0;
}

static void run_usage(FILE *f) {
  fprintf(f,
          "usage: kvbound run SPEC.lua [--jobs N] [--threads N] [--out DIR] [--seed S] [--force]\n"
          "                  [--shard I/N]\n"
          "  Runs the experiment in SPEC.lua and writes DIR/results.csv (one row per trial x stream\n"
          "  x method x query point), DIR/meta.json (spec, seed, version, machine), DIR/summary.txt\n"
          "  and DIR/summary.md (median and quantiles; Clopper-Pearson intervals for failure rates)\n"
          "  and DIR/plots.tsv (for `kvbound plot DIR`).\n"
          "  --jobs N   parallel trials (default: the number of cores); results do not depend on N\n"
          "  --threads N  threads one method may use inside a trial, given to every method with a\n"
          "             `threads` parameter that the spec does not set (default: the number of\n"
          "             cores, or $KVBOUND_THREADS, divided by the jobs, at least 1, so jobs x\n"
          "             threads fills the cores once); results do not depend on N. For a few\n"
          "             large trials use --jobs 1 (then the default is every core)\n"
          "  --out DIR  output directory (default out/NAME, NAME from the spec); refused, before\n"
          "             any trial runs, when it holds another spec's results\n"
          "  --force    replace another spec's results in DIR (its old plots are removed)\n"
          "  --seed S   overrides the spec's seed; trial i draws from PCG32 substream (S, i)\n"
          "  --shard I/N  run only shard I of N (0 <= I < N): trial u = point*trials + trial\n"
          "             runs in shard u mod N. DIR (default out/NAME.shard-I-of-N) gets the\n"
          "             shard's rows (rows.tsv, results.csv) and shard.json, or FAILED when the\n"
          "             shard fails; `kvbound merge` joins the N directories into the outputs\n"
          "             of a single run, byte for byte\n"
          "  Exit status 1 when rows failed (a method's update or query returned an error: the\n"
          "  error column of results.csv and the summary say why; the outputs are written).\n\n%s",
          kvb_spec_help);
}

/* A decimal integer in [0, 2^64 − 1]: a sign, or a value beyond (strtoull clamps it), is an
 * error rather than another seed. */
static int parse_uint(const char *s, unsigned long long *out) {
  char *end;
  if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return -1;
  errno = 0;
  *out = strtoull(s, &end, 10);
  return *end || errno == ERANGE ? -1 : 0;
}

typedef struct {
  const char *spec, *out;
  long jobs;
  int threads;
  int have_seed, force, sharded;
  unsigned long long seed, shard, nshards;
} run_opts;

/* "I/N" with 0 <= I < N <= 1e6 into o; -1 when malformed. */
static int parse_shard(const char *s, run_opts *o) {
  const char *sl = s ? strchr(s, '/') : NULL;
  char a[32];
  if (!sl || (size_t)(sl - s) >= sizeof a) return -1;
  memcpy(a, s, (size_t)(sl - s));
  a[sl - s] = '\0';
  if (parse_uint(a, &o->shard) || parse_uint(sl + 1, &o->nshards)) return -1;
  if (o->nshards < 1 || o->nshards > 1000000 || o->shard >= o->nshards) return -1;
  return 0;
}

/* The options of `kvbound run` into o. Returns -1 to go on, else the exit status (0 after
 * --help, 2 on a usage error, with its message on stderr). */
static int parse_run_args(int argc, char **argv, run_opts *o) {
  unsigned long long v;
  memset(o, 0, sizeof *o);
  o->jobs = sysconf(_SC_NPROCESSORS_ONLN);
  o->threads = 0; /* not given: the cores divided among the jobs (cmd_run) */
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      run_usage(stdout);
      return 0;
    } else if (!strcmp(argv[i], "--jobs") || !strcmp(argv[i], "-j")) {
      if (i + 1 >= argc || parse_uint(argv[i + 1], &v) || v < 1 || v > 256) {
        fprintf(stderr, "kvbound run: --jobs needs an integer in [1, 256]\n");
        return 2;
      }
      o->jobs = (long)v;
      i++;
    } else if (!strcmp(argv[i], "--threads")) {
      if (i + 1 >= argc || kvb_threads_parse(argv[i + 1], &o->threads)) {
        fprintf(stderr, "kvbound run: --threads needs an integer in [1, %d]\n", KVB_MAX_THREADS);
        return 2;
      }
      i++;
    } else if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "-o")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "kvbound run: --out needs a directory\n");
        return 2;
      }
      o->out = argv[++i];
    } else if (!strcmp(argv[i], "--seed")) {
      if (i + 1 >= argc || parse_uint(argv[i + 1], &o->seed)) {
        fprintf(stderr, "kvbound run: --seed needs a non-negative integer\n");
        return 2;
      }
      o->have_seed = 1;
      i++;
    } else if (!strcmp(argv[i], "--force")) {
      o->force = 1;
    } else if (!strcmp(argv[i], "--shard")) {
      if (i + 1 >= argc || parse_shard(argv[i + 1], o)) {
        fprintf(stderr, "kvbound run: --shard needs I/N with integers 0 <= I < N <= 1000000 (the "
                "shards of N are 0/N ... (N-1)/N), not '%s'\n", i + 1 < argc ? argv[i + 1] : "");
        return 2;
      }
      o->sharded = 1;
      i++;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "kvbound run: unknown option '%s' (see kvbound run --help)\n", argv[i]);
      return 2;
    } else if (o->spec) {
      fprintf(stderr, "kvbound run: one spec at a time ('%s' and '%s')\n", o->spec, argv[i]);
      return 2;
    } else {
      o->spec = argv[i];
    }
  }
  if (o->jobs < 1) o->jobs = 1;
  return -1;
}

static int cmd_run(int argc, char **argv) {
  run_opts o;
  int rc = parse_run_args(argc, argv, &o);
  if (rc >= 0) return rc;
  const char *spec = o.spec, *out = o.out;
  long jobs = o.jobs;
  if (!spec) {
    run_usage(stderr);
    return 2;
  }
  kvb_experiment e;
  static char err[8192];
  int st = kvb_spec_load(spec, &e, err, sizeof err);
  if (st) {
    fprintf(stderr, "kvbound run: spec error: %s\n", err);
    return 2;
  }
  if (o.sharded && e.tasks.on) { /* a usage error, refused before any directory is made */
    fprintf(stderr, "kvbound run: --shard: %s:%d: a tasks{} spec runs whole (no --shard; its tasks "
            "share one model load)\n", spec, e.tasks.line);
    kvb_experiment_free(&e);
    return 2;
  }
  if (o.have_seed) e.seed = o.seed;
  /* Not given: every core once in all (jobs run side by side, each method's workers inside
   * its trial), never jobs × cores threads on the cores. */
  e.threads = o.threads ? o.threads : (int)(kvb_threads_default() / jobs > 1 ? kvb_threads_default() / jobs : 1);
  char dir[KVB_RUN_DIR_MAX + 2];
  if (out && strlen(out) > KVB_RUN_DIR_MAX) {
    fprintf(stderr, "kvbound run: --out: the path is %zu bytes long; the limit is %d\n",
            strlen(out), KVB_RUN_DIR_MAX);
    kvb_experiment_free(&e);
    return 2;
  }
  if (!out && (e.name[0] == '.' || e.name[0] == '\0')) {
    fprintf(stderr, "kvbound run: the spec's name '%s' cannot name out/NAME (give the spec a "
            "name, or --out DIR)\n", e.name);
    kvb_experiment_free(&e);
    return 2;
  }
  if (out)
    snprintf(dir, sizeof dir, "%s", out);
  else if (o.sharded)
    snprintf(dir, sizeof dir, "out/%s.shard-%llu-of-%llu", e.name, o.shard, o.nshards);
  else
    snprintf(dir, sizeof dir, "out/%s", e.name);
  /* the output directory is checked before any trial runs */
  st = o.sharded ? kvb_experiment_prepare_shard_out(&e, dir, (size_t)o.shard, (size_t)o.nshards, o.force)
                 : kvb_experiment_prepare_out(&e, dir, o.force);
  if (st) {
    fprintf(stderr, "kvbound run: %s\n", kvb_strerror_last());
    kvb_experiment_free(&e);
    return 2;
  }
  kvb_run_report rep;
  if (o.sharded) {
    st = kvb_experiment_run_shard(&e, dir, (size_t)o.shard, (size_t)o.nshards, (int)jobs,
                                  isatty(2), &rep);
    kvb_experiment_free(&e);
    if (st) {
      fprintf(stderr, "kvbound run: shard %llu/%llu failed (marked in %s/FAILED): %s\n", o.shard,
              o.nshards, dir, kvb_strerror_last());
      return 1;
    }
    printf("wrote shard %llu/%llu: %s/rows.tsv, results.csv, shard.json (%zu rows)\n", o.shard,
           o.nshards, dir, rep.rows);
    if (rep.failed_rows) {
      fprintf(stderr, "kvbound run: %zu of %zu rows failed (the error column of %s/results.csv "
              "says why); first: %s\n", rep.failed_rows, rep.rows, dir, rep.first_error);
      return 1;
    }
    return 0;
  }
  st = kvb_experiment_run(&e, dir, (int)jobs, isatty(2), &rep);
  size_t nplots = e.nplots;
  int task_stage = e.tasks.on; /* runner_tasks.c writes no quantiles.csv */
  kvb_experiment_free(&e);
  if (st) {
    fprintf(stderr, "kvbound run: %s\n", kvb_strerror_last());
    return 1;
  }
  printf("wrote %s/results.csv, meta.json, summary.txt, summary.md, %splots.tsv\n", dir,
         task_stage ? "" : "quantiles.csv, ");
  if (nplots) printf("plot it with: kvbound plot %s\n", dir);
  if (rep.failed_rows) {
    fprintf(stderr, "kvbound run: %zu of %zu rows failed (the error column of %s/results.csv "
            "says why); first: %s\n", rep.failed_rows, rep.rows, dir, rep.first_error);
    return 1;
  }
  return 0;
}

static void merge_usage(FILE *f) {
  fprintf(f,
          "usage: kvbound merge SHARD_DIR... --out DIR [--force] [--allow-time]\n"
          "  Joins the shard directories of one run (`kvbound run SPEC --shard I/N --out\n"
          "  SHARD_DIR`, I = 0 ... N-1) into DIR: results.csv, quantiles.csv, summary.txt,\n"
          "  summary.md, plots.tsv and meta.json, byte for byte those of `kvbound run SPEC` with\n"
          "  the same seed, except meta.json's execution fields (jobs: the largest of the\n"
          "  shards'; wall_seconds: their sum; finished_utc and machine: the merge's). Refused\n"
          "  when the shards differ in kvbound version, spec or seed, when one is given twice or\n"
          "  missing (each missing I/N is named), when a directory holds a failed (FAILED) or\n"
          "  unfinished shard, when the spec file changed since the shards ran, or when the\n"
          "  shards' plugin methods came from files of other SHA-256s than each other or than\n"
          "  this process's --plugin (a merge loads no code a shard names: pass --plugin PATH\n"
          "  of the very file the shards ran).\n"
          "  --out DIR      the merged run's directory (required); `kvbound plot DIR` plots it\n"
          "  --force        replace another spec's results in DIR\n"
          "  --allow-time   merge a spec that measures time (wall-clock columns, not\n"
          "                 reproducible: the result then equals no single run byte for byte)\n"
          "  Exit status 1 when the merge failed or rows of the run failed, 2 on a usage error.\n");
}

static int cmd_merge(int argc, char **argv) {
  const char *out = NULL;
  int force = 0, allow_time = 0;
  const char **dirs = calloc((size_t)argc, sizeof *dirs);
  size_t n = 0;
  if (!dirs) return 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      merge_usage(stdout);
      free(dirs);
      return 0;
    } else if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "-o")) {
      if (i + 1 >= argc) {
        fprintf(stderr, "kvbound merge: --out needs a directory\n");
        free(dirs);
        return 2;
      }
      out = argv[++i];
    } else if (!strcmp(argv[i], "--force")) {
      force = 1;
    } else if (!strcmp(argv[i], "--allow-time")) {
      allow_time = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "kvbound merge: unknown option '%s' (see kvbound merge --help)\n", argv[i]);
      free(dirs);
      return 2;
    } else {
      dirs[n++] = argv[i];
    }
  }
  if (!out || n == 0) {
    fprintf(stderr, "kvbound merge: %s (see kvbound merge --help)\n",
            !out ? "--out DIR is required" : "no shard directory given");
    free(dirs);
    return 2;
  }
  kvb_run_report rep;
  int st = kvb_experiment_merge(dirs, n, out, force, allow_time, &rep);
  free(dirs);
  if (st) {
    fprintf(stderr, "kvbound merge: %s\n", kvb_strerror_last());
    return 1;
  }
  printf("merged %zu shards into %s/results.csv, meta.json, summary.txt, summary.md, "
         "quantiles.csv, plots.tsv\n", n, out);
  if (rep.failed_rows) {
    fprintf(stderr, "kvbound merge: %zu of %zu rows failed (the error column of %s/results.csv "
            "says why); first: %s\n", rep.failed_rows, rep.rows, out, rep.first_error);
    return 1;
  }
  return 0;
}

static int cmd_plot(int argc, char **argv) {
  const char *dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: kvbound plot DIR\n"
             "  Draws every plot{} of the spec that produced DIR (a `kvbound run` output) as\n"
             "  DIR/NAME.png and DIR/NAME.svg through gnuplot (pngcairo if available, else png):\n"
             "  the median of y against x with 25-75%% and 10-90%% quantile bands over trials and\n"
             "  query points, one series per method (and stream, and other sweep values), and the\n"
             "  spec's bound curve dashed. DIR/NAME.dat and DIR/NAME.gp are kept for restyling.\n");
      return 0;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "kvbound plot: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (dir) {
      fprintf(stderr, "kvbound plot: one directory at a time\n");
      return 2;
    } else {
      dir = argv[i];
    }
  }
  if (!dir) {
    fprintf(stderr, "usage: kvbound plot DIR (see kvbound plot --help)\n");
    return 2;
  }
  char err[2048];
  int st = kvb_plot_dir(dir, 1, err, sizeof err);
  if (st) {
    fprintf(stderr, "kvbound plot: %s\n", err);
    return 1;
  }
  return 0;
}

int kvb_cmd_decode(int argc, char **argv); /* decode_cli.c */

/* Method plugins (plugin.h; src/README.md, "Your own method"): those of $KVBOUND_PLUGINS, then every
 * `--plugin PATH` of the command line (any command, any position; removed from argv so the
 * commands never see it). A plugin's methods are then names like the built-ins' in specs,
 * `list` and `decode --method`. Returns non-zero (the message printed) when one fails. */
static int load_plugins(int *argc, char **argv) {
  if (kvb_plugins_load_env()) {
    fprintf(stderr, "kvbound: %s\n", kvb_strerror_last());
    return 1;
  }
  int w = 1;
  for (int i = 1; i < *argc; i++) {
    const char *path = NULL;
    if (strcmp(argv[i], "--plugin") == 0) {
      if (i + 1 >= *argc) {
        fprintf(stderr, "kvbound: --plugin needs a path (a shared library built against kvbound)\n");
        return 1;
      }
      path = argv[++i];
    } else if (strncmp(argv[i], "--plugin=", 9) == 0) {
      path = argv[i] + 9;
    }
    if (!path) {
      argv[w++] = argv[i];
      continue;
    }
    if (kvb_plugin_load(path)) {
      fprintf(stderr, "kvbound: %s\n", kvb_strerror_last());
      return 1;
    }
  }
  argv[w] = NULL;
  *argc = w;
  return 0;
}

/* The command line's entry point (build/libkvbound-cli.so; build/kvbound is a thin main over
 * it, src/app/tools/kvbound.c): a process that registered a method at run time (a Python
 * session, kvb_method_register) runs `kvbound run` on it in-process, as kvb_props_main does for
 * the battery. argv as for kvbound, argv[0] ignored. */
int kvb_cli_main(int argc, char **argv);
int kvb_cli_main(int argc, char **argv) {
  /* One OpenBLAS thread, whatever $OPENBLAS_NUM_THREADS says: a multi-threaded BLAS product
   * rounds differently from a single-threaded one, and --jobs > 1 runs trials on one BLAS thread
   * each (parallel.h), so without this a --jobs 1 run and a --jobs 2 run differ in the last bits
   * (README: results are identical for any --jobs and --threads). kvbound's parallelism is its
   * own: trials over --jobs, kernels over --threads. */
  openblas_set_num_threads(1);
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    if (argc > 2 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0)) {
      printf("usage: kvbound version\n  prints the version\n");
      return 0;
    }
    printf("kvbound %s\n", KVBOUND_VERSION);
    return 0;
  }
  if (load_plugins(&argc, argv)) return 2;
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  cmd = argv[1]; /* `kvbound --plugin P list` */
  if (strcmp(cmd, "list") == 0) return cmd_list(argc - 1, argv + 1);
  if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
  if (strcmp(cmd, "plot") == 0) return cmd_plot(argc - 1, argv + 1);
  if (strcmp(cmd, "merge") == 0) return cmd_merge(argc - 1, argv + 1);
  if (strcmp(cmd, "devices") == 0) return kvb_run_devices();
  if (strcmp(cmd, "dump-kv") == 0) return kvb_cmd_dump_kv(argc - 1, argv + 1, "kvbound dump-kv");
  if (strcmp(cmd, "decode") == 0) return kvb_cmd_decode(argc - 1, argv + 1);
  fprintf(stderr, "kvbound: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}

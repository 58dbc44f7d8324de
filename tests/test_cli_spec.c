/* test_cli_spec.c — the kvbound command end to end: a valid spec writes
 * results.csv, meta.json and the summary; results do not depend on --jobs; --seed selects the
 * substreams; spec errors name file:line and what was expected; the "npy" stream works from a
 * spec. Runs the kvbound binary next to this test's directory (B/tests/.. = B). */
#include "kvbound.h"
#include "unit.h"
#include "cli_harness.h"
#include "index_reduction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


/* Runs a shell command, capturing stdout+stderr into out; returns the exit status. */



static size_t count_lines(const char *s) {
  size_t n = 0;
  for (; s && *s; s++) n += *s == '\n';
  return n;
}

static const char *good_spec =
    "name \"tiny\"\n"
    "stream \"clusterable\" { n = 200, d_key = 4, d_value = 3, m = 3, delta = 0.5 }\n"
    "method \"subgen\" { delta = 0.5, t = 4 }\n"
    "method \"exact\" {}\n"
    "sweep \"s\" { 4, 16 }\n"
    "trials(5)\n"
    "queries { every = 50 }\n"
    "failure { column = \"ratio_op\", above = 0.5 }\n"
    "plot { name = \"e\", x = \"s\", y = \"rel_error\", bound = \"1/sqrt(x)\" }\n";

static void valid_spec(void) {
  char spec[128], cmd[2048], out[16384];
  snprintf(spec, sizeof spec, "%s/tiny.lua", tmp);
  write_file(spec, good_spec);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/j1 --jobs 1", kvbound, spec, tmp);
  int rc = sh(cmd, out, sizeof out);
  CHECK(rc == 0 && strstr(out, "wrote"), "cli: a valid spec runs", "rc %d: %s", rc, out);
  char path[256];
  snprintf(path, sizeof path, "%s/j1/results.csv", tmp);
  char *a = read_file(path);
  /* 2 sweep points x 5 trials x 2 methods x 4 query points (50, 100, 150, 200) + header */
  CHECK(a && count_lines(a) == 1 + 2 * 5 * 2 * 4 &&
            strncmp(a, "unit,point,trial,s,stream,method,j,status,rel_error", 51) == 0,
        "cli: results.csv has one row per trial x method x query point", "%zu lines",
        count_lines(a));
  /* the exact method is measured at zero error on every row */
  int exact_zero = a != NULL, nexact = 0;
  for (char *l = a ? strstr(a, ",exact,") : NULL; l; l = strstr(l + 1, ",exact,")) {
    char *st = strchr(l + 7, ','); /* after j */
    if (!st || strncmp(st, ",0,0,0,", 7) != 0) exact_zero = 0; /* status 0, rel 0, abs 0 */
    nexact++;
  }
  CHECK(exact_zero && nexact == 40, "cli: method exact has rel_error 0 on all its rows",
        "%d rows", nexact);
  snprintf(path, sizeof path, "%s/j1/meta.json", tmp);
  char *m = read_file(path);
  CHECK(m && strstr(m, "\"seed\": 1,") && strstr(m, "\"machine\"") && strstr(m, "sweep \\\"s\\\"") &&
            strstr(m, "\"kvbound_version\": \"" KVBOUND_VERSION "\""),
        "cli: meta.json records seed, machine, version and the spec text", "%s", m ? m : "(none)");
  free(m);
  snprintf(path, sizeof path, "%s/j1/summary.txt", tmp);
  m = read_file(path);
  CHECK(m && strstr(m, "failed trials(ratio_op>0.5)") && strstr(m, "/5 [") && count_lines(m) == 1 + 2 * 2,
        "cli: summary.txt has one line per sweep point x method with failure CIs", "%s",
        m ? m : "(none)");
  free(m);
  /* --jobs 1 and --jobs 3 give byte-identical results */
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/j3 --jobs 3", kvbound, spec, tmp);
  rc = sh(cmd, out, sizeof out);
  snprintf(path, sizeof path, "%s/j3/results.csv", tmp);
  char *b = read_file(path);
  CHECK(rc == 0 && a && b && strcmp(a, b) == 0, "cli: results.csv is identical for --jobs 1 and 3",
        "rc %d, %s", rc, out);
  free(b);
  /* --seed picks other substreams (different numbers), and the same seed repeats them */
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/s7 --jobs 2 --seed 7", kvbound, spec, tmp);
  rc = sh(cmd, out, sizeof out);
  snprintf(path, sizeof path, "%s/s7/results.csv", tmp);
  b = read_file(path);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/s7b --jobs 1 --seed 7", kvbound, spec, tmp);
  int rc2 = sh(cmd, out, sizeof out);
  snprintf(path, sizeof path, "%s/s7b/results.csv", tmp);
  char *c = read_file(path);
  CHECK(rc == 0 && rc2 == 0 && a && b && c && strcmp(a, b) != 0 && strcmp(b, c) == 0,
        "cli: --seed 7 changes the results and repeats them", "rc %d %d", rc, rc2);
  free(a);
  free(b);
  free(c);
  /* kvbound plot draws the spec's plot as PNG and SVG (gnuplot is a dependency: install-deps) */
  snprintf(cmd, sizeof cmd, "%s plot %s/j1", kvbound, tmp);
  rc = sh(cmd, out, sizeof out);
  snprintf(path, sizeof path, "%s/j1/e.png", tmp);
  char *png = read_file(path);
  snprintf(path, sizeof path, "%s/j1/e.svg", tmp);
  char *svg = read_file(path);
  snprintf(path, sizeof path, "%s/j1/e.gp", tmp);
  char *gp = read_file(path);
  CHECK(rc == 0 && png && strncmp(png, "\x89PNG", 4) == 0 && svg && strstr(svg, "<svg") && gp &&
            strstr(gp, "1/sqrt(x) with lines"),
        "cli: kvbound plot writes PNG and SVG with the bound curve", "rc %d: %s", rc, out);
  free(png);
  free(svg);
  free(gp);
  snprintf(cmd, sizeof cmd, "%s plot %s/nonexistent", kvbound, tmp);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 1 && strstr(out, "plots.tsv: cannot open"), "cli: kvbound plot of a missing run is an error",
        "rc %d: %s", rc, out);
}

/* A spec with one error; its message must contain `want` (file:line and the expectation). */
static void bad_spec(const char *label, const char *text, const char *want_line,
                     const char *want_msg) {
  char spec[128], cmd[2048], out[16384];
  snprintf(spec, sizeof spec, "%s/bad.lua", tmp);
  write_file(spec, text);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/bad --jobs 1", kvbound, spec, tmp);
  int rc = sh(cmd, out, sizeof out);
  char where[160];
  if (want_line[0])
    snprintf(where, sizeof where, "%s:%s:", spec, want_line);
  else /* a whole-spec error: the file name, no line */
    snprintf(where, sizeof where, "%s: ", spec);
  char name[160];
  snprintf(name, sizeof name, "cli: spec error (%s) names file:line and the expectation", label);
  CHECK(rc == 2 && strstr(out, where) && strstr(out, want_msg), name,
        "rc %d, wanted '%s' and '%s' in: %s", rc, where, want_msg, out);
}

static void spec_errors(void) {
  const char *hdr = "stream \"gaussian\" { n = 64, d_key = 4, d_value = 4 }\n";
  char t[1024];
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nmethod \"no_such_method\" {}\n", hdr);
  bad_spec("unknown method", t, "3", "no method named 'no_such_method' is registered (available:");
  bad_spec("unknown stream", "method \"exact\" {}\nstream \"nope\" { n = 3 }\n", "2",
           "no stream named 'nope'");
  snprintf(t, sizeof t, "%smethod \"subgen\" { delta = -1, t = 2, s = 2 }\n", hdr);
  bad_spec("out-of-range parameter", t, "2", "'delta' = -1 is outside");
  snprintf(t, sizeof t, "%smethod \"subgen\" { delta = 1, tt = 2, s = 2 }\n", hdr);
  bad_spec("misspelt parameter", t, "2", "has no parameter 'tt'");
  snprintf(t, sizeof t, "%smethod \"subgen\" { delta = 1, s = 2 }\n", hdr);
  bad_spec("missing required parameter", t, "2", "required parameter 't' is missing");
  snprintf(t, sizeof t, "%smethod \"subgen\" { delta = 1, t = 2, s = 2 }\n\nsweep \"zz\" { 1, 2 }\n", hdr);
  bad_spec("sweep over an unknown parameter", t, "4", "no declared stream, method or probe has a parameter 'zz'");
  snprintf(t, sizeof t, "%smethod \"subgen\" { delta = 1, t = 2 }\nsweep \"s\" { 4, 0 }\n", hdr);
  bad_spec("sweep value out of range", t, "2", "at s = 0");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nscale(-1)\n", hdr);
  bad_spec("scale(-1)", t, "3", "scale: expected a positive finite number, got -1");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\ntrials(4294967296)\n", hdr);
  bad_spec("trials(2^32)", t, "3", "got 4294967296");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nfailure { column = \"rel_error\", above = 0/0 }\n", hdr);
  bad_spec("failure above NaN", t, "3", "'above' must be a finite number");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nsweep \"n\" (setmetatable({}, { __len = function() "
           "return 3 end, __index = function() error(\"boom\") end }))\n", hdr);
  /* read raw: the metamethods never run, so the list is empty (and nothing raises) */
  bad_spec("sweep values behind metamethods", t, "3", "expected a non-empty list of numbers");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\ntrials(\"many\")\n", hdr);
  bad_spec("trials with a string", t, "3", "number expected, got string");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nplot { name = \"p\", x = \"j\", y = \"nonsense\" }\n", hdr);
  bad_spec("plot of an unknown column", t, "3", "'y' must name a measure column");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nmethod \"exact\" { \n", hdr);
  bad_spec("syntax error", t, "4", "unexpected symbol near <eof>");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nqueries { evry = 3 }\n", hdr);
  bad_spec("unknown queries field", t, "3", "unknown field 'evry'");
  snprintf(t, sizeof t, "%smethod \"exact\" { label = \"a b\" }\n", hdr);
  bad_spec("bad label", t, "2", "label must be");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nplot { name = \"p\", x = \"s\", y = \"rel_error\" }\n", hdr);
  bad_spec("plot over a non-sweep x", t, "3", "is neither a sweep parameter, \"j\" nor a measure column");
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nmeasures { \"decode\" }\nscale \"inv_sqrt_d\"\n", hdr);
  bad_spec("decode on a non-INDEX stream", t, "1", "every stream must be \"index_reduction\"");
  bad_spec("decode without the 1/sqrt(d) scale",
           "stream \"index_reduction\" { n = 32, d_key = 4, d_value = 4, r = 1 }\nmethod \"exact\" {}\n"
           "measures { \"decode\" }\n", "", "add scale \"inv_sqrt_d\"");
  snprintf(t, sizeof t, "%sprobe \"walker\" {}\n", hdr);
  bad_spec("unknown probe", t, "2", "no probe named 'walker' is registered (available: walk, kcenter");
  snprintf(t, sizeof t, "%sprobe \"kcenter\" { on = \"keys\" }\n", hdr);
  bad_spec("probe without its required parameter", t, "2", "required parameter 'centers' is missing");
  snprintf(t, sizeof t, "%smethod \"subgen\" { delta = 1 }\nsweep { t = { 1, 2 }, s = { 4 } }\n", hdr);
  bad_spec("in-step sweeps of different lengths", t, "3", "need equal lengths");
  /* a runtime error of the chunk itself, with a traceback */
  snprintf(t, sizeof t, "%smethod \"exact\" {}\nlocal x = nil\nprint(x.y)\n", hdr);
  bad_spec("Lua runtime error", t, "4", "attempt to index");
  /* no method at all */
  char spec[128], cmd[2048], out[4096];
  snprintf(spec, sizeof spec, "%s/nomethod.lua", tmp);
  write_file(spec, hdr);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/bad", kvbound, spec, tmp);
  int rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "declares no method"), "cli: a spec without a method is an error",
        "rc %d: %s", rc, out);
  snprintf(cmd, sizeof cmd, "%s run %s/does-not-exist.lua", kvbound, tmp);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "cannot open"), "cli: a missing spec file is an error", "rc %d: %s",
        rc, out);
  snprintf(cmd, sizeof cmd, "%s run --jobs 0 x.lua", kvbound);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "--jobs"), "cli: --jobs 0 is a usage error", "rc %d: %s", rc, out);
  snprintf(cmd, sizeof cmd, "%s run --threads 0 x.lua", kvbound);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "--threads"), "cli: --threads 0 is a usage error", "rc %d: %s", rc,
        out);
}

/* --threads (threads inside one trial, for methods with a `threads` parameter) never changes a
 * number: results.csv is byte-identical for --threads 1 and 2, block BalanceKV included — with
 * OPENBLAS_NUM_THREADS=2 in the environment, which kvbound must override (a multi-threaded
 * BLAS product rounds otherwise than the one-thread products of --jobs 2's workers). */
static void threads_identical(void) {
  char spec[128], cmd[2048], out[16384], path[256];
  snprintf(spec, sizeof spec, "%s/thr.lua", tmp);
  write_file(spec, "name \"thr\"\n"
                   "stream \"gaussian\" { n = 600, d_key = 8, d_value = 4 }\n"
                   "method \"balancekv_block\" { b = 32, T = 2, f = 8, w = 8 }\n"
                   "method \"subgen\" { delta = 1, t = 4, s = 8 }\n"
                   "trials(3)\n"
                   "queries { every = 200 }\n");
  snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=2 %s run %s --out %s/t1 --jobs 1 --threads 1",
           kvbound, spec, tmp);
  int rc = sh(cmd, out, sizeof out);
  snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=2 %s run %s --out %s/t2 --jobs 2 --threads 2",
           kvbound, spec, tmp);
  int rc2 = sh(cmd, out, sizeof out);
  snprintf(path, sizeof path, "%s/t1/results.csv", tmp);
  char *a = read_file(path);
  snprintf(path, sizeof path, "%s/t2/results.csv", tmp);
  char *b = read_file(path);
  CHECK(rc == 0 && rc2 == 0 && a && b && strcmp(a, b) == 0 && strstr(a, ",balancekv_block,"),
        "cli: results.csv is identical for --threads 1 and 2", "rc %d %d: %s", rc, rc2, out);
  free(a);
  free(b);
}

/* Field idx (0-based) of a CSV line into buf. */
static void csv_field(const char *line, int idx, char *buf, size_t cap) {
  for (int i = 0; i < idx && line; i++) {
    line = strchr(line, ',');
    if (line) line++;
  }
  size_t n = 0;
  if (line && *line == '"') { /* a quoted field (the error column): "" is a quote */
    for (line++; *line && n + 1 < cap; line++) {
      if (*line == '"' && line[1] != '"') break;
      if (*line == '"') line++;
      buf[n++] = *line;
    }
    buf[n] = '\0';
    return;
  }
  while (line && line[n] && line[n] != ',' && line[n] != '\n' && n + 1 < cap) {
    buf[n] = line[n];
    n++;
  }
  buf[n] = '\0';
}

static int csv_column(const char *csv, const char *name) {
  int idx = 0;
  size_t len = strlen(name);
  for (const char *c = csv; *c && *c != '\n'; idx++) {
    if (strncmp(c, name, len) == 0 && (c[len] == ',' || c[len] == '\n')) return idx;
    while (*c && *c != ',' && *c != '\n') c++;
    if (*c == ',') c++;
  }
  return -1;
}

/* Writes tmp/NAME.lua with `text`, runs it into tmp/NAME, and returns its results.csv (NULL if
 * none); *rc and out receive the command's status and output. */
static char *run_spec(const char *name, const char *text, int *rc, char *out, size_t cap) {
  char spec[128], cmd[2048], path[256];
  snprintf(spec, sizeof spec, "%s/%s.lua", tmp, name);
  write_file(spec, text);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/%s", kvbound, spec, tmp, name);
  *rc = sh(cmd, out, cap);
  snprintf(path, sizeof path, "%s/%s/results.csv", tmp, name);
  return read_file(path);
}

/* Probes: rows with the probe columns only, the kcenter radius with one center relative to
 * itself is 1, the summary reports the probe's first column. */
static void probe_spec(void) {
  char out[16384];
  int rc;
  char *a = run_spec("probe",
                     "stream \"adv_sphere\" { n = 300, d_key = 4, d_value = 4, key_norm = 1, r = 1 }\n"
                     "probe \"walk\" { label = \"w\" }\n"
                     "probe \"walk\" { signs = \"random\", label = \"rs\" }\n"
                     "probe \"kcenter\" { centers = 1, label = \"kc\" }\n"
                     "queries { at = { 100, 300 } }\ntrials(2)\n",
                     &rc, out, sizeof out);
  int ok = rc == 0 && a && count_lines(a) == 1 + 2 * 3 * 2 &&
           strstr(a, ",disc,disc_inf,disc_bound,walk_fails,radius,radius_rel,error\n") &&
           !strstr(a, "rel_error");
  int rr = a ? csv_column(a, "radius_rel") : -1, nkc = 0;
  for (char *l = a ? strstr(a, ",kc,") : NULL; ok && l; l = strstr(l + 1, ",kc,")) {
    char *bol = l;
    while (bol > a && bol[-1] != '\n') bol--;
    char f[64];
    csv_field(bol, rr, f, sizeof f);
    ok &= strcmp(f, "1") == 0;
    nkc++;
  }
  CHECK(ok && nkc == 4 && strstr(out, " disc ") && strstr(out, " radius "),
        "cli: probes write their own columns (radius_rel = 1 with one center) and summary",
        "rc %d, %d kc rows: %s", rc, nkc, out);
  free(a);
}

/* The decode measure against the lower-bound library's own decoder (kvb_index_alice/bob) on
 * the instance and bits redrawn from the same substream, and a plot over a measure x. */
static void decode_spec(void) {
  char cmd[2048], out[16384], path[256];
  int rc;
  char *a = run_spec("decode",
                     "stream \"index_reduction\" { n = 128, d_key = 16, d_value = 16, r = 4 }\n"
                     "scale \"inv_sqrt_d\"\nmethod \"exact\" {}\n"
                     "method \"uniform_sample\" { f = 0, w = 0, label = \"u\" }\n"
                     "sweep \"T\" { 1, 2, 3 }\ntrials(2)\nmeasures { \"decode\", \"memory\" }\n"
                     "plot { name = \"dm\", x = \"mem_vectors\", y = \"decode_acc\", logx = true }\n",
                     &rc, out, sizeof out);
  char got[64] = "", want[64] = "";
  int col = a ? csv_column(a, "decode_acc") : -1;
  const char *row = a ? strstr(a, "\n0,0,0,1,index_reduction,exact,128,0,") : NULL;
  if (row) csv_field(row + 1, col, got, sizeof got);
  /* the library decoder on unit 0 (seed 1, substream 0): instance, then the bits */
  gsl_rng *rng = kvb_rng_alloc_substream(1, 0);
  kvb_index_instance *I = NULL;
  kvb_index_alloc(128, 16, 4, KVB_INDEX_FAITHFUL, rng, &I);
  unsigned char x[128];
  for (int b = 0; b < 128; b++) x[b] = gsl_rng_uniform(rng) < 0.5;
  kvb_method_config cfg = {16, 16, 0.25, rng};
  kvb_params p;
  kvb_params_init(&p);
  kvb_method *m = NULL;
  size_t u = 0, correct = 0;
  if (I && kvb_method_alloc("exact", &cfg, &p, &m) == KVB_OK && kvb_index_alice(I, x, m, &u) == KVB_OK)
    for (size_t i = 0; i < 128; i++) {
      int bit = -1;
      kvb_index_bob(I, m, i, u, &bit, NULL);
      correct += bit == x[i];
    }
  snprintf(want, sizeof want, "%.17g", (double)correct / 128);
  CHECK(rc == 0 && row && strcmp(got, want) == 0 && correct > 0,
        "cli: decode_acc of exact attention = the lower-bound library's decoder on the same draws",
        "rc %d, csv '%s', library '%s': %s", rc, got, want, out);
  kvb_method_free(m);
  kvb_index_free(I);
  gsl_rng_free(rng);
  free(a);
  snprintf(cmd, sizeof cmd, "%s plot %s/decode", kvbound, tmp);
  rc = sh(cmd, out, sizeof out);
  snprintf(path, sizeof path, "%s/decode/dm.dat", tmp);
  char *d = read_file(path);
  /* x a measure: one point per sweep point (3) per series (2), each over the 2 trials */
  size_t pts = 0;
  for (char *l = d; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    pts += *l >= '0' && *l <= '9' && strstr(l, " 2\n") == strchr(l, '\n') - 2;
  CHECK(rc == 0 && d && pts == 6, "cli: a plot over a measure x has one point per sweep point",
        "rc %d, %zu points: %s", rc, pts, d ? d : out);
  free(d);
}

/* The first whitespace-separated token number `idx` of the line of s that starts with
 * `prefix` (after leading blanks), into buf. */
static int line_token(const char *s, const char *prefix, int idx, char *buf, size_t cap) {
  for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    const char *b = l;
    while (*b == ' ') b++;
    if (strncmp(b, prefix, strlen(prefix)) != 0) continue;
    for (int t = 0; t < idx; t++) {
      while (*b && *b != ' ' && *b != '\n') b++;
      while (*b == ' ') b++;
    }
    size_t n = 0;
    while (b[n] && b[n] != ' ' && b[n] != '\n' && n + 1 < cap) buf[n] = b[n], n++;
    buf[n] = '\0';
    return 0;
  }
  buf[0] = '\0';
  return -1;
}

/* The measures in the outputs: the summary's headline is the spec's own measure; the quantiles
 * are computed once (quantiles.csv = the summary's numbers = the plot's .dat); the plot
 * template (fixed size, legend below, every series its colour and point type, both bounds,
 * %g labels). */
#define QHDR "point,s,delta,stream,method,j,column,n,q10,q25,median,q75,q90,q99,max\n"
static void measures_outputs(void) {
  char cmd[2048], out[16384], path[256];
  int rc;
  const char *stream = "stream \"clusterable\" { n = 200, d_key = 4, d_value = 3, m = 3, delta = 0.5 }\n";
  char t[2048];
  snprintf(t, sizeof t,
           "%smethod \"subgen\" { t = 4 }\nmethod \"z_zero\" {}\nsweep \"s\" { 4, 16 }\n"
           "sweep \"delta\" { 0.1, 0.3 }\ntrials(6)\nqueries { every = 100 }\n"
           "failure { column = \"rel_error\", above = 1 }\n"
           "plot { name = \"r\", x = \"s\", y = \"ratio_op\", bound = \"sqrt(x)\", bound2 = \"1/x\" }\n"
           "plot { name = \"z\", x = \"s\", y = \"rel_error\" }\n",
           stream);
  char *a = run_spec("meas", t, &rc, out, sizeof out);
  snprintf(path, sizeof path, "%s/meas/summary.txt", tmp);
  char *sum = read_file(path);
  char measure[64], median[64];
  line_token(sum ? sum : "", "4 ", 4, measure, sizeof measure); /* s delta stream method measure */
  CHECK(rc == 0 && sum && strcmp(measure, "ratio_op") == 0,
        "cli: the summary's headline is the spec's plotted measure (ratio_op), not rel_error",
        "rc %d, measure '%s': %s", rc, measure, sum ? sum : out);
  line_token(sum ? sum : "", "4 ", 8, median, sizeof median);
  snprintf(path, sizeof path, "%s/meas/quantiles.csv", tmp);
  char *q = read_file(path);
  const char *ql = q ? strstr(q, "\n0,4,0.10000000000000001,clusterable,subgen,all,ratio_op,") : NULL;
  char qmed[64] = "", qfmt[64] = "", perj[64] = "";
  if (ql) csv_field(ql + 1, 10, qmed, sizeof qmed); /* point s delta stream method j column n q10 q25 median */
  if (ql) snprintf(qfmt, sizeof qfmt, "%.3g", strtod(qmed, NULL));
  if (q) snprintf(perj, sizeof perj, "%s", strstr(q, ",subgen,100,ratio_op,6,") ? "yes" : "no");
  CHECK(ql && median[0] && strcmp(qfmt, median) == 0 && strcmp(perj, "yes") == 0 &&
            strncmp(q, QHDR, strlen(QHDR)) == 0,
        "cli: quantiles.csv holds the summary's quantiles (pooled and per query point)",
        "summary median '%s', quantiles.csv '%s', per-j %s", median, qfmt, perj);
  /* the plot draws the runner's quantiles: the .dat median is quantiles.csv's */
  snprintf(cmd, sizeof cmd, "%s plot %s/meas", kvbound, tmp);
  rc = sh(cmd, out, sizeof out);
  snprintf(path, sizeof path, "%s/meas/r.dat", tmp);
  char *d = read_file(path), dmed[64] = "", want[64] = "";
  line_token(d ? d : "", "4 ", 3, dmed, sizeof dmed); /* x q10 q25 median */
  snprintf(want, sizeof want, "%.10g", strtod(qmed, NULL));
  CHECK(rc == 0 && d && strcmp(dmed, want) == 0 && strstr(d, "# subgen delta=0.1\n"),
        "cli: the plot's medians are quantiles.csv's (no second computation)",
        "rc %d, dat '%s' vs '%s': %s", rc, dmed, want, d ? d : out);
  snprintf(path, sizeof path, "%s/meas/r.gp", tmp);
  char *gp = read_file(path);
  CHECK(gp && strstr(gp, "size 1200,800") && strstr(gp, "set key outside below") &&
            strstr(gp, "set bmargin") && strstr(gp, "pt 7 ") && strstr(gp, "pt 5 ") &&
            strstr(gp, "lc rgb '#1f77b4' title 'subgen delta=0.1'") &&
            strstr(gp, "pt 9 ps 1.3 lc rgb '#2ca02c' title 'subgen delta=0.3'") &&
            !strstr(gp, "0.10000000000000001") && strstr(gp, "sqrt(x) with lines") &&
            strstr(gp, "1/x with lines"),
        "cli: one plot template: fixed size, legend below, colour + point type per series, %g "
        "labels, both bounds", "%s", gp ? gp : "(none)");
  /* z ≡ 0 has rel_error 1 at every delta (it reads no delta): one series, not two on top of
   * each other */
  snprintf(path, sizeof path, "%s/meas/z.gp", tmp);
  char *zg = read_file(path);
  CHECK(zg && strstr(zg, "title 'z_zero delta=0.1 = z_zero delta=0.3'") &&
            strstr(zg, "title 'subgen delta=0.3'"),
        "cli: series with identical data are drawn once, named after all of them", "%s",
        zg ? zg : "(none)");
  free(zg);
  /* a directory without quantiles.csv (an older run) is refused with the reason */
  snprintf(path, sizeof path, "%s/meas/quantiles.csv", tmp);
  unlink(path);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc != 0 && strstr(out, "quantiles.csv: cannot open"),
        "cli: kvbound plot without quantiles.csv says so", "rc %d: %s", rc, out);
  free(a), free(sum), free(q), free(d), free(gp);
  /* no plot: the failure{} column heads the summary */
  snprintf(t, sizeof t, "%smethod \"subgen\" { delta = 0.5, t = 4, s = 8 }\ntrials(3)\n"
           "failure { column = \"ratio_f\", above = 1 }\n", stream);
  a = run_spec("meas2", t, &rc, out, sizeof out);
  snprintf(path, sizeof path, "%s/meas2/summary.txt", tmp);
  sum = read_file(path);
  line_token(sum ? sum : "", "clusterable", 2, measure, sizeof measure);
  CHECK(rc == 0 && strcmp(measure, "ratio_f") == 0,
        "cli: without a plot the failure{} column heads the summary", "rc %d '%s': %s", rc, measure,
        sum ? sum : out);
  free(a), free(sum);
}

/* sweep { a = {...}, b = {...} }: the parameters move in step (points = the common length,
 * not the product), and a plot over one of them is not split by the other. */
static void zip_spec(void) {
  char cmd[2048], out[16384], path[256];
  int rc;
  char *a = run_spec("zip",
                     "stream \"clusterable\" { n = 64, d_key = 4, d_value = 3, m = 3, delta = 0.5 }\n"
                     "method \"subgen\" { delta = 0.5 }\n"
                     "sweep { t = { 2, 3, 5 }, s = { 4, 16, 64 } }\ntrials(2)\n"
                     "plot { name = \"zs\", x = \"s\", y = \"rel_error\" }\n",
                     &rc, out, sizeof out);
  if (rc == 0) {
    snprintf(cmd, sizeof cmd, "%s plot %s/zip", kvbound, tmp);
    rc = sh(cmd, out, sizeof out);
  }
  snprintf(path, sizeof path, "%s/zip/zs.dat", tmp);
  char *d = read_file(path);
  /* columns in name order (s, t); rows only for the pairs (4,2), (16,3), (64,5) */
  int ok = rc == 0 && a && d && strncmp(a, "unit,point,trial,s,t,stream,", 28) == 0 &&
           count_lines(a) == 1 + 3 * 2 && strstr(a, "\n0,0,0,4,2,") && strstr(a, "\n2,1,0,16,3,") &&
           strstr(a, "\n5,2,1,64,5,") && !strstr(a, ",4,3,") &&
           !strstr(d, "\n\n\n#"); /* one series: t, moving with s, does not split it */
  CHECK(ok, "cli: sweep { a = ..., b = ... } moves the parameters in step, one plot series",
        "rc %d: %s\n%s", rc, a ? a : out, d ? d : "");
  free(a);
  free(d);
}

static void help_and_list(void) {
  const char *sub[] = {"list", "run", "plot", "version"};
  for (int i = 0; i < 4; i++) {
    char cmd[2048], out[16384], label[64];
    snprintf(cmd, sizeof cmd, "%s %s --help", kvbound, sub[i]);
    int rc = sh(cmd, out, sizeof out);
    snprintf(label, sizeof label, "cli: kvbound %s --help", sub[i]);
    CHECK(rc == 0 && strstr(out, "usage: kvbound"), label, "rc %d: %s", rc, out);
  }
  char cmd[2048];
  static char out[65536];
  snprintf(cmd, sizeof cmd, "%s list", kvbound);
  int rc = sh(cmd, out, sizeof out);
  int ok = rc == 0 && strstr(out, "measures") && strstr(out, "ratio_op");
  for (size_t i = 0; ok && kvb_method_type_at(i); i++) ok = strstr(out, kvb_method_type_at(i)->name) != NULL;
  for (size_t i = 0; ok && kvb_stream_type_at(i); i++) ok = strstr(out, kvb_stream_type_at(i)->name) != NULL;
  CHECK(ok, "cli: kvbound list names every registered method, stream and the measures", "rc %d", rc);
  /* a default is never shown outside its own range, nor a placeholder beside "absent: ..." */
  int outside = 0;
  for (const char *l = out; (l = strstr(l, " default ")) != NULL; l++) {
    double def, lo, hi;
    const char *in = strstr(l, "in [");
    const char *eol = strchr(l, '\n');
    if (sscanf(l, " default %lf", &def) == 1 && in && (!eol || in < eol) &&
        sscanf(in, "in [%lf, %lf]", &lo, &hi) == 2 && (def < lo || def > hi))
      outside++;
  }
  const char *npy_n = strstr(out, "use the first n tokens");
  const char *bol = npy_n;
  while (bol && bol > out && bol[-1] != '\n') bol--;
  CHECK(rc == 0 && outside == 0 && npy_n && strstr(bol, "optional") && strstr(bol, "optional") < npy_n &&
            !strstr(out, "default 0, in [1"),
        "cli: kvbound list shows defaults inside their ranges and optional parameters as optional",
        "%d defaults outside their ranges", outside);
}

static void npy_spec(void) {
  char pq[128], pk[128], pv[128], spec[128], cmd[2048], out[8192], text[1024];
  snprintf(pq, sizeof pq, "%s/q.npy", tmp);
  snprintf(pk, sizeof pk, "%s/k.npy", tmp);
  snprintf(pv, sizeof pv, "%s/v.npy", tmp);
  double Q[60], K[60], V[40];
  for (int i = 0; i < 60; i++) {
    Q[i] = 0.05 * (i % 7);
    K[i] = 0.1 * ((i * 3) % 5) - 0.2;
  }
  for (int i = 0; i < 40; i++) V[i] = (i % 9) - 4;
  kvb_npy_write(pq, Q, 2, (size_t[]){20, 3}, "<f4", 1);
  kvb_npy_write(pk, K, 2, (size_t[]){20, 3}, "<f8", 2);
  kvb_npy_write(pv, V, 2, (size_t[]){20, 2}, "<f8", 3);
  snprintf(text, sizeof text,
           "stream \"npy\" { q = \"%s\", k = \"%s\", v = \"%s\" }\nmethod \"exact\" {}\n"
           "method \"subgen\" { delta = 0.3, t = 3, s = 5 }\nqueries { at = { 5, 20 } }\n",
           pq, pk, pv);
  snprintf(spec, sizeof spec, "%s/npy.lua", tmp);
  write_file(spec, text);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/npy", kvbound, spec, tmp);
  int rc = sh(cmd, out, sizeof out);
  char path[256];
  snprintf(path, sizeof path, "%s/npy/results.csv", tmp);
  char *a = read_file(path);
  CHECK(rc == 0 && a && count_lines(a) == 5 && strstr(a, ",npy,exact,20,0,0,"),
        "cli: a spec runs on .npy files through stream \"npy\"", "rc %d: %s", rc, out);
  free(a);
  snprintf(text, sizeof text,
           "stream \"npy\" { q = \"%s\", k = \"%s\", v = \"%s/missing.npy\" }\nmethod \"exact\" {}\n", pq,
           pk, tmp);
  write_file(spec, text);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 1 && strstr(out, "missing.npy: cannot open"),
        "cli: a missing .npy file stops the run with its path", "rc %d: %s", rc, out);
}


/* ---- errors that reach the user ---- */

/* balancekv with keys longer than r: the rows fail, the CSV's error column and the summary say
 * why (with the spec's file:line of the method), and the run exits 1 with the count. */
static void errors_reach_user(void) {
  char out[16384], path[256];
  int rc;
  char *a = run_spec("bkv",
                     "stream \"gaussian\" { n = 64, d_key = 4, d_value = 4, key_sigma = 10 }\n"
                     "method \"balancekv\" { r = 1, t = 8, T = 2, eps = 0.5, n = 64 }\n"
                     "method \"exact\" {}\nqueries { every = 32 }\n",
                     &rc, out, sizeof out);
  char want[256];
  snprintf(want, sizeof want, ",\"%s/bkv.lua:2: method 'balancekv': update of token 1 failed: ", tmp);
  int col_last = a && strstr(a, ",fails,error\n") != NULL;
  CHECK(rc == 1 && a && col_last && strstr(a, want) && strstr(a, "exceeds r = 1\"\n"),
        "cli: a failed update's message is in the CSV error column, quoted, with the spec's file:line",
        "rc %d: %s\n%s", rc, out, a ? a : "");
  CHECK(rc == 1 && strstr(out, "2 of 4 rows failed") && strstr(out, "exceeds r = 1"),
        "cli: kvbound run exits 1 and says how many rows failed and why", "rc %d: %s", rc, out);
  snprintf(path, sizeof path, "%s/bkv/summary.txt", tmp);
  char *m = read_file(path);
  CHECK(m && strstr(m, "2 of 4 rows failed") && strstr(m, "bkv.lua:2: method 'balancekv'"),
        "cli: summary.txt counts the failed rows and gives the first messages", "%s", m ? m : "(none)");
  free(m);
  /* the quoted field survives a reader: kvbound plot still parses the file */
  free(a);
}

/* Finite inputs ~1e160..1e200 (.npy files): where every score fits in a double the answer is
 * computed (products that overflow are rescaled); where a score does not, the rows fail with
 * KVB_ERANGE and a message — never a NaN/Inf row with status 0. */
static void overflow_spec(void) {
  char pq[128], pk[128], pv[128], text[1024], out[16384];
  snprintf(pq, sizeof pq, "%s/bq.npy", tmp);
  snprintf(pk, sizeof pk, "%s/bk.npy", tmp);
  snprintf(pv, sizeof pv, "%s/bv.npy", tmp);
  double Q[16], K[16], V[16];
  for (int i = 0; i < 16; i++) {
    Q[i] = 1e160;
    K[i] = (i % 3 ? 1 : -1) * 1e160 * (1 + 0.01 * i);
    V[i] = (i % 5) - 2;
  }
  kvb_npy_write(pq, Q, 2, (size_t[]){8, 2}, "<f8", 1);
  kvb_npy_write(pk, K, 2, (size_t[]){8, 2}, "<f8", 1);
  kvb_npy_write(pv, V, 2, (size_t[]){8, 2}, "<f8", 1);
  const char *methods = "method \"exact\" {}\nmethod \"recent_kcenter\" { window = 2, centers = 2 }\n"
                        "method \"subgen\" { delta = 0.5, t = 2, s = 4 }\nqueries { every = 4 }\n";
  for (int big = 0; big < 2; big++) {
    int rc;
    snprintf(text, sizeof text, "stream \"npy\" { q = \"%s\", k = \"%s\", v = \"%s\" }\n%sscale(%s)\n",
             pq, pk, pv, methods, big ? "1" : "1e-20");
    char *a = run_spec(big ? "ovf_big" : "ovf_fit", text, &rc, out, sizeof out);
    int st = a ? csv_column(a, "status") : -1, re = a ? csv_column(a, "rel_error") : -1;
    int er = a ? csv_column(a, "error") : -1, rows = 0, bad = 0, failed = 0, exact_ok = 0;
    for (const char *l = a ? strchr(a, '\n') : NULL; l && l[1]; l = strchr(l + 1, '\n')) {
      char fs[16], fr[64], fe[512];
      csv_field(l + 1, st, fs, sizeof fs);
      csv_field(l + 1, re, fr, sizeof fr);
      csv_field(l + 1, er, fe, sizeof fe);
      rows++;
      if (strcmp(fs, "0") == 0) {
        bad += !(strtod(fr, NULL) >= 0 && strtod(fr, NULL) < 1e300); /* finite, not nan */
        exact_ok += strstr(l + 1, ",exact,") != NULL && strcmp(fr, "0") == 0;
      } else {
        failed++;
        bad += strstr(fe, "beyond double range") == NULL;
      }
    }
    if (!big)
      CHECK(rc == 0 && a && rows == 6 && bad == 0 && failed == 0 && exact_ok == 2,
            "cli: products beyond double range with representable scores are computed (exact error 0)",
            "rc %d, %d rows, %d bad, %d failed, %d exact: %s", rc, rows, bad, failed, exact_ok, out);
    else
      CHECK(rc == 1 && a && rows == 6 && bad == 0 && failed == 6 && strstr(out, "beyond double range"),
            "cli: scores beyond double range fail with a message, never NaN/Inf with status 0",
            "rc %d, %d rows, %d bad, %d failed: %s", rc, rows, bad, failed, out);
    free(a);
  }
  /* values whose Attn is finite (~1e200) but whose norm is not: the measure is an error that
   * reaches the rows, the summary and the exit status (it was NaN with status 0 and exit 0) */
  for (int i = 0; i < 16; i++) {
    Q[i] = 1e-3 * (i + 1);
    K[i] = 1e-3 * (i % 3);
    V[i] = 1e200 * (1 + 0.1 * (i % 4));
  }
  kvb_npy_write(pq, Q, 2, (size_t[]){8, 2}, "<f8", 1);
  kvb_npy_write(pk, K, 2, (size_t[]){8, 2}, "<f8", 1);
  kvb_npy_write(pv, V, 2, (size_t[]){8, 2}, "<f8", 1);
  int rc;
  snprintf(text, sizeof text, "stream \"npy\" { q = \"%s\", k = \"%s\", v = \"%s\" }\n"
           "method \"exact\" {}\nmethod \"uniform_sample\" {}\nmeasures { \"all\" }\n", pq, pk, pv);
  char *a = run_spec("ovf_values", text, &rc, out, sizeof out);
  int st = a ? csv_column(a, "status") : -1, ok_rows = 0, rows = 0;
  for (const char *l = a ? strchr(a, '\n') : NULL; l && l[1]; l = strchr(l + 1, '\n')) {
    char fs[16];
    csv_field(l + 1, st, fs, sizeof fs);
    rows++, ok_rows += strcmp(fs, "0") == 0;
  }
  CHECK(rc == 1 && a && rows > 0 && ok_rows == 0 && strstr(out, "outside double range") &&
            strstr(out, "rows failed"),
        "cli: a measure outside double range (‖Attn‖ of values ~1e200) fails its rows, the summary "
        "and the exit status", "rc %d, %d rows, %d with status 0: %s", rc, rows, ok_rows, out);
  free(a);
}

/* ---- the runner's reliability ---- */

static void reliability(void) {
  char cmd[4096], out[16384], path[256], spec[128];
  int rc;
  /* the trial-count product is overflow-checked: 2^64 points does not wrap to 0 */
  const char *hdr = "stream \"gaussian\" { n = 16, d_key = 2, d_value = 2 }\nmethod \"exact\" {}\n"
                    "local v = {} for i = 1, 65536 do v[i] = i end\n"
                    "local w = {} for i = 1, 16384 do w[i] = i end\n";
  char text[2048];
  snprintf(text, sizeof text, "%ssweep { key_sigma = v }\nsweep \"query_sigma\" (v)\n"
           "sweep \"value_sigma\" (v)\nsweep \"n\" (v)\n", hdr);
  char *a = run_spec("wrap64", text, &rc, out, sizeof out);
  CHECK(rc == 2 && !a && strstr(out, "1.845e+19 trials") && strstr(out, "limit of 1e8"),
        "cli: 2^64 sweep points are refused, not wrapped to an empty run", "rc %d: %s", rc, out);
  free(a);
  /* 2^62 points x 4 trials = 2^64: a wrapped product must not pass the 1e8 cap */
  snprintf(text, sizeof text, "%ssweep { key_sigma = v }\nsweep \"query_sigma\" (v)\n"
           "sweep \"value_sigma\" (v)\nsweep \"n\" (w)\ntrials(4)\n", hdr);
  a = run_spec("wrapprod", text, &rc, out, sizeof out);
  CHECK(rc == 2 && !a && strstr(out, "1.845e+19 trials"),
        "cli: points x trials that wraps to 0 is refused", "rc %d: %s", rc, out);
  free(a);
  /* --out that is a file: reported before any trial runs */
  snprintf(path, sizeof path, "%s/afile", tmp);
  write_file(path, "x");
  snprintf(spec, sizeof spec, "%s/tiny.lua", tmp);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s --jobs 1", kvbound, spec, path);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "is a file, not a directory") && !strstr(out, "rel_error"),
        "cli: --out naming a file is refused before any trial", "rc %d: %s", rc, out);
  /* --out holding another spec's results: refused before any trial, unless --force, which
   * removes the old plots (j1 holds tiny's results and its plot e.png) */
  snprintf(spec, sizeof spec, "%s/other.lua", tmp);
  write_file(spec, "name \"other\"\nstream \"gaussian\" { n = 16, d_key = 2, d_value = 2 }\n"
                   "method \"exact\" {}\n");
  snprintf(path, sizeof path, "%s/j1/results.csv", tmp);
  char *before = read_file(path);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/j1 --jobs 1", kvbound, spec, tmp);
  rc = sh(cmd, out, sizeof out);
  char *after = read_file(path);
  CHECK(rc == 2 && strstr(out, "holds the results of another spec ('tiny'") && strstr(out, "--force") &&
            before && after && strcmp(before, after) == 0 && !strstr(out, "rel_error"),
        "cli: --out holding another spec's results is refused before any trial", "rc %d: %s", rc, out);
  free(after);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/j1 --jobs 1 --force", kvbound, spec, tmp);
  rc = sh(cmd, out, sizeof out);
  char png[256];
  snprintf(png, sizeof png, "%s/j1/e.png", tmp);
  after = read_file(path);
  CHECK(rc == 0 && access(png, F_OK) != 0 && after && strcmp(before, after) != 0,
        "cli: --force replaces another spec's results and removes its plots", "rc %d, e.png %s: %s",
        rc, access(png, F_OK) == 0 ? "still there" : "removed", out);
  free(before);
  free(after);
  /* a write that fails half way (file size limit) leaves the previous complete run as it was,
   * and no partial results.csv: outputs are temporary files until all are whole */
  snprintf(spec, sizeof spec, "%s/tiny.lua", tmp);
  snprintf(path, sizeof path, "%s/j3/results.csv", tmp);
  before = read_file(path);
  char meta[256];
  snprintf(meta, sizeof meta, "%s/j3/meta.json", tmp);
  char *mb = read_file(meta);
  snprintf(cmd, sizeof cmd, "sh -c 'trap \"\" XFSZ; ulimit -f 4; %s run %s --out %s/j3 --jobs 1 --seed 9'",
           kvbound, spec, tmp);
  rc = sh(cmd, out, sizeof out);
  after = read_file(path);
  char *ma = read_file(meta);
  snprintf(cmd, sizeof cmd, "ls -a %s/j3 | grep -c tmp", tmp);
  char ls[64];
  sh(cmd, ls, sizeof ls);
  CHECK(rc == 1 && before && after && strcmp(before, after) == 0 && mb && ma && strcmp(mb, ma) == 0 &&
            atoi(ls) == 0 && strstr(out, "write error"),
        "cli: an output write failing half way leaves the previous run whole and no partial file",
        "rc %d, results %s, meta %s, %s temp files: %s", rc,
        before && after && !strcmp(before, after) ? "kept" : "changed",
        mb && ma && !strcmp(mb, ma) ? "kept" : "changed", ls, out);
  free(before);
  free(after);
  free(mb);
  free(ma);
  /* a spec re-run into its own directory is no conflict; the run hints at kvbound plot */
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/j3 --jobs 1", kvbound, spec, tmp);
  rc = sh(cmd, out, sizeof out);
  char hint[256];
  snprintf(hint, sizeof hint, "kvbound plot %s/j3", tmp);
  CHECK(rc == 0 && strstr(out, hint), "cli: a re-run into the spec's own directory works and hints "
        "`kvbound plot DIR`", "rc %d: %s", rc, out);
}

/* ---- safety ---- */

static void sandbox(void) {
  const char *hdr = "stream \"gaussian\" { n = 16, d_key = 2, d_value = 2 }\nmethod \"exact\" {}\n";
  char t[1024];
  const char *absent[] = {"os", "io", "require", "package", "debug", "load", "loadfile", "dofile",
                          "string.dump", "collectgarbage", "xpcall"};
  for (int i = 0; i < 11; i++) {
    snprintf(t, sizeof t, "%sassert(%s == nil, \"%s is reachable\")\n", hdr, absent[i], absent[i]);
    char out[4096], name[96];
    int rc;
    char *a = run_spec("sandbox", t, &rc, out, sizeof out);
    snprintf(name, sizeof name, "cli: a spec cannot reach %s", absent[i]);
    CHECK(rc == 0 && a, name, "rc %d: %s", rc, out);
    free(a);
  }
  snprintf(t, sizeof t, "%smath.floor(string.rep(\"x\", 3):len() + #table.concat({1, 2}))\n", hdr);
  char out[16384];
  int rc;
  char *a = run_spec("sandbox_ok", t, &rc, out, sizeof out);
  CHECK(rc == 0 && a, "cli: a spec may use base, math, string and table", "rc %d: %s", rc, out);
  free(a);
  /* a runaway spec is stopped with its file:line within a few seconds */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  snprintf(t, sizeof t, "%slocal i = 0\nwhile true do\n  i = i + 1\nend\n", hdr);
  bad_spec("endless loop", t, "5", "the spec ran for more than 5 s and was stopped");
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("# runaway spec stopped after %.2f s\n", secs);
  CHECK(secs < 8, "cli: a runaway spec is stopped within 8 s", "%.2f s", secs);
  /* the limit cannot be caught: loops under pcall, xpcall and nested pcalls end too */
  const char *caught[] = {
      "local function spin() while true do end end\nwhile true do pcall(spin) end\n",
      "local e = setmetatable({}, {__tostring = function() while true do end end})\n"
      "while true do pcall(error, e) end\n",
      "local function spin() while true do end end\n"
      "pcall(function() while true do pcall(function() while true do pcall(spin) end end) end end)\n"
      "while true do end\n"};
  const char *caught_line[] = {"4", "4", "5"};
  for (int i = 0; i < 3; i++) {
    clock_gettime(CLOCK_MONOTONIC, &t0);
    snprintf(t, sizeof t, "%s%s", hdr, caught[i]);
    char label[64];
    snprintf(label, sizeof label, "endless loop under pcall (%d)", i);
    bad_spec(label, t, caught_line[i], "was stopped");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK(secs < 8, "cli: a runaway spec under pcall is stopped within 8 s", "case %d: %.2f s", i, secs);
  }
  /* an error object whose __tostring loops is never converted by the message handler */
  snprintf(t, sizeof t, "%serror(setmetatable({}, {__tostring = function() while true do end end}))\n", hdr);
  {
    char spec[128], cmd[1024], o2[2048];
    snprintf(spec, sizeof spec, "%s/tostring.lua", tmp);
    write_file(spec, t);
    snprintf(cmd, sizeof cmd, "{ timeout 20 %s run %s --out %s/tostring; echo rc=$?; } 2>&1", kvbound,
             spec, tmp);
    sh(cmd, o2, sizeof o2);
    CHECK(strstr(o2, "error object is a table value") && strstr(o2, "rc=2"),
          "cli: an error object with a looping __tostring is named by its type, not converted",
          "%s", o2);
  }
  /* a long library call cannot be interrupted from inside Lua: the backstop ends the process */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  snprintf(t, sizeof t, "%swhile true do string.find(string.rep(\"a\", 100000), "
           "\".-.-.-.-.-.-.-.-.-b\") end\n", hdr);
  {
    char spec[128], cmd[1024], o2[2048];
    snprintf(spec, sizeof spec, "%s/longcall.lua", tmp);
    write_file(spec, t);
    snprintf(cmd, sizeof cmd, "{ %s run %s --out %s/longcall; echo rc=$?; } 2>&1", kvbound, spec, tmp);
    sh(cmd, o2, sizeof o2);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    CHECK(strstr(o2, "past its time limit inside a library call") && strstr(o2, "rc=2") && secs < 12,
          "cli: a long library call past the limit ends the process (the backstop)", "%.1f s: %s",
          secs, o2);
  }
  /* finalizers run with hooks off (at a collection, at lua_close): refused when declared */
  snprintf(t, sizeof t, "%ssetmetatable({}, {__gc = function() while true do end end})\n", hdr);
  bad_spec("a __gc finalizer", t, "3", "a __gc finalizer is not allowed");
  snprintf(t, sizeof t, "%slocal mt = {__gc = true}\nlocal x = setmetatable({}, mt)\n"
           "mt.__gc = function() while true do end end\n", hdr);
  bad_spec("a __gc placeholder", t, "4", "a __gc finalizer is not allowed");
  /* readers read tables raw: metamethods cannot re-enter a reader between its check and its
   * write (the sweep table, the query positions) */
  snprintf(t, sizeof t, "%slocal n = 0\nlocal l = setmetatable({}, {__len = function() return 4 end,\n"
           "  __index = function(_, i) n = n + 1; sweep { a = {1}, b = {2}, c = {3}, d = {4} }; return i end})\n"
           "sweep \"T\" (l)\n", hdr);
  bad_spec("a sweep list with metamethods", t, "6", "expected a non-empty list of numbers");
  snprintf(t, sizeof t, "%slocal l = setmetatable({}, {__index = function(_, i) queries { at = {1, 2, 3} }; "
           "return i end})\nqueries { at = l }\n", hdr);
  bad_spec("query positions with metamethods", t, "4", "'at' must list 1 to");
  snprintf(t, sizeof t, "%slocal s = setmetatable({}, {__index = function(_, k) return {1, 2} end})\n"
           "queries(setmetatable({}, {__index = function() return 5 end}))\n"
           "measures(setmetatable({}, {__len = function() return 1 end, __index = function() return \"error\" end}))\n", hdr);
  bad_spec("measures with metamethods", t, "5", "measures: expected a non-empty list");
  snprintf(t, sizeof t, "%slocal s = \"x\"\nwhile true do s = s .. s end\n", hdr);
  bad_spec("memory cap", t, "", "more than 256 MiB");
  snprintf(t, sizeof t, "%splot { name = \"p\", x = \"j\", y = \"rel_error\", bound = \"system('touch %s/pwned')\" }\n",
           hdr, tmp);
  bad_spec("system() in a bound", t, "3", "'system' is not allowed");
  snprintf(t, sizeof t, "%splot { name = \"p\", x = \"j\", y = \"rel_error\", bound2 = \"1; print 2\" }\n", hdr);
  bad_spec("';' in a bound", t, "3", "character ';' is not allowed");
  snprintf(t, sizeof t, "%splot { name = \"p\", x = \"j\", y = \"rel_error\", bound = \"sqrt(27*exp(16)*log(400*4)/x) + 2**x - pi\" }\n", hdr);
  a = run_spec("bound_ok", t, &rc, out, sizeof out);
  CHECK(rc == 0 && a, "cli: a bound of numbers, x, pi, operators and math functions is accepted",
        "rc %d: %s", rc, out);
  free(a);
  /* kvbound plot on a directory someone else wrote: a tampered bound is refused and never
   * runs; a backquoted title is drawn as text, not executed */
  char path[256], cmd[2048], pwned[256];
  snprintf(pwned, sizeof pwned, "%s/pwned", tmp);
  snprintf(path, sizeof path, "%s/bound_ok/plots.tsv", tmp);
  snprintf(t, sizeof t, "# header\np\tj\trel_error\t0\t0\t1\tsystem(\"touch %s\")\tb\t-\t-\t-\t-\t-\t-\n", pwned);
  write_file(path, t);
  snprintf(cmd, sizeof cmd, "%s plot %s/bound_ok", kvbound, tmp);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 1 && strstr(out, "refused") && access(pwned, F_OK) != 0,
        "cli: kvbound plot refuses a tampered bound and runs nothing", "rc %d: %s", rc, out);
  snprintf(t, sizeof t, "# header\np\tj\trel_error\t0\t0\t1\tx\t`touch %s`\t`touch %s` it's\t-\t-\t-\t-\t-\n",
           pwned, pwned);
  write_file(path, t);
  rc = sh(cmd, out, sizeof out);
  snprintf(path, sizeof path, "%s/bound_ok/p.gp", tmp);
  char *gp = read_file(path);
  CHECK(rc == 0 && access(pwned, F_OK) != 0 && gp && strstr(gp, "'`touch ") && strstr(gp, "it''s"),
        "cli: titles reach gnuplot single-quoted (backquotes not executed)", "rc %d: %s\n%s", rc, out,
        gp ? gp : "");
  free(gp);
}

/* Links planted in an output directory never make a run or a plot write outside it: links at
 * the temporary names the old code used (DIR/.NAME.tmp.PID, the pid known through exec) and at
 * every final name. Temporary files are created exclusively under unpredictable names
 * (src/app/out_file.h) and renamed over the final names, which replaces a link, not its target. */
static void planted_links(void) {
  char spec[256], dir[256], cmd[4096], out[8192], target[256];
  snprintf(spec, sizeof spec, "%s/links.lua", tmp);
  write_file(spec, "stream \"gaussian\" { n = 32, d_key = 2, d_value = 2 }\nmethod \"exact\" {}\n"
                   "plot { name = \"p\", x = \"j\", y = \"rel_error\" }\n");
  snprintf(dir, sizeof dir, "%s/links", tmp);
  snprintf(target, sizeof target, "%s/outside", tmp);
  static const char *const names[] = {"results.csv", "meta.json", "summary.txt", "summary.md",
                                      "quantiles.csv", "plots.tsv", "p.dat", "p.gp", "p.png",
                                      "p.svg", NULL};
  char links[2048] = "";
  for (int i = 0; names[i]; i++)
    snprintf(links + strlen(links), sizeof links - strlen(links),
             "ln -s %s.%d %s/.%s.tmp.$$; ln -s %s.%d %s/.%s.tmp.$$.%s; ", target, i, dir,
             names[i], target, i, dir, names[i], i < 6 ? "x" : "y");
  snprintf(cmd, sizeof cmd, "mkdir -p %s && sh -c '%s exec %s run %s --out %s --jobs 1' && "
           "sh -c '%s exec %s plot %s'", dir, links, kvbound, spec, dir, links, kvbound, dir);
  int rc = sh(cmd, out, sizeof out);
  snprintf(cmd, sizeof cmd, "ls %s.* 2>/dev/null | wc -l", target);
  char ls[64];
  sh(cmd, ls, sizeof ls);
  CHECK(rc == 0 && atoi(ls) == 0, "cli: links planted at temporary names are never followed by "
        "run or plot", "rc %d, %s files written outside the directory: %s", rc, ls, out);
  /* links at the final names are replaced, their targets left alone */
  snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && for f in results.csv meta.json p.png; do "
           "ln -s %s.final $dir%s/$f; done && %s run %s --out %s --jobs 1 --force && %s plot %s",
           dir, dir, target, dir, kvbound, spec, dir, kvbound, dir);
  rc = sh(cmd, out, sizeof out);
  snprintf(cmd, sizeof cmd, "ls %s.final 2>/dev/null | wc -l", target);
  sh(cmd, ls, sizeof ls);
  CHECK(atoi(ls) == 0, "cli: links at the final output names are replaced, not written through",
        "rc %d, target %s: %s", rc, atoi(ls) ? "written" : "untouched", out);
}

/* A path longer than the runner's limit is refused with the limit named, for run, plot and
 * merge alike, never cut short so that results land elsewhere. */
static void long_paths(void) {
  char spec[256], dir[1200], cmd[4096], out[4096];
  snprintf(spec, sizeof spec, "%s/long.lua", tmp);
  write_file(spec, "stream \"gaussian\" { n = 16, d_key = 2, d_value = 2 }\nmethod \"exact\" {}\n");
  int n = snprintf(dir, sizeof dir, "%s/", tmp);
  while (n < 900) dir[n++] = 'd';
  dir[n] = 0;
  const char *forms[3] = {"%s run %s --out %s", "%s plot %.0s%s", "%s merge %s --out %s"};
  for (int i = 0; i < 3; i++) {
    char fmt[128];
    snprintf(fmt, sizeof fmt, "{ %s; } 2>&1; echo rc=$?; ls -d %s/dd* 2>/dev/null | wc -l",
             forms[i], tmp);
    snprintf(cmd, sizeof cmd, fmt, kvbound, spec, dir);
    int rc = sh(cmd, out, sizeof out);
    char name[96];
    snprintf(name, sizeof name, "cli: %s refuses a %d-byte directory path, naming the limit",
             i == 0 ? "run" : i == 1 ? "plot" : "merge", n);
    /* exit 2 (usage) for run, 1 for plot and merge; nothing created */
    CHECK(rc == 0 && strstr(out, "the limit is 800") && !strstr(out, "rc=0") &&
              strstr(out, "\n0\n"), name, "%s", out);
  }
}

/* One writer per output directory: a second run into a directory a run is writing stops
 * before any trial with a clear error (two runs could replace each other's results and plots);
 * once the first has ended the directory is free again. */
static void one_writer(void) {
  char spec[256], dir[256], cmd[4096], out[4096];
  snprintf(spec, sizeof spec, "%s/slow.lua", tmp);
  write_file(spec, "stream \"gaussian\" { n = 2048, d_key = 8, d_value = 8 }\nmethod \"exact\" {}\n"
                   "trials(100000)\n");
  snprintf(dir, sizeof dir, "%s/locked", tmp);
  /* the first run holds the lock from before its first trial; the second waits 1 s for it */
  snprintf(cmd, sizeof cmd, "{ %s run %s --out %s --jobs 1 >/dev/null 2>&1 & p=$!; sleep 1; "
           "%s run %s --out %s --jobs 1; echo rc=$?; kill $p; wait $p 2>/dev/null; "
           "%s run %s --out %s --jobs 1 >/dev/null 2>&1 & p=$!; sleep 1; kill $p; wait $p; "
           "echo first_free=$?; } 2>&1", kvbound, spec, dir, kvbound, spec, dir, kvbound, spec, dir);
  sh(cmd, out, sizeof out);
  CHECK(strstr(out, "is being written by another kvbound run") && strstr(out, "rc=2") &&
            !strstr(out, "first_free=2"),
        "cli: a second run into a directory being written stops with a clear error; the lock "
        "ends with the run", "%s", out);
}

/* Every file read whole is a regular file within a stated size (src/core/read_file.h): a link
 * to /dev/zero as a spec, a .npy or a shard's rows is refused at once, a spec over 1 MiB or
 * holding a NUL byte is refused with the reason. */
static void bounded_reads(void) {
  char cmd[4096], out[4096];
  snprintf(cmd, sizeof cmd, "{ ln -sf /dev/zero %s/zero.lua; timeout 20 %s run %s/zero.lua --out %s/zo; "
           "echo rc=$?; } 2>&1", tmp, kvbound, tmp, tmp);
  sh(cmd, out, sizeof out);
  CHECK(strstr(out, "not a regular file") && strstr(out, "rc=2"),
        "cli: a spec that is a link to /dev/zero is refused at once", "%s", out);
  snprintf(cmd, sizeof cmd, "{ head -c 1048600 /dev/zero | tr '\\0' ' ' > %s/huge.lua; "
           "%s run %s/huge.lua --out %s/ho; echo rc=$?; } 2>&1", tmp, kvbound, tmp, tmp);
  sh(cmd, out, sizeof out);
  CHECK(strstr(out, "more than the limit of 1048576") && strstr(out, "rc=2"),
        "cli: a spec over 1 MiB is refused with the limit named", "%s", out);
  snprintf(cmd, sizeof cmd, "{ printf 'stream \"gaussian\" { n = 8 }\\n\\000method \"exact\" {}\\n' > "
           "%s/nul.lua; %s run %s/nul.lua --out %s/no; echo rc=$?; } 2>&1", tmp, kvbound, tmp, tmp);
  sh(cmd, out, sizeof out);
  CHECK(strstr(out, "NUL byte at offset") && strstr(out, "rc=2"),
        "cli: a spec holding a NUL byte is refused, not cut short", "%s", out);
  char spec[256];
  snprintf(spec, sizeof spec, "%s/zeronpy.lua", tmp);
  snprintf(cmd, sizeof cmd, "stream \"npy\" { q = \"%s/z.npy\", k = \"%s/z.npy\", v = \"%s/z.npy\" }\n"
           "method \"exact\" {}\n", tmp, tmp, tmp);
  write_file(spec, cmd);
  snprintf(cmd, sizeof cmd, "{ ln -sf /dev/zero %s/z.npy; timeout 20 %s run %s --out %s/zn; echo rc=$?; } 2>&1",
           tmp, kvbound, spec, tmp);
  sh(cmd, out, sizeof out);
  CHECK(strstr(out, "not a regular file") && !strstr(out, "rc=0") && !strstr(out, "rc=124"),
        "cli: a .npy that is a link to /dev/zero is refused at once", "%s", out);
  /* a shard whose rows.tsv is a link to /dev/zero: the merge refuses it at once */
  snprintf(spec, sizeof spec, "%s/sh.lua", tmp);
  write_file(spec, "stream \"gaussian\" { n = 16, d_key = 2, d_value = 2 }\nmethod \"exact\" {}\ntrials(2)\n");
  snprintf(cmd, sizeof cmd, "{ %s run %s --shard 0/1 --out %s/s0 >/dev/null && ln -sf /dev/zero "
           "%s/s0/rows.tsv && timeout 20 %s merge %s/s0 --out %s/sm; echo rc=$?; } 2>&1",
           kvbound, spec, tmp, tmp, kvbound, tmp, tmp);
  sh(cmd, out, sizeof out);
  CHECK(strstr(out, "not a regular file") && strstr(out, "rc=1"),
        "cli: merge refuses a shard whose rows are a link to /dev/zero, at once", "%s", out);
}

/* The merge verifies what each shard.json commits to (row count, a digest of rows.tsv bound to
 * spec hash, seed and shard): edited values, a duplicated row with its count fixed up, rows
 * copied from another seed's shard, a forged seed and a digest changed in its last hex digit
 * only are refused; an untouched shard merges. */
static void merge_verifies(void) {
  char spec[256], cmd[8192], out[4096], kb[1024], cwd[512];
  /* the commands cd into tmp: the command's path made absolute */
  if (kvbound[0] == '/' || !getcwd(cwd, sizeof cwd)) snprintf(kb, sizeof kb, "%s", kvbound);
  else snprintf(kb, sizeof kb, "%s/%s", cwd, kvbound);
  snprintf(spec, sizeof spec, "%s/mv.lua", tmp);
  write_file(spec, "stream \"gaussian\" { n = 16, d_key = 2, d_value = 2 }\nmethod \"exact\" {}\n"
                   "method \"uniform_sample\" {}\ntrials(4)\n");
  snprintf(cmd, sizeof cmd, "cd %s && for s in 1 2; do for i in 0 1; do %s run mv.lua --shard $i/2 "
           "--seed $s --out mv$s-$i >/dev/null || exit 1; done; done && %s merge mv1-0 mv1-1 --out mvok",
           tmp, kb, kb);
  int rc = sh(cmd, out, sizeof out);
  CHECK(rc == 0, "cli: untouched shards merge", "rc %d: %s", rc, out);
  const char *tamper[5][2] = {
      {"edited value", "sed -i '2s/\\t0x[0-9a-f.p+-]*/\\t0x1p+0/' mvt-1/rows.tsv"},
      {"duplicated row, count fixed up",
       "sed -n 2p mvt-1/rows.tsv >> mvt-1/rows.tsv && n=$(grep -o '\"rows\": \"[0-9]*' mvt-1/shard.json "
       "| grep -o '[0-9]*$') && sed -i \"s/\\\"rows\\\": \\\"$n\\\"/\\\"rows\\\": \\\"$((n+1))\\\"/\" mvt-1/shard.json"},
      {"rows of another seed", "cp mv2-1/rows.tsv mvt-1/rows.tsv"},
      {"forged seed", "sed -i 's/\"seed\": \"1\"/\"seed\": \"2\"/' mvt-1/shard.json mvt-0/shard.json"},
      /* the digest's last hex digit only: every one of the 16 digits is compared */
      {"its digest's last hex digit changed",
       "d=$(grep -o '\"rows_digest\": \"[0-9a-f]*' mvt-1/shard.json | grep -o '[0-9a-f]*$') && "
       "l=${d#???????????????} && if [ \"$l\" = 0 ]; then n=1; else n=0; fi && "
       "sed -i \"s/$d/${d%?}$n/\" mvt-1/shard.json && ! grep -q \"$d\" mvt-1/shard.json"}};
  for (int i = 0; i < 5; i++) {
    snprintf(cmd, sizeof cmd, "{ cd %s && rm -rf mvt-0 mvt-1 && cp -r mv1-0 mvt-0 && cp -r mv1-1 mvt-1 && "
             "%s && %s merge mvt-0 mvt-1 --out mvbad%d --force; echo rc=$?; } 2>&1", tmp,
             tamper[i][1], kb, i);
    sh(cmd, out, sizeof out);
    char name[128];
    snprintf(name, sizeof name, "cli: merge refuses a shard with %s", tamper[i][0]);
    CHECK(strstr(out, "rc=1") && (strstr(out, "does not match the digest") || strstr(out, "rows, but shard.json")),
          name, "%s", out);
  }
}

/* Small refusals: a spec name that would make out/NAME the working directory or its parent; a
 * seed with a sign or beyond 2^64 − 1 (it was clamped or wrapped); a kvb-props --only prefix
 * that selects nothing (it ran nothing and passed). */
static void small_refusals(void) {
  char cmd[4096], out[4096], spec[256];
  snprintf(spec, sizeof spec, "%s/dots.lua", tmp);
  write_file(spec, "name \"..\"\nstream \"gaussian\" { n = 8 }\nmethod \"exact\" {}\n");
  snprintf(cmd, sizeof cmd, "cd %s && { %s run dots.lua; echo rc=$?; } 2>&1", tmp, kvbound[0] == '/' ? kvbound : "false");
  if (kvbound[0] != '/') {
    char cwd[512];
    if (getcwd(cwd, sizeof cwd))
      snprintf(cmd, sizeof cmd, "cd %s && { %s/%s run dots.lua; echo rc=$?; } 2>&1", tmp, cwd, kvbound);
  }
  sh(cmd, out, sizeof out);
  CHECK(strstr(out, "must not begin with '.'") && strstr(out, "rc=2"),
        "cli: a spec named '..' is refused (out/.. is the working directory)", "%s", out);
  snprintf(spec, sizeof spec, "%s/seeded.lua", tmp);
  write_file(spec, "stream \"gaussian\" { n = 8 }\nmethod \"exact\" {}\n");
  const char *seeds[3] = {"-1", "18446744073709551616", "+3"};
  for (int i = 0; i < 3; i++) {
    snprintf(cmd, sizeof cmd, "{ %s run %s --seed %s --out %s/seeded; echo rc=$?; } 2>&1", kvbound,
             spec, seeds[i], tmp);
    sh(cmd, out, sizeof out);
    char name[96];
    snprintf(name, sizeof name, "cli: --seed %s is refused, not clamped", seeds[i]);
    CHECK(strstr(out, "--seed needs a non-negative integer") && strstr(out, "rc=2"), name, "%s", out);
  }
  char props[1024];
  snprintf(props, sizeof props, "%s", kvbound);
  char *slash = strrchr(props, '/');
  snprintf(slash ? slash + 1 : props, sizeof props - (size_t)(slash ? slash + 1 - props : 0), "kvb-props");
  snprintf(cmd, sizeof cmd, "{ %s --only no.such.claim --no-mutants; echo rc=$?; } 2>&1", props);
  sh(cmd, out, sizeof out);
  CHECK(strstr(out, "matches no claim") && strstr(out, "rc=2"),
        "cli: kvb-props --only with a prefix that matches nothing is an error", "%s", out);
}

int main(int argc, char **argv) {
  (void)argc;
  /* argv[0] is B/tests/test_cli_spec; the command is B/kvbound */
  if (cli_harness_init(argv[0], "/tmp/kvb-cli-XXXXXX", "cli")) return 1;
  valid_spec();
  threads_identical();
  spec_errors();
  help_and_list();
  npy_spec();
  probe_spec();
  decode_spec();
  zip_spec();
  measures_outputs();
  errors_reach_user();
  overflow_spec();
  reliability();
  sandbox();
  planted_links();
  long_paths();
  one_writer();
  bounded_reads();
  merge_verifies();
  small_refusals();
  char cmd[128], out[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  sh(cmd, out, sizeof out);
  UNIT_EXIT();
}

/* test_cli_spec.c — the kvbound command end to end (issue 5 items 1-2): a valid spec writes
 * results.csv, meta.json and the summary; results do not depend on --jobs; --seed selects the
 * substreams; spec errors name file:line and what was expected; the "npy" stream works from a
 * spec. Runs the kvbound binary next to this test's directory (B/tests/.. = B). */
#include "kvbound.h"
#include "unit.h"
#include "index_reduction.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char kvbound[512], tmp[64];

/* Runs a shell command, capturing stdout+stderr into out; returns the exit status. */
static int sh(const char *cmd, char *out, size_t cap) {
  char full[4096];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = '\0';
  int ws = pclose(p);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b) {
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
  }
  fclose(f);
  return b;
}

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
  CHECK(rc == 2 && strstr(out, "cannot read"), "cli: a missing spec file is an error", "rc %d: %s",
        rc, out);
  snprintf(cmd, sizeof cmd, "%s run --jobs 0 x.lua", kvbound);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "--jobs"), "cli: --jobs 0 is a usage error", "rc %d: %s", rc, out);
}

/* Field idx (0-based) of a CSV line into buf. */
static void csv_field(const char *line, int idx, char *buf, size_t cap) {
  for (int i = 0; i < idx && line; i++) {
    line = strchr(line, ',');
    if (line) line++;
  }
  size_t n = 0;
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

int main(int argc, char **argv) {
  (void)argc;
  /* argv[0] is B/tests/test_cli_spec; the command is B/kvbound */
  snprintf(kvbound, sizeof kvbound, "%s", argv[0]);
  char *sl = strrchr(kvbound, '/');
  if (sl) *sl = '\0';
  sl = strrchr(kvbound, '/');
  if (sl)
    strcpy(sl + 1, "kvbound");
  else
    snprintf(kvbound, sizeof kvbound, "../kvbound");
  snprintf(tmp, sizeof tmp, "/tmp/kvb-cli-XXXXXX");
  if (!mkdtemp(tmp)) {
    CHECK(0, "cli: temp dir", "mkdtemp failed");
    UNIT_EXIT();
  }
  if (access(kvbound, X_OK) != 0) {
    CHECK(0, "cli: kvbound binary present", "%s not executable", kvbound);
    UNIT_EXIT();
  }
  valid_spec();
  spec_errors();
  help_and_list();
  npy_spec();
  probe_spec();
  decode_spec();
  zip_spec();
  char cmd[128], out[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  sh(cmd, out, sizeof out);
  UNIT_EXIT();
}

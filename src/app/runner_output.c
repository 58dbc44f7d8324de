/* runner_output.c — writing every output format of a run: results.csv, summary.{txt,md} with
 * quantiles.csv, the failed rows' messages, plots.tsv and meta.json (runner.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "runner_output.h"
#include "runner_stage.h"

#include "measures.h"
#include "plugin.h"
#include "probe.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", f);
    else if (c == '\t')
      fputs("\\t", f);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* The parameters sorted by name: the spec's Lua table hands them over in its hash order, which
 * differs from one Lua state to the next, and meta.json must be the same for the same spec. */
static void params_str(const kvb_params *p, char *buf, size_t cap) {
  size_t o = 0, ord[KVB_PARAMS_MAX];
  buf[0] = '\0';
  size_t n = p->n < KVB_PARAMS_MAX ? p->n : KVB_PARAMS_MAX;
  for (size_t i = 0; i < n; i++) { /* insertion sort by name: a handful of parameters */
    size_t k = i;
    for (; k > 0 && strcmp(p->items[ord[k - 1]].name, p->items[i].name) > 0; k--) ord[k] = ord[k - 1];
    ord[k] = i;
  }
  for (size_t i = 0; i < n && o < cap; i++) {
    const kvb_param *it = &p->items[ord[i]];
    int w = it->is_string ? snprintf(buf + o, cap - o, "%s%s=%s", i ? " " : "", it->name, it->str)
                          : snprintf(buf + o, cap - o, "%s%s=%.17g", i ? " " : "", it->name, it->num);
    if (w < 0) break;
    o += (size_t)w;
  }
}

/* 64-bit FNV-1a of the spec text, recorded in meta.json. */
uint64_t runner_text_hash(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* The opening of meta.json and shard.json, up to the spec hash's closing quote: kvbound version,
 * spec name, path, real path (real_given, else computed) and hash, which prepare_out and the
 * merge read back. */
void runner_json_spec(FILE *f, const kvb_experiment *e, const char *real_given) {
  char real[4096];
  fprintf(f, "{\n  \"kvbound_version\": \"%s\",\n  \"name\": ", KVBOUND_VERSION);
  json_str(f, e->name);
  fprintf(f, ",\n  \"spec_path\": ");
  json_str(f, e->spec_path);
  fprintf(f, ",\n  \"spec_realpath\": ");
  json_str(f, real_given ? real_given : realpath(e->spec_path, real) ? real : e->spec_path);
  fprintf(f, ",\n  \"spec_hash\": \"%016llx\"", (unsigned long long)runner_text_hash(e->spec_text));
}

/* real: the spec's real path to record (a merge records the shards' own), NULL: computed. */
static int write_meta(const kvb_experiment *e, FILE *f, int jobs, size_t units, size_t rows,
                      size_t failed, double wall, const char *real_given) {
  struct utsname un;
  memset(&un, 0, sizeof un);
  uname(&un);
  char when[64];
  time_t t = time(NULL);
  struct tm tmv;
  gmtime_r(&t, &tmv);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  runner_json_spec(f, e, real_given);
  fprintf(f, ",\n  \"failed_rows\": %zu", failed);
  fprintf(f, ",\n  \"seed\": %llu,\n  \"trials\": %zu,\n  \"sweep_points\": %zu,\n"
             "  \"units\": %zu,\n  \"rows\": %zu,\n  \"jobs\": %d,\n  \"wall_seconds\": %.3f,\n"
             "  \"finished_utc\": \"%s\",\n",
          (unsigned long long)e->seed, e->trials, kvb_experiment_points(e), units, rows, jobs,
          wall, when);
  fprintf(f, "  \"machine\": {\"sysname\": ");
  json_str(f, un.sysname);
  fprintf(f, ", \"release\": ");
  json_str(f, un.release);
  fprintf(f, ", \"version\": ");
  json_str(f, un.version);
  fprintf(f, ", \"machine\": ");
  json_str(f, un.machine);
  fprintf(f, ", \"cores\": %ld},\n", sysconf(_SC_NPROCESSORS_ONLN));
  if (e->scale > 0)
    fprintf(f, "  \"scale\": %.17g,\n", e->scale);
  else
    fprintf(f, "  \"scale\": \"1/sqrt(d_key)\",\n");
  const char *kinds[2] = {"streams", "methods"};
  for (int k = 0; k < 2; k++) {
    const kvb_run_item *items = k ? e->methods : e->streams;
    size_t n = k ? e->nmethods : e->nstreams;
    fprintf(f, "  \"%s\": [", kinds[k]);
    for (size_t i = 0; i < n; i++) {
      char ps[2048];
      params_str(&items[i].params, ps, sizeof ps);
      fprintf(f, "%s{\"label\": ", i ? ", " : "");
      json_str(f, items[i].label);
      fprintf(f, ", \"type\": ");
      json_str(f, items[i].type);
      fprintf(f, ", \"params\": ");
      json_str(f, ps);
      /* a method from outside the tree names where it came from (the plugin's real path, so
       * the run can be repeated with the same library); built-ins add nothing */
      const kvb_method_type *mt = k ? kvb_method_lookup(items[i].type) : NULL;
      const char *origin = mt ? kvb_method_origin(mt) : NULL;
      if (origin) {
        char real[4096];
        fprintf(f, ", \"plugin\": ");
        json_str(f, realpath(origin, real) ? real : origin);
        kvb_plugin_identity id; /* and which file that was: its bytes' SHA-256 when loaded */
        if (kvb_plugin_identity_of(mt, &id) == KVB_OK)
          fprintf(f, ", \"plugin_sha256\": \"%s\"", id.sha256);
      }
      fprintf(f, "}");
    }
    fprintf(f, "],\n");
  }
  fprintf(f, "  \"sweeps\": [");
  for (size_t s = 0; s < e->nsweeps; s++) {
    fprintf(f, "%s{\"param\": ", s ? ", " : "");
    json_str(f, e->sweeps[s].param);
    fprintf(f, ", \"values\": [");
    for (size_t v = 0; v < e->sweeps[s].nvals; v++)
      fprintf(f, "%s%.17g", v ? ", " : "", e->sweeps[s].vals[v]);
    fprintf(f, "]");
    if (e->sweeps[s].zip_with >= 0) {
      fprintf(f, ", \"in_step_with\": ");
      json_str(f, e->sweeps[e->sweeps[s].zip_with].param);
    }
    fprintf(f, "}");
  }
  fprintf(f, "],\n  \"spec\": ");
  json_str(f, e->spec_text);
  fprintf(f, "\n}\n");
  return runner_stage_close(f, "meta.json");
}

static void fmt_num(FILE *f, double x) {
  if (isnan(x))
    fputs("nan", f);
  else if (isinf(x))
    fputs(x > 0 ? "inf" : "-inf", f);
  else
    fprintf(f, "%.17g", x);
}

/* A CSV text field (RFC 4180): quoted, quotes doubled, line breaks flattened to spaces. */
static void csv_text(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
  }
  fputc('"', f);
}

int runner_write_csv(const kvb_experiment *e, FILE *f, const unit_result *res, size_t units) {
  fprintf(f, "unit,point,trial");
  for (size_t s = 0; s < e->nsweeps; s++) fprintf(f, ",%s", e->sweeps[s].param);
  fprintf(f, ",stream,method,j,status");
  for (size_t c = 0; c < KVB_RUN_NCOLS; c++)
    if (kvb_run_column_group(c) & e->measures) fprintf(f, ",%s", kvb_run_column_name(c));
  fputs(",error\n", f); /* last, so the measure columns keep their positions */
  for (size_t u = 0; u < units; u++) {
    size_t point = u / e->trials, trial = u % e->trials;
    for (size_t i = 0; i < res[u].nrows; i++) {
      const row *w = &res[u].rows[i];
      fprintf(f, "%zu,%zu,%zu", u, point, trial);
      for (size_t s = 0; s < e->nsweeps; s++) {
        fputc(',', f);
        fmt_num(f, kvb_experiment_sweep_value(e, s, point));
      }
      fprintf(f, ",%s,%s,%zu,%d", e->streams[w->stream].label, e->methods[w->method].label, w->j,
              w->status);
      for (size_t c = 0; c < KVB_RUN_NCOLS; c++)
        if (kvb_run_column_group(c) & e->measures) {
          fputc(',', f);
          fmt_num(f, w->v[c]);
        }
      fputc(',', f);
      if (w->status) csv_text(f, w->msg ? w->msg : kvb_status_name(w->status));
      fputc('\n', f);
    }
  }
  return runner_stage_close(f, "results.csv");
}

/* ---- summary and quantiles ---- */

/* Whether column c is measured on the rows of item k: a probe's own columns; for a method the
 * measure groups it fills (decode rows carry no error or bound columns). */
static int column_applies(const kvb_experiment *e, size_t k, int c) {
  if (c < 0 || c >= KVB_RUN_NCOLS || !(kvb_run_column_group(c) & e->measures)) return 0;
  if (e->methods[k].probe) {
    const kvb_probe_type *t = kvb_probe_lookup(e->methods[k].type);
    for (size_t i = 0; t && i < kvb_probe_ncols(t); i++)
      if (strcmp(t->columns[i], kvb_run_column_name(c)) == 0) return 1;
    return 0;
  }
  if (kvb_run_column_group(c) == KVB_MEASURE_PROBE) return 0;
  if (e->measures & KVB_MEASURE_DECODE)
    return !(kvb_run_column_group(c) & (KVB_MEASURE_ERROR | KVB_MEASURE_BOUND));
  return kvb_run_column_group(c) != KVB_MEASURE_DECODE;
}

/* The headline column of item k's summary lines (runner.h): the spec's own measure — the y of
 * its first plot that the item measures, else its failure{} column — and otherwise the item's
 * natural one: a probe's first column, decode_acc under the decode measure, rel_error. */
static size_t headline_column(const kvb_experiment *e, size_t k) {
  for (size_t i = 0; i < e->nplots; i++) {
    int c = kvb_run_column_find(e->plots[i].y);
    if (column_applies(e, k, c)) return (size_t)c;
  }
  int fc = e->fail_col[0] ? kvb_run_column_find(e->fail_col) : -1;
  if (column_applies(e, k, fc)) return (size_t)fc;
  if (e->methods[k].probe) {
    int c = kvb_run_column_find(kvb_probe_lookup(e->methods[k].type)->columns[0]);
    return c >= 0 ? (size_t)c : C_REL;
  }
  return (e->measures & KVB_MEASURE_DECODE) ? C_DEC : C_REL;
}

/* Appends to a fixed buffer; never writes past cap, *o stays <= cap - 1. */
void runner_app(char *b, size_t cap, size_t *o, const char *fmt, ...) {
  if (*o + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(b + *o, cap - *o, fmt, ap);
  va_end(ap);
  if (w > 0) *o = *o + (size_t)w < cap ? *o + (size_t)w : cap - 1;
}

/* One (sweep point, stream, method): its rows, failures, and the quantiles of every column
 * pooled over trials and query points — computed once (measures.h), written to quantiles.csv
 * for the plots and shown by the summary. */
typedef struct {
  size_t rows, errs;        /* rows of the group, failed rows */
  unsigned fails, fvalid;   /* trials failing the failure rule; trials where its column is a number */
  kvb_quantiles q[KVB_RUN_NCOLS];
} group_stats;

static int cmp_row_j(const void *a, const void *b) {
  const row *p = *(const row *const *)a, *q = *(const row *const *)b;
  return (p->j > q->j) - (p->j < q->j);
}

/* The rows of group (p, si, mi) into out (sorted by j), with the row and failure counts. A
 * trial fails the failure{} rule when any of its query points does, so the Clopper–Pearson
 * interval counts independent trials. */
static size_t group_rows(const kvb_experiment *e, const unit_result *res, size_t p, size_t si,
                         size_t mi, const row **out, group_stats *g) {
  int fc = e->fail_col[0] ? kvb_run_column_find(e->fail_col) : -1;
  size_t n = 0;
  for (size_t t = 0; t < e->trials; t++) {
    const unit_result *r = &res[p * e->trials + t];
    int tvalid = 0, tfail = 0;
    for (size_t i = 0; i < r->nrows; i++) {
      const row *w = &r->rows[i];
      if (w->stream != si || w->method != mi) continue;
      g->rows++;
      if (w->status) {
        g->errs++;
        continue;
      }
      out[n++] = w;
      if (fc >= 0 && !isnan(w->v[fc])) {
        tvalid = 1;
        tfail |= w->v[fc] > e->fail_above;
      }
    }
    g->fvalid += (unsigned)tvalid;
    g->fails += (unsigned)tfail;
  }
  qsort(out, n, sizeof *out, cmp_row_j);
  return n;
}

static void quantiles_line(const kvb_experiment *e, FILE *fq, size_t p, size_t si, size_t mi,
                           size_t j, size_t c, const kvb_quantiles *q) {
  fprintf(fq, "%zu", p);
  for (size_t s = 0; s < e->nsweeps; s++) {
    fputc(',', fq);
    fmt_num(fq, kvb_experiment_sweep_value(e, s, p));
  }
  fprintf(fq, ",%s,%s,", e->streams[si].label, e->methods[mi].label);
  if (j) fprintf(fq, "%zu", j);
  else fputs("all", fq);
  fprintf(fq, ",%s,%zu", kvb_run_column_name(c), q->n);
  const double v[7] = {q->q10, q->q25, q->median, q->q75, q->q90, q->q99, q->max};
  for (int l = 0; l < 7; l++) {
    fputc(',', fq);
    fmt_num(fq, v[l]);
  }
  fputc('\n', fq);
}

/* The quantiles of group (p, si, mi): pooled (j = "all", kept in g for the summary) and per
 * query point, every measured column, into quantiles.csv. buf: scratch of n doubles. */
static void group_quantiles(const kvb_experiment *e, FILE *fq, size_t p, size_t si, size_t mi,
                            const row **rows, size_t n, double *buf, group_stats *g) {
  for (size_t c = 0; c < KVB_RUN_NCOLS; c++) {
    g->q[c] = (kvb_quantiles){0, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    if (!column_applies(e, mi, (int)c)) continue;
    for (size_t i = 0; i < n; i++) buf[i] = rows[i]->v[c];
    kvb_quantiles_of(buf, n, &g->q[c]);
    if (g->q[c].n) quantiles_line(e, fq, p, si, mi, 0, c, &g->q[c]);
    for (size_t a = 0, b; a < n; a = b) { /* the rows of one query point j */
      for (b = a; b < n && rows[b]->j == rows[a]->j; b++) buf[b - a] = rows[b]->v[c];
      kvb_quantiles q;
      kvb_quantiles_of(buf, b - a, &q);
      if (q.n) quantiles_line(e, fq, p, si, mi, rows[a]->j, c, &q);
    }
  }
}

static void summary_header(const kvb_experiment *e, FILE *ft, FILE *fm) {
  int fc = e->fail_col[0] ? kvb_run_column_find(e->fail_col) : -1;
  int bound = (e->measures & KVB_MEASURE_BOUND) != 0, mem = (e->measures & KVB_MEASURE_MEMORY) != 0;
  char hdr[1024];
  size_t o = 0;
  for (size_t s = 0; s < e->nsweeps; s++)
    runner_app(hdr, sizeof hdr, &o, "%10s ", e->sweeps[s].param);
  runner_app(hdr, sizeof hdr, &o, "%-14s %-16s %-10s %6s %5s %10s %10s %10s %10s", "stream",
             "method", "measure", "rows", "errs", "q10", "median", "q90", "max");
  if (bound) runner_app(hdr, sizeof hdr, &o, " %10s %10s %10s", "rop_med", "rop_q99", "rf_med");
  if (mem) runner_app(hdr, sizeof hdr, &o, " %10s", "mem_med");
  if (fc >= 0)
    runner_app(hdr, sizeof hdr, &o, "  failed trials(%s>%g) [95%% CP]", e->fail_col, e->fail_above);
  fprintf(ft, "%s\n", hdr);
  printf("%s\n", hdr);
  fprintf(fm, "|");
  for (size_t s = 0; s < e->nsweeps; s++) fprintf(fm, " %s |", e->sweeps[s].param);
  fprintf(fm, " stream | method | measure | rows | errors | q10 | median | q90 | max |");
  if (bound) fprintf(fm, " ratio_op median | ratio_op q99 | ratio_f median |");
  if (mem) fprintf(fm, " memory bytes (median) |");
  if (fc >= 0)
    fprintf(fm, " failed trials (%s > %g at any query point) | 95%% Clopper–Pearson |", e->fail_col,
            e->fail_above);
  fprintf(fm, "\n|");
  size_t ncols = e->nsweeps + 9 + (bound ? 3 : 0) + (mem ? 1 : 0) + (fc >= 0 ? 2 : 0);
  for (size_t c = 0; c < ncols; c++) fprintf(fm, "---|");
  fprintf(fm, "\n");
}

/* One summary line (summary.txt, summary.md, stdout) from the group's quantiles. */
static void summary_line(const kvb_experiment *e, FILE *ft, FILE *fm, size_t p, size_t si,
                         size_t mi, const group_stats *g) {
  int fc = e->fail_col[0] ? kvb_run_column_find(e->fail_col) : -1;
  int bound = (e->measures & KVB_MEASURE_BOUND) != 0, mem = (e->measures & KVB_MEASURE_MEMORY) != 0;
  size_t pc = headline_column(e, mi), o = 0;
  const kvb_quantiles *h = &g->q[pc];
  char line[1024];
  fprintf(fm, "|");
  for (size_t s = 0; s < e->nsweeps; s++) {
    double v = kvb_experiment_sweep_value(e, s, p);
    runner_app(line, sizeof line, &o, "%10g ", v);
    fprintf(fm, " %g |", v);
  }
  runner_app(line, sizeof line, &o, "%-14s %-16s %-10s %6zu %5zu %10.3g %10.3g %10.3g %10.3g",
             e->streams[si].label, e->methods[mi].label, kvb_run_column_name(pc), g->rows,
             g->errs, h->q10, h->median, h->q90, h->max);
  fprintf(fm, " %s | %s | %s | %zu | %zu | %.3g | %.3g | %.3g | %.3g |", e->streams[si].label,
          e->methods[mi].label, kvb_run_column_name(pc), g->rows, g->errs, h->q10, h->median,
          h->q90, h->max);
  if (bound) {
    double a = g->q[C_ROP].median, b = g->q[C_ROP].q99, c = g->q[C_RF].median;
    runner_app(line, sizeof line, &o, " %10.3g %10.3g %10.3g", a, b, c);
    fprintf(fm, " %.3g | %.3g | %.3g |", a, b, c);
  }
  if (mem) {
    runner_app(line, sizeof line, &o, " %10.4g", g->q[C_MB].median);
    fprintf(fm, " %.4g |", g->q[C_MB].median);
  }
  if (fc >= 0 && g->fvalid) {
    double lo = NAN, hi = NAN;
    kvb_clopper_pearson(g->fails, g->fvalid, 0.95, &lo, &hi);
    runner_app(line, sizeof line, &o, "  %u/%u [%.3g, %.3g]", g->fails, g->fvalid, lo, hi);
    fprintf(fm, " %u/%u | [%.3g, %.3g] |", g->fails, g->fvalid, lo, hi);
  } else if (fc >= 0) { /* the column is NaN on every row of this item (e.g. random signs) */
    runner_app(line, sizeof line, &o, "  n/a");
    fprintf(fm, " n/a | n/a |");
  }
  fprintf(ft, "%s\n", line);
  fprintf(fm, "\n");
  printf("%s\n", line);
}

/* Summary: one line per (sweep point, stream, method), headed by the item's headline column;
 * quantiles pool trials and query points. quantiles.csv gets the same quantiles, pooled and per
 * query point, for every measured column: the plots read them from there. */
static int write_summary(const kvb_experiment *e, FILE *ft, FILE *fm, FILE *fq,
                         const unit_result *res, size_t units) {
  fprintf(fq, "point");
  for (size_t s = 0; s < e->nsweeps; s++) fprintf(fq, ",%s", e->sweeps[s].param);
  fprintf(fq, ",stream,method,j,column,n,q10,q25,median,q75,q90,q99,max\n");
  summary_header(e, ft, fm);
  size_t points = kvb_experiment_points(e), cap = 0;
  for (size_t u = 0; u < units; u++) cap = res[u].nrows > cap ? res[u].nrows : cap;
  cap = (cap ? cap : 1) * e->trials;
  const row **rows = malloc(cap * sizeof *rows);
  double *buf = malloc(cap * sizeof *buf);
  group_stats *g = malloc(sizeof *g);
  int st = rows && buf && g ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "summary: out of memory");
  for (size_t p = 0; p < points && !st; p++)
    for (size_t si = 0; si < e->nstreams; si++)
      for (size_t mi = 0; mi < e->nmethods; mi++) {
        memset(g, 0, sizeof *g);
        size_t n = group_rows(e, res, p, si, mi, rows, g);
        group_quantiles(e, fq, p, si, mi, rows, n, buf, g);
        summary_line(e, ft, fm, p, si, mi, g);
      }
  free(rows);
  free(buf);
  free(g);
  return st;
}

/* Failed rows: their number and the first few distinct messages, after the table (summary
 * files and stdout), so a NaN row never goes unexplained. Returns the number of failed rows. */
static size_t write_failures(FILE *ft, FILE *fm, const unit_result *res, size_t units,
                             size_t rows) {
  enum { SHOWN = 3 };
  const char *first[SHOWN];
  size_t nfirst = 0, failed = 0;
  for (size_t u = 0; u < units; u++)
    for (size_t i = 0; i < res[u].nrows; i++) {
      const row *w = &res[u].rows[i];
      if (!w->status) continue;
      failed++;
      const char *m = w->msg ? w->msg : kvb_status_name(w->status);
      int seen = 0;
      for (size_t k = 0; k < nfirst; k++) seen |= strcmp(first[k], m) == 0;
      if (!seen && nfirst < SHOWN) first[nfirst++] = m;
    }
  if (!failed) return 0;
  FILE *outs[2] = {ft, stdout};
  for (int o = 0; o < 2; o++) {
    fprintf(outs[o], "\n%zu of %zu rows failed (status != 0; their measures are NaN; the error "
            "column of results.csv says why). First distinct messages:\n", failed, rows);
    for (size_t k = 0; k < nfirst; k++) fprintf(outs[o], "  %s\n", first[k]);
  }
  fprintf(fm, "\n**%zu of %zu rows failed** (status ≠ 0; their measures are NaN; the `error` "
          "column of results.csv says why). First distinct messages:\n\n", failed, rows);
  for (size_t k = 0; k < nfirst; k++) {
    fputs("- `", fm);
    for (const char *c = first[k]; *c; c++) fputc(*c == '`' ? '\'' : *c, fm);
    fputs("`\n", fm);
  }
  return failed;
}

static void tsv_field(FILE *f, const char *s, int last) {
  fputs(s[0] ? s : "-", f);
  fputc(last ? '\n' : '\t', f);
}

static int write_plots(const kvb_experiment *e, FILE *f) {
  fprintf(f, "# name\tx\ty\tlogx\tlogy\tbands\tbound\tbound_title\ttitle\txlabel\tylabel\t"
             "bound2\tbound2_title\tin_step\n");
  for (size_t i = 0; i < e->nplots; i++) {
    const kvb_run_plot *p = &e->plots[i];
    fprintf(f, "%s\t%s\t%s\t%d\t%d\t%d\t", p->name, p->x, p->y, p->logx, p->logy, p->bands);
    tsv_field(f, p->bound, 0);
    tsv_field(f, p->bound_title, 0);
    tsv_field(f, p->title, 0);
    tsv_field(f, p->xlabel, 0);
    tsv_field(f, p->ylabel, 0);
    tsv_field(f, p->bound2, 0);
    tsv_field(f, p->bound2_title, 0);
    /* sweeps moving in step with x: they do not split the series */
    char in_step[256] = "";
    int xs = -1;
    for (size_t k = 0; k < e->nsweeps; k++)
      if (strcmp(e->sweeps[k].param, p->x) == 0) xs = e->sweeps[k].zip_with >= 0 ? e->sweeps[k].zip_with : (int)k;
    for (size_t k = 0, o = 0; xs >= 0 && k < e->nsweeps; k++) {
      int lead = e->sweeps[k].zip_with >= 0 ? e->sweeps[k].zip_with : (int)k;
      if (lead == xs && strcmp(e->sweeps[k].param, p->x) != 0 && o < sizeof in_step)
        o += (size_t)snprintf(in_step + o, sizeof in_step - o, "%s%s", o ? "," : "", e->sweeps[k].param);
    }
    tsv_field(f, in_step, 1);
  }
  return runner_stage_close(f, "plots.tsv");
}

/* Every output, staged (temporary files) and renamed into place together, meta.json last; on
 * any error nothing is renamed and the temporary files are removed. */
int runner_write_outputs(const kvb_experiment *e, const char *dir, const unit_result *res,
                         size_t units, int jobs, size_t rows, size_t failed, double wall,
                         const char *real) {
  runner_staged sg = {.n = 0};
  FILE *f;
  int st = (f = runner_stage_open(&sg, dir, "results.csv")) ? runner_write_csv(e, f, res, units)
                                                            : KVB_EIO;
  if (!st) {
    FILE *ft = runner_stage_open(&sg, dir, "summary.txt");
    FILE *fm = ft ? runner_stage_open(&sg, dir, "summary.md") : NULL;
    FILE *fq = fm ? runner_stage_open(&sg, dir, "quantiles.csv") : NULL;
    st = ft && fm && fq ? write_summary(e, ft, fm, fq, res, units) : KVB_EIO;
    if (!st) write_failures(ft, fm, res, units, rows);
    if (ft) st = runner_stage_close(ft, "summary.txt") ? KVB_EIO : st;
    if (fm) st = runner_stage_close(fm, "summary.md") ? KVB_EIO : st;
    if (fq) st = runner_stage_close(fq, "quantiles.csv") ? KVB_EIO : st;
  }
  if (!st) st = (f = runner_stage_open(&sg, dir, "plots.tsv")) ? write_plots(e, f) : KVB_EIO;
  if (!st) /* last: its presence marks a complete run */
    st = (f = runner_stage_open(&sg, dir, "meta.json"))
             ? write_meta(e, f, jobs, units, rows, failed, wall, real)
             : KVB_EIO;
  if (!st) st = runner_stage_commit(&sg, dir);
  else runner_stage_discard(&sg);
  return st;
}

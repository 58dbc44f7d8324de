/* plot.c — `kvbound plot DIR`: turns DIR/quantiles.csv into PNG and SVG plots through gnuplot,
 * one per line of DIR/plots.tsv (written by `kvbound run` from the spec's plot{} calls).
 *
 * Each plot groups the quantiles into series (method, stream if several, and the values of every
 * sweep other than x) and, at each x, draws the median of y with 25–75% and 10–90% quantile bands
 * over trials and query points — the way streaming-sketch accuracy studies show error
 * quantiles against n — and the bounds as gnuplot expressions in x (dashed black, dotted grey).
 * The quantiles are the runner's (measures.h, kvb_quantiles_of): the plot draws the numbers the
 * summary shows, it does not recompute them. One template for every plot (emit_header).
 *
 * Safety: DIR may come from someone else. Nothing read from it reaches gnuplot unchecked: a
 * bound expression must pass kvb_plot_expr_check (numbers, x, operators, math functions),
 * plot names and column names must be plain words, and every text (titles, labels, series
 * names) is written as a single-quoted gnuplot string, in which gnuplot expands nothing
 * (double-quoted strings would run `backquoted` commands). Outputs are written to temporary
 * files and renamed when complete. */
#define _XOPEN_SOURCE 700
#include "plot.h"
#include "out_file.h"
#include "runner.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvbound.h"

#define MAX_FIELDS 64
#define MAX_SERIES 64

/* One plotted x of one series: the quantiles of y there (q10 q25 median q75 q90; NaN where
 * not drawable) and the size of their sample. */
typedef struct {
  int series;
  double x, q[5];
  size_t count;
} group_row;

/* Splits a results.csv line in place (RFC 4180: a quoted field may hold commas and doubled
 * quotes, as the error column does). Returns the number of fields, -1 past max. */
static int csv_split(char *line, char **f, int max) {
  int n = 0;
  char *r = line, *w = line;
  for (;;) {
    if (n == max) return -1;
    f[n++] = w;
    if (*r == '"') {
      r++;
      for (; *r; r++) {
        if (*r == '"') {
          if (r[1] == '"') r++;
          else {
            r++;
            break;
          }
        }
        *w++ = *r;
      }
    } else {
      while (*r && *r != ',' && *r != '\n' && *r != '\r') *w++ = *r++;
    }
    int more = *r == ',';
    *w++ = '\0';
    if (!more) break;
    r++;
  }
  return n;
}

static int split(char *line, char sep, char **f, int max) {
  int n = 0;
  char *p = line;
  for (;;) {
    if (n == max) return -1;
    f[n++] = p;
    char *c = strchr(p, sep);
    if (!c) break;
    *c = '\0';
    p = c + 1;
  }
  char *nl = strpbrk(f[n - 1], "\r\n");
  if (nl) *nl = '\0';
  return n;
}

static int cmp_group(const void *a, const void *b) {
  const group_row *p = a, *q = b;
  if (p->series != q->series) return p->series < q->series ? -1 : 1;
  return (p->x > q->x) - (p->x < q->x);
}

static int has_pngcairo(void) {
  FILE *p = popen("gnuplot -e 'set terminal' 2>&1", "r");
  if (!p) return 0;
  char line[256];
  int found = 0;
  while (fgets(line, sizeof line, p))
    if (strstr(line, "pngcairo")) found = 1;
  pclose(p);
  return found;
}

static int run_gnuplot(const char *dir, const char *script, char *err, size_t cap) {
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, cap, "cannot fork gnuplot");
    return KVB_EIO;
  }
  if (pid == 0) {
    if (chdir(dir) != 0) _exit(126);
    execlp("gnuplot", "gnuplot", script, (char *)NULL);
    _exit(127);
  }
  int ws = 0;
  waitpid(pid, &ws, 0);
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
    snprintf(err, cap, "gnuplot failed on %s/%s (exit %d%s); is gnuplot installed?", dir, script,
             WIFEXITED(ws) ? WEXITSTATUS(ws) : -1,
             WIFEXITED(ws) && WEXITSTATUS(ws) == 127 ? ": not found" : "");
    return KVB_EIO;
  }
  return KVB_OK;
}

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                     "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

/* A gnuplot single-quoted string: nothing inside is expanded (no `command` substitution, no
 * escapes); a quote is doubled; control characters become spaces. */
static void gp_quote(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', f);
    fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
  }
  fputc('\'', f);
}

/* Names that become file names and script words: letters, digits, _ - . +, not starting with
 * '.' (no hidden files, no "..") — the rule the spec's plot{} and labels follow. */
static int plain_word(const char *s) {
  if (!s[0] || s[0] == '.' || strlen(s) > 64) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !strchr("_-.+", *s)) return 0;
  return 1;
}

int kvb_plot_expr_check(const char *expr, char *why, size_t cap) {
  static const char *const fns[] = {"sqrt", "exp",  "log",  "log10", "abs",   "sgn",
                                    "sin",  "cos",  "tan",  "asin",  "acos",  "atan",
                                    "atan2", "sinh", "cosh", "tanh", "floor", "ceil",
                                    "int",  NULL};
  int depth = 0, tokens = 0;
  if (strlen(expr) > 255) {
    snprintf(why, cap, "longer than 255 characters");
    return -1;
  }
  for (const char *c = expr; *c;) {
    unsigned char ch = (unsigned char)*c;
    if (ch == ' ') {
      c++;
    } else if (isdigit(ch) || (ch == '.' && isdigit((unsigned char)c[1]))) {
      while (isdigit((unsigned char)*c) || *c == '.') c++;
      if ((*c == 'e' || *c == 'E') &&
          (isdigit((unsigned char)c[1]) ||
           ((c[1] == '+' || c[1] == '-') && isdigit((unsigned char)c[2])))) {
        c += 2;
        while (isdigit((unsigned char)*c)) c++;
      }
      tokens++;
    } else if (isalpha(ch) || ch == '_') {
      const char *b = c;
      while (isalnum((unsigned char)*c) || *c == '_') c++;
      size_t n = (size_t)(c - b);
      char word[32];
      snprintf(word, sizeof word, "%.*s", (int)(n < 31 ? n : 31), b);
      const char *after = c;
      while (*after == ' ') after++;
      int fn = -1;
      for (int k = 0; fns[k]; k++)
        if (n == strlen(fns[k]) && strncmp(b, fns[k], n) == 0) fn = k;
      if (fn >= 0 && *after != '(') {
        snprintf(why, cap, "function '%s' must be followed by '('", word);
        return -1;
      }
      if (fn < 0 && !((n == 1 && *b == 'x') || (n == 2 && strncmp(b, "pi", 2) == 0))) {
        snprintf(why, cap, "'%s' is not allowed: a bound may use numbers, x, pi, + - * / ** ( ) , "
                 "and sqrt exp log log10 abs sgn sin cos tan asin acos atan atan2 sinh cosh "
                 "tanh floor ceil int", word);
        return -1;
      }
      tokens++;
    } else if (strchr("+-*/(),", (int)ch)) {
      depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
      if (depth < 0) {
        snprintf(why, cap, "unbalanced ')'");
        return -1;
      }
      c++;
    } else {
      snprintf(why, cap, "character '%c' is not allowed: a bound may use numbers, x, pi, "
               "+ - * / ** ( ) , and math functions", ch >= 0x20 && ch < 0x7f ? ch : '?');
      return -1;
    }
  }
  if (depth != 0) {
    snprintf(why, cap, "unbalanced '('");
    return -1;
  }
  if (!tokens) {
    snprintf(why, cap, "no number or x");
    return -1;
  }
  return 0;
}

/* One plot's settings, from a plots.tsv line (14 fields; 13 from runs before in_step). */
typedef struct {
  const char *name, *xc, *yc, *bound, *btitle, *title, *xlabel, *ylabel, *bound2, *b2title;
  const char *in_step; /* comma list of sweeps moving in step with x */
  int logx, logy, bands;
} plot_conf;

static const char *field_or(const char *f, const char *dflt) { return strcmp(f, "-") ? f : dflt; }

static int read_conf(char **pf, plot_conf *c, char *err, size_t cap) {
  c->name = pf[0];
  c->xc = pf[1];
  c->yc = pf[2];
  c->logx = atoi(pf[3]);
  c->logy = atoi(pf[4]);
  c->bands = atoi(pf[5]);
  c->bound = field_or(pf[6], "");
  c->btitle = field_or(pf[7], "bound");
  c->title = field_or(pf[8], c->name);
  c->xlabel = field_or(pf[9], c->xc);
  c->ylabel = field_or(pf[10], c->yc);
  c->bound2 = field_or(pf[11], "");
  c->b2title = field_or(pf[12], "second curve");
  c->in_step = pf[13] ? field_or(pf[13], "") : "";
  if (!plain_word(c->name) || !plain_word(c->xc) || !plain_word(c->yc)) {
    snprintf(err, cap, "plots.tsv: plot name and columns must be words of letters, digits, _ - . + "
             "(got '%s', '%s', '%s')", c->name, c->xc, c->yc);
    return KVB_EFORMAT;
  }
  const char *ex[2] = {c->bound, c->bound2};
  for (int b = 0; b < 2; b++) {
    char why[400];
    if (ex[b][0] && kvb_plot_expr_check(ex[b], why, sizeof why)) {
      snprintf(err, cap, "plot '%s': bound expression \"%s\" refused: %s", c->name, ex[b], why);
      return KVB_EFORMAT;
    }
  }
  return KVB_OK;
}

/* ---- the plotted quantiles: DIR/quantiles.csv, written by the runner ---- */

/* The columns of a quantiles.csv header that a plot reads. */
typedef struct {
  int nf, point, stream, method, j, column, n, q[5]; /* q10 q25 median q75 q90 */
  int sw0, sw1;                                      /* sweep columns: [sw0, sw1) */
  char names[MAX_FIELDS][40];
} qheader;

static int read_header(char *line, qheader *h) {
  char *fld[MAX_FIELDS];
  memset(h, -1, offsetof(qheader, names));
  h->nf = csv_split(line, fld, MAX_FIELDS);
  static const char *const qn[5] = {"q10", "q25", "median", "q75", "q90"};
  for (int i = 0; i < h->nf; i++) {
    snprintf(h->names[i], sizeof h->names[i], "%s", fld[i]);
    int *slot = !strcmp(fld[i], "point")    ? &h->point
                : !strcmp(fld[i], "stream") ? &h->stream
                : !strcmp(fld[i], "method") ? &h->method
                : !strcmp(fld[i], "j")      ? &h->j
                : !strcmp(fld[i], "column") ? &h->column
                : !strcmp(fld[i], "n")      ? &h->n
                                            : NULL;
    for (int k = 0; !slot && k < 5; k++)
      if (!strcmp(fld[i], qn[k])) slot = &h->q[k];
    if (slot) *slot = i;
  }
  int ok = h->nf > 0 && h->point == 0 && h->stream > h->point && h->method >= 0 && h->j >= 0 &&
           h->column >= 0 && h->n >= 0;
  for (int k = 0; k < 5; k++) ok &= h->q[k] >= 0;
  h->sw0 = h->point + 1;
  h->sw1 = h->stream;
  return ok ? 0 : -1;
}

/* How plot c reads the quantiles: x is "j" (per query point), a sweep column, or a measure
 * (then each sweep point is one x, the median of that measure, and sweeps do not split the
 * series); split[] lists the sweep columns that do. */
typedef struct {
  int x_j, x_sweep, x_measure, split[8], nsplit, multi_stream;
} plot_mode;

static void plot_mode_of(const plot_conf *c, const qheader *h, plot_mode *m) {
  memset(m, 0, sizeof *m);
  m->x_j = !strcmp(c->xc, "j");
  for (int i = h->sw0; i < h->sw1; i++) m->x_sweep |= !strcmp(h->names[i], c->xc);
  m->x_measure = !m->x_j && !m->x_sweep;
  char list[300];
  snprintf(list, sizeof list, ",%s,", c->in_step);
  for (int i = h->sw0; !m->x_measure && i < h->sw1 && m->nsplit < 8; i++) {
    char key[48];
    snprintf(key, sizeof key, ",%s,", h->names[i]);
    if (strcmp(h->names[i], c->xc) && !strstr(list, key)) m->split[m->nsplit++] = i;
  }
}

/* x of a measure x-axis: the pooled median of that column per (point, stream, method). */
typedef struct {
  char key[200];
  double x;
} xmed;

static void group_key(char **fld, const qheader *h, char *key, size_t cap) {
  snprintf(key, cap, "%s\x1f%s\x1f%s", fld[h->point], fld[h->stream], fld[h->method]);
}

/* The series name of a row: the method, " / stream" when the spec has several, and the
 * splitting sweeps' values printed with %g (results.csv keeps them to 17 digits). */
static void series_name(char **fld, const qheader *h, const plot_mode *m, char *key, size_t cap) {
  size_t o = (size_t)snprintf(key, cap, "%s", fld[h->method]);
  if (m->multi_stream && o < cap) o += (size_t)snprintf(key + o, cap - o, " / %s", fld[h->stream]);
  for (int k = 0; k < m->nsplit && o < cap; k++)
    o += (size_t)snprintf(key + o, cap - o, " %s=%g", h->names[m->split[k]],
                          strtod(fld[m->split[k]], NULL));
}

/* First pass: several streams? and, for a measure x-axis, the x medians. */
static int scan_quantiles(FILE *f, const plot_conf *c, const qheader *h, plot_mode *m,
                          xmed **xs, size_t *nx) {
  static char line[1 << 16];
  char *fld[MAX_FIELDS], first[64] = "";
  size_t cap = 0;
  *xs = NULL;
  *nx = 0;
  while (fgets(line, sizeof line, f)) {
    if (csv_split(line, fld, MAX_FIELDS) != h->nf) continue;
    if (!first[0]) snprintf(first, sizeof first, "%s", fld[h->stream]);
    m->multi_stream |= strcmp(first, fld[h->stream]) != 0;
    if (!m->x_measure || strcmp(fld[h->j], "all") || strcmp(fld[h->column], c->xc)) continue;
    if (*nx == cap) {
      xmed *n2 = realloc(*xs, (cap = cap ? 2 * cap : 64) * sizeof **xs);
      if (!n2) return KVB_ENOMEM;
      *xs = n2;
    }
    group_key(fld, h, (*xs)[*nx].key, sizeof (*xs)[*nx].key);
    (*xs)[(*nx)++].x = strtod(fld[h->q[2]], NULL);
  }
  return KVB_OK;
}

/* The x of a row: j, the sweep value, or the measure's median; NAN when there is none. */
static double row_x(char **fld, const plot_conf *c, const qheader *h, const plot_mode *m,
                    const xmed *xs, size_t nx) {
  if (m->x_j) return strtod(fld[h->j], NULL);
  if (m->x_sweep) {
    for (int i = h->sw0; i < h->sw1; i++)
      if (!strcmp(h->names[i], c->xc)) return strtod(fld[i], NULL);
    return NAN;
  }
  char key[200];
  group_key(fld, h, key, sizeof key);
  for (size_t k = 0; k < nx; k++)
    if (!strcmp(xs[k].key, key)) return xs[k].x;
  return NAN;
}

/* Second pass: the plotted rows (y's quantiles at each x of each series). */
static int collect_groups(FILE *f, const plot_conf *c, const qheader *h, const plot_mode *m,
                          const xmed *xs, size_t nx, group_row **out, size_t *ng,
                          char series[][160], int *nseries) {
  static char line[1 << 16];
  char *fld[MAX_FIELDS];
  size_t cap = 0;
  while (fgets(line, sizeof line, f)) {
    if (csv_split(line, fld, MAX_FIELDS) != h->nf || strcmp(fld[h->column], c->yc)) continue;
    if (m->x_j == !strcmp(fld[h->j], "all")) continue; /* per query point for x = j only */
    double x = row_x(fld, c, h, m, xs, nx);
    if (!isfinite(x) || (c->logx && x <= 0)) continue;
    char key[160];
    series_name(fld, h, m, key, sizeof key);
    int si = 0;
    while (si < *nseries && strcmp(series[si], key)) si++;
    if (si == *nseries) {
      if (*nseries == MAX_SERIES) continue;
      snprintf(series[(*nseries)++], 160, "%s", key);
    }
    if (*ng == cap) {
      group_row *n2 = realloc(*out, (cap = cap ? 2 * cap : 64) * sizeof **out);
      if (!n2) return KVB_ENOMEM;
      *out = n2;
    }
    group_row *g = &(*out)[(*ng)++];
    g->series = si;
    g->x = x;
    g->count = (size_t)strtoull(fld[h->n], NULL, 10);
    for (int k = 0; k < 5; k++) {
      double q = strtod(fld[h->q[k]], NULL);
      /* not drawable on a log axis: left out of the band or line (gnuplot skips NaN) */
      g->q[k] = isfinite(q) && (!c->logy || q > 0) ? q : NAN;
    }
  }
  return KVB_OK;
}

static int same_group(const group_row *a, const group_row *b) {
  if (a->x != b->x || a->count != b->count) return 0;
  for (int k = 0; k < 5; k++)
    if (!(a->q[k] == b->q[k] || (isnan(a->q[k]) && isnan(b->q[k])))) return 0;
  return 1;
}

/* Series with identical data (a sweep the method does not read: z ≡ 0 at every τ) would hide
 * each other: each such set becomes one series named after all of them. g is sorted by series
 * and x; returns the new number of rows. */
static size_t merge_identical(group_row *g, size_t ng, char series[][160], int *nseries) {
  size_t start[MAX_SERIES] = {0}, len[MAX_SERIES] = {0};
  int map[MAX_SERIES], dead[MAX_SERIES] = {0};
  for (size_t i = 0; i < ng; i++) {
    if (!len[g[i].series]) start[g[i].series] = i;
    len[g[i].series]++;
  }
  for (int a = 0; a < *nseries; a++)
    for (int b = a + 1; !dead[a] && b < *nseries; b++) {
      int same = !dead[b] && len[a] == len[b] && len[a] > 0;
      for (size_t k = 0; same && k < len[a]; k++) same = same_group(&g[start[a] + k], &g[start[b] + k]);
      if (!same) continue;
      dead[b] = 1;
      size_t o = strlen(series[a]);
      if (o + 4 < 160) snprintf(series[a] + o, 160 - o, " = %s", series[b]);
    }
  int n = 0;
  for (int a = 0; a < *nseries; a++) {
    map[a] = dead[a] ? -1 : n;
    if (!dead[a] && n != a) memmove(series[n], series[a], 160);
    n += !dead[a];
  }
  size_t w = 0;
  for (size_t i = 0; i < ng; i++)
    if (map[g[i].series] >= 0) {
      g[w] = g[i];
      g[w++].series = map[g[i].series];
    }
  *nseries = n;
  return w;
}

static int cmp_median(const void *a, const void *b) {
  const group_row *p = a, *q = b;
  double x = p->q[2], y = q->q[2];
  if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
  return (x > y) - (x < y);
}

/* x a measure column: a method that reads none of the swept parameters (uniform sampling at
 * its own T beside methods sweeping a budget) repeats at every sweep point, so its series holds
 * several rows at one x — replicates on other trial seeds. Drawn as they are they make a
 * vertical stroke that reads like a trend; each run of equal x becomes its middle row by median
 *. g is sorted by
 * series and x; returns the new number of rows. */
static size_t collapse_equal_x(group_row *g, size_t ng) {
  size_t w = 0;
  for (size_t i = 0; i < ng;) {
    size_t j = i + 1;
    while (j < ng && g[j].series == g[i].series && g[j].x == g[i].x) j++;
    qsort(g + i, j - i, sizeof *g, cmp_median);
    g[w++] = g[i + (j - i - 1) / 2];
    i = j;
  }
  return w;
}

/* Reads DIR/quantiles.csv into the plotted rows of plot c, sorted by series and x. */
static int read_groups(const char *dir, const plot_conf *c, group_row **out, size_t *ng,
                       char series[][160], int *nseries, int *x_measure, char *err, size_t cap) {
  char path[1200];
  snprintf(path, sizeof path, "%s/quantiles.csv", dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, cap, "%s: cannot open (run `kvbound run SPEC --out %s` with this version first)",
             path, dir);
    return KVB_EIO;
  }
  static char line[1 << 16];
  qheader h;
  if (!fgets(line, sizeof line, f) || read_header(line, &h)) {
    fclose(f);
    snprintf(err, cap, "%s: not a quantiles file of `kvbound run`", path);
    return KVB_EFORMAT;
  }
  plot_mode m;
  plot_mode_of(c, &h, &m);
  xmed *xs = NULL;
  size_t nx = 0;
  *out = NULL;
  *ng = 0;
  *nseries = 0;
  long data_start = ftell(f);
  int st = scan_quantiles(f, c, &h, &m, &xs, &nx);
  if (!st && fseek(f, data_start, SEEK_SET) == 0)
    st = collect_groups(f, c, &h, &m, xs, nx, out, ng, series, nseries);
  fclose(f);
  free(xs);
  if (!st && *ng == 0) {
    snprintf(err, cap, "plot '%s': no usable quantiles of '%s' against '%s' in %s (status 0, "
             "finite values%s)", c->name, c->yc, c->xc, path,
             c->logx || c->logy ? ", positive on log axes" : "");
    st = KVB_EFORMAT;
  }
  if (st) {
    free(*out);
    *out = NULL;
    if (st == KVB_ENOMEM) snprintf(err, cap, "plot '%s': out of memory", c->name);
    return st;
  }
  qsort(*out, *ng, sizeof **out, cmp_group);
  if (m.x_measure) *ng = collapse_equal_x(*out, *ng);
  *ng = merge_identical(*out, *ng, series, nseries);
  *x_measure = m.x_measure;
  return KVB_OK;
}

/* Writes the per-series quantiles to d (gnuplot's indexed blocks, one per series). */
static void write_dat(FILE *d, const group_row *g, size_t ng, char series[][160], int nseries) {
  for (int s = 0; s < nseries; s++) {
    fprintf(d, "%s# %s\n# x q10 q25 median q75 q90 count\n", s ? "\n\n" : "", series[s]);
    for (size_t k = 0; k < ng; k++) {
      if (g[k].series != s) continue;
      fprintf(d, "%.10g", g[k].x);
      for (int q = 0; q < 5; q++) {
        if (isnan(g[k].q[q])) fputs(" NaN", d);
        else fprintf(d, " %.10g", g[k].q[q]);
      }
      fprintf(d, " %zu\n", g[k].count);
    }
  }
}

/* ---- the plot template ---- */

/* Every plot has the same canvas (PLOT_W x PLOT_H) and the legend below the axes, so the data
 * keep the full width whatever the number of series; series differ in colour AND point type
 * (and dash type past 8), medians are drawn over all the bands, and each stated bound is a
 * black (dashed) or grey (dotted) curve. */
#define PLOT_W 1200
#define PLOT_H 800

static const int point_types[] = {7, 5, 9, 11, 13, 15, 4, 6};

#define BANDS_TITLE "bands: 25-75%, 10-90% (lines: medians)"

/* The legend's layout: 2 columns when the longest entry fits twice in the width (about 9 px per
 * character at 12 pt plus the line sample), else 1; the bottom margin (in character heights)
 * holds the tic labels, the x label and the legend's rows, so nothing overlaps. */
static void key_layout(const plot_conf *c, char series[][160], int nseries, int *cols,
                       int *bmargin) {
  size_t longest = 0;
  int entries = nseries + (c->bound[0] != 0) + (c->bound2[0] != 0) + (c->bands != 0);
  for (int s = 0; s < nseries; s++) longest = strlen(series[s]) > longest ? strlen(series[s]) : longest;
  if (c->bound[0] && strlen(c->btitle) > longest) longest = strlen(c->btitle);
  if (c->bound2[0] && strlen(c->b2title) > longest) longest = strlen(c->b2title);
  if (c->bands && strlen(BANDS_TITLE) > longest) longest = strlen(BANDS_TITLE);
  *cols = 2 * (9 * (double)longest + 110) <= PLOT_W - 200 ? 2 : 1;
  int rows = (entries + *cols - 1) / *cols;
  *bmargin = 6 + (5 * rows + 3) / 4; /* a key row is about 1.25 character heights */
}

static void emit_header(FILE *g, const plot_conf *c, int cairo, char series[][160], int nseries,
                        double xmin, double xmax, int int_tics, const char *png_out) {
  int cols, bmargin;
  key_layout(c, series, nseries, &cols, &bmargin);
  fprintf(g, "# generated by kvbound plot from quantiles.csv (%s vs %s)\n", c->yc, c->xc);
  fprintf(g, "set terminal %s size %d,%d noenhanced font 'Sans,12'\nset output ",
          cairo ? "pngcairo" : "png", PLOT_W, PLOT_H);
  gp_quote(g, png_out);
  fprintf(g, "\nset title ");
  gp_quote(g, c->title);
  fprintf(g, " noenhanced\nset xlabel ");
  gp_quote(g, c->xlabel);
  fprintf(g, " noenhanced\nset ylabel ");
  gp_quote(g, c->ylabel);
  fprintf(g, " noenhanced\nset grid\nset lmargin 12\nset rmargin 6\nset bmargin %d\n"
             "set key outside below center horizontal Left reverse box opaque noenhanced "
             "maxcols %d\n", bmargin, cols);
  if (c->logx) fprintf(g, "set logscale x\nset format x '%%g'\n");
  if (int_tics) fprintf(g, "set xtics 1\nset xrange [%g:%g]\n", xmin - 0.25, xmax + 0.25);
  if (c->logy) fprintf(g, "set logscale y\nset format y '%%g'\n");
  fprintf(g, "set style fill transparent solid 0.18 noborder\n");
}

/* The plot command of plot c: bands, then medians, then the bounds (each a clause). */
static void emit_plot(FILE *g, const plot_conf *c, int cairo, char series[][160], int nseries) {
  const char *sep = "plot \\\n  ";
  for (int s = 0; s < nseries && c->bands; s++) {
    const char *col = colors[s % 8];
    if (cairo) {
      fprintf(g, "%s'%s.dat' index %d using 1:2:6 with filledcurves lc rgb '%s' notitle", sep,
              c->name, s, col);
      sep = ", \\\n  ";
      fprintf(g, "%s'%s.dat' index %d using 1:3:5 with filledcurves lc rgb '%s' notitle", sep,
              c->name, s, col);
    } else {
      fprintf(g, "%s'%s.dat' index %d using 1:4:2:6 with yerrorbars lc rgb '%s' notitle", sep,
              c->name, s, col);
    }
    sep = ", \\\n  ";
  }
  for (int s = 0; s < nseries; s++) {
    fprintf(g, "%s'%s.dat' index %d using 1:4 with linespoints lw 2 dt %d pt %d ps 1.3 "
               "lc rgb '%s' title ", sep, c->name, s, s / 8 + 1, point_types[s % 8], colors[s % 8]);
    gp_quote(g, series[s]);
    sep = ", \\\n  ";
  }
  /* the bound expressions passed kvb_plot_expr_check in read_conf */
  if (c->bound[0]) {
    fprintf(g, "%s%s with lines dt 2 lw 2.5 lc rgb 'black' title ", sep, c->bound);
    gp_quote(g, c->btitle);
  }
  if (c->bound2[0]) {
    fprintf(g, "%s%s with lines dt 3 lw 2.5 lc rgb '#555555' title ", sep, c->bound2);
    gp_quote(g, c->b2title);
  }
  if (c->bands)
    fprintf(g, "%skeyentry with filledcurves lc rgb '#888888' title '%s'", sep, BANDS_TITLE);
  fprintf(g, "\n");
}

/* The gnuplot script of plot c, drawing into png_out and svg_out. */
static void emit_gp(FILE *g, const plot_conf *c, int cairo, char series[][160], int nseries,
                    double xmin, double xmax, int int_tics, const char *png_out,
                    const char *svg_out) {
  emit_header(g, c, cairo, series, nseries, xmin, xmax, int_tics, png_out);
  emit_plot(g, c, cairo, series, nseries);
  fprintf(g, "set terminal svg size %d,%d noenhanced font 'Sans,12' background rgb 'white'\n"
             "set output ", PLOT_W, PLOT_H);
  gp_quote(g, svg_out);
  fprintf(g, "\nreplot\nunset output\n");
}

/* ---- one plot ---- */

/* Writes text through a temporary file renamed to DIR/NAME.ext when whole. */
static int write_dat_file(const char *dir, const plot_conf *c, const group_row *g, size_t ng,
                          char series[][160], int nseries, char *err, size_t cap) {
  char tmp[1300], fin[1300], base[200];
  snprintf(base, sizeof base, "%s.dat", c->name);
  snprintf(fin, sizeof fin, "%s/%s.dat", dir, c->name);
  FILE *d = kvb_out_create(tmp, sizeof tmp, dir, base);
  if (d) write_dat(d, g, ng, series, nseries);
  if (!d || fclose(d) != 0 || rename(tmp, fin) != 0) {
    if (d) unlink(tmp);
    snprintf(err, cap, "%s: cannot write", fin);
    return KVB_EIO;
  }
  return KVB_OK;
}

/* DIR/NAME.gp for the user (final names), and the temporary script gp_t drawing into the
 * temporary png_t and svg_t. */
static int write_scripts(const char *dir, const plot_conf *c, int cairo, char series[][160],
                         int nseries, double xmin, double xmax, int int_tics, const char *gp_t,
                         const char *png_t, const char *svg_t, char *err, size_t cap) {
  char tmp[1300], fin[1300], png[200], svg[200];
  snprintf(png, sizeof png, "%s.png", c->name);
  snprintf(svg, sizeof svg, "%s.svg", c->name);
  snprintf(fin, sizeof fin, "%s/%s.gp", dir, c->name);
  for (int k = 0; k < 2; k++) {
    char base[200];
    snprintf(base, sizeof base, "%s.gp", c->name);
    /* k = 0: the user's script, renamed into place; k = 1: the temporary script one_plot
     * created exclusively (gp_t), rewritten in place */
    FILE *g = NULL;
    if (k == 0) g = kvb_out_create(tmp, sizeof tmp, dir, base);
    else snprintf(tmp, sizeof tmp, "%s/%s", dir, gp_t), g = fopen(tmp, "r+");
    if (g && k == 1 && ftruncate(fileno(g), 0) != 0) fclose(g), g = NULL;
    if (!g) {
      snprintf(err, cap, "%s: cannot create", tmp);
      return KVB_EIO;
    }
    emit_gp(g, c, cairo, series, nseries, xmin, xmax, int_tics, k ? png_t : png, k ? svg_t : svg);
    if (fclose(g) != 0 || (k == 0 && rename(tmp, fin) != 0)) {
      unlink(tmp);
      snprintf(err, cap, "%s: cannot write", fin);
      return KVB_EIO;
    }
  }
  return KVB_OK;
}

/* Runs the temporary script and renames its outputs to DIR/NAME.{png,svg}. */
static int draw(const char *dir, const plot_conf *c, const char *gp_t, const char *png_t,
                const char *svg_t, char *err, size_t cap) {
  char tmp[1300], fin[1300];
  int st = run_gnuplot(dir, gp_t, err, cap);
  snprintf(tmp, sizeof tmp, "%s/%s", dir, gp_t);
  unlink(tmp);
  const char *outs[2] = {png_t, svg_t}, *ext[2] = {"png", "svg"};
  for (int k = 0; k < 2; k++) {
    snprintf(tmp, sizeof tmp, "%s/%s", dir, outs[k]);
    snprintf(fin, sizeof fin, "%s/%s.%s", dir, c->name, ext[k]);
    struct stat sb; /* the file was created empty before gnuplot ran (one_plot) */
    if (!st && (stat(tmp, &sb) != 0 || sb.st_size == 0 || rename(tmp, fin) != 0)) {
      snprintf(err, cap, "%s: gnuplot wrote no output", fin);
      st = KVB_EIO;
    }
    unlink(tmp);
  }
  return st;
}

/* One plot: DIR/NAME.dat (the quantiles drawn), DIR/NAME.gp (the script, for restyling), and
 * DIR/NAME.png, DIR/NAME.svg — each written under a temporary name and renamed when whole. */
static int one_plot(const char *dir, char **pf, int cairo, char *err, size_t cap) {
  plot_conf c;
  int st = read_conf(pf, &c, err, cap);
  if (st) return st;
  static char series[MAX_SERIES][160];
  group_row *g = NULL;
  size_t ng = 0;
  int nseries = 0, x_measure = 0;
  st = read_groups(dir, &c, &g, &ng, series, &nseries, &x_measure, err, cap);
  if (st) return st;
  /* integer x over a short linear range (T = 1..4): one tic per integer, never 1.5 */
  double xmin = g[0].x, xmax = g[0].x;
  int x_integer = 1;
  for (size_t i = 0; i < ng; i++) {
    xmin = fmin(xmin, g[i].x);
    xmax = fmax(xmax, g[i].x);
    x_integer &= g[i].x == floor(g[i].x);
  }
  int int_tics = !c.logx && !x_measure && x_integer && xmax - xmin <= 20;
  /* a point drawn from one draw has no spread to show: where no x of any series has two or
   * more, the plot has no bands, and its legend neither names them nor calls the lines medians */
  int spread = 0;
  for (size_t i = 0; i < ng; i++) spread |= g[i].count >= 2;
  if (!spread) c.bands = 0;
  st = write_dat_file(dir, &c, g, ng, series, nseries, err, cap);
  free(g);
  if (st) return st;
  /* gnuplot opens its script and outputs by name (following links), so each is first created
   * here exclusively under an unpredictable name (out_file.h): gnuplot then rewrites regular
   * files this run owns, never a link planted in the directory */
  char paths[3][1300], names[3][200];
  static const char *const kinds[3] = {"png", "svg", "gp"};
  for (int k = 0; k < 3; k++) {
    char base[200];
    snprintf(base, sizeof base, "%s.%s.run", c.name, kinds[k]);
    FILE *f = kvb_out_create(paths[k], sizeof paths[k], dir, base);
    if (!f || fclose(f) != 0) {
      for (int i = 0; i < k; i++) unlink(paths[i]);
      snprintf(err, cap, "%s/%s: cannot create a temporary file", dir, base);
      return KVB_EIO;
    }
    snprintf(names[k], sizeof names[k], "%s", paths[k] + strlen(dir) + 1);
  }
  st = write_scripts(dir, &c, cairo, series, nseries, xmin, xmax, int_tics, names[2], names[0],
                     names[1], err, cap);
  if (st) {
    for (int k = 0; k < 3; k++) unlink(paths[k]);
    return st;
  }
  return draw(dir, &c, names[2], names[0], names[1], err, cap);
}

int kvb_plot_dir(const char *dir, int verbose, char *err, size_t cap) {
  if (strlen(dir) > KVB_RUN_DIR_MAX) {
    snprintf(err, cap, "the directory path is %zu bytes long; the limit is %d", strlen(dir),
             KVB_RUN_DIR_MAX);
    return KVB_EINVAL;
  }
  char path[1200];
  snprintf(path, sizeof path, "%s/plots.tsv", dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, cap, "%s: cannot open (is %s a `kvbound run` output directory?)", path, dir);
    return KVB_EIO;
  }
  snprintf(path, sizeof path, "%s/meta.json", dir);
  if (access(path, R_OK) != 0) {
    fclose(f);
    snprintf(err, cap, "%s: missing, so %s holds no complete run (was `kvbound run` interrupted?)",
             path, dir);
    return KVB_EFORMAT;
  }
  snprintf(path, sizeof path, "%s/plots.tsv", dir);
  int cairo = has_pngcairo(), st = KVB_OK, count = 0;
  char line[2048];
  while (!st && fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    char *pf[16];
    int nf = split(line, '\t', pf, 16);
    if (nf == 13) pf[13] = NULL;
    if (nf != 13 && nf != 14) {
      snprintf(err, cap, "%s: malformed line", path);
      st = KVB_EFORMAT;
      break;
    }
    st = one_plot(dir, pf, cairo, err, cap);
    if (!st) {
      count++;
      if (verbose) printf("wrote %s/%s.png and %s/%s.svg\n", dir, pf[0], dir, pf[0]);
    }
  }
  fclose(f);
  if (!st && count == 0 && verbose) printf("%s: the spec declares no plot{}\n", dir);
  return st;
}

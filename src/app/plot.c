/* plot.c — `kvbound plot DIR`: turns DIR/results.csv into PNG and SVG plots through gnuplot,
 * one per line of DIR/plots.tsv (written by `kvbound run` from the spec's plot{} calls).
 *
 * Each plot groups rows into series (method, stream if several, and the values of every sweep
 * other than x) and, at each x, draws the median of y with 25–75% and 10–90% quantile bands
 * over trials and query points — the way streaming-sketch accuracy studies show error
 * quantiles against n — and the bound as a gnuplot expression in x (dashed black).
 *
 * Safety: DIR may come from someone else. Nothing read from it reaches gnuplot unchecked: a
 * bound expression must pass kvb_plot_expr_check (numbers, x, operators, math functions),
 * plot names and column names must be plain words, and every text (titles, labels, series
 * names) is written as a single-quoted gnuplot string, in which gnuplot expands nothing
 * (double-quoted strings would run `backquoted` commands). Outputs are written to temporary
 * files and renamed when complete. */
#define _XOPEN_SOURCE 700
#include "plot.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvbound.h"

#define MAX_FIELDS 64
#define MAX_SERIES 64

typedef struct {
  int series;
  double g, x, y; /* g: the x group (x itself, or the sweep point when x is a measure) */
} point;

typedef struct {
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

static int cmp_point(const void *a, const void *b) {
  const point *p = a, *q = b;
  if (p->series != q->series) return p->series < q->series ? -1 : 1;
  if (p->g != q->g) return p->g < q->g ? -1 : 1;
  return (p->y > q->y) - (p->y < q->y);
}

static int cmp_group(const void *a, const void *b) {
  const group_row *p = a, *q = b;
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

/* Reads DIR/results.csv into the points of plot c (status 0, finite, positive on log axes). */
static int read_points(const char *dir, const plot_conf *c, point **out, size_t *np_out,
                       char series[][160], int *nseries_out, int *x_measure_out, char *err,
                       size_t cap) {
  char path[1200];
  snprintf(path, sizeof path, "%s/results.csv", dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, cap, "%s: cannot open (run `kvbound run SPEC --out %s` first)", path, dir);
    return KVB_EIO;
  }
  static char line[1 << 16];
  char *fld[MAX_FIELDS];
  if (!fgets(line, sizeof line, f)) {
    fclose(f);
    snprintf(err, cap, "%s: empty", path);
    return KVB_EFORMAT;
  }
  int nf = csv_split(line, fld, MAX_FIELDS);
  int ix = -1, iy = -1, ist = -1, ism = -1, istat = -1, itrial = -1, ipoint = -1, isweep[8], nsw = 0;
  char hdr_names[MAX_FIELDS][40];
  for (int i = 0; i < nf; i++) {
    snprintf(hdr_names[i], sizeof hdr_names[i], "%s", fld[i]);
    if (!strcmp(fld[i], c->xc)) ix = i;
    if (!strcmp(fld[i], c->yc)) iy = i;
    if (!strcmp(fld[i], "stream")) ist = i;
    if (!strcmp(fld[i], "method")) ism = i;
    if (!strcmp(fld[i], "status")) istat = i;
    if (!strcmp(fld[i], "trial")) itrial = i;
    if (!strcmp(fld[i], "point")) ipoint = i;
  }
  /* x is a sweep column or j, or else a measure (e.g. mem_vectors): then each sweep point is
   * one x (the median of its rows' x) and the sweeps no longer split the series. */
  int x_measure = !strcmp(c->xc, "j") ? 0 : 1;
  for (int i = itrial + 1; itrial >= 0 && i < ist; i++)
    if (!strcmp(hdr_names[i], c->xc)) x_measure = 0;
  /* sweep columns lie between "trial" and "stream" */
  for (int i = itrial + 1; !x_measure && itrial >= 0 && i < ist && nsw < 8; i++) {
    char key[48], list[300];
    snprintf(key, sizeof key, ",%s,", hdr_names[i]);
    snprintf(list, sizeof list, ",%s,", c->in_step);
    if (strcmp(hdr_names[i], c->xc) && !strstr(list, key)) isweep[nsw++] = i;
  }
  if (ix < 0 || iy < 0 || ist < 0 || ism < 0 || istat < 0 || (x_measure && ipoint < 0)) {
    fclose(f);
    snprintf(err, cap, "%s: plot '%s' needs columns '%s' and '%s' (and stream, method, status)",
             path, c->name, c->xc, c->yc);
    return KVB_EFORMAT;
  }
  size_t np = 0, pcap = 1024;
  point *pts = malloc(pcap * sizeof *pts);
  int nseries = 0;
  char first_stream[64] = "";
  int multi_stream = 0; /* the stream label joins the series name only when it varies */
  long data_start = ftell(f);
  while (fgets(line, sizeof line, f)) { /* first pass: are there several streams? */
    if (csv_split(line, fld, MAX_FIELDS) != nf) continue;
    if (!first_stream[0]) snprintf(first_stream, sizeof first_stream, "%s", fld[ist]);
    multi_stream |= strcmp(first_stream, fld[ist]) != 0;
  }
  fseek(f, data_start, SEEK_SET);
  while (pts && fgets(line, sizeof line, f)) {
    if (csv_split(line, fld, MAX_FIELDS) != nf || atoi(fld[istat]) != 0) continue;
    double x = strtod(fld[ix], NULL), y = strtod(fld[iy], NULL);
    if (!isfinite(x) || !isfinite(y) || (c->logx && x <= 0) || (c->logy && y <= 0)) continue;
    char key[160];
    size_t o = (size_t)snprintf(key, sizeof key, "%s", fld[ism]);
    if (multi_stream) o += (size_t)snprintf(key + o, sizeof key - o, " / %s", fld[ist]);
    for (int k = 0; k < nsw && o < sizeof key; k++)
      o += (size_t)snprintf(key + o, sizeof key - o, " %s=%s", hdr_names[isweep[k]], fld[isweep[k]]);
    int si = 0;
    while (si < nseries && strcmp(series[si], key)) si++;
    if (si == nseries) {
      if (nseries == MAX_SERIES) continue;
      snprintf(series[nseries++], 160, "%s", key);
    }
    if (np == pcap) {
      point *np2 = realloc(pts, 2 * pcap * sizeof *pts);
      if (!np2) break;
      pts = np2;
      pcap *= 2;
    }
    pts[np++] = (point){si, x_measure ? strtod(fld[ipoint], NULL) : x, x, y};
  }
  fclose(f);
  if (!pts || np == 0) {
    free(pts);
    snprintf(err, cap, "plot '%s': no usable rows (status 0, finite %s and %s%s)", c->name, c->xc,
             c->yc, c->logx || c->logy ? ", positive on log axes" : "");
    return KVB_EFORMAT;
  }
  *out = pts;
  *np_out = np;
  *nseries_out = nseries;
  *x_measure_out = x_measure;
  return KVB_OK;
}

/* Writes the per-series quantiles of the sorted points to f (gnuplot's indexed blocks). */
static int write_dat(FILE *d, const point *pts, size_t np, char series[][160], int x_measure) {
  double *ys = malloc(np * sizeof *ys), *xs = malloc(np * sizeof *xs);
  group_row *gr = malloc(np * sizeof *gr);
  int ok = ys && xs && gr;
  for (size_t i = 0; i < np && ok;) {
    int cur = pts[i].series;
    size_t ng = 0;
    while (i < np && pts[i].series == cur) {
      size_t j = i, k = 0;
      while (j < np && pts[j].series == cur && pts[j].g == pts[i].g) {
        xs[k] = pts[j].x;
        ys[k++] = pts[j++].y;
      }
      group_row *r = &gr[ng++];
      r->x = x_measure ? kvb_quantile(xs, k, 0.5) : pts[i].x;
      static const double qs[5] = {0.1, 0.25, 0.5, 0.75, 0.9};
      for (int q = 0; q < 5; q++) r->q[q] = kvb_quantile(ys, k, qs[q]);
      r->count = k;
      i = j;
    }
    qsort(gr, ng, sizeof *gr, cmp_group);
    fprintf(d, "%s# %s\n# x q10 q25 median q75 q90 count\n", cur ? "\n\n" : "", series[cur]);
    for (size_t k = 0; k < ng; k++)
      fprintf(d, "%.10g %.10g %.10g %.10g %.10g %.10g %zu\n", gr[k].x, gr[k].q[0], gr[k].q[1],
              gr[k].q[2], gr[k].q[3], gr[k].q[4], gr[k].count);
  }
  free(xs);
  free(gr);
  free(ys);
  return ok ? KVB_OK : KVB_ENOMEM;
}

/* The gnuplot script of plot c, drawing into png_out and svg_out. */
static void emit_gp(FILE *g, const plot_conf *c, int cairo, char series[][160], int nseries,
                    double xmin, double xmax, int int_tics, const char *png_out,
                    const char *svg_out) {
  fprintf(g, "# generated by kvbound plot from results.csv (%s vs %s)\n", c->yc, c->xc);
  /* many curves: a wider canvas with the legend to the right, so it never hides data */
  int wide = nseries + (c->bound[0] != 0) + (c->bound2[0] != 0) > 2, width = wide ? 1400 : 960;
  fprintf(g, "set terminal %s size %d,640 enhanced font 'Sans,12'\nset output ",
          cairo ? "pngcairo" : "png", width);
  gp_quote(g, png_out);
  fprintf(g, "\nset title ");
  gp_quote(g, c->title);
  fprintf(g, " noenhanced\nset xlabel ");
  gp_quote(g, c->xlabel);
  fprintf(g, " noenhanced\nset ylabel ");
  gp_quote(g, c->ylabel);
  fprintf(g, " noenhanced\nset grid\nset key %s box opaque noenhanced\n",
          wide ? "outside right top" : "top left");
  if (c->logx) fprintf(g, "set logscale x\nset format x '%%g'\n");
  if (int_tics) fprintf(g, "set xtics 1\nset xrange [%g:%g]\n", xmin - 0.25, xmax + 0.25);
  if (c->logy) fprintf(g, "set logscale y\nset format y '%%g'\n");
  fprintf(g, "set style fill transparent solid 0.18 noborder\n");
  fprintf(g, "plot \\\n");
  for (int s = 0; s < nseries; s++) {
    const char *col = colors[s % 8];
    if (c->bands && cairo) {
      fprintf(g, "  '%s.dat' index %d using 1:2:6 with filledcurves lc rgb '%s' notitle, \\\n", c->name, s, col);
      fprintf(g, "  '%s.dat' index %d using 1:3:5 with filledcurves lc rgb '%s' notitle, \\\n", c->name, s, col);
    } else if (c->bands) {
      fprintf(g, "  '%s.dat' index %d using 1:4:2:6 with yerrorbars lc rgb '%s' notitle, \\\n", c->name, s, col);
    }
    fprintf(g, "  '%s.dat' index %d using 1:4 with linespoints lw 2 pt 7 ps 0.8 lc rgb '%s' title ",
            c->name, s, col);
    char t[240];
    snprintf(t, sizeof t, "%.159s%s", series[s], c->bands ? " (median; 25-75%, 10-90%)" : " (median)");
    gp_quote(g, t);
    fprintf(g, "%s\n", s + 1 < nseries || c->bound[0] || c->bound2[0] ? ", \\" : "");
  }
  /* the bound expressions passed kvb_plot_expr_check in read_conf */
  if (c->bound[0]) {
    fprintf(g, "  %s with lines dt 2 lw 2.5 lc rgb 'black' title ", c->bound);
    gp_quote(g, c->btitle);
    fprintf(g, "%s\n", c->bound2[0] ? ", \\" : "");
  }
  if (c->bound2[0]) {
    fprintf(g, "  %s with lines dt 3 lw 2.5 lc rgb '#555555' title ", c->bound2);
    gp_quote(g, c->b2title);
    fprintf(g, "\n");
  }
  fprintf(g, "set terminal svg size %d,640 enhanced font 'Sans,12' background rgb 'white'\n"
             "set output ", width);
  gp_quote(g, svg_out);
  fprintf(g, "\nreplot\nunset output\n");
}

/* One plot: DIR/NAME.dat (quantiles), DIR/NAME.gp (the script, for restyling), and
 * DIR/NAME.png, DIR/NAME.svg — each written under a temporary name and renamed when whole. */
static int one_plot(const char *dir, char **pf, int cairo, char *err, size_t cap) {
  plot_conf c;
  int st = read_conf(pf, &c, err, cap);
  if (st) return st;
  static char series[MAX_SERIES][160];
  point *pts = NULL;
  size_t np = 0;
  int nseries = 0, x_measure = 0;
  st = read_points(dir, &c, &pts, &np, series, &nseries, &x_measure, err, cap);
  if (st) return st;
  qsort(pts, np, sizeof *pts, cmp_point);
  /* integer x over a short linear range (T = 1..4): one tic per integer, never 1.5 */
  double xmin = pts[0].x, xmax = pts[0].x;
  int x_integer = 1;
  for (size_t i = 0; i < np; i++) {
    xmin = fmin(xmin, pts[i].x);
    xmax = fmax(xmax, pts[i].x);
    x_integer &= pts[i].x == floor(pts[i].x);
  }
  int int_tics = !c.logx && !x_measure && x_integer && xmax - xmin <= 20;
  long pid = (long)getpid();
  char tmp[1300], fin[1300], png_t[200], svg_t[200], gp_t[200];
  snprintf(tmp, sizeof tmp, "%s/.%s.dat.tmp.%ld", dir, c.name, pid);
  snprintf(fin, sizeof fin, "%s/%s.dat", dir, c.name);
  FILE *d = fopen(tmp, "w");
  st = d ? write_dat(d, pts, np, series, x_measure) : KVB_EIO;
  free(pts);
  if (d && (fclose(d) != 0 || (!st && rename(tmp, fin) != 0))) st = KVB_EIO;
  if (st) {
    unlink(tmp);
    snprintf(err, cap, "%s: cannot write", fin);
    return st;
  }
  /* NAME.gp for the user (final names), and a temporary script drawing into temporary files */
  snprintf(png_t, sizeof png_t, ".%s.png.tmp.%ld", c.name, pid);
  snprintf(svg_t, sizeof svg_t, ".%s.svg.tmp.%ld", c.name, pid);
  snprintf(gp_t, sizeof gp_t, ".%s.gp.tmp.%ld", c.name, pid);
  for (int k = 0; k < 2; k++) {
    char png[200], svg[200];
    snprintf(png, sizeof png, "%s.png", c.name);
    snprintf(svg, sizeof svg, "%s.svg", c.name);
    snprintf(tmp, sizeof tmp, "%s/%s", dir, gp_t);
    FILE *g = fopen(tmp, "w");
    if (!g) {
      snprintf(err, cap, "%s: cannot create", tmp);
      return KVB_EIO;
    }
    emit_gp(g, &c, cairo, series, nseries, xmin, xmax, int_tics, k ? png_t : png, k ? svg_t : svg);
    snprintf(fin, sizeof fin, "%s/%s.gp", dir, c.name);
    if (fclose(g) != 0 || (k == 0 && rename(tmp, fin) != 0)) {
      unlink(tmp);
      snprintf(err, cap, "%s: cannot write", fin);
      return KVB_EIO;
    }
  }
  st = run_gnuplot(dir, gp_t, err, cap);
  snprintf(tmp, sizeof tmp, "%s/%s", dir, gp_t);
  unlink(tmp);
  const char *outs[2] = {png_t, svg_t}, *ext[2] = {"png", "svg"};
  for (int k = 0; k < 2; k++) {
    snprintf(tmp, sizeof tmp, "%s/%s", dir, outs[k]);
    snprintf(fin, sizeof fin, "%s/%s.%s", dir, c.name, ext[k]);
    if (!st && rename(tmp, fin) != 0) {
      snprintf(err, cap, "%s: gnuplot wrote no output", fin);
      st = KVB_EIO;
    }
    unlink(tmp);
  }
  return st;
}

int kvb_plot_dir(const char *dir, int verbose, char *err, size_t cap) {
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

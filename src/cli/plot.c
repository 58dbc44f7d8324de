/* plot.c — `kvbound plot DIR`: turns DIR/results.csv into PNG and SVG plots through gnuplot,
 * one per line of DIR/plots.tsv (written by `kvbound run` from the spec's plot{} calls).
 *
 * Each plot groups rows into series (method, stream if several, and the values of every sweep
 * other than x) and, at each x, draws the median of y with 25–75% and 10–90% quantile bands
 * over trials and query points — the way streaming-sketch accuracy studies show error
 * quantiles against n — and the bound as a gnuplot expression in x (dashed black). */
#include "plot.h"

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

static void gp_quote(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* One plot; fields as in plots.tsv (14 per line; 13 from runs before in_step existed). */
static int one_plot(const char *dir, char **pf, int cairo, char *err, size_t cap) {
  const char *name = pf[0], *xc = pf[1], *yc = pf[2];
  int logx = atoi(pf[3]), logy = atoi(pf[4]), bands = atoi(pf[5]);
  const char *bound = strcmp(pf[6], "-") ? pf[6] : "", *btitle = strcmp(pf[7], "-") ? pf[7] : "bound";
  const char *title = strcmp(pf[8], "-") ? pf[8] : name;
  const char *xlabel = strcmp(pf[9], "-") ? pf[9] : xc, *ylabel = strcmp(pf[10], "-") ? pf[10] : yc;
  const char *bound2 = strcmp(pf[11], "-") ? pf[11] : "", *b2title = strcmp(pf[12], "-") ? pf[12] : "second curve";
  const char *in_step = pf[13] && strcmp(pf[13], "-") ? pf[13] : ""; /* comma list */
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
  int nf = split(line, ',', fld, MAX_FIELDS);
  int ix = -1, iy = -1, ist = -1, ism = -1, istat = -1, itrial = -1, ipoint = -1, isweep[8], nsw = 0;
  char hdr_names[MAX_FIELDS][40];
  for (int i = 0; i < nf; i++) {
    snprintf(hdr_names[i], sizeof hdr_names[i], "%s", fld[i]);
    if (!strcmp(fld[i], xc)) ix = i;
    if (!strcmp(fld[i], yc)) iy = i;
    if (!strcmp(fld[i], "stream")) ist = i;
    if (!strcmp(fld[i], "method")) ism = i;
    if (!strcmp(fld[i], "status")) istat = i;
    if (!strcmp(fld[i], "trial")) itrial = i;
    if (!strcmp(fld[i], "point")) ipoint = i;
  }
  /* x is a sweep column or j, or else a measure (e.g. mem_vectors): then each sweep point is
   * one x (the median of its rows' x) and the sweeps no longer split the series. */
  int x_measure = !strcmp(xc, "j") ? 0 : 1;
  for (int i = itrial + 1; itrial >= 0 && i < ist; i++)
    if (!strcmp(hdr_names[i], xc)) x_measure = 0;
  /* sweep columns lie between "trial" and "stream" */
  for (int i = itrial + 1; !x_measure && itrial >= 0 && i < ist && nsw < 8; i++) {
    char key[48];
    snprintf(key, sizeof key, ",%s,", hdr_names[i]);
    char list[300];
    snprintf(list, sizeof list, ",%s,", in_step);
    if (strcmp(hdr_names[i], xc) && !strstr(list, key)) isweep[nsw++] = i;
  }
  if (ix < 0 || iy < 0 || ist < 0 || ism < 0 || istat < 0 || (x_measure && ipoint < 0)) {
    fclose(f);
    snprintf(err, cap, "%s: plot '%s' needs columns '%s' and '%s' (and stream, method, status)",
             path, name, xc, yc);
    return KVB_EFORMAT;
  }
  size_t np = 0, pcap = 1024;
  point *pts = malloc(pcap * sizeof *pts);
  char series[MAX_SERIES][160];
  int nseries = 0;
  char first_stream[64] = "";
  int multi_stream = 0; /* the stream label joins the series name only when it varies */
  /* first pass: are there several streams? */
  long data_start = ftell(f);
  while (fgets(line, sizeof line, f)) {
    int n = split(line, ',', fld, MAX_FIELDS);
    if (n != nf) continue;
    if (!first_stream[0]) snprintf(first_stream, sizeof first_stream, "%s", fld[ist]);
    multi_stream |= strcmp(first_stream, fld[ist]) != 0;
  }
  fseek(f, data_start, SEEK_SET);
  while (pts && fgets(line, sizeof line, f)) {
    int n = split(line, ',', fld, MAX_FIELDS);
    if (n != nf || atoi(fld[istat]) != 0) continue;
    double x = strtod(fld[ix], NULL), y = strtod(fld[iy], NULL);
    if (!isfinite(x) || !isfinite(y) || (logx && x <= 0) || (logy && y <= 0)) continue;
    char key[160];
    size_t o = (size_t)snprintf(key, sizeof key, "%s", fld[ism]);
    if (multi_stream) o += (size_t)snprintf(key + o, sizeof key - o, " / %s", fld[ist]);
    for (int s = 0; s < nsw && o < sizeof key; s++)
      o += (size_t)snprintf(key + o, sizeof key - o, " %s=%s", hdr_names[isweep[s]], fld[isweep[s]]);
    int si = 0;
    while (si < nseries && strcmp(series[si], key)) si++;
    if (si == nseries) {
      if (nseries == MAX_SERIES) continue;
      snprintf(series[nseries++], sizeof series[0], "%s", key);
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
    snprintf(err, cap, "plot '%s': no usable rows (status 0, finite %s and %s%s)", name, xc, yc,
             logx || logy ? ", positive on log axes" : "");
    return KVB_EFORMAT;
  }
  qsort(pts, np, sizeof *pts, cmp_point);
  /* integer x over a short linear range (T = 1..4): one tic per integer, never 1.5 */
  double xmin = pts[0].x, xmax = pts[0].x;
  int x_integer = 1;
  for (size_t i = 0; i < np; i++) {
    xmin = fmin(xmin, pts[i].x);
    xmax = fmax(xmax, pts[i].x);
    x_integer &= pts[i].x == floor(pts[i].x);
  }
  int int_tics = !logx && !x_measure && x_integer && xmax - xmin <= 20;
  snprintf(path, sizeof path, "%s/%s.dat", dir, name);
  FILE *d = fopen(path, "w");
  if (!d) {
    free(pts);
    snprintf(err, cap, "%s: cannot create", path);
    return KVB_EIO;
  }
  double *ys = malloc(np * sizeof *ys), *xs = malloc(np * sizeof *xs);
  group_row *gr = malloc(np * sizeof *gr);
  for (size_t i = 0; i < np && ys && xs && gr;) {
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
      for (int c = 0; c < 5; c++) r->q[c] = kvb_quantile(ys, k, qs[c]);
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
  free(pts);
  fclose(d);
  snprintf(path, sizeof path, "%s/%s.gp", dir, name);
  FILE *g = fopen(path, "w");
  if (!g) {
    snprintf(err, cap, "%s: cannot create", path);
    return KVB_EIO;
  }
  fprintf(g, "# generated by kvbound plot from results.csv (%s vs %s)\n", yc, xc);
  /* many curves: a wider canvas with the legend to the right, so it never hides data */
  int wide = nseries + (bound[0] != 0) + (bound2[0] != 0) > 2, width = wide ? 1400 : 960;
  fprintf(g, "set terminal %s size %d,640 enhanced font 'Sans,12'\nset output '%s.png'\n",
          cairo ? "pngcairo" : "png", width, name);

  fprintf(g, "set title ");
  gp_quote(g, title);
  fprintf(g, " noenhanced\nset xlabel ");
  gp_quote(g, xlabel);
  fprintf(g, " noenhanced\nset ylabel ");
  gp_quote(g, ylabel);
  fprintf(g, " noenhanced\nset grid\nset key %s box opaque noenhanced\n",
          wide ? "outside right top" : "top left");
  if (logx) fprintf(g, "set logscale x\nset format x '%%g'\n");
  if (int_tics) fprintf(g, "set xtics 1\nset xrange [%g:%g]\n", xmin - 0.25, xmax + 0.25);
  if (logy) fprintf(g, "set logscale y\nset format y '%%g'\n");
  fprintf(g, "set style fill transparent solid 0.18 noborder\n");
  fprintf(g, "plot \\\n");
  for (int s = 0; s < nseries; s++) {
    const char *c = colors[s % 8];
    if (bands && cairo) {
      fprintf(g, "  '%s.dat' index %d using 1:2:6 with filledcurves lc rgb '%s' notitle, \\\n", name, s, c);
      fprintf(g, "  '%s.dat' index %d using 1:3:5 with filledcurves lc rgb '%s' notitle, \\\n", name, s, c);
    } else if (bands) {
      fprintf(g, "  '%s.dat' index %d using 1:4:2:6 with yerrorbars lc rgb '%s' notitle, \\\n", name, s, c);
    }
    fprintf(g, "  '%s.dat' index %d using 1:4 with linespoints lw 2 pt 7 ps 0.8 lc rgb '%s' title ", name, s, c);
    fputc('"', g);
    for (const char *c2 = series[s]; *c2; c2++) {
      if (*c2 == '"' || *c2 == '\\') fputc('\\', g);
      fputc(*c2, g);
    }
    fprintf(g, "%s\"", bands ? " (median; 25-75%, 10-90%)" : " (median)");
    fprintf(g, "%s\n", s + 1 < nseries || bound[0] || bound2[0] ? ", \\" : "");
  }
  if (bound[0]) {
    fprintf(g, "  %s with lines dt 2 lw 2.5 lc rgb 'black' title ", bound);
    gp_quote(g, btitle);
    fprintf(g, "%s\n", bound2[0] ? ", \\" : "");
  }
  if (bound2[0]) {
    fprintf(g, "  %s with lines dt 3 lw 2.5 lc rgb '#555555' title ", bound2);
    gp_quote(g, b2title);
    fprintf(g, "\n");
  }
  fprintf(g, "set terminal svg size %d,640 enhanced font 'Sans,12' background rgb 'white'\n"
             "set output '%s.svg'\nreplot\nunset output\n", width, name);
  fclose(g);
  snprintf(path, sizeof path, "%s.gp", name);
  return run_gnuplot(dir, path, err, cap);
}

int kvb_plot_dir(const char *dir, int verbose, char *err, size_t cap) {
  char path[1200];
  snprintf(path, sizeof path, "%s/plots.tsv", dir);
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, cap, "%s: cannot open (is %s a `kvbound run` output directory?)", path, dir);
    return KVB_EIO;
  }
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

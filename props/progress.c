/* progress.c — progress lines with a remaining-time estimate (progress.h). */
#include "progress.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

double prop_progress_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void prop_progress_init(prop_progress *p, FILE *to, const char *costs_path, const char *tier) {
  memset(p, 0, sizeof *p);
  p->to = to;
  p->tier = tier;
  p->have_table = 1;
  p->t0 = prop_progress_now();
  if (!to || !costs_path || !*costs_path) {
    p->have_table = 0;
    return;
  }
  FILE *f = fopen(costs_path, "r");
  if (!f) {
    p->have_table = 0;
    return;
  }
  char line[256], t[16], id[96];
  double s;
  size_t cap = 0, bad = 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    if (sscanf(line, "%15s %95s %lf", t, id, &s) != 3 || !(s >= 0)) {
      bad++;
      continue;
    }
    if (strcmp(t, tier) != 0) continue;
    if (p->nrec == cap) {
      size_t nc = cap ? 2 * cap : 128;
      char(*ni)[96] = realloc(p->ids, nc * sizeof *ni);
      if (!ni) break;
      p->ids = ni;
      double *ns = realloc(p->secs, nc * sizeof *ns);
      if (!ns) break;
      p->secs = ns, cap = nc;
    }
    memcpy(p->ids[p->nrec], id, sizeof id);
    p->secs[p->nrec++] = s;
  }
  fclose(f);
  if (bad) fprintf(to, "# progress: %zu malformed rows in %s skipped\n", bad, costs_path);
  if (!p->nrec) p->have_table = 0;
}

double prop_progress_cost(const prop_progress *p, const char *id) {
  for (size_t i = 0; i < p->nrec; i++)
    if (strcmp(p->ids[i], id) == 0) return p->secs[i];
  return -1;
}

void prop_progress_add(prop_progress *p, const char *id) {
  if (!p->to) return;
  p->n++;
  double c = prop_progress_cost(p, id);
  if (c < 0) p->have_table = 0; /* one unknown check: fall back to the mean so far */
  else p->left_cost += c;
}

double prop_progress_estimate(size_t k, size_t n, double elapsed, int have_table,
                              double done_cost, double left_cost) {
  if (k >= n) return 0;
  if (have_table) {
    /* the table's seconds, scaled by this run's speed once enough recorded work is done (a
     * twentieth of it, and a second: a ratio of two tiny numbers says nothing; a loaded or
     * faster machine); before that, the table as it is */
    double total = done_cost + left_cost;
    double speed = done_cost >= 1.0 && done_cost >= 0.05 * total ? elapsed / done_cost : 1.0;
    return left_cost * speed;
  }
  if (k == 0) return -1; /* nothing to go on yet */
  return elapsed / (double)k * (double)(n - k);
}

static void fmt_secs(char *b, size_t nb, double s) {
  if (s < 0) snprintf(b, nb, "?");
  else if (s < 90) snprintf(b, nb, "%.0f s", s);
  else snprintf(b, nb, "%.0f min %02.0f s", (double)(long)(s / 60), s - 60.0 * (double)(long)(s / 60));
}

void prop_progress_start(prop_progress *p, const char *id) {
  if (!p->to) return;
  p->k++;
  double el = prop_progress_now() - p->t0;
  double left = prop_progress_estimate(p->k - 1, p->n, el, p->have_table, p->done_cost,
                                       p->left_cost);
  char a[32], b[32];
  fmt_secs(a, sizeof a, el), fmt_secs(b, sizeof b, left);
  fprintf(p->to, "[%zu/%zu] %s (%s elapsed, ~%s left%s)\n", p->k, p->n, id, a, b,
          p->have_table ? "" : ", from the mean so far");
  fflush(p->to);
}

void prop_progress_done(prop_progress *p, const char *id, double secs) {
  if (!p->to) return;
  double c = prop_progress_cost(p, id);
  if (c >= 0) p->done_cost += c, p->left_cost -= c;
  if (p->left_cost < 0) p->left_cost = 0;
  fprintf(p->to, "# cost %s %s %.2f\n", p->tier, id, secs);
  fflush(p->to);
}

void prop_progress_free(prop_progress *p) {
  free(p->ids), free(p->secs);
  p->ids = NULL, p->secs = NULL, p->nrec = 0;
}

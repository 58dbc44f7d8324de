/* runner_tasks.c — the runner's model/task stage (runner.h, tasks{}): generated long-context
 * tasks answered inside tasks{}'s model (SmolLM2-135M, or Gemma 3 270M with the methods on its
 * global layers; lm.h) by every method a spec declares, question-agnostic or
 * question-aware (src/model/task_run.h). One row per (task, method) — exact attention first, as
 * the reference every delta is taken against — and a summary per (method, length). The spec's
 * seed seeds the methods' random streams; tasks{}'s seed the tasks (task i: seed + i). */
#include "kvb_error.h"
#include "model.h"
#include "registry.h"
#include "runner.h"
#include "runner_output.h"
#include "runner_stage.h"
#include "task_run.h"
#include "tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the form's name (task_run.h: 0 agnostic, 1 aware, 2 the authors' protocol) */
#define FORM_LONG(a) ((a) == 2 ? "the authors' protocol" : (a) ? "question-aware" : "question-agnostic")
#define FORM_SHORT(a) ((a) == 2 ? "authors" : (a) ? "aware" : "agnostic")

typedef struct {
  size_t length;
  double depth;
  uint64_t seed;
  unsigned char right;
  double score, loglik, delta, bytes, vectors;
  char text[96];
} task_row;

/* A CSV field: the text in quotes, quotes doubled, newlines made spaces. */
static void csv_text(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
  }
  fputc('"', f);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The summary: per method (exact first) and length, exact-match accuracy, mean delta and bytes. */
static void summary(const kvb_experiment *e, const kvb_lm *lm, FILE *ft, FILE *fm,
                    const task_row *rows, size_t ntask, size_t nm) {
  const kvb_run_tasks *t = &e->tasks;
  fprintf(ft, "%s: %s, %s, %zu tasks, model %s (model/task stage)\n", e->name,
          kvb_task_family_name((kvb_task_family)t->family), FORM_LONG(t->aware), ntask,
          lm->name);
  fprintf(fm, "%s: %s, %s, %zu tasks, model %s. Accuracy = RULER's exact match of the greedy answer; delta = "
          "the answer's teacher-forced log-likelihood minus exact attention's (nats).\n\n"
          "| method | length | tasks | accuracy | mean delta log-lik | KB per cache | KB at fp16 |\n"
          "|---|---|---|---|---|---|---|\n", e->name, kvb_task_family_name((kvb_task_family)t->family),
          FORM_LONG(t->aware), ntask, lm->name);
  for (size_t m = 0; m <= nm; m++)
    for (size_t l = 0; l < t->nlengths; l++) {
      unsigned n = 0, r = 0;
      double d = 0, b = 0, b16 = 0;
      for (size_t i = 0; i < ntask; i++) {
        const task_row *w = &rows[i * (nm + 1) + m];
        if (w->length != t->lengths[l]) continue;
        n++, r += w->right, d += w->delta, b += w->bytes;
        /* priced as the field prices a cache: kept K and V in fp16 (runner.h) */
        b16 += kvb_run_bytes_fp16(w->bytes, w->vectors, (size_t)lm->head_dim, (size_t)lm->head_dim);
      }
      if (!n) continue;
      const char *label = m ? e->methods[m - 1].label : "exact";
      fprintf(ft, "  %-20s length %6zu: %u/%u right, mean delta log-lik %+8.3f, %8.1f KB per cache "
              "(%.1f at fp16)\n", label, t->lengths[l], r, n, d / n, b / n / 1024, b16 / n / 1024);
      fprintf(fm, "| %s | %zu | %u | %.2f | %+.3f | %.1f | %.1f |\n", label, t->lengths[l], n,
              (double)r / n, d / n, b / n / 1024, b16 / n / 1024);
    }
}

int kvb_experiment_run_tasks(const kvb_experiment *e, const char *dir, int progress,
                             kvb_run_report *rep) {
  if (!e || !dir || !rep) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  memset(rep, 0, sizeof *rep);
  const kvb_run_tasks *t = &e->tasks;
  if (!t->on || !t->nlengths || !t->per_cell || e->nmethods == 0 || e->nmethods > KVB_RUN_MAX_METHODS)
    return KVB_ERROR(KVB_EINVAL, "run: not a task spec (tasks{} with lengths and a method)");
  size_t nd = t->ndepths ? t->ndepths : 1, per = t->ndepths ? t->per_cell : t->per_cell;
  size_t ntask = t->nlengths * nd * per, nm = e->nmethods;
  if (ntask > KVB_RUN_MAX_TASKS) return KVB_ERROR(KVB_EINVAL, "run: %zu tasks exceed the limit", ntask);
  const kvb_method_type *types[KVB_RUN_MAX_METHODS];
  for (size_t m = 0; m < nm; m++) {
    types[m] = kvb_method_lookup(e->methods[m].type);
    if (!types[m]) return KVB_ERROR(KVB_EINVAL, "run: unknown method '%s'", e->methods[m].type);
  }
  int st = runner_mkdir_p(dir);
  if (st) return st;
  kvb_lm lm;
  st = kvb_lm_load((kvb_lm_kind)t->model, NULL, &lm);
  if (st) return KVB_ERROR(st, "tasks{}: the model (%s): %s", kvb_lm_kind_key((kvb_lm_kind)t->model),
                           kvb_strerror_last());
  for (size_t l = 0; l < t->nlengths && !st; l++)
    if (t->lengths[l] > (size_t)lm.n_ctx)
      st = KVB_ERROR(KVB_EINVAL, "%s:%d: tasks{}: length %zu exceeds %s's context %d", e->spec_path,
                     t->line, t->lengths[l], lm.name, lm.n_ctx);
  task_row *rows = st ? NULL : calloc(ntask * (nm + 1), sizeof *rows);
  if (!st && !rows) st = KVB_ERROR(KVB_ENOMEM, "run: out of memory for %zu tasks", ntask);
  double t0 = now_s();
  for (size_t i = 0; i < ntask && !st; i++) {
    size_t l = i / (nd * per), k = i % (nd * per);
    double depth = t->ndepths ? t->depths[k / per] : ((double)k + 0.5) / (double)per;
    uint64_t seed = t->task_seed + i;
    kvb_task task;
    kvb_task_prep p;
    memset(&p, 0, sizeof p);
    st = kvb_task_make(&lm, (kvb_task_family)t->family, t->lengths[l], depth, seed, &task);
    if (st) break;
    st = kvb_task_prepare(&lm, &task, t->aware, &p);
    double exact_ll = 0;
    for (size_t m = 0; m <= nm && !st; m++) {
      kvb_task_pass r;
      kvb_dec_opts o = {0, e->seed, 0};
      if (m == 0) {
        st = kvb_task_pass_run(&lm, &p, NULL, NULL, &o, &r);
      } else {
        kvb_task_method tm;
        kvb_task_method_init(&tm, types[m - 1], &e->methods[m - 1].params, &lm, p.n0);
        o.observe = kvb_task_method_observe(&tm, p.n0);
        st = kvb_task_pass_run(&lm, &p, kvb_task_method_make, &tm, &o, &r);
      }
      if (st) {
        char why[600];
        snprintf(why, sizeof why, "%s", kvb_strerror_last());
        st = KVB_ERROR(st, "%s:%d: method '%s' on task %zu (length %zu, depth %.3f, seed %llu): %s",
                       e->spec_path, m ? e->methods[m - 1].line : t->line,
                       m ? e->methods[m - 1].label : "exact", i, t->lengths[l], depth,
                       (unsigned long long)seed, why);
        break;
      }
      if (m == 0) exact_ll = r.loglik;
      task_row *w = &rows[i * (nm + 1) + m];
      w->length = t->lengths[l], w->depth = depth, w->seed = seed, w->right = (unsigned char)r.right;
      w->score = r.score, w->loglik = r.loglik, w->delta = r.loglik - exact_ll;
      w->bytes = r.bytes, w->vectors = r.vectors;
      snprintf(w->text, sizeof w->text, "%s", r.text ? r.text : "");
      kvb_task_pass_free(&r);
    }
    kvb_task_prep_free(&p);
    kvb_task_free(&task);
    if (progress) {
      fprintf(stderr, "\rtask %zu/%zu (%.0f s)", i + 1, ntask, now_s() - t0);
      fflush(stderr);
    }
  }
  if (progress) fprintf(stderr, "\n");
  runner_staged sg = {.n = 0};
  FILE *f = NULL;
  if (!st) st = (f = runner_stage_open(&sg, dir, "results.csv")) ? KVB_OK : KVB_EIO;
  if (!st) {
    fprintf(f, "family,length,depth,task_seed,mode,method,right,score,loglik,delta,bytes,vectors,answer\n");
    for (size_t i = 0; i < ntask; i++)
      for (size_t m = 0; m <= nm; m++) {
        const task_row *w = &rows[i * (nm + 1) + m];
        fprintf(f, "%s,%zu,%.4f,%llu,%s,%s,%d,%.4f,%.6g,%.6g,%.0f,%.1f,",
                kvb_task_family_name((kvb_task_family)t->family), w->length, w->depth,
                (unsigned long long)w->seed, FORM_SHORT(t->aware),
                m ? e->methods[m - 1].label : "exact", w->right, w->score, w->loglik, w->delta,
                w->bytes, w->vectors);
        csv_text(f, w->text);
        fputc('\n', f);
      }
    st = runner_stage_close(f, "results.csv") ? KVB_EIO : KVB_OK;
    rep->rows = ntask * (nm + 1);
  }
  if (!st) {
    FILE *ft = runner_stage_open(&sg, dir, "summary.txt");
    FILE *fm = ft ? runner_stage_open(&sg, dir, "summary.md") : NULL;
    if (ft && fm) summary(e, &lm, ft, fm, rows, ntask, nm);
    if (ft) st = runner_stage_close(ft, "summary.txt") ? KVB_EIO : st;
    if (fm) st = runner_stage_close(fm, "summary.md") ? KVB_EIO : st;
    if (!ft || !fm) st = KVB_EIO;
  }
  if (!st) { /* no plot{} in a task spec: the report's plots come from scripts/long-context-plot */
    st = (f = runner_stage_open(&sg, dir, "plots.tsv")) ? KVB_OK : KVB_EIO;
    if (!st) {
      fprintf(f, "# no plots: a tasks{} spec\n");
      st = runner_stage_close(f, "plots.tsv") ? KVB_EIO : KVB_OK;
    }
  }
  if (!st) { /* last: its presence marks a complete run */
    st = (f = runner_stage_open(&sg, dir, "meta.json")) ? KVB_OK : KVB_EIO;
    if (!st) {
      runner_json_spec(f, e, NULL);
      fprintf(f, ",\n  \"stage\": \"tasks\",\n  \"model\": \"%s\",\n  \"model_name\": \"%s\",\n"
              "  \"seed\": %llu,\n  \"task_seed\": %llu,\n"
              "  \"tasks\": %zu,\n  \"rows\": %zu,\n  \"wall_seconds\": %.3f\n}\n", lm.key, lm.name,
              (unsigned long long)e->seed, (unsigned long long)t->task_seed, ntask, rep->rows,
              now_s() - t0);
      st = runner_stage_close(f, "meta.json") ? KVB_EIO : KVB_OK;
    }
  }
  if (!st) st = runner_stage_commit(&sg, dir);
  else runner_stage_discard(&sg);
  if (!st) { /* the summary on stdout, as a run prints it */
    char path[1200];
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    FILE *s = fopen(path, "r");
    char line[512];
    while (s && fgets(line, sizeof line, s)) fputs(line, stdout);
    if (s) fclose(s);
  }
  free(rows);
  kvb_lm_free(&lm);
  return st;
}

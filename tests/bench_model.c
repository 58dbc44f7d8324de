/* bench_model.c — prefill speed of both real models (SmolLM2-135M, src/model/model.c; Gemma 3
 * 270M, src/model/model.c with their architecture records) per context length, against each model's own flop bound
 * measured in the same run: the flops a prefill must do divided by the SGEMM rate of this
 * machine (tests/bench_limit.h: a single-threaded 1024³ product on each core the prefill's
 * workers use, pinned, in thread CPU time after a warm-up — as the prefill runs its products,
 * one BLAS thread per worker).
 *
 * Flops (multiply-adds counted as 2): every linear layer, 2·params·L; attention, 2·2·n_head·hd
 * per visible (query, key) pair for QKᵀ and PV — causal, so L(L+1)/2 pairs on a full layer, and
 * Σ_p min(p + 1, 512) on Gemma's five-of-six sliding-window layers; no logits (neither prefill
 * computes them). The ratio time/bound says how far the forward pass is from the machine's
 * limit and how that grows with length. Text: the debian-licenses corpus, wrapped around where
 * a length exceeds it (the flops do not depend on the tokens). A measurement, never a verdict
 * (tests/README.md, Benchmarks). Each model is SKIPped without its file.
 *
 * Lengths: 512 … 8192 for both, and Gemma's 16384 and 32768 (its trained context; about three
 * of `make bench`'s minutes on two idle cores) unless KVB_BENCH_SHORT=1; KVB_BENCH_LENGTH=N runs
 * only length N, KVB_BENCH_MODEL=smollm2|gemma3 only that model. Times: wall and CPU seconds; the
 * ratio is CPU time over the bound at the rate in flop per CPU second (the per-core rates'
 * mean; a shared machine's wall clock counts other processes' turns), the wall ratio (wall time
 * over the bound at the rate in flop per wall second: the per-core rates summed) beside it.
 *
 * The limit held still (tests/bench_stats.h): the SGEMM rate is sampled at the start, before
 * every length and at the end (1 warm-up and 3 kept passes each, every kept pass a sample); every ratio of the closing table is against the best sample of
 * the whole run, printed with its paired ratio (against the sample right before that length)
 * and the spread best/worst. A row is printed as each length finishes (against the best sample
 * so far) and every model's table again at the end of the run (after both models) against the
 * run's best. Columns: "prefill GFLOP/s" is
 * the prefill's own throughput (its flops over its wall seconds); the SGEMM rate is in the
 * limits' lines. After each closing table its JSON lines (bench_stats.h: the two SGEMM series
 * and every ratio with the rate it was formed against), which scripts/check-bench-ratios
 * recomputes; KVB_BENCH_MUTANT=ratio_worst|ratio_paired (test only) forms the closing table
 * against the worst sample or the sample taken right before each length instead, and the
 * check must reject it. */
#define _GNU_SOURCE 1 /* bench_limit.h pins its threads (sched_getaffinity, pthread_setaffinity_np) */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* bench_clock.h: its ratio is formed on CPU time, the rate's and the prefill's alike (wall
 * seconds printed beside). */
#include "bench_clock.h"
#include "bench_limit.h"
#include "bench_stats.h"
#include "kvb_error.h"
#include "model.h"
#include "parallel.h"
#include "lm.h"
#include "real_text.h"

#ifndef KVB_BUILD_COMMIT
#define KVB_BUILD_COMMIT "unknown" /* built outside the Makefile */
#endif

/* Every SGEMM sample of the run (tests/bench_limit.h: one single-threaded 1024³ product per core,
 * pinned, timed in its thread's CPU time, after a warm-up product): flop per CPU second (the
 * per-core rates' mean) and flop per wall second (their sum: the cores the prefill's workers run
 * on, kept busy). */
static kvb_bs_series S_cpu, S_wall;
#define SERIES_CPU "SGEMM 1024^3 1 thr/core, per CPU s"
#define SERIES_WALL "SGEMM 1024^3 1 thr/core, per wall s"

/* The rate the closing table forms a ratio against: the run's best sample of the series; a
 * test-only mutant (KVB_BENCH_MUTANT) takes the worst or the length's own sample. */
static const char *g_mutant;
static double closing_rate(const kvb_bs_series *s, double paired) {
  if (g_mutant && !strcmp(g_mutant, "ratio_worst")) return kvb_bs_worst(s);
  if (g_mutant && !strcmp(g_mutant, "ratio_paired")) return paired;
  return kvb_bs_best(s);
}

/* One measurement of the limit on the prefill's threads (kvb_threads_default(): its workers),
 * 1 warm-up and 3 kept passes, every kept pass a sample of both series; *per_cpu and *per_wall
 * get this measurement's best (0 when it failed). */
static void sgemm_rate(double *per_cpu, double *per_wall) {
  kvb_lim_spec sp = {KVB_LIM_SGEMM, 1024, kvb_threads_default(), 1, 3};
  kvb_lim_result r;
  *per_cpu = *per_wall = 0;
  if (kvb_lim_measure(&sp, &r)) return;
  kvb_lim_add(&S_cpu, &r, 1.0 / r.threads), kvb_lim_add(&S_wall, &r, 1.0);
  *per_cpu = r.best / r.threads, *per_wall = r.best;
}

/* The shape the flop count needs. window 0: every layer attends over the whole prefix. */
typedef struct {
  int n_layer, d_model, n_head, n_head_kv, head_dim, d_ff, n_ctx;
  int window, period; /* layer l is full when l % period == period − 1 (period 0: all full) */
} shape;

static double prefill_flops(const shape *c, double L) {
  double hd = c->head_dim, dq = c->n_head * hd, dkv = c->n_head_kv * hd;
  double linear = (double)c->d_model * (dq + 2 * dkv) + dq * c->d_model + 3.0 * c->d_model * c->d_ff;
  double full = L * (L + 1) / 2, w = c->window, local = full;
  if (w > 0 && L > w) local = w * (w + 1) / 2 + (L - w) * w; /* Σ_p min(p + 1, w) */
  double per_pair = 2.0 * 2.0 * c->n_head * hd, total = 0;
  for (int l = 0; l < c->n_layer; l++) {
    int is_full = c->period <= 0 || l % c->period == c->period - 1;
    total += 2.0 * linear * L + per_pair * (is_full ? full : local);
  }
  return total;
}

typedef int (*prefill_fn)(const void *m, const int32_t *ids, size_t n, float *hidden);
static int run_smol(const void *m, const int32_t *ids, size_t n, float *hid) {
  return kvb_model_prefill(m, ids, n, hid, NULL, NULL);
}
static int run_gemma(const void *m, const int32_t *ids, size_t n, float *hid) {
  return kvb_model_prefill(m, ids, n, hid, NULL, NULL);
}

/* ids wrapped around to `want` tokens (the first token, BOS for Gemma, kept once). */
static int32_t *wrap_ids(const int32_t *ids, size_t n, size_t want) {
  int32_t *w = malloc(want * sizeof *w);
  if (!w || n < 2) {
    free(w);
    return NULL;
  }
  for (size_t i = 0; i < want; i++) w[i] = i < n ? ids[i] : ids[1 + (i - 1) % (n - 1)];
  return w;
}

/* One length's measurement, kept for the closing table. */
typedef struct {
  size_t L;
  double wall, cpu, flops;
  double rate_cpu, rate_wall; /* the SGEMM measurement right before it (its best pass) */
} row;

/* Every model's rows, for the closing tables printed once the whole run's samples are in. */
static struct {
  const char *name;
  row rows[16];
  size_t nr;
} kept[2];
static size_t nkept;

static void print_head(void) {
  printf("%8s %9s %9s %9s %10s %10s %9s %9s %9s %9s %9s\n", "tokens", "wall s", "cpu s",
         "tokens/s", "GFLOP", "prefill", "bound s", "cpu/bound", "paired", "wall/bnd",
         "paired");
  printf("%8s %9s %9s %9s %10s %10s %9s %9s %9s %9s %9s\n", "", "", "", "", "", "GFLOP/s", "(cpu)",
         "(best)", "(cpu)", "(best)", "(wall)");
}

/* A row against rates best_cpu, best_wall (flop per CPU / wall second). */
static void print_row(const row *r, double best_cpu, double best_wall) {
  double bound = r->flops / best_cpu;
  printf("%8zu %9.2f %9.2f %9.0f %10.1f %10.2f %9.2f %9.3f %9.3f %9.3f %9.3f\n", r->L, r->wall,
         r->cpu, (double)r->L / r->wall, r->flops / 1e9, r->flops / r->wall / 1e9, bound,
         kvb_bs_x_bound(r->cpu, r->flops, best_cpu), kvb_bs_x_bound(r->cpu, r->flops, r->rate_cpu),
         kvb_bs_x_bound(r->wall, r->flops, best_wall),
         kvb_bs_x_bound(r->wall, r->flops, r->rate_wall));
}

static int bench(const char *name, const shape *c, const void *m, prefill_fn run,
                 const int32_t *ids, size_t n, const size_t *lens, size_t nlens) {
  printf("bench_model %s: trained context %d tokens, text %zu tokens (wrapped beyond); rows as "
         "each length finishes, against the best SGEMM sample so far\n", name, c->n_ctx, n);
  print_head();
  int st = KVB_OK;
  row rows[16];
  size_t nr = 0;
  const char *one = getenv("KVB_BENCH_LENGTH"); /* just this length */
  for (size_t i = 0; i < nlens && st == KVB_OK && nr < 16; i++) {
    size_t L = lens[i];
    if (one && strtoul(one, NULL, 10) != L) continue;
    if (L > (size_t)c->n_ctx) break;
    float *hid = malloc(L * (size_t)c->d_model * sizeof(float));
    int32_t *w = wrap_ids(ids, n, L);
    if (!hid || !w) {
      free(hid), free(w);
      printf("bench_model %s: out of memory at %zu tokens\n", name, L);
      break;
    }
    /* the machine is shared: the rate is sampled again just before each length */
    double rc, rw;
    sgemm_rate(&rc, &rw);
    double t0 = now(), c0 = cpu_now();
    st = run(m, w, L, hid);
    double s = now() - t0, cs = cpu_now() - c0, fl = prefill_flops(c, (double)L);
    free(hid), free(w);
    if (st != KVB_OK) {
      printf("bench_model %s: prefill of %zu tokens failed: %s\n", name, L, kvb_strerror_last());
      break;
    }
    row r = {L, s, cs, fl, rc, rw};
    rows[nr++] = r;
    print_row(&r, kvb_bs_best(&S_cpu), kvb_bs_best(&S_wall));
    fflush(stdout);
  }
  if (nr && nkept < sizeof kept / sizeof *kept) {
    kept[nkept].name = name, kept[nkept].nr = nr;
    memcpy(kept[nkept].rows, rows, nr * sizeof *rows);
    nkept++;
  }
  return st;
}

/* The closing tables, after every model: each row against the best SGEMM sample of the whole
 * run (sampled once more first), then the JSON lines of the two series and of every ratio. */
static void closing_tables(void) {
  if (!nkept) return;
  double ec, ew;
  sgemm_rate(&ec, &ew); /* once more at the end of the run */
  double bc = kvb_bs_best(&S_cpu), bw = kvb_bs_best(&S_wall), sc = kvb_bs_spread(&S_cpu),
         sw = kvb_bs_spread(&S_wall);
  for (size_t k = 0; k < nkept; k++) {
    const char *name = kept[k].name;
    const row *rows = kept[k].rows;
    size_t nr = kept[k].nr;
    printf("bench_model %s against the run's best SGEMM sample: %.2f GFLOP per CPU second "
           "(worst %.2f, spread %.3f), %.2f GFLOP per wall second (worst %.2f, spread %.3f), %zu "
           "samples\n", name, bc / 1e9, kvb_bs_worst(&S_cpu) / 1e9, sc, bw / 1e9,
           kvb_bs_worst(&S_wall) / 1e9, sw, S_cpu.n);
    print_head();
    int outside = 0;
    for (size_t i = 0; i < nr; i++) {
      double rc = closing_rate(&S_cpu, rows[i].rate_cpu), rw = closing_rate(&S_wall, rows[i].rate_wall);
      print_row(&rows[i], rc, rw);
      outside += !kvb_bs_x_ok(kvb_bs_x_bound(rows[i].cpu, rows[i].flops, rc), sc);
      outside += !kvb_bs_x_ok(kvb_bs_x_bound(rows[i].wall, rows[i].flops, rw), sw);
    }
    printf("bench_model %s: %d ratio(s) below 1 by more than the spread%s\n", name, outside,
           outside ? " (the ratio compares unlike things: check the accounting)" : "");
  }
  kvb_bs_json_series("bench_model", KVB_BUILD_COMMIT, SERIES_CPU, &S_cpu);
  kvb_bs_json_series("bench_model", KVB_BUILD_COMMIT, SERIES_WALL, &S_wall);
  for (size_t k = 0; k < nkept; k++)
    for (size_t i = 0; i < kept[k].nr; i++) {
      const row *r = &kept[k].rows[i];
      double rc = closing_rate(&S_cpu, r->rate_cpu), rw = closing_rate(&S_wall, r->rate_wall);
      char what[96];
      snprintf(what, sizeof what, "%s prefill %zu tokens, CPU time", kept[k].name, r->L);
      kvb_bs_json_ratio("bench_model", KVB_BUILD_COMMIT, what, SERIES_CPU, 0, 1, r->wall, r->cpu,
                        r->flops, rc, kvb_bs_x_bound(r->cpu, r->flops, rc),
                        kvb_bs_x_bound(r->cpu, r->flops, r->rate_cpu), sc);
      snprintf(what, sizeof what, "%s prefill %zu tokens, wall time", kept[k].name, r->L);
      kvb_bs_json_ratio("bench_model", KVB_BUILD_COMMIT, what, SERIES_WALL, 0, 0, r->wall, r->cpu,
                        r->flops, rw, kvb_bs_x_bound(r->wall, r->flops, rw),
                        kvb_bs_x_bound(r->wall, r->flops, r->rate_wall), sw);
    }
  fflush(stdout);
}

static char *corpus(size_t *len) {
  char *buf = NULL;
  if (kvb_text_read(KVB_TEXT_LICENSES, &buf, len)) return NULL;
  return buf;
}

int main(void) {
  static const size_t lens_smol[] = {512, 1024, 2048, 4096, 8192};
  static const size_t lens_gemma[] = {512, 1024, 2048, 4096, 8192, 16384, 32768};
  const char *sv = getenv("KVB_BENCH_SHORT");
  int longer = !(sv && strcmp(sv, "1") == 0), rc = 0;
  const char *mv = getenv("KVB_BENCH_MUTANT");
  if (mv && *mv) {
    if (strcmp(mv, "ratio_worst") && strcmp(mv, "ratio_paired")) {
      fprintf(stderr, "bench_model: KVB_BENCH_MUTANT is ratio_worst or ratio_paired, got '%s'\n", mv);
      return 2;
    }
    g_mutant = mv;
    printf("TEST-ONLY MUTANT %s: the closing tables' ratios are wrong on purpose "
           "(KVB_BENCH_MUTANT)\n", mv);
  }
  double rate, rate_wall;
  sgemm_rate(&rate, &rate_wall);
  printf("bench_model (commit %s): SGEMM 1024^3 %.2f GFLOP per CPU second, %.2f per wall second "
         "on %d core(s) at the start (one single-threaded product per core, pinned, in thread "
         "CPU time after a warm-up; sampled again before every length and at the end)\n",
         KVB_BUILD_COMMIT, rate / 1e9, rate_wall / 1e9, kvb_threads_default());
  const char *only = getenv("KVB_BENCH_MODEL"); /* smollm2 or gemma3: just that one */
  if (!only || strcmp(only, "smollm2") == 0) {
    kvb_model m;
    size_t len = 0, n = 0;
    int32_t *ids = NULL;
    char *buf = NULL;
    if (kvb_model_available() != KVB_OK) printf("SKIP bench_model smollm2: %s\n", kvb_strerror_last());
    else if (kvb_model_load(NULL, &m)) printf("FAIL bench_model smollm2: %s\n", kvb_strerror_last()), rc = 1;
    else {
      if (!(buf = corpus(&len)) || kvb_tok_encode(m.tok, buf, len, &ids, &n))
        printf("SKIP bench_model smollm2: %s\n", kvb_strerror_last());
      else {
        shape c = {m.cfg.n_layer, m.cfg.d_model, m.cfg.n_head, m.cfg.n_head_kv, m.cfg.head_dim,
                   m.cfg.d_ff, m.cfg.n_ctx, 0, 0};
        if (bench("smollm2", &c, &m, run_smol, ids, n, lens_smol, 5)) rc = 1;
      }
      free(buf), free(ids);
      kvb_model_free(&m);
    }
  }
  if (!only || strcmp(only, "gemma3") == 0) {
    kvb_model g;
    size_t len = 0, n = 0;
    int32_t *ids = NULL;
    char *buf = NULL;
    if (kvb_lm_available(KVB_LM_GEMMA3) != KVB_OK) printf("SKIP bench_model gemma3: %s\n", kvb_strerror_last());
    else if (kvb_lm_model_load(KVB_LM_GEMMA3, NULL, &g)) printf("FAIL bench_model gemma3: %s\n", kvb_strerror_last()), rc = 1;
    else {
      if (!(buf = corpus(&len)) || kvb_spm_encode(g.spm, buf, len, 1, &ids, &n))
        printf("SKIP bench_model gemma3: %s\n", kvb_strerror_last());
      else {
        shape c = {g.cfg.n_layer, g.cfg.d_model, g.cfg.n_head, g.cfg.n_head_kv, g.cfg.head_dim,
                   g.cfg.d_ff, g.cfg.n_ctx, g.cfg.window, g.cfg.swa_period};
        if (!longer) printf("bench_model gemma3: 16384 and 32768 tokens left out (KVB_BENCH_SHORT=1)\n");
        if (bench("gemma3", &c, &g, run_gemma, ids, n, lens_gemma, longer ? 7 : 5)) rc = 1;
      }
      free(buf), free(ids);
      kvb_model_free(&g);
    }
  }
  closing_tables();
  kvb_lim_print_tally("bench_model");
  return rc;
}

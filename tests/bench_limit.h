/* bench_limit.h — the machine's limits as every bench samples them (tests/README.md, Benchmarks):
 * SGEMM/DGEMM N³ flop rates and STREAM copy / read bandwidth, on threads pinned one per core.
 * tests/bench_stats.h keeps the samples and forms the ratios; this file takes the samples.
 *
 * Why not one OpenBLAS call on T threads, timed whole. That limit moved 2.1–2.3× within one
 * idle run (SGEMM 1024³: 42–89 GFLOP per CPU second, 66–150 GFLOP/s on 2 threads) and STREAM
 * copy 5.6× (4.2–23.2 GB/s): a pass timed on the wall clock counts the turns other processes
 * took on a core, and OpenBLAS's own threads spin between calls, so flop per CPU second counts
 * their spinning as work time. What a limit is here instead:
 *   - compute (SGEMM, DGEMM): one thread per core, pinned to it (sched_setaffinity), each running
 *     its own single-threaded N³ product on its own matrices, timed in its own CPU time
 *     (CLOCK_THREAD_CPUTIME_ID: no other process's turn, no spinning helper counted). The threads
 *     start each pass together (a barrier), so the products run side by side as a kernel's
 *     workers do (sharing the L3 and the memory). A pass's rate is the SUM of the per-core rates
 *     Σ_i flops_i / cpu_i — flop per wall second of T cores kept busy; its mean over the cores is
 *     the rate in flop per CPU second. T is capped at the cores the process may run on: T
 *     threads on fewer cores do not compute faster than those cores.
 *   - bandwidth (STREAM copy c[i] = a[i], bytes read + written; STREAM read s += a[i], bytes
 *     read): arrays of 2^24 doubles (128 MiB each, 4× a 32 MiB L3 — STREAM's own rule), touched
 *     before any timing (every page faulted in), split into one slice per pinned thread, in
 *     2 MiB chunks (the copy loop of the earlier bench, so the figure keeps its meaning). Memory
 *     bandwidth is shared, so a thread's CPU time cannot stand for it: a pass's rate is the bytes
 *     over its wall span (the first thread's start to the last thread's end), as STREAM's. A
 *     pass in which a thread was off its core (its CPU time under KVB_LIM_COVER of its own wall
 *     time) or started late (after (1 − KVB_LIM_COVER) of the span) measured the scheduler, not
 *     the memory: it is dropped, and counted. When no pass of a measurement is left (other
 *     processes hold the cores), its passes count in CPU time instead (kvb_lim_collect), and
 *     the bench says so at the end (kvb_lim_print_tally).
 *   - warm-up: the first `warmup` passes of every measurement (page faults, OpenBLAS's buffers,
 *     caches and TLB, the clock ramping up) are run and never kept.
 * A measurement is `reps` kept passes; its value is the best of them (STREAM's rule), and every
 * kept pass is a sample for the run's series (kvb_lim_add), so the spread a bench prints is over
 * samples after warm-up. A 1-thread limit is measured on each core in turn (one core per
 * measurement, the next core the next time), alone.
 *
 * Needs _GNU_SOURCE (sched_getaffinity, pthread_setaffinity_np); the Makefile defines it for the
 * benches. A thread that cannot be pinned still runs (`pinned` says how many were). */
#ifndef KVB_BENCH_LIMIT_H
#define KVB_BENCH_LIMIT_H

#ifndef _GNU_SOURCE
#error "bench_limit.h pins threads to cores: build with -D_GNU_SOURCE (the Makefile does)"
#endif

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>

#include "bench_clock.h"
#include "bench_stats.h"

#define KVB_LIM_MAXT 64  /* threads */
#define KVB_LIM_MAXP 64  /* passes of one measurement, warm-up included */
#define KVB_LIM_COVER 0.9 /* a bandwidth pass counts when every thread ran ≥ 90% of it */

/* One thread's part of one pass: its work (flops or bytes), its CPU seconds and wall interval. */
typedef struct {
  double work, cpu_s, t0, t1;
} kvb_lim_part;

/* Test-only wrong variants of the pass rules (tests/test_bench_stats.c shows it rejects them):
 * KEEP_WARMUP keeps the warm-up passes as samples; NO_COVER keeps a bandwidth pass in which a
 * thread was off its core; WALL_GEMM times a compute pass on its wall span like a bandwidth one. */
enum { KVB_LIM_MUT_NONE, KVB_LIM_MUT_KEEP_WARMUP, KVB_LIM_MUT_NO_COVER, KVB_LIM_MUT_WALL_GEMM };
static int kvb_lim_mutant;

/* A compute pass: Σ_i work_i / cpu_i, the per-core rates summed (NaN if a part has no time). */
static inline double kvb_lim_rate_cpu(const kvb_lim_part *p, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    if (!(p[i].cpu_s > 0) || !(p[i].work > 0)) return NAN;
    s += p[i].work / p[i].cpu_s;
  }
  return n > 0 ? s : NAN;
}

/* A bandwidth pass: Σ_i work_i over the span max t1 − min t0; NaN (dropped) when a thread ran
 * less than `cover` of its own interval or started more than (1 − cover) of the span late. */
static inline double kvb_lim_rate_wall(const kvb_lim_part *p, int n, double cover) {
  if (n < 1) return NAN;
  double lo = p[0].t0, late = p[0].t0, hi = p[0].t1, w = 0;
  for (int i = 0; i < n; i++) {
    lo = fmin(lo, p[i].t0), late = fmax(late, p[i].t0), hi = fmax(hi, p[i].t1), w += p[i].work;
    if (!(p[i].t1 > p[i].t0) || !(p[i].work > 0)) return NAN;
    if (kvb_lim_mutant != KVB_LIM_MUT_NO_COVER && p[i].cpu_s < cover * (p[i].t1 - p[i].t0))
      return NAN;
  }
  if (kvb_lim_mutant != KVB_LIM_MUT_NO_COVER && late - lo > (1 - cover) * (hi - lo)) return NAN;
  return w / (hi - lo);
}

/* The samples of one measurement: `passes` passes of `n` parts each (parts[pass·n + i]), the
 * first `warmup` never kept, a dropped pass (NaN) counted in *dropped. rate[] gets the kept
 * passes' rates in order; returns how many. bandwidth 0: compute passes (kvb_lim_rate_cpu).
 * A bandwidth measurement with no pass left (every one had a thread off its core: a machine
 * whose cores other processes hold) falls back to its passes' CPU-time rates Σ_i work_i/cpu_i
 * and sets *fallback: an upper estimate (a thread that ran alone had the memory to itself),
 * so a fraction of it errs low, never above the limit; the benches print how many. */
static inline int kvb_lim_collect(const kvb_lim_part *parts, int passes, int n, int warmup,
                                  int bandwidth, double *rate, int *dropped, int *fallback) {
  int k = 0;
  *dropped = 0, *fallback = 0;
  if (kvb_lim_mutant == KVB_LIM_MUT_KEEP_WARMUP) warmup = 0;
  for (int p = warmup; p < passes; p++) {
    const kvb_lim_part *q = parts + (size_t)p * (size_t)n;
    double r = bandwidth || kvb_lim_mutant == KVB_LIM_MUT_WALL_GEMM
                   ? kvb_lim_rate_wall(q, n, bandwidth ? KVB_LIM_COVER : 0)
                   : kvb_lim_rate_cpu(q, n);
    if (isfinite(r) && r > 0) rate[k++] = r;
    else (*dropped)++;
  }
  if (k == 0 && bandwidth) {
    for (int p = warmup; p < passes; p++) {
      double r = kvb_lim_rate_cpu(parts + (size_t)p * (size_t)n, n);
      if (isfinite(r) && r > 0) rate[k++] = r;
    }
    *fallback = k > 0;
  }
  return k;
}

/* What every measurement of this process kept and dropped (the benches print it at the end). */
static struct {
  long kept, dropped, fallback, measurements;
} kvb_lim_tally;

/* One line: passes kept, dropped, measurements that fell back to CPU-time bandwidth. */
static inline void kvb_lim_print_tally(const char *who) {
  printf("%s: limit passes after warm-up: %ld kept, %ld dropped (a thread off its core or "
         "started late), %ld of %ld measurements with none left, kept in CPU time%s\n", who,
         kvb_lim_tally.kept, kvb_lim_tally.dropped, kvb_lim_tally.fallback,
         kvb_lim_tally.measurements,
         kvb_lim_tally.fallback ? " (the cores were held by other processes: the bandwidth "
                                  "limit is an upper estimate)" : "");
}

/* ---- the measurement ---- */

typedef enum { KVB_LIM_SGEMM, KVB_LIM_DGEMM, KVB_LIM_COPY, KVB_LIM_READ } kvb_lim_kind;

typedef struct {
  kvb_lim_kind kind;
  int gemm_n;     /* GEMM: N of the N³ product (each thread its own A, B, C) */
  int threads;    /* pinned threads (capped at the cores the process may use) */
  int warmup;     /* passes run first and never kept */
  int reps;       /* passes kept (warmup + reps ≤ KVB_LIM_MAXP) */
} kvb_lim_spec;

typedef struct {
  double best, worst;        /* over the kept passes (NaN when none) */
  double rate[KVB_LIM_MAXP]; /* each kept pass: the sum over the threads (flop/s or bytes/s) */
  int kept, dropped;         /* passes kept; passes dropped (a thread off its core) */
  int fallback;              /* 1: no bandwidth pass was clean, rate[] in CPU time */
  int threads, pinned;       /* threads run, and how many of them were pinned */
} kvb_lim_result;

/* The cores this process may run on (its affinity mask), in order; how many (≥ 1). */
static inline int kvb_lim_cores(int *cpu, int max) {
  cpu_set_t m;
  int n = 0;
  if (sched_getaffinity(0, sizeof m, &m) == 0)
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
      if (CPU_ISSET(c, &m)) cpu[n++] = c;
  if (n == 0) cpu[n++] = -1; /* unknown: run unpinned */
  return n;
}

/* The STREAM arrays, shared by every measurement of the process: allocated and touched once. */
#define KVB_LIM_STREAM_N ((size_t)1 << 24) /* doubles per array: 128 MiB, 4× a 32 MiB L3 */
#define KVB_LIM_CHUNK ((size_t)1 << 18)    /* 2 MiB per chunk of the copy loop */
static double *kvb_lim_sa, *kvb_lim_sc;
static inline int kvb_lim_stream_arrays(void) {
  if (kvb_lim_sa) return 0;
  double *a = malloc(KVB_LIM_STREAM_N * sizeof *a), *c = malloc(KVB_LIM_STREAM_N * sizeof *c);
  if (!a || !c) {
    free(a), free(c);
    return -1;
  }
  for (size_t i = 0; i < KVB_LIM_STREAM_N; i++) a[i] = (double)i, c[i] = 0;
  kvb_lim_sa = a, kvb_lim_sc = c;
  return 0;
}

typedef double kvb_lim_v2d __attribute__((vector_size(16)));

/* The read pass over a[lo, hi): four independent two-lane sums (bound by the loads). */
static inline double kvb_lim_read_sum(const double *a, size_t lo, size_t hi) {
  kvb_lim_v2d s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0;
  size_t i = lo;
  for (; i + 8 <= hi; i += 8) {
    kvb_lim_v2d a0, a1, a2, a3;
    memcpy(&a0, a + i, sizeof a0), memcpy(&a1, a + i + 2, sizeof a1);
    memcpy(&a2, a + i + 4, sizeof a2), memcpy(&a3, a + i + 6, sizeof a3);
    s0 += a0, s1 += a1, s2 += a2, s3 += a3;
  }
  kvb_lim_v2d t = s0 + s1 + s2 + s3;
  double r = t[0] + t[1];
  for (; i < hi; i++) r += a[i];
  return r;
}

typedef struct {
  const kvb_lim_spec *sp;
  int n, passes, core[KVB_LIM_MAXT], pinned[KVB_LIM_MAXT];
  pthread_barrier_t bar;
  pthread_mutex_t mu; /* the start gate: threads wait until the count n is known */
  pthread_cond_t cv;
  int go;
  kvb_lim_part part[KVB_LIM_MAXP * KVB_LIM_MAXT];
  double sink[KVB_LIM_MAXT];
} kvb_lim_ctx;

typedef struct {
  kvb_lim_ctx *c;
  int i;
} kvb_lim_targ;

static void *kvb_lim_thread(void *v) {
  kvb_lim_targ *ta = v;
  kvb_lim_ctx *c = ta->c;
  const kvb_lim_spec *sp = c->sp;
  pthread_mutex_lock(&c->mu);
  while (!c->go) pthread_cond_wait(&c->cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
  int i = ta->i, n = c->n;
  if (c->core[i] >= 0) {
    cpu_set_t m;
    CPU_ZERO(&m);
    CPU_SET(c->core[i], &m);
    c->pinned[i] = pthread_setaffinity_np(pthread_self(), sizeof m, &m) == 0;
    sched_yield(); /* move to the core now, not inside the first pass */
  }
  /* this thread's data, first touched here, on its core */
  int gemm = sp->kind == KVB_LIM_SGEMM || sp->kind == KVB_LIM_DGEMM;
  size_t N = (size_t)sp->gemm_n, nn = N * N, es = sp->kind == KVB_LIM_SGEMM ? 4 : 8;
  char *g = NULL;
  if (gemm && (g = malloc(3 * nn * es)) != NULL)
    for (size_t k = 0; k < 3 * nn; k++) {
      if (es == 4) ((float *)g)[k] = k < 2 * nn ? sinf((float)k) : 0.0f;
      else ((double *)g)[k] = k < 2 * nn ? sin((double)k) : 0.0;
    }
  size_t per = (KVB_LIM_STREAM_N / (size_t)n + 7) & ~(size_t)7;
  size_t lo = per * (size_t)i > KVB_LIM_STREAM_N ? KVB_LIM_STREAM_N : per * (size_t)i;
  size_t hi = lo + per > KVB_LIM_STREAM_N ? KVB_LIM_STREAM_N : lo + per;
  int ok = gemm ? g != NULL : kvb_lim_sa != NULL;
  double work = !ok ? 0
                : gemm ? 2.0 * (double)N * (double)N * (double)N
                : sp->kind == KVB_LIM_COPY ? 2.0 * (double)(hi - lo) * sizeof(double)
                                           : (double)(hi - lo) * sizeof(double);
  for (int p = 0; p < c->passes; p++) {
    pthread_barrier_wait(&c->bar); /* every thread sets off together */
    double t0 = now(), c0 = thread_cpu_now();
    if (ok) {
      if (sp->kind == KVB_LIM_SGEMM) {
        float *A = (float *)g;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)N, (int)N, 1.0f, A,
                    (int)N, A + nn, (int)N, 0.0f, A + 2 * nn, (int)N);
      } else if (sp->kind == KVB_LIM_DGEMM) {
        double *A = (double *)g;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)N, (int)N, 1.0, A,
                    (int)N, A + nn, (int)N, 0.0, A + 2 * nn, (int)N);
      } else if (sp->kind == KVB_LIM_COPY) {
        const double *a = kvb_lim_sa;
        double *cc = kvb_lim_sc;
        for (size_t j = lo; j < hi; j += KVB_LIM_CHUNK) {
          size_t e = j + KVB_LIM_CHUNK < hi ? j + KVB_LIM_CHUNK : hi;
          for (size_t k = j; k < e; k++) cc[k] = a[k];
        }
      } else {
        c->sink[i] += kvb_lim_read_sum(kvb_lim_sa, lo, hi);
      }
    }
    double c1 = thread_cpu_now(), t1 = now();
    kvb_lim_part pt = {work, c1 - c0, t0, t1};
    c->part[(size_t)p * (size_t)n + (size_t)i] = pt;
  }
  if (gemm && g) c->sink[i] += es == 4 ? (double)((float *)g)[2 * nn + 1] : ((double *)g)[2 * nn + 1];
  free(g);
  return NULL;
}

/* One measurement: spec's kind on min(threads, cores) threads pinned to the first cores of the
 * process's mask (first_core shifts which: the 1-thread limit runs on each core in turn).
 * Returns 0, or -1 when nothing could be measured (out of memory, no thread): then r->kept = 0. */
static inline int kvb_lim_measure_on(const kvb_lim_spec *sp, int first_core, kvb_lim_result *r) {
  static kvb_lim_ctx C; /* large; one measurement at a time */
  int cpu[KVB_LIM_MAXT], nc = kvb_lim_cores(cpu, KVB_LIM_MAXT);
  memset(r, 0, sizeof *r);
  r->best = r->worst = NAN;
  int n = sp->threads < 1 ? 1 : sp->threads;
  if (n > nc) n = nc;
  int passes = sp->warmup + sp->reps;
  if (passes > KVB_LIM_MAXP) passes = KVB_LIM_MAXP;
  if (passes < 1) return -1;
  if ((sp->kind == KVB_LIM_COPY || sp->kind == KVB_LIM_READ) && kvb_lim_stream_arrays()) return -1;
  memset(&C, 0, sizeof C);
  C.sp = sp, C.passes = passes;
  for (int i = 0; i < n; i++) C.core[i] = cpu[(first_core + i) % nc];
  pthread_mutex_init(&C.mu, NULL);
  pthread_cond_init(&C.cv, NULL);
  cpu_set_t mask;
  int have_mask = pthread_getaffinity_np(pthread_self(), sizeof mask, &mask) == 0;
  int ob = openblas_get_num_threads();
  openblas_set_num_threads(1); /* each thread's product runs on that thread alone */
  pthread_t th[KVB_LIM_MAXT];
  kvb_lim_targ ta[KVB_LIM_MAXT];
  int started = 0;
  for (int i = 1; i < n; i++) {
    ta[i].c = &C, ta[i].i = i;
    if (pthread_create(&th[i], NULL, kvb_lim_thread, &ta[i])) break;
    started++;
  }
  n = started + 1; /* a thread that did not start: fewer threads, not a hang */
  C.n = n;
  pthread_barrier_init(&C.bar, NULL, (unsigned)n);
  pthread_mutex_lock(&C.mu);
  C.go = 1;
  pthread_cond_broadcast(&C.cv);
  pthread_mutex_unlock(&C.mu);
  ta[0].c = &C, ta[0].i = 0;
  kvb_lim_thread(&ta[0]); /* the caller is thread 0, pinned for the measurement */
  for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&C.bar);
  pthread_cond_destroy(&C.cv);
  pthread_mutex_destroy(&C.mu);
  openblas_set_num_threads(ob);
  if (have_mask) pthread_setaffinity_np(pthread_self(), sizeof mask, &mask); /* the caller's own */
  int bw = sp->kind == KVB_LIM_COPY || sp->kind == KVB_LIM_READ;
  r->kept = kvb_lim_collect(C.part, passes, n, sp->warmup, bw, r->rate, &r->dropped, &r->fallback);
  kvb_lim_tally.kept += r->kept, kvb_lim_tally.dropped += r->dropped;
  kvb_lim_tally.fallback += r->fallback, kvb_lim_tally.measurements++;
  r->threads = n;
  for (int i = 0; i < n; i++) r->pinned += C.pinned[i];
  for (int k = 0; k < r->kept; k++) {
    if (!(r->rate[k] <= r->best)) r->best = r->rate[k];
    if (!(r->rate[k] >= r->worst)) r->worst = r->rate[k];
  }
  return r->kept ? 0 : -1;
}

static inline int kvb_lim_measure(const kvb_lim_spec *sp, kvb_lim_result *r) {
  return kvb_lim_measure_on(sp, 0, r);
}

/* Every kept pass of r into series s, each scaled by `scale` (1 / threads: per CPU second). */
static inline void kvb_lim_add(kvb_bs_series *s, const kvb_lim_result *r, double scale) {
  for (int k = 0; k < r->kept; k++) kvb_bs_add(s, r->rate[k] * scale);
}

/* Which core the next 1-thread measurement runs on (kvb_lim_sample). */
static int kvb_lim_turn;

/* A limit sampled for series s: one measurement on sp->threads cores; with one thread, on the
 * next core in turn, alone (a 1-thread kernel runs on whichever core the system gives it, so
 * the run's samples cover every core). Every kept pass goes into s; returns the best (NaN when
 * nothing was measured). */
static inline double kvb_lim_sample(const kvb_lim_spec *sp, kvb_bs_series *s) {
  int cpu[KVB_LIM_MAXT], nc = kvb_lim_cores(cpu, KVB_LIM_MAXT);
  kvb_lim_result r;
  if (kvb_lim_measure_on(sp, sp->threads == 1 ? kvb_lim_turn++ % nc : 0, &r)) return NAN;
  kvb_lim_add(s, &r, 1.0);
  return r.best;
}

#endif

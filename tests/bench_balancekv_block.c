/* bench_balancekv_block.c — compression time of block BalanceKV (003 App. B; Fig. 3 (a), (c) time
 * the same) against the GEMM bound of its Gram work, both measured in the same run on the same
 * number of threads.
 *
 * Default shape: H = 8 heads, d = dv = 128, n = 16384 tokens per head, float32, b ∈ {64, 128, 256},
 * T ∈ {1, 2}, at 1 thread and at the default thread count (all cores). Flags:
 *   --threads N   only N threads (and 1 for the speed-up); --n N, --heads H, --d D, --dtype
 *   f32|f64|both, --b B (one block length), --T T (one round count), --reps R (best of R);
 *   --exp-exhaustive: compare the float path's vector expf with the C library's on all 2^32
 *   floats (about 30 s of one core) and exit.
 *
 * The bound. Per round r and head the method runs ⌈m_r/b⌉ blocks, each two lower-triangle Gram
 * products (keys b×d, values b×dv): b²·(d + dv) flops counting a multiply-add as 2 (the count of
 * the lower triangle of a b×b product). gemm_s = those flops at the GEMM throughput of the same
 * number of threads (tests/bench_limit.h: a single-threaded 512³ product on each of that many
 * cores, pinned, in its thread's CPU time after a warm-up, the per-core rates summed — flop per
 * wall second of those cores kept busy, as the method runs its SYRKs, one BLAS thread per worker). syrk_s = the same SYRK calls at their real shapes, timed alone on the same workers —
 * what BLAS itself does with these small products. exp_s = the block's b(b−1)/2 exponentials at
 * the cost of a used-result libm exp loop (the result is stored and summed, so the call cannot be
 * removed) on one thread, divided by the thread count. ratio = seconds / gemm_s (1 = as fast as
 * the Gram products at big-GEMM speed; the goal of the design is ≤ 1.5 at b ≥ 128).
 *
 * Per-phase: the core's own timers (kvb_bkvb_stats; CPU seconds summed over workers), printed as
 * fractions of their sum. `hash` digests the kept indices and weights: it must be the same for
 * every thread count (the result does not depend on it). One JSON line per result follows its
 * table row. No timed assertions.
 *
 * The limit held still (tests/bench_stats.h): the GEMM rate is sampled at the start of each
 * precision, before every configuration and at the end (1 warm-up and 3 kept passes each, every
 * kept pass a sample; the 1-thread limit on each core in turn); the rows print the ratio against the
 * best sample so far and the paired one (against the sample right before the configuration),
 * and a closing table per precision puts every row against the run's best sample with the
 * spread (best/worst). The commit is the binary's build (KVB_BUILD_COMMIT). */
/* bench_clock.h: its ratio stays on wall seconds, its GEMM rate being flop per wall second of the
 * cores (the workers run in parallel, so CPU seconds sum over them); CPU seconds printed beside. */
#define _GNU_SOURCE 1 /* bench_limit.h pins its threads (sched_getaffinity, pthread_setaffinity_np) */
#include "bench_clock.h"
#include "bench_limit.h"
#include "kvbound.h"
#include "bench_stats.h"
#include "vexpf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#ifndef KVB_BUILD_COMMIT
#define KVB_BUILD_COMMIT "unknown" /* built outside the Makefile */
#endif

/* ---- GEMM throughput on `threads` cores (tests/bench_limit.h) ---- */
enum { GN = 512 };

/* Flop/s of 512³ GEMMs on `threads` cores: one single-threaded product per core, pinned, in its
 * thread's CPU time, the per-core rates summed (1 warm-up and 3 kept passes; with one thread, on
 * each core in turn). Every kept pass is a sample of s; returns this measurement's best. */
static double bkvb_bench_gemm_rate(int threads, int f32, kvb_bs_series *s) {
  kvb_lim_spec sp = {f32 ? KVB_LIM_SGEMM : KVB_LIM_DGEMM, GN, threads, 1, 3};
  return kvb_lim_sample(&sp, s);
}

/* ---- the configuration's SYRK calls alone, at their real shapes, on `threads` workers ---- */
typedef struct {
  int f32;
  size_t b, d, dv;
  float *Af, *Gf;
  double *A, *G;
} syrk_arg;

static int syrk_item(size_t item, void *varg, int worker) {
  syrk_arg *s = varg;
  (void)item;
  size_t da = s->d > s->dv ? s->d : s->dv, w = (size_t)worker;
  int b = (int)s->b, d = (int)s->d, dv = (int)s->dv;
  if (s->f32) {
    float *A = s->Af + w * s->b * da, *G = s->Gf + w * s->b * s->b;
    cblas_ssyrk(CblasRowMajor, CblasLower, CblasNoTrans, b, d, 1.0f, A, d, 0.0f, G, b);
    cblas_ssyrk(CblasRowMajor, CblasLower, CblasNoTrans, b, dv, 1.0f, A, dv, 0.0f, G, b);
  } else {
    double *A = s->A + w * s->b * da, *G = s->G + w * s->b * s->b;
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, b, d, 1.0, A, d, 0.0, G, b);
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, b, dv, 1.0, A, dv, 0.0, G, b);
  }
  return 0;
}

/* Seconds of every SYRK pair of the configuration (H·⌈m_r/b⌉ per round), best of 2. */
double bkvb_bench_syrk_time(size_t H, size_t n, size_t b, unsigned T, size_t d, size_t dv, int f32,
                            int threads) {
  size_t da = d > dv ? d : dv, nt = (size_t)threads;
  syrk_arg s = {f32, b, d, dv, NULL, NULL, NULL, NULL};
  if (f32) s.Af = malloc(nt * b * da * sizeof(float)), s.Gf = malloc(nt * b * b * sizeof(float));
  else s.A = malloc(nt * b * da * sizeof(double)), s.G = malloc(nt * b * b * sizeof(double));
  for (size_t i = 0; i < nt * b * da; i++) {
    if (f32) s.Af[i] = sinf((float)i);
    else s.A[i] = sin((double)i);
  }
  double best = INFINITY;
  for (int rep = 0; rep < 2; rep++) {
    double t0 = now();
    for (unsigned t = 0; t < T; t++)
      kvb_parallel_for(H * (((n >> t) + b - 1) / b), threads, syrk_item, &s);
    best = fmin(best, now() - t0);
  }
  free(s.Af), free(s.Gf), free(s.A), free(s.G);
  return best;
}

/* Seconds per exp (f32: expf) with the result used (stored, then summed), one thread, best of 5. */
double bkvb_bench_exp_cost(int f32) {
  const size_t N = 1 << 18;
  double *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), best = INFINITY, sink = 0;
  float *xf = malloc(N * sizeof *xf), *yf = malloc(N * sizeof *yf);
  for (size_t i = 0; i < N; i++) x[i] = sin((double)i) * 5, xf[i] = (float)x[i];
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    if (f32)
      for (size_t i = 0; i < N; i++) yf[i] = expf(xf[i]);
    else
      for (size_t i = 0; i < N; i++) y[i] = exp(x[i]);
    best = fmin(best, now() - t0);
    for (size_t i = 0; i < N; i += 4096) sink += f32 ? yf[i] : y[i];
  }
  free(x), free(y), free(xf), free(yf);
  if (!(sink > 0)) fprintf(stderr, "exp sink %g\n", sink); /* uses the results */
  return best / (double)N;
}

/* Lower-triangle Gram flops of the configuration: Σ_r H·⌈m_r/b⌉·b²·(d + dv). */
double bkvb_bench_gram_flops(size_t H, size_t n, size_t b, unsigned T, size_t d, size_t dv) {
  double f = 0;
  for (unsigned t = 0; t < T; t++)
    f += (double)H * (double)(((n >> t) + b - 1) / b) * (double)b * (double)b * (double)(d + dv);
  return f;
}

typedef struct {
  double seconds, cpu_seconds; /* the best rep's wall seconds, and its CPU seconds (all threads) */
  kvb_bkvb_stats st;
  unsigned long long hash;
} run_result;

/* Best of reps compressions; st from the first, hash of the kept indices and weights. */
int bkvb_bench_run(size_t H, size_t n, size_t d, size_t dv, const void *K, const void *V, int f32,
                   const kvb_bkvb_opts *o, const double *const *u, int reps, run_result *out) {
  size_t kept = H * (n >> o->T);
  size_t *idx = malloc(kept * sizeof *idx);
  double *w = malloc(kept * sizeof *w);
  double best = INFINITY, best_cpu = NAN;
  memset(out, 0, sizeof *out);
  int rc = 0;
  for (int rep = 0; rep < reps && !rc; rep++) {
    kvb_bkvb_stats st = {0};
    double t0 = now(), c0 = cpu_now();
    rc = f32 ? kvb_bkvb_compress_f32(H, n, d, dv, K, V, o, u, NULL, idx, w, &st)
             : kvb_bkvb_compress(H, n, d, dv, K, V, o, u, NULL, idx, w, &st);
    double dt = now() - t0, dc = cpu_now() - c0;
    if (rep == 0) out->st = st;
    if (dt < best) best = dt, best_cpu = dc;
  }
  unsigned long long h = 1469598103934665603ULL;
  for (size_t k = 0; k < kept && !rc; k++) {
    unsigned long long wb;
    memcpy(&wb, &w[k], sizeof wb);
    h = ((h ^ idx[k]) * 1099511628211ULL ^ wb) * 1099511628211ULL;
  }
  out->seconds = best, out->cpu_seconds = best_cpu, out->hash = h;
  free(idx), free(w);
  return rc;
}

static void usage(void) {
  fprintf(stderr, "usage: bench_balancekv_block [--threads N] [--n N] [--heads H] [--d D] "
                  "[--dtype f32|f64|both] [--b B] [--T T] [--reps R] | --exp-exhaustive\n");
}

int main(int argc, char **argv) {
  size_t H = 8, n = 16384, d = 128, b1 = 0;
  unsigned T1 = 0;
  int threads = 0, reps = 3, dt_lo = 1, dt_hi = 1; /* dtype: 1 = f32, 0 = f64 */
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--exp-exhaustive") == 0) {
      size_t bad = kvb_vexpf_check(0, 1ull << 32, 1);
      if (bad == (size_t)-1) printf("no vector expf on this CPU (the C library's loop is used)\n");
      else printf("vector expf vs the C library's expf, all 2^32 floats: %zu differ\n", bad);
      return bad != 0 && bad != (size_t)-1;
    }
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return usage(), 2;
    i++;
    if (strcmp(a, "--threads") == 0) {
      if (kvb_threads_parse(v, &threads)) return usage(), 2;
    } else if (strcmp(a, "--n") == 0) n = strtoul(v, NULL, 10);
    else if (strcmp(a, "--heads") == 0) H = strtoul(v, NULL, 10);
    else if (strcmp(a, "--d") == 0) d = strtoul(v, NULL, 10);
    else if (strcmp(a, "--b") == 0) b1 = strtoul(v, NULL, 10);
    else if (strcmp(a, "--T") == 0) T1 = (unsigned)strtoul(v, NULL, 10);
    else if (strcmp(a, "--reps") == 0) reps = atoi(v);
    else if (strcmp(a, "--dtype") == 0) {
      if (strcmp(v, "f32") == 0) dt_lo = dt_hi = 1;
      else if (strcmp(v, "f64") == 0) dt_lo = dt_hi = 0;
      else if (strcmp(v, "both") == 0) dt_lo = 0, dt_hi = 1;
      else return usage(), 2;
    } else return usage(), 2;
  }
  if (H == 0 || n < 4 || d == 0 || reps < 1) return usage(), 2;
  openblas_set_num_threads(1); /* one BLAS thread per worker, for the bounds and the method */
  size_t dv = d;
  int tmax = threads > 0 ? threads : kvb_threads_default();
  int tcounts[2] = {1, tmax}, ntc = tmax > 1 ? 2 : 1;
  double load[3] = {0, 0, 0};
  FILE *la = fopen("/proc/loadavg", "r");
  if (la) {
    if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    fclose(la);
  }
  printf("block BalanceKV (commit %s): H=%zu n=%zu d=dv=%zu, threads 1 and %d, best of %d; load "
         "average %.2f %.2f %.2f on %ld cores\n", KVB_BUILD_COMMIT,
         H, n, d, tmax, reps, load[0], load[1], load[2], sysconf(_SC_NPROCESSORS_ONLN));

  gsl_rng *r = gsl_rng_alloc(kvb_rng_pcg32);
  gsl_rng_set(r, 7);
  double *K = malloc(H * n * d * sizeof *K), *V = malloc(H * n * dv * sizeof *V);
  float *Kf = malloc(H * n * d * sizeof *Kf), *Vf = malloc(H * n * dv * sizeof *Vf);
  /* keys i.i.d. uniform on [−1.3, 1.3] per coordinate (‖k‖ ≈ 8.5 at d = 128), values on ±½ */
  for (size_t i = 0; i < H * n * d; i++) K[i] = gsl_rng_uniform(r) * 2.6 - 1.3;
  for (size_t i = 0; i < H * n * dv; i++) V[i] = gsl_rng_uniform(r) - 0.5;
  for (size_t i = 0; i < H * n * d; i++) Kf[i] = (float)K[i];
  for (size_t i = 0; i < H * n * dv; i++) Vf[i] = (float)V[i];
  unsigned Tmax = 3;
  double *u[3];
  for (unsigned t = 0; t < Tmax; t++) {
    u[t] = malloc(H * (n >> t) * sizeof(double));
    for (size_t i = 0; i < H * (n >> t); i++) u[t][i] = gsl_rng_uniform(r);
  }
  static const size_t bs_def[] = {64, 128, 256};
  size_t bs[3];
  int nb = 0;
  if (b1) bs[nb++] = b1;
  else
    for (int i = 0; i < 3; i++) bs[nb++] = bs_def[i];
  unsigned Tlo = T1 ? T1 : 1, Thi = T1 ? T1 : 2;
  if (Thi > Tmax || (n >> Thi) == 0) return usage(), 2;
  int fail = 0;
  for (int f32 = dt_hi; f32 >= dt_lo; f32--) {
    double rate[2], ex = bkvb_bench_exp_cost(f32);
    static kvb_bs_series S[2];
    struct {
      size_t b;
      unsigned T;
      int ti;
      double seconds, cpu_seconds, gf, paired_rate;
    } rows[64];
    int nrow = 0;
    memset(S, 0, sizeof S);
    for (int ti = 0; ti < ntc; ti++) rate[ti] = bkvb_bench_gemm_rate(tcounts[ti], f32, &S[ti]);
    printf("\n%s: %cGEMM %.1f GFLOP/s on 1 thread, %.1f on %d; used-result exp %.2f ns\n",
           f32 ? "float32" : "float64", f32 ? 'S' : 'D', rate[0] / 1e9, rate[ntc - 1] / 1e9,
           tcounts[ntc - 1], ex * 1e9);
    printf("(gemm_s at the best GEMM sample so far; 'paired' against the sample right before the "
           "configuration)\n");
    printf("%4s %2s %3s %8s %8s %8s %6s %6s %8s %6s %8s %7s | %5s %5s %5s %5s %5s | %16s\n", "b",
           "T", "thr", "wall_s", "cpu_s", "gemm_s", "ratio", "paired", "syrk_s", "ratio", "exp_s",
           "speedup", "gath", "cent", "gram", "exp", "walk", "hash");
    for (int bi = 0; bi < nb; bi++)
      for (unsigned T = Tlo; T <= Thi; T++) {
        double t1 = 0;
        unsigned long long h1 = 0;
        for (int ti = 0; ti < ntc; ti++) {
          int th = tcounts[ti];
          kvb_bkvb_opts o;
          kvb_bkvb_opts_default(&o);
          o.b = bs[bi], o.T = T, o.threads = th;
          double rp = bkvb_bench_gemm_rate(th, f32, &S[ti]); /* the limit, beside the run */
          rate[ti] = kvb_bs_best(&S[ti]);
          run_result rr;
          if (bkvb_bench_run(H, n, d, dv, f32 ? (const void *)Kf : (const void *)K,
                             f32 ? (const void *)Vf : (const void *)V, f32, &o,
                             (const double *const *)u, reps, &rr)) {
            printf("compress failed: %s\n", kvb_strerror_last());
            return 1;
          }
          double gf = bkvb_bench_gram_flops(H, n, bs[bi], T, d, dv);
          double gemm_s = gf / rate[ti];
          double sy = bkvb_bench_syrk_time(H, n, bs[bi], T, d, dv, f32, th);
          double exs = (double)rr.st.exps * ex / th;
          if (ti == 0) t1 = rr.seconds, h1 = rr.hash;
          if (rr.hash != h1) fail = 1;
          const kvb_bkvb_stats *s = &rr.st;
          double tot = s->t_gather + s->t_center + s->t_gram + s->t_exp + s->t_walk;
          if (!(tot > 0)) tot = 1;
          if (nrow < 64) {
            rows[nrow].b = bs[bi], rows[nrow].T = T, rows[nrow].ti = ti;
            rows[nrow].seconds = rr.seconds, rows[nrow].cpu_seconds = rr.cpu_seconds;
            rows[nrow].gf = gf, rows[nrow].paired_rate = rp;
            nrow++;
          }
          printf("%4zu %2u %3d %8.4f %8.4f %8.4f %6.2f %6.2f %8.4f %6.2f %8.4f %7.2f | %5.2f %5.2f "
                 "%5.2f %5.2f %5.2f | %016llx\n",
                 bs[bi], T, th, rr.seconds, rr.cpu_seconds, gemm_s, rr.seconds / gemm_s,
                 kvb_bs_x_bound(rr.seconds, gf, rp), sy, rr.seconds / sy, exs,
                 t1 / rr.seconds, s->t_gather / tot, s->t_center / tot, s->t_gram / tot,
                 s->t_exp / tot, s->t_walk / tot, rr.hash);
          printf("{\"bench\":\"balancekv_block\",\"source\":\"bench_balancekv_block\",\"dtype\":\"%s\",\"H\":%zu,\"n\":%zu,\"d\":%zu,"
                 "\"b\":%zu,\"T\":%u,\"threads\":%d,\"seconds\":%.6g,\"cpu_seconds\":%.6g,"
                 "\"gemm_bound_s\":%.6g,"
                 "\"ratio_gemm\":%.4g,\"syrk_s\":%.6g,\"ratio_syrk\":%.4g,\"exp_s\":%.6g,"
                 "\"speedup\":%.4g,\"t_gather\":%.6g,\"t_center\":%.6g,\"t_gram\":%.6g,"
                 "\"t_exp\":%.6g,\"t_walk\":%.6g,\"exps\":%llu,\"load1\":%.2f,"
                 "\"hash\":\"%016llx\"}\n",
                 f32 ? "f32" : "f64", H, n, d, bs[bi], T, th, rr.seconds, rr.cpu_seconds, gemm_s,
                 rr.seconds / gemm_s, sy, rr.seconds / sy, exs, t1 / rr.seconds, s->t_gather,
                 s->t_center, s->t_gram, s->t_exp, s->t_walk, (unsigned long long)s->exps,
                 load[0], rr.hash);
        }
      }
    /* the closing table: every row against the run's best sample (sampled once more first) */
    for (int ti = 0; ti < ntc; ti++) bkvb_bench_gemm_rate(tcounts[ti], f32, &S[ti]);
    printf("%s against the run's best %cGEMM sample:", f32 ? "float32" : "float64", f32 ? 'S' : 'D');
    for (int ti = 0; ti < ntc; ti++)
      printf(" %d thr %.1f GFLOP/s (worst %.1f, spread %.3f, %zu samples)%s", tcounts[ti],
             kvb_bs_best(&S[ti]) / 1e9, kvb_bs_worst(&S[ti]) / 1e9, kvb_bs_spread(&S[ti]),
             S[ti].n, ti + 1 < ntc ? ";" : "\n");
    printf("%4s %2s %3s %8s %8s %9s %8s %8s %s\n", "b", "T", "thr", "wall_s", "cpu_s",
           "bound_s", "ratio", "paired", "spread");
    char sname[2][48];
    for (int ti = 0; ti < ntc; ti++)
      snprintf(sname[ti], sizeof sname[ti], "%cGEMM 512^3, %d thr", f32 ? 'S' : 'D', tcounts[ti]);
    for (int i = 0; i < nrow; i++) {
      double best = kvb_bs_best(&S[rows[i].ti]), sp = kvb_bs_spread(&S[rows[i].ti]);
      double x = kvb_bs_x_bound(rows[i].seconds, rows[i].gf, best),
             xp = kvb_bs_x_bound(rows[i].seconds, rows[i].gf, rows[i].paired_rate);
      printf("%4zu %2u %3d %8.4f %8.4f %9.4f %8.3f %8.3f %.3f%s\n", rows[i].b, rows[i].T,
             tcounts[rows[i].ti], rows[i].seconds, rows[i].cpu_seconds, rows[i].gf / best, x, xp,
             sp, kvb_bs_x_ok(x, sp) ? "" : "  OUTSIDE THE SPREAD");
    }
    /* the closing table's JSON lines (bench_stats.h; scripts/check-bench-ratios) */
    for (int ti = 0; ti < ntc; ti++) kvb_bs_json_series("bench_balancekv_block", KVB_BUILD_COMMIT, sname[ti], &S[ti]);
    for (int i = 0; i < nrow; i++) {
      double best = kvb_bs_best(&S[rows[i].ti]);
      char what[96];
      snprintf(what, sizeof what, "block BalanceKV %s b=%zu T=%u, %d thr", f32 ? "f32" : "f64",
               rows[i].b, rows[i].T, tcounts[rows[i].ti]);
      kvb_bs_json_ratio("bench_balancekv_block", KVB_BUILD_COMMIT, what, sname[rows[i].ti], 0, 0,
                        rows[i].seconds, rows[i].cpu_seconds, rows[i].gf, best,
                        kvb_bs_x_bound(rows[i].seconds, rows[i].gf, best),
                        kvb_bs_x_bound(rows[i].seconds, rows[i].gf, rows[i].paired_rate),
                        kvb_bs_spread(&S[rows[i].ti]));
    }
  }
  kvb_lim_print_tally("bench_balancekv_block");
  printf("\nhash equal across thread counts: %s\n", fail ? "NO (a bug)" : "yes");
  for (unsigned t = 0; t < Tmax; t++) free(u[t]);
  free(K), free(V), free(Kf), free(Vf);
  gsl_rng_free(r);
  return fail;
}

/* bench_main.c — kvb-bench: one benchmark command for any shape (tests/README.md, Benchmarks).
 *
 * Every time is printed next to the limit it is compared with, measured in the same run at the
 * same thread count:
 *   - Gram work (block BalanceKV's b×b key and value Gram products): SGEMM (DGEMM for float64)
 *     flop rate on 1024³ products, one single-threaded product per core on threads pinned one
 *     per core, each in its thread's CPU time, the per-core rates summed (tests/bench_limit.h);
 *     bound = Gram flops / rate;
 *   - exponentials: a used-result exp loop (expf for float32, exp for float64; every result is
 *     stored and summed after the clock stops, so the compiler cannot drop the calls);
 *   - bandwidth-bound kernels (exact decode): a STREAM-style copy c[i] = a[i] over 2 × 128 MiB,
 *     bytes counted as STREAM does (read + write), on threads pinned one per core, wall time of
 *     the pass (a pass in which a thread was off its core dropped);
 *   - SubGen: the cost of its own work counted by the method (m′ distance evaluations, t + s
 *     coin flips, the query's dot products and exponentials) done as tight loops.
 *   - read-only bandwidth-bound kernels (exact decode reads K and V and writes almost nothing):
 *     a STREAM-style read, s += a[i] over 128 MiB, bytes read — the like-with-like limit of a
 *     kernel that only reads;
 *   - quantized caches (q8_0, q4_0, KIVI-2/4): the exact method's query on the same tokens,
 *     interleaved with theirs (--method quant).
 * Every limit is sampled again and again through the run (at the start, beside every timed run,
 * at the end; tests/bench_stats.h), each measurement a warm-up pass and then kept passes, every
 * kept pass a sample (the spread is over the samples after warm-up): figures are the best of --reps runs, ratios are formed
 * against the best sample of the whole run, each printed beside its paired ratio (against the
 * sample taken right before) and the limit's spread (best/worst sample); a closing table lists
 * them all and flags a ratio on the wrong side of 1 by more than the spread. Wall and CPU
 * seconds are both shown. No timed assertion: nothing here fails because a figure is slow. With
 * --json every result is also one JSON line (lines starting with '{') so results can be tracked
 * over commits; the commit is the one the binary was built from (KVB_BUILD_COMMIT). */
#define _GNU_SOURCE 1 /* bench_limit.h pins its threads (sched_getaffinity, pthread_setaffinity_np) */
#include "bench_clock.h"
#include "kvbound.h"
#include "bench_limit.h"
#include "bench_stats.h"
#include "block_gram.h"
#include "simd.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#ifndef KVB_BUILD_COMMIT
#define KVB_BUILD_COMMIT "unknown" /* built outside the Makefile */
#endif

#define MAXLIST 16

typedef struct {
  size_t n, H, d, nq;
  size_t b[MAXLIST], nb;
  unsigned T[MAXLIST];
  size_t nT;
  int threads;
  int f32, f64; /* dtypes to run */
  int reps;
  int json;
  int sec_bkvb, sec_decode, sec_subgen, sec_scaling, sec_quant;
  const char *only_method[MAXLIST]; /* registered methods for the scaling table (none: all) */
  size_t nonly;
  int scal_lo, scal_hi;   /* log2 n range of the scaling table */
  int subgen_hi;          /* log2 n of SubGen's per-token sweep */
  int exact_hi;           /* log2 n up to which exact attention is timed next to SubGen */
  double scal_budget;     /* seconds per method in the scaling table */
} opts;

static double load1(void) {
  double l = NAN;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = NAN;
    fclose(f);
  }
  return l;
}

static opts O;

/* A standard normal draw (Box–Muller on the pcg32 uniforms; gsl_randist.h is not included
 * next to OpenBLAS's cblas.h, whose declarations clash with GSL's). */
static double gauss(gsl_rng *r) {
  double u = gsl_rng_uniform_pos(r), v = gsl_rng_uniform(r);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}
static const char *g_commit = KVB_BUILD_COMMIT;
/* The CPU, so that figures from different machines are not compared unknowingly: the limits
 * (SGEMM above all) and the ratios to them differ between CPU families. */
static char g_cpu[128] = "?";
static const char *simd_name(void) {
  int l = kvb_simd_level();
  return l == KVB_SIMD_AVX512 ? "avx512" : l == KVB_SIMD_AVX2 ? "avx2" : "generic";
}
static void read_cpu(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[256];
  if (!f) return;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
      const char *v = strchr(line, ':') + 1;
      while (*v == ' ' || *v == '\t') v++;
      snprintf(g_cpu, sizeof g_cpu, "%s", v);
      for (char *c = g_cpu; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 32) *c = ' ';
      g_cpu[strcspn(g_cpu, "\n")] = 0;
      while (*g_cpu && g_cpu[strlen(g_cpu) - 1] == ' ') g_cpu[strlen(g_cpu) - 1] = 0;
      break;
    }
  fclose(f);
}

/* ---- JSON: one line per result ---- */
static char jbuf[4096];
static size_t jlen;
static void jbegin(const char *bench) {
  jlen = (size_t)snprintf(jbuf, sizeof jbuf, "{\"bench\":\"%s\",\"source\":\"kvb-bench\","
                          "\"version\":\"%s\",\"commit\":\"%s\","
                          "\"threads\":%d,\"load1\":%.2f", bench, KVBOUND_VERSION, g_commit,
                          O.threads, load1());
}
static void jnum(const char *k, double v) {
  if (jlen >= sizeof jbuf) return;
  if (isfinite(v))
    jlen += (size_t)snprintf(jbuf + jlen, sizeof jbuf - jlen, ",\"%s\":%.6g", k, v);
  else
    jlen += (size_t)snprintf(jbuf + jlen, sizeof jbuf - jlen, ",\"%s\":null", k);
}
static void jstr(const char *k, const char *v) {
  if (jlen >= sizeof jbuf) return;
  jlen += (size_t)snprintf(jbuf + jlen, sizeof jbuf - jlen, ",\"%s\":\"%s\"", k, v);
}
/* While a table row is being printed, JSON lines wait in `jdefer` and follow the row. */
static char jdefer[16384];
static size_t jdlen;
static int jdeferring;
static void jend(void) {
  if (!O.json || jlen >= sizeof jbuf) return;
  if (jdeferring) {
    if (jdlen < sizeof jdefer)
      jdlen += (size_t)snprintf(jdefer + jdlen, sizeof jdefer - jdlen, "%s}\n", jbuf);
  } else {
    printf("%s}\n", jbuf);
  }
}
static void jflush(void) {
  jdeferring = 0;
  if (jdlen) fputs(jdefer, stdout);
  jdlen = 0, jdefer[0] = 0;
}

/* ---- limits ---- */

/* Every sample of every limit this run took (bench_stats.h): T = O.threads threads, 1 = one. */
static kvb_bs_series S_copyT, S_copy1, S_readT, S_read1, S_sgemmT, S_sgemm1, S_dgemmT, S_dgemm1;

#define GEMM_N 1024

/* The limits' samples (tests/bench_limit.h): threads pinned one per core, a warm-up pass first
 * and never kept; STREAM copy and read on the same 2 × 128 MiB arrays (4× a 32 MiB L3), bytes
 * over the pass's wall span, a pass in which a thread was off its core dropped; GEMM 1024³ one
 * single-threaded product per core, in thread CPU time, the per-core rates summed (flop per
 * wall second of `threads` cores; a 1-thread limit on the next core each time). */
static kvb_bs_series *series_of(kvb_lim_kind k, int threads) {
  int t = threads == O.threads;
  switch (k) {
  case KVB_LIM_COPY: return t ? &S_copyT : &S_copy1;
  case KVB_LIM_READ: return t ? &S_readT : &S_read1;
  case KVB_LIM_SGEMM: return t ? &S_sgemmT : &S_sgemm1;
  default: return t ? &S_dgemmT : &S_dgemm1;
  }
}

/* One measurement of limit k on `threads` threads with `reps` kept passes (every one a sample of
 * its series): the best rate, bytes/s or flop/s (NaN when nothing could be measured). */
static double limit_sample(kvb_lim_kind k, int threads, int reps) {
  kvb_lim_spec sp = {k, GEMM_N, threads, 1, reps};
  return kvb_lim_sample(&sp, series_of(k, threads));
}

/* STREAM arrays: 2^24 doubles each (bench_limit.h). */
static const size_t g_cn = KVB_LIM_STREAM_N;

/* STREAM copy bandwidth counting read + write (2·8 bytes per element) for `sec` seconds. */
static double copy_bw(double sec) { return 2.0 * (double)g_cn * sizeof(double) / sec; }

/* Read bandwidth (8 bytes per element read) for `sec` seconds. */
static double read_bw(double sec) { return (double)g_cn * sizeof(double) / sec; }

/* The copy limit beside a timed run (a warm-up pass and one kept): the seconds of one pass at
 * that rate (NaN without memory). */
static double copy_once(int threads) {
  return 2.0 * (double)g_cn * sizeof(double) / limit_sample(KVB_LIM_COPY, threads, 1);
}

/* The read limit beside a timed run, likewise. */
static double read_once(int threads) {
  return (double)g_cn * sizeof(double) / limit_sample(KVB_LIM_READ, threads, 1);
}

/* STREAM "Copy" on `threads` threads, best of 5 kept passes: bytes/s. */
static double stream_copy(int threads) { return limit_sample(KVB_LIM_COPY, threads, 5); }

/* GEMM 1024³ flops over `sec` seconds. */
static double gemm_flops_per_s(double sec) { return 2.0 * GEMM_N * (double)GEMM_N * GEMM_N / sec; }

/* The GEMM limit beside a timed run (a warm-up product and one kept): the seconds of one 1024³
 * product at that rate on `threads` cores. */
static double gemm_once(int f32, int threads) {
  return 2.0 * GEMM_N * (double)GEMM_N * GEMM_N /
         limit_sample(f32 ? KVB_LIM_SGEMM : KVB_LIM_DGEMM, threads, 1);
}

/* ---- the closing table: every ratio against the run's best sample of its limit ---- */

typedef struct {
  char what[112];
  const char *limit;        /* the limit's name */
  const kvb_bs_series *lim; /* its samples */
  int fraction;             /* 0: time / bound (>= 1 ideal); 1: rate / limit (<= 1 ideal); 2: rate
                             * / a limit not measured alike (STREAM copy counts a write per byte
                             * read, a read-only kernel none), not held to the spread */
  double seconds, cpu_s;    /* the best run: wall and CPU seconds */
  double work;              /* flops (time / bound) or bytes (fraction) of one run */
  double paired;            /* the ratio against the sample right before the run (median) */
  double near;              /* the limit's latest sample when the run was recorded */
} ratio_rec;
#define MAXREC 128
static ratio_rec g_rec[MAXREC];
static size_t g_nrec;

static void rec_add(const char *what, const char *limit, const kvb_bs_series *lim, int fraction,
                    double seconds, double cpu_s, double work, double paired) {
  if (g_nrec >= MAXREC) return;
  ratio_rec *r = &g_rec[g_nrec++];
  snprintf(r->what, sizeof r->what, "%s", what);
  r->limit = limit, r->lim = lim, r->fraction = fraction;
  r->seconds = seconds, r->cpu_s = cpu_s, r->work = work, r->paired = paired;
  r->near = lim->n ? lim->v[lim->n - 1] : NAN;
}

/* Test-only wrong variants of the closing table (--mutant; tests/test_bench_cli.c shows that
 * scripts/check-bench-ratios rejects them): ratio_worst forms every ratio against the worst
 * sample of its limit, ratio_paired against the sample taken beside its run (the per-length
 * limit of the first benches, which let a prefill come out below its own bound). */
static const char *g_mutant;

/* The rate a closing-table ratio is formed against: the run's best sample of its limit. */
static double rec_rate(const ratio_rec *r) {
  if (g_mutant && !strcmp(g_mutant, "ratio_worst")) return kvb_bs_worst(r->lim);
  if (g_mutant && !strcmp(g_mutant, "ratio_paired")) return r->near;
  return kvb_bs_best(r->lim);
}

static double rec_ratio(const ratio_rec *r) {
  double rate = rec_rate(r);
  return r->fraction ? (r->work / r->seconds) / rate : kvb_bs_x_bound(r->seconds, r->work, rate);
}

static int rec_ok(const ratio_rec *r) {
  double x = rec_ratio(r), sp = kvb_bs_spread(r->lim);
  if (r->fraction == 2) return 1;
  return r->fraction ? kvb_bs_fraction_ok(x, sp) : kvb_bs_x_ok(x, sp);
}

/* GEMM flop/s on 1024³ on `threads` cores, best of 3 kept passes. */
static double gemm_rate(int f32, int threads) {
  return limit_sample(f32 ? KVB_LIM_SGEMM : KVB_LIM_DGEMM, threads, 3);
}

/* Seconds per exp (f32: expf) with every result used: stored, then summed after the clock. */
static double exp_cost(int f32) {
  enum { N = 4096, ROUNDS = 256 };
  static double x[N], y[N];
  static float xf[N], yf[N];
  for (int i = 0; i < N; i++) x[i] = -8.0 * fabs(sin((double)i)), xf[i] = (float)x[i];
  double best = INFINITY, sum = 0;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    for (int k = 0; k < ROUNDS; k++) {
      if (f32)
        for (int i = 0; i < N; i++) yf[i] = expf(xf[i] + (float)k * 1e-7f);
      else
        for (int i = 0; i < N; i++) y[i] = exp(x[i] + (double)k * 1e-12);
      sum += f32 ? (double)yf[k] : y[k]; /* each round's outputs feed the next round's sum */
    }
    best = fmin(best, now() - t0);
  }
  volatile double sink = sum;
  (void)sink;
  return best / ((double)N * ROUNDS);
}

/* STREAM-style read on `threads` threads, best of 5 kept passes: bytes/s. */
static double stream_read(int threads) { return limit_sample(KVB_LIM_READ, threads, 5); }

typedef struct {
  double read1, readT;    /* bytes/s, 1 and O.threads threads */
  double copy1, copyT;    /* bytes/s, 1 and O.threads threads */
  double sgemm1, sgemmT;  /* flop/s */
  double dgemm1, dgemmT;
  double expf_s, exp_s;   /* seconds per call */
} limits;

static limits L;

static void measure_limits(void) {
  int T = O.threads;
  L.copyT = stream_copy(T);
  L.copy1 = T > 1 ? stream_copy(1) : L.copyT;
  L.readT = stream_read(T);
  L.read1 = T > 1 ? stream_read(1) : L.readT;
  L.sgemmT = gemm_rate(1, T);
  L.sgemm1 = T > 1 ? gemm_rate(1, 1) : L.sgemmT;
  L.dgemmT = gemm_rate(0, T);
  L.dgemm1 = T > 1 ? gemm_rate(0, 1) : L.dgemmT;
  L.expf_s = exp_cost(1);
  L.exp_s = exp_cost(0);
  printf("limits (measured now, best of the passes after a warm-up, threads pinned one per core; "
         "GEMM: single-threaded products per core in thread CPU time, rates summed; sampled "
         "again beside every timed run and at the end, every ratio of the closing table is "
         "against the run's best sample):\n"
         "  STREAM read   %7.2f GB/s on %d thread(s), %7.2f GB/s on 1 (bytes read)\n"
         "  STREAM copy   %7.2f GB/s on %d thread(s), %7.2f GB/s on 1 (read + write)\n"
         "  SGEMM 1024^3  %7.2f GFLOP/s on %d thread(s), %7.2f GFLOP/s on 1\n"
         "  DGEMM 1024^3  %7.2f GFLOP/s on %d thread(s), %7.2f GFLOP/s on 1\n"
         "  used-result expf %.2f ns, exp %.2f ns (one thread)\n",
         L.readT / 1e9, T, L.read1 / 1e9, L.copyT / 1e9, T, L.copy1 / 1e9, L.sgemmT / 1e9, T, L.sgemm1 / 1e9, L.dgemmT / 1e9, T,
         L.dgemm1 / 1e9, L.expf_s * 1e9, L.exp_s * 1e9);
  jbegin("limits");
  jstr("cpu", g_cpu), jstr("simd", simd_name()), jnum("cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
  jnum("copy_gbps", L.copyT / 1e9), jnum("copy1_gbps", L.copy1 / 1e9);
  jnum("read_gbps", L.readT / 1e9), jnum("read1_gbps", L.read1 / 1e9);
  jnum("sgemm_gflops", L.sgemmT / 1e9), jnum("sgemm1_gflops", L.sgemm1 / 1e9);
  jnum("dgemm_gflops", L.dgemmT / 1e9), jnum("dgemm1_gflops", L.dgemm1 / 1e9);
  jnum("expf_ns", L.expf_s * 1e9), jnum("exp_ns", L.exp_s * 1e9);
  jend();
}

/* ---- data ---- */

static void fill_uniform(double *x, size_t n, double lo, double hi, gsl_rng *r) {
  for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * gsl_rng_uniform(r);
}

/* ---- block BalanceKV ---- */

static double gram_flops(size_t H, size_t n, size_t b, unsigned T, size_t d, size_t dv) {
  double f = 0;
  for (unsigned r = 0; r < T; r++) {
    size_t m = n >> r, nb = (m + b - 1) / b;
    f += (double)H * (double)nb * (double)b * (double)b * (double)(d + dv);
  }
  return f;
}

/* The Gram products' time if every block were in cache: kvb_gram_upper on one packed block of b
 * rows (the first b keys), repeated, times the number of Gram products of the run (two per
 * block: keys and values; every block counted as full). Set beside the measured Gram phase it
 * splits that phase's distance from the SGEMM limit into the kernel's own (the triangle's small
 * products) and what memory traffic and prefetching add during the run. */
static double gram_in_cache_s(int f32, const void *K, size_t H, size_t n, size_t b, unsigned T,
                              size_t d) {
  size_t len = b < n ? b : n, ld = kvb_gram_ld(len), rows = kvb_gram_rows(len);
  size_t es = f32 ? sizeof(float) : sizeof(double);
  void *P = aligned_alloc(64, (d * ld * es + 63) / 64 * 64),
       *G = aligned_alloc(64, (rows * ld * es + 63) / 64 * 64); /* as the library's workers */
  const void **rp = malloc(len * sizeof *rp);
  double best = INFINITY;
  if (P && G && rp) {
    for (size_t i = 0; i < len; i++) rp[i] = (const char *)K + i * d * es;
    if (f32) kvb_gram_pack_f32(len, d, (const float *const *)rp, NULL, NULL, P, ld);
    else kvb_gram_pack_f64(len, d, (const double *const *)rp, NULL, NULL, P, ld);
    for (int rep = 0; rep < 3; rep++) {
      size_t calls = 0;
      double t0 = now(), t;
      do {
        if (f32) kvb_gram_upper_f32(len, d, P, ld, G, ld, NULL);
        else kvb_gram_upper_f64(len, d, P, ld, G, ld, NULL);
        calls++;
      } while ((t = now() - t0) < 0.02);
      best = fmin(best, t / (double)calls);
    }
  }
  free(P), free(G), free(rp);
  double grams = 0;
  for (unsigned r = 0; r < T; r++) grams += 2.0 * (double)H * (double)(((n >> r) + b - 1) / b);
  return best * grams;
}

/* Walk multiply-adds: Σ_{j<b} j per block (the sum Σ_{i<j} K_ij s_i), 2 flops each. */
static double walk_flops(size_t H, size_t n, size_t b, unsigned T) {
  double f = 0;
  for (unsigned r = 0; r < T; r++) {
    size_t m = n >> r, nb = (m + b - 1) / b;
    f += (double)H * (double)nb * (double)b * (double)(b - 1);
  }
  return f;
}

static double g_last_cpu; /* CPU seconds of the last run_bkvb */
static int run_bkvb(size_t H, size_t n, size_t d, int f32, const void *K, const void *V,
                    const kvb_bkvb_opts *o, const double *const *u, size_t *idx, double *w,
                    kvb_bkvb_stats *st, double *secs) {
  double t0 = now(), c0 = cpu_now();
  int rc = f32 ? kvb_bkvb_compress_f32(H, n, d, d, K, V, o, u, NULL, idx, w, st)
               : kvb_bkvb_compress(H, n, d, d, K, V, o, u, NULL, idx, w, st);
  *secs = now() - t0;
  g_last_cpu = cpu_now() - c0;
  return rc;
}

static int bench_bkvb(int f32) {
  size_t H = O.H, n = O.n, d = O.d, hnd = H * n * d;
  unsigned Tmax = 0;
  for (size_t i = 0; i < O.nT; i++) Tmax = O.T[i] > Tmax ? O.T[i] : Tmax;
  if (Tmax >= 63 || (n >> Tmax) < 1) {
    fprintf(stderr, "kvb-bench: --T %u needs n >= 2^T (n = %zu)\n", Tmax, n);
    return 2;
  }
  gsl_rng *r = kvb_rng_alloc_substream(7, 0);
  double *Kd = malloc(hnd * sizeof *Kd), *Vd = malloc(hnd * sizeof *Vd);
  float *Kf = f32 ? malloc(hnd * sizeof *Kf) : NULL, *Vf = f32 ? malloc(hnd * sizeof *Vf) : NULL;
  double **u = calloc(Tmax + 1, sizeof *u);
  size_t *idx = malloc(H * n * sizeof *idx);
  double *w = malloc(H * n * sizeof *w);
  int rc = 0;
  if (!r || !Kd || !Vd || (f32 && (!Kf || !Vf)) || !u || !idx || !w) {
    fprintf(stderr, "kvb-bench: out of memory for H·n·d = %zu\n", hnd);
    rc = 1;
    goto out;
  }
  fill_uniform(Kd, hnd, -1.3, 1.3, r); /* ‖k‖ ≈ 8.5 at d = 128, as the 003 App. B runs */
  fill_uniform(Vd, hnd, -0.5, 0.5, r);
  if (f32)
    for (size_t i = 0; i < hnd; i++) Kf[i] = (float)Kd[i], Vf[i] = (float)Vd[i];
  for (unsigned t = 0; t < Tmax; t++) {
    u[t] = malloc(H * (n >> t) * sizeof(double));
    if (!u[t]) {
      rc = 1;
      goto out;
    }
    fill_uniform(u[t], H * (n >> t), 0, 1, r);
  }
  const void *K = f32 ? (const void *)Kf : (const void *)Kd,
             *V = f32 ? (const void *)Vf : (const void *)Vd;
  double gemmT = f32 ? L.sgemmT : L.dgemmT, gemm1 = f32 ? L.sgemm1 : L.dgemm1;
  double ex = f32 ? L.expf_s : L.exp_s, es = f32 ? 4 : 8;
  printf("\nblock BalanceKV (kvb_bkvb_compress%s), H = %zu, n = %zu, d = dv = %zu, %s; best of %d\n"
         "  bound = Gram flops / %s rate on the same threads (measured beside every run; the best "
         "of those and the start's); x_bound = seconds / bound (1 = as fast as the Gram "
         "products alone); x_paired = the median over the runs of each run's time over the bound "
         "from the GEMM measured right before it\n",
         f32 ? "_f32" : "", H, n, d, f32 ? "float32" : "float64", O.reps, f32 ? "SGEMM" : "DGEMM");
  printf("  %4s %2s %9s %9s %9s %7s %8s %9s %9s %9s\n", "b", "T", "wall_s", "cpu_s", "bound_s",
         "x_bound", "x_paired", "1thr_s", "speedup", "gram_GFLOP");
  for (size_t bi = 0; bi < O.nb; bi++)
    for (size_t ti = 0; ti < O.nT; ti++) {
      kvb_bkvb_opts o;
      kvb_bkvb_opts_default(&o);
      o.b = O.b[bi], o.T = O.T[ti];
      kvb_bkvb_stats st;
      memset(&st, 0, sizeof st);
      double best = INFINITY, best1 = NAN, s, gbest = INFINITY, best_cpu = NAN;
      double gf = gram_flops(H, n, o.b, o.T, d, d);
      /* Each run is paired with a GEMM measured right before it: on a shared machine the GEMM
       * rate itself moves between runs (up to 2× here), so besides best / best-rate the ratio is
       * taken run by run and its median reported. The GEMM runs single-threaded products on
       * pinned threads of its own (bench_limit.h), so no OpenBLAS thread is left spinning on the
       * cores when the compression starts (one was: the 2-thread speed-up fell from 2.2 to 1.15
       * until a 0.3 s pause was put between them). */
      enum { BMAXREP = 64 };
      double xr[BMAXREP];
      int nx = 0;
      o.threads = O.threads;
      for (int k = 0; k < O.reps; k++) {
        double g = gemm_once(f32, O.threads);
        gbest = fmin(gbest, g);
        kvb_bkvb_stats *sp = k == 0 ? &st : NULL;
        if (run_bkvb(H, n, d, f32, K, V, &o, (const double *const *)u, idx, w, sp, &s)) {
          fprintf(stderr, "kvb-bench: balancekv_block b=%zu T=%u: %s\n", o.b, o.T,
                  kvb_strerror_last());
          rc = 1;
          goto out;
        }
        if (s < best) best = s, best_cpu = g_last_cpu;
        if (nx < BMAXREP) xr[nx++] = s / (gf / gemm_flops_per_s(g));
      }
      double xpaired = kvb_quantile(xr, (size_t)nx, 0.5);
      if (O.threads > 1) {
        o.threads = 1;
        best1 = INFINITY;
        for (int k = 0; k < O.reps; k++) {
          if (run_bkvb(H, n, d, f32, K, V, &o, (const double *const *)u, idx, w, NULL, &s)) {
            rc = 1;
            goto out;
          }
          best1 = fmin(best1, s);
        }
      }
      double rate = fmax(gemm_flops_per_s(gbest), gemmT); /* best of this config's and the start's */
      double bound = gf / rate;
      printf("  %4zu %2u %9.4f %9.4f %9.4f %7.2f %8.2f %9.4f %9.2f %9.2f\n", o.b, o.T, best,
             best_cpu, bound, best / bound, xpaired, best1, best1 / best, gf / 1e9);
      /* Phases: CPU seconds summed over workers, so each limit is the one-thread limit. */
      double bytes = 0;
      for (unsigned rr = 0; rr < o.T; rr++) bytes += (double)H * (double)(n >> rr) * (double)(2 * d) * es;
      double lim_c = bytes / L.copy1, lim_g = gf / gemm1, lim_e = (double)st.exps * ex,
             lim_w = walk_flops(H, n, o.b, o.T) / gemm1, lim_x = bytes / L.copy1;
      double lim_gc = gram_in_cache_s(f32, K, H, n, o.b, o.T, d);
      double tot = st.t_center + st.t_gram + st.t_exp + st.t_walk + st.t_gather;
      printf("       phases (CPU s, first run; limit = one thread's): center %.4f [copy %.4f] "
             "gram %.4f [%s %.4f; the kernel on a cached block %.4f] exp %.4f [%llu used exps "
             "%.4f] walk %.4f [its MACs at %s %.4f] gather %.4f [copy %.4f]%s\n",
             st.t_center, lim_c, st.t_gram, f32 ? "SGEMM" : "DGEMM", lim_g, lim_gc, st.t_exp,
             (unsigned long long)st.exps, lim_e, st.t_walk, f32 ? "SGEMM" : "DGEMM", lim_w,
             st.t_gather, lim_x, tot == 0 ? " (phase timers not filled by this build)" : "");
      {
        char what[112];
        snprintf(what, sizeof what, "balancekv_block %s b=%zu T=%u, %d thr", f32 ? "f32" : "f64",
                 o.b, o.T, O.threads);
        rec_add(what, f32 ? "SGEMM" : "DGEMM", f32 ? &S_sgemmT : &S_dgemmT, 0, best, best_cpu, gf,
                xpaired);
      }
      jbegin("balancekv_block");
      jstr("dtype", f32 ? "f32" : "f64");
      jnum("H", (double)H), jnum("n", (double)n), jnum("d", (double)d), jnum("b", (double)o.b);
      jnum("T", o.T), jnum("seconds", best), jnum("cpu_seconds", best_cpu), jnum("bound_s", bound);
      jnum("x_bound", best / bound);
      jnum("x_bound_paired_median", xpaired);
      jnum("gemm_gflops", rate / 1e9);
      jnum("seconds_1thread", best1), jnum("speedup", best1 / best), jnum("gram_gflop", gf / 1e9);
      jnum("t_center", st.t_center), jnum("lim_center", lim_c);
      jnum("t_gram", st.t_gram), jnum("lim_gram", lim_g), jnum("gram_in_cache", lim_gc);
      jnum("t_exp", st.t_exp), jnum("lim_exp", lim_e), jnum("exps", (double)st.exps);
      jnum("t_walk", st.t_walk), jnum("lim_walk", lim_w);
      jnum("t_gather", st.t_gather), jnum("lim_gather", lim_x);
      jnum("clipped", st.steps ? (double)(st.clipped0 + st.clipped1) / (double)st.steps : NAN);
      jend();
    }
out:
  if (u)
    for (unsigned t = 0; t <= Tmax; t++) free(u[t]);
  free(u), free(Kd), free(Vd), free(Kf), free(Vf), free(idx), free(w);
  gsl_rng_free(r);
  return rc;
}

/* ---- exact decode attention ---- */

static volatile uint64_t g_probe_sink; /* keeps the read probe's sums alive */

static int bench_decode(int f32) {
  size_t H = O.H, n = O.n, d = O.d, nq = O.nq, hnd = H * n * d;
  double es = f32 ? 4 : 8;
  gsl_rng *r = kvb_rng_alloc_substream(11, 0);
  void *K = malloc(hnd * (size_t)es), *V = malloc(hnd * (size_t)es);
  void *Q = malloc(H * nq * d * (size_t)es), *Z = malloc(H * nq * d * (size_t)es);
  double *lse = malloc(H * nq * sizeof *lse);
  int rc = 0;
  if (!r || !K || !V || !Q || !Z || !lse) {
    fprintf(stderr, "kvb-bench: out of memory for exact decode (H·n·d = %zu)\n", hnd);
    rc = 1;
    goto out;
  }
  for (size_t i = 0; i < hnd; i++) {
    double k = gauss(r), v = gauss(r);
    if (f32) ((float *)K)[i] = (float)k, ((float *)V)[i] = (float)v;
    else ((double *)K)[i] = k, ((double *)V)[i] = v;
  }
  for (size_t i = 0; i < H * nq * d; i++) {
    double q = gauss(r);
    if (f32) ((float *)Q)[i] = (float)q;
    else ((double *)Q)[i] = q;
  }
  double scale = 1.0 / sqrt((double)d), bytes = 2.0 * (double)hnd * es;
  double best[2] = {INFINITY, INFINITY}, cbest[2] = {INFINITY, INFINITY};
  double rbest[2] = {INFINITY, INFINITY}, bcpu[2] = {NAN, NAN};
  int thr[2] = {O.threads, 1};
  /* Each run is a few milliseconds and the copy's bandwidth on a shared machine varies from pass
   * to pass, so besides best / best the fraction is also taken run by run against the copy pass
   * right before it, and the median of those (at least 9 pairs) is reported. */
  enum { DMAXREP = 64 };
  int dreps = O.reps < 9 ? 9 : O.reps > DMAXREP ? DMAXREP : O.reps;
  double pair[2][DMAXREP], rpair[2][DMAXREP], ppair[2][DMAXREP];
  double pbest[2] = {INFINITY, INFINITY};
  for (int k = 0; k < (O.threads > 1 ? 2 : 1); k++)
    for (int rep = 0; rep < dreps; rep++) {
      double tc = copy_once(thr[k]); /* the limits, beside each run */
      double tr = read_once(thr[k]);
      cbest[k] = fmin(cbest[k], tc);
      rbest[k] = fmin(rbest[k], tr);
      /* the read probe: the kernel's own loads on its own workers, no arithmetic, right
       * before it (attention_batch.h) */
      double p0 = now();
      uint64_t sink = 0;
      int sp = kvb_attention_batch_read_probe(f32, H, n, nq, d, d, K, V, thr[k], &sink);
      double pt = now() - p0;
      if (sp) {
        fprintf(stderr, "kvb-bench: exact decode read probe: %s\n", kvb_strerror_last());
        rc = 1;
        goto out;
      }
      g_probe_sink += sink;
      pbest[k] = fmin(pbest[k], pt);
      ppair[k][rep] = pt;
      double t0 = now(), c0 = cpu_now();
      int st = f32 ? kvb_attention_batch_f32(H, n, nq, d, d, K, V, Q, scale, thr[k], Z, lse)
                   : kvb_attention_batch_f64(H, n, nq, d, d, K, V, Q, scale, thr[k], Z, lse);
      double dt = now() - t0, dc = cpu_now() - c0;
      ppair[k][rep] = ppair[k][rep] / dt; /* probe time over kernel time: the kernel's fraction */
      if (st) {
        fprintf(stderr, "kvb-bench: exact decode: %s\n", kvb_strerror_last());
        rc = 1;
        goto out;
      }
      if (dt < best[k]) best[k] = dt, bcpu[k] = dc;
      pair[k][rep] = (bytes / dt) / copy_bw(tc);
      rpair[k][rep] = (bytes / dt) / read_bw(tr);
    }
  double pmed = kvb_quantile(pair[0], (size_t)dreps, 0.5);
  double pmed1 = O.threads > 1 ? kvb_quantile(pair[1], (size_t)dreps, 0.5) : pmed;
  double prmed = kvb_quantile(ppair[0], (size_t)dreps, 0.5);
  double prmed1 = O.threads > 1 ? kvb_quantile(ppair[1], (size_t)dreps, 0.5) : prmed;
  double rmed = kvb_quantile(rpair[0], (size_t)dreps, 0.5);
  double rmed1 = O.threads > 1 ? kvb_quantile(rpair[1], (size_t)dreps, 0.5) : rmed;
  double rT = fmax(read_bw(rbest[0]), L.readT),
         r1 = O.threads > 1 ? fmax(read_bw(rbest[1]), L.read1) : rT;
  for (int k = 0; k < (O.threads > 1 ? 2 : 1); k++) {
    char what[112];
    snprintf(what, sizeof what, "exact_decode %s, %d thr (bytes read)", f32 ? "f32" : "f64", thr[k]);
    rec_add(what, "STREAM read", k ? &S_read1 : &S_readT, 1, best[k], bcpu[k], bytes,
            k ? rmed1 : rmed);
    snprintf(what, sizeof what, "exact_decode %s, %d thr (bytes read, vs copy)", f32 ? "f32" : "f64",
             thr[k]);
    rec_add(what, "STREAM copy", k ? &S_copy1 : &S_copyT, 2, best[k], bcpu[k], bytes,
            k ? pmed1 : pmed);
  }
  double bw = bytes / best[0], bw1 = O.threads > 1 ? bytes / best[1] : bw;
  /* the copy limit: the best of the passes beside these runs and of the start's */
  double cT = fmax(copy_bw(cbest[0]), L.copyT), c1 = O.threads > 1 ? fmax(copy_bw(cbest[1]), L.copy1) : cT;
  /* The double reference (kvb_attention_exact: two passes over K, one thread), once, as context. */
  double tref = NAN, maxdiff = NAN;
  if (!f32) {
    double *z = malloc(d * sizeof *z);
    maxdiff = 0;
    double t0 = now();
    for (size_t h = 0; h < H && z; h++)
      for (size_t i = 0; i < nq; i++) {
        kvb_attention_exact(n, d, d, (const double *)K + h * n * d, (const double *)V + h * n * d,
                            (const double *)Q + (h * nq + i) * d, scale, z, NULL);
        for (size_t j = 0; j < d; j++)
          maxdiff = fmax(maxdiff, fabs(z[j] - ((double *)Z)[(h * nq + i) * d + j]));
      }
    tref = now() - t0;
    free(z);
  }
  printf("\nexact decode attention (kvb_attention_batch_%s), H = %zu, n = %zu, d = dv = %zu, "
         "%zu quer%s per head; K+V = %.0f MiB (out of cache when >> L3); a copy pass runs beside "
         "every run, the copy limit is the best of those and the start's; 'paired' = the median "
         "over %d runs of each run's fraction of the copy pass right before it\n"
         "  %.4f s on %d thread(s): %.2f GB/s = %.3f of STREAM copy (%.2f GB/s), paired %.3f",
         f32 ? "f32" : "f64", H, n, d, nq, nq == 1 ? "y" : "ies", bytes / 1048576.0, dreps,
         best[0], O.threads, bw / 1e9, bw / cT, cT / 1e9, pmed);
  if (O.threads > 1)
    printf("; 1 thread %.4f s: %.2f GB/s = %.3f of 1-thread copy (%.2f GB/s), paired %.3f; "
           "speedup %.2f", best[1], bw1 / 1e9, bw1 / c1, c1 / 1e9, pmed1, best[1] / best[0]);
  printf("\n  against a read-only pass (like with like: decode reads K and V, writes only the "
         "outputs): %.3f of STREAM read (%.2f GB/s), paired %.3f",
         bw / rT, rT / 1e9, rmed);
  if (O.threads > 1)
    printf("; 1 thread %.3f of 1-thread read (%.2f GB/s), paired %.3f", bw1 / r1, r1 / 1e9, rmed1);
  printf("\n  read probe (the kernel's own loads, order, prefetch and workers, no arithmetic; "
         "attention_batch.h): %.2f GB/s = %.3f of STREAM copy, %.3f of STREAM read; the kernel runs "
         "at %.3f of the probe (best / best), paired %.3f",
         bytes / pbest[0] / 1e9, bytes / pbest[0] / cT, bytes / pbest[0] / rT, pbest[0] / best[0],
         prmed);
  if (O.threads > 1)
    printf("; 1 thread %.2f GB/s = %.3f of 1-thread copy, the kernel %.3f of it, paired %.3f",
           bytes / pbest[1] / 1e9, bytes / pbest[1] / c1, pbest[1] / best[1], prmed1);
  printf("\n  CPU seconds of the best run: %.4f (%d thread(s))%s\n", bcpu[0], O.threads,
         O.threads > 1 ? "" : "");
  if (!f32)
    printf("  reference kvb_attention_exact (two passes, one thread): %.4f s, %.1fx the batch "
           "time; max |z - z_ref| = %.3g\n", tref, tref / best[0], maxdiff);
  jbegin("exact_decode");
  jstr("dtype", f32 ? "f32" : "f64");
  jnum("H", (double)H), jnum("n", (double)n), jnum("d", (double)d), jnum("nq", (double)nq);
  jnum("seconds", best[0]), jnum("bytes", bytes), jnum("gbps", bw / 1e9);
  jnum("copy_gbps", cT / 1e9), jnum("fraction_copy", bw / cT);
  jnum("fraction_copy_paired_median", pmed), jnum("fraction_copy_1thread_paired_median", pmed1);
  jnum("seconds_1thread", O.threads > 1 ? best[1] : best[0]);
  jnum("copy1_gbps", c1 / 1e9), jnum("fraction_copy_1thread", bw1 / c1);
  jnum("reference_seconds", tref), jnum("max_abs_diff_reference", maxdiff);
  jnum("read_gbps", rT / 1e9), jnum("fraction_read", bw / rT);
  jnum("fraction_read_paired_median", rmed), jnum("cpu_seconds", bcpu[0]);
  jnum("probe_gbps", bytes / pbest[0] / 1e9), jnum("probe_fraction_copy", bytes / pbest[0] / cT);
  jnum("kernel_fraction_probe", pbest[0] / best[0]);
  jnum("kernel_fraction_probe_paired_median", prmed);
  jend();
out:
  free(K), free(V), free(Q), free(Z), free(lse);
  gsl_rng_free(r);
  return rc;
}

/* ---- a clusterable stream generated on the fly (000 Def. 1: m centers of norm 4, every key
 * within 0.45 of its center, so keys of one cluster lie within δ = 1 of each other and SubGen's
 * m′ <= m) ---- */

#define POOL 4096 /* directions, values and queries drawn once, then picked at random */
typedef struct {
  size_t d, m;
  double *C, *dir, *val, *qry;
  gsl_rng *r;
} gen;

static void gen_pools(gen *g);

static int gen_init(gen *g, size_t d, size_t m, uint64_t seed) {
  g->d = d, g->m = m;
  g->r = kvb_rng_alloc_substream(seed, 0);
  g->C = malloc(m * d * sizeof *g->C);
  g->dir = malloc(POOL * d * sizeof *g->dir);
  g->val = malloc(POOL * d * sizeof *g->val);
  g->qry = malloc(POOL * d * sizeof *g->qry);
  if (!g->r || !g->C || !g->dir || !g->val || !g->qry) return -1;
  for (size_t c = 0; c < m; c++) {
    double s = 0;
    for (size_t j = 0; j < d; j++) {
      g->C[c * d + j] = gauss(g->r);
      s += g->C[c * d + j] * g->C[c * d + j];
    }
    for (size_t j = 0; j < d; j++) g->C[c * d + j] *= 4.0 / sqrt(s);
  }
  gen_pools(g);
  return 0;
}

static void unit(gsl_rng *r, double *x, size_t d, double norm) {
  double s = 0;
  for (size_t j = 0; j < d; j++) {
    x[j] = gauss(r);
    s += x[j] * x[j];
  }
  for (size_t j = 0; j < d; j++) x[j] *= norm / sqrt(s);
}

static void gen_pools(gen *g) {
  size_t d = g->d;
  for (size_t i = 0; i < POOL; i++) {
    unit(g->r, g->dir + i * d, d, 0.45);
    unit(g->r, g->qry + i * d, d, 1.0);
    for (size_t j = 0; j < d; j++) g->val[i * d + j] = gauss(g->r) / sqrt((double)d);
  }
}

/* Next token: key = a random center + a pooled offset of norm 0.45, a pooled value of norm ≈ 1
 * and a pooled query of norm 1 (pools keep the generator's cost out of the timings' budget). */
static void gen_token(gen *g, double *k, double *v, double *q) {
  size_t d = g->d, c = gsl_rng_uniform_int(g->r, (unsigned long)g->m);
  const double *o = g->dir + gsl_rng_uniform_int(g->r, POOL) * d;
  for (size_t j = 0; j < d; j++) k[j] = g->C[c * d + j] + o[j];
  memcpy(v, g->val + gsl_rng_uniform_int(g->r, POOL) * d, d * sizeof *v);
  memcpy(q, g->qry + gsl_rng_uniform_int(g->r, POOL) * d, d * sizeof *q);
}

static void gen_free(gen *g) {
  free(g->C), free(g->dir), free(g->val), free(g->qry);
  gsl_rng_free(g->r);
}

/* ---- SubGen: per token vs n, and its own roofline ---- */

/* The roofline of a SubGen step: the work the method counted (kvb_work) replayed as tight loops
 * right after the step — kvb_dist2 per distance, gsl_rng_uniform per coin (update); kvb_score
 * per dot and exp per exponential (query) — so step and replay see the same machine load. */
typedef struct {
  size_t d, rows;
  double *X, *q, *x, sink;
  gsl_rng *r;
} replayer;

static int replay_init(replayer *p, size_t d, size_t rows) {
  p->d = d, p->rows = rows, p->sink = 0;
  p->X = malloc(rows * d * sizeof *p->X);
  p->q = malloc(d * sizeof *p->q);
  p->x = malloc(rows * sizeof *p->x);
  p->r = kvb_rng_alloc_substream(3, 0);
  if (!p->X || !p->q || !p->x || !p->r) return -1;
  for (size_t i = 0; i < rows * d; i++) p->X[i] = sin((double)i);
  for (size_t j = 0; j < d; j++) p->q[j] = cos((double)j);
  for (size_t i = 0; i < rows; i++) p->x[i] = -fabs(sin((double)i)) * 8;
  return 0;
}

static void replay_free(replayer *p) {
  free(p->X), free(p->q), free(p->x);
  gsl_rng_free(p->r);
}

static void replay(replayer *p, double dist, double coins, double dots, double exps, double *upd,
                   double *qry) {
  size_t d = p->d, rows = p->rows;
  double sum = 0, t0 = now();
  for (size_t i = 0; i < (size_t)dist; i++) sum += kvb_dist2(p->X + (i % rows) * d, p->q, d);
  for (size_t i = 0; i < (size_t)coins; i++) sum += gsl_rng_uniform(p->r);
  double t1 = now();
  for (size_t i = 0; i < (size_t)dots; i++) sum += kvb_score(p->q, p->X + (i % rows) * d, d, 0.1);
  for (size_t i = 0; i < (size_t)exps; i++) sum += exp(p->x[i % rows] + sum * 1e-300);
  double t2 = now();
  p->sink += sum; /* used: printed at the end of the sweep */
  *upd = t1 - t0, *qry = t2 - t1;
}

static int bench_subgen(void) {
  size_t d = O.d, R = 31;
  int hi = O.subgen_hi, ehi = O.exact_hi < hi ? O.exact_hi : hi;
  size_t emax = ((size_t)1 << ehi) + R;
  const size_t mcl = 16, t = 8, s = 64;
  gen g;
  double *k = malloc(d * sizeof *k), *v = malloc(d * sizeof *v), *q = malloc(d * sizeof *q),
         *z = malloc(d * sizeof *z), *Ks = malloc(emax * d * sizeof *Ks),
         *Vs = malloc(emax * d * sizeof *Vs);
  gsl_rng *mr = kvb_rng_alloc_substream(2026, 1);
  kvb_method *sg = NULL;
  replayer rp;
  int rc = 0;
  memset(&rp, 0, sizeof rp);
  if (gen_init(&g, d, mcl, 2026) || replay_init(&rp, d, s + mcl * t) || !k || !v || !q || !z ||
      !Ks || !Vs || !mr) {
    fprintf(stderr, "kvb-bench: out of memory for the SubGen sweep\n");
    rc = 1;
    goto out;
  }
  kvb_params pp;
  kvb_params_init(&pp);
  kvb_params_set(&pp, "delta", 1.0);
  kvb_params_set(&pp, "t", (double)t);
  kvb_params_set(&pp, "s", (double)s);
  double scale = 1.0 / sqrt((double)d);
  kvb_method_config cfg = {d, d, scale, mr};
  if (kvb_method_alloc("subgen", &cfg, &pp, &sg)) {
    fprintf(stderr, "kvb-bench: subgen: %s\n", kvb_strerror_last());
    rc = 1;
    goto out;
  }
  printf("\nSubGen (000 Alg. 1; δ = 1, t = %zu, s = %zu; clusterable keys, m = %zu, d = %zu), "
         "per token: update + query, median of %zu steps at each n\n"
         "  roofline = the work the method counted in each step (kvb_work: distances, coins; query "
         "dots, exps) replayed right after it as tight loops (kvb_dist2, gsl_rng_uniform, "
         "kvb_score, exp); medians over the steps; frac = roofline / measured (1 = no overhead "
         "beyond its own work)\n"
         "  exact = kvb_attention_exact over the n tokens (two passes, one thread), up to n = 2^%d\n",
         t, s, mcl, d, R, ehi);
  printf("  %8s %4s %10s %10s %7s %10s %10s %7s %7s %12s %9s\n", "n", "m'", "update_us",
         "upd_roof", "frac", "query_us", "qry_roof", "frac", "frac_all", "exact_us", "exact/sg");
  size_t fed = 0, npts = 0;
  double lx[32], ly[32], ex_[32], ey[32];
  size_t enp = 0;
  double tu[64], tq[64], ru[64], rq[64], wd[64], wc[64], wq[64], we[64];
  for (int lg = 10; lg <= hi; lg++) {
    size_t n = (size_t)1 << lg;
    for (; fed + 1 < n; fed++) { /* untimed: absorb tokens up to n − 1 */
      gen_token(&g, k, v, q);
      if (fed < emax) memcpy(Ks + fed * d, k, d * sizeof *k), memcpy(Vs + fed * d, v, d * sizeof *v);
      if (kvb_method_update(sg, k, d, v, d)) {
        fprintf(stderr, "kvb-bench: subgen update: %s\n", kvb_strerror_last());
        rc = 1;
        goto out;
      }
    }
    for (size_t rr = 0; rr < R; rr++, fed++) {
      gen_token(&g, k, v, q);
      if (fed < emax) memcpy(Ks + fed * d, k, d * sizeof *k), memcpy(Vs + fed * d, v, d * sizeof *v);
      kvb_work w0 = sg->work;
      double a = now();
      int e1 = kvb_method_update(sg, k, d, v, d);
      double b = now();
      kvb_work w1 = sg->work;
      int e2 = kvb_method_query(sg, q, d, z, d);
      double c = now();
      kvb_work w2 = sg->work;
      if (e1 || e2) {
        fprintf(stderr, "kvb-bench: subgen: %s\n", kvb_strerror_last());
        rc = 1;
        goto out;
      }
      tu[rr] = b - a, tq[rr] = c - b;
      wd[rr] = (double)(w1.distances - w0.distances), wc[rr] = (double)(w1.coins - w0.coins);
      wq[rr] = (double)(w2.dots - w1.dots), we[rr] = (double)(w2.exps - w1.exps);
    }
    for (size_t rr = 0; rr < R; rr++) replay(&rp, wd[rr], wc[rr], wq[rr], we[rr], &ru[rr], &rq[rr]);
    double mu = kvb_quantile(tu, R, 0.5), mq = kvb_quantile(tq, R, 0.5);
    double mru = kvb_quantile(ru, R, 0.5), mrq = kvb_quantile(rq, R, 0.5);
    double tex = NAN;
    if (lg <= ehi) {
      double te[5];
      for (int k2 = 0; k2 < 5; k2++) {
        double a = now();
        kvb_attention_exact(fed, d, d, Ks, Vs, q, scale, z, NULL);
        te[k2] = now() - a;
      }
      tex = kvb_quantile(te, 5, 0.5);
      ex_[enp] = log2((double)n), ey[enp++] = log2(tex);
    }
    lx[npts] = log2((double)n), ly[npts++] = log2(mu + mq);
    printf("  %8zu %4zu %10.3f %10.3f %7.3f %10.3f %10.3f %7.3f %7.3f %12.2f %9.1f\n", n,
           kvb_subgen_num_clusters(sg), mu * 1e6, mru * 1e6, mru / mu, mq * 1e6, mrq * 1e6,
           mrq / mq, (mru + mrq) / (mu + mq), tex * 1e6, tex / (mu + mq));
    jbegin("subgen");
    jnum("n", (double)n), jnum("d", (double)d), jnum("mprime", (double)kvb_subgen_num_clusters(sg));
    jnum("t", (double)t), jnum("s", (double)s);
    jnum("update_s", mu), jnum("update_roofline_s", mru), jnum("query_s", mq);
    jnum("query_roofline_s", mrq), jnum("fraction_roofline", (mru + mrq) / (mu + mq));
    jnum("exact_s", tex);
    jend();
  }
  double sl, lo, hi2, icpt;
  if (kvb_linear_fit(npts, lx, ly, 0.95, &sl, &lo, &hi2, &icpt) == 0)
    printf("  log-log slope of SubGen's per-token time vs n: %.3f, 95%% CI [%.3f, %.3f] (flat = 0)\n",
           sl, lo, hi2);
  double esl = NAN, elo = NAN, ehi2 = NAN;
  if (enp >= 3 && kvb_linear_fit(enp, ex_, ey, 0.95, &esl, &elo, &ehi2, &icpt) == 0)
    printf("  log-log slope of exact attention's per-token time vs n: %.3f, 95%% CI [%.3f, %.3f]\n",
           esl, elo, ehi2);
  jbegin("subgen_slope");
  jnum("slope", sl), jnum("slope_lo", lo), jnum("slope_hi", hi2);
  jnum("exact_slope", esl), jnum("exact_slope_lo", elo), jnum("exact_slope_hi", ehi2);
  jend();
  printf("  (replay checksum %g)\n", rp.sink);
out:
  kvb_method_free(sg);
  replay_free(&rp);
  gen_free(&g);
  gsl_rng_free(mr);
  free(k), free(v), free(q), free(z), free(Ks), free(Vs);
  return rc;
}

/* ---- scaling: time per token vs n for every registered method ---- */

/* Parameters for methods with required ones (budgets ~256 tokens, stream of norm-4 keys). */
static const struct {
  const char *name, *params;
} scal_params[] = {
    {"subgen", "delta=1 t=8 s=64"},
    {"merge_reduce", "r_key=5 r_value=2 t=64 T=2"},
    {"balancekv", "r=5 t=64 T=2 eps=0.5 n=1e9"},
    {"recent_kcenter", "window=128 centers=128"},
    {"sink_recent", "budget=256"},
    {"h2o", "budget=256"},
    {"snapkv", "budget=256"},
    {"pyramidkv", "budget=256"},
    {"tova", "budget=256"},
    {"knorm", "budget=256"},
    {NULL, NULL}};

static int scal_one(const kvb_method_type *mt) {
  size_t d = O.d, R = 7;
  kvb_params p;
  kvb_params_init(&p);
  const char *ps = "";
  for (size_t i = 0; scal_params[i].name; i++)
    if (!strcmp(scal_params[i].name, mt->name)) ps = scal_params[i].params;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", ps);
  for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) kvb_params_parse(&p, tok);
  gsl_rng *mr = kvb_rng_alloc_substream(99, 1);
  kvb_method_config cfg = {d, d, 1.0 / sqrt((double)d), mr};
  kvb_method *m = NULL;
  gen g;
  double *k = malloc(d * sizeof *k), *v = malloc(d * sizeof *v), *q = malloc(d * sizeof *q),
         *z = malloc(d * sizeof *z);
  double lx[32], ly[32], ts[16];
  size_t npts = 0;
  int rc = 0;
  char why[160] = "";
  if (gen_init(&g, d, 16, 99) || !k || !v || !q || !z || !mr) {
    rc = 1;
    goto out;
  }
  if (kvb_method_alloc(mt->name, &cfg, &p, &m)) {
    snprintf(why, sizeof why, "not run: %s", kvb_strerror_last());
    goto out;
  }
  double t_start = now(), t_absorb = 0;
  size_t fed = 0, absorbed = 0;
  jdeferring = 1;
  printf("  %-16s", mt->name);
  for (int lg = O.scal_lo; lg <= O.scal_hi; lg++) {
    size_t n = (size_t)1 << lg;
    double ta = now();
    for (; fed + 1 < n; fed++, absorbed++) {
      gen_token(&g, k, v, q);
      if (kvb_method_update(m, k, d, v, d)) {
        snprintf(why, sizeof why, "update failed at n = %zu: %s", fed, kvb_strerror_last());
        goto done;
      }
      if ((fed & 1023) == 0 && now() - t_start > O.scal_budget) {
        snprintf(why, sizeof why, "stopped: over the %.0f s budget while absorbing to n = %zu",
                 O.scal_budget, n);
        goto done;
      }
    }
    t_absorb += now() - ta;
    for (size_t r = 0; r < R; r++, fed++) {
      gen_token(&g, k, v, q);
      double a = now();
      int e = kvb_method_update(m, k, d, v, d);
      if (!e) e = kvb_method_query(m, q, d, z, d);
      ts[r] = now() - a;
      if (e) {
        snprintf(why, sizeof why, "failed at n = %zu: %s", fed, kvb_strerror_last());
        goto done;
      }
    }
    double med = kvb_quantile(ts, R, 0.5);
    lx[npts] = (double)lg, ly[npts++] = log2(med);
    printf(" %9.2f", med * 1e6);
    fflush(stdout);
    jbegin("scaling");
    jstr("method", mt->name), jnum("n", (double)n), jnum("d", (double)d);
    jnum("seconds_per_token", med);
    jend();
    double spent = now() - t_start;
    /* The next n: n more absorbed tokens at the rate seen so far, and R steps at up to 4× this
     * n's step time (allowing a slope up to 2). */
    double next = (absorbed ? t_absorb / (double)absorbed : 0) * (double)n + 4.0 * (double)R * med;
    if (lg < O.scal_hi && spent + next > O.scal_budget) {
      snprintf(why, sizeof why, "stopped before n = 2^%d: the %.0f s budget", lg + 1, O.scal_budget);
      break;
    }
  }
done:
  for (int lg = O.scal_lo + (int)npts; lg <= O.scal_hi; lg++) printf(" %9s", "-");
  {
    double sl = NAN, lo = NAN, hi = NAN, icpt;
    if (npts >= 3 && kvb_linear_fit(npts, lx, ly, 0.95, &sl, &lo, &hi, &icpt) == 0)
      printf("  %6.2f [%5.2f, %5.2f]", sl, lo, hi);
    else
      printf("  %6s %14s", "-", "");
    printf("%s%s\n", why[0] ? "  " : "", why);
    jbegin("scaling_slope");
    jstr("method", mt->name), jnum("points", (double)npts), jnum("slope", sl);
    jnum("slope_lo", lo), jnum("slope_hi", hi);
    jend();
    jflush();
  }
out:
  jflush();
  if (why[0] && !m) printf("  %-16s %s\n", mt->name, why);
  kvb_method_free(m);
  if (g.C || g.r) gen_free(&g);
  gsl_rng_free(mr);
  free(k), free(v), free(q), free(z);
  return rc;
}

static int bench_scaling(void) {
  printf("\nscaling: time per token (update + query, µs, median of 7 steps at each n) vs n, "
         "d = %zu, clusterable keys; log-log slope with its 95%% CI (kvb_linear_fit); a method "
         "stops growing n past its %.0f s budget\n  %-16s", O.d, O.scal_budget, "method");
  for (int lg = O.scal_lo; lg <= O.scal_hi; lg++) printf(" %7s%-2d", "2^", lg);
  printf("  %s\n", "slope [95% CI]");
  for (size_t i = 0; kvb_method_type_at(i); i++) {
    const kvb_method_type *mt = kvb_method_type_at(i);
    int want = O.nonly == 0;
    for (size_t j = 0; j < O.nonly; j++) want |= !strcmp(O.only_method[j], mt->name);
    if (want && scal_one(mt)) return 1;
  }
  return 0;
}

/* ---- quantized caches against exact attention, interleaved in one run ---- */

/* The shape of one SmolLM2-135M cache at 4k context: head dimension 64, 4096 tokens, queried by
 * the kvbound methods' double-precision query (the path `kvbound decode` takes for each layer,
 * kv head and query). Each rep times QN queries of every method in turn (the order rotated from
 * rep to rep), so exact and the quantized caches see the same load; speed = exact's time over
 * the method's (>= 1: at least as fast as exact), best over best and the median of the per-rep
 * pairs. Bytes read per query: the cache as stored (kvb_method_memory), which the fused query
 * reads once for the keys and once for the values. */
static int bench_quant(void) {
  enum { NM = 5, QN = 8, QMAXREP = 64 };
  const size_t n = 4096, d = 64;
  static const char *const type[NM] = {"exact", "q8_0", "q4_0", "kivi", "kivi"};
  static const char *const label[NM] = {"exact", "q8_0", "q4_0", "KIVI-2", "KIVI-4"};
  static const char *const param[NM] = {NULL, NULL, NULL, "bits=2", "bits=4"};
  int reps = O.reps < 9 ? 9 : O.reps > QMAXREP ? QMAXREP : O.reps, rc = 0;
  kvb_method *m[NM] = {NULL};
  gsl_rng *r = kvb_rng_alloc_substream(13, 0);
  double *k = malloc(d * sizeof *k), *v = malloc(d * sizeof *v), *q = malloc(QN * d * sizeof *q),
         *z = malloc(d * sizeof *z);
  static double t[NM][QMAXREP], tc[NM][QMAXREP];
  if (!r || !k || !v || !q || !z) {
    rc = 1;
    goto out;
  }
  kvb_method_config cfg = {d, d, 1.0 / sqrt((double)d), r};
  for (int i = 0; i < NM; i++) {
    kvb_params p;
    kvb_params_init(&p);
    if (param[i]) kvb_params_parse(&p, param[i]);
    if (kvb_method_alloc(type[i], &cfg, &p, &m[i])) {
      fprintf(stderr, "kvb-bench: %s: %s\n", label[i], kvb_strerror_last());
      rc = 1;
      goto out;
    }
  }
  for (size_t tok = 0; tok < n; tok++) {
    for (size_t j = 0; j < d; j++) k[j] = 2.0 * gauss(r), v[j] = gauss(r);
    for (int i = 0; i < NM; i++)
      if (kvb_method_update(m[i], k, d, v, d)) {
        fprintf(stderr, "kvb-bench: %s: %s\n", label[i], kvb_strerror_last());
        rc = 1;
        goto out;
      }
  }
  for (size_t j = 0; j < QN * d; j++) q[j] = gauss(r);
  for (int rep = 0; rep < reps; rep++)
    for (int jj = 0; jj < NM; jj++) {
      int i = (jj + rep) % NM;
      double t0 = now(), c0 = cpu_now();
      for (int a = 0; a < QN; a++)
        if (kvb_method_query(m[i], q + (size_t)a * d, d, z, d)) {
          fprintf(stderr, "kvb-bench: %s: %s\n", label[i], kvb_strerror_last());
          rc = 1;
          goto out;
        }
      t[i][rep] = (now() - t0) / QN, tc[i][rep] = (cpu_now() - c0) / QN;
    }
  kvb_memory me;
  kvb_method_memory(m[0], &me);
  double ebytes = (double)me.bytes, best[NM], cbest[NM];
  printf("\nquantized caches vs exact: the methods' query (double precision, one thread) on one "
         "SmolLM2-135M cache shape, n = %zu tokens, d = %zu; %d reps of %d queries, methods "
         "interleaved; speed = exact's time / the method's (>= 1: as fast as exact), best/best "
         "and the median of the per-rep pairs, in wall and in CPU seconds (on a loaded machine "
         "the CPU figures are the steadier); bytes read per query = the cache as stored\n"
         "  %-8s %9s %9s %7s %7s %7s %7s %12s %8s\n", n, d, reps, QN, "method", "wall us",
         "cpu us", "speed", "paired", "cpu spd", "paired", "bytes/query", "of exact");
  for (int i = 0; i < NM; i++) {
    double pr[QMAXREP], pc[QMAXREP];
    best[i] = cbest[i] = INFINITY;
    for (int rep = 0; rep < reps; rep++) {
      best[i] = fmin(best[i], t[i][rep]), cbest[i] = fmin(cbest[i], tc[i][rep]);
      pr[rep] = t[0][rep] / t[i][rep], pc[rep] = tc[0][rep] / tc[i][rep];
    }
    double pmed = kvb_quantile(pr, (size_t)reps, 0.5), cmed = kvb_quantile(pc, (size_t)reps, 0.5);
    kvb_method_memory(m[i], &me);
    printf("  %-8s %9.1f %9.1f %7.2f %7.2f %7.2f %7.2f %12.0f %8.3f\n", label[i], best[i] * 1e6,
           cbest[i] * 1e6, best[0] / best[i], pmed, cbest[0] / cbest[i], cmed, (double)me.bytes,
           (double)me.bytes / ebytes);
    jbegin("quant_decode");
    jstr("cache", label[i]), jnum("n", (double)n), jnum("d", (double)d);
    jnum("seconds_per_query", best[i]), jnum("cpu_seconds_per_query", cbest[i]);
    jnum("speed_vs_exact", best[0] / best[i]), jnum("speed_vs_exact_paired_median", pmed);
    jnum("cpu_speed_vs_exact", cbest[0] / cbest[i]), jnum("cpu_speed_vs_exact_paired_median", cmed);
    jnum("bytes_per_query", (double)me.bytes), jnum("exact_bytes_per_query", ebytes);
    jend();
  }
out:
  for (int i = 0; i < NM; i++) kvb_method_free(m[i]);
  gsl_rng_free(r);
  free(k), free(v), free(q), free(z);
  return rc;
}

/* ---- the closing table ---- */

/* The limits' names in the closing table and its JSON lines ("limit_series" "limit", "ratio"
 * "series"). */
static const struct {
  const char *name, *unit;
  const kvb_bs_series *s;
} g_lim[] = {{"STREAM read", "GB/s", &S_readT}, {"STREAM read 1 thr", "GB/s", &S_read1},
             {"STREAM copy", "GB/s", &S_copyT}, {"STREAM copy 1 thr", "GB/s", &S_copy1},
             {"SGEMM 1024^3", "GFLOP/s", &S_sgemmT}, {"SGEMM 1 thr", "GFLOP/s", &S_sgemm1},
             {"DGEMM 1024^3", "GFLOP/s", &S_dgemmT}, {"DGEMM 1 thr", "GFLOP/s", &S_dgemm1}};

static const char *series_name(const kvb_bs_series *s) {
  for (size_t i = 0; i < sizeof g_lim / sizeof *g_lim; i++)
    if (g_lim[i].s == s) return g_lim[i].name;
  return "?";
}

static void closing_table(void) {
  /* the limits once more, at the end of the run */
  int T = O.threads;
  stream_copy(T), stream_read(T);
  if (T > 1) stream_copy(1), stream_read(1);
  if (S_sgemmT.n) gemm_rate(1, T);
  if (S_dgemmT.n) gemm_rate(0, T);
  printf("\nlimits over the whole run (%d thread(s) unless named; samples at the start, beside "
         "every timed run and at the end):\n  %-18s %8s %9s %9s %8s\n", T, "limit", "samples",
         "best", "worst", "spread");
  for (size_t i = 0; i < sizeof g_lim / sizeof *g_lim; i++) {
    const kvb_bs_series *s = g_lim[i].s;
    if (!s->n || (T == 1 && strstr(g_lim[i].name, "1 thr"))) continue;
    printf("  %-18s %8zu %9.2f %9.2f %8.3f  %s\n", g_lim[i].name, s->n, kvb_bs_best(s) / 1e9,
           kvb_bs_worst(s) / 1e9, kvb_bs_spread(s), g_lim[i].unit);
    jbegin("limit_series");
    jstr("limit", g_lim[i].name), jnum("samples", (double)s->n);
    jnum("best", kvb_bs_best(s)), jnum("worst", kvb_bs_worst(s));
    jnum("spread", kvb_bs_spread(s));
    jend();
  }
  if (!g_nrec) return;
  printf("\nratios against the run's best sample of their limit (time/bound: 1 = at the limit, "
         "never below 1 by more than the spread; fraction: rate/limit, never above 1 by more "
         "than the spread, unless the limit is not measured alike (unlike: a copy counts a "
         "write per byte read); 'paired' against the sample right before each run, median):\n"
         "  %-46s %-12s %9s %9s %8s %8s %8s %s\n", "what", "limit", "wall s", "cpu s", "ratio",
         "paired", "spread", "");
  for (size_t i = 0; i < g_nrec; i++) {
    const ratio_rec *r = &g_rec[i];
    double x = rec_ratio(r), sp = kvb_bs_spread(r->lim);
    int ok = rec_ok(r);
    printf("  %-46s %-12s %9.4f %9.4f %8.3f %8.3f %8.3f %s%s\n", r->what, r->limit, r->seconds,
           r->cpu_s, x, r->paired, sp,
           r->fraction == 2 ? "fraction (unlike)" : r->fraction ? "fraction" : "time/bound",
           ok ? "" : "  OUTSIDE THE SPREAD");
    jbegin("ratio");
    jstr("what", r->what), jstr("limit", r->limit), jstr("series", series_name(r->lim));
    jstr("kind", r->fraction ? "fraction" : "x_bound"), jstr("time_basis", "wall");
    jnum("alike", r->fraction != 2);
    jnum("seconds", r->seconds), jnum("cpu_seconds", r->cpu_s);
    jnum("work", r->work), jnum("limit_best", rec_rate(r));
    jnum("ratio_run_best", x), jnum("ratio_paired", r->paired), jnum("limit_spread", sp);
    jnum("within_spread", ok);
    jend();
  }
}

/* ---- command line ---- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: kvb-bench [options]\n"
          "  Times kvbound's kernels, each next to the limit it is compared with, measured in the\n"
          "  same run (tests/README.md, Benchmarks). Without options: the default shapes (make bench).\n"
          "  --method LIST   comma-separated: balancekv_block, exact_decode, subgen, scaling,\n"
          "                  quant (q8_0, q4_0, KIVI-2/4 against exact at n = 4096, d = 64), all\n"
          "                  (default all), or registered method names (their scaling rows only)\n"
          "  --n N           tokens per head (default 16384)\n"
          "  --heads H       heads (default 8)\n"
          "  --d D           key and value dimension (default 128)\n"
          "  --b LIST        block lengths of balancekv_block (default 64,128,256)\n"
          "  --T LIST        halving rounds of balancekv_block (default 1,2)\n"
          "  --queries Q     queries per head for exact_decode (default 1)\n"
          "  --threads N     threads (default: the number of cores, or $KVBOUND_THREADS)\n"
          "  --dtype LIST    f32, f64 or f32,f64 (default f32)\n"
          "  --reps R        runs per figure, the best reported (default 3)\n"
          "  --scaling-n LO:HI  log2 n range of the scaling table (default 10:16)\n"
          "  --subgen-n HI   SubGen's sweep goes to n = 2^HI (default 20)\n"
          "  --exact-n HI    exact attention timed next to SubGen up to 2^HI (default 17)\n"
          "  --budget S      seconds per method in the scaling table (default 15)\n"
          "  --json          also print one JSON line per result (lines starting with '{')\n"
          "  --mutant NAME   test only: a wrong closing table that scripts/check-bench-ratios\n"
          "                  must reject: ratio_worst (ratios against the worst sample of the\n"
          "                  limit) or ratio_paired (against the sample beside the run)\n"
          "  --help          this text\n");
}

static int parse_size(const char *flag, const char *s, size_t lo, size_t hi, size_t *out) {
  char *end;
  errno = 0;
  if (!s || *s == '-' || !*s) goto bad;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v < lo || v > hi) goto bad;
  *out = (size_t)v;
  return 0;
bad:
  fprintf(stderr, "kvb-bench: %s needs an integer in [%zu, %zu], got '%s'\n", flag, lo, hi,
          s ? s : "");
  return -1;
}

static int parse_list(const char *flag, const char *s, size_t lo, size_t hi, size_t *out,
                      size_t *n) {
  char buf[256];
  if (!s || strlen(s) >= sizeof buf) {
    fprintf(stderr, "kvb-bench: %s needs a comma-separated list\n", flag);
    return -1;
  }
  snprintf(buf, sizeof buf, "%s", s);
  *n = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    if (*n >= MAXLIST) {
      fprintf(stderr, "kvb-bench: %s takes at most %d values\n", flag, MAXLIST);
      return -1;
    }
    if (parse_size(flag, tok, lo, hi, &out[(*n)++])) return -1;
  }
  if (*n == 0) {
    fprintf(stderr, "kvb-bench: %s needs at least one value\n", flag);
    return -1;
  }
  return 0;
}

static int parse_args(int argc, char **argv) {
  memset(&O, 0, sizeof O);
  O.n = 16384, O.H = 8, O.d = 128, O.nq = 1;
  O.b[0] = 64, O.b[1] = 128, O.b[2] = 256, O.nb = 3;
  O.T[0] = 1, O.T[1] = 2, O.nT = 2;
  O.threads = kvb_threads_default();
  O.f32 = 1, O.reps = 3;
  O.scal_lo = 10, O.scal_hi = 16, O.subgen_hi = 20, O.exact_hi = 17, O.scal_budget = 15;
  int any_sec = 0;
  static char mbuf[512];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    size_t x;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      O.json = 1;
      continue;
    }
    static const char *const valued[] = {"--n", "--heads", "--d", "--queries", "--b", "--T",
                                         "--threads", "--reps", "--budget", "--subgen-n",
                                         "--exact-n", "--scaling-n", "--dtype", "--method", "--mutant",
                                         NULL};
    int known = 0;
    for (int k = 0; valued[k]; k++) known |= !strcmp(a, valued[k]);
    if (!known) {
      fprintf(stderr, "kvb-bench: unknown %s '%s' (see --help)\n",
              a[0] == '-' ? "option" : "argument", a);
      return 2;
    }
    if (!val) {
      fprintf(stderr, "kvb-bench: %s needs a value (see --help)\n", a);
      return 2;
    }
    i++;
    if (!strcmp(a, "--n")) {
      if (parse_size(a, val, 2, (size_t)1 << 30, &O.n)) return 2;
    } else if (!strcmp(a, "--heads")) {
      if (parse_size(a, val, 1, 4096, &O.H)) return 2;
    } else if (!strcmp(a, "--d")) {
      if (parse_size(a, val, 1, 65536, &O.d)) return 2;
    } else if (!strcmp(a, "--queries")) {
      if (parse_size(a, val, 1, 1 << 20, &O.nq)) return 2;
    } else if (!strcmp(a, "--b")) {
      if (parse_list(a, val, 1, (size_t)1 << 20, O.b, &O.nb)) return 2;
    } else if (!strcmp(a, "--T")) {
      size_t t[MAXLIST];
      if (parse_list(a, val, 0, 30, t, &O.nT)) return 2;
      for (size_t k = 0; k < O.nT; k++) O.T[k] = (unsigned)t[k];
    } else if (!strcmp(a, "--threads")) {
      if (kvb_threads_parse(val, &O.threads)) {
        fprintf(stderr, "kvb-bench: --threads: %s\n", kvb_strerror_last());
        return 2;
      }
    } else if (!strcmp(a, "--reps")) {
      if (parse_size(a, val, 1, 1000, &x)) return 2;
      O.reps = (int)x;
    } else if (!strcmp(a, "--budget")) {
      if (parse_size(a, val, 1, 100000, &x)) return 2;
      O.scal_budget = (double)x;
    } else if (!strcmp(a, "--subgen-n")) {
      if (parse_size(a, val, 12, 26, &x)) return 2;
      O.subgen_hi = (int)x;
    } else if (!strcmp(a, "--exact-n")) {
      if (parse_size(a, val, 10, 24, &x)) return 2;
      O.exact_hi = (int)x;
    } else if (!strcmp(a, "--scaling-n")) {
      unsigned lo, hi;
      char c;
      if (sscanf(val, "%u:%u%c", &lo, &hi, &c) != 2 || lo < 4 || hi > 24 || lo + 2 > hi) {
        fprintf(stderr, "kvb-bench: --scaling-n needs LO:HI with 4 <= LO, LO + 2 <= HI <= 24 "
                "(at least 3 points for a slope), got '%s'\n", val);
        return 2;
      }
      O.scal_lo = (int)lo, O.scal_hi = (int)hi;
    } else if (!strcmp(a, "--dtype")) {
      O.f32 = O.f64 = 0;
      if (!strcmp(val, "f32")) O.f32 = 1;
      else if (!strcmp(val, "f64")) O.f64 = 1;
      else if (!strcmp(val, "f32,f64") || !strcmp(val, "f64,f32")) O.f32 = O.f64 = 1;
      else {
        fprintf(stderr, "kvb-bench: --dtype is f32, f64 or f32,f64, got '%s'\n", val);
        return 2;
      }
    } else if (!strcmp(a, "--mutant")) {
      if (strcmp(val, "ratio_worst") && strcmp(val, "ratio_paired")) {
        fprintf(stderr, "kvb-bench: --mutant is ratio_worst or ratio_paired, got '%s'\n", val);
        return 2;
      }
      g_mutant = val;
    } else if (!strcmp(a, "--method")) {
      if (strlen(val) >= sizeof mbuf) {
        fprintf(stderr, "kvb-bench: --method list too long\n");
        return 2;
      }
      snprintf(mbuf, sizeof mbuf, "%s", val);
      for (char *tok = strtok(mbuf, ","); tok; tok = strtok(NULL, ",")) {
        any_sec = 1;
        if (!strcmp(tok, "all"))
          O.sec_bkvb = O.sec_decode = O.sec_subgen = O.sec_scaling = O.sec_quant = 1;
        else if (!strcmp(tok, "quant")) O.sec_quant = 1;
        else if (!strcmp(tok, "balancekv_block")) O.sec_bkvb = 1;
        else if (!strcmp(tok, "exact_decode")) O.sec_decode = 1;
        else if (!strcmp(tok, "subgen")) O.sec_subgen = 1;
        else if (!strcmp(tok, "scaling")) O.sec_scaling = 1;
        else if (kvb_method_lookup(tok)) {
          if (O.nonly >= MAXLIST) {
            fprintf(stderr, "kvb-bench: at most %d method names\n", MAXLIST);
            return 2;
          }
          O.only_method[O.nonly++] = tok;
          O.sec_scaling = 1;
        } else {
          fprintf(stderr, "kvb-bench: unknown --method '%s': one of balancekv_block, "
                  "exact_decode, subgen, scaling, quant, all, or a registered method (kvbound list)\n",
                  tok);
          return 2;
        }
      }
    }
  }
  if (!any_sec) O.sec_bkvb = O.sec_decode = O.sec_subgen = O.sec_scaling = O.sec_quant = 1;
  if (O.exact_hi > O.subgen_hi) O.exact_hi = O.subgen_hi;
  return -1;
}

int main(int argc, char **argv) {
  int rc = parse_args(argc, argv);
  if (rc >= 0) return rc;
  rc = 0;
  openblas_set_num_threads(1);
  read_cpu();
  double t0 = now();
  printf("kvb-bench %s (commit %s): threads %d, load average %.2f at the start (the machine is "
         "shared when this exceeds the cores: figures are then indicative, ratios less affected)\n"
         "cpu: %s; kernels: %s (ratios to the limits differ between CPU families)\n",
         KVBOUND_VERSION, g_commit, O.threads, load1(), g_cpu, simd_name());
  if (g_mutant)
    printf("TEST-ONLY MUTANT %s: the closing table's ratios are wrong on purpose (--mutant)\n",
           g_mutant);
  measure_limits();
  for (int f = 0; f < 2 && !rc; f++) {
    int f32 = f == 0;
    if (f32 ? !O.f32 : !O.f64) continue;
    if (O.sec_bkvb && (rc = bench_bkvb(f32))) break;
    if (O.sec_decode && (rc = bench_decode(f32))) break;
  }
  if (rc > 0) return rc;
  rc = 0;
  if (O.sec_subgen) rc = bench_subgen();
  if (!rc && O.sec_quant) rc = bench_quant();
  if (!rc && O.sec_scaling) rc = bench_scaling();
  if (!rc) closing_table();
  kvb_lim_print_tally("kvb-bench");
  printf("\nload average %.2f at the end; %.1f s in all\n", load1(), now() - t0);
  return rc;
}

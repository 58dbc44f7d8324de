/* bench_balancekv_block.c — compression time of the block-parallel BalanceKV variant (003 App. B;
 * Fig. 3 (a), (c) time the same): H = 8 heads, d = 128, n = 16384, b ∈ {64, 128, 256}, T ∈ {1, 2, 3}, float64 and
 * float32 (baselines DGEMM and SGEMM respectively).
 *
 * Reported against a baseline measured in the same run: the machine's DGEMM throughput (cblas,
 * one thread). The "BLAS bound" of a configuration is the time its Gram products alone would take
 * at that throughput: per round r and head, ⌈m_r/b⌉ lower-triangle SYRKs of the keys (b²·d flops
 * each, counting a multiply-add as 2) and of the values (b²·dv) — the walk itself reads every
 * K_ij, i < j, once and evaluates one exp per pair, which BLAS cannot do and which dominates.
 * fraction = bound / measured (1 = as fast as the Gram products alone); fraction2 adds the b(b−1)/2
 * exponentials per block at the exp() cost measured in the same run; fraction3 = the same SYRK
 * calls timed alone at their real (small) shapes / measured. No timed assertions. */
#include "kvbound.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cblas.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* DGEMM flop/s on 512×512×512, best of 5. */
static double dgemm_rate(void) {
  const int N = 512;
  double *A = malloc((size_t)N * N * sizeof *A), *B = malloc((size_t)N * N * sizeof *B),
         *C = malloc((size_t)N * N * sizeof *C);
  for (int i = 0; i < N * N; i++) A[i] = sin(i), B[i] = cos(i), C[i] = 0;
  double best = INFINITY;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, N, N, 1.0, A, N, B, N, 0.0, C, N);
    best = fmin(best, now() - t0);
  }
  free(A), free(B), free(C);
  return 2.0 * N * N * N / best;
}

/* SGEMM flop/s on 512×512×512, best of 5. */
static double sgemm_rate(void) {
  const int N = 512;
  float *A = malloc((size_t)N * N * sizeof *A), *B = malloc((size_t)N * N * sizeof *B),
        *C = malloc((size_t)N * N * sizeof *C);
  for (int i = 0; i < N * N; i++) A[i] = sinf((float)i), B[i] = cosf((float)i), C[i] = 0;
  double best = INFINITY;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, N, N, 1.0f, A, N, B, N, 0.0f, C, N);
    best = fmin(best, now() - t0);
  }
  free(A), free(B), free(C);
  return 2.0 * N * N * N / best;
}

/* Seconds per exp() on a contiguous array, best of 5 (the walk's irreducible scalar work). */
static double exp_cost(void) {
  const size_t N = 1 << 20;
  double *x = malloc(N * sizeof *x), best = INFINITY, sink = 0;
  for (size_t i = 0; i < N; i++) x[i] = sin((double)i) * 5;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    for (size_t i = 0; i < N; i++) sink += exp(x[i]);
    best = fmin(best, now() - t0);
  }
  free(x);
  return sink > 0 ? best / (double)N : best / (double)N;
}

/* Seconds for the configuration's SYRK calls alone, at their real shapes (b×d and b×dv). */
static double syrk_time(size_t H, size_t n, size_t b, unsigned T, size_t d, size_t dv, int f32) {
  size_t da = d > dv ? d : dv;
  double *A = malloc(b * da * sizeof *A), *G = malloc(b * b * sizeof *G);
  float *Af = malloc(b * da * sizeof *Af), *Gf = malloc(b * b * sizeof *Gf);
  for (size_t i = 0; i < b * da; i++) A[i] = sin((double)i), Af[i] = (float)A[i];
  double t0 = now();
  for (unsigned t = 0; t < T; t++) {
    size_t m = n >> t, nb = H * ((m + b - 1) / b);
    for (size_t k = 0; k < nb; k++) {
      if (f32) {
        cblas_ssyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)b, (int)d, 1.0f, Af, (int)d,
                    0.0f, Gf, (int)b);
        cblas_ssyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)b, (int)dv, 1.0f, Af, (int)dv,
                    0.0f, Gf, (int)b);
      } else {
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)b, (int)d, 1.0, A, (int)d, 0.0,
                    G, (int)b);
        cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)b, (int)dv, 1.0, A, (int)dv,
                    0.0, G, (int)b);
      }
    }
  }
  double dt = now() - t0;
  free(A), free(G), free(Af), free(Gf);
  return dt;
}

int main(void) {
  openblas_set_num_threads(1); /* one core, for both the baseline and the method */
  const size_t H = 8, n = 16384, d = 128, dv = 128;
  gsl_rng *r = gsl_rng_alloc(kvb_rng_pcg32);
  gsl_rng_set(r, 7);
  double *K = malloc(H * n * d * sizeof *K), *V = malloc(H * n * dv * sizeof *V);
  float *Kf = malloc(H * n * d * sizeof *Kf), *Vf = malloc(H * n * dv * sizeof *Vf);
  for (size_t i = 0; i < H * n * d; i++) K[i] = gsl_rng_uniform(r) * 2.6 - 1.3; /* ‖k‖ ≈ 8.5 */
  for (size_t i = 0; i < H * n * dv; i++) V[i] = (gsl_rng_uniform(r) - 0.5) * 1.0;
  for (size_t i = 0; i < H * n * d; i++) Kf[i] = (float)K[i];
  for (size_t i = 0; i < H * n * dv; i++) Vf[i] = (float)V[i];
  double *u[3];
  for (int t = 0; t < 3; t++) {
    u[t] = malloc(H * (n >> t) * sizeof(double));
    for (size_t i = 0; i < H * (n >> t); i++) u[t][i] = gsl_rng_uniform(r);
  }
  size_t *idx = malloc(9 * H * n * sizeof *idx), *idx32 = malloc(H * n * sizeof *idx32);
  double *w32 = malloc(H * n * sizeof *w32);
  double *w = malloc(H * n * sizeof *w);
  double rate64 = dgemm_rate(), rate32 = sgemm_rate();
  double ex = exp_cost();
  printf("DGEMM (1 thread): %.2f GFLOP/s; SGEMM: %.2f GFLOP/s; exp(): %.2f ns\n", rate64 / 1e9,
         rate32 / 1e9, ex * 1e9);
  printf("%4s %4s %2s %9s %10s %9s %8s %10s %9s %9s %9s %8s\n", "prec", "b", "T", "seconds",
         "tokens/s", "blas_s", "fraction", "blas+exp_s", "fraction2", "syrk_s", "fraction3",
         "clipped");
  static const size_t bs[] = {64, 128, 256};
  size_t agree = 0, total = 0;
  for (int f32 = 0; f32 < 2; f32++)
  for (int bi = 0; bi < 3; bi++)
    for (unsigned T = 1; T <= 3; T++) {
      kvb_bkvb_opts o;
      kvb_bkvb_opts_default(&o);
      o.b = bs[bi], o.T = T;
      double best = INFINITY;
      kvb_bkvb_stats st = {0};
      for (int rep = 0; rep < 2; rep++) {
        double t0 = now();
        int rc = f32 ? kvb_bkvb_compress_f32(H, n, d, dv, Kf, Vf, &o, (const double *const *)u,
                                             NULL, idx32, w32, rep ? NULL : &st)
                     : kvb_bkvb_compress(H, n, d, dv, K, V, &o, (const double *const *)u, NULL,
                                         idx + (size_t)(bi * 3 + (int)T - 1) * H * n, w, rep ? NULL : &st);
        double dt = now() - t0;
        if (rc) {
          printf("compress failed: %s\n", kvb_strerror_last());
          return 1;
        }
        best = fmin(best, dt);
      }
      double flops = 0;
      for (unsigned t = 0; t < T; t++) {
        size_t m = n >> t, nb = (m + bs[bi] - 1) / bs[bi];
        flops += (double)H * (double)nb * (double)bs[bi] * (double)bs[bi] * (double)(d + dv);
      }
      if (f32) { /* kept sets of the float path vs the double path, same uniforms */
        size_t kept = H * (n >> T);
        for (size_t k = 0; k < kept; k++) agree += idx32[k] == idx[(size_t)(bi * 3 + (int)T - 1) * H * n + k];
        total += kept;
      }
      double rate = f32 ? rate32 : rate64;
      double bound = flops / rate, bound2 = bound + (double)st.exps * ex;
      double sy = syrk_time(H, n, bs[bi], T, d, dv, f32);
      printf("%4s %4zu %2u %9.4f %10.0f %9.5f %8.4f %10.5f %9.4f %9.5f %9.4f %8.4f\n",
             f32 ? "f32" : "f64", bs[bi], T, best, (double)(H * n) / best, bound, bound / best, bound2, bound2 / best, sy, sy / best,
             (double)(st.clipped0 + st.clipped1) / (double)st.steps);
    }
  printf("(tokens/s counts the H·n input tokens) float32 vs float64 kept positions agree: "
         "%.4f of %zu\n", (double)agree / (double)total, total);
  for (int t = 0; t < 3; t++) free(u[t]);
  free(K), free(V), free(Kf), free(Vf), free(idx), free(w), free(idx32), free(w32);
  gsl_rng_free(r);
  return 0;
}

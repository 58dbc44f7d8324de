/* gpucheck.h — what the files of kvb-gpucheck (the device kernels' check tool) share: the case
 * types of each kernel's grid, the tables one file defines and another lists or runs, and the
 * functions one file calls in another. One file per job:
 *   main.c        the command line (--help, options) and the dispatch to the modes below
 *   devices.c     `devices`: platforms and devices of every backend
 *   grid.c        the kernel × shape grids (small, --full, --grid tiny) and `list`
 *   test.c        `test`: every case of the grid on one device, the bad-input checks, then the mutants
 *   mutants.c     the mutant kernels (-D defines), the race mutants (Oclgrind's), the mutant loop
 *   attn.c        decode attention and uniform sampling against the double reference (the
 *                 running-error derivation of the decode tolerance is at its top)
 *   bkvb.c        block BalanceKV's compression (the walk step by step) and its Gram-tile kernels
 *   wquery.c      the weighted estimators (block BalanceKV's query; SubGen's query reuses its bound)
 *   subgen.c      SubGen's batched update and query against src/subgen/subgen.c fed the same coins
 *   resident.c    device-resident state against the host-mirrored calls, bytes moved counted
 *   tiny.c        one-launch cases of the reshaped kernels (Oclgrind's cases)
 *   perf.c        `perf`: measured kernel times beside the model
 *   perf_model.c  the roofline model's rows (roofline.h) at the shapes of a long-context model
 *
 * The tolerances are running-error bounds (Higham, Accuracy and Stability of Numerical Algorithms,
 * §3.3): the float32 error of the kernel's own evaluation order, bounded from the actual values of the
 * case (computed in double on the device's exact inputs), not from the worst case of the shape.
 * Model: every float32 +, −, × (fused or not) rounds with relative error <= u = 2^-24 of its result
 * (an unfused product adds u of the product); exp and log within 3 ulp (OpenCL 1.2 §7.4; CUDA's
 * expf/logf 2 ulp) <= 6u relative; division within 2.5 ulp (OpenCL; CUDA's '/' is correctly
 * rounded) <= 5u; the host's double scale/log-weights rounded to float: u. First order in u (the
 * bounds are multiplied by 1.01 for the O(u²) terms at these sizes: n·u < 1e-3).
 * The derivations for each kernel are at the head of its file (attn.c, bkvb.c, wquery.c, subgen.c). */
#ifndef KVB_GPUCHECK_H
#define KVB_GPUCHECK_H
#include "gpu.h"
#include "method.h"
#include "pcg32.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

extern const kvb_method_type kvb_method_subgen; /* src/subgen/subgen.c (registered by name in the app) */

static const double U = 5.9604644775390625e-8; /* 2^-24 */
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --kernel SUBSTR: whether a kernel (or group) name is selected (every one without a filter) */
static inline int matches(const char *filter, const char *kernel) { return !filter || strstr(kernel, filter); }

/* Exit statuses of `test` and `perf` (src/gpu/README.md, GPU kernels; --help): */
enum { EXIT_PASS = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_NO_DEVICE = 3, EXIT_NO_CASE = 4 };

/* ---- the case types (attn.c, bkvb.c, wquery.c, subgen.c, resident.c) ---- */
typedef struct {
  size_t H, n, dk, dv, nq, chunk;
  int half, unit_scale, big; /* binary16 K/V; scale 1 (else 1/√dk); large scores */
} attn_case;

typedef struct {
  size_t H, n, f, w, dk, dv, nq, chunk;
  unsigned T;
} us_case;

typedef struct {
  attn_case c;
  float *Q, *Kf, *Vf; /* float32 inputs (the binary16 case: their rounded values) */
  uint16_t *Kh, *Vh;
} attn_data;

typedef struct {
  double nmse, tol;
  int nonfinite;
} verdict;

/* block BalanceKV (bkvb.c) */
typedef struct {
  size_t H, n, d, dv, b;
  unsigned T;
  size_t tie; /* > 0: round 0's uniform at this position of head 0 is set to the device's own p there
                 (from a first run), so the device's sign is −1 while the exact p may lie above u: a
                 forced near tie, which must be excused individually */
} bk_case;

/* one term of a weighted estimator (wquery.c; SubGen's query and perf.c use it too) */
typedef struct {
  const float *k, *v; /* v NULL: a denominator-only term */
  double a, b, om;    /* log-weights (−INFINITY: absent) and ω */
  long di;            /* position in the kernel's denominator order (-1: not in it) */
} wterm;

typedef struct {
  size_t H, n, dk, dv, kk, nq;
  unsigned T;
  int consistent, big; /* "consistent" denominator (else 2^T); large scores (scale 1, entries up to 4) */
} wq_case;

/* SubGen (subgen.c) */
typedef struct {
  size_t H, n, dk, dv, t, s, m, batch;
  double delta, R, r;
  int zero_v;
  int tie; /* 1: token 24 of head 0 joins the one cluster as its 25th member and its coin for sample
              0 is pinned to float(1/25) < 1/25 (and that sample's later coins to 0.999): the CPU
              replaces the sample, the device (p = 1.0f/25 = the coin) does not — a forced near
              tie, which must be excused individually */
} sg_case;

/* device-resident KV cache (resident.c) */
typedef struct {
  size_t Hkv, H, dk, dv, chunk, nq;
  int half;
  size_t appends[3];
} rkv_case;

/* the grid of `test` (grid.c): each kernel's case list */
typedef struct {
  const attn_case *attn;
  const us_case *us;
  const bk_case *bk;
  const wq_case *wq;
  const sg_case *sg;
  size_t nattn, nus, nbk, nwq, nsg;
} grid;
#define N_OF(a) (sizeof a / sizeof *a)

/* The tables that one file defines and another runs or lists; their lengths are stated here so that
 * `sizeof T / sizeof *T` counts them in every file (a definition of another length does not compile). */
extern const attn_case ATTN_SMALL[6];
extern const us_case US_SMALL[2];
extern const bk_case BK_SMALL[4];
extern const bk_case GRAM_CASES[7];
extern const wq_case WQ_SMALL[4], WQ_FULL[4];
extern const sg_case SG_SMALL[6], SG_FULL[3];
extern const rkv_case RKV[3];
extern const attn_case ATTN_TINY[2];
extern const char *TINY_GROUP[4];
extern const size_t TINY_NCASE[4];

/* attn.c */
void fill(kvb_pcg32 *r, float *x, size_t n, double amp);
void attn_data_free(attn_data *a);
int attn_data_make(const attn_case *c, uint64_t seed, attn_data *a);
double dot_err(const float *q, const float *x, size_t d, double *dot);
const char *margin(double nmse, double tol);
verdict compare_attn(const attn_case *c, const float *Q, const float *K, const float *V, const double *w,
                     const float *Z, double *ref_s);
void attn_name(const attn_case *c, char *buf, size_t cap);
int run_attn(kvb_gpu *g, const attn_case *c, int quiet, char *why, size_t whycap);
int run_usample(kvb_gpu *g, const us_case *c, int quiet);
/* bkvb.c */
int run_bkvb(kvb_gpu *g, const bk_case *c, int quiet, char *why, size_t whycap);
size_t run_gram_all(kvb_gpu *g, int quiet, size_t *ncase, char *first, size_t firstcap);
/* wquery.c */
void ref_wterms(size_t nt, const wterm *T, size_t dk, size_t dv, const float *q, double scale, double *z, double *B,
                double *work);
void acc_row(const float *zg, const double *z, const double *B, size_t dv, double *num, double *den, double *bnd,
             int *nonfinite);
void wq_name(const wq_case *c, char *buf, size_t cap);
int run_wquery(kvb_gpu *g, const wq_case *c, int quiet, char *why, size_t whycap);
/* subgen.c */
void sg_name(const sg_case *c, char *buf, size_t cap);
int run_subgen(kvb_gpu *g, const sg_case *c, int quiet, char *why, size_t whycap);
int run_subgen_tie(kvb_gpu *g, int quiet, char *why, size_t whycap);
/* resident.c */
size_t run_resident_all(kvb_gpu *g, int quiet, size_t *ncase, char *first, size_t firstcap);
/* tiny.c */
int run_tiny(kvb_gpu *g, kvb_gpu_backend be, int dev, size_t gi, int ci, char *why, size_t whycap);
/* grid.c */
attn_case *attn_grid(int full, size_t *count);
grid grid_of(int tiny);
int do_list(int full);
/* mutants.c: the mutant loop of `test` (the number of failures) and the mutant lines of `list` */
int run_mutants(kvb_gpu_backend be, int dev, const char *filter, grid G, attn_case *ag, size_t na);
void list_mutants(void);
/* test.c; --case N and --no-mutants (main.c sets them) */
extern long only_case;
extern int no_mutants;
int do_test(kvb_gpu_backend be, int dev, int full, int tiny, const char *filter, const char *mutant);
/* perf_model.c, perf.c */
void print_models(const char *filter, int after);
int do_perf(kvb_gpu_backend be, int dev, const char *filter);
/* devices.c */
int do_devices(void);

#endif

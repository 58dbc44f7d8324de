/* balancekv_block.c — the block-parallel practical variant of BalanceKV (003 §4, App. B; 004 §4;
 * as the authors' code runs it: github.com/ksheth96/BalanceKV, src/balanced_walk.py,
 * balanced_walk), core compression and the method "balancekv_block" (see balancekv_block.h). */
#include "balancekv_block.h"
#include "attention.h"
#include "block_gram.h"
#include "simd.h"
#include "vexpf.h"
#include "kvb_error.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


void kvb_bkvb_opts_default(kvb_bkvb_opts *o) {
  o->b = 256;
  o->T = 1;
  o->gamma = 4.0;
  o->c0 = 0.025;
  o->tau = 1.0;
  o->beta = 0.0;
  o->mutant = 0;
  o->threads = 0; /* all cores; the result does not depend on it */
}

size_t kvb_bkvb_kept(size_t n, unsigned T) { return T >= 64 ? 0 : n >> T; }

/* ---- halving over the whole head (003 App. B; balanced_walk.py: c = max(c_neg, c_pos), ×2 before c) ---- */
int kvb_bkvb_flags_for(const char *name) {
  if (!name) return 0;
  if (strcmp(name, "no_center") == 0) return KVB_BKVB_MUT_NO_CENTER;
  if (strcmp(name, "keep_wrong_side") == 0) return KVB_BKVB_MUT_KEEP_WRONG_SIDE;
  if (strcmp(name, "weight_not_doubled") == 0) return KVB_BKVB_MUT_WEIGHT_NOT_DOUBLED;
  if (strcmp(name, "sign_flip") == 0) return KVB_BKVB_MUT_SIGN_FLIP;
  if (strcmp(name, "random_signs") == 0) return KVB_BKVB_MUT_RANDOM_SIGNS;
  return 0;
}

size_t kvb_bkvb_halve(size_t m, const int8_t *s, int mutant, size_t *keep, double *mult) {
  if (m < 2 || !s || !keep || !mult) return 0;
  for (size_t p = 0; p < m; p++)
    if (s[p] != 1 && s[p] != -1) return 0;
  size_t h = m / 2;
  /* first position where each sign's running count equals h; 0 if it never does */
  size_t cp = 0, cm = 0, np = 0, nm = 0;
  int fp = 0, fm = 0;
  for (size_t p = 0; p < m; p++) {
    if (s[p] > 0) {
      if (++np == h && !fp) cp = p, fp = 1;
    } else {
      if (++nm == h && !fm) cm = p, fm = 1;
    }
  }
  size_t c = cp > cm ? cp : cm; /* "c = the larger of the two" */
  int sc = s[c];
  size_t k = 0;
  double two = (mutant & KVB_BKVB_MUT_WEIGHT_NOT_DOUBLED) ? 1.0 : 2.0;
  /* weight-2 group first, in position order: positions <= c whose sign differs from s[c] */
  for (size_t p = 0; p <= c && k < h; p++) {
    int pick = (mutant & KVB_BKVB_MUT_KEEP_WRONG_SIDE) ? (s[p] == sc) : (s[p] != sc);
    if (pick) keep[k] = p, mult[k] = two, k++;
  }
  /* then the weight-1 group: positions after c */
  for (size_t p = c + 1; p < m && k < h; p++) keep[k] = p, mult[k] = 1.0, k++;
  /* The rule always yields >= h candidates for m >= 2 (one sign reaches h; see the header);
   * k < h would mean a broken invariant, reported as 0. */
  return k == h ? h : 0;
}

/* Finiteness by the exponent bits: x is Inf or NaN iff its exponent field is all ones, iff
 * adding one unit of the exponent to the masked field carries into the sign bit. Only and, add
 * and or: the loop runs on SSE2 vectors (a vector compare would be split into scalars there). */
typedef uint64_t bkvb_u64x2 __attribute__((vector_size(16)));
typedef uint32_t bkvb_u32x4 __attribute__((vector_size(16)));
static int finite_f64(const double *x, size_t n) {
  const uint64_t e = 0x7ff0000000000000ull, one = 0x0010000000000000ull;
  bkvb_u64x2 vb = {0, 0};
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    bkvb_u64x2 v;
    memcpy(&v, x + i, sizeof v);
    vb |= (v & e) + one;
  }
  uint64_t bad = vb[0] | vb[1];
  for (; i < n; i++) {
    uint64_t v;
    memcpy(&v, x + i, sizeof v);
    bad |= (v & e) + one;
  }
  return (bad >> 63) == 0;
}
static int finite_f32(const float *x, size_t n) {
  const uint32_t e = 0x7f800000u, one = 0x00800000u;
  bkvb_u32x4 vb = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    bkvb_u32x4 v;
    memcpy(&v, x + i, sizeof v);
    vb |= (v & e) + one;
  }
  uint32_t bad = vb[0] | vb[1] | vb[2] | vb[3];
  for (; i < n; i++) {
    uint32_t v;
    memcpy(&v, x + i, sizeof v);
    bad |= (v & e) + one;
  }
  return (bad >> 31) == 0;
}

/* Per-phase clock: one reading per phase per block (not per element). */
static double bkvb_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The exponentials of one kernel row, in place, by the C library (the reference). */
static void exprow_f64(double *g, size_t j) {
  for (size_t i = 0; i < j; i++) g[i] = exp(g[i]);
}
static void exprow_f32_libm(float *g, size_t j) {
  for (size_t i = 0; i < j; i++) g[i] = expf(g[i]);
}

/* The float path's exponentials: the C library's expf, or the vector expf of src/core/vexpf.h,
 * which returns the library's bits (self-tested before first use; the walk's signs must not
 * change with the instruction set). */

/* The fused row where a vector expf is in use (lvl from kvb_vexpf_level); 0 = not handled (the
 * core's three loops). */
static int krow_fast_f64(double *g, const double *gv, double ks, double beta, double c0,
                         size_t n, int lvl) {
  (void)g, (void)gv, (void)ks, (void)beta, (void)c0, (void)n, (void)lvl;
  return 0;
}
static int krow_fast_f32(float *g, const float *gv, float ks, float beta, float c0, size_t n,
                         int lvl) {
  if (!lvl) return 0;
  kvb_vexpf_krow(g, gv, ks, beta, c0, n, lvl);
  return 1;
}

static void exprow_f32(float *g, size_t j) {
  int lvl = kvb_vexpf_level();
  if (lvl) kvb_vexpf_inplace(g, j, lvl);
  else exprow_f32_libm(g, j);
}

static int check_opts(const kvb_bkvb_opts *o, size_t n) {
  if (o->b == 0) return KVB_ERROR(KVB_EINVAL, "balancekv_block: block length b = 0");
  if (o->T >= 63 || (n >> o->T) == 0)
    return KVB_ERROR(KVB_EINVAL,
                     "balancekv_block: T = %u rounds need at least 2^T tokens, the middle has %zu",
                     o->T, n);
  if (!isfinite(o->c0) || o->c0 < 0)
    return KVB_ERROR(KVB_EINVAL, "balancekv_block: c0 = %g must be finite and >= 0", o->c0);
  if (!isfinite(o->gamma) || !isfinite(o->tau) || !isfinite(o->beta))
    return KVB_ERROR(KVB_EINVAL, "balancekv_block: gamma, tau, beta must be finite");
  return KVB_OK;
}

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* no fused multiply-adds: the results are specified per operation */
#endif

/* The double reference, then the float32 path: same steps in single precision (expf); u
 * compared in double. The core derives its helpers' names from the suffix S. */
#define REAL double
#define S f64
#include "balancekv_block_core.h"

#define REAL float
#define S f32
#include "balancekv_block_core.h"

int kvb_bkvb_compress(size_t H, size_t n, size_t d, size_t dv, const double *K, const double *V,
                      const kvb_bkvb_opts *o, const double *const *u, gsl_rng *rng, size_t *idx,
                      double *w, kvb_bkvb_stats *st) {
  return kvb_bkvb_compress_f64(H, n, d, dv, K, V, o, u, rng, idx, w, st);
}

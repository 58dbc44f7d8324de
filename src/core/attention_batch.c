#ifndef ATTB_KERNEL_PASS
/* attention_batch.c — one-pass exact decode attention over heads × queries (attention_batch.h).
 *
 * Structure: items (head h, query block qb, token chunk c) run on kvb_parallel_for; an item reads
 * its chunk of K_h and V_h tile by tile (KVB_ATTB_TILE tokens) and, for each query of its block,
 * folds the tile into that query's running partial (M, den, acc[dv]) held in double:
 *   tile:  s_t = scale·<q, k_t>,  m = max_t s_t,  e_t = exp(s_t − m),  Σ e_t,  Σ e_t v_t
 *   merge: M' = max(M, m), den' = den·e^{M−M'} + Σe·e^{m−M'}, acc' likewise   (every exponent ≤ 0)
 * Then the partials of a (head, query) are merged over the chunks in chunk order, and
 * z = acc/den, lse = M + log den. The chunk boundaries depend on the shape only (chunk_len), so
 * the numbers never depend on the thread count.
 *
 * Inner loops: 16 interleaved lanes for the dot products (16- or 32-byte vectors with the
 * GCC/Clang vector extension; the portable fallback does the same lane arithmetic, so all give
 * identical bits) and a vector axpy for Σ e_t v_t. No fused multiply-add is used (ISO C mode:
 * -ffp-contract=off), so the result does not depend on the instruction set. */
#include "attention_batch.h"
#include "kvb_error.h"
#include "parallel.h"
#include "simd.h"
#include "vexpf.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __clang__
/* no fused multiply-adds: clang contracts a·b + c by default where the target has FMA (the
 * AVX-512 pass), which would make that pass's bits differ from the others */
#pragma STDC FP_CONTRACT OFF
#endif

#define TILE KVB_ATTB_TILE
#define QB KVB_ATTB_QBLOCK
#define LANES 16
/* Items aimed at per call: enough for load balance on many cores while the partials stay small
 * (H·nq·chunks·(dv + 2) doubles). */
#define TARGET_ITEMS 64
#define MIN_CHUNK 1024

#if defined(__GNUC__) || defined(__clang__)
#define ATTB_VEC 1
#if defined(__x86_64__)
#define ATTB_AVX2 1 /* copies of the kernels compiled for AVX2 and AVX-512, chosen at run time */
#endif
#endif

/* Pairwise sum of 16 lanes in a fixed order: a_i = l_i + l_{i+8} (i < 8), b_i = a_i + a_{i+4},
 * c_i = b_i + b_{i+2} (i < 2), then c_0 + c_1 into l[0]. Written out, not as the two nested loops
 * it equals (for w = 8, 4, 2, 1: l_i += l_{i+w}, i < w): GCC -O2 compiled those to a rolled
 * scalar loop through memory, each add waiting on the store before it, which took about a third
 * of the float32 kernel's time with K and V in cache. Same additions in the same order, so the
 * same bits; tests/test_attention_batch.c pins them. */
#define TREE16(T, l)                                                                           \
  do {                                                                                         \
    T a0_ = (l)[0] + (l)[8], a1_ = (l)[1] + (l)[9], a2_ = (l)[2] + (l)[10];                    \
    T a3_ = (l)[3] + (l)[11], a4_ = (l)[4] + (l)[12], a5_ = (l)[5] + (l)[13];                  \
    T a6_ = (l)[6] + (l)[14], a7_ = (l)[7] + (l)[15];                                          \
    T b0_ = a0_ + a4_, b1_ = a1_ + a5_, b2_ = a2_ + a6_, b3_ = a3_ + a7_;                     \
    (l)[0] = (b0_ + b2_) + (b1_ + b3_);                                                        \
  } while (0)

/* Folds a tile (maximum m, sums den_t and acc_t[dv] relative to m) into the running partial
 * st = [M, den, acc[dv]] (all double). */
static void merge_tile_f32(double *st, size_t dv, float m, float den_t, const float *acc_t) {
  double M = st[0], mt = (double)m;
  double *acc = st + 2;
  if (mt > M) {
    double f = isinf(M) ? 0.0 : exp(M - mt); /* the old sums shrink; new maximum */
    st[1] = st[1] * f + (double)den_t;
    for (size_t j = 0; j < dv; j++) acc[j] = acc[j] * f + (double)acc_t[j];
    st[0] = mt;
  } else {
    double g = exp(mt - M);
    st[1] += g * (double)den_t;
    for (size_t j = 0; j < dv; j++) acc[j] += g * (double)acc_t[j];
  }
}

static void merge_tile_f64(double *st, size_t dv, double mt, double den_t, const double *acc_t) {
  double M = st[0];
  double *acc = st + 2;
  if (mt > M) {
    double f = isinf(M) ? 0.0 : exp(M - mt);
    st[1] = st[1] * f + den_t;
    for (size_t j = 0; j < dv; j++) acc[j] = acc[j] * f + acc_t[j];
    st[0] = mt;
  } else {
    double g = exp(mt - M);
    st[1] += g * den_t;
    for (size_t j = 0; j < dv; j++) acc[j] += g * acc_t[j];
  }
}

/* Software prefetch of `bytes` starting at p (every 64-byte line) into L2, for the next tile:
 * on the float32 path the hardware prefetcher alone left one thread at ~1.7× the time per
 * token (measured on the development machine, n = 2^17, best of 6 alternating runs: 167 vs
 * 100 ns/token) because the score and value loops alternate between the K and V streams. On
 * the float64 path an early measurement saw no gain (298 vs 344 ns, within the load's noise).
 * Interleaved runs on the Zen 4 machine (H = 8, n = 16384, d = 128, load average 4–11 on its 2
 * cores, best of 15 each): on two workers the float64 path with the prefetch read 17.96 / 19.14
 * / 18.50 GB/s against 15.51 / 16.35 / 16.79 without, and in three later pairs 11.18 / 12.70 /
 * 11.17 against 10.12 / 11.49 / 8.36 (+10–16%, every pair); on one worker 9.26 / 9.14 against
 * 10.75 / 11.31, but the same code differed as much in a later pair (9.10 vs 11.74), so one
 * worker keeps what it had: the float64 path prefetches when more than one worker runs.
 * Variants of the float32 loop measured on that machine while it was busy, so in CPU time per
 * byte, one worker, as paired medians against a read pass of the same bytes (H = 8, n = 16384,
 * d = 128, 21–41 runs each, spread of one build against itself ±4%): no prefetch −23%; a
 * prefetch of every other line −17% (the adjacent-line hardware prefetcher does not fill in);
 * a distance of 4, 16 or 32 tokens instead of a tile, or locality 0 or 3 instead of 2, within
 * the spread. Four tokens at a time in both loops (q loaded once, four rows' lanes in
 * registers, value rows added four at a time; the same bits) ran 1.44–1.55× as fast with K and
 * V in L2 but 3–6% slower from memory in four paired runs, so the loops read one row at a time:
 * with four rows interleaved the hardware prefetchers lose the single sequential stream per
 * array. With 2 MiB pages (madvise) the read pass and this kernel both move 20–25% more bytes
 * per CPU second than with 4 KiB pages (a page walk per 4 KiB, nested in the virtual machine):
 * the page size, which the caller's allocation decides, moves both alike. Against the read probe
 * (kvb_attention_batch_read_probe: these loads without the arithmetic), idle Zen 4, H = 8,
 * n = 16384, d = 128, 2 threads, separate kvb-bench processes alternating with this code, the
 * kernel's time as a fraction of the probe's run right before it (paired medians, 4–5 pairs):
 * this code 0.83–0.92; two key rows per dot product (q loaded once; the same bits) 0.79–0.85;
 * the value rows added in register blocks of 8 vectors down the tile (the same bits) 0.72–0.81.
 * The probe itself moved 0.83–1.14 of its process's best STREAM copy sample (median 1.04,
 * 26 runs). */
static void prefetch(const void *p, size_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
  const char *c = p;
  for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(c + o, 0, 2) /* into L2 */;
#else
  (void)p, (void)bytes;
#endif
}

typedef struct {
  size_t H, n, nq, d, dv, nqb, nch, clen;
  double scale;
  const float *Kf, *Vf, *Qf;
  const double *Kd, *Vd, *Qd;
  double *part;    /* [h][c][i] partials, (dv + 2) doubles each: M, den, acc */
  double *scratch; /* per worker: TILE + dv doubles (floats on the float32 path) */
  int vexp;        /* float32: the level of the vector expf in use (vexpf.h), 0 = the library */
  int pf64;        /* float64: prefetch the next tile (with more than one worker; see prefetch) */
  uint64_t *sums;  /* the read probe: one sum per item (kvb_attention_batch_read_probe) */
} job;

static double *partial(const job *J, size_t h, size_t c, size_t i) {
  return J->part + ((h * J->nch + c) * J->nq + i) * (J->dv + 2);
}

/* A non-finite score at (h, token t): a NaN/Inf key entry, or finite inputs whose score
 * overflows the working precision. */
static int bad_score(const job *J, int f32, size_t h, size_t t, size_t i) {
  size_t d = J->d;
  int finite = 1;
  for (size_t j = 0; j < d; j++)
    finite &= f32 ? isfinite(J->Kf[(h * J->n + t) * d + j]) : isfinite(J->Kd[(h * J->n + t) * d + j]);
  if (!finite)
    return KVB_ERROR(KVB_EDOM, "attention_batch: key of head %zu token %zu is not finite (NaN or "
                     "Inf)", h, t);
  return KVB_ERROR(KVB_ERANGE, "attention_batch: the score scale·<q,k> of head %zu query %zu token "
                   "%zu overflows %s (finite inputs beyond the fast path's range; "
                   "kvb_attention_exact rescales them)", h, i, t, f32 ? "float32" : "float64");
}

/* A non-finite value sum in chunk [lo, hi) of head h: a NaN/Inf value, or an overflow. */
static int bad_values(const job *J, int f32, size_t h, size_t lo, size_t hi) {
  size_t dv = J->dv;
  for (size_t t = lo; t < hi; t++)
    for (size_t j = 0; j < dv; j++) {
      size_t k = (h * J->n + t) * dv + j;
      if (f32 ? !isfinite(J->Vf[k]) : !isfinite(J->Vd[k]))
        return KVB_ERROR(KVB_EDOM, "attention_batch: value of head %zu token %zu is not finite "
                         "(NaN or Inf)", h, t);
    }
  return KVB_ERROR(KVB_ERANGE, "attention_batch: a weighted value sum of head %zu overflows %s "
                   "(values near the largest finite number; kvb_attention_exact rescales them)",
                   h, f32 ? "float32" : "float64");
}

#define ATTB_CAT2(a, b) a##b
#define ATTB_CAT(a, b) ATTB_CAT2(a, b)
#define K(name) ATTB_CAT(name, SUF)

/* The kernels (dot products, axpy, the items) are compiled three times by including this file
 * into itself: with 16-byte vectors and no target flags (native on every x86-64 and AArch64),
 * and on x86-64 with 32-byte vectors for AVX2 and 64-byte vectors for AVX-512, picked at run
 * time (kvb_simd_level). The per-lane arithmetic is the same in all (16 lanes, same order, no
 * FMA), so all give identical bits (tests/test_attention_batch.c compares them; KVBOUND_SIMD =
 * generic or avx2 caps the choice). */
#define ATTB_KERNEL_PASS 1
#define SUF _v16
#define VW 16
#define ATTR
#include "attention_batch.c"
#undef SUF
#undef VW
#undef ATTR
#ifdef ATTB_AVX2
#define SUF _avx2
#define VW 32
#define ATTR __attribute__((target("avx2")))
#include "attention_batch.c"
#undef SUF
#undef VW
#undef ATTR
#define SUF _avx512
#define VW 64
#define ATTR __attribute__((target("avx512f")))
#include "attention_batch.c"
#undef SUF
#undef VW
#undef ATTR
#endif
#undef ATTB_KERNEL_PASS

/* Chunk c = 0's slot of (h, i) receives the merge over every chunk, in chunk order. */
static int merge_head(size_t h, void *arg, int worker) {
  (void)worker;
  const job *J = arg;
  size_t dv = J->dv;
  for (size_t i = 0; i < J->nq; i++) {
    double *st = partial(J, h, 0, i);
    for (size_t c = 1; c < J->nch; c++) {
      const double *o = partial(J, h, c, i);
      double M = st[0], m = o[0];
      if (m > M) {
        double f = exp(M - m);
        st[1] = st[1] * f + o[1];
        for (size_t j = 0; j < dv; j++) st[2 + j] = st[2 + j] * f + o[2 + j];
        st[0] = m;
      } else {
        double g = exp(m - M);
        st[1] += g * o[1];
        for (size_t j = 0; j < dv; j++) st[2 + j] += g * o[2 + j];
      }
    }
    for (size_t j = 0; j < dv; j++)
      if (!isfinite(st[2 + j]))
        return KVB_ERROR(KVB_ERANGE, "attention_batch: the value sum of head %zu query %zu "
                         "overflows double (values near the largest finite number)", h, i);
  }
  return 0;
}

static size_t chunk_len(size_t H, size_t n, size_t nq) {
  size_t nqb = (nq + QB - 1) / QB, hq = H * nqb;
  size_t want = hq >= TARGET_ITEMS ? 1 : (TARGET_ITEMS + hq - 1) / hq;
  size_t maxc = (n + MIN_CHUNK - 1) / MIN_CHUNK;
  if (want > maxc) want = maxc;
  if (want < 1) want = 1;
  size_t len = (n + want - 1) / want;
  return (len + TILE - 1) / TILE * TILE; /* whole tiles, so tiles never straddle chunks */
}

size_t kvb_attention_batch_chunks(size_t H, size_t n, size_t nq) {
  if (H == 0 || n == 0 || nq == 0) return 0;
  size_t len = chunk_len(H, n, nq);
  return (n + len - 1) / len;
}

static int mul_ok(size_t a, size_t b, size_t *out) {
  if (a && b > SIZE_MAX / a) return 0;
  *out = a * b;
  return 1;
}

/* The items of a shape (head, query block, token chunk) and the workers that run them: shared by
 * run() and the read probe, so the probe reads exactly as the kernel does. Returns the workers. */
static size_t plan(job *J, int threads) {
  J->nqb = (J->nq + QB - 1) / QB;
  J->clen = chunk_len(J->H, J->n, J->nq);
  J->nch = (J->n + J->clen - 1) / J->clen;
  size_t items = J->H * J->nqb * J->nch;
  if (threads <= 0) threads = kvb_threads_default();
  return (size_t)threads < items ? (size_t)threads : items;
}

/* The kernel of the widest vector level the CPU has (kvb_simd_level; KVBOUND_SIMD caps it):
 * PICK(item_f32) is item_f32_v16, _avx2 or _avx512 (only the first where there are no others). */
#ifdef ATTB_AVX2
static kvb_parallel_fn pick(kvb_parallel_fn v16, kvb_parallel_fn avx2, kvb_parallel_fn avx512) {
  int lvl = kvb_simd_level();
  return lvl >= KVB_SIMD_AVX512 ? avx512 : lvl >= KVB_SIMD_AVX2 ? avx2 : v16;
}
#define PICK(k) pick(k##_v16, k##_avx2, k##_avx512)
#else
#define PICK(k) (k##_v16)
#endif

/* Validates, runs the items and the merge; writes Z/lse only when everything succeeded. */
static int run(job *J, int f32, int threads, float *Zf, double *Zd, double *lse) {
  size_t H = J->H, n = J->n, nq = J->nq, d = J->d, dv = J->dv, a, b;
  if (H == 0 || n == 0 || nq == 0 || d == 0 || dv == 0)
    return KVB_ERROR(KVB_EINVAL, "attention_batch: every size must be >= 1 (heads %zu, tokens "
                     "%zu, queries %zu, d %zu, dv %zu)", H, n, nq, d, dv);
  size_t es = f32 ? sizeof(float) : sizeof(double), dm = d > dv ? d : dv;
  if (!mul_ok(H, n, &a) || !mul_ok(a, dm, &a) || !mul_ok(a, es, &a) || !mul_ok(H, nq, &b) ||
      !mul_ok(b, dm + 2, &b) || !mul_ok(b, sizeof(double), &b))
    return KVB_ERROR(KVB_EINVAL, "attention_batch: sizes overflow (heads %zu × tokens %zu × "
                     "dim %zu)", H, n, dm);
  if (!isfinite(J->scale))
    return KVB_ERROR(KVB_EINVAL, "attention_batch: scale must be finite, got %g", J->scale);
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < nq; i++) {
      int finite = 1;
      for (size_t j = 0; j < d; j++) {
        size_t k = (h * nq + i) * d + j;
        finite &= f32 ? isfinite(J->Qf[k]) : isfinite(J->Qd[k]);
      }
      if (!finite)
        return KVB_ERROR(KVB_EDOM, "attention_batch: query %zu of head %zu is not finite (NaN or "
                         "Inf)", i, h);
    }
  size_t workers = plan(J, threads), items = H * J->nqb * J->nch;
  J->part = malloc(H * J->nch * nq * (dv + 2) * sizeof(double));
  J->scratch = malloc(workers * (TILE + dv) * sizeof(double));
  if (!J->part || !J->scratch) {
    free(J->part);
    free(J->scratch);
    return KVB_ERROR(KVB_ENOMEM, "attention_batch: out of memory for %zu partial sums",
                     H * J->nch * nq);
  }
  kvb_parallel_fn fn = f32 ? PICK(item_f32) : PICK(item_f64);
  J->vexp = f32 ? kvb_vexpf_level() : 0;
  J->pf64 = !f32 && workers > 1;
  int st = kvb_parallel_for(items, (int)workers, fn, J);
  if (!st && J->nch > 1) st = kvb_parallel_for(H, (int)workers, merge_head, J);
  if (!st)
    for (size_t h = 0; h < H; h++)
      for (size_t i = 0; i < nq; i++) {
        const double *p = partial(J, h, 0, i);
        double inv = 1.0 / p[1]; /* den >= 1: the tile holding the maximum contributes e^0 */
        for (size_t j = 0; j < dv; j++) {
          double z = p[2 + j] * inv;
          if (f32) Zf[(h * nq + i) * dv + j] = (float)z;
          else Zd[(h * nq + i) * dv + j] = z;
        }
        if (lse) lse[h * nq + i] = p[0] + log(p[1]);
      }
  free(J->part);
  free(J->scratch);
  return st;
}

int kvb_attention_batch_f32(size_t H, size_t n, size_t nq, size_t d, size_t dv, const float *K,
                            const float *V, const float *Q, double scale, int threads, float *Z,
                            double *lse) {
  if (!K || !V || !Q || !Z) return KVB_ERROR(KVB_ENULL, "attention_batch_f32: NULL argument");
  job J;
  memset(&J, 0, sizeof J);
  J.H = H, J.n = n, J.nq = nq, J.d = d, J.dv = dv, J.scale = scale;
  J.Kf = K, J.Vf = V, J.Qf = Q;
  return run(&J, 1, threads, Z, NULL, lse);
}

int kvb_attention_batch_f64(size_t H, size_t n, size_t nq, size_t d, size_t dv, const double *K,
                            const double *V, const double *Q, double scale, int threads,
                            double *Z, double *lse) {
  if (!K || !V || !Q || !Z) return KVB_ERROR(KVB_ENULL, "attention_batch_f64: NULL argument");
  job J;
  memset(&J, 0, sizeof J);
  J.H = H, J.n = n, J.nq = nq, J.d = d, J.dv = dv, J.scale = scale;
  J.Kd = K, J.Vd = V, J.Qd = Q;
  return run(&J, 0, threads, NULL, Z, lse);
}

int kvb_attention_batch_read_probe(int f32, size_t H, size_t n, size_t nq, size_t d, size_t dv,
                                   const void *K, const void *V, int threads, uint64_t *sink) {
  if (!K || !V || !sink) return KVB_ERROR(KVB_ENULL, "attention_batch_read_probe: NULL argument");
  size_t es = f32 ? sizeof(float) : sizeof(double), dm = d > dv ? d : dv, a;
  if (H == 0 || n == 0 || nq == 0 || d == 0 || dv == 0)
    return KVB_ERROR(KVB_EINVAL, "attention_batch_read_probe: every size must be >= 1 (heads %zu, "
                     "tokens %zu, queries %zu, d %zu, dv %zu)", H, n, nq, d, dv);
  if (!mul_ok(H, n, &a) || !mul_ok(a, dm, &a) || !mul_ok(a, es, &a))
    return KVB_ERROR(KVB_EINVAL, "attention_batch_read_probe: sizes overflow (heads %zu × tokens "
                     "%zu × dim %zu)", H, n, dm);
  job J;
  memset(&J, 0, sizeof J);
  J.H = H, J.n = n, J.nq = nq, J.d = d, J.dv = dv;
  if (f32) J.Kf = K, J.Vf = V;
  else J.Kd = K, J.Vd = V;
  size_t workers = plan(&J, threads), items = H * J.nqb * J.nch;
  J.pf64 = !f32 && workers > 1; /* as run(): the float64 path prefetches with > 1 worker */
  J.sums = malloc(items * sizeof *J.sums);
  if (!J.sums)
    return KVB_ERROR(KVB_ENOMEM, "attention_batch_read_probe: out of memory for %zu sums", items);
  int st = kvb_parallel_for(items, (int)workers, PICK(item_read), &J);
  uint64_t s = 0;
  for (size_t i = 0; i < items; i++) s += J.sums[i];
  if (!st) *sink = s;
  free(J.sums);
  return st;
}

#else /* ATTB_KERNEL_PASS */

/* ---- kernel pass (included from above with SUF, VW and ATTR defined) ---- */
#ifdef ATTB_VEC
typedef float K(vf) __attribute__((vector_size(VW)));
typedef double K(vd) __attribute__((vector_size(VW)));
#define VF K(vf)
#define VD K(vd)
#define NF (VW / 4)
#define ND (VW / 8)
#endif

#ifdef ATTB_VEC
#define ATTB_VEC_DOT(T, V, NV, J)                                                               \
  V s[LANES / NV];                                                                             \
  memset(s, 0, sizeof s);                                                                      \
  for (; J + LANES <= d; J += LANES)                                                           \
    for (int v = 0; v < LANES / NV; v++) {                                                     \
      V x, y;                                                                                  \
      memcpy(&x, a + J + NV * v, sizeof x);                                                    \
      memcpy(&y, b + J + NV * v, sizeof y);                                                    \
      s[v] += x * y;                                                                           \
    }                                                                                          \
  memcpy(l, s, sizeof s);
#define ATTB_VEC_AXPY(V, NV, J)                                                                 \
  for (; J + NV <= n; J += NV) {                                                               \
    V u, w;                                                                                    \
    memcpy(&u, y + J, sizeof u);                                                               \
    memcpy(&w, x + J, sizeof w);                                                               \
    u += e * w;                                                                                \
    memcpy(y + J, &u, sizeof u);                                                               \
  }
#else
#define ATTB_VEC_DOT(T, V, NV, J)                                                               \
  for (int i = 0; i < LANES; i++) l[i] = 0;                                                    \
  for (; J + LANES <= d; J += LANES)                                                           \
    for (int i = 0; i < LANES; i++) l[i] += a[J + i] * b[J + i];
#define ATTB_VEC_AXPY(V, NV, J)
#endif

/* Lane i of the 16 accumulates a[j]·b[j] for j ≡ i (mod 16), in increasing j; then the fixed
 * tree. And y += e·x (n entries). Once per type: T, its vector type V with NV lanes. */
#define ATTB_DOT_AXPY(T, V, NV, SFXT)                                                           \
  static inline ATTR T K(dot_##SFXT)(const T *a, const T *b, size_t d) {                       \
    T l[LANES];                                                                                \
    size_t j = 0;                                                                              \
    ATTB_VEC_DOT(T, V, NV, j)                                                                  \
    for (; j < d; j++) l[j % LANES] += a[j] * b[j];                                            \
    TREE16(T, l);                                                                              \
    return l[0];                                                                               \
  }                                                                                            \
  static inline ATTR void K(axpy_##SFXT)(T *restrict y, T e, const T *restrict x, size_t n) {  \
    size_t j = 0;                                                                              \
    ATTB_VEC_AXPY(V, NV, j)                                                                    \
    for (; j < n; j++) y[j] += e * x[j];                                                       \
  }
#ifdef ATTB_VEC
ATTB_DOT_AXPY(float, VF, NF, f32)
ATTB_DOT_AXPY(double, VD, ND, f64)
#else
ATTB_DOT_AXPY(float, float, 1, f32)
ATTB_DOT_AXPY(double, double, 1, f64)
#endif
#undef ATTB_VEC_DOT
#undef ATTB_VEC_AXPY
#undef ATTB_DOT_AXPY

static ATTR int K(item_f32)(size_t it, void *arg, int worker) {
  const job *J = arg;
  size_t c = it % J->nch, r = it / J->nch, qb = r % J->nqb, h = r / J->nqb;
  size_t d = J->d, dv = J->dv, lo = c * J->clen, hi = lo + J->clen;
  if (hi > J->n) hi = J->n;
  size_t i0 = qb * QB, i1 = i0 + QB < J->nq ? i0 + QB : J->nq;
  float *s = (float *)(J->scratch + (size_t)worker * (TILE + dv)), *acc = s + TILE;
  float sc = (float)J->scale;
  for (size_t i = i0; i < i1; i++) {
    double *st = partial(J, h, c, i);
    st[0] = -INFINITY, st[1] = 0;
    memset(st + 2, 0, dv * sizeof *st);
  }
  for (size_t t0 = lo; t0 < hi; t0 += TILE) {
    size_t nt = hi - t0 < TILE ? hi - t0 : TILE;
    const float *Kt = J->Kf + (h * J->n + t0) * d, *Vt = J->Vf + (h * J->n + t0) * dv;
    for (size_t i = i0; i < i1; i++) {
      const float *q = J->Qf + (h * J->nq + i) * d;
      float m = -INFINITY;
      int pf = i == i0 && t0 + TILE < hi; /* the next tile of this chunk, once per tile */
      size_t nxt = hi - t0 - TILE < TILE ? hi - t0 - TILE : TILE;
      for (size_t k = 0; k < nt; k++) {
        if (pf && k < nxt) prefetch(Kt + (TILE + k) * d, d * sizeof *Kt);
        s[k] = sc * K(dot_f32)(Kt + k * d, q, d);
        if (!isfinite(s[k])) return bad_score(J, 1, h, t0 + k, i);
        m = s[k] > m ? s[k] : m;
      }
      float den = 0;
      memset(acc, 0, dv * sizeof *acc);
      for (size_t k = 0; k < nt; k++) s[k] -= m;
      kvb_vexpf_inplace(s, nt, J->vexp); /* e_t = expf(s_t − m), the library's bits */
      for (size_t k = 0; k < nt; k++) {
        float e = s[k];
        den += e;
        if (pf && k < nxt) prefetch(Vt + (TILE + k) * dv, dv * sizeof *Vt);
        K(axpy_f32)(acc, e, Vt + k * dv, dv);
      }
      merge_tile_f32(partial(J, h, c, i), dv, m, den, acc);
    }
  }
  for (size_t i = i0; i < i1; i++) {
    const double *st = partial(J, h, c, i);
    for (size_t j = 0; j < dv; j++)
      if (!isfinite(st[2 + j])) return bad_values(J, 1, h, lo, hi);
  }
  return 0;
}

static ATTR int K(item_f64)(size_t it, void *arg, int worker) {
  const job *J = arg;
  size_t c = it % J->nch, r = it / J->nch, qb = r % J->nqb, h = r / J->nqb;
  size_t d = J->d, dv = J->dv, lo = c * J->clen, hi = lo + J->clen;
  if (hi > J->n) hi = J->n;
  size_t i0 = qb * QB, i1 = i0 + QB < J->nq ? i0 + QB : J->nq;
  double *s = J->scratch + (size_t)worker * (TILE + dv), *acc = s + TILE;
  for (size_t i = i0; i < i1; i++) {
    double *st = partial(J, h, c, i);
    st[0] = -INFINITY, st[1] = 0;
    memset(st + 2, 0, dv * sizeof *st);
  }
  for (size_t t0 = lo; t0 < hi; t0 += TILE) {
    size_t nt = hi - t0 < TILE ? hi - t0 : TILE;
    const double *Kt = J->Kd + (h * J->n + t0) * d, *Vt = J->Vd + (h * J->n + t0) * dv;
    for (size_t i = i0; i < i1; i++) {
      const double *q = J->Qd + (h * J->nq + i) * d;
      double m = -INFINITY;
      int pf = J->pf64 && i == i0 && t0 + TILE < hi; /* the next tile, once per tile */
      size_t nxt = hi - t0 - TILE < TILE ? hi - t0 - TILE : TILE;
      for (size_t k = 0; k < nt; k++) {
        if (pf && k < nxt) prefetch(Kt + (TILE + k) * d, d * sizeof *Kt);
        s[k] = J->scale * K(dot_f64)(Kt + k * d, q, d);
        if (!isfinite(s[k])) return bad_score(J, 0, h, t0 + k, i);
        m = s[k] > m ? s[k] : m;
      }
      double den = 0;
      memset(acc, 0, dv * sizeof *acc);
      for (size_t k = 0; k < nt; k++) {
        double e = exp(s[k] - m);
        den += e;
        if (pf && k < nxt) prefetch(Vt + (TILE + k) * dv, dv * sizeof *Vt);
        K(axpy_f64)(acc, e, Vt + k * dv, dv);
      }
      merge_tile_f64(partial(J, h, c, i), dv, m, den, acc);
    }
  }
  for (size_t i = i0; i < i1; i++) {
    const double *st = partial(J, h, c, i);
    for (size_t j = 0; j < dv; j++)
      if (!isfinite(st[2 + j])) return bad_values(J, 0, h, lo, hi);
  }
  return 0;
}

/* The read probe's item (kvb_attention_batch_read_probe): item_f32's / item_f64's loads of K and
 * V — same chunk, same tiles in the same order, the same prefetch of the next tile — with the
 * arithmetic reduced to one integer vector add per load (integer: no NaN or subnormal operand
 * can slow it), into a sum kept so the loads are not dropped. */
#ifdef ATTB_VEC
typedef unsigned long long K(vu) __attribute__((vector_size(VW)));
#endif
static inline ATTR uint64_t K(row_words)(const char *p, size_t bytes) {
  uint64_t s = 0;
  size_t o = 0;
#ifdef ATTB_VEC
  K(vu) a = {0};
  for (; o + VW <= bytes; o += VW) {
    K(vu) x;
    memcpy(&x, p + o, sizeof x);
    a += x;
  }
  for (size_t i = 0; i < VW / 8; i++) s += a[i];
#endif
  for (; o + 8 <= bytes; o += 8) {
    uint64_t x;
    memcpy(&x, p + o, 8);
    s += x;
  }
  if (o + 4 <= bytes) { /* a float32 row of odd length: its last entry */
    uint32_t x;
    memcpy(&x, p + o, 4);
    s += x;
  }
  return s;
}

static ATTR int K(item_read)(size_t it, void *arg, int worker) {
  (void)worker;
  const job *J = arg;
  int f32 = J->Kf != NULL;
  size_t es = f32 ? sizeof(float) : sizeof(double);
  size_t c = it % J->nch, r = it / J->nch, h = r / J->nqb;
  size_t lo = c * J->clen, hi = lo + J->clen;
  if (hi > J->n) hi = J->n;
  size_t kb = J->d * es, vb = J->dv * es; /* bytes per key row, per value row */
  const char *K0 = f32 ? (const char *)J->Kf : (const char *)J->Kd;
  const char *V0 = f32 ? (const char *)J->Vf : (const char *)J->Vd;
  int pfon = f32 || J->pf64;
  uint64_t s = 0;
  for (size_t t0 = lo; t0 < hi; t0 += TILE) {
    size_t nt = hi - t0 < TILE ? hi - t0 : TILE;
    const char *Kt = K0 + (h * J->n + t0) * kb, *Vt = V0 + (h * J->n + t0) * vb;
    int pf = pfon && t0 + TILE < hi;
    size_t nxt = hi - t0 - TILE < TILE ? hi - t0 - TILE : TILE;
    for (size_t k = 0; k < nt; k++) {
      if (pf && k < nxt) prefetch(Kt + (TILE + k) * kb, kb);
      s += K(row_words)(Kt + k * kb, kb);
    }
    for (size_t k = 0; k < nt; k++) {
      if (pf && k < nxt) prefetch(Vt + (TILE + k) * vb, vb);
      s += K(row_words)(Vt + k * vb, vb);
    }
  }
  J->sums[it] = s;
  return 0;
}

#ifdef ATTB_VEC
#undef VF
#undef VD
#undef NF
#undef ND
#endif
#endif /* ATTB_KERNEL_PASS */

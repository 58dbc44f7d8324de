/* test_model_attention.c — the prefill's causal attention (model_ops.h, kvb_mo_attention)
 * against a double-precision reference, at the CPU's SIMD level (AVX2 + FMA: the tile kernels
 * without sgemm) and the portable one (sgemm), on shapes that reach every edge of the tiling:
 * one token, a partial query block, several query blocks and key tiles (KVB_MO_QB, KVB_MO_KB),
 * row blocks of 6 that straddle positions and end short (grouped heads 3 and 4 per key head),
 * sliding windows shorter than a panel and longer than a key tile, hd 64 and 256 (the two
 * models') and hd 24 (not a multiple of the 16-key panel: the portable path at every level).
 *
 * Tolerance: float arithmetic against double, |err| <= 2e-5 · max|v| per output entry (seen:
 * below 1e-6 here). The check can fail: the same comparison against a reference whose causal
 * limit is one key late (each query also sees the next key) or whose window is one key wider
 * must exceed the tolerance, and does on every shape where the mutant changes anything.
 * Also: the output's bits do not depend on the thread count ($KVBOUND_THREADS 1 vs 2). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_ops.h"
#include "unit.h"

typedef struct {
  size_t n, H, Hk, hd, window;
} shape;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float uni(void) { /* uniform in [−1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* att[p][j·hd + i] in double; late: the query also sees key p + 1; wide: the window is w + 1 */
static void reference(const shape *s, const float *q, const float *k, const float *v, float scale,
                      int late, int wide, double *out) {
  size_t n = s->n, hd = s->hd, grp = s->H / s->Hk, w = s->window ? s->window + (size_t)wide : 0;
  double *sc = malloc((n + 1) * sizeof *sc);
  for (size_t j = 0; j < s->H; j++)
    for (size_t p = 0; p < n; p++) {
      size_t g = j / grp, hi = p + 1 + (size_t)late, lo = w && p + 1 > w ? p + 1 - w : 0;
      if (hi > n) hi = n;
      const float *qp = q + (j * n + p) * hd;
      double mx = -INFINITY, z = 0;
      for (size_t t = lo; t < hi; t++) {
        double d = 0;
        for (size_t i = 0; i < hd; i++) d += (double)qp[i] * k[(g * n + t) * hd + i];
        sc[t] = d * scale, mx = sc[t] > mx ? sc[t] : mx;
      }
      for (size_t t = lo; t < hi; t++) z += sc[t] = exp(sc[t] - mx);
      double *o = out + p * s->H * hd + j * hd;
      for (size_t i = 0; i < hd; i++) o[i] = 0;
      for (size_t t = lo; t < hi; t++)
        for (size_t i = 0; i < hd; i++) o[i] += sc[t] / z * v[(g * n + t) * hd + i];
    }
  free(sc);
}

static double max_err(const float *a, const double *r, size_t cnt) {
  double e = 0;
  for (size_t i = 0; i < cnt; i++) e = fmax(e, fabs((double)a[i] - r[i]));
  return e;
}

int main(void) {
  const shape shapes[] = {
      {1, 9, 3, 64, 0},    {5, 9, 3, 64, 0},     {64, 9, 3, 64, 0},    {67, 9, 3, 64, 0},
      {300, 9, 3, 64, 0},  {300, 9, 3, 64, 5},   {530, 9, 3, 64, 0},   {530, 9, 3, 64, 300},
      {530, 4, 1, 64, 17}, {200, 4, 1, 256, 0},  {200, 4, 1, 256, 70}, {150, 2, 2, 24, 0},
      {150, 6, 2, 24, 40},
  };
  const char *levels[2] = {NULL, "generic"};
  const char *prev_simd = getenv("KVBOUND_SIMD"), *prev_thr = getenv("KVBOUND_THREADS");
  char ps[64] = "", pt[64] = "";
  if (prev_simd) snprintf(ps, sizeof ps, "%s", prev_simd);
  if (prev_thr) snprintf(pt, sizeof pt, "%s", prev_thr);
  double worst[2] = {0, 0};
  int bad[2] = {0, 0}, mut_caught = 0, mut_effective = 0, threads_differ = 0, failed_calls = 0;
  char why[256] = "";
  for (size_t c = 0; c < sizeof shapes / sizeof *shapes; c++) {
    const shape *s = &shapes[c];
    size_t n = s->n, hd = s->hd, nq = s->H * n * hd, nkv = s->Hk * n * hd;
    float *q = malloc(nq * sizeof *q), *k = malloc(nkv * sizeof *k), *v = malloc(nkv * sizeof *v),
          *att = malloc(nq * sizeof *att), *att2 = malloc(nq * sizeof *att2);
    double *ref = malloc(nq * sizeof *ref), *mut = malloc(2 * nq * sizeof *mut);
    for (size_t i = 0; i < nq; i++) q[i] = 2.0f * uni();
    for (size_t i = 0; i < nkv; i++) k[i] = 2.0f * uni(), v[i] = uni();
    float scale = 1.0f / sqrtf((float)hd);
    reference(s, q, k, v, scale, 0, 0, ref);
    const double tol = 2e-5; /* max|v| < 1 */
    int meff[2] = {0, 0};     /* the mutants: causal limit one key late, window one key wider */
    for (int mu = 0; mu < 2; mu++) {
      if (mu == 1 && !s->window) continue;
      reference(s, q, k, v, scale, mu == 0, mu == 1, mut + mu * nq);
      double d = 0; /* does it change the answer at all (one token cannot look ahead)? */
      for (size_t i = 0; i < nq; i++) d = fmax(d, fabs(mut[mu * nq + i] - ref[i]));
      meff[mu] = d > 10 * tol;
    }
    for (int lv = 0; lv < 2; lv++) {
      if (levels[lv]) setenv("KVBOUND_SIMD", levels[lv], 1);
      else unsetenv("KVBOUND_SIMD");
      setenv("KVBOUND_THREADS", "1", 1);
      int st = kvb_mo_attention(q, k, v, n, s->H, s->Hk, hd, scale, s->window, att, s->H * hd);
      setenv("KVBOUND_THREADS", "2", 1);
      st |= kvb_mo_attention(q, k, v, n, s->H, s->Hk, hd, scale, s->window, att2, s->H * hd);
      failed_calls += st != 0;
      threads_differ += memcmp(att, att2, nq * sizeof *att) != 0;
      double e = max_err(att, ref, nq);
      worst[lv] = fmax(worst[lv], e);
      if (e > tol && !bad[lv]++)
        snprintf(why, sizeof why, "n %zu H %zu/%zu hd %zu window %zu at level %s: max err %.3g",
                 n, s->H, s->Hk, hd, s->window, levels[lv] ? levels[lv] : "cpu", e);
      for (int mu = 0; mu < 2; mu++) /* a mutant that changes the answer must be rejected */
        if (meff[mu]) mut_effective++, mut_caught += max_err(att, mut + mu * nq, nq) > tol;
    }
    free(q), free(k), free(v), free(att), free(att2), free(ref), free(mut);
  }
  if (prev_simd) setenv("KVBOUND_SIMD", ps, 1);
  else unsetenv("KVBOUND_SIMD");
  if (prev_thr) setenv("KVBOUND_THREADS", pt, 1);
  else unsetenv("KVBOUND_THREADS");
  printf("  max |err| vs double: %.3g at the CPU's level, %.3g portable (tolerance 2e-5)\n", worst[0],
         worst[1]);
  CHECK(!failed_calls, "model_attention.runs", "%d calls failed", failed_calls);
  CHECK(!bad[0], "model_attention.matches_double_cpu_level", "%s", why);
  CHECK(!bad[1], "model_attention.matches_double_portable", "%s", why);
  CHECK(mut_effective >= 20 && mut_caught == mut_effective, "model_attention.rejects_mutants",
        "%d of %d mutant references (causal limit one key late, window one key wider) rejected",
        mut_caught, mut_effective);
  CHECK(!threads_differ, "model_attention.bits_independent_of_threads",
        "%d runs differ between 1 and 2 threads", threads_differ);
  UNIT_EXIT();
}

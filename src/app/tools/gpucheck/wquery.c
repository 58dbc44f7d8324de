/* wquery.c — kvb-gpucheck: the weighted estimators' running-error reference (block BalanceKV's
 * query, k_bkvb.cl kvb_wquery; SubGen's query uses it too) and the kvb_wquery cases. */
#include "gpucheck.h"
#include "gpu_ops.h"
#include "kvb_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- weighted estimators: block BalanceKV's query and SubGen's (k_bkvb.cl kvb_wquery,
 * k_subgen.cl kvb_subgen_query) ----
 * Both compute z = Σ_i e^{s_i + a_i} v_i / Σ_i e^{s_i + b_i} over terms i (a term with a_i = −∞ is
 * in the denominator only, b_i = −∞ in the numerator only), s_i = RN(scale·⟨q, k_i⟩) (the dot
 * product summed a = 0..dk−1), in float32 with the shift M = max_i (s_i + max(a_i, b_i)) (a common
 * factor: cancels). Running-error bound in the kernels' order (conventions in gpucheck.h):
 *   score     |δs_i| <= |scale|·u·Σ_a(|q_a k_ia| + |S_ia|) + 2u|s_i|;
 *   weights   numerator term: exp(RN(RN(s_i + a_i) − M)): α'_i = u|s_i + a_i| + u|s_i + a_i − M| + 6u
 *             + ω_i + u|a_i| (a_i a float input: exact for kvb_wquery, ω_i = 0; SubGen's kernel
 *             computes its log-weights, with absolute error ω_i given per term); denominator β'_i
 *             the same with b_i;
 *   sums      numerator: every entry in order (chunk after chunk) per output coordinate; denominator:
 *             work-item l sums the terms of denominator position ≡ l (mod KVB_GPU_WG) in order, then a
 *             tree sum over the work-items (off = 32, 16, ..., 1); running bounds of both;
 *   ratio     δz_a = [Σ_i δs_i (n_i v_ia − z_a d_i) + Σ_i n_i α'_i v_ia − z_a Σ_i d_i β'_i + δN_a −
 *             z_a δD] / D (n_i, d_i the exact weights e^{s_i + a_i − M}, e^{s_i + b_i − M}), bounded
 *             term by term; plus 5u|z_a| for the division.
 * NMSE tolerance Σ_a B_a² / Σ_a z_a², as for decode attention (attn.c). */

void ref_wterms(size_t nt, const wterm *T, size_t dk, size_t dv, const float *q, double scale,
                       double *z, double *B, double *work) {
  double *s = work, *ds = work + nt, M = -INFINITY, D = 0;
  for (size_t i = 0; i < nt; i++) {
    double dot, e = dot_err(q, T[i].k, dk, &dot);
    s[i] = scale * dot;
    ds[i] = fabs(scale) * e + 2 * U * fabs(s[i]);
    M = fmax(M, s[i] + fmax(T[i].a, T[i].b));
  }
  for (size_t a = 0; a < dv; a++) z[a] = 0, B[a] = 0;
  /* the denominator and its running error: per work-item partials in position order, then the tree */
  enum { WG = KVB_GPU_WG };
  double part[WG] = {0}, runD = 0;
  long last[WG];
  for (size_t l = 0; l < WG; l++) last[l] = -1;
  /* terms are visited in array order; a work-item's positions increase with it in both kernels */
  double bD = 0; /* Σ d_i β'_i */
  for (size_t i = 0; i < nt; i++) {
    if (T[i].b == -INFINITY || T[i].di < 0) continue;
    double d = exp(s[i] + T[i].b - M);
    size_t l = (size_t)(T[i].di % WG);
    part[l] += d;
    if (last[l] >= 0) runD += part[l];
    last[l] = T[i].di;
    D += d;
    double sb = s[i] + T[i].b;
    bD += d * (U * fabs(sb) + U * fabs(sb - M) + 6 * U + T[i].om + U * fabs(T[i].b));
  }
  for (size_t off = WG / 2; off > 0; off >>= 1)
    for (size_t l = 0; l < off; l++) part[l] += part[l + off], runD += part[l];
  double dD = U * runD;
  for (size_t i = 0; i < nt; i++) {
    if (T[i].a == -INFINITY || !T[i].v) continue;
    double p = exp(s[i] + T[i].a - M);
    for (size_t a = 0; a < dv; a++) z[a] += p * T[i].v[a];
  }
  for (size_t a = 0; a < dv; a++) z[a] /= D;
  for (size_t a = 0; a < dv; a++) {
    double e1 = 0, e2 = 0, N = 0, run = 0;
    for (size_t i = 0; i < nt; i++) {
      double n = T[i].a > -INFINITY && T[i].v ? exp(s[i] + T[i].a - M) : 0;
      double d = T[i].b > -INFINITY && T[i].di >= 0 ? exp(s[i] + T[i].b - M) : 0;
      double v = n ? T[i].v[a] : 0;
      e1 += ds[i] * fabs(n * v - z[a] * d);
      if (n) {
        double sa = s[i] + T[i].a;
        e2 += n * fabs(v) * (U * fabs(sa) + U * fabs(sa - M) + 6 * U + T[i].om + U * fabs(T[i].a));
        N += n * v;
        run += fabs(n * v) + fabs(N);
      }
    }
    B[a] = 1.01 * ((e1 + e2 + fabs(z[a]) * bD + U * run + fabs(z[a]) * dD) / D + 5 * U * fabs(z[a]));
  }
}

/* Accumulates one output row into the NMSE sums. */
void acc_row(const float *zg, const double *z, const double *B, size_t dv, double *num, double *den,
                    double *bnd, int *nonfinite) {
  for (size_t a = 0; a < dv; a++) {
    if (!isfinite(zg[a])) (*nonfinite)++;
    *num += (zg[a] - z[a]) * (zg[a] - z[a]), *den += z[a] * z[a], *bnd += B[a] * B[a];
  }
}

const wq_case WQ_SMALL[] = {
    {2, 600, 64, 64, 300, 2, 2, 0, 0},  /* 300 entries: two chunks of 256, the second partial */
    {1, 5, 128, 32, 1, 1, 1, 1, 0},     /* one entry, d_key != d_value */
    {16, 64, 32, 48, 40, 1, 1, 0, 0},   /* many heads */
    {2, 400, 128, 128, 200, 2, 3, 1, 1}, /* large scores: |s| in the hundreds, e^s beyond float */
};

/* --full (make check-gpu): larger shapes, d = 256, many heads */
const wq_case WQ_FULL[] = {
    {8, 4096, 128, 128, 2048, 4, 1, 0, 0},
    {4, 1000, 256, 256, 777, 2, 4, 1, 0},
    {64, 300, 64, 64, 257, 1, 2, 0, 0},
    {4, 2000, 256, 64, 1000, 2, 2, 0, 1},
};

void wq_name(const wq_case *c, char *buf, size_t cap) {
  snprintf(buf, cap, "bkvb_query(H=%zu,n=%zu,kept=%zu,dk=%zu,dv=%zu,nq=%zu,T=%u,%s%s)", c->H, c->n, c->kk, c->dk,
           c->dv, c->nq, c->T, c->consistent ? "consistent" : "paper", c->big ? ",large-scores" : "");
}

/* Entries: the first kk/4 positions with weight 1 (the exact first/recent tokens), the rest a
 * random subset with weights 2^r, r in [0, T] (the kept middle tokens after T rounds). */
int run_wquery(kvb_gpu *g, const wq_case *c, int quiet, char *why, size_t whycap) {
  char name[200];
  wq_name(c, name, sizeof name);
  size_t H = c->H, n = c->n, kk = c->kk, dk = c->dk, dv = c->dv, nq = c->nq;
  float *Q = malloc(nq * H * dk * 4), *K = malloc(H * n * dk * 4), *V = malloc(H * n * dv * 4);
  float *ln = malloc(H * kk * 4), *ld = malloc(H * kk * 4), *Z = malloc(nq * H * dv * 4);
  int *idx = malloc(H * kk * sizeof *idx);
  char *taken = malloc(n);
  wterm *T = malloc(kk * sizeof *T);
  double *z = malloc(dv * 8), *B = malloc(dv * 8), *work = malloc(2 * kk * 8);
  int ok = -1;
  if (!Q || !K || !V || !ln || !ld || !Z || !idx || !taken || !T || !z || !B || !work) {
    snprintf(why, whycap, "%s: out of host memory", name);
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 400 + n + kk, 9);
  double amp = c->big ? 4.0 : 1.0, scale = c->big ? 1.0 : 1.0 / sqrt((double)dk);
  fill(&r, Q, nq * H * dk, amp), fill(&r, K, H * n * dk, amp), fill(&r, V, H * n * dv, 1.0);
  for (size_t h = 0; h < H; h++) {
    memset(taken, 0, n);
    for (size_t j = 0; j < kk; j++) {
      size_t x;
      do x = kvb_pcg32_bounded(&r, (uint32_t)n); while (taken[x]);
      taken[x] = 1;
      idx[h * kk + j] = (int)x;
      unsigned e = j < kk / 4 ? 0 : kvb_pcg32_bounded(&r, c->T + 1);
      ln[h * kk + j] = (float)(e * log(2.0));
      ld[h * kk + j] = j < kk / 4 || c->consistent ? ln[h * kk + j] : (float)(c->T * log(2.0));
    }
  }
  if (kvb_gpu_wquery(g, H, n, dk, dv, kk, idx, ln, ld, nq, scale, Q, K, V, Z, NULL)) {
    snprintf(why, whycap, "%s: device error: %s", name, kvb_strerror_last());
    goto out;
  }
  double num = 0, den = 0, bnd = 0;
  int nonfinite = 0;
  for (size_t qi = 0; qi < nq; qi++)
    for (size_t h = 0; h < H; h++) {
      for (size_t j = 0; j < kk; j++) {
        size_t row = h * n + (size_t)idx[h * kk + j];
        wterm w = {K + row * dk, V + row * dv, ln[h * kk + j], ld[h * kk + j], 0, (long)j};
        T[j] = w;
      }
      ref_wterms(kk, T, dk, dv, Q + (qi * H + h) * dk, scale, z, B, work);
      acc_row(Z + (qi * H + h) * dv, z, B, dv, &num, &den, &bnd, &nonfinite);
    }
  double nmse = num / den, tol = bnd / den;
  ok = nonfinite == 0 && nmse <= tol;
  if (nonfinite) snprintf(why, whycap, "%s: FAIL (%d non-finite outputs)", name, nonfinite);
  else snprintf(why, whycap, "%s: %s (nmse %.3g %s running-error tolerance %.3g, margin %s)", name, ok ? "OK" : "FAIL", nmse,
                ok ? "<=" : ">", tol, margin(nmse, tol));
out:
  if (!quiet) printf("%s %s\n", ok == 1 ? "PASS" : "FAIL", why);
  free(Q), free(K), free(V), free(ln), free(ld), free(Z), free(idx), free(taken), free(T), free(z), free(B), free(work);
  return ok;
}

/* attn.c — kvb-gpucheck: decode attention (k_attention.cl) and uniform sampling (k_usample.cl)
 * against the double-precision CPU reference (conventions in gpucheck.h).
 *
 * Decode attention, kernel order (k_attention.cl): score s_t = RN(scale·Σ_a q_a k_ta), the dot
 * product summed a = 0..dk−1, so |δs_t| <= |scale|·u·Σ_a (|q_a k_ta| + |S_ta|) + 2u|s_t| (S_ta the
 * partial sums; the scale's rounding and the product) [+ u(|s_t| + |ln w_t|) with log-weights];
 * p_t = exp(RN(s_t − m_s)) with m_s the split's computed max (a common factor of the split, and
 * f_s = exp(RN(m_s − M)) of the combine: both cancel in the ratio up to their rounding), so the
 * weight w_t = e^{s_t − M} carries a relative error ε_t <= |δs_t| + u|s_t − m_s| + 6u + u|m_s − M| + 6u;
 * L_s = Σ p_t and O_sa = Σ p_t v_ta summed t in order (running bound u·Σ(|term| + |partial|)), the
 * combine's L = Σ_s f_s L_s and N_a = Σ_s f_s O_sa in order s, z_a = N_a / L. To first order
 *   |ẑ_a − z_a| <= B_a = [Σ_t w_t ε_t |v_ta − z_a| + δN_a + |z_a|·δL] / L + 5u|z_a|
 * (weight errors move z towards v_t; the summation errors δ of numerator and denominator).
 * The metric is NMSE = Σ(ẑ − z)²/Σ z² over the case, the tolerance Σ B_a²/Σ z², and the margin
 * printed is tolerance / NMSE. A change of the kernels' order (a cooperative dot product, tree sums)
 * needs the matching order here: ref_attn_bound and ref_wterms follow the kernels line by line. */
#include "gpucheck.h"
#include "gpu_ops.h"
#include "attention.h"
#include "kvb_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const attn_case ATTN_SMALL[] = {
    {2, 300, 64, 64, 2, 128, 0, 0, 0},   /* n not a multiple of the split */
    {1, 1, 128, 128, 1, 64, 0, 1, 0},    /* one token */
    {3, 257, 128, 64, 1, 64, 1, 0, 0},   /* d_key != d_value, float16, one token in the last split */
    {16, 64, 256, 256, 1, 32, 0, 0, 0},  /* many heads, d = 256 */
    {2, 200, 128, 128, 2, 64, 1, 1, 1},  /* float16 with large scores (|s| in the hundreds) */
    {1, 256, 64, 32, 1, 256, 0, 1, 0},   /* n a multiple of the split, one split */
};
const us_case US_SMALL[] = {{2, 500, 16, 16, 64, 64, 2, 64, 2}, {4, 97, 4, 8, 128, 32, 1, 32, 1}};

/* ---- inputs ---- */
void fill(kvb_pcg32 *r, float *x, size_t n, double amp) {
  for (size_t i = 0; i < n; i++) x[i] = (float)(amp * (2 * kvb_pcg32_uniform(r) - 1));
}


void attn_data_free(attn_data *a) { free(a->Q), free(a->Kf), free(a->Vf), free(a->Kh), free(a->Vh); }

int attn_data_make(const attn_case *c, uint64_t seed, attn_data *a) {
  memset(a, 0, sizeof *a);
  a->c = *c;
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, seed, 11);
  size_t nk = c->H * c->n * c->dk, nv = c->H * c->n * c->dv;
  a->Q = malloc(c->nq * c->H * c->dk * 4), a->Kf = malloc(nk * 4), a->Vf = malloc(nv * 4);
  a->Kh = malloc(nk * 2), a->Vh = malloc(nv * 2);
  if (!a->Q || !a->Kf || !a->Vf || !a->Kh || !a->Vh) return -1;
  /* large scores: |q|,|k| entries up to 4 at d = 128 (scale 1) put scores in the hundreds */
  double amp = c->big ? 4.0 : 1.0;
  fill(&r, a->Q, c->nq * c->H * c->dk, amp);
  fill(&r, a->Kf, nk, amp);
  fill(&r, a->Vf, nv, 1.0);
  for (size_t i = 0; i < nk; i++) a->Kh[i] = kvb_f32_to_f16(a->Kf[i]), a->Kf[i] = c->half ? kvb_f16_to_f32(a->Kh[i]) : a->Kf[i];
  for (size_t i = 0; i < nv; i++) a->Vh[i] = kvb_f32_to_f16(a->Vf[i]), a->Vf[i] = c->half ? kvb_f16_to_f32(a->Vh[i]) : a->Vf[i];
  return 0;
}

/* Running error of a float32 dot product Σ_a q_a x_a summed a = 0..d−1 (fused or not): u·Σ(|q_a x_a| +
 * |partial sum|); *dot receives the exact value. */
double dot_err(const float *q, const float *x, size_t d, double *dot) {
  double S = 0, e = 0;
  for (size_t a = 0; a < d; a++) {
    double pr = (double)q[a] * x[a];
    S += pr;
    e += fabs(pr) + fabs(S);
  }
  *dot = S;
  return U * e;
}

/* Double reference for one (query, head) row over n tokens (K: n×dk, V: n×dv, log-weights lw or
 * NULL) with the running-error bound B (dv) of kvb_attn_split + kvb_attn_combine at this chunk (the
 * analysis at the top of the file). z: the reference output (dv). work: 3n doubles. */
static void ref_one(size_t n, size_t dk, size_t dv, const float *q, const float *K, const float *V,
                    const double *w, double scale, size_t chunk, double *z, double *B, double *work) {
  double *s = work, *ds = work + n, *wt = work + 2 * n, M = -INFINITY, D = 0;
  for (size_t t = 0; t < n; t++) {
    double dot, e = dot_err(q, K + t * dk, dk, &dot), lw = w ? log(w[t]) : 0;
    s[t] = scale * dot + lw;
    ds[t] = fabs(scale) * e + 2 * U * fabs(scale * dot) + (w ? U * (fabs(s[t]) + fabs(lw)) : 0);
    M = fmax(M, s[t]);
  }
  for (size_t t = 0; t < n; t++) wt[t] = exp(s[t] - M), D += wt[t];
  for (size_t a = 0; a < dv; a++) {
    z[a] = 0;
    for (size_t t = 0; t < n; t++) z[a] += wt[t] * V[t * dv + a];
    z[a] /= D;
  }
  /* weights' relative errors (per split: its max m_s) and the weighted distance to z */
  double dL = 0, LP = 0, runLc = 0;
  for (size_t a = 0; a < dv; a++) B[a] = 0;
  for (size_t st = 0; st < n; st += chunk) {
    size_t en = st + chunk < n ? st + chunk : n;
    double ms = -INFINITY, Ls = 0, runL = 0;
    for (size_t t = st; t < en; t++) ms = fmax(ms, s[t]);
    for (size_t t = st; t < en; t++) {
      double eps = ds[t] + U * fabs(s[t] - ms) + 6 * U + U * fabs(ms - M) + 6 * U;
      for (size_t a = 0; a < dv; a++) B[a] += wt[t] * eps * fabs(V[t * dv + a] - z[a]);
      Ls += wt[t];
      if (t > st) runL += Ls;
    }
    dL += U * runL;
    LP += Ls, runLc += fabs(Ls) + (st ? LP : 0); /* the combine's sum over splits */
  }
  dL += U * runLc;
  for (size_t a = 0; a < dv; a++) {
    double dN = 0, NP = 0, runNc = 0;
    for (size_t st = 0; st < n; st += chunk) {
      size_t en = st + chunk < n ? st + chunk : n;
      double O = 0, run = 0;
      for (size_t t = st; t < en; t++) {
        double pv = wt[t] * V[t * dv + a];
        O += pv;
        run += fabs(pv) + (t > st ? fabs(O) : 0);
      }
      dN += U * run;
      NP += O, runNc += fabs(O) + (st ? fabs(NP) : 0);
    }
    dN += U * runNc;
    B[a] = 1.01 * ((B[a] + dN + fabs(z[a]) * dL) / D + 5 * U * fabs(z[a]));
  }
}

/* tolerance / measured as text ("exact" when the measured error is 0); a static buffer per call site
 * is enough: each result line formats one. */
const char *margin(double nmse, double tol) {
  static char buf[4][32];
  static int k;
  char *b = buf[k++ & 3];
  if (nmse > 0) snprintf(b, 32, "%.3gx", tol / nmse);
  else snprintf(b, 32, "exact");
  return b;
}


/* Compares Z (nq×H×dv) with the reference; weights per head row or NULL. */
verdict compare_attn(const attn_case *c, const float *Q, const float *K, const float *V,
                            const double *w, const float *Z, double *ref_s) {
  verdict v = {0, 0, 0};
  double scale = c->unit_scale ? 1.0 : 1.0 / sqrt((double)c->dk), num = 0, den = 0, bnd = 0;
  double *z = malloc(c->dv * sizeof *z), *B = malloc(c->dv * sizeof *B), *work = malloc(3 * c->n * sizeof *work);
  double *qd = malloc(c->dk * sizeof *qd), *Kd = NULL, *Vd = NULL;
  double t0 = now_s();
  if (!w) { /* the project's exact attention is the reference; ref_one gives the bound */
    Kd = malloc(c->n * c->dk * sizeof *Kd), Vd = malloc(c->n * c->dv * sizeof *Vd);
  }
  for (size_t h = 0; h < c->H; h++) {
    const float *Kh = K + h * c->n * c->dk, *Vh = V + h * c->n * c->dv;
    if (Kd) {
      for (size_t i = 0; i < c->n * c->dk; i++) Kd[i] = Kh[i];
      for (size_t i = 0; i < c->n * c->dv; i++) Vd[i] = Vh[i];
    }
    for (size_t qi = 0; qi < c->nq; qi++) {
      const float *q = Q + (qi * c->H + h) * c->dk;
      ref_one(c->n, c->dk, c->dv, q, Kh, Vh, w ? w + h * c->n : NULL, scale, c->chunk, z, B, work);
      if (Kd) {
        for (size_t a = 0; a < c->dk; a++) qd[a] = q[a];
        kvb_attention_exact(c->n, c->dk, c->dv, Kd, Vd, qd, scale, z, NULL);
      }
      const float *zg = Z + (qi * c->H + h) * c->dv;
      for (size_t a = 0; a < c->dv; a++) {
        if (!isfinite(zg[a])) v.nonfinite++;
        num += (zg[a] - z[a]) * (zg[a] - z[a]), den += z[a] * z[a], bnd += B[a] * B[a];
      }
    }
  }
  if (ref_s) *ref_s = now_s() - t0;
  v.nmse = den > 0 ? num / den : num;
  v.tol = den > 0 ? bnd / den : bnd;
  free(z), free(B), free(work), free(qd), free(Kd), free(Vd);
  return v;
}

void attn_name(const attn_case *c, char *buf, size_t cap) {
  snprintf(buf, cap, "attn_decode(H=%zu,n=%zu,dk=%zu,dv=%zu,nq=%zu,split=%zu,%s,scale=%s%s)", c->H, c->n,
           c->dk, c->dv, c->nq, c->chunk, c->half ? "f16" : "f32", c->unit_scale ? "1" : "1/sqrt(d)",
           c->big ? ",large-scores" : "");
}

/* Runs one attention case; returns 1 OK, 0 FAIL, -1 error (printed). quiet: no line. */
int run_attn(kvb_gpu *g, const attn_case *c, int quiet, char *why, size_t whycap) {
  attn_data a;
  char name[200];
  attn_name(c, name, sizeof name);
  if (attn_data_make(c, 1000 + c->n * 7 + c->dk, &a)) {
    attn_data_free(&a);
    printf("FAIL %s: out of host memory\n", name);
    return -1;
  }
  float *Z = malloc(c->nq * c->H * c->dv * 4);
  double scale = c->unit_scale ? 1.0 : 1.0 / sqrt((double)c->dk);
  int rc = Z ? kvb_gpu_attention(g, c->H, c->n, c->dk, c->dv, c->nq, scale, c->half, a.Q,
                                 c->half ? (const void *)a.Kh : a.Kf, c->half ? (const void *)a.Vh : a.Vf,
                                 NULL, c->chunk, Z, NULL)
             : KVB_ENOMEM;
  int ok;
  if (rc) {
    snprintf(why, whycap, "%s: device error: %s", name, kvb_strerror_last());
    if (!quiet) printf("FAIL %s\n", why);
    ok = -1;
  } else {
    verdict v = compare_attn(c, a.Q, a.Kf, a.Vf, NULL, Z, NULL);
    ok = v.nonfinite == 0 && v.nmse <= v.tol;
    if (v.nonfinite)
      snprintf(why, whycap, "%s: FAIL (%d non-finite outputs)", name, v.nonfinite);
    else
      snprintf(why, whycap, "%s: %s (nmse %.3g %s running-error tolerance %.3g, margin %s)", name, ok ? "OK" : "FAIL",
               v.nmse, ok ? "<=" : ">", v.tol, margin(v.nmse, v.tol));
    if (!quiet) printf("%s %s\n", ok ? "PASS" : "FAIL", why);
  }
  free(Z);
  attn_data_free(&a);
  return ok;
}

/* Uniform sampling: positions (first f, a uniform k-subset of the middle by Floyd's algorithm,
 * last w), the gather checked for exact equality, the query by the attention bound with the
 * middle weighted m/k (uniform_sample.h). */
int run_usample(kvb_gpu *g, const us_case *c, int quiet) {
  size_t m = c->n - c->f - c->w, k = m >> c->T, kk = c->f + c->w + k;
  char name[200];
  snprintf(name, sizeof name, "usample(H=%zu,n=%zu,f=%zu,w=%zu,T=%u,dk=%zu,dv=%zu,nq=%zu)", c->H, c->n, c->f, c->w,
           c->T, c->dk, c->dv, c->nq);
  attn_case ac = {c->H, c->n, c->dk, c->dv, c->nq, c->chunk, 0, 0, 0};
  attn_data a;
  int *pos = malloc(c->H * kk * sizeof *pos);
  float *Kc = malloc(c->H * kk * c->dk * 4), *Vc = malloc(c->H * kk * c->dv * 4), *Z = malloc(c->nq * c->H * c->dv * 4);
  char *taken = malloc(c->n);
  double *wts = malloc(c->H * kk * sizeof *wts);
  int ok = 1;
  if (attn_data_make(&ac, 77 + c->n, &a) || !pos || !Kc || !Vc || !Z || !taken || !wts) {
    printf("FAIL %s: out of host memory\n", name);
    ok = -1;
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 5 + c->n, 3);
  for (size_t h = 0; h < c->H; h++) {
    int *p = pos + h * kk;
    size_t j = 0;
    for (size_t i = 0; i < c->f; i++) p[j++] = (int)i;
    for (size_t i = c->n - c->w; i < c->n; i++) p[j++] = (int)i;
    memset(taken, 0, c->n);
    for (size_t t = m - k; t < m; t++) { /* Floyd: a uniform k-subset of [0, m) */
      size_t x = kvb_pcg32_bounded(&r, (uint32_t)(t + 1));
      if (taken[x]) x = t;
      taken[x] = 1;
    }
    for (size_t i = 0; i < m; i++)
      if (taken[i]) p[j++] = (int)(c->f + i);
    for (size_t i = 0; i < kk; i++) wts[h * kk + i] = i < c->f + c->w ? 1.0 : (double)m / (double)k;
  }
  int rc = kvb_gpu_usample_compress(g, c->H, c->n, c->dk, c->dv, a.Kf, a.Vf, kk, pos, Kc, Vc, NULL);
  if (rc) {
    printf("FAIL %s compress: device error: %s\n", name, kvb_strerror_last());
    ok = -1;
    goto out;
  }
  size_t diff = 0;
  for (size_t h = 0; h < c->H; h++)
    for (size_t j = 0; j < kk; j++) {
      size_t src = h * c->n + (size_t)pos[h * kk + j], dst = h * kk + j;
      diff += memcmp(Kc + dst * c->dk, a.Kf + src * c->dk, c->dk * 4) != 0;
      diff += memcmp(Vc + dst * c->dv, a.Vf + src * c->dv, c->dv * 4) != 0;
    }
  if (!quiet) printf("%s usample_compress%s: %s (%zu of %zu gathered rows differ, exact equality required)\n",
                     diff ? "FAIL" : "PASS", name + 7, diff ? "FAIL" : "OK", diff, 2 * c->H * kk);
  if (diff) ok = 0;
  rc = kvb_gpu_usample_query(g, c->H, kk, c->f + c->w, (double)m / (double)k, c->dk, c->dv, c->nq,
                             1.0 / sqrt((double)c->dk), a.Q, Kc, Vc, c->chunk, Z, NULL);
  if (rc) {
    printf("FAIL %s query: device error: %s\n", name, kvb_strerror_last());
    ok = -1;
    goto out;
  }
  attn_case qc = {c->H, kk, c->dk, c->dv, c->nq, c->chunk, 0, 0, 0};
  verdict v = compare_attn(&qc, a.Q, Kc, Vc, wts, Z, NULL);
  int qok = v.nonfinite == 0 && v.nmse <= v.tol;
  if (!quiet) printf("%s usample_query%s: %s (nmse %.3g %s running-error tolerance %.3g, margin %s%s)\n", qok ? "PASS" : "FAIL",
                     name + 7, qok ? "OK" : "FAIL", v.nmse, qok ? "<=" : ">", v.tol, margin(v.nmse, v.tol),
                     v.nonfinite ? ", non-finite output" : "");
  if (!qok) ok = 0;
out:
  attn_data_free(&a);
  free(pos), free(Kc), free(Vc), free(Z), free(taken), free(wts);
  return ok;
}

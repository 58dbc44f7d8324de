/* bkvb.c — kvb-gpucheck: block BalanceKV's compression (k_bkvb.cl) against kvb_bkvb_compress, the
 * walk checked step by step, and the Gram-tile kernels (k_bkvb_gram.cl) against k_bkvb.cl. */
#include "gpucheck.h"
#include "gpu_ops.h"
#include "balancekv_block.h"
#include "kvb_error.h"
#include "gpu_resident.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- block BalanceKV: kept indices and weights must equal kvb_bkvb_compress's exactly ---- */
const bk_case BK_SMALL[] = {
    {2, 300, 64, 64, 64, 2, 0},  /* n not a multiple of b: a 44-token tail block, then 150 = 2·64 + 22 */
    {4, 130, 128, 32, 32, 1, 0}, /* d_key != d_value, a 2-token tail block */
    {1, 2, 64, 64, 64, 1, 0},    /* the smallest input: one block of 2 */
    {1, 128, 32, 32, 64, 1, 1}, /* a forced near tie (u = the device's p at a step from position 1 on) */
};
/* The walk checked step by step against a double re-computation that follows the device's own
 * signs (so one legitimate flip does not make every later step incomparable):
 *   for every round r, head h, block and step j >= 1, p_j = ½ − γ Σ_{i<j} K_ij ŝ_i in double from the
 *   device's current sequence and its signs ŝ_i (read back through P: ŝ = +1 iff u < p̂, the kernel's
 *   rule), and the device's p̂_j must lie within thr_j of it, thr_j the running-error bound of the
 *   kernel's float32 evaluation of p_j (walk_step_bound); a sign with ŝ_j != [u_j < p_j] is a near
 *   tie, excused individually (then |u_j − p_j| <= |p̂_j − p_j| <= thr_j), counted and printed;
 *   the halving of the device's signs (kvb_bkvb_halve) gives the next round's sequence, and after T
 *   rounds the device's kept indices and weights must equal that chain exactly; with no near tie they
 *   must also equal kvb_bkvb_compress's (the CPU's own run) exactly.
 * walk_step_bound (k_bkvb.cl's order; conventions in gpucheck.h): the block mean
 * mean_a = RN(Σ_i K_ia / len) (sum in order i: running error, then a division 5u); x_ia = RN(K_ia −
 * mean_a) (δx <= δmean + u|x|); kd = Σ_a x_ia x_ja in order a; vd = Σ_a (w_i v_ia)(w_j v_ja) (w
 * powers of two: exact products); E = exp(RN(RN(ks·kd) − β)) with ks, β, c0, γ rounded to float by
 * the host; term = RN(RN(E·RN(vd + c0))·s_i); acc = Σ_{i<j} term in order i; p = RN(½ − RN(γ·acc)). */
typedef struct {
  size_t round, head, pos;
  double u, p, phat, thr;
} bk_tie;

/* K rows of one block (len rows of head h's current sequence), centered; x: len×d. */
static void bk_center(const float *K, size_t n, size_t d, size_t h, const size_t *cur, size_t len, double *x,
                      double *dmean) {
  for (size_t a = 0; a < d; a++) {
    double S = 0, run = 0;
    for (size_t i = 0; i < len; i++) {
      S += K[(h * n + cur[i]) * d + a];
      if (i) run += fabs(S);
    }
    double mean = S / (double)len;
    dmean[a] = (U * run) / (double)len + 5 * U * fabs(mean);
    for (size_t i = 0; i < len; i++) x[i * d + a] = K[(h * n + cur[i]) * d + a] - mean;
  }
}

int run_bkvb(kvb_gpu *g, const bk_case *c, int quiet, char *why, size_t whycap) {
  char name[200];
  snprintf(name, sizeof name, "bkvb_compress(H=%zu,n=%zu,d=%zu,dv=%zu,b=%zu,T=%u)", c->H, c->n, c->d, c->dv, c->b, c->T);
  size_t H = c->H, n = c->n, d = c->d, dv = c->dv, b = c->b;
  size_t kept = n >> c->T, utot = 0, nk = H * n * d, nv = H * n * dv;
  for (unsigned r = 0; r < c->T; r++) utot += H * (n >> r);
  float *K = malloc(nk * 4), *V = malloc(nv * 4), *P = malloc(utot * 4);
  double *Kd = malloc(nk * 8), *Vd = malloc(nv * 8), *ub = malloc(utot * 8), *w1 = malloc(H * kept * 8), *w2 = malloc(H * kept * 8);
  size_t *i1 = malloc(H * kept * sizeof *i1), *i2 = malloc(H * kept * sizeof *i2);
  size_t *cur = malloc(H * n * sizeof *cur), *keep = malloc(n * sizeof *keep);
  double *cw = malloc(H * n * 8), *mult = malloc(n * 8), *x = malloc(b * d * 8), *dmean = malloc(d * 8);
  double *acc = malloc(b * 8), *dacc = malloc(b * 8), *runacc = malloc(b * 8);
  int8_t *sg = malloc(n);
  const double *u[32];
  bk_tie ties[8];
  size_t nties = 0, beyond = 0, steps = 0;
  double worst = 0, thr_min = INFINITY, thr_max = 0; /* worst |p̂ − p| / thr */
  char beyond_txt[200] = "";
  int ok = -1;
  if (!K || !V || !P || !Kd || !Vd || !ub || !w1 || !w2 || !i1 || !i2 || !cur || !keep || !cw || !mult || !x || !dmean ||
      !acc || !dacc || !runacc || !sg) {
    snprintf(why, whycap, "%s: out of host memory", name);
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 31 + n, 5);
  fill(&r, K, nk, 1.0);
  fill(&r, V, nv, 1.0);
  for (size_t i = 0; i < nk; i++) Kd[i] = K[i];
  for (size_t i = 0; i < nv; i++) Vd[i] = V[i];
  /* uniforms that are floats already, so the device's float copy is the same number */
  for (size_t i = 0; i < utot; i++) ub[i] = (double)(float)kvb_pcg32_uniform(&r), ub[i] = ub[i] < 1 ? ub[i] : 0.5;
  for (unsigned q = 0, o = 0; q < c->T; o += (unsigned)(H * (n >> q)), q++) u[q] = ub + o;
  kvb_bkvb_opts o;
  kvb_bkvb_opts_default(&o);
  o.b = b, o.T = c->T;
  if (c->tie > 0 && c->tie < n) { /* pin u to the device's own p at that step */
    if (kvb_gpu_bkvb_compress(g, H, n, d, dv, K, V, b, c->T, o.gamma, o.c0, o.tau, o.beta, u, i2, w2, P, NULL)) {
      snprintf(why, whycap, "%s: device error: %s", name, kvb_strerror_last());
      goto out;
    }
    size_t at = c->tie; /* the first step from c->tie on whose p lies in (0, 1): u must stay in [0, 1) */
    while (at < n && (at % b == 0 || !(P[at] > 0 && P[at] < 1))) at++;
    if (at < n) ub[at] = P[at];
  }
  if (kvb_bkvb_compress(H, n, d, dv, Kd, Vd, &o, u, NULL, i1, w1, NULL)) {
    snprintf(why, whycap, "%s: CPU reference error: %s", name, kvb_strerror_last());
    goto out;
  }
  if (kvb_gpu_bkvb_compress(g, H, n, d, dv, K, V, b, c->T, o.gamma, o.c0, o.tau, o.beta, u, i2, w2, P, NULL)) {
    snprintf(why, whycap, "%s: device error: %s", name, kvb_strerror_last());
    goto out;
  }
  /* the host chain from the device's signs */
  const double ks = o.tau / sqrt((double)d), gmm = o.gamma, beta = o.beta, c0 = o.c0;
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < n; i++) cur[h * n + i] = i, cw[h * n + i] = 1;
  size_t m = n, poff = 0, nonfinite = 0;
  for (unsigned rd = 0; rd < c->T; poff += H * m, m /= 2, rd++) {
    for (size_t h = 0; h < H; h++) {
      const float *Ph = P + poff + h * m;
      const double *uh = u[rd] + h * m;
      for (size_t i = 0; i < m; i++) sg[i] = uh[i] < Ph[i] ? 1 : -1;
      for (size_t st = 0; st < m; st += b) {
        size_t len = m - st < b ? m - st : b;
        const size_t *cu = cur + h * n + st;
        const double *w = cw + h * n + st;
        sg[st] = 1; /* s_0 = +1 (P = ½ by convention) */
        bk_center(K, n, d, h, cu, len, x, dmean);
        for (size_t i = 0; i < len; i++) acc[i] = 0, dacc[i] = 0, runacc[i] = 0;
        for (size_t j = 0; j + 1 < len; j++) { /* push row j with the device's sign s_j */
          const double *xj = x + j * d;
          const float *vj = V + (h * n + cu[j]) * dv;
          for (size_t i = j + 1; i < len; i++) {
            const double *xi = x + i * d;
            const float *vi = V + (h * n + cu[i]) * dv;
            double kd = 0, dkd = 0, vd = 0, dvd = 0;
            for (size_t a = 0; a < d; a++) {
              double pr = xi[a] * xj[a], dxi = dmean[a] + U * fabs(xi[a]), dxj = dmean[a] + U * fabs(xj[a]);
              kd += pr;
              dkd += dxi * fabs(xj[a]) + fabs(xi[a]) * dxj + U * (fabs(pr) + fabs(kd));
            }
            for (size_t a = 0; a < dv; a++) {
              double pr = (w[i] * vi[a]) * (w[j] * vj[a]);
              vd += pr;
              dvd += U * (fabs(pr) + fabs(vd));
            }
            double arg = ks * kd - beta, E = exp(arg), F = vd + c0, term = E * F * sg[st + j];
            double darg = fabs(ks) * dkd + 2 * U * fabs(ks * kd) + U * fabs(arg) + U * fabs(beta);
            double dF = dvd + U * c0 + U * fabs(F);
            double dterm = fabs(E * F) * (darg + 6 * U) + E * dF + U * fabs(E * F);
            acc[i] += term;
            dacc[i] += dterm + (j ? U * fabs(acc[i]) : 0);
          }
          /* step j + 1 */
          size_t jj = j + 1;
          double pj = 0.5 - gmm * acc[jj];
          double thr = 1.01 * (fabs(gmm) * dacc[jj] + 2 * U * fabs(gmm * acc[jj]) + U * fabs(pj));
          double ph = Ph[st + jj], uj = uh[st + jj];
          steps++;
          thr_min = fmin(thr_min, thr), thr_max = fmax(thr_max, thr);
          if (!isfinite(ph)) nonfinite++;
          double dev = fabs(ph - pj);
          if (thr > 0) worst = fmax(worst, dev / thr);
          if (!(dev <= thr)) {
            if (!beyond++)
              snprintf(beyond_txt, sizeof beyond_txt, "round %u head %zu position %zu: p %.9g, device %.9g, |diff| %.3g > bound %.3g",
                       rd, h, st + jj, pj, ph, dev, thr);
          }
          int s_exact = uj < pj ? 1 : -1;
          if (s_exact != sg[st + jj]) { /* a flip: a near tie, excused individually */
            if (nties < sizeof ties / sizeof *ties) {
              bk_tie t = {rd, h, st + jj, uj, pj, ph, thr};
              ties[nties] = t;
            }
            nties++;
          }
        }
      }
      /* the halving of the device's signs: the next round's sequence */
      size_t hm = kvb_bkvb_halve(m, sg, 0, keep, mult);
      size_t *nc = malloc(hm * sizeof *nc);
      double *nw = malloc(hm * 8);
      if (!nc || !nw || hm != m / 2) {
        free(nc), free(nw);
        snprintf(why, whycap, "%s: halving failed on the host", name);
        goto out;
      }
      for (size_t k = 0; k < hm; k++) nc[k] = cur[h * n + keep[k]], nw[k] = cw[h * n + keep[k]] * mult[k];
      for (size_t k = 0; k < hm; k++) cur[h * n + k] = nc[k], cw[h * n + k] = nw[k];
      free(nc), free(nw);
    }
  }
  size_t chain_diff = 0, cpu_diff = 0;
  for (size_t h = 0; h < H; h++)
    for (size_t k = 0; k < kept; k++) {
      chain_diff += i2[h * kept + k] != cur[h * n + k] || w2[h * kept + k] != cw[h * n + k];
      cpu_diff += i1[h * kept + k] != i2[h * kept + k] || w1[h * kept + k] != w2[h * kept + k];
    }
  for (size_t t = 0; !quiet && t < nties && t < sizeof ties / sizeof *ties; t++)
    printf("  near tie %zu of %zu: round %zu head %zu position %zu: u = %.9g, p = %.9g (double), device p = %.9g, "
           "|u - p| = %.3g <= bound %.3g: the device's sign differs from the exact one, excused\n",
           t + 1, nties, ties[t].round, ties[t].head, ties[t].pos, ties[t].u, ties[t].p, ties[t].phat,
           fabs(ties[t].u - ties[t].p), ties[t].thr);
  ok = beyond == 0 && nonfinite == 0 && chain_diff == 0 && (nties > 0 || cpu_diff == 0);
  if (ok)
    snprintf(why, whycap, "%s: OK (%zu steps: every device p within its float32 running-error bound of the double p on the "
             "device's own signs (bounds %.2g..%.2g, worst |dp|/bound %.2g); %zu near ties excused individually; kept "
             "indices/weights equal the chain of the device's signs exactly, and %zu of %zu differ from the CPU's run)",
             name, steps, thr_min, thr_max, worst, nties, cpu_diff, H * kept);
  else
    snprintf(why, whycap, "%s: FAIL (%zu of %zu steps beyond their bound%s%s; %zu non-finite p; %zu kept entries differ from the "
             "device-sign chain, %zu from the CPU's run with %zu near ties)", name, beyond, steps, beyond ? ", first: " : "",
             beyond_txt, nonfinite, chain_diff, cpu_diff, nties);
out:
  if (!quiet) printf("%s %s\n", ok == 1 ? "PASS" : "FAIL", why);
  free(K), free(V), free(P), free(Kd), free(Vd), free(ub), free(w1), free(w2), free(i1), free(i2);
  free(cur), free(keep), free(cw), free(mult), free(x), free(dmean), free(acc), free(dacc), free(runacc), free(sg);
  return ok;
}


/* ---- bkvb_gram: k_bkvb_gram.cl (Gram tiles, parallel halving) against k_bkvb.cl ----
 * The same round on the same device through both kernel pairs: every walk probability P, every
 * kept index and weight bit-identical (the reshaped kernel performs the same float operations in
 * the same order; k_bkvb_gram.cl says how). The old pair's own comparison with the CPU reference
 * (bkvb_compress above) therefore carries over. */
const bk_case GRAM_CASES[] = {
    {2, 300, 64, 64, 64, 2},   /* tail blocks (as BK_SMALL) */
    {4, 130, 128, 32, 32, 1},  /* d_key != d_value */
    {1, 2, 64, 64, 64, 1},     /* the smallest input */
    {2, 600, 128, 128, 256, 2}, /* the block length and head dimension */
    {1, 400, 64, 32, 100, 3},  /* b not a multiple of the tiles; 3 rounds */
    {2, 129, 256, 64, 64, 1},  /* d = KVB_DMAX, a 1-token tail block */
    {1, 37, 16, 8, 256, 1},    /* one block shorter than b */
};

static int run_gram(kvb_gpu *g, const bk_case *c, char *why, size_t whycap) {
  char name[160];
  snprintf(name, sizeof name, "bkvb_gram(H=%zu,n=%zu,d=%zu,dv=%zu,b=%zu,T=%u)", c->H, c->n, c->d, c->dv, c->b, c->T);
  size_t H = c->H, n = c->n, kept = n >> c->T, utot = 0;
  for (unsigned r = 0; r < c->T; r++) utot += H * (n >> r);
  float *K = malloc(H * n * c->d * 4), *V = malloc(H * n * c->dv * 4), *P = malloc(utot * 4), *Pr = malloc(utot * 4);
  double *ub = malloc(utot * 8), *w = malloc(H * kept * 8), *wr = malloc(H * kept * 8);
  size_t *ix = malloc(H * kept * sizeof *ix), *ixr = malloc(H * kept * sizeof *ixr);
  const double *u[8];
  kvb_gpu_kvcache kc;
  kvb_gpu_bkvb_dev bk;
  int ok = 0, hc = 0;
  memset(&bk, 0, sizeof bk);
  if (!K || !V || !P || !Pr || !ub || !w || !wr || !ix || !ixr) {
    snprintf(why, whycap, "%s: out of host memory", name);
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 1100 + n + c->d, 9);
  fill(&r, K, H * n * c->d, 1.0), fill(&r, V, H * n * c->dv, 1.0);
  for (size_t i = 0; i < utot; i++) ub[i] = kvb_pcg32_uniform(&r);
  for (unsigned rr = 0, o = 0; rr < c->T; o += (unsigned)(H * (n >> rr)), rr++) u[rr] = ub + o;
  /* γ = 4 (the authors' default), c0 = 0.5, τ = 1, β = 0: walk probabilities spread over (0, 1) */
  if (kvb_gpu_bkvb_compress(g, H, n, c->d, c->dv, K, V, c->b, c->T, 4.0, 0.5, 1.0, 0.0, u, ixr, wr, Pr, NULL)) {
    snprintf(why, whycap, "%s: k_bkvb.cl: %s", name, kvb_strerror_last());
    goto out;
  }
  if (kvb_gpu_kvcache_init(&kc, g, H, c->d, c->dv, 0) || (hc = 1, kvb_gpu_kvcache_append(&kc, n, K, V))) {
    snprintf(why, whycap, "%s: cache: %s", name, kvb_strerror_last());
    goto out;
  }
  kvb_gpu_bkvb_dev_init(&bk, g);
  if (kvb_gpu_bkvb_dev_compress(&bk, &kc, 0, n, c->b, c->T, 4.0, 0.5, 1.0, 0.0, 1, u, ix, w, P, NULL)) {
    snprintf(why, whycap, "%s: k_bkvb_gram.cl: %s", name, kvb_strerror_last());
    goto out;
  }
  for (size_t i = 0; i < utot; i++)
    if (memcmp(&P[i], &Pr[i], 4)) {
      snprintf(why, whycap, "%s: walk probability %zu = %.9g, k_bkvb.cl %.9g (want bit-identical)", name, i, P[i], Pr[i]);
      goto out;
    }
  for (size_t i = 0; i < H * kept; i++)
    if (ix[i] != ixr[i] || w[i] != wr[i]) {
      snprintf(why, whycap, "%s: kept entry %zu: index %zu weight %g, k_bkvb.cl %zu, %g", name, i, ix[i], w[i], ixr[i], wr[i]);
      goto out;
    }
  snprintf(why, whycap, "%s: OK (%zu walk probabilities and %zu kept indices and weights bit-identical to k_bkvb.cl)", name, utot, H * kept);
  ok = 1;
out:
  kvb_gpu_bkvb_dev_free(&bk);
  if (hc) kvb_gpu_kvcache_free(&kc);
  free(K), free(V), free(P), free(Pr), free(ub), free(w), free(wr), free(ix), free(ixr);
  return ok;
}

size_t run_gram_all(kvb_gpu *g, int quiet, size_t *ncase, char *first, size_t firstcap) {
  char why[600];
  size_t bad = 0, nc = sizeof GRAM_CASES / sizeof *GRAM_CASES;
  for (size_t i = 0; i < nc; i++) {
    int ok = run_gram(g, &GRAM_CASES[i], why, sizeof why);
    if (!quiet) printf("%s %s\n", ok ? "PASS" : "FAIL", why);
    if (!ok && !bad++ && first) snprintf(first, firstcap, "%s", why);
  }
  if (ncase) *ncase = nc;
  return bad;
}

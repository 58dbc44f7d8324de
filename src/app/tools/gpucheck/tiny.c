/* tiny.c — kvb-gpucheck: one launch each of the reshaped kernels (k_decode_coop.cl, k_bkvb_gram.cl,
 * the batched SubGen update, the bookkeeping kernels), the cases Oclgrind runs. */
#include "gpucheck.h"
#include "gpu_ops.h"
#include "kvb_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one-launch cases of the reshaped kernels (scripts/oclgrind-check) ----
 * Oclgrind 21.10 misreads values one launch wrote as uninitialized in a later launch of the same
 * context (scripts/oclgrind-check), so the chained resident and Gram cases (resident.c, bkvb.c) cannot run under
 * it. These cases give each reshaped kernel one launch on host-written inputs, in a process of its
 * own (--case), and check its outputs: against the kernel it replaces, run on a second context
 * opened without defines (k_decode_coop.cl against kvb_attn_split, k_bkvb_gram.cl against
 * k_bkvb.cl, kvb_subgen_update_b against kvb_subgen_update — bit for bit, as the chained cases
 * require), or against the exact host answer (kvb_subgen_prep on integer data, the bookkeeping
 * kernels). Shapes reach every barrier twice (two tiles, two coordinate chunks, several tokens). */
typedef struct {
  int kind; /* 0 int, 1 float, 2 buffer uploaded, 3 buffer uploaded and read back */
  int i;
  float f;
  void *host;
  size_t bytes;
} targ;
#define TI(x) {0, (int)(x), 0, NULL, 0}
#define TF(x) {1, 0, (float)(x), NULL, 0}
#define TB(p, n) {2, 0, 0, (void *)(p), (n)}
#define TO(p, n) {3, 0, 0, (void *)(p), (n)}
/* Uploads every buffer argument, launches once, reads the outputs back into their host arrays. */
static int one_launch(kvb_gpu *g, const char *kernel, size_t groups, size_t local, size_t na, const targ *a) {
  kvb_gpu_arg ga[32];
  kvb_gpu_buf *bufs[32] = {0};
  int rc = na > 32 ? KVB_EINVAL : KVB_OK;
  for (size_t i = 0; !rc && i < na; i++) {
    kvb_gpu_arg x = {KVB_GPU_ARG_INT, NULL, a[i].i, a[i].f};
    if (a[i].kind == 1) x.kind = KVB_GPU_ARG_FLOAT;
    if (a[i].kind >= 2) {
      rc = kvb_gpu_alloc(g, a[i].bytes, &bufs[i]);
      if (!rc) rc = kvb_gpu_write(g, bufs[i], a[i].host, a[i].bytes);
      x.kind = KVB_GPU_ARG_BUF, x.buf = bufs[i];
    }
    ga[i] = x;
  }
  if (!rc) rc = kvb_gpu_launch(g, kernel, groups, local, na, ga);
  for (size_t i = 0; !rc && i < na; i++)
    if (a[i].kind == 3) rc = kvb_gpu_read(g, bufs[i], a[i].host, a[i].bytes);
  for (size_t i = 0; i < na; i++) kvb_gpu_free(g, bufs[i]);
  return rc;
}

/* The tiny groups and their case counts. */
const char *TINY_GROUP[] = {"tiny_coop", "tiny_gram", "tiny_sgbatch", "tiny_bookkeep"};
const size_t TINY_NCASE[] = {2, 2, 2, 5};

static int run_tiny_coop(kvb_gpu *g, kvb_gpu *r, int ci, char *why, size_t whycap) {
  /* 0: float32, Hkv 1, H 6 (packs of 4 and 2), log-weights, 2 splits of which the first has 2 K
   * and 2 V tiles; 1: binary16, Hkv 2, H 4, 2 queries */
  const int half = ci == 1, has_w = ci == 0;
  const size_t Hkv = ci ? 2 : 1, H = ci ? 4 : 6, G = H / Hkv, n = ci ? 70 : 150, ld = ci ? 72 : 160;
  const size_t dk = ci ? 16 : 8, dv = ci ? 8 : 12, nq = ci ? 2 : 1, chunk = ci ? 32 : 128;
  const size_t nsplit = (n + chunk - 1) / chunk, npack = (G + 3) / 4, np = nsplit * H * nq;
  char name[160];
  snprintf(name, sizeof name, "tiny_coop(kvb_attn_coop: Hkv=%zu,H=%zu,n=%zu,ld=%zu,dk=%zu,dv=%zu,nq=%zu,chunk=%zu,%s%s)", Hkv,
           H, n, ld, dk, dv, nq, chunk, half ? "f16" : "f32", has_w ? ",logw" : "");
  float *K = calloc(Hkv * ld * dk, 4), *V = calloc(Hkv * ld * dv, 4), *lw = calloc(Hkv * ld, 4), *Q = malloc(nq * H * dk * 4);
  uint16_t *Kh = calloc(Hkv * ld * dk, 2), *Vh = calloc(Hkv * ld * dv, 2);
  float *Kr = malloc(H * n * dk * 4), *Vr = malloc(H * n * dv * 4), *lwr = malloc(H * n * 4);
  uint16_t *Khr = malloc(H * n * dk * 2), *Vhr = malloc(H * n * dv * 2);
  float *M = calloc(np, 4), *L = calloc(np, 4), *O = calloc(np * dv, 4), *Mr = calloc(np, 4), *Lr = calloc(np, 4),
        *Or = calloc(np * dv, 4);
  int ok = 0, rc;
  if (!K || !V || !lw || !Q || !Kh || !Vh || !Kr || !Vr || !lwr || !Khr || !Vhr || !M || !L || !O || !Mr || !Lr || !Or) {
    snprintf(why, whycap, "%s: out of host memory", name);
    goto out;
  }
  kvb_pcg32 rg;
  kvb_pcg32_seed(&rg, 4000 + (uint64_t)ci, 1);
  for (size_t h = 0; h < Hkv; h++) { /* rows [0, n) of each head; the spare rows stay 0 */
    fill(&rg, K + h * ld * dk, n * dk, 1.0), fill(&rg, V + h * ld * dv, n * dv, 1.0), fill(&rg, lw + h * ld, n, 0.5);
  }
  for (size_t i = 0; i < Hkv * ld * dk; i++) Kh[i] = kvb_f32_to_f16(K[i]);
  for (size_t i = 0; i < Hkv * ld * dv; i++) Vh[i] = kvb_f32_to_f16(V[i]);
  fill(&rg, Q, nq * H * dk, 1.0);
  for (size_t h = 0; h < H; h++) /* the reference's per-query-head copies of KV head h / G */
    for (size_t t = 0; t < n; t++) {
      size_t src = (h / G) * ld + t, dst = h * n + t;
      memcpy(Kr + dst * dk, K + src * dk, dk * 4), memcpy(Vr + dst * dv, V + src * dv, dv * 4);
      memcpy(Khr + dst * dk, Kh + src * dk, dk * 2), memcpy(Vhr + dst * dv, Vh + src * dv, dv * 2);
      lwr[dst] = lw[src];
    }
  float sc = 1 / sqrtf((float)dk);
  targ a[] = {TI(n), TI(ld), TI(dk), TI(dv), TI(H), TI(G), TI(chunk), TI(nsplit), TF(sc), TI(half), TI(has_w),
              TB(Q, nq * H * dk * 4), TB(K, Hkv * ld * dk * 4), TB(Kh, Hkv * ld * dk * 2), TB(V, Hkv * ld * dv * 4),
              TB(Vh, Hkv * ld * dv * 2), TB(lw, Hkv * ld * 4), TO(M, np * 4), TO(L, np * 4), TO(O, np * dv * 4)};
  rc = one_launch(g, "kvb_attn_coop", nsplit * npack * Hkv * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  targ b[] = {TI(n), TI(dk), TI(dv), TI(H), TI(chunk), TI(nsplit), TF(sc), TI(half), TI(has_w), TB(Q, nq * H * dk * 4),
              TB(Kr, H * n * dk * 4), TB(Khr, H * n * dk * 2), TB(Vr, H * n * dv * 4), TB(Vhr, H * n * dv * 2),
              TB(lwr, H * n * 4), TO(Mr, np * 4), TO(Lr, np * 4), TO(Or, np * dv * 4)};
  if (!rc) rc = one_launch(r, "kvb_attn_split", np, KVB_GPU_WG, sizeof b / sizeof *b, b);
  if (rc) {
    snprintf(why, whycap, "%s: %s", name, kvb_strerror_last());
    goto out;
  }
  if (memcmp(M, Mr, np * 4) || memcmp(L, Lr, np * 4) || memcmp(O, Or, np * dv * 4)) {
    snprintf(why, whycap, "%s: partials differ from kvb_attn_split's (want bit-identical)", name);
    goto out;
  }
  snprintf(why, whycap, "%s: OK (%zu partials bit-identical to kvb_attn_split on a second context)", name, np);
  ok = 1;
out:
  free(K), free(V), free(lw), free(Q), free(Kh), free(Vh), free(Kr), free(Vr), free(lwr), free(Khr), free(Vhr);
  free(M), free(L), free(O), free(Mr), free(Lr), free(Or);
  return ok;
}

static int run_tiny_gram(kvb_gpu *g, kvb_gpu *r, int ci, char *why, size_t whycap) {
  /* 0: the Gram walk, one block of 40 (3 row tiles), d = 32 (2 coordinate chunks), dv = 20;
   * 1: the parallel halving of 2 heads × 40 signs */
  const size_t H = ci ? 2 : 1, n = 48, m = 40, d = 32, dv = 20, b = 40, nblk = 1;
  char name[160];
  snprintf(name, sizeof name, ci ? "tiny_gram(kvb_bkvb_halving_par: H=%zu,m=%zu,ld=%zu)"
                                 : "tiny_gram(kvb_bkvb_gram_walk: H=%zu,m=%zu,ld=%zu,d=32,dv=20,b=40)", H, m, n);
  float *K = malloc(H * n * d * 4), *V = malloc(H * n * dv * 4), *cw = malloc(H * n * 4), *u = malloc(H * m * 4);
  float *P = calloc(H * m, 4), *Pr = calloc(H * m, 4), *ncw = calloc(H * n, 4), *ncwr = calloc(H * n, 4);
  int *cur = malloc(H * n * 4), *S = calloc(H * m, 4), *Sr = calloc(H * m, 4), *ncur = calloc(H * n, 4), *ncurr = calloc(H * n, 4);
  int ok = 0, rc;
  if (!K || !V || !cw || !u || !P || !Pr || !ncw || !ncwr || !cur || !S || !Sr || !ncur || !ncurr) {
    snprintf(why, whycap, "%s: out of host memory", name);
    goto out;
  }
  kvb_pcg32 rg;
  kvb_pcg32_seed(&rg, 4100 + (uint64_t)ci, 2);
  fill(&rg, K, H * n * d, 1.0), fill(&rg, V, H * n * dv, 1.0);
  for (size_t i = 0; i < H * n; i++) cur[i] = (int)((i * 7 + 3) % n), cw[i] = (float)(1 + (i % 3 == 0));
  for (size_t i = 0; i < H * m; i++) u[i] = (float)kvb_pcg32_uniform(&rg), S[i] = Sr[i] = u[i] < 0.5f ? 1 : -1;
  if (ci == 0) {
    float ks = (float)(1.0 / sqrt((double)d));
    targ a[] = {TI(n), TI(d), TI(dv), TI(m), TI(b), TI(nblk), TF(ks), TF(0), TF(0.5), TF(4.0), TB(K, H * n * d * 4),
                TB(V, H * n * dv * 4), TB(cur, H * n * 4), TB(cw, H * n * 4), TB(u, H * m * 4), TO(S, H * m * 4),
                TO(P, H * m * 4)};
    rc = one_launch(g, "kvb_bkvb_gram_walk", H * nblk, KVB_GPU_WG, sizeof a / sizeof *a, a);
    targ c[] = {TI(n), TI(d), TI(dv), TI(m), TI(b), TI(nblk), TF(ks), TF(0), TF(0.5), TF(4.0), TB(K, H * n * d * 4),
                TB(V, H * n * dv * 4), TB(cur, H * n * 4), TB(cw, H * n * 4), TB(u, H * m * 4), TO(Sr, H * m * 4),
                TO(Pr, H * m * 4)};
    if (!rc) rc = one_launch(r, "kvb_bkvb_walk", H * nblk, KVB_GPU_WG, sizeof c / sizeof *c, c);
  } else {
    targ a[] = {TI(n), TI(m), TB(S, H * m * 4), TB(cur, H * n * 4), TB(cw, H * n * 4), TO(ncur, H * n * 4), TO(ncw, H * n * 4)};
    rc = one_launch(g, "kvb_bkvb_halving_par", H, KVB_GPU_WG, sizeof a / sizeof *a, a);
    targ c[] = {TI(n), TI(m), TB(S, H * m * 4), TB(cur, H * n * 4), TB(cw, H * n * 4), TO(ncurr, H * n * 4), TO(ncwr, H * n * 4)};
    if (!rc) rc = one_launch(r, "kvb_bkvb_halving", H, 1, sizeof c / sizeof *c, c);
  }
  if (rc) {
    snprintf(why, whycap, "%s: %s", name, kvb_strerror_last());
    goto out;
  }
  if (memcmp(S, Sr, H * m * 4) || memcmp(P, Pr, H * m * 4) || memcmp(ncur, ncurr, H * n * 4) || memcmp(ncw, ncwr, H * n * 4)) {
    snprintf(why, whycap, "%s: %s differ from k_bkvb.cl's (want bit-identical)", name, ci ? "survivors" : "signs or probabilities");
    goto out;
  }
  snprintf(why, whycap, "%s: OK (%s bit-identical to k_bkvb.cl on a second context)", name,
           ci ? "survivors and weights" : "signs and walk probabilities");
  ok = 1;
out:
  free(K), free(V), free(cw), free(u), free(P), free(Pr), free(ncw), free(ncwr), free(cur), free(S), free(Sr), free(ncur), free(ncurr);
  return ok;
}

static int run_tiny_sgbatch(kvb_gpu *g, kvb_gpu *r, int ci, char *why, size_t whycap) {
  /* integer keys and values (every distance, norm and µ exact in float); head 0 starts with 3
   * clusters, head 1 empty, head 2 with 8 at ±4·e_j (j < 4) and every third token at the origin,
   * equidistant from all 8: each of kvb_subgen_prep's 4 sub-lanes scans representatives i and
   * i + 4, so the tie rule (the earliest index) decides inside a scan as well as in the merge;
   * 40 tokens (3 groups of kvb_subgen_prep per head) */
  const size_t H = 3, nt = 40, dk = 8, dv = 8, t = 2, s = 3, cap = 64, ut = t + s, ntb = (nt + 15) / 16;
  const int n0 = 10;
  char name[160];
  snprintf(name, sizeof name, "tiny_sgbatch(%s: H=3,nt=40,dk=8,dv=8,t=2,s=3,cap=64; old clusters 3, 0, 8 with ties)",
           ci ? "kvb_subgen_update_b" : "kvb_subgen_prep");
  float *K = malloc(H * nt * dk * 4), *V = malloc(H * nt * dv * 4), *u = malloc(H * nt * ut * 4);
  float *rep = calloc(H * cap * dk, 4), *S = calloc(H * cap * t * dk, 4), *mu = calloc(H, 4), *Mk = calloc(H * s * dk, 4),
        *Mv = calloc(H * s * dv, 4), *pd = calloc(H * nt, 4), *pv = calloc(H * nt, 4);
  int *mc = calloc(H, 4), *rp = calloc(H * cap, 4), *cnt = calloc(H * cap, 4), *Sp = calloc(H * cap * t, 4),
      *Mp = calloc(H * s, 4), *pi = calloc(H * nt, 4);
  /* the reference's copies of the state (kvb_subgen_update on the second context) */
  float *rep2 = NULL, *S2 = NULL, *mu2 = NULL, *Mk2 = NULL, *Mv2 = NULL;
  int *mc2 = NULL, *rp2 = NULL, *cnt2 = NULL, *Sp2 = NULL, *Mp2 = NULL;
  float *pd1 = calloc(H * nt, 4), *pv1 = calloc(H * nt, 4);
  int *pi1 = calloc(H * nt, 4), ok = 0, rc;
  if (!K || !V || !u || !rep || !S || !mu || !Mk || !Mv || !pd || !pv || !mc || !rp || !cnt || !Sp || !Mp || !pi || !pd1 ||
      !pv1 || !pi1) {
    snprintf(why, whycap, "%s: out of host memory", name);
    goto out;
  }
  kvb_pcg32 rg;
  kvb_pcg32_seed(&rg, 4200, 3);
  mc[0] = 3, mu[0] = 29;
  for (size_t i = 0; i < 3; i++) { /* head 0's old clusters: centers at 4·e_i, counts 2, 1, 4 */
    rep[i * dk + i] = 4, rp[i] = (int)i, cnt[i] = i == 1 ? 1 : 2 * (int)(i + 1);
    for (size_t j = 0; j < t; j++) S[(i * t + j) * dk + i] = 4, Sp[i * t + j] = (int)i;
  }
  mc[2] = 8, mu[2] = 16;
  for (size_t i = 0; i < 8; i++) { /* head 2's: 4·e_i, then −4·e_{i−4}, counts 2 */
    size_t c = 2 * cap + i;
    rep[c * dk + i % 4] = i < 4 ? 4.0f : -4.0f, rp[c] = (int)i, cnt[c] = 2;
    for (size_t j = 0; j < t; j++) S[(c * t + j) * dk + i % 4] = rep[c * dk + i % 4], Sp[c * t + j] = (int)i;
  }
  for (size_t i = 0; i < H * s; i++) Mp[i] = i < s ? (int)i : -1, Mk[i * dk] = i < s ? 1.0f : 0.0f;
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < nt; i++) { /* a token near one of 5 centers (3 old), an integer jitter of ±1 in one coordinate */
      float *k = K + (h * nt + i) * dk;
      size_t c = kvb_pcg32_bounded(&rg, 5), a = kvb_pcg32_bounded(&rg, dk);
      for (size_t x = 0; x < dk; x++) k[x] = x == c ? 4.0f : 0.0f;
      k[a] += (float)kvb_pcg32_bounded(&rg, 3) - 1.0f;
      if (h == 2 && i % 3 == 0)
        for (size_t x = 0; x < dk; x++) k[x] = 0.0f; /* the origin: 16 from each of head 2's representatives */
      for (size_t x = 0; x < dv; x++) V[(h * nt + i) * dv + x] = (float)kvb_pcg32_bounded(&rg, 5) - 2.0f;
      for (size_t x = 0; x < ut; x++) u[(h * nt + i) * ut + x] = (float)kvb_pcg32_uniform(&rg);
    }
  /* kvb_subgen_prep's answer, exact: the nearest old representative (the first of equal
   * distances), its squared distance (+inf and INT_MAX with none) and ‖v‖² */
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < nt; i++) {
      float bd = INFINITY, v2 = 0;
      int bi = 0x7fffffff;
      for (int c = 0; c < mc[h]; c++) {
        float d2 = 0;
        for (size_t a = 0; a < dk; a++) {
          float df = rep[((size_t)h * cap + (size_t)c) * dk + a] - K[(h * nt + i) * dk + a];
          d2 += df * df;
        }
        if (d2 < bd) bd = d2, bi = c;
      }
      for (size_t a = 0; a < dv; a++) v2 += V[(h * nt + i) * dv + a] * V[(h * nt + i) * dv + a];
      pd1[h * nt + i] = bd, pi1[h * nt + i] = bi, pv1[h * nt + i] = v2;
    }
  if (ci == 0) {
    targ a[] = {TI(nt), TI(dk), TI(dv), TI(cap), TI(ntb), TB(K, H * nt * dk * 4), TB(V, H * nt * dv * 4),
                TB(rep, H * cap * dk * 4), TB(mc, H * 4), TO(pd, H * nt * 4), TO(pi, H * nt * 4), TO(pv, H * nt * 4)};
    rc = one_launch(g, "kvb_subgen_prep", H * ntb, KVB_GPU_WG, sizeof a / sizeof *a, a);
    if (rc) {
      snprintf(why, whycap, "%s: %s", name, kvb_strerror_last());
      goto out;
    }
    if (memcmp(pd, pd1, H * nt * 4) || memcmp(pi, pi1, H * nt * 4) || memcmp(pv, pv1, H * nt * 4)) {
      snprintf(why, whycap, "%s: nearest old representatives or norms differ from the exact ones", name);
      goto out;
    }
    snprintf(why, whycap, "%s: OK (%zu nearest old representatives, distances and norms exact)", name, H * nt);
    ok = 1;
    goto out;
  }
  rep2 = malloc(H * cap * dk * 4), S2 = malloc(H * cap * t * dk * 4), mu2 = malloc(H * 4), Mk2 = malloc(H * s * dk * 4);
  Mv2 = malloc(H * s * dv * 4), mc2 = malloc(H * 4), rp2 = malloc(H * cap * 4), cnt2 = malloc(H * cap * 4);
  Sp2 = malloc(H * cap * t * 4), Mp2 = malloc(H * s * 4);
  if (!rep2 || !S2 || !mu2 || !Mk2 || !Mv2 || !mc2 || !rp2 || !cnt2 || !Sp2 || !Mp2) {
    snprintf(why, whycap, "%s: out of host memory", name);
    goto out;
  }
  memcpy(rep2, rep, H * cap * dk * 4), memcpy(S2, S, H * cap * t * dk * 4), memcpy(mu2, mu, H * 4);
  memcpy(Mk2, Mk, H * s * dk * 4), memcpy(Mv2, Mv, H * s * dv * 4), memcpy(mc2, mc, H * 4), memcpy(rp2, rp, H * cap * 4);
  memcpy(cnt2, cnt, H * cap * 4), memcpy(Sp2, Sp, H * cap * t * 4), memcpy(Mp2, Mp, H * s * 4);
  targ a[] = {TI(nt), TI(dk), TI(dv), TI(t), TI(s), TI(cap), TI(n0), TF(2.0), TB(K, H * nt * dk * 4), TB(V, H * nt * dv * 4),
              TB(u, H * nt * ut * 4), TB(pd1, H * nt * 4), TB(pi1, H * nt * 4), TB(pv1, H * nt * 4), TO(mc, H * 4),
              TO(rep, H * cap * dk * 4), TO(rp, H * cap * 4), TO(cnt, H * cap * 4), TO(S, H * cap * t * dk * 4),
              TO(Sp, H * cap * t * 4), TO(mu, H * 4), TO(Mk, H * s * dk * 4), TO(Mv, H * s * dv * 4), TO(Mp, H * s * 4)};
  rc = one_launch(g, "kvb_subgen_update_b", H, KVB_GPU_WG, sizeof a / sizeof *a, a);
  targ c[] = {TI(nt), TI(dk), TI(dv), TI(t), TI(s), TI(cap), TI(n0), TF(2.0), TB(K, H * nt * dk * 4), TB(V, H * nt * dv * 4),
              TB(u, H * nt * ut * 4), TO(mc2, H * 4), TO(rep2, H * cap * dk * 4), TO(rp2, H * cap * 4), TO(cnt2, H * cap * 4),
              TO(S2, H * cap * t * dk * 4), TO(Sp2, H * cap * t * 4), TO(mu2, H * 4), TO(Mk2, H * s * dk * 4),
              TO(Mv2, H * s * dv * 4), TO(Mp2, H * s * 4)};
  if (!rc) rc = one_launch(r, "kvb_subgen_update", H, KVB_GPU_WG, sizeof c / sizeof *c, c);
  if (rc) {
    snprintf(why, whycap, "%s: %s", name, kvb_strerror_last());
    goto out;
  }
  if (memcmp(mc, mc2, H * 4) || memcmp(rep, rep2, H * cap * dk * 4) || memcmp(rp, rp2, H * cap * 4) ||
      memcmp(cnt, cnt2, H * cap * 4) || memcmp(S, S2, H * cap * t * dk * 4) || memcmp(Sp, Sp2, H * cap * t * 4) ||
      memcmp(mu, mu2, H * 4) || memcmp(Mk, Mk2, H * s * dk * 4) || memcmp(Mv, Mv2, H * s * dv * 4) || memcmp(Mp, Mp2, H * s * 4)) {
    snprintf(why, whycap, "%s: the state differs from kvb_subgen_update's (m' %d, %d, %d vs %d, %d, %d; want bit-identical)",
             name, mc[0], mc[1], mc[2], mc2[0], mc2[1], mc2[2]);
    goto out;
  }
  snprintf(why, whycap, "%s: OK (state bit-identical to kvb_subgen_update on a second context; m' = %d, %d, %d)", name, mc[0],
           mc[1], mc[2]);
  ok = 1;
out:
  free(K), free(V), free(u), free(rep), free(S), free(mu), free(Mk), free(Mv), free(pd), free(pv), free(mc), free(rp);
  free(cnt), free(Sp), free(Mp), free(pi), free(rep2), free(S2), free(mu2), free(Mk2), free(Mv2), free(mc2), free(rp2);
  free(cnt2), free(Sp2), free(Mp2), free(pd1), free(pv1), free(pi1);
  return ok;
}

static int run_tiny_bookkeep(kvb_gpu *g, int ci, char *why, size_t whycap) {
  static const char *K[] = {"kvb_restride", "kvb_fill_i32", "kvb_bkvb_init", "kvb_bkvb_qlist", "kvb_copy_f4"};
  int A[400], B[400], ok = 1, rc;
  float F[400], W[400], L1[400], L2[400];
  for (int i = 0; i < 400; i++) A[i] = 1000 + i, B[i] = -5, F[i] = (float)i * 0.25f, W[i] = 0, L1[i] = L2[i] = 0;
  if (ci == 0) { /* 2 heads × 5 rows × 3 words from stride 5 offset 0 into stride 9 offset 2 */
    targ a[] = {TI(2), TI(5), TI(3), TI(5), TI(0), TI(9), TI(2), TB(A, 30 * 4), TO(B, 54 * 4)};
    rc = one_launch(g, K[ci], 1, KVB_GPU_WG, 9, a);
    for (int h = 0; h < 2; h++)
      for (int r = 0; r < 9; r++)
        for (int w = 0; w < 3; w++)
          ok &= B[(h * 9 + r) * 3 + w] == (r >= 2 && r < 7 ? A[(h * 5 + r - 2) * 3 + w] : -5);
  } else if (ci == 1) { /* 2 × 3 × 5 words */
    targ a[] = {TI(2), TI(3), TI(5), TI(-1), TO(B, 40 * 4)};
    rc = one_launch(g, K[ci], 1, KVB_GPU_WG, 5, a);
    for (int i = 0; i < 40; i++) ok &= B[i] == (i < 30 ? -1 : -5);
  } else if (ci == 2) { /* 2 heads, stride 9, 7 rows from row 1 */
    targ a[] = {TI(2), TI(9), TI(7), TI(1), TO(B, 18 * 4), TO(W, 18 * 4)};
    rc = one_launch(g, K[ci], 1, KVB_GPU_WG, 6, a);
    for (int h = 0; h < 2; h++)
      for (int k = 0; k < 9; k++) ok &= k < 7 ? B[h * 9 + k] == 1 + k && W[h * 9 + k] == 1.0f : B[h * 9 + k] == -5 && W[h * 9 + k] == 0;
  } else if (ci == 3) { /* 2 heads: f = 2, mid = 6, nr = 1, kept 3 of weights 1, 2, 4 (list of 6) */
    float lt[64], cw[18];
    int cur[18];
    for (int e = 0; e < 64; e++) lt[e] = (float)log(ldexp(1.0, e));
    for (int i = 0; i < 18; i++) cur[i] = 40 + i, cw[i] = (float)(1 << (i % 3));
    targ a[] = {TI(2), TI(2), TI(6), TI(1), TI(3), TI(9), TI(0), TF(1.5), TB(cur, 18 * 4), TB(cw, 18 * 4), TB(lt, 64 * 4),
                TO(B, 12 * 4), TO(L1, 12 * 4), TO(L2, 12 * 4)};
    rc = one_launch(g, K[ci], 1, KVB_GPU_WG, 14, a);
    for (int h = 0; h < 2; h++)
      for (int j = 0; j < 6; j++) {
        int i = h * 6 + j, k = j - 3;
        ok &= j < 3 ? B[i] == (j < 2 ? j : 6 + j) && L1[i] == 0 && L2[i] == 0
                    : B[i] == cur[h * 9 + k] && L1[i] == lt[k] && L2[i] == 1.5f;
      }
  } else { /* 50 float4 */
    targ a[] = {TI(50), TB(F, 200 * 4), TO(L1, 200 * 4)};
    rc = one_launch(g, K[ci], 2, KVB_GPU_WG, 3, a);
    ok &= !memcmp(F, L1, 200 * 4);
  }
  if (rc) return snprintf(why, whycap, "tiny_bookkeep(%s): %s", K[ci], kvb_strerror_last()), 0;
  snprintf(why, whycap, "tiny_bookkeep(%s): %s", K[ci], ok ? "OK (every word as the host computes it)" : "FAIL (wrong words)");
  return ok;
}

/* Case ci of tiny group gi; the reference context (no defines) is opened here when needed. */
int run_tiny(kvb_gpu *g, kvb_gpu_backend be, int dev, size_t gi, int ci, char *why, size_t whycap) {
  if (gi == 3) return run_tiny_bookkeep(g, ci, why, whycap);
  if (gi == 2 && ci == 0) return run_tiny_sgbatch(g, NULL, ci, why, whycap);
  kvb_gpu *r;
  if (kvb_gpu_open(be, dev, NULL, &r)) return snprintf(why, whycap, "%s: reference context: %s", TINY_GROUP[gi], kvb_strerror_last()), 0;
  int ok = gi == 0 ? run_tiny_coop(g, r, ci, why, whycap) : gi == 1 ? run_tiny_gram(g, r, ci, why, whycap)
                                                          : run_tiny_sgbatch(g, r, ci, why, whycap);
  kvb_gpu_close(r);
  return ok;
}

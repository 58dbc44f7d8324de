/* resident.c — kvb-gpucheck: device-resident state (gpu_resident.h) against the host-mirrored
 * calls of gpu_ops.h, bit for bit, with the bytes moved counted. */
#include "gpucheck.h"
#include "gpu_ops.h"
#include "kvb_error.h"
#include "gpu_resident.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resident: device-resident state (gpu_resident.h) against the host-mirrored calls ----
 * Each case runs the same inputs through gpu_resident.h and through gpu_ops.h (which uploads
 * everything per call) on the same device and requires bit-identical results — so the CPU
 * reference comparisons of the other files carry over unchanged — and, from kvb_gpu_transfer_counts, exactly
 * the bytes of the new tokens (and uniforms) on the way in and of the results on the way out. */
const rkv_case RKV[] = {
    {2, 2, 64, 64, 64, 2, 0, {100, 1, 200}},  /* one head per query head; a growth on the third append */
    {2, 8, 128, 64, 64, 2, 1, {37, 300, 0}},  /* GQA 4 query heads per KV head, float16, d_key != d_value */
    {1, 6, 32, 32, 32, 2, 0, {1, 64, 65}},    /* GQA 6: two packs (4 + 2), one-token start */
};

static uint64_t xfer_up(void) { uint64_t a; kvb_gpu_transfer_counts(&a, NULL); return a; }
static uint64_t xfer_down(void) { uint64_t b; kvb_gpu_transfer_counts(NULL, &b); return b; }

/* 1 OK, 0 FAIL (why set). */
static int run_resident_kv(kvb_gpu *g, const rkv_case *c, char *why, size_t whycap) {
  size_t ntot = c->appends[0] + c->appends[1] + c->appends[2], es = c->half ? 2 : 4, G = c->H / c->Hkv;
  size_t nk = c->Hkv * ntot * c->dk, nv = c->Hkv * ntot * c->dv, nq = c->nq, H = c->H;
  float *K = malloc(nk * 4), *V = malloc(nv * 4), *Q = malloc(nq * H * c->dk * 4), *Z = malloc(nq * H * c->dv * 4);
  float *Zr = malloc(nq * H * c->dv * 4);
  uint16_t *Kh = malloc(nk * 2), *Vh = malloc(nv * 2);
  unsigned char *Kb = malloc(nk * es), *Vb = malloc(nv * es), *Kr = malloc(H * ntot * c->dk * es),
                *Vr = malloc(H * ntot * c->dv * es), *Kd = malloc(nk * es), *Vd = malloc(nv * es);
  kvb_gpu_kvcache kc;
  int ok = 0, have = 0;
  char shape[160];
  snprintf(shape, sizeof shape, "resident_kv(Hkv=%zu,H=%zu,dk=%zu,dv=%zu,%s,appends=%zu+%zu+%zu,split=%zu)", c->Hkv, H,
           c->dk, c->dv, c->half ? "f16" : "f32", c->appends[0], c->appends[1], c->appends[2], c->chunk);
  if (!K || !V || !Q || !Z || !Zr || !Kh || !Vh || !Kb || !Vb || !Kr || !Vr || !Kd || !Vd) {
    snprintf(why, whycap, "%s: out of host memory", shape);
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 700 + ntot + c->dk, 5);
  fill(&r, K, nk, 1.0), fill(&r, V, nv, 1.0);
  for (size_t i = 0; i < nk; i++) Kh[i] = kvb_f32_to_f16(K[i]);
  for (size_t i = 0; i < nv; i++) Vh[i] = kvb_f32_to_f16(V[i]);
  if (kvb_gpu_kvcache_init(&kc, g, c->Hkv, c->dk, c->dv, c->half)) {
    snprintf(why, whycap, "%s: init: %s", shape, kvb_strerror_last());
    goto out;
  }
  have = 1;
  size_t n = 0;
  for (int step = 0; step < 3 && c->appends[step]; step++) {
    size_t nt = c->appends[step];
    /* this append's rows, head by head (K: Hkv×nt×dk) */
    for (size_t h = 0; h < c->Hkv; h++)
      for (size_t i = 0; i < nt; i++) {
        size_t src = h * ntot + n + i, dst = h * nt + i;
        memcpy(Kb + dst * c->dk * es, c->half ? (void *)(Kh + src * c->dk) : (void *)(K + src * c->dk), c->dk * es);
        memcpy(Vb + dst * c->dv * es, c->half ? (void *)(Vh + src * c->dv) : (void *)(V + src * c->dv), c->dv * es);
      }
    uint64_t u0 = xfer_up(), d0 = xfer_down();
    if (kvb_gpu_kvcache_append(&kc, nt, Kb, Vb)) {
      snprintf(why, whycap, "%s: append: %s", shape, kvb_strerror_last());
      goto out;
    }
    uint64_t up = xfer_up() - u0, down = xfer_down() - d0, want_up = c->Hkv * nt * (c->dk + c->dv) * es;
    if (up != want_up || down != 0) {
      snprintf(why, whycap, "%s: append %d moved %llu bytes up, %llu down (want %llu, 0)", shape, step,
               (unsigned long long)up, (unsigned long long)down, (unsigned long long)want_up);
      goto out;
    }
    n += nt;
    fill(&r, Q, nq * H * c->dk, 1.0);
    double scale = 1 / sqrt((double)c->dk);
    u0 = xfer_up(), d0 = xfer_down();
    if (kvb_gpu_kvcache_attend(&kc, H, nq, scale, Q, c->chunk, Z, NULL)) {
      snprintf(why, whycap, "%s: attend: %s", shape, kvb_strerror_last());
      goto out;
    }
    up = xfer_up() - u0, down = xfer_down() - d0;
    if (up != nq * H * c->dk * 4 || down != nq * H * c->dv * 4) {
      snprintf(why, whycap, "%s: attend after append %d moved %llu bytes up, %llu down (want %zu, %zu: the query and the output)",
               shape, step, (unsigned long long)up, (unsigned long long)down, nq * H * c->dk * 4, nq * H * c->dv * 4);
      goto out;
    }
    /* the reference: kvb_gpu_attention (all K/V uploaded) with each query head's KV head copied */
    for (size_t h = 0; h < H; h++)
      for (size_t i = 0; i < n; i++) {
        size_t src = (h / G) * ntot + i, dst = h * n + i;
        memcpy(Kr + dst * c->dk * es, c->half ? (void *)(Kh + src * c->dk) : (void *)(K + src * c->dk), c->dk * es);
        memcpy(Vr + dst * c->dv * es, c->half ? (void *)(Vh + src * c->dv) : (void *)(V + src * c->dv), c->dv * es);
      }
    if (kvb_gpu_attention(g, H, n, c->dk, c->dv, nq, scale, c->half, Q, Kr, Vr, NULL, c->chunk, Zr, NULL)) {
      snprintf(why, whycap, "%s: reference: %s", shape, kvb_strerror_last());
      goto out;
    }
    for (size_t i = 0; i < nq * H * c->dv; i++)
      if (memcmp(&Z[i], &Zr[i], 4)) {
        snprintf(why, whycap, "%s: after append %d (n = %zu) output %zu = %.9g, kvb_attn_split path %.9g (want bit-identical)",
                 shape, step, n, i, Z[i], Zr[i]);
        goto out;
      }
  }
  if (kvb_gpu_kvcache_download(&kc, Kd, Vd)) {
    snprintf(why, whycap, "%s: download: %s", shape, kvb_strerror_last());
    goto out;
  }
  for (size_t h = 0; h < c->Hkv; h++)
    if (memcmp(Kd + h * n * c->dk * es, c->half ? (void *)(Kh + h * ntot * c->dk) : (void *)(K + h * ntot * c->dk), n * c->dk * es) ||
        memcmp(Vd + h * n * c->dv * es, c->half ? (void *)(Vh + h * ntot * c->dv) : (void *)(V + h * ntot * c->dv), n * c->dv * es)) {
      snprintf(why, whycap, "%s: the cache's rows of head %zu differ from the appended tokens", shape, h);
      goto out;
    }
  snprintf(why, whycap, "%s: OK (%zu appends, capacity %zu, outputs bit-identical to kvb_gpu_attention; each append moved exactly its tokens, each query its query and output)",
           shape, (size_t)(c->appends[2] ? 3 : 2), kc.cap);
  ok = 1;
out:
  if (have) kvb_gpu_kvcache_free(&kc);
  free(K), free(V), free(Q), free(Z), free(Zr), free(Kh), free(Vh), free(Kb), free(Vb), free(Kr), free(Vr), free(Kd), free(Vd);
  return ok;
}

/* SubGen: the resident state against kvb_gpu_subgen (host mirror), batches of 50, 1, 600 tokens
 * (the last in three chunks of the batched update). */
static int run_resident_subgen(kvb_gpu *g, char *why, size_t whycap) {
  const size_t H = 3, dk = 16, dv = 16, t = 4, s = 8, nq = 2, batches[3] = {50, 1, 600}, ntot = 651, ut = t + s;
  float *K = malloc(H * ntot * dk * 4), *V = malloc(H * ntot * dv * 4), *u = malloc(H * ntot * ut * 4), *C = malloc(6 * dk * 4);
  float *Kb = malloc(H * 600 * dk * 4), *Vb = malloc(H * 600 * dv * 4), *ub = malloc(H * 600 * ut * 4);
  float *Q = malloc(nq * H * dk * 4), *Z = malloc(nq * H * dv * 4), *Zr = malloc(nq * H * dv * 4);
  kvb_gpu_subgen host;
  kvb_gpu_subgen_dev dev;
  int ok = 0, hh = 0, hd = 0;
  float *rep = NULL, *S = NULL, *mu = NULL, *Mk = NULL, *Mv = NULL;
  int *rep_pos = NULL, *cnt = NULL, *S_pos = NULL, *M_pos = NULL;
  const char *shape = "resident_subgen(H=3,dk=16,dv=16,t=4,s=8,batches=50+1+600)";
  memset(&host, 0, sizeof host), memset(&dev, 0, sizeof dev);
  if (!K || !V || !u || !C || !Kb || !Vb || !ub || !Q || !Z || !Zr) {
    snprintf(why, whycap, "%s: out of host memory", shape);
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 801, 3);
  for (size_t h = 0; h < H; h++) {
    fill(&r, C, 6 * dk, 1.0);
    for (size_t i = 0; i < ntot; i++) {
      float *k = K + (h * ntot + i) * dk;
      size_t ci = kvb_pcg32_bounded(&r, 6);
      fill(&r, k, dk, 0.3 / sqrt((double)dk));
      for (size_t a = 0; a < dk; a++) k[a] += C[ci * dk + a];
    }
  }
  fill(&r, V, H * ntot * dv, 1.0);
  for (size_t i = 0; i < H * ntot * ut; i++) u[i] = (float)kvb_pcg32_uniform(&r), u[i] = u[i] < 1 ? u[i] : 0.5f;
  if (kvb_gpu_subgen_init(&host, H, dk, dv, t, s, 1.0) || (hh = 1, kvb_gpu_subgen_dev_init(&dev, g, H, dk, dv, t, s, 1.0))) {
    snprintf(why, whycap, "%s: init: %s", shape, kvb_strerror_last());
    goto out;
  }
  hd = 1;
  size_t n0 = 0;
  for (int b = 0; b < 3; b++) {
    size_t nt = batches[b];
    for (size_t h = 0; h < H; h++) {
      memcpy(Kb + h * nt * dk, K + (h * ntot + n0) * dk, nt * dk * 4);
      memcpy(Vb + h * nt * dv, V + (h * ntot + n0) * dv, nt * dv * 4);
      memcpy(ub + h * nt * ut, u + (h * ntot + n0) * ut, nt * ut * 4);
    }
    if (kvb_gpu_subgen_update(g, &host, nt, Kb, Vb, ub, NULL)) {
      snprintf(why, whycap, "%s: host-mirrored update: %s", shape, kvb_strerror_last());
      goto out;
    }
    uint64_t u0 = xfer_up(), d0 = xfer_down();
    if (kvb_gpu_subgen_dev_update(&dev, nt, Kb, Vb, ub, NULL)) {
      snprintf(why, whycap, "%s: resident update: %s", shape, kvb_strerror_last());
      goto out;
    }
    uint64_t up = xfer_up() - u0, down = xfer_down() - d0;
    if (up != H * nt * (dk + dv + ut) * 4 || down != H * 4) {
      snprintf(why, whycap, "%s: update %d moved %llu bytes up, %llu down (want %zu: the tokens and their uniforms; %zu: m′)",
               shape, b, (unsigned long long)up, (unsigned long long)down, H * nt * (dk + dv + ut) * 4, H * 4);
      goto out;
    }
    n0 += nt;
    size_t c = dev.cap;
    if (c != host.cap) {
      snprintf(why, whycap, "%s: capacity %zu, host mirror %zu", shape, c, host.cap);
      goto out;
    }
    free(rep), free(S), free(mu), free(Mk), free(Mv), free(rep_pos), free(cnt), free(S_pos), free(M_pos);
    rep = malloc(H * c * dk * 4), S = malloc(H * c * t * dk * 4), mu = malloc(H * 4), Mk = malloc(H * s * dk * 4);
    Mv = malloc(H * s * dv * 4), rep_pos = malloc(H * c * 4), cnt = malloc(H * c * 4), S_pos = malloc(H * c * t * 4);
    M_pos = malloc(H * s * 4);
    if (!rep || !S || !mu || !Mk || !Mv || !rep_pos || !cnt || !S_pos || !M_pos ||
        kvb_gpu_subgen_dev_download(&dev, rep, rep_pos, cnt, S, S_pos, mu, Mk, Mv, M_pos)) {
      snprintf(why, whycap, "%s: download failed", shape);
      goto out;
    }
    if (memcmp(dev.mc, host.mc, H * 4) || memcmp(rep, host.rep, H * c * dk * 4) || memcmp(rep_pos, host.rep_pos, H * c * 4) ||
        memcmp(cnt, host.cnt, H * c * 4) || memcmp(S, host.S, H * c * t * dk * 4) || memcmp(S_pos, host.S_pos, H * c * t * 4) ||
        memcmp(mu, host.mu, H * 4) || memcmp(Mk, host.Mk, H * s * dk * 4) || memcmp(Mv, host.Mv, H * s * dv * 4) ||
        memcmp(M_pos, host.M_pos, H * s * 4)) {
      snprintf(why, whycap, "%s: after batch %d the resident state differs from the host mirror's (want bit-identical)", shape, b);
      goto out;
    }
    fill(&r, Q, nq * H * dk, 1.0);
    if (kvb_gpu_subgen_query(g, &host, nq, 0.25, Q, Zr, NULL)) {
      snprintf(why, whycap, "%s: host-mirrored query: %s", shape, kvb_strerror_last());
      goto out;
    }
    u0 = xfer_up(), d0 = xfer_down();
    if (kvb_gpu_subgen_dev_query(&dev, nq, 0.25, Q, Z, NULL)) {
      snprintf(why, whycap, "%s: resident query: %s", shape, kvb_strerror_last());
      goto out;
    }
    up = xfer_up() - u0, down = xfer_down() - d0;
    if (up != nq * H * dk * 4 || down != nq * H * dv * 4 || memcmp(Z, Zr, nq * H * dv * 4)) {
      snprintf(why, whycap, "%s: query after batch %d: %s (moved %llu up, %llu down)", shape, b,
               memcmp(Z, Zr, nq * H * dv * 4) ? "output differs from the host mirror's" : "wrong traffic",
               (unsigned long long)up, (unsigned long long)down);
      goto out;
    }
  }
  snprintf(why, whycap, "%s: OK (state and queries bit-identical to the host mirror after each batch; clusters %d/%d/%d; "
           "each update moved its tokens and uniforms up and m′ down, each query its query and output)", shape, dev.mc[0], dev.mc[1], dev.mc[2]);
  ok = 1;
out:
  if (hh) kvb_gpu_subgen_free(&host);
  if (hd) kvb_gpu_subgen_dev_free(&dev);
  free(K), free(V), free(u), free(C), free(Kb), free(Vb), free(ub), free(Q), free(Z), free(Zr);
  free(rep), free(S), free(mu), free(Mk), free(Mv), free(rep_pos), free(cnt), free(S_pos), free(M_pos);
  return ok;
}

/* Block BalanceKV over a resident cache (H = 2, d = 64, dv = 32; 300 tokens in two appends; the
 * middle [8, 264) compressed with b = 64, T = 2): kept sets, weights and queries against
 * kvb_gpu_bkvb_compress on the middle rows and kvb_gpu_wquery on the full cache. */
static int run_resident_bkvb(kvb_gpu *g, char *why, size_t whycap) {
  const size_t H = 2, d = 64, dv = 32, n = 300, f = 8, mid = 256, b = 64, nq = 2, kept = mid >> 2;
  const unsigned T = 2;
  const char *shape = "resident_bkvb(H=2,d=64,dv=32,n=300,f=8,middle=256,b=64,T=2)";
  size_t kk = n - mid + kept;
  float *K = malloc(H * n * d * 4), *V = malloc(H * n * dv * 4), *Km = malloc(H * mid * d * 4), *Vm = malloc(H * mid * dv * 4);
  float *Q = malloc(nq * H * d * 4), *Z = malloc(nq * H * dv * 4), *Zr = malloc(nq * H * dv * 4);
  float *ln = malloc(H * kk * 4), *ld = malloc(H * kk * 4), *Kb = malloc(H * 200 * d * 4), *Vb = malloc(H * 200 * dv * 4);
  double *ub = malloc(H * 2 * mid * 8), *w = malloc(H * kept * 8), *wr = malloc(H * kept * 8);
  size_t *ix = malloc(H * kept * sizeof *ix), *ixr = malloc(H * kept * sizeof *ixr);
  int *qi = malloc(H * kk * sizeof *qi), ok = 0, hc = 0;
  kvb_gpu_kvcache kc;
  kvb_gpu_bkvb_dev bk;
  memset(&bk, 0, sizeof bk);
  if (!K || !V || !Km || !Vm || !Q || !Z || !Zr || !ln || !ld || !Kb || !Vb || !ub || !w || !wr || !ix || !ixr || !qi) {
    snprintf(why, whycap, "%s: out of host memory", shape);
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 901, 7);
  fill(&r, K, H * n * d, 1.0), fill(&r, V, H * n * dv, 1.0), fill(&r, Q, nq * H * d, 1.0);
  for (size_t i = 0; i < H * 2 * mid; i++) ub[i] = kvb_pcg32_uniform(&r);
  const double *u[2] = {ub, ub + H * mid};
  for (size_t h = 0; h < H; h++) {
    memcpy(Km + h * mid * d, K + (h * n + f) * d, mid * d * 4);
    memcpy(Vm + h * mid * dv, V + (h * n + f) * dv, mid * dv * 4);
  }
  if (kvb_gpu_bkvb_compress(g, H, mid, d, dv, Km, Vm, b, T, 4.0, 0.5, 1.0, 0.0, u, ixr, wr, NULL, NULL)) {
    snprintf(why, whycap, "%s: reference compress: %s", shape, kvb_strerror_last());
    goto out;
  }
  if (kvb_gpu_kvcache_init(&kc, g, H, d, dv, 0)) {
    snprintf(why, whycap, "%s: cache: %s", shape, kvb_strerror_last());
    goto out;
  }
  hc = 1;
  kvb_gpu_bkvb_dev_init(&bk, g);
  for (size_t a0 = 0; a0 < n; a0 += 200) { /* two appends: 200 + 100 */
    size_t nt = n - a0 < 200 ? n - a0 : 200;
    for (size_t h = 0; h < H; h++) {
      memcpy(Kb + h * nt * d, K + (h * n + a0) * d, nt * d * 4);
      memcpy(Vb + h * nt * dv, V + (h * n + a0) * dv, nt * dv * 4);
    }
    if (kvb_gpu_kvcache_append(&kc, nt, Kb, Vb)) {
      snprintf(why, whycap, "%s: append: %s", shape, kvb_strerror_last());
      goto out;
    }
  }
  for (int consistent = 0; consistent < 2; consistent++) {
    uint64_t u0 = xfer_up(), d0 = xfer_down();
    if (kvb_gpu_bkvb_dev_compress(&bk, &kc, f, mid, b, T, 4.0, 0.5, 1.0, 0.0, consistent, u, ix, w, NULL, NULL)) {
      snprintf(why, whycap, "%s: resident compress: %s", shape, kvb_strerror_last());
      goto out;
    }
    uint64_t up = xfer_up() - u0, down = xfer_down() - d0, want_up = H * (mid + mid / 2) * 4 + (consistent ? 0 : 64 * 4);
    if (up != want_up || down != 2 * H * kept * 4) {
      snprintf(why, whycap, "%s: compress moved %llu bytes up, %llu down (want %llu: the uniforms%s; %zu: kept indices and weights)",
               shape, (unsigned long long)up, (unsigned long long)down, (unsigned long long)want_up,
               consistent ? "" : " and the 64-entry table of ln 2^e, once", 2 * H * kept * 4);
      goto out;
    }
    for (size_t i = 0; i < H * kept; i++)
      if (ix[i] != ixr[i] + f || w[i] != wr[i]) {
        snprintf(why, whycap, "%s: kept entry %zu: row %zu weight %g, reference row %zu weight %g", shape, i, ix[i], w[i], ixr[i] + f, wr[i]);
        goto out;
      }
    /* the reference query list, built on the host as gpu_methods.c builds it */
    for (size_t h = 0; h < H; h++) {
      size_t j = 0;
      for (size_t i = 0; i < n; i++)
        if (i < f || i >= f + mid) qi[h * kk + j] = (int)i, ln[h * kk + j] = 0, ld[h * kk + j] = 0, j++;
      for (size_t k = 0; k < kept; k++, j++) {
        qi[h * kk + j] = (int)ix[h * kept + k], ln[h * kk + j] = (float)log(w[h * kept + k]);
        ld[h * kk + j] = consistent ? ln[h * kk + j] : (float)(T * log(2.0));
      }
    }
    if (kvb_gpu_wquery(g, H, n, d, dv, kk, qi, ln, ld, nq, 0.125, Q, K, V, Zr, NULL)) {
      snprintf(why, whycap, "%s: reference query: %s", shape, kvb_strerror_last());
      goto out;
    }
    u0 = xfer_up(), d0 = xfer_down();
    if (kvb_gpu_bkvb_dev_query(&bk, &kc, nq, 0.125, Q, Z, NULL)) {
      snprintf(why, whycap, "%s: resident query: %s", shape, kvb_strerror_last());
      goto out;
    }
    up = xfer_up() - u0, down = xfer_down() - d0;
    if (up != nq * H * d * 4 || down != nq * H * dv * 4 || memcmp(Z, Zr, nq * H * dv * 4)) {
      snprintf(why, whycap, "%s: %s query: %s (moved %llu up, %llu down)", shape, consistent ? "consistent" : "paper",
               memcmp(Z, Zr, nq * H * dv * 4) ? "output differs from kvb_gpu_wquery's" : "wrong traffic",
               (unsigned long long)up, (unsigned long long)down);
      goto out;
    }
  }
  snprintf(why, whycap, "%s: OK (kept rows and weights equal to kvb_gpu_bkvb_compress, queries bit-identical to kvb_gpu_wquery, "
           "both denominators; compress moved its uniforms up and the kept set down, each query its query and output)", shape);
  ok = 1;
out:
  kvb_gpu_bkvb_dev_free(&bk);
  if (hc) kvb_gpu_kvcache_free(&kc);
  free(K), free(V), free(Km), free(Vm), free(Q), free(Z), free(Zr), free(ln), free(ld), free(Kb), free(Vb), free(ub), free(w),
      free(wr), free(ix), free(ixr), free(qi);
  return ok;
}

/* SubGen, an exact tie inside a chunk: δ = 1, key A = 0 in the first update; then B = 1.5·e_1
 * (d² = 2.25 > δ²: a new cluster inside the chunk) and C = 0.75·e_1, at d² = 0.5625 from both A and
 * B (exact in float). The full arg min gives C to the lower index, A's cluster; the batched kernel
 * must too (its old-versus-new merge), the host mirror's kernel decides. */
static int run_resident_subgen_tie(kvb_gpu *g, char *why, size_t whycap) {
  float K[12] = {0, 0, 0, 0, 1.5f, 0, 0, 0, 0.75f, 0, 0, 0}, V[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  float u[12] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
  kvb_gpu_subgen host;
  kvb_gpu_subgen_dev dev;
  int cnt[8] = {0}, ok = 0;
  const char *shape = "resident_subgen_tie(H=1,dk=4,t=2,s=2,delta=1; a key equidistant from an old and a new representative)";
  if (kvb_gpu_subgen_init(&host, 1, 4, 4, 2, 2, 1.0)) return snprintf(why, whycap, "%s: init", shape), 0;
  if (kvb_gpu_subgen_dev_init(&dev, g, 1, 4, 4, 2, 2, 1.0)) {
    kvb_gpu_subgen_free(&host);
    return snprintf(why, whycap, "%s: init: %s", shape, kvb_strerror_last()), 0;
  }
  if (kvb_gpu_subgen_update(g, &host, 1, K, V, u, NULL) || kvb_gpu_subgen_update(g, &host, 2, K + 4, V + 4, u + 4, NULL) ||
      kvb_gpu_subgen_dev_update(&dev, 1, K, V, u, NULL) || kvb_gpu_subgen_dev_update(&dev, 2, K + 4, V + 4, u + 4, NULL) ||
      dev.cap > 8 || kvb_gpu_subgen_dev_download(&dev, NULL, NULL, cnt, NULL, NULL, NULL, NULL, NULL, NULL)) {
    snprintf(why, whycap, "%s: %s", shape, kvb_strerror_last());
  } else if (dev.mc[0] != 2 || host.mc[0] != 2 || cnt[0] != 2 || cnt[1] != 1 || memcmp(cnt, host.cnt, 2 * sizeof(int))) {
    snprintf(why, whycap, "%s: clusters %d (host %d), counts %d, %d (host %d, %d; want 2 clusters, counts 2, 1: the tie to the old one)",
             shape, dev.mc[0], host.mc[0], cnt[0], cnt[1], host.cnt[0], host.cnt[1]);
  } else {
    snprintf(why, whycap, "%s: OK (the tie goes to the old cluster, counts 2, 1, as the host mirror)", shape);
    ok = 1;
  }
  kvb_gpu_subgen_free(&host);
  kvb_gpu_subgen_dev_free(&dev);
  return ok;
}

/* Uniform sampling over a resident cache (H = 2, dk = 32, dv = 16; 300 tokens in two appends;
 * 40 exact rows and 64 sampled ones per head, weight 2.5): the gathered rows and the estimator
 * bit-identical to kvb_gpu_usample_compress + kvb_gpu_usample_query (which upload K/V and the
 * sample); the compression moves only the positions and log-weights up, nothing down. */
static int run_resident_usample(kvb_gpu *g, char *why, size_t whycap) {
  const size_t H = 2, n = 300, dk = 32, dv = 16, kk = 104, nex = 40, nq = 3;
  const double wmid = 2.5;
  const char *shape = "resident_usample(H=2,dk=32,dv=16,n=300,rows=40+64,weight=2.5)";
  float *K = malloc(H * n * dk * 4), *V = malloc(H * n * dv * 4), *Kc = malloc(H * kk * dk * 4), *Vc = malloc(H * kk * dv * 4);
  float *Q = malloc(nq * H * dk * 4), *Z = malloc(nq * H * dv * 4), *Zr = malloc(nq * H * dv * 4);
  float *Kb = malloc(H * 200 * dk * 4), *Vb = malloc(H * 200 * dv * 4);
  int *pos = malloc(H * kk * sizeof *pos), ok = 0, hc = 0;
  kvb_gpu_kvcache kc;
  kvb_gpu_usample_dev us;
  kvb_gpu_usample_dev_init(&us, g);
  if (!K || !V || !Kc || !Vc || !Q || !Z || !Zr || !Kb || !Vb || !pos) {
    snprintf(why, whycap, "%s: out of host memory", shape);
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 1300, 4);
  fill(&r, K, H * n * dk, 1.0), fill(&r, V, H * n * dv, 1.0), fill(&r, Q, nq * H * dk, 1.0);
  for (size_t i = 0; i < H * kk; i++) pos[i] = (int)kvb_pcg32_bounded(&r, (uint32_t)n);
  if (kvb_gpu_kvcache_init(&kc, g, H, dk, dv, 0)) {
    snprintf(why, whycap, "%s: init: %s", shape, kvb_strerror_last());
    goto out;
  }
  hc = 1;
  for (size_t a0 = 0; a0 < n; a0 += 200) {
    size_t nt = n - a0 < 200 ? n - a0 : 200;
    for (size_t h = 0; h < H; h++) {
      memcpy(Kb + h * nt * dk, K + (h * n + a0) * dk, nt * dk * 4);
      memcpy(Vb + h * nt * dv, V + (h * n + a0) * dv, nt * dv * 4);
    }
    if (kvb_gpu_kvcache_append(&kc, nt, Kb, Vb)) {
      snprintf(why, whycap, "%s: append: %s", shape, kvb_strerror_last());
      goto out;
    }
  }
  if (kvb_gpu_usample_compress(g, H, n, dk, dv, K, V, kk, pos, Kc, Vc, NULL) ||
      kvb_gpu_usample_query(g, H, kk, nex, wmid, dk, dv, nq, 0.2, Q, Kc, Vc, 32, Zr, NULL)) {
    snprintf(why, whycap, "%s: reference: %s", shape, kvb_strerror_last());
    goto out;
  }
  uint64_t u0 = xfer_up(), d0 = xfer_down();
  if (kvb_gpu_usample_dev_compress(&us, &kc, kk, pos, nex, wmid)) {
    snprintf(why, whycap, "%s: resident compress: %s", shape, kvb_strerror_last());
    goto out;
  }
  uint64_t up = xfer_up() - u0, down = xfer_down() - d0;
  if (up != H * kk * 8 || down != 0) {
    snprintf(why, whycap, "%s: compress moved %llu bytes up, %llu down (want %zu: positions and log-weights; 0)", shape,
             (unsigned long long)up, (unsigned long long)down, H * kk * 8);
    goto out;
  }
  u0 = xfer_up(), d0 = xfer_down();
  if (kvb_gpu_usample_dev_query(&us, nq, 0.2, Q, 32, Z, NULL)) {
    snprintf(why, whycap, "%s: resident query: %s", shape, kvb_strerror_last());
    goto out;
  }
  up = xfer_up() - u0, down = xfer_down() - d0;
  if (up != nq * H * dk * 4 || down != nq * H * dv * 4 || memcmp(Z, Zr, nq * H * dv * 4)) {
    snprintf(why, whycap, "%s: query: %s (moved %llu up, %llu down)", shape,
             memcmp(Z, Zr, nq * H * dv * 4) ? "output differs from kvb_gpu_usample_query's" : "wrong traffic",
             (unsigned long long)up, (unsigned long long)down);
    goto out;
  }
  snprintf(why, whycap, "%s: OK (estimates bit-identical to kvb_gpu_usample_compress + query; the sample gathered on the "
           "device: compress moved %zu bytes up, 0 down; each query its query and output)", shape, H * kk * 8);
  ok = 1;
out:
  kvb_gpu_usample_dev_free(&us);
  if (hc) kvb_gpu_kvcache_free(&kc);
  free(K), free(V), free(Kc), free(Vc), free(Q), free(Z), free(Zr), free(Kb), free(Vb), free(pos);
  return ok;
}

/* Every resident case; returns the number that failed (quiet: no lines, first failure in first). */
size_t run_resident_all(kvb_gpu *g, int quiet, size_t *ncase, char *first, size_t firstcap) {
  char why[600];
  size_t bad = 0, nc = 0;
  size_t nk = sizeof RKV / sizeof *RKV;
  for (size_t i = 0; i < nk + 4; i++, nc++) {
    int ok = i < nk ? run_resident_kv(g, &RKV[i], why, sizeof why)
             : i == nk ? run_resident_subgen(g, why, sizeof why)
             : i == nk + 1 ? run_resident_subgen_tie(g, why, sizeof why)
             : i == nk + 2 ? run_resident_bkvb(g, why, sizeof why)
                           : run_resident_usample(g, why, sizeof why);
    if (!quiet) printf("%s %s\n", ok ? "PASS" : "FAIL", why);
    if (!ok && !bad++ && first) snprintf(first, firstcap, "%s", why);
  }
  if (ncase) *ncase = nc;
  return bad;
}

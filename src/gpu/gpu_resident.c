/* gpu_resident.c — device-resident state (gpu_resident.h): host side. */
#include "gpu_resident.h"
#include "gpu_host_util.h"
#include "gpu_limits.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* *b holds at least `bytes` (reallocated, contents dropped, when smaller). */
static int ensure(kvb_gpu *g, kvb_gpu_buf **b, size_t *cap, size_t bytes) {
  if (*b && *cap >= bytes) return KVB_OK;
  kvb_gpu_free(g, *b);
  *b = NULL, *cap = 0;
  int rc = kvb_gpu_alloc(g, bytes ? bytes : 4, b);
  if (!rc) *cap = bytes;
  return rc;
}

/* Grid-stride kernels: enough groups of 64 for `work` items, at most 4096. */
static size_t groups_for(size_t work) {
  size_t gs = (work + KVB_GPU_WG - 1) / KVB_GPU_WG;
  return gs < 1 ? 1 : gs > 4096 ? 4096 : gs;
}

/* k_resident.cl kvb_restride: H blocks of rows×w words. */
static int restride(kvb_gpu *g, size_t H, size_t rows, size_t w, size_t ld_src, size_t off_src, size_t ld_dst,
                    size_t off_dst, kvb_gpu_buf *src, kvb_gpu_buf *dst) {
  if (!H || !rows || !w) return KVB_OK;
  kvb_gpu_arg a[] = {A_int(H), A_int(rows), A_int(w), A_int(ld_src), A_int(off_src), A_int(ld_dst), A_int(off_dst),
                     A_buf(src), A_buf(dst)};
  return kvb_gpu_launch(g, "kvb_restride", groups_for(H * rows * w), KVB_GPU_WG, 9, a);
}
/* k_resident.cl kvb_fill_i32: H×rows×w words (each factor an int; the count may pass 2^31). */
static int fill(kvb_gpu *g, kvb_gpu_buf *b, size_t H, size_t rows, size_t w, int v) {
  if (!H || !rows || !w) return KVB_OK;
  kvb_gpu_arg a[] = {A_int(H), A_int(rows), A_int(w), A_int(0), A_buf(b)};
  a[3].i = v;
  return kvb_gpu_launch(g, "kvb_fill_i32", groups_for(H * rows * w), KVB_GPU_WG, 5, a);
}
/* A new buffer of H×cap×w words, zero, holding the first rows_old of each head's old ld_old rows. */
static int regrow(kvb_gpu *g, kvb_gpu_buf **b, size_t H, size_t w, size_t ld_old, size_t ld_new) {
  kvb_gpu_buf *nb = NULL;
  int rc = kvb_gpu_alloc(g, H * ld_new * w * 4, &nb);
  if (!rc) rc = fill(g, nb, H, ld_new, w, 0);
  if (!rc && *b && ld_old) rc = restride(g, H, ld_old, w, ld_old, 0, ld_new, 0, *b, nb);
  if (rc) {
    kvb_gpu_free(g, nb);
    return rc;
  }
  kvb_gpu_free(g, *b);
  *b = nb;
  return KVB_OK;
}

/* ================= the KV cache ================= */
int kvb_gpu_kvcache_init(kvb_gpu_kvcache *c, kvb_gpu *g, size_t Hkv, size_t dk, size_t dv, int half) {
  if (!c || !g) return KVB_ERROR(KVB_ENULL, "gpu kv cache: NULL argument");
  memset(c, 0, sizeof *c);
  if (!Hkv || !dk || !dv || dk % 4 || dv % 4 || dk > KVB_GPU_DMAX || dv > KVB_GPU_DMAX)
    return KVB_ERROR(KVB_EINVAL, "gpu kv cache: need heads >= 1 and d_key, d_value multiples of 4 in [4, %d]", KVB_GPU_DMAX);
  c->g = g, c->Hkv = Hkv, c->dk = dk, c->dv = dv, c->half = half ? 1 : 0;
  return KVB_OK;
}

void kvb_gpu_kvcache_free(kvb_gpu_kvcache *c) {
  if (!c || !c->g) return;
  kvb_gpu_buf *all[] = {c->K, c->V, c->stK, c->stV, c->Q, c->M, c->L, c->O, c->Z};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) kvb_gpu_free(c->g, all[i]);
  memset(c, 0, sizeof *c);
}

int kvb_gpu_kvcache_append(kvb_gpu_kvcache *c, size_t nt, const void *K, const void *V) {
  if (!c || !c->g || !K || !V) return KVB_ERROR(KVB_ENULL, "gpu kv cache append: NULL argument");
  if (c->broken) return KVB_ERROR(KVB_ESTATE, "gpu kv cache: a device call failed earlier");
  if (!nt) return KVB_OK;
  size_t H = c->Hkv, es = c->half ? 2 : 4, n = c->n;
  /* the capacity after this append: doubled when it is too small, at least 64 rows */
  if (nt > SIZE_MAX / 4 - n) return KVB_ERROR(KVB_EINVAL, "gpu kv cache append: %zu tokens are too many", nt);
  size_t cap = c->cap;
  if (n + nt > cap) cap = 2 * cap > n + nt ? 2 * cap : n + nt, cap = cap < 64 ? 64 : cap;
  if (!kvb_gpu_fits_kvcache(H, cap, c->dk, c->dv))
    return KVB_ERROR(KVB_EINVAL, "gpu kv cache append: %zu tokens exceed the kernels' indexing (gpu_limits.h)", n + nt);
  if (c->half ? !kvb_finite_f16(K, H * nt * c->dk) || !kvb_finite_f16(V, H * nt * c->dv)
              : !kvb_finite_f32(K, H * nt * c->dk) || !kvb_finite_f32(V, H * nt * c->dv))
    return KVB_ERROR(KVB_EDOM, "gpu kv cache append: non-finite key or value");
  kvb_gpu *g = c->g;
  size_t wk = c->dk * es / 4, wv = c->dv * es / 4; /* 32-bit words per row */
  int rc = KVB_OK;
  if (cap != c->cap) { /* grow: double, copy the rows on the device */
    rc = regrow(g, &c->K, H, wk, c->cap, cap);
    if (!rc) rc = regrow(g, &c->V, H, wv, c->cap, cap);
    if (rc) return c->broken = 1, rc;
    c->cap = cap;
  }
  size_t need = H * nt * (wk > wv ? wk : wv) * 4, cap1 = c->st_cap, cap2 = c->st_cap;
  rc = ensure(g, &c->stK, &cap1, need);
  if (!rc) rc = ensure(g, &c->stV, &cap2, need);
  if (!rc) c->st_cap = cap1 < cap2 ? cap1 : cap2;
  if (!rc) rc = kvb_gpu_write(g, c->stK, K, H * nt * c->dk * es);
  if (!rc) rc = kvb_gpu_write(g, c->stV, V, H * nt * c->dv * es);
  if (!rc) rc = restride(g, H, nt, wk, nt, 0, c->cap, n, c->stK, c->K);
  if (!rc) rc = restride(g, H, nt, wv, nt, 0, c->cap, n, c->stV, c->V);
  if (rc) return c->broken = 1, rc;
  c->n = n + nt;
  return KVB_OK;
}

int kvb_gpu_kvcache_attend(kvb_gpu_kvcache *c, size_t H, size_t nq, double scale, const float *Q, size_t chunk,
                           float *Z, double *kernel_s) {
  if (!c || !c->g || !Q || !Z) return KVB_ERROR(KVB_ENULL, "gpu kv cache attend: NULL argument");
  if (c->broken) return KVB_ERROR(KVB_ESTATE, "gpu kv cache: a device call failed earlier");
  if (c->n == 0) return KVB_ERROR(KVB_ESTATE, "gpu kv cache attend: the cache is empty");
  if (!H || H % c->Hkv || !nq || !chunk || chunk > KVB_GPU_CHUNK_MAX || !isfinite(scale))
    return KVB_ERROR(KVB_EINVAL, "gpu kv cache attend: need query heads a multiple of %zu, queries >= 1, "
                     "1 <= chunk <= %d, a finite scale", c->Hkv, KVB_GPU_CHUNK_MAX);
  size_t G = H / c->Hkv, npack = (G + 3) / 4, nsplit = (c->n + chunk - 1) / chunk, ng = nsplit * H * nq;
  if (!kvb_gpu_fits_coop(c->Hkv, H, c->n, c->cap, c->dk, c->dv, nq, chunk))
    return KVB_ERROR(KVB_EINVAL, "gpu kv cache attend: sizes exceed the kernels' indexing (gpu_limits.h)");
  if (!kvb_finite_f32(Q, nq * H * c->dk)) return KVB_ERROR(KVB_EDOM, "gpu kv cache attend: non-finite query");
  kvb_gpu *g = c->g;
  size_t qc = c->q_cap, zc = c->z_cap, pc1 = c->part_cap, pc2 = c->part_cap, pc3 = c->part_cap;
  int rc = ensure(g, &c->Q, &qc, nq * H * c->dk * 4);
  if (!rc) rc = ensure(g, &c->Z, &zc, nq * H * c->dv * 4);
  if (!rc) rc = ensure(g, &c->M, &pc1, ng * c->dv * 4);
  if (!rc) rc = ensure(g, &c->L, &pc2, ng * c->dv * 4);
  if (!rc) rc = ensure(g, &c->O, &pc3, ng * c->dv * 4);
  if (rc) return rc;
  c->q_cap = qc, c->z_cap = zc, c->part_cap = ng * c->dv * 4 > c->part_cap ? ng * c->dv * 4 : c->part_cap;
  rc = kvb_gpu_write(g, c->Q, Q, nq * H * c->dk * 4);
  double t0 = kvb_gpu_now_s();
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(c->n), A_int(c->cap), A_int(c->dk), A_int(c->dv), A_int(H), A_int(G), A_int(chunk),
                       A_int(nsplit), A_flt(scale), A_int(c->half), A_int(0), A_buf(c->Q), A_buf(c->K), A_buf(c->K),
                       A_buf(c->V), A_buf(c->V), A_buf(c->M), A_buf(c->M), A_buf(c->L), A_buf(c->O)};
    rc = kvb_gpu_launch(g, "kvb_attn_coop", nsplit * npack * c->Hkv * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(c->dv), A_int(nsplit), A_buf(c->M), A_buf(c->L), A_buf(c->O), A_buf(c->Z)};
    rc = kvb_gpu_launch(g, "kvb_attn_combine", H * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, c->Z, Z, nq * H * c->dv * 4);
  if (rc) c->broken = 1;
  return rc;
}

int kvb_gpu_kvcache_download(kvb_gpu_kvcache *c, void *K, void *V) {
  if (!c || !c->g || !K || !V) return KVB_ERROR(KVB_ENULL, "gpu kv cache download: NULL argument");
  if (c->n == 0) return KVB_OK;
  size_t H = c->Hkv, es = c->half ? 2 : 4, wk = c->dk * es / 4, wv = c->dv * es / 4;
  kvb_gpu_buf *t = NULL;
  int rc = kvb_gpu_alloc(c->g, H * c->n * (wk > wv ? wk : wv) * 4, &t);
  if (!rc) rc = restride(c->g, H, c->n, wk, c->cap, 0, c->n, 0, c->K, t);
  if (!rc) rc = kvb_gpu_read(c->g, t, K, H * c->n * wk * 4);
  if (!rc) rc = restride(c->g, H, c->n, wv, c->cap, 0, c->n, 0, c->V, t);
  if (!rc) rc = kvb_gpu_read(c->g, t, V, H * c->n * wv * 4);
  kvb_gpu_free(c->g, t);
  return rc;
}

/* ================= SubGen ================= */
int kvb_gpu_subgen_dev_init(kvb_gpu_subgen_dev *st, kvb_gpu *g, size_t H, size_t dk, size_t dv, size_t t,
                            size_t s, double delta) {
  if (!st || !g) return KVB_ERROR(KVB_ENULL, "gpu subgen (resident) init: NULL argument");
  memset(st, 0, sizeof *st);
  if (!H || !dk || !dv || !t || !s || dk > KVB_GPU_DMAX || dv > KVB_GPU_DMAX || !(delta > 0) || !isfinite(delta) ||
      !kvb_gpu_fits_subgen(H, dk, dv, t, s, 0, 0, 0, 0))
    return KVB_ERROR(KVB_EINVAL, "gpu subgen: need H, d_key, d_value, t, s >= 1, d <= %d, finite δ > 0", KVB_GPU_DMAX);
  st->g = g, st->H = H, st->dk = dk, st->dv = dv, st->t = t, st->s = s, st->delta = delta;
  st->mc = calloc(H, sizeof *st->mc);
  if (!st->mc) return KVB_ERROR(KVB_ENOMEM, "gpu subgen (resident): out of memory");
  /* the empty state, made on the device: m′ = 0, µ = 0, slots zero (the query multiplies null
   * slots by 0, which must not meet a NaN) and null (position −1) */
  int rc = kvb_gpu_alloc(g, H * 4, &st->b_mc);
  if (!rc) rc = kvb_gpu_alloc(g, H * 4, &st->mu);
  if (!rc) rc = kvb_gpu_alloc(g, H * s * dk * 4, &st->Mk);
  if (!rc) rc = kvb_gpu_alloc(g, H * s * dv * 4, &st->Mv);
  if (!rc) rc = kvb_gpu_alloc(g, H * s * 4, &st->M_pos);
  if (!rc) rc = fill(g, st->b_mc, H, 1, 1, 0);
  if (!rc) rc = fill(g, st->mu, H, 1, 1, 0);
  if (!rc) rc = fill(g, st->Mk, H, s, dk, 0);
  if (!rc) rc = fill(g, st->Mv, H, s, dv, 0);
  if (!rc) rc = fill(g, st->M_pos, H, s, 1, -1);
  if (rc) kvb_gpu_subgen_dev_free(st);
  return rc;
}

void kvb_gpu_subgen_dev_free(kvb_gpu_subgen_dev *st) {
  if (!st || !st->g) return;
  kvb_gpu_buf *all[] = {st->b_mc, st->rep, st->rep_pos, st->cnt, st->S, st->S_pos, st->mu, st->Mk,
                        st->Mv, st->M_pos, st->stK, st->stV, st->stU, st->Q, st->Z,
                        st->cK, st->cV, st->cU, st->pd, st->pi, st->pv};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) kvb_gpu_free(st->g, all[i]);
  free(st->mc);
  memset(st, 0, sizeof *st);
}

int kvb_gpu_subgen_dev_update(kvb_gpu_subgen_dev *st, size_t nt, const float *K, const float *V, const float *u,
                              double *kernel_s) {
  if (!st || !st->g || !K || !V || !u) return KVB_ERROR(KVB_ENULL, "gpu subgen (resident) update: NULL argument");
  if (st->broken) return KVB_ERROR(KVB_ESTATE, "gpu subgen (resident): a device call failed earlier");
  size_t H = st->H, dk = st->dk, dv = st->dv, t = st->t, s = st->s, mmax = 0;
  if (!nt) return KVB_OK;
  for (size_t h = 0; h < H; h++) mmax = (size_t)st->mc[h] > mmax ? (size_t)st->mc[h] : mmax;
  size_t cap = st->cap >= mmax + nt ? st->cap : 2 * (mmax + nt); /* as kvb_gpu_subgen_update grows */
  if (nt > SIZE_MAX / 4 - st->n || mmax + nt > SIZE_MAX / 4 ||
      !kvb_gpu_fits_subgen(H, dk, dv, t, s, cap, st->n + nt, nt, 0) || !kvb_gpu_fits_subgen_batch(H, KVB_SG_CHUNK))
    return KVB_ERROR(KVB_EINVAL, "gpu subgen update: sizes exceed the kernels' indexing (gpu_limits.h)");
  if (!kvb_finite_f32(K, H * nt * dk) || !kvb_finite_f32(V, H * nt * dv))
    return KVB_ERROR(KVB_EDOM, "gpu subgen update: non-finite key or value");
  for (size_t i = 0; i < H * nt * (t + s); i++)
    if (!(u[i] >= 0 && u[i] < 1)) return KVB_ERROR(KVB_EDOM, "gpu subgen update: u[%zu] = %g not in [0, 1)", i, u[i]);
  kvb_gpu *g = st->g;
  int rc = KVB_OK;
  if (cap != st->cap) { /* grow every per-cluster array on the device, zero beyond the old rows */
    rc = regrow(g, &st->rep, H, dk, st->cap, cap);
    if (!rc) rc = regrow(g, &st->rep_pos, H, 1, st->cap, cap);
    if (!rc) rc = regrow(g, &st->cnt, H, 1, st->cap, cap);
    if (!rc) rc = regrow(g, &st->S, H, t * dk, st->cap, cap);
    if (!rc) rc = regrow(g, &st->S_pos, H, t, st->cap, cap);
    if (rc) return st->broken = 1, rc;
    st->cap = cap;
  }
  size_t need = H * nt * (dk > dv ? (dk > t + s ? dk : t + s) : (dv > t + s ? dv : t + s)) * 4;
  size_t c1 = st->st_cap, c2 = st->st_cap, c3 = st->st_cap;
  rc = ensure(g, &st->stK, &c1, need);
  if (!rc) rc = ensure(g, &st->stV, &c2, need);
  if (!rc) rc = ensure(g, &st->stU, &c3, need);
  if (!rc) st->st_cap = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
  if (!rc) rc = kvb_gpu_write(g, st->stK, K, H * nt * dk * 4);
  if (!rc) rc = kvb_gpu_write(g, st->stV, V, H * nt * dv * 4);
  if (!rc) rc = kvb_gpu_write(g, st->stU, u, H * nt * (t + s) * 4);
  double t0 = kvb_gpu_now_s(), d2 = st->delta * st->delta;
  float fd2 = (float)(d2 < 3.4e38 ? d2 : 3.4e38);
  if (!rc && st->old_kernel) {
    kvb_gpu_arg a[] = {A_int(nt), A_int(dk), A_int(dv), A_int(t), A_int(s), A_int(cap), A_int(st->n),
                       A_flt(fd2), A_buf(st->stK), A_buf(st->stV), A_buf(st->stU), A_buf(st->b_mc),
                       A_buf(st->rep), A_buf(st->rep_pos), A_buf(st->cnt), A_buf(st->S), A_buf(st->S_pos),
                       A_buf(st->mu), A_buf(st->Mk), A_buf(st->Mv), A_buf(st->M_pos)};
    rc = kvb_gpu_launch(g, "kvb_subgen_update", H, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (!rc && !st->old_kernel) { /* chunks: repacked on the device, old clusters in parallel, then the chain */
    size_t ch = nt < KVB_SG_CHUNK ? nt : KVB_SG_CHUNK, wmax = dk > dv ? (dk > t + s ? dk : t + s) : (dv > t + s ? dv : t + s);
    size_t c1 = st->c_cap, c2 = st->c_cap, c3 = st->c_cap, c4 = st->c_cap, c5 = st->c_cap, c6 = st->c_cap;
    rc = ensure(g, &st->cK, &c1, H * ch * wmax * 4);
    if (!rc) rc = ensure(g, &st->cV, &c2, H * ch * wmax * 4);
    if (!rc) rc = ensure(g, &st->cU, &c3, H * ch * wmax * 4);
    if (!rc) rc = ensure(g, &st->pd, &c4, H * ch * wmax * 4);
    if (!rc) rc = ensure(g, &st->pi, &c5, H * ch * wmax * 4);
    if (!rc) rc = ensure(g, &st->pv, &c6, H * ch * wmax * 4);
    if (!rc && H * ch * wmax * 4 > st->c_cap) st->c_cap = H * ch * wmax * 4;
    for (size_t c0 = 0; !rc && c0 < nt; c0 += ch) {
      size_t nc = nt - c0 < ch ? nt - c0 : ch, ntb = (nc + 15) / 16;
      rc = restride(g, H, nc, dk, nt, c0, nc, 0, st->stK, st->cK);
      if (!rc) rc = restride(g, H, nc, dv, nt, c0, nc, 0, st->stV, st->cV);
      if (!rc) rc = restride(g, H, nc, t + s, nt, c0, nc, 0, st->stU, st->cU);
      if (!rc) {
        kvb_gpu_arg a[] = {A_int(nc), A_int(dk), A_int(dv), A_int(cap), A_int(ntb), A_buf(st->cK), A_buf(st->cV),
                           A_buf(st->rep), A_buf(st->b_mc), A_buf(st->pd), A_buf(st->pi), A_buf(st->pv)};
        rc = kvb_gpu_launch(g, "kvb_subgen_prep", H * ntb, KVB_GPU_WG, sizeof a / sizeof *a, a);
      }
      if (!rc) {
        kvb_gpu_arg a[] = {A_int(nc), A_int(dk), A_int(dv), A_int(t), A_int(s), A_int(cap), A_int(st->n + c0),
                           A_flt(fd2), A_buf(st->cK), A_buf(st->cV), A_buf(st->cU), A_buf(st->pd), A_buf(st->pi),
                           A_buf(st->pv), A_buf(st->b_mc), A_buf(st->rep), A_buf(st->rep_pos), A_buf(st->cnt),
                           A_buf(st->S), A_buf(st->S_pos), A_buf(st->mu), A_buf(st->Mk), A_buf(st->Mv), A_buf(st->M_pos)};
        rc = kvb_gpu_launch(g, "kvb_subgen_update_b", H, KVB_GPU_WG, sizeof a / sizeof *a, a);
      }
    }
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, st->b_mc, st->mc, H * 4); /* m′: the host sizes the next growth with it */
  if (rc) return st->broken = 1, rc;
  st->n += nt;
  return KVB_OK;
}

int kvb_gpu_subgen_dev_query(kvb_gpu_subgen_dev *st, size_t nq, double scale, const float *Q, float *Z,
                             double *kernel_s) {
  if (!st || !st->g || !Q || !Z) return KVB_ERROR(KVB_ENULL, "gpu subgen (resident) query: NULL argument");
  if (st->broken) return KVB_ERROR(KVB_ESTATE, "gpu subgen (resident): a device call failed earlier");
  if (st->n == 0) return KVB_ERROR(KVB_ESTATE, "gpu subgen query: no token has been streamed yet");
  size_t H = st->H, dk = st->dk, dv = st->dv;
  if (!nq || !kvb_gpu_fits_subgen(H, dk, dv, st->t, st->s, st->cap, st->n, 0, nq) || !isfinite(scale))
    return KVB_ERROR(KVB_EINVAL, "gpu subgen query: need 1 <= queries (gpu_limits.h) and a finite scale");
  if (!kvb_finite_f32(Q, nq * H * dk)) return KVB_ERROR(KVB_EDOM, "gpu subgen query: non-finite query");
  kvb_gpu *g = st->g;
  size_t need = nq * H * (dk > dv ? dk : dv) * 4, c1 = st->q_cap, c2 = st->q_cap;
  int rc = ensure(g, &st->Q, &c1, need);
  if (!rc) rc = ensure(g, &st->Z, &c2, need);
  if (rc) return rc;
  st->q_cap = c1 < c2 ? c1 : c2;
  rc = kvb_gpu_write(g, st->Q, Q, nq * H * dk * 4);
  double t0 = kvb_gpu_now_s();
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(dk), A_int(dv), A_int(st->t), A_int(st->s), A_int(st->cap), A_int(H), A_flt(scale),
                       A_buf(st->Q), A_buf(st->b_mc), A_buf(st->cnt), A_buf(st->S), A_buf(st->mu), A_buf(st->Mk),
                       A_buf(st->Mv), A_buf(st->M_pos), A_buf(st->Z)};
    rc = kvb_gpu_launch(g, "kvb_subgen_query", H * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, st->Z, Z, nq * H * dv * 4);
  if (rc) st->broken = 1;
  return rc;
}

int kvb_gpu_subgen_dev_download(kvb_gpu_subgen_dev *st, float *rep, int *rep_pos, int *cnt, float *S, int *S_pos,
                                float *mu, float *Mk, float *Mv, int *M_pos) {
  if (!st || !st->g) return KVB_ERROR(KVB_ENULL, "gpu subgen (resident) download: NULL argument");
  size_t H = st->H, c = st->cap, t = st->t, s = st->s;
  kvb_gpu *g = st->g;
  int rc = KVB_OK;
  if (c) {
    if (!rc && rep) rc = kvb_gpu_read(g, st->rep, rep, H * c * st->dk * 4);
    if (!rc && rep_pos) rc = kvb_gpu_read(g, st->rep_pos, rep_pos, H * c * 4);
    if (!rc && cnt) rc = kvb_gpu_read(g, st->cnt, cnt, H * c * 4);
    if (!rc && S) rc = kvb_gpu_read(g, st->S, S, H * c * t * st->dk * 4);
    if (!rc && S_pos) rc = kvb_gpu_read(g, st->S_pos, S_pos, H * c * t * 4);
  }
  if (!rc && mu) rc = kvb_gpu_read(g, st->mu, mu, H * 4);
  if (!rc && Mk) rc = kvb_gpu_read(g, st->Mk, Mk, H * s * st->dk * 4);
  if (!rc && Mv) rc = kvb_gpu_read(g, st->Mv, Mv, H * s * st->dv * 4);
  if (!rc && M_pos) rc = kvb_gpu_read(g, st->M_pos, M_pos, H * s * 4);
  return rc;
}

/* ================= block BalanceKV ================= */
void kvb_gpu_bkvb_dev_init(kvb_gpu_bkvb_dev *bk, kvb_gpu *g) {
  memset(bk, 0, sizeof *bk);
  bk->g = g;
}

void kvb_gpu_bkvb_dev_free(kvb_gpu_bkvb_dev *bk) {
  if (!bk || !bk->g) return;
  kvb_gpu_buf *all[] = {bk->cur[0], bk->cur[1], bk->cw[0], bk->cw[1], bk->S, bk->P, bk->U, bk->lntab,
                        bk->ridx, bk->rw, bk->idx, bk->ln, bk->ldn, bk->Q, bk->Z};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) kvb_gpu_free(bk->g, all[i]);
  memset(bk, 0, sizeof *bk);
}

int kvb_gpu_bkvb_dev_compress(kvb_gpu_bkvb_dev *bk, const kvb_gpu_kvcache *c, size_t f, size_t mid, size_t b,
                              unsigned T, double gamma, double c0, double tau, double beta, int consistent,
                              const double *const *u, size_t *idx, double *w, float *P, double *kernel_s) {
  if (!bk || !bk->g || !c || !u || !idx || !w) return KVB_ERROR(KVB_ENULL, "gpu balancekv_block (resident): NULL argument");
  if (bk->broken || c->broken) return KVB_ERROR(KVB_ESTATE, "gpu balancekv_block (resident): a device call failed earlier");
  if (c->half) return KVB_ERROR(KVB_EINVAL, "gpu balancekv_block (resident): the walk reads float32 caches only");
  size_t H = c->Hkv, d = c->dk, dv = c->dv, ld = c->cap;
  if (!mid || !b || b > KVB_GPU_BMAX || T >= 31 || (mid >> T) == 0 || f + mid > c->n ||
      !kvb_gpu_fits_kvcache(H, ld, d, dv) || !kvb_gpu_fits_bkvb(H, ld, d, dv, b) ||
      !kvb_gpu_fits_wquery(H, ld, d, dv, c->n - mid + (mid >> T), 1))
    return KVB_ERROR(KVB_EINVAL, "gpu balancekv_block (resident): need 1 <= b <= %d, middle >= 2^T inside the cache", KVB_GPU_BMAX);
  if (!isfinite(gamma) || !isfinite(tau) || !isfinite(beta) || !isfinite(c0) || c0 < 0)
    return KVB_ERROR(KVB_EINVAL, "gpu balancekv_block: gamma, tau, beta must be finite and c0 >= 0");
  size_t utot = 0;
  for (unsigned r = 0; r < T; r++) {
    if (!u[r]) return KVB_ERROR(KVB_ENULL, "gpu balancekv_block: uniforms of round %u", r);
    for (size_t i = 0; i < H * (mid >> r); i++)
      if (!(u[r][i] >= 0 && u[r][i] < 1))
        return KVB_ERROR(KVB_EDOM, "gpu balancekv_block: u[%u][%zu] = %g not in [0, 1)", r, i, u[r][i]);
    utot += H * (mid >> r);
  }
  size_t kept = mid >> T, nr = c->n - f - mid, kk = f + nr + kept;
  float *uf = malloc((utot ? utot : 1) * sizeof *uf), *hw = malloc(H * kept * sizeof *hw);
  int *hi = malloc(H * kept * sizeof *hi);
  if (!uf || !hw || !hi) {
    free(uf), free(hw), free(hi);
    return KVB_ERROR(KVB_ENOMEM, "gpu balancekv_block (resident): out of memory");
  }
  for (unsigned r = 0, o = 0; r < T; o += (unsigned)(H * (mid >> r)), r++)
    for (size_t i = 0; i < H * (mid >> r); i++) uf[o + i] = (float)u[r][i];
  kvb_gpu *g = bk->g;
  int rc = KVB_OK;
  if (bk->ld != ld) { /* the sequences are rows of the cache's stride: resized with it */
    size_t z = 0;
    for (int sd = 0; sd < 2 && !rc; sd++) {
      kvb_gpu_free(g, bk->cur[sd]), kvb_gpu_free(g, bk->cw[sd]);
      bk->cur[sd] = bk->cw[sd] = NULL;
      rc = kvb_gpu_alloc(g, H * ld * 4, &bk->cur[sd]);
      if (!rc) rc = kvb_gpu_alloc(g, H * ld * 4, &bk->cw[sd]);
      /* defined contents (row 0, weight 0) even where a round writes nothing: a faulty kernel
       * then gives wrong rows, never an index outside the cache */
      if (!rc) rc = fill(g, bk->cur[sd], H, ld, 1, 0);
      if (!rc) rc = fill(g, bk->cw[sd], H, ld, 1, 0);
    }
    if (!rc) {
      kvb_gpu_free(g, bk->S), kvb_gpu_free(g, bk->P), kvb_gpu_free(g, bk->U);
      bk->S = bk->P = bk->U = NULL;
      rc = ensure(g, &bk->S, &z, H * ld * 4);
      z = 0;
      if (!rc) rc = ensure(g, &bk->P, &z, H * ld * 4);
      z = 0;
      if (!rc) rc = ensure(g, &bk->U, &z, H * ld * 4);
    }
    if (!rc) bk->ld = ld;
  }
  if (!rc && !bk->lntab) { /* ln 2^e rounded to float as the host rounds log(w) (gpu_methods.c) */
    float lt[64];
    for (int e = 0; e < 64; e++) lt[e] = (float)log(ldexp(1.0, e));
    rc = kvb_gpu_alloc(g, sizeof lt, &bk->lntab);
    if (!rc) rc = kvb_gpu_write(g, bk->lntab, lt, sizeof lt);
  }
  size_t rc1 = bk->r_cap, rc2 = bk->r_cap;
  if (!rc) rc = ensure(g, &bk->ridx, &rc1, H * kept * 4);
  if (!rc) rc = ensure(g, &bk->rw, &rc2, H * kept * 4);
  if (!rc) bk->r_cap = rc1 < rc2 ? rc1 : rc2;
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(H), A_int(ld), A_int(mid), A_int(f), A_buf(bk->cur[0]), A_buf(bk->cw[0])};
    rc = kvb_gpu_launch(g, "kvb_bkvb_init", groups_for(H * mid), KVB_GPU_WG, 6, a);
  }
  double tk = 0;
  size_t m = mid, poff = 0;
  int side = 0;
  for (unsigned r = 0; !rc && r < T; r++) {
    size_t nblk = (m + b - 1) / b;
    rc = kvb_gpu_write(g, bk->U, uf + poff, H * m * 4);
    double t0 = kvb_gpu_now_s();
    if (!rc) {
      kvb_gpu_arg a[] = {A_int(ld), A_int(d), A_int(dv), A_int(m), A_int(b), A_int(nblk), A_flt(tau / sqrt((double)d)),
                         A_flt(beta), A_flt(c0), A_flt(gamma), A_buf(c->K), A_buf(c->V), A_buf(bk->cur[side]),
                         A_buf(bk->cw[side]), A_buf(bk->U), A_buf(bk->S), A_buf(bk->P)};
      rc = kvb_gpu_launch(g, bk->old_kernels ? "kvb_bkvb_walk" : "kvb_bkvb_gram_walk", H * nblk, KVB_GPU_WG,
                          sizeof a / sizeof *a, a);
    }
    if (!rc) {
      kvb_gpu_arg a[] = {A_int(ld), A_int(m), A_buf(bk->S), A_buf(bk->cur[side]), A_buf(bk->cw[side]),
                         A_buf(bk->cur[!side]), A_buf(bk->cw[!side])};
      rc = bk->old_kernels ? kvb_gpu_launch(g, "kvb_bkvb_halving", H, 1, sizeof a / sizeof *a, a)
                           : kvb_gpu_launch(g, "kvb_bkvb_halving_par", H, KVB_GPU_WG, sizeof a / sizeof *a, a);
    }
    tk += kvb_gpu_now_s() - t0;
    if (!rc && P) rc = kvb_gpu_read(g, bk->P, P + poff, H * m * 4);
    poff += H * m, side = !side, m /= 2;
  }
  /* the results, compacted on the device: kept indices and weights of every head */
  if (!rc) rc = restride(g, H, kept, 1, ld, 0, kept, 0, bk->cur[side], bk->ridx);
  if (!rc) rc = restride(g, H, kept, 1, ld, 0, kept, 0, bk->cw[side], bk->rw);
  if (!rc) rc = kvb_gpu_read(g, bk->ridx, hi, H * kept * 4);
  if (!rc) rc = kvb_gpu_read(g, bk->rw, hw, H * kept * 4);
  /* the weighted query's list, built where it is used */
  size_t l1 = bk->l_cap, l2 = bk->l_cap, l3 = bk->l_cap;
  if (!rc) rc = ensure(g, &bk->idx, &l1, H * kk * 4);
  if (!rc) rc = ensure(g, &bk->ln, &l2, H * kk * 4);
  if (!rc) rc = ensure(g, &bk->ldn, &l3, H * kk * 4);
  if (!rc) {
    bk->l_cap = l1 < l2 ? (l1 < l3 ? l1 : l3) : (l2 < l3 ? l2 : l3);
    kvb_gpu_arg a[] = {A_int(H), A_int(f), A_int(mid), A_int(nr), A_int(kept), A_int(ld), A_int(consistent ? 1 : 0),
                       A_flt(T * log(2.0)), A_buf(bk->cur[side]), A_buf(bk->cw[side]), A_buf(bk->lntab),
                       A_buf(bk->idx), A_buf(bk->ln), A_buf(bk->ldn)};
    rc = kvb_gpu_launch(g, "kvb_bkvb_qlist", groups_for(H * kk), KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = tk;
  if (!rc)
    for (size_t i = 0; i < H * kept; i++) idx[i] = (size_t)hi[i], w[i] = hw[i];
  free(uf), free(hw), free(hi);
  if (rc) return bk->broken = 1, rc;
  bk->kk = kk, bk->have_list = 1;
  return KVB_OK;
}

int kvb_gpu_bkvb_dev_query(kvb_gpu_bkvb_dev *bk, const kvb_gpu_kvcache *c, size_t nq, double scale, const float *Q,
                           float *Z, double *kernel_s) {
  if (!bk || !bk->g || !c || !Q || !Z) return KVB_ERROR(KVB_ENULL, "gpu balancekv_block (resident) query: NULL argument");
  if (bk->broken || c->broken) return KVB_ERROR(KVB_ESTATE, "gpu balancekv_block (resident): a device call failed earlier");
  if (!bk->have_list || bk->ld != c->cap) return KVB_ERROR(KVB_ESTATE, "gpu balancekv_block (resident) query: compress first");
  size_t H = c->Hkv, dk = c->dk, dv = c->dv;
  if (!nq || !kvb_gpu_fits_wquery(H, c->cap, dk, dv, bk->kk, nq) || !isfinite(scale))
    return KVB_ERROR(KVB_EINVAL, "gpu balancekv_block query: need 1 <= queries (gpu_limits.h) and a finite scale");
  if (!kvb_finite_f32(Q, nq * H * dk)) return KVB_ERROR(KVB_EDOM, "gpu balancekv_block query: non-finite query");
  kvb_gpu *g = bk->g;
  size_t need = nq * H * (dk > dv ? dk : dv) * 4, c1 = bk->q_cap, c2 = bk->q_cap;
  int rc = ensure(g, &bk->Q, &c1, need);
  if (!rc) rc = ensure(g, &bk->Z, &c2, need);
  if (rc) return rc;
  bk->q_cap = c1 < c2 ? c1 : c2;
  rc = kvb_gpu_write(g, bk->Q, Q, nq * H * dk * 4);
  double t0 = kvb_gpu_now_s();
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(c->cap), A_int(dk), A_int(dv), A_int(H), A_int(bk->kk), A_flt(scale), A_buf(bk->idx),
                       A_buf(bk->ln), A_buf(bk->ldn), A_buf(bk->Q), A_buf(c->K), A_buf(c->V), A_buf(bk->Z)};
    rc = kvb_gpu_launch(g, "kvb_wquery", H * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, bk->Z, Z, nq * H * dv * 4);
  if (rc) bk->broken = 1;
  return rc;
}

/* ================= uniform sampling ================= */
void kvb_gpu_usample_dev_init(kvb_gpu_usample_dev *us, kvb_gpu *g) {
  memset(us, 0, sizeof *us);
  us->g = g;
}

void kvb_gpu_usample_dev_free(kvb_gpu_usample_dev *us) {
  if (!us || !us->g) return;
  kvb_gpu_buf *all[] = {us->pos, us->lw, us->Kc, us->Vc, us->Q, us->M, us->L, us->O, us->Z};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) kvb_gpu_free(us->g, all[i]);
  memset(us, 0, sizeof *us);
}

int kvb_gpu_usample_dev_compress(kvb_gpu_usample_dev *us, const kvb_gpu_kvcache *c, size_t kk, const int *pos,
                                 size_t nexact, double wmid) {
  if (!us || !us->g || !c || !pos) return KVB_ERROR(KVB_ENULL, "gpu usample (resident): NULL argument");
  if (us->broken || c->broken) return KVB_ERROR(KVB_ESTATE, "gpu usample (resident): a device call failed earlier");
  if (c->half) return KVB_ERROR(KVB_EINVAL, "gpu usample (resident): the gather reads float32 caches only");
  size_t H = c->Hkv, dk = c->dk, dv = c->dv;
  if (!kk || nexact > kk || !(wmid > 0) || !isfinite(wmid) || !kvb_gpu_fits_kvcache(H, c->cap, dk, dv) ||
      !kvb_gpu_fits_gather(H, c->cap, dk, dv, kk) || !kvb_gpu_fits_attention(H, kk, dk, dv, 1, 1))
    return KVB_ERROR(KVB_EINVAL, "gpu usample (resident): need 1 <= rows, exact rows <= rows, a positive finite weight, "
                     "sizes within gpu_limits.h");
  for (size_t i = 0; i < H * kk; i++)
    if (pos[i] < 0 || (size_t)pos[i] >= c->n)
      return KVB_ERROR(KVB_EINVAL, "gpu usample (resident): position %d outside [0, %zu)", pos[i], c->n);
  float *lw = malloc(H * kk * sizeof *lw);
  if (!lw) return KVB_ERROR(KVB_ENOMEM, "gpu usample (resident): out of memory");
  for (size_t h = 0; h < H; h++) /* as kvb_gpu_usample_query rounds them */
    for (size_t j = 0; j < kk; j++) lw[h * kk + j] = j < nexact ? 0.0f : (float)log(wmid);
  kvb_gpu *g = us->g;
  size_t p1 = us->p_cap, p2 = us->p_cap, c1 = us->c_cap, c2 = us->c_cap;
  int rc = ensure(g, &us->pos, &p1, H * kk * 4);
  if (!rc) rc = ensure(g, &us->lw, &p2, H * kk * 4);
  if (!rc) us->p_cap = p1 < p2 ? p1 : p2;
  if (!rc) rc = ensure(g, &us->Kc, &c1, H * kk * (dk > dv ? dk : dv) * 4);
  if (!rc) rc = ensure(g, &us->Vc, &c2, H * kk * (dk > dv ? dk : dv) * 4);
  if (!rc) us->c_cap = c1 < c2 ? c1 : c2;
  if (!rc) rc = kvb_gpu_write(g, us->pos, pos, H * kk * 4);
  if (!rc) rc = kvb_gpu_write(g, us->lw, lw, H * kk * 4);
  if (!rc) { /* group h·kk + j reads row h·cap + pos: the cache's stride is the gather's n */
    kvb_gpu_arg a[] = {A_int(c->cap), A_int(dk), A_int(dv), A_int(kk), A_buf(us->pos), A_buf(c->K), A_buf(c->V),
                       A_buf(us->Kc), A_buf(us->Vc)};
    rc = kvb_gpu_launch(g, "kvb_usample_gather", H * kk, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  free(lw);
  if (rc) return us->broken = 1, rc;
  us->H = H, us->kk = kk, us->dk = dk, us->dv = dv, us->have = 1;
  return KVB_OK;
}

int kvb_gpu_usample_dev_query(kvb_gpu_usample_dev *us, size_t nq, double scale, const float *Q, size_t chunk, float *Z,
                              double *kernel_s) {
  if (!us || !us->g || !Q || !Z) return KVB_ERROR(KVB_ENULL, "gpu usample (resident) query: NULL argument");
  if (us->broken) return KVB_ERROR(KVB_ESTATE, "gpu usample (resident): a device call failed earlier");
  if (!us->have) return KVB_ERROR(KVB_ESTATE, "gpu usample (resident) query: compress first");
  size_t H = us->H, kk = us->kk, dk = us->dk, dv = us->dv;
  if (!nq || !chunk || chunk > KVB_GPU_CHUNK_MAX || !kvb_gpu_fits_attention(H, kk, dk, dv, nq, chunk) || !isfinite(scale))
    return KVB_ERROR(KVB_EINVAL, "gpu usample (resident) query: need queries >= 1, 1 <= chunk <= %d, sizes within "
                     "gpu_limits.h, a finite scale", KVB_GPU_CHUNK_MAX);
  if (!kvb_finite_f32(Q, nq * H * dk)) return KVB_ERROR(KVB_EDOM, "gpu usample (resident) query: non-finite query");
  kvb_gpu *g = us->g;
  size_t nsplit = (kk + chunk - 1) / chunk, ng = nsplit * H * nq;
  size_t qc = us->q_cap, zc = us->z_cap, pc1 = us->part_cap, pc2 = us->part_cap, pc3 = us->part_cap;
  int rc = ensure(g, &us->Q, &qc, nq * H * dk * 4);
  if (!rc) rc = ensure(g, &us->Z, &zc, nq * H * dv * 4);
  if (!rc) rc = ensure(g, &us->M, &pc1, ng * dv * 4);
  if (!rc) rc = ensure(g, &us->L, &pc2, ng * dv * 4);
  if (!rc) rc = ensure(g, &us->O, &pc3, ng * dv * 4);
  if (rc) return rc;
  us->q_cap = qc, us->z_cap = zc, us->part_cap = ng * dv * 4 > us->part_cap ? ng * dv * 4 : us->part_cap;
  rc = kvb_gpu_write(g, us->Q, Q, nq * H * dk * 4);
  double t0 = kvb_gpu_now_s();
  if (!rc) { /* kvb_gpu_attention's launches on the gathered rows (float32, with log-weights) */
    kvb_gpu_arg a[] = {A_int(kk), A_int(dk), A_int(dv), A_int(H), A_int(chunk), A_int(nsplit), A_flt(scale), A_int(0),
                       A_int(1), A_buf(us->Q), A_buf(us->Kc), A_buf(us->Kc), A_buf(us->Vc), A_buf(us->Vc), A_buf(us->lw),
                       A_buf(us->M), A_buf(us->L), A_buf(us->O)};
    rc = kvb_gpu_launch(g, "kvb_attn_split", ng, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(dv), A_int(nsplit), A_buf(us->M), A_buf(us->L), A_buf(us->O), A_buf(us->Z)};
    rc = kvb_gpu_launch(g, "kvb_attn_combine", H * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, us->Z, Z, nq * H * dv * 4);
  if (rc) us->broken = 1;
  return rc;
}

/* gpu_ops.c — the backend dispatch of gpu.h and the host side of the kernels (gpu_ops.h). */
#include "gpu_ops.h"
#include "gpu_host_util.h"
#include "gpu_limits.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KVB_WITH_CUDA
const kvb_gpu_vtable *kvb_gpu_cuda_vtable(void) { return NULL; }
#endif

static const kvb_gpu_vtable *vt_of(kvb_gpu_backend be) {
  return be == KVB_GPU_CUDA ? kvb_gpu_cuda_vtable() : be == KVB_GPU_OPENCL ? kvb_gpu_opencl_vtable() : NULL;
}
#define VT(g) (((const kvb_gpu_head *)(g))->vt)

int kvb_gpu_count(kvb_gpu_backend be) {
  const kvb_gpu_vtable *vt = vt_of(be);
  return vt ? vt->count() : 0;
}
int kvb_gpu_list(kvb_gpu_backend be, char *out, size_t cap) {
  const kvb_gpu_vtable *vt = vt_of(be);
  if (!vt) return -KVB_ERROR(KVB_ENOTFOUND, "this build has no CUDA backend (make builds it in where nvcc is found, unless WITH_CUDA=0)");
  return vt->list(out, cap);
}
int kvb_gpu_open(kvb_gpu_backend be, int index, const char *defines, kvb_gpu **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "gpu open: NULL argument");
  *out = NULL;
  const kvb_gpu_vtable *vt = vt_of(be);
  if (!vt) return KVB_ERROR(KVB_ENOTFOUND, "this build has no CUDA backend (make builds it in where nvcc is found, unless WITH_CUDA=0)");
  return vt->open(index, defines, out);
}
void kvb_gpu_close(kvb_gpu *g) {
  if (g) VT(g)->close(g);
}
const char *kvb_gpu_device_name(const kvb_gpu *g) { return VT(g)->name(g); }
kvb_gpu_backend kvb_gpu_backend_of(const kvb_gpu *g) { return ((const kvb_gpu_head *)g)->be; }
int kvb_gpu_alloc(kvb_gpu *g, size_t bytes, kvb_gpu_buf **out) { return VT(g)->alloc(g, bytes, out); }
void kvb_gpu_free(kvb_gpu *g, kvb_gpu_buf *b) {
  if (b) VT(g)->free_buf(g, b);
}
/* Host <-> device bytes, every backend (gpu.h kvb_gpu_transfer_counts). Device calls are
 * serialized by their callers (gpu_methods.c holds one lock per process), so plain counters do. */
static uint64_t bytes_to_dev, bytes_from_dev;
void kvb_gpu_transfer_counts(uint64_t *to_device, uint64_t *from_device) {
  if (to_device) *to_device = bytes_to_dev;
  if (from_device) *from_device = bytes_from_dev;
}
int kvb_gpu_write(kvb_gpu *g, kvb_gpu_buf *b, const void *src, size_t bytes) {
  bytes_to_dev += bytes;
  return VT(g)->write(g, b, src, bytes);
}
int kvb_gpu_read(kvb_gpu *g, const kvb_gpu_buf *b, void *dst, size_t bytes) {
  bytes_from_dev += bytes;
  return VT(g)->read(g, b, dst, bytes);
}
int kvb_gpu_launch(kvb_gpu *g, const char *name, size_t groups, size_t local, size_t nargs,
                   const kvb_gpu_arg *args) {
  return VT(g)->launch(g, name, groups, local, nargs, args);
}

/* ---- binary16 ---- */
uint16_t kvb_f32_to_f16(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  uint16_t sign = (uint16_t)((b >> 16) & 0x8000u);
  uint32_t absb = b & 0x7fffffffu;
  if (absb >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (absb > 0x7f800000u ? 0x200u : 0));
  if (absb >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: inf */
  int e = (int)(absb >> 23) - 127;
  uint32_t mant = (absb & 0x7fffffu) | 0x800000u;
  if (e < -25) return sign; /* below half the smallest subnormal */
  int shift = e >= -14 ? 13 : 13 + (-14 - e); /* bits of the float mantissa dropped */
  uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) q++; /* round to nearest even */
  if (e >= -14) return (uint16_t)(sign | (((uint32_t)(e + 15) << 10) + (q - 0x400u))); /* carry ok */
  return (uint16_t)(sign | q);
}
float kvb_f16_to_f32(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}

/* ---- helpers ---- */

/* Upload helper: allocates and fills *b (bytes may be 0: a 4-byte dummy). */
static int upload(kvb_gpu *g, const void *src, size_t bytes, kvb_gpu_buf **b) {
  int rc = kvb_gpu_alloc(g, bytes, b);
  if (!rc && bytes) rc = kvb_gpu_write(g, *b, src, bytes);
  return rc;
}

/* The kernels index buffers with 64-bit offsets (kvb_idx); what stays 32-bit (kernel arguments,
 * group ids, int token indices) is checked by gpu_limits.h before anything is uploaded. */
int kvb_gpu_attention(kvb_gpu *g, size_t H, size_t n, size_t dk, size_t dv, size_t nq,
                      double scale, int kv_half, const float *Q, const void *K, const void *V,
                      const float *logw, size_t chunk, float *Z, double *kernel_s) {
  if (!g || !Q || !K || !V || !Z) return KVB_ERROR(KVB_ENULL, "gpu attention: NULL argument");
  if (!H || !n || !dk || !dv || !nq || !chunk)
    return KVB_ERROR(KVB_EINVAL, "gpu attention: H, n, d_key, d_value, queries, chunk must be >= 1");
  if (dk > KVB_GPU_DMAX || dv > KVB_GPU_DMAX || chunk > KVB_GPU_CHUNK_MAX)
    return KVB_ERROR(KVB_EINVAL, "gpu attention: d_key = %zu, d_value = %zu (max %d), chunk = %zu (max %d)",
                     dk, dv, KVB_GPU_DMAX, chunk, KVB_GPU_CHUNK_MAX);
  if (!kvb_gpu_fits_attention(H, n, dk, dv, nq, chunk) || !isfinite(scale))
    return KVB_ERROR(KVB_EINVAL, "gpu attention: sizes exceed the kernels' 32-bit arguments or group ids "
                     "(gpu_limits.h), or scale not finite");
  size_t es = kv_half ? 2 : 4;
  /* NaN/Inf rejected before launch, as on the CPU (kvb_attention_exact) */
  if (!kvb_finite_f32(Q, nq * H * dk) || (logw && !kvb_finite_f32(logw, H * n)) ||
      (kv_half ? !kvb_finite_f16(K, H * n * dk) || !kvb_finite_f16(V, H * n * dv)
               : !kvb_finite_f32(K, H * n * dk) || !kvb_finite_f32(V, H * n * dv)))
    return KVB_ERROR(KVB_EDOM, "gpu attention: non-finite query, key, value or weight");
  size_t nsplit = (n + chunk - 1) / chunk, ng = nsplit * H * nq;
  kvb_gpu_buf *bQ = NULL, *bK = NULL, *bV = NULL, *bW = NULL, *bM = NULL, *bL = NULL, *bO = NULL, *bZ = NULL;
  int rc = upload(g, Q, nq * H * dk * 4, &bQ);
  if (!rc) rc = upload(g, K, H * n * dk * es, &bK);
  if (!rc) rc = upload(g, V, H * n * dv * es, &bV);
  if (!rc) rc = upload(g, logw, logw ? H * n * 4 : 0, &bW);
  if (!rc) rc = kvb_gpu_alloc(g, ng * 4, &bM);
  if (!rc) rc = kvb_gpu_alloc(g, ng * 4, &bL);
  if (!rc) rc = kvb_gpu_alloc(g, ng * dv * 4, &bO);
  if (!rc) rc = kvb_gpu_alloc(g, nq * H * dv * 4, &bZ);
  double t0 = kvb_gpu_now_s();
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(n), A_int(dk), A_int(dv), A_int(H), A_int(chunk), A_int(nsplit),
                       A_flt(scale), A_int(kv_half ? 1 : 0), A_int(logw ? 1 : 0), A_buf(bQ),
                       A_buf(bK), A_buf(bK), A_buf(bV), A_buf(bV), A_buf(bW), A_buf(bM),
                       A_buf(bL), A_buf(bO)};
    rc = kvb_gpu_launch(g, "kvb_attn_split", ng, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(dv), A_int(nsplit), A_buf(bM), A_buf(bL), A_buf(bO), A_buf(bZ)};
    rc = kvb_gpu_launch(g, "kvb_attn_combine", H * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, bZ, Z, nq * H * dv * 4);
  kvb_gpu_buf *all[] = {bQ, bK, bV, bW, bM, bL, bO, bZ};
  for (size_t i = 0; i < 8; i++) kvb_gpu_free(g, all[i]);
  return rc;
}

int kvb_gpu_usample_compress(kvb_gpu *g, size_t H, size_t n, size_t dk, size_t dv, const float *K,
                             const float *V, size_t kk, const int *pos, float *Kc, float *Vc,
                             double *kernel_s) {
  if (!g || !K || !V || !pos || !Kc || !Vc) return KVB_ERROR(KVB_ENULL, "gpu usample compress: NULL argument");
  if (!H || !n || !dk || !dv || !kk || !kvb_gpu_fits_gather(H, n, dk, dv, kk))
    return KVB_ERROR(KVB_EINVAL, "gpu usample compress: sizes must be >= 1 and fit the kernel's 32-bit arguments (gpu_limits.h)");
  for (size_t i = 0; i < H * kk; i++)
    if (pos[i] < 0 || (size_t)pos[i] >= n)
      return KVB_ERROR(KVB_EINVAL, "gpu usample compress: position %d outside [0, %zu)", pos[i], n);
  if (!kvb_finite_f32(K, H * n * dk) || !kvb_finite_f32(V, H * n * dv))
    return KVB_ERROR(KVB_EDOM, "gpu usample compress: non-finite key or value");
  kvb_gpu_buf *bP = NULL, *bK = NULL, *bV = NULL, *bKc = NULL, *bVc = NULL;
  int rc = upload(g, pos, H * kk * sizeof(int), &bP);
  if (!rc) rc = upload(g, K, H * n * dk * 4, &bK);
  if (!rc) rc = upload(g, V, H * n * dv * 4, &bV);
  if (!rc) rc = kvb_gpu_alloc(g, H * kk * dk * 4, &bKc);
  if (!rc) rc = kvb_gpu_alloc(g, H * kk * dv * 4, &bVc);
  double t0 = kvb_gpu_now_s();
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(n), A_int(dk), A_int(dv), A_int(kk), A_buf(bP), A_buf(bK), A_buf(bV), A_buf(bKc), A_buf(bVc)};
    rc = kvb_gpu_launch(g, "kvb_usample_gather", H * kk, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, bKc, Kc, H * kk * dk * 4);
  if (!rc) rc = kvb_gpu_read(g, bVc, Vc, H * kk * dv * 4);
  kvb_gpu_buf *all[] = {bP, bK, bV, bKc, bVc};
  for (size_t i = 0; i < 5; i++) kvb_gpu_free(g, all[i]);
  return rc;
}

int kvb_gpu_usample_query(kvb_gpu *g, size_t H, size_t kk, size_t nexact, double wmid, size_t dk,
                          size_t dv, size_t nq, double scale, const float *Q, const float *Kc,
                          const float *Vc, size_t chunk, float *Z, double *kernel_s) {
  if (!(wmid > 0) || !isfinite(wmid) || nexact > kk)
    return KVB_ERROR(KVB_EINVAL, "gpu usample query: weight %g must be positive and finite, %zu exact rows <= %zu",
                     wmid, nexact, kk);
  size_t nlw = H * kk > 0 ? H * kk : 1;
  float *lw = malloc(nlw * sizeof *lw);
  if (!lw) return KVB_ERROR(KVB_ENOMEM, "gpu usample query: out of memory");
  for (size_t h = 0; h < H; h++)
    for (size_t j = 0; j < kk; j++) lw[h * kk + j] = j < nexact ? 0.0f : (float)log(wmid);
  int rc = kvb_gpu_attention(g, H, kk, dk, dv, nq, scale, 0, Q, Kc, Vc, lw, chunk, Z, kernel_s);
  free(lw);
  return rc;
}

int kvb_gpu_bkvb_compress(kvb_gpu *g, size_t H, size_t n, size_t d, size_t dv, const float *K,
                          const float *V, size_t b, unsigned T, double gamma, double c0,
                          double tau, double beta, const double *const *u, size_t *idx,
                          double *w, float *P, double *kernel_s) {
  if (!g || !K || !V || !u || !idx || !w) return KVB_ERROR(KVB_ENULL, "gpu balancekv_block: NULL argument");
  if (!H || !n || !d || !dv || !b || b > KVB_GPU_BMAX || d > KVB_GPU_DMAX || T >= 31 || (n >> T) == 0 ||
      !kvb_gpu_fits_bkvb(H, n, d, dv, b))
    return KVB_ERROR(KVB_EINVAL, "gpu balancekv_block: need H, n, d, dv >= 1, d <= %d, 1 <= b <= %d, n >= 2^T",
                     KVB_GPU_DMAX, KVB_GPU_BMAX);
  if (!isfinite(gamma) || !isfinite(tau) || !isfinite(beta) || !isfinite(c0) || c0 < 0)
    return KVB_ERROR(KVB_EINVAL, "gpu balancekv_block: gamma, tau, beta must be finite and c0 >= 0");
  if (!kvb_finite_f32(K, H * n * d) || !kvb_finite_f32(V, H * n * dv))
    return KVB_ERROR(KVB_EDOM, "gpu balancekv_block: non-finite key or value");
  size_t utot = 0;
  for (unsigned r = 0; r < T; r++) {
    if (!u[r]) return KVB_ERROR(KVB_ENULL, "gpu balancekv_block: uniforms of round %u", r);
    for (size_t i = 0; i < H * (n >> r); i++)
      if (!(u[r][i] >= 0 && u[r][i] < 1))
        return KVB_ERROR(KVB_EDOM, "gpu balancekv_block: u[%u][%zu] = %g not in [0, 1)", r, i, u[r][i]);
    utot += H * (n >> r);
  }
  int *cur = malloc(H * n * sizeof *cur);
  float *cw = malloc(H * n * sizeof *cw), *uf = malloc((utot ? utot : 1) * sizeof *uf);
  if (!cur || !cw || !uf) {
    free(cur), free(cw), free(uf);
    return KVB_ERROR(KVB_ENOMEM, "gpu balancekv_block: out of memory");
  }
  for (size_t h = 0; h < H; h++)
    for (size_t i = 0; i < n; i++) cur[h * n + i] = (int)i, cw[h * n + i] = 1.0f;
  for (size_t r = 0, o = 0; r < T; o += H * (n >> r), r++)
    for (size_t i = 0; i < H * (n >> r); i++) uf[o + i] = (float)u[r][i];
  kvb_gpu_buf *bK = NULL, *bV = NULL, *bC[2] = {NULL, NULL}, *bW[2] = {NULL, NULL}, *bU = NULL, *bS = NULL, *bP = NULL;
  int rc = upload(g, K, H * n * d * 4, &bK);
  if (!rc) rc = upload(g, V, H * n * dv * 4, &bV);
  if (!rc) rc = upload(g, cur, H * n * 4, &bC[0]);
  if (!rc) rc = upload(g, cw, H * n * 4, &bW[0]);
  if (!rc) rc = kvb_gpu_alloc(g, H * n * 4, &bC[1]);
  if (!rc) rc = kvb_gpu_alloc(g, H * n * 4, &bW[1]);
  if (!rc) rc = kvb_gpu_alloc(g, H * n * 4, &bS);
  if (!rc) rc = kvb_gpu_alloc(g, H * n * 4, &bP);
  if (!rc) rc = kvb_gpu_alloc(g, H * n * 4, &bU);
  double t0 = kvb_gpu_now_s(), tk = 0;
  size_t m = n, poff = 0;
  int side = 0;
  for (unsigned r = 0; !rc && r < T; r++) {
    size_t nblk = (m + b - 1) / b;
    rc = kvb_gpu_write(g, bU, uf + poff, H * m * 4);
    t0 = kvb_gpu_now_s();
    if (!rc) {
      kvb_gpu_arg a[] = {A_int(n), A_int(d), A_int(dv), A_int(m), A_int(b), A_int(nblk),
                         A_flt(tau / sqrt((double)d)), A_flt(beta), A_flt(c0), A_flt(gamma),
                         A_buf(bK), A_buf(bV), A_buf(bC[side]), A_buf(bW[side]), A_buf(bU), A_buf(bS), A_buf(bP)};
      rc = kvb_gpu_launch(g, "kvb_bkvb_walk", H * nblk, KVB_GPU_WG, sizeof a / sizeof *a, a);
    }
    if (!rc) {
      kvb_gpu_arg a[] = {A_int(n), A_int(m), A_buf(bS), A_buf(bC[side]), A_buf(bW[side]), A_buf(bC[!side]), A_buf(bW[!side])};
      rc = kvb_gpu_launch(g, "kvb_bkvb_halving", H, 1, sizeof a / sizeof *a, a);
    }
    tk += kvb_gpu_now_s() - t0;
    if (!rc && P) rc = kvb_gpu_read(g, bP, P + poff, H * m * 4);
    poff += H * m;
    side = !side;
    m /= 2;
  }
  if (kernel_s) *kernel_s = tk;
  if (!rc) rc = kvb_gpu_read(g, bC[side], cur, H * n * 4);
  if (!rc) rc = kvb_gpu_read(g, bW[side], cw, H * n * 4);
  if (!rc)
    for (size_t h = 0; h < H; h++)
      for (size_t k = 0; k < (n >> T); k++) idx[h * (n >> T) + k] = (size_t)cur[h * n + k], w[h * (n >> T) + k] = cw[h * n + k];
  kvb_gpu_buf *all[] = {bK, bV, bC[0], bC[1], bW[0], bW[1], bU, bS, bP};
  for (size_t i = 0; i < 9; i++) kvb_gpu_free(g, all[i]);
  free(cur), free(cw), free(uf);
  return rc;
}

int kvb_gpu_wquery(kvb_gpu *g, size_t H, size_t n, size_t dk, size_t dv, size_t kk, const int *idx,
                   const float *lnum, const float *lden, size_t nq, double scale, const float *Q,
                   const float *K, const float *V, float *Z, double *kernel_s) {
  if (!g || !idx || !lnum || !lden || !Q || !K || !V || !Z)
    return KVB_ERROR(KVB_ENULL, "gpu weighted query: NULL argument");
  if (!H || !n || !dk || !dv || !kk || !nq || dk > KVB_GPU_DMAX || dv > KVB_GPU_DMAX)
    return KVB_ERROR(KVB_EINVAL, "gpu weighted query: H, n, d_key, d_value, entries, queries must be >= 1, d <= %d",
                     KVB_GPU_DMAX);
  if (!kvb_gpu_fits_wquery(H, n, dk, dv, kk, nq) || !isfinite(scale))
    return KVB_ERROR(KVB_EINVAL, "gpu weighted query: sizes exceed the kernel's 32-bit arguments (gpu_limits.h) or scale not finite");
  for (size_t i = 0; i < H * kk; i++)
    if (idx[i] < 0 || (size_t)idx[i] >= n)
      return KVB_ERROR(KVB_EINVAL, "gpu weighted query: index %d outside [0, %zu)", idx[i], n);
  if (!kvb_finite_f32(Q, nq * H * dk) || !kvb_finite_f32(K, H * n * dk) || !kvb_finite_f32(V, H * n * dv) ||
      !kvb_finite_f32(lnum, H * kk) || !kvb_finite_f32(lden, H * kk))
    return KVB_ERROR(KVB_EDOM, "gpu weighted query: non-finite query, key, value or log-weight");
  kvb_gpu_buf *b[8] = {NULL};
  int rc = upload(g, idx, H * kk * 4, &b[0]);
  if (!rc) rc = upload(g, lnum, H * kk * 4, &b[1]);
  if (!rc) rc = upload(g, lden, H * kk * 4, &b[2]);
  if (!rc) rc = upload(g, Q, nq * H * dk * 4, &b[3]);
  if (!rc) rc = upload(g, K, H * n * dk * 4, &b[4]);
  if (!rc) rc = upload(g, V, H * n * dv * 4, &b[5]);
  if (!rc) rc = kvb_gpu_alloc(g, nq * H * dv * 4, &b[6]);
  double t0 = kvb_gpu_now_s();
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(n), A_int(dk), A_int(dv), A_int(H), A_int(kk), A_flt(scale), A_buf(b[0]),
                       A_buf(b[1]), A_buf(b[2]), A_buf(b[3]), A_buf(b[4]), A_buf(b[5]), A_buf(b[6])};
    rc = kvb_gpu_launch(g, "kvb_wquery", H * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, b[6], Z, nq * H * dv * 4);
  for (size_t i = 0; i < 7; i++) kvb_gpu_free(g, b[i]);
  return rc;
}

/* ---- SubGen ---- */
static void sg_release(kvb_gpu_subgen *st) {
  free(st->mc), free(st->rep), free(st->rep_pos), free(st->cnt), free(st->S), free(st->S_pos);
  free(st->mu), free(st->Mk), free(st->Mv), free(st->M_pos);
}

/* Allocates nx's arrays (zeroed; slots null) for st's sizes and cap clusters per head. */
static int sg_alloc(const kvb_gpu_subgen *st, size_t cap, kvb_gpu_subgen *nx) {
  size_t H = st->H, dk = st->dk, dv = st->dv, t = st->t, s = st->s, c = cap ? cap : 1;
  *nx = *st;
  nx->cap = cap;
  nx->mc = calloc(H, sizeof(int)), nx->mu = calloc(H, sizeof(float));
  nx->rep = calloc(H * c * dk, sizeof(float)), nx->rep_pos = calloc(H * c, sizeof(int));
  nx->cnt = calloc(H * c, sizeof(int)), nx->S = calloc(H * c * t * dk, sizeof(float));
  nx->S_pos = calloc(H * c * t, sizeof(int));
  /* null slots are zero vectors: the query multiplies them by 0, which must not meet a NaN */
  nx->Mk = calloc(H * s * dk, sizeof(float)), nx->Mv = calloc(H * s * dv, sizeof(float));
  nx->M_pos = malloc(H * s * sizeof(int));
  if (!nx->mc || !nx->mu || !nx->rep || !nx->rep_pos || !nx->cnt || !nx->S || !nx->S_pos || !nx->Mk ||
      !nx->Mv || !nx->M_pos) {
    sg_release(nx);
    memset(nx, 0, sizeof *nx);
    return KVB_ERROR(KVB_ENOMEM, "gpu subgen: out of memory for %zu clusters per head", cap);
  }
  for (size_t i = 0; i < H * s; i++) nx->M_pos[i] = -1;
  return KVB_OK;
}

/* nx = a copy of st with room for cap >= st->cap clusters per head. */
static int sg_copy(const kvb_gpu_subgen *st, size_t cap, kvb_gpu_subgen *nx) {
  size_t H = st->H, dk = st->dk, dv = st->dv, t = st->t, s = st->s, oc = st->cap;
  int rc = sg_alloc(st, cap, nx);
  if (rc) return rc;
  memcpy(nx->mc, st->mc, H * sizeof(int)), memcpy(nx->mu, st->mu, H * sizeof(float));
  memcpy(nx->Mk, st->Mk, H * s * dk * sizeof(float)), memcpy(nx->Mv, st->Mv, H * s * dv * sizeof(float));
  memcpy(nx->M_pos, st->M_pos, H * s * sizeof(int));
  for (size_t h = 0; h < H && oc; h++) {
    memcpy(nx->rep + h * cap * dk, st->rep + h * oc * dk, oc * dk * sizeof(float));
    memcpy(nx->rep_pos + h * cap, st->rep_pos + h * oc, oc * sizeof(int));
    memcpy(nx->cnt + h * cap, st->cnt + h * oc, oc * sizeof(int));
    memcpy(nx->S + h * cap * t * dk, st->S + h * oc * t * dk, oc * t * dk * sizeof(float));
    memcpy(nx->S_pos + h * cap * t, st->S_pos + h * oc * t, oc * t * sizeof(int));
  }
  return KVB_OK;
}

int kvb_gpu_subgen_init(kvb_gpu_subgen *st, size_t H, size_t dk, size_t dv, size_t t, size_t s,
                        double delta) {
  if (!st) return KVB_ERROR(KVB_ENULL, "gpu subgen init: NULL state");
  memset(st, 0, sizeof *st);
  if (!H || !dk || !dv || !t || !s || dk > KVB_GPU_DMAX || dv > KVB_GPU_DMAX || !(delta > 0) || !isfinite(delta) ||
      !kvb_gpu_fits_subgen(H, dk, dv, t, s, 0, 0, 0, 0))
    return KVB_ERROR(KVB_EINVAL, "gpu subgen: need H, d_key, d_value, t, s >= 1, d <= %d, finite δ > 0", KVB_GPU_DMAX);
  kvb_gpu_subgen z;
  memset(&z, 0, sizeof z);
  z.H = H, z.dk = dk, z.dv = dv, z.t = t, z.s = s, z.delta = delta;
  return sg_alloc(&z, 0, st);
}

void kvb_gpu_subgen_free(kvb_gpu_subgen *st) {
  if (!st) return;
  sg_release(st);
  memset(st, 0, sizeof *st);
}

int kvb_gpu_subgen_update(kvb_gpu *g, kvb_gpu_subgen *st, size_t nt, const float *K, const float *V,
                          const float *u, double *kernel_s) {
  if (!g || !st || !st->mc || !K || !V || !u) return KVB_ERROR(KVB_ENULL, "gpu subgen update: NULL argument");
  size_t H = st->H, dk = st->dk, dv = st->dv, t = st->t, s = st->s, mmax = 0;
  if (!nt) return KVB_OK;
  for (size_t h = 0; h < H; h++) mmax = (size_t)st->mc[h] > mmax ? (size_t)st->mc[h] : mmax;
  size_t cap = st->cap >= mmax + nt ? st->cap : 2 * (mmax + nt); /* room for nt new clusters */
  if (!kvb_gpu_fits_subgen(H, dk, dv, t, s, cap, st->n + nt, nt, 0))
    return KVB_ERROR(KVB_EINVAL, "gpu subgen update: sizes exceed the kernel's 32-bit arguments (gpu_limits.h)");
  if (!kvb_finite_f32(K, H * nt * dk) || !kvb_finite_f32(V, H * nt * dv))
    return KVB_ERROR(KVB_EDOM, "gpu subgen update: non-finite key or value");
  for (size_t i = 0; i < H * nt * (t + s); i++)
    if (!(u[i] >= 0 && u[i] < 1)) return KVB_ERROR(KVB_EDOM, "gpu subgen update: u[%zu] = %g not in [0, 1)", i, u[i]);
  kvb_gpu_subgen nx;
  int rc = sg_copy(st, cap, &nx);
  if (rc) return rc;
  size_t c = cap;
  kvb_gpu_buf *b[14] = {NULL};
  rc = upload(g, K, H * nt * dk * 4, &b[0]);
  if (!rc) rc = upload(g, V, H * nt * dv * 4, &b[1]);
  if (!rc) rc = upload(g, u, H * nt * (t + s) * 4, &b[2]);
  if (!rc) rc = upload(g, nx.mc, H * 4, &b[3]);
  if (!rc) rc = upload(g, nx.rep, H * c * dk * 4, &b[4]);
  if (!rc) rc = upload(g, nx.rep_pos, H * c * 4, &b[5]);
  if (!rc) rc = upload(g, nx.cnt, H * c * 4, &b[6]);
  if (!rc) rc = upload(g, nx.S, H * c * t * dk * 4, &b[7]);
  if (!rc) rc = upload(g, nx.S_pos, H * c * t * 4, &b[8]);
  if (!rc) rc = upload(g, nx.mu, H * 4, &b[9]);
  if (!rc) rc = upload(g, nx.Mk, H * s * dk * 4, &b[10]);
  if (!rc) rc = upload(g, nx.Mv, H * s * dv * 4, &b[11]);
  if (!rc) rc = upload(g, nx.M_pos, H * s * 4, &b[12]);
  double t0 = kvb_gpu_now_s();
  if (!rc) {
    double d2 = st->delta * st->delta;
    kvb_gpu_arg a[] = {A_int(nt), A_int(dk), A_int(dv), A_int(t), A_int(s), A_int(c), A_int(st->n),
                       A_flt(d2 < 3.4e38 ? d2 : 3.4e38), A_buf(b[0]), A_buf(b[1]), A_buf(b[2]), A_buf(b[3]),
                       A_buf(b[4]), A_buf(b[5]), A_buf(b[6]), A_buf(b[7]), A_buf(b[8]), A_buf(b[9]),
                       A_buf(b[10]), A_buf(b[11]), A_buf(b[12])};
    rc = kvb_gpu_launch(g, "kvb_subgen_update", H, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, b[3], nx.mc, H * 4);
  if (!rc) rc = kvb_gpu_read(g, b[4], nx.rep, H * c * dk * 4);
  if (!rc) rc = kvb_gpu_read(g, b[5], nx.rep_pos, H * c * 4);
  if (!rc) rc = kvb_gpu_read(g, b[6], nx.cnt, H * c * 4);
  if (!rc) rc = kvb_gpu_read(g, b[7], nx.S, H * c * t * dk * 4);
  if (!rc) rc = kvb_gpu_read(g, b[8], nx.S_pos, H * c * t * 4);
  if (!rc) rc = kvb_gpu_read(g, b[9], nx.mu, H * 4);
  if (!rc) rc = kvb_gpu_read(g, b[10], nx.Mk, H * s * dk * 4);
  if (!rc) rc = kvb_gpu_read(g, b[11], nx.Mv, H * s * dv * 4);
  if (!rc) rc = kvb_gpu_read(g, b[12], nx.M_pos, H * s * 4);
  for (size_t i = 0; i < 13; i++) kvb_gpu_free(g, b[i]);
  if (rc) {
    sg_release(&nx);
    return rc;
  }
  nx.n = st->n + nt;
  sg_release(st);
  *st = nx;
  return KVB_OK;
}

int kvb_gpu_subgen_query(kvb_gpu *g, const kvb_gpu_subgen *st, size_t nq, double scale,
                         const float *Q, float *Z, double *kernel_s) {
  if (!g || !st || !st->mc || !Q || !Z) return KVB_ERROR(KVB_ENULL, "gpu subgen query: NULL argument");
  size_t H = st->H, dk = st->dk, dv = st->dv, t = st->t, s = st->s, c = st->cap;
  if (st->n == 0) return KVB_ERROR(KVB_ESTATE, "gpu subgen query: no token has been streamed yet");
  if (!nq || !kvb_gpu_fits_subgen(H, dk, dv, t, s, c, st->n, 0, nq) || !isfinite(scale))
    return KVB_ERROR(KVB_EINVAL, "gpu subgen query: need 1 <= queries (32-bit indexing) and a finite scale");
  if (!kvb_finite_f32(Q, nq * H * dk)) return KVB_ERROR(KVB_EDOM, "gpu subgen query: non-finite query");
  kvb_gpu_buf *b[10] = {NULL};
  int rc = upload(g, Q, nq * H * dk * 4, &b[0]);
  if (!rc) rc = upload(g, st->mc, H * 4, &b[1]);
  if (!rc) rc = upload(g, st->cnt, H * c * 4, &b[2]);
  if (!rc) rc = upload(g, st->S, H * c * t * dk * 4, &b[3]);
  if (!rc) rc = upload(g, st->mu, H * 4, &b[4]);
  if (!rc) rc = upload(g, st->Mk, H * s * dk * 4, &b[5]);
  if (!rc) rc = upload(g, st->Mv, H * s * dv * 4, &b[6]);
  if (!rc) rc = upload(g, st->M_pos, H * s * 4, &b[7]);
  if (!rc) rc = kvb_gpu_alloc(g, nq * H * dv * 4, &b[8]);
  double t0 = kvb_gpu_now_s();
  if (!rc) {
    kvb_gpu_arg a[] = {A_int(dk), A_int(dv), A_int(t), A_int(s), A_int(c), A_int(H), A_flt(scale), A_buf(b[0]),
                       A_buf(b[1]), A_buf(b[2]), A_buf(b[3]), A_buf(b[4]), A_buf(b[5]), A_buf(b[6]), A_buf(b[7]),
                       A_buf(b[8])};
    rc = kvb_gpu_launch(g, "kvb_subgen_query", H * nq, KVB_GPU_WG, sizeof a / sizeof *a, a);
  }
  if (kernel_s) *kernel_s = kvb_gpu_now_s() - t0;
  if (!rc) rc = kvb_gpu_read(g, b[8], Z, nq * H * dv * 4);
  for (size_t i = 0; i < 9; i++) kvb_gpu_free(g, b[i]);
  return rc;
}

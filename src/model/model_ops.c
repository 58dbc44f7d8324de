/* model_ops.c — the pieces both model files use (model_ops.h). */
#include "model_ops.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"
#include "parallel.h"
#include "simd.h"
#include "vexpf.h"

/* Dequantizes tensor `name`, which must have shape [ne0, ne1] (ne1 = 1 for vectors), into *at
 * and advances it. */
int kvb_mo_take(const kvb_gguf *g, const char *name, uint64_t ne0, uint64_t ne1, float **at,
                float **dst) {
  const kvb_gguf_tensor *t = kvb_gguf_tensor_find(g, name);
  if (!t) return KVB_ERROR(KVB_EFORMAT, "the model has no tensor \"%s\"", name);
  if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1)
    return KVB_ERROR(KVB_EFORMAT, "tensor \"%s\" has shape [%llu, %llu], expected [%llu, %llu]",
                     name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                     (unsigned long long)ne0, (unsigned long long)ne1);
  int st = kvb_gguf_dequant(t->type, t->data, t->n_elements, *at);
  if (st) {
    char why[256]; /* the message buffer is reused by KVB_ERROR: copy it first */
    snprintf(why, sizeof why, "%s", kvb_strerror_last());
    return KVB_ERROR(KVB_EFORMAT, "tensor \"%s\": %s", name, why);
  }
  for (uint64_t i = 0; i < t->n_elements; i++)
    if (!isfinite((*at)[i])) return KVB_ERROR(KVB_EFORMAT, "tensor \"%s\" holds a non-finite value", name);
  *dst = *at;
  *at += t->n_elements;
  return KVB_OK;
}

int kvb_mo_get_int(const kvb_gguf *g, const char *key, int lo, int hi, int *out) {
  uint64_t v;
  int st = kvb_gguf_get_uint(g, key, &v);
  if (st) return KVB_EFORMAT; /* the message kvb_gguf_get_uint recorded names the key */
  if (v < (uint64_t)lo || v > (uint64_t)hi)
    return KVB_ERROR(KVB_EFORMAT, "GGUF metadata %s = %llu is outside [%d, %d]", key,
                     (unsigned long long)v, lo, hi);
  *out = (int)v;
  return KVB_OK;
}

void kvb_mo_rmsnorm(const float *x, const float *w, size_t d, double eps, float *out) {
  double ss = 0;
  for (size_t i = 0; i < d; i++) ss += (double)x[i] * x[i];
  float r = (float)(1.0 / sqrt(ss / (double)d + eps));
  for (size_t i = 0; i < d; i++) out[i] = x[i] * r * w[i];
}

/* y[n][out] (+)= x[n][in] · W[out][in]ᵀ */
void kvb_mo_matmul(const float *x, const float *W, size_t n, size_t in, size_t out, float *y, float beta) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)out, (int)in, 1.0f, x, (int)in,
              W, (int)in, beta, y, (int)out);
}

#define ACT_CHUNK 1024 /* entries whose exponentials are formed at once (on the stack) */

void kvb_mo_swiglu(float *g, const float *u, size_t n) {
  int lvl = kvb_vexpf_level();
  float e[ACT_CHUNK];
  for (size_t i0 = 0; i0 < n; i0 += ACT_CHUNK) {
    size_t c = n - i0 < ACT_CHUNK ? n - i0 : ACT_CHUNK;
    for (size_t i = 0; i < c; i++) e[i] = -g[i0 + i];
    kvb_vexpf_inplace(e, c, lvl);
    for (size_t i = 0; i < c; i++) g[i0 + i] = g[i0 + i] / (1.0f + e[i]) * u[i0 + i];
  }
}

void kvb_mo_geglu(float *g, const float *u, size_t n) {
  const float c2 = -2.0f * 0.7978845608028654f; /* −2√(2/π) */
  int lvl = kvb_vexpf_level();
  float e[ACT_CHUNK];
  for (size_t i0 = 0; i0 < n; i0 += ACT_CHUNK) {
    size_t c = n - i0 < ACT_CHUNK ? n - i0 : ACT_CHUNK;
    for (size_t i = 0; i < c; i++) {
      float x = g[i0 + i], z = c2 * (x + 0.044715f * x * x * x);
      e[i] = z > 80.0f ? 80.0f : z < -80.0f ? -80.0f : z;
    }
    kvb_vexpf_inplace(e, c, lvl);
    for (size_t i = 0; i < c; i++) g[i0 + i] = g[i0 + i] / (1.0f + e[i]) * u[i0 + i];
  }
}

/* The softmax's row passes over a score tile (max; subtract; sum), AVX2 where the CPU has it
 * (simd.h): per score they cost as much as the 2·hd flops of its two products at hd = 64, so
 * scalar loops would double the attention's time. The max and the subtraction give the same
 * bits either way; the sum adds in 8 lanes (its rounding differs from the scalar order, well
 * below the float32 products' own). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KVB_MO_AVX2 1
#include <immintrin.h>
__attribute__((target("avx2,fma"))) static float row_max_avx2(const float *s, size_t n) {
  __m256 m = _mm256_set1_ps(-INFINITY);
  size_t t = 0;
  for (; t + 8 <= n; t += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + t));
  float l[8], mx = -INFINITY;
  _mm256_storeu_ps(l, m);
  for (int i = 0; i < 8; i++) mx = l[i] > mx ? l[i] : mx;
  for (; t < n; t++) mx = s[t] > mx ? s[t] : mx;
  return mx;
}
__attribute__((target("avx2,fma"))) static void row_sub_avx2(float *s, size_t n, float m) {
  __m256 v = _mm256_set1_ps(m);
  size_t t = 0;
  for (; t + 8 <= n; t += 8) _mm256_storeu_ps(s + t, _mm256_sub_ps(_mm256_loadu_ps(s + t), v));
  for (; t < n; t++) s[t] -= m;
}
__attribute__((target("avx2,fma"))) static float row_sum_avx2(const float *s, size_t n) {
  __m256 a = _mm256_setzero_ps();
  size_t t = 0;
  for (; t + 8 <= n; t += 8) a = _mm256_add_ps(a, _mm256_loadu_ps(s + t));
  float l[8], z = 0;
  _mm256_storeu_ps(l, a);
  for (int i = 0; i < 8; i++) z += l[i];
  for (; t < n; t++) z += s[t];
  return z;
}
#endif

static float row_max(const float *s, size_t n, int avx2) {
#ifdef KVB_MO_AVX2
  if (avx2) return row_max_avx2(s, n);
#endif
  (void)avx2;
  float mx = s[0];
  for (size_t t = 1; t < n; t++) mx = s[t] > mx ? s[t] : mx;
  return mx;
}
static void row_sub(float *s, size_t n, float m, int avx2) {
#ifdef KVB_MO_AVX2
  if (avx2) {
    row_sub_avx2(s, n, m);
    return;
  }
#endif
  (void)avx2;
  for (size_t t = 0; t < n; t++) s[t] -= m;
}
static float row_sum(const float *s, size_t n, int avx2) {
#ifdef KVB_MO_AVX2
  if (avx2) return row_sum_avx2(s, n);
#endif
  (void)avx2;
  float z = 0;
  for (size_t t = 0; t < n; t++) z += s[t];
  return z;
}

typedef struct {
  const float *q, *k, *v;
  size_t n, H, grp, hd, window, nqb, ldo;
  float scale;
  int vexp, avx2;
  float *scratch; /* per worker: S [QB][KB], O [QB][hd] */
  double *lsum;   /* per worker: the normalizers of the block's rows [QB] */
  float *att;
} attn_job;

/* One (head, query block): the online softmax over the key tiles the block's rows can see. */
static int attn_item(size_t it, void *arg, int worker) {
  const attn_job *J = arg;
  size_t j = it / J->nqb, b0 = (it % J->nqb) * KVB_MO_QB, hd = J->hd, n = J->n;
  size_t rows = n - b0 < KVB_MO_QB ? n - b0 : KVB_MO_QB;
  const float *Q = J->q + (j * n + b0) * hd, *K = J->k + (j / J->grp) * n * hd,
              *V = J->v + (j / J->grp) * n * hd;
  float *S = J->scratch + (size_t)worker * (KVB_MO_QB * (KVB_MO_KB + hd)), *O = S + KVB_MO_QB * KVB_MO_KB;
  double *l = J->lsum + (size_t)worker * KVB_MO_QB;
  float m[KVB_MO_QB];
  for (size_t r = 0; r < rows; r++) m[r] = -INFINITY, l[r] = 0;
  memset(O, 0, rows * hd * sizeof *O);
  /* keys the block can see: [lo of its first row, its last row] */
  size_t klo = J->window && b0 + 1 > J->window ? b0 + 1 - J->window : 0, khi = b0 + rows;
  for (size_t k0 = klo; k0 < khi; k0 += KVB_MO_KB) {
    size_t kt = khi - k0 < KVB_MO_KB ? khi - k0 : KVB_MO_KB;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)kt, (int)hd, J->scale, Q,
                (int)hd, K + k0 * hd, (int)hd, 0.0f, S, (int)kt);
    for (size_t r = 0; r < rows; r++) {
      size_t p = b0 + r, lo = J->window && p + 1 > J->window ? p + 1 - J->window : 0;
      size_t a = lo > k0 ? lo - k0 : 0, e = p + 1 < k0 + kt ? p + 1 - k0 : kt; /* valid [a, e) */
      float *s = S + r * kt;
      if (p + 1 <= k0 || a >= e) { /* the tile lies after the row or before its window */
        memset(s, 0, kt * sizeof *s);
        continue;
      }
      float mx = row_max(s + a, e - a, J->avx2);
      if (mx > m[r]) { /* a new maximum: rescale what the row holds */
        float c = expf(m[r] - mx);
        l[r] *= c;
        for (size_t i = 0; i < hd; i++) O[r * hd + i] *= c;
        m[r] = mx;
      }
      row_sub(s + a, e - a, m[r], J->avx2);
      kvb_vexpf_inplace(s + a, e - a, J->vexp);
      l[r] += row_sum(s + a, e - a, J->avx2);
      memset(s, 0, a * sizeof *s);
      memset(s + e, 0, (kt - e) * sizeof *s);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)hd, (int)kt, 1.0f, S,
                (int)kt, V + k0 * hd, (int)hd, 1.0f, O, (int)hd);
  }
  for (size_t r = 0; r < rows; r++) {
    float iz = (float)(1.0 / l[r]), *dst = J->att + (b0 + r) * J->ldo + j * hd;
    for (size_t i = 0; i < hd; i++) dst[i] = O[r * hd + i] * iz;
  }
  return 0;
}

int kvb_mo_attention(const float *q, const float *k, const float *v, size_t n, size_t H,
                     size_t Hk, size_t hd, float scale, size_t window, float *att, size_t ldo) {
  if (!q || !k || !v || !att) return KVB_ERROR(KVB_ENULL, "kvb_mo_attention: NULL argument");
  if (n == 0 || H == 0 || Hk == 0 || H % Hk || hd == 0)
    return KVB_ERROR(KVB_EINVAL, "kvb_mo_attention: %zu tokens, %zu heads over %zu", n, H, Hk);
  int threads = kvb_threads_default();
  attn_job J = {q, k, v, n, H, H / Hk, hd, window >= n ? 0 : window, (n + KVB_MO_QB - 1) / KVB_MO_QB,
                ldo, scale, kvb_vexpf_level(), kvb_simd_level() >= KVB_SIMD_AVX2, NULL, NULL, att};
  if ((size_t)threads > H * J.nqb) threads = (int)(H * J.nqb);
  J.scratch = malloc((size_t)threads * KVB_MO_QB * (KVB_MO_KB + hd) * sizeof(float));
  J.lsum = malloc((size_t)threads * KVB_MO_QB * sizeof(double));
  int st = J.scratch && J.lsum ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory for attention scratch");
  /* every item's small products on one BLAS thread, whatever the worker count, so the bits do
   * not depend on $KVBOUND_THREADS or OPENBLAS_NUM_THREADS (kvb_parallel_for does this itself
   * only for more than one worker) */
  int blas_prev = openblas_get_num_threads();
  if (!st && blas_prev != 1) openblas_set_num_threads(1);
  if (!st) st = kvb_parallel_for(H * J.nqb, threads, attn_item, &J);
  if (blas_prev != 1) openblas_set_num_threads(blas_prev);
  free(J.scratch);
  free(J.lsum);
  return st;
}

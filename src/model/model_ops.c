/* model_ops.c — the pieces both model files use (model_ops.h). */
#include "model_ops.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
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

/* The softmax's row passes over a score tile: the maximum, then e_t = exp(s_t − m) in place and
 * their sum, AVX2 where the CPU has it (simd.h). Per score these cost about as much as the
 * 2·hd flops of its two products at hd = 64, so they are one fused pass after the maximum.
 *
 * The exponential is a float one (soft_exp below), not the C library's: the library-exact
 * vector expf (vexpf.h) works in double with a table gather and took 1.1 ns per score on Zen 4
 * (a third of the attention's sgemm time per score at hd = 64), while this one takes a few
 * multiply-adds. llama.cpp's softmax also uses its own vector expf (ggml-cpu's ggml_v_expf), and
 * the model's arithmetic is float32 throughout, so the 1–2 ulp of this exp sit far below what the
 * golden files allow. Both paths do the same float operations in the same order (separate
 * multiplies and adds: ISO C mode, no contraction), so the exponentials are the same bits on
 * every instruction set; only the sum's order differs (8 lanes on AVX2), as before. */
#define SOFT_LOG2E 1.44269504088896341f
#define SOFT_LN2_HI 0.693359375f           /* ln 2 = SOFT_LN2_HI + SOFT_LN2_LO (Cody–Waite) */
#define SOFT_LN2_LO -2.12194440e-4f
#define SOFT_ROUND 12582912.0f             /* 1.5·2^23: x + it − it rounds x to an integer */
#define SOFT_MIN -87.0f                    /* below: 0 (e^−87 < 2^−125 of the row's largest term, 1) */
/* e^r on |r| <= ln2/2: the minimax polynomial of Cephes' expf (S. Moshier, Cephes Math Library,
 * expf.c), 1 + r + r²·P(r). */
#define SOFT_P0 1.9875691500e-4f
#define SOFT_P1 1.3981999507e-3f
#define SOFT_P2 8.3334519073e-3f
#define SOFT_P3 4.1665795894e-2f
#define SOFT_P4 1.6666665459e-1f
#define SOFT_P5 5.0000001201e-1f

/* e^x for x <= 0 (a score minus its row's maximum); 0 below SOFT_MIN. */
static float soft_exp(float x) {
  if (!(x >= SOFT_MIN)) return 0.0f;
  float t = x * SOFT_LOG2E + SOFT_ROUND, k = t - SOFT_ROUND;
  float r = x - k * SOFT_LN2_HI;
  r = r - k * SOFT_LN2_LO;
  float r2 = r * r;
  float y = SOFT_P0 * r + SOFT_P1;
  y = y * r + SOFT_P2;
  y = y * r + SOFT_P3;
  y = y * r + SOFT_P4;
  y = y * r + SOFT_P5;
  y = y * r2 + r;
  y = y + 1.0f;
  union { uint32_t u; float f; } sc = {(uint32_t)((int32_t)k + 127) << 23}; /* 2^k, k >= −126 */
  return y * sc.f;
}

/* silu(x)·v = x·σ(x)·v with σ(x) = 1 / (1 + e^−x), formed from e = e^−|x| <= 1 (soft_exp's
 * domain; no overflow for very negative x): σ(x) = 1/(1 + e) for x >= 0, e/(1 + e) below. */
static float swiglu_one(float x, float v) {
  float e = soft_exp(-fabsf(x));
  return (x >= 0.0f ? x : x * e) / (1.0f + e) * v;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KVB_MO_AVX2 1
#include <immintrin.h>
__attribute__((target("avx2"))) static float row_max_avx2(const float *s, size_t n) {
  __m256 m = _mm256_set1_ps(-INFINITY);
  size_t t = 0;
  for (; t + 8 <= n; t += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(s + t));
  float l[8], mx = -INFINITY;
  _mm256_storeu_ps(l, m);
  for (int i = 0; i < 8; i++) mx = l[i] > mx ? l[i] : mx;
  for (; t < n; t++) mx = s[t] > mx ? s[t] : mx;
  return mx;
}
/* Eight lanes of soft_exp(x): the scalar's operations lane by lane. */
__attribute__((target("avx2"))) static inline __m256 soft_exp8(__m256 x) {
  const __m256 mn = _mm256_set1_ps(SOFT_MIN), rnd = _mm256_set1_ps(SOFT_ROUND);
  __m256 ok = _mm256_cmp_ps(x, mn, _CMP_GE_OQ);
  __m256 xc = _mm256_max_ps(x, mn); /* keeps 2^k normal in the lanes set to 0 below */
  __m256 k = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(xc, _mm256_set1_ps(SOFT_LOG2E)), rnd), rnd);
  __m256 r = _mm256_sub_ps(xc, _mm256_mul_ps(k, _mm256_set1_ps(SOFT_LN2_HI)));
  r = _mm256_sub_ps(r, _mm256_mul_ps(k, _mm256_set1_ps(SOFT_LN2_LO)));
  __m256 r2 = _mm256_mul_ps(r, r);
  __m256 y = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(SOFT_P0), r), _mm256_set1_ps(SOFT_P1));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SOFT_P2));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SOFT_P3));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SOFT_P4));
  y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SOFT_P5));
  y = _mm256_add_ps(_mm256_mul_ps(y, r2), r);
  y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
  __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(e)), ok);
}
/* s[t] = soft_exp(s[t] − m); returns Σ s[t] summed in 8 lanes (the last 1–7 scores as lanes of
 * one more vector, the missing lanes −∞, whose exponential is 0). */
__attribute__((target("avx2"))) static float row_exp_sum_avx2(float *s, size_t n, float m) {
  const __m256 vm = _mm256_set1_ps(m);
  __m256 acc = _mm256_setzero_ps();
  size_t t = 0;
  for (; t + 8 <= n; t += 8) {
    __m256 y = soft_exp8(_mm256_sub_ps(_mm256_loadu_ps(s + t), vm));
    _mm256_storeu_ps(s + t, y);
    acc = _mm256_add_ps(acc, y);
  }
  if (t < n) {
    float b[8];
    for (size_t i = 0; i < 8; i++) b[i] = t + i < n ? s[t + i] : -INFINITY;
    __m256 y = soft_exp8(_mm256_sub_ps(_mm256_loadu_ps(b), vm));
    _mm256_storeu_ps(b, y);
    for (size_t i = 0; t + i < n; i++) s[t + i] = b[i];
    acc = _mm256_add_ps(acc, y);
  }
  float l[8], z = 0;
  _mm256_storeu_ps(l, acc);
  for (int i = 0; i < 8; i++) z += l[i];
  return z;
}
/* Eight lanes of swiglu_one (below): its operations lane by lane. */
__attribute__((target("avx2"))) static void swiglu_avx2(float *g, const float *u, size_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(g + i), e = soft_exp8(_mm256_or_ps(x, sign)); /* e^−|x| */
    __m256 num = _mm256_blendv_ps(_mm256_mul_ps(x, e), x, _mm256_cmp_ps(x, zero, _CMP_GE_OQ));
    _mm256_storeu_ps(g + i, _mm256_mul_ps(_mm256_div_ps(num, _mm256_add_ps(one, e)), _mm256_loadu_ps(u + i)));
  }
  for (; i < n; i++) g[i] = swiglu_one(g[i], u[i]);
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
static float row_exp_sum(float *s, size_t n, float m, int avx2) {
#ifdef KVB_MO_AVX2
  if (avx2) return row_exp_sum_avx2(s, n, m);
#endif
  (void)avx2;
  float z = 0;
  for (size_t t = 0; t < n; t++) z += s[t] = soft_exp(s[t] - m);
  return z;
}

/* SwiGLU in one pass, the exponential soft_exp's (the attention softmax's): llama.cpp's
 * ggml_vec_swiglu_f32 also forms silu with its own vector expf. The library-exact vexpf.h took
 * a double-precision table step per entry, and the gate's exponentials, a separate pass and
 * buffer, were 4% of a 512-token SmolLM2 prefill. */
void kvb_mo_swiglu(float *g, const float *u, size_t n) {
#ifdef KVB_MO_AVX2
  if (kvb_simd_level() >= KVB_SIMD_AVX2) {
    swiglu_avx2(g, u, n);
    return;
  }
#endif
  for (size_t i = 0; i < n; i++) g[i] = swiglu_one(g[i], u[i]);
}

typedef struct {
  const float *q, *k, *v;
  size_t n, H, grp, hd, window, nqb, ldo;
  float scale;
  int avx2;
  float *scratch; /* per worker: S [grp·QB][KB], O [grp·QB][hd], Q [grp·QB][hd], m [grp·QB] */
  double *lsum;   /* per worker: the normalizers of the block's rows [grp·QB] */
  float *kp;      /* AVX2 path: the keys in panels (attn_pack_keys), else NULL */
  float *att;
} attn_job;

static size_t attn_scratch(size_t grp, size_t hd) { return grp * KVB_MO_QB * (KVB_MO_KB + 2 * hd + 1); }

/* The online softmax's step for one row over one key tile: s holds the row's scores for keys
 * k0 + [0, kt); the keys it may see are k0 + [a, e). Turns the visible scores into
 * exp(s − m) under the row's running maximum *m (rescaling its output row o[hd] and normalizer
 * *l when the maximum grows), adds them to *l, and sets every other entry of [0, kt) to 0. */
static void row_softmax_step(float *s, size_t a, size_t e, size_t kt, float *m, double *l, float *o,
                             size_t hd, int avx2) {
  if (a >= e) {
    memset(s, 0, kt * sizeof *s);
    return;
  }
  float mx = row_max(s + a, e - a, avx2);
  if (mx > *m) { /* a new maximum: rescale what the row holds */
    float c = expf(*m - mx);
    *l *= c;
    for (size_t i = 0; i < hd; i++) o[i] *= c;
    *m = mx;
  }
  *l += row_exp_sum(s + a, e - a, *m, avx2);
  memset(s, 0, a * sizeof *s);
  memset(s + e, 0, (kt - e) * sizeof *s);
}

/* The visible keys [a, e) of the tile k0 + [0, kt) for the query at position p. */
static void row_visible(const attn_job *J, size_t p, size_t k0, size_t kt, size_t *a, size_t *e) {
  size_t lo = J->window && p + 1 > J->window ? p + 1 - J->window : 0;
  *a = lo > k0 ? lo - k0 : 0;
  *e = p + 1 <= k0 ? 0 : p + 1 < k0 + kt ? p + 1 - k0 : kt;
  if (*a > *e) *a = *e;
}

/* One (key/value head, query block): the online softmax of the block's rows of every query head
 * sharing that key/value head (grouped-query attention), over the key tiles the block can see.
 * Why the heads together: each key and value tile is then packed by sgemm once for grp·QB rows
 * instead of once per head (SmolLM2: 192 rows, not 64), which was a third of the products' own
 * packing work at hd = 64. Row R of the group is head g·grp + R / rows at position b0 + R % rows. */
static int attn_item(size_t it, void *arg, int worker) {
  const attn_job *J = arg;
  size_t g = it / J->nqb, b0 = (it % J->nqb) * KVB_MO_QB, hd = J->hd, n = J->n, grp = J->grp;
  size_t rows = n - b0 < KVB_MO_QB ? n - b0 : KVB_MO_QB, nr = grp * rows;
  const float *K = J->k + g * n * hd, *V = J->v + g * n * hd;
  float *S = J->scratch + (size_t)worker * attn_scratch(grp, hd), *O = S + grp * KVB_MO_QB * KVB_MO_KB,
        *Q = O + grp * KVB_MO_QB * hd, *m = Q + grp * KVB_MO_QB * hd;
  double *l = J->lsum + (size_t)worker * grp * KVB_MO_QB;
  for (size_t h = 0; h < grp; h++) /* the group's query rows, one matrix */
    memcpy(Q + h * rows * hd, J->q + ((g * grp + h) * n + b0) * hd, rows * hd * sizeof *Q);
  for (size_t r = 0; r < nr; r++) m[r] = -INFINITY, l[r] = 0;
  memset(O, 0, nr * hd * sizeof *O);
  /* keys the block can see: [lo of its first row, its last row] */
  size_t klo = J->window && b0 + 1 > J->window ? b0 + 1 - J->window : 0, khi = b0 + rows;
  for (size_t k0 = klo; k0 < khi; k0 += KVB_MO_KB) {
    size_t kt = khi - k0 < KVB_MO_KB ? khi - k0 : KVB_MO_KB;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nr, (int)kt, (int)hd, J->scale, Q,
                (int)hd, K + k0 * hd, (int)hd, 0.0f, S, (int)kt);
    for (size_t r = 0; r < nr; r++) {
      size_t a, e;
      row_visible(J, b0 + r % rows, k0, kt, &a, &e);
      row_softmax_step(S + r * kt, a, e, kt, &m[r], &l[r], O + r * hd, hd, J->avx2);
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)nr, (int)hd, (int)kt, 1.0f, S,
                (int)kt, V + k0 * hd, (int)hd, 1.0f, O, (int)hd);
  }
  for (size_t r = 0; r < nr; r++) {
    float iz = (float)(1.0 / l[r]), *dst = J->att + (b0 + r % rows) * J->ldo + (g * grp + r / rows) * hd;
    for (size_t i = 0; i < hd; i++) dst[i] = O[r * hd + i] * iz;
  }
  return 0;
}

#ifdef KVB_MO_AVX2
/* ---- the AVX2 + FMA path: the two products of a tile without sgemm ----
 *
 * Why not sgemm at hd = 64: each tile's score matrix S [grp·QB][KB] is a product's output and
 * the next one's input, and sgemm zeroes it (β = 0) before writing it and copies it into its
 * packed layout before reading it: two passes over S per 2·hd flops of each entry, plus the
 * query block repacked for every tile. At 8192 tokens on SmolLM2 those copies and the zeroing
 * were 11% of the prefill's CPU time. Here the keys are put in panels of 16 once per layer
 * (kp[head][key / 16][hd][16]), and two register-blocked kernels of 6 rows × 16 columns read
 * Q, the panels, S and V in place: S = scale·Q·Kᵀ over the 16-key panels a row block can see,
 * the softmax step on those rows while they are in L1, then O += P·V. Per output entry each is
 * a chain of fused multiply-adds in key (or channel) order, one lane per entry; the sums'
 * order differs from sgemm's, so the bits differ from the portable path's (tested against a
 * double reference, tests/test_model_attention.c). Rows are position-major here (row R is
 * position b0 + R / grp, head g·grp + R % grp), so a 6-row block spans few positions and its
 * causal limit is the last row's. */
#define AP 16 /* keys per panel, columns per kernel block */
#define AR 6  /* rows per kernel block */

/* kp[g][t / AP][d][t % AP] = k[g][t][d], zero past n. */
static void attn_pack_keys(const float *k, size_t Hk, size_t n, size_t hd, float *kp) {
  size_t np = (n + AP - 1) / AP;
  for (size_t g = 0; g < Hk; g++)
    for (size_t pn = 0; pn < np; pn++) {
      float *dst = kp + (g * np + pn) * hd * AP;
      for (size_t j = 0; j < AP; j++) {
        size_t t = pn * AP + j;
        const float *src = k + (g * n + t) * hd;
        for (size_t d = 0; d < hd; d++) dst[d * AP + j] = t < n ? src[d] : 0.0f;
      }
    }
}

/* Row r's statement X(r) for each of the AR rows below R (R a constant where it is used, so
 * the tests fold and the accumulators are registers, not an array in memory). */
#define ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
/* Row r's rank-1 step of both kernels: a_r, b_r += (scalar at s) · (x0, x1), for rows below R. */
#define FMA_ROW(r, s, x0, x1)                                   \
  if (R > r) {                                                  \
    __m256 q_ = _mm256_broadcast_ss(s);                         \
    a##r = _mm256_fmadd_ps(q_, x0, a##r);                       \
    b##r = _mm256_fmadd_ps(q_, x1, b##r);                       \
  }

/* S[r][j] = scale · Σ_d Q[r][d]·P[d][j] for r < R (≤ AR) rows, j < AP, P one key panel. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
scores_block(const float *Q, size_t hd, const float *P, float scale, float *S, size_t lds, int R) {
#define DECL(r) __m256 a##r = _mm256_setzero_ps(), b##r = _mm256_setzero_ps();
  ROWS6(DECL)
#undef DECL
  for (size_t d = 0; d < hd; d++) {
    __m256 p0 = _mm256_loadu_ps(P + d * AP), p1 = _mm256_loadu_ps(P + d * AP + 8);
#define STEP(r) FMA_ROW(r, Q + r * hd + d, p0, p1)
    ROWS6(STEP)
#undef STEP
  }
  __m256 sc = _mm256_set1_ps(scale);
#define STORE(r)                                                \
  if (R > r) {                                                  \
    _mm256_storeu_ps(S + r * lds, _mm256_mul_ps(a##r, sc));     \
    _mm256_storeu_ps(S + r * lds + 8, _mm256_mul_ps(b##r, sc)); \
  }
  ROWS6(STORE)
#undef STORE
}

/* O[r][c..c+AP) += Σ_{t < nt} S[r][t]·V[t][c..c+AP) for r < R rows, every column block. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
pv_block(const float *S, size_t lds, const float *V, size_t hd, size_t nt, float *O, int R) {
  for (size_t c = 0; c < hd; c += AP) {
#define LOAD(r)                                                                     \
  __m256 a##r = _mm256_setzero_ps(), b##r = _mm256_setzero_ps();                    \
  if (R > r) a##r = _mm256_loadu_ps(O + r * hd + c), b##r = _mm256_loadu_ps(O + r * hd + c + 8);
    ROWS6(LOAD)
#undef LOAD
    for (size_t t = 0; t < nt; t++) {
      __m256 v0 = _mm256_loadu_ps(V + t * hd + c), v1 = _mm256_loadu_ps(V + t * hd + c + 8);
#define STEP(r) FMA_ROW(r, S + r * lds + t, v0, v1)
      ROWS6(STEP)
#undef STEP
    }
#define STORE(r) \
  if (R > r) _mm256_storeu_ps(O + r * hd + c, a##r), _mm256_storeu_ps(O + r * hd + c + 8, b##r);
    ROWS6(STORE)
#undef STORE
  }
}

/* The two kernels for R rows, R a constant in each instance (the row loops unroll). */
#define ATTN_KERNELS(R)                                                                            \
  __attribute__((target("avx2,fma"))) static void scores_##R(const float *Q, size_t hd,           \
                                                             const float *P, float scale,          \
                                                             float *S, size_t lds) {               \
    scores_block(Q, hd, P, scale, S, lds, R);                                                      \
  }                                                                                                \
  __attribute__((target("avx2,fma"))) static void pv_##R(const float *S, size_t lds,              \
                                                         const float *V, size_t hd, size_t nt,    \
                                                         float *O) {                              \
    pv_block(S, lds, V, hd, nt, O, R);                                                             \
  }
ATTN_KERNELS(1)
ATTN_KERNELS(2)
ATTN_KERNELS(3)
ATTN_KERNELS(4)
ATTN_KERNELS(5)
ATTN_KERNELS(6)
typedef void (*scores_fn)(const float *, size_t, const float *, float, float *, size_t);
typedef void (*pv_fn)(const float *, size_t, const float *, size_t, size_t, float *);
static const scores_fn SCORES[AR + 1] = {NULL, scores_1, scores_2, scores_3, scores_4, scores_5, scores_6};
static const pv_fn PV[AR + 1] = {NULL, pv_1, pv_2, pv_3, pv_4, pv_5, pv_6};

static int attn_item_avx2(size_t it, void *arg, int worker) {
  const attn_job *J = arg;
  size_t g = it / J->nqb, b0 = (it % J->nqb) * KVB_MO_QB, hd = J->hd, n = J->n, grp = J->grp;
  size_t rows = n - b0 < KVB_MO_QB ? n - b0 : KVB_MO_QB, nr = grp * rows;
  size_t np = (n + AP - 1) / AP;
  const float *KP = J->kp + g * np * hd * AP, *V = J->v + g * n * hd;
  float *S = J->scratch + (size_t)worker * attn_scratch(grp, hd), *O = S + grp * KVB_MO_QB * KVB_MO_KB,
        *Q = O + grp * KVB_MO_QB * hd, *m = Q + grp * KVB_MO_QB * hd;
  double *l = J->lsum + (size_t)worker * grp * KVB_MO_QB;
  for (size_t i = 0; i < rows; i++) /* position-major: row i·grp + h is head g·grp + h at b0 + i */
    for (size_t h = 0; h < grp; h++)
      memcpy(Q + (i * grp + h) * hd, J->q + ((g * grp + h) * n + b0 + i) * hd, hd * sizeof *Q);
  for (size_t r = 0; r < nr; r++) m[r] = -INFINITY, l[r] = 0;
  memset(O, 0, nr * hd * sizeof *O);
  /* keys the block can see, from a panel boundary: [lo of its first row, its last row] */
  size_t klo = J->window && b0 + 1 > J->window ? b0 + 1 - J->window : 0, khi = b0 + rows;
  klo -= klo % AP;
  for (size_t k0 = klo; k0 < khi; k0 += KVB_MO_KB) {
    size_t kt = khi - k0 < KVB_MO_KB ? khi - k0 : KVB_MO_KB;
    for (size_t r0 = 0; r0 < nr; r0 += AR) {
      int R = nr - r0 < AR ? (int)(nr - r0) : AR;
      size_t pf = b0 + r0 / grp, pl = b0 + (r0 + (size_t)R - 1) / grp; /* first, last position */
      size_t a0, e0, a1, e1;
      row_visible(J, pf, k0, kt, &a0, &e0);
      row_visible(J, pl, k0, kt, &a1, &e1);
      float *s = S + r0 * KVB_MO_KB;
      /* every row's visible keys lie in [a0, e1): positions grow with the row, and with them
       * both ends of a row's range */
      if (a0 >= e1) continue; /* no row of the block sees a key of this tile */
      size_t c0 = a0 - a0 % AP, c1 = e1 + (AP - e1 % AP) % AP;
      for (size_t c = c0; c < c1; c += AP)
        SCORES[R](Q + r0 * hd, hd, KP + (k0 + c) / AP * hd * AP, J->scale, s + c, KVB_MO_KB);
      size_t ce = c1 < kt ? c1 : kt; /* keys past the tile (past n) are never read from V */
      for (int r = 0; r < R; r++) {
        size_t a, e;
        row_visible(J, b0 + (r0 + (size_t)r) / grp, k0, kt, &a, &e);
        row_softmax_step(s + r * KVB_MO_KB + c0, a - c0, e - c0, ce - c0, &m[r0 + r], &l[r0 + r],
                         O + (r0 + r) * hd, hd, 1);
      }
      PV[R](s + c0, KVB_MO_KB, V + (k0 + c0) * hd, hd, ce - c0, O + r0 * hd);
    }
  }
  for (size_t r = 0; r < nr; r++) {
    float iz = (float)(1.0 / l[r]), *dst = J->att + (b0 + r / grp) * J->ldo + (g * grp + r % grp) * hd;
    for (size_t i = 0; i < hd; i++) dst[i] = O[r * hd + i] * iz;
  }
  return 0;
}
#endif

int kvb_mo_attention(const float *q, const float *k, const float *v, size_t n, size_t H,
                     size_t Hk, size_t hd, float scale, size_t window, float *att, size_t ldo) {
  if (!q || !k || !v || !att) return KVB_ERROR(KVB_ENULL, "kvb_mo_attention: NULL argument");
  if (n == 0 || H == 0 || Hk == 0 || H % Hk || hd == 0)
    return KVB_ERROR(KVB_EINVAL, "kvb_mo_attention: %zu tokens, %zu heads over %zu", n, H, Hk);
  int threads = kvb_threads_default();
  attn_job J = {q, k, v, n, H, H / Hk, hd, window >= n ? 0 : window, (n + KVB_MO_QB - 1) / KVB_MO_QB,
                ldo, scale, kvb_simd_level() >= KVB_SIMD_AVX2, NULL, NULL, NULL, att};
  kvb_parallel_fn item = attn_item;
  if ((size_t)threads > Hk * J.nqb) threads = (int)(Hk * J.nqb);
  J.scratch = malloc((size_t)threads * attn_scratch(J.grp, hd) * sizeof(float));
  J.lsum = malloc((size_t)threads * J.grp * KVB_MO_QB * sizeof(double));
  int st = J.scratch && J.lsum ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory for attention scratch");
#ifdef KVB_MO_AVX2
  if (!st && J.avx2 && hd % AP == 0) {
    size_t np = (n + AP - 1) / AP;
    if (!(J.kp = malloc(Hk * np * AP * hd * sizeof(float))))
      st = KVB_ERROR(KVB_ENOMEM, "out of memory for attention scratch");
    else attn_pack_keys(k, Hk, n, hd, J.kp), item = attn_item_avx2;
  }
#endif
  /* every item's small products on one BLAS thread, whatever the worker count, so the bits do
   * not depend on $KVBOUND_THREADS or OPENBLAS_NUM_THREADS (kvb_parallel_for does this itself
   * only for more than one worker) */
  int blas_prev = openblas_get_num_threads();
  if (!st && blas_prev != 1) openblas_set_num_threads(1);
  if (!st) st = kvb_parallel_for(Hk * J.nqb, threads, item, &J);
  if (blas_prev != 1) openblas_set_num_threads(blas_prev);
  free(J.scratch);
  free(J.lsum);
  free(J.kp);
  return st;
}

/* kivi.c — KIVI: Liu, Yuan, Jin, Zhong, Xu, Braverman, Chen, Hu, "KIVI: A Tuning-Free Asymmetric
 * 2bit Quantization for KV Cache", arXiv 2402.02750 (ICML 2024). Keys are quantized per channel,
 * values per token, by the asymmetric b-bit quantizer of §3.1 (zero point z = min, scale
 * s = (max − min)/(2^b − 1), code round((x − z)/s), x̂ = code·s + z; quant_cache.h), group-wise
 * with group size G, and the most recent tokens stay in full precision (§4.1, Algorithm 1).
 *
 * The streaming form (Algorithm 1, procedure Decoding; §4.1 "grouped part" and "residual part").
 * After each token (k, v):
 *   keys:   k joins the full-precision key residual X_Kr. When X_Kr holds R tokens it is
 *           quantized — per channel, in R/G groups of G consecutive tokens: for each channel c
 *           and group g the G numbers K[g·G .. g·G+G−1][c] share one (z, s) — appended to the
 *           quantized keys Q(X_Kg), and X_Kr is emptied. So 0 ≤ |X_Kr| < R after an update and
 *           the quantized key count is a multiple of R (hence of G).
 *   values: v joins the value residual X_Vr. When X_Vr holds more than R tokens its oldest is
 *           quantized per token — its d_value channels in ⌈d_value/G⌉ groups of G consecutive
 *           channels (the last one shorter when G ∤ d_value), each with its own (z, s) — and
 *           appended to Q(X_Vg). So X_Vr is exactly the min(n, R) most recent values.
 * The query (kvbound's query after update(k, v) is the query of that token) is attention over
 * [dequantized Q(X_Kg); X_Kr] and [dequantized Q(X_Vg); X_Vr], token by token in stream order,
 * in double by log-sum-exp (kvb_attention_exact): Algorithm 1's
 * t_O = A_g·Q(X_Vg) + A_r·X_Vr with A = softmax([t_Q·Q(X_Kg)ᵀ, t_Q·X_Krᵀ]).
 * The prefill procedure of Algorithm 1 (KeyQuant with r = l mod R, values quantized except the
 * last R) is the same state that streaming the prompt token by token reaches, so one path serves
 * both.
 *
 * Where the paper is ambiguous, and how this file reads it:
 *  - G against R. Algorithm 1 quantizes the key residual when it reaches R tokens ("len(X_Kr) =
 *    R"), with numGroup = l/G groups of G tokens per channel; the brief's alternative reading —
 *    quantize one group as soon as G tokens are waiting — is not the Algorithm's. Algorithm 1
 *    takes R to be a multiple of G without saying so (the authors' code asserts it), so kvbound
 *    requires G | R. Consequence: the key residual is not "the R most recent tokens" but the
 *    n mod R most recent ones (0..R−1), while the value residual is always the R most recent —
 *    the two windows differ, and the paper's one word "residual length" names both.
 *  - Quantize before or after attending. Algorithm 1's decoding step appends t_K, t_V, runs the
 *    two quantization `if`s, and then computes A and t_O, so the token whose arrival fills X_Kr
 *    is attended through its quantized key. The authors' released code (github.com/jy-yuan/KIVI,
 *    read for reference only) attends first and quantizes afterwards, so there the query of that
 *    token still sees R exact keys and R + 1 exact values. The two orders differ only at that
 *    one token; kvbound follows the Algorithm.
 *  - Value groups. §3 speaks of per-token quantization without saying how a token is grouped;
 *    Algorithm 1's GroupQuant of values (and the authors' code, which groups the head
 *    dimension) splits a token's channels into groups of G. d_value < G gives one group of
 *    d_value channels; G ∤ d_value a shorter last group (the paper's models have d = 128, G = 32).
 *  - Rounding and a flat group. §3.1's ⌊·⌉ is read as round to nearest, half up (the argument is
 *    ≥ 0); the paper does not say what s = 0 (a group of equal numbers) does; here codes are 0
 *    and x̂ = z exactly.
 *  - Precision of z and s. The paper keeps them in the model's fp16; kvbound's full precision is
 *    float64, so z and s are doubles, like the residual. (In an fp16 deployment every
 *    full-precision number costs 2 bytes instead of 8; the packed codes do not change.)
 *
 * Memory, in bytes as stored (quant_cache.h): with ⌈x⌉ written ceil,
 *   keys   (quantized key tokens / G)·d_key·(ceil(G·b/8) + 16)      codes + (z, s) per channel·group
 *   values (quantized value tokens)·Σ_groups (ceil(m_g·b/8) + 16)   m_g = channels in group g
 *   residual 8·(|X_Kr|·d_key + |X_Vr|·d_value)                       doubles
 * and vectors 2n (every token's key and value are kept, quantized or not). At b = 2, G = 32 a
 * quantized number costs 2 bits + 16 bytes / 32 = 0.75 bytes against 8 for an exact one.
 *
 * Parameters: bits b ∈ {2, 4} (KIVI-2, KIVI-4), group G ≥ 1, residual R ≥ G with G | R
 * (the paper's settings: G = 32, R = 128). Section and algorithm numbers are those of arXiv
 * 2402.02750v2. */
#include "attention.h"
#include "kvb_error.h"
#include "method.h"
#include "quant_attend.h"
#include "quant_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Tokens quantized per token: values (and keys under the mutant keys_per_token). */
typedef struct {
  size_t n, cap;      /* rows held, rows allocated */
  size_t d, ng;       /* channels; groups of G channels (the last may be shorter) */
  size_t gbytes;      /* packed bytes of a full group; the row's groups start at g·gbytes */
  size_t rowbytes;    /* packed bytes of a row */
  double *z, *s;      /* n·ng */
  uint8_t *c;         /* n·rowbytes */
} tok_rows;

/* Keys quantized per channel, in groups of G tokens. */
typedef struct {
  size_t n, cap;      /* groups of G tokens held, allocated */
  size_t d, G, gbytes; /* channels; tokens per group; packed bytes of one channel's G codes */
  double *z, *s;      /* n·d: (group, channel) */
  uint8_t *c;         /* n·d·gbytes */
} chan_groups;

typedef struct {
  unsigned bits, qflags; /* qflags: KVB_ASYM_MUT_* of the active mutant */
  size_t G, R, Rv;       /* Rv: the value residual length (R; R − 1 under value_residual_short) */
  int keys_per_token, no_zero;
  chan_groups kq;        /* quantized keys (faithful) */
  tok_rows kt;           /* quantized keys (mutant keys_per_token) */
  tok_rows vq;           /* quantized values */
  double *kr, *vr;       /* residuals: R × d_key, (R + 1) × d_value */
  size_t nkr, nvr;
  double *sK, *sV;       /* the fallback's dequantized copy (not counted: quant_cache.h) */
  size_t scap;
  double *sc;            /* the query's scores, n (not counted) */
  size_t sccap;
} kivi_state;

static const kvb_param_spec kivi_params[] = {
    {"bits", KVB_PARAM_INT, 2, 2, 4, NULL,
     "b: bits per quantized number, 2 or 4 (arXiv 2402.02750: KIVI-2, KIVI-4)"},
    {"group", KVB_PARAM_INT, 32, 1, 1e6, NULL,
     "G: group size — tokens per key group (per channel), channels per value group (§4.1; 32)"},
    {"residual", KVB_PARAM_INT, 128, 1, 1e9, NULL,
     "R: full-precision residual length, a multiple of G (Algorithm 1; 128)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec kivi_mutants[] = {
    {"keys_per_token", "quantizes keys per token (groups of G channels) instead of per channel "
                       "over G tokens (breaks §3.2's finding, Algorithm 1 KeyQuant)"},
    {"scale_2b", "scale (max − min)/2^b instead of /(2^b − 1) (§3.1): the top code is never used"},
    {"no_zero_point", "dequantizes code·s, dropping the zero point z = min (§3.1, asymmetric)"},
    {"value_residual_short", "quantizes a value once R tokens wait (keeps R − 1 exact, not R; "
                             "Algorithm 1 len(X_Vr) > R)"},
    {NULL, NULL}};

/* ---- the two stores ---- */

static void tok_rows_init(tok_rows *t, size_t d, size_t G, unsigned bits) {
  memset(t, 0, sizeof *t);
  t->d = d;
  t->ng = (d + G - 1) / G;
  t->gbytes = kvb_asym_packed_bytes(G < d ? G : d, bits);
  t->rowbytes = (t->ng - 1) * t->gbytes + kvb_asym_packed_bytes(d - (t->ng - 1) * G, bits);
}

static int tok_rows_reserve(tok_rows *t, size_t need) {
  if (need <= t->cap) return KVB_OK;
  size_t cap = t->cap ? 2 * t->cap : 64;
  while (cap < need) cap *= 2;
  /* each array grows before the store points at it; cap rises only when all three did */
  double *z = realloc(t->z, cap * t->ng * sizeof *z);
  if (!z) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory growing to %zu quantized tokens", cap);
  t->z = z;
  double *s = realloc(t->s, cap * t->ng * sizeof *s);
  if (!s) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory growing to %zu quantized tokens", cap);
  t->s = s;
  uint8_t *c = realloc(t->c, cap * t->rowbytes);
  if (!c) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory growing to %zu quantized tokens", cap);
  t->c = c;
  t->cap = cap;
  return KVB_OK;
}

static void tok_rows_push(tok_rows *t, const double *x, size_t G, unsigned bits, unsigned flags) {
  size_t i = t->n++;
  for (size_t g = 0; g < t->ng; g++) {
    size_t lo = g * G, m = t->d - lo < G ? t->d - lo : G;
    kvb_asym_quantize(x + lo, m, 1, bits, flags, &t->z[i * t->ng + g], &t->s[i * t->ng + g],
                      t->c + i * t->rowbytes + g * t->gbytes);
  }
}

static void tok_rows_get(const tok_rows *t, size_t i, size_t G, unsigned bits, int no_zero,
                         double *x) {
  for (size_t g = 0; g < t->ng; g++) {
    size_t lo = g * G, m = t->d - lo < G ? t->d - lo : G;
    double z = no_zero ? 0.0 : t->z[i * t->ng + g], s = t->s[i * t->ng + g];
    const uint8_t *c = t->c + i * t->rowbytes + g * t->gbytes;
    for (size_t j = 0; j < m; j++) x[lo + j] = (double)kvb_asym_code(c, j, bits) * s + z;
  }
}

static size_t tok_rows_bytes(const tok_rows *t) {
  return t->n * (t->rowbytes + 2 * sizeof(double) * t->ng);
}

static void tok_rows_free(tok_rows *t) { free(t->z), free(t->s), free(t->c); }

static int chan_groups_reserve(chan_groups *k, size_t need) {
  if (need <= k->cap) return KVB_OK;
  size_t cap = k->cap ? 2 * k->cap : 8;
  while (cap < need) cap *= 2;
  double *z = realloc(k->z, cap * k->d * sizeof *z);
  if (!z) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory growing to %zu key groups", cap);
  k->z = z;
  double *s = realloc(k->s, cap * k->d * sizeof *s);
  if (!s) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory growing to %zu key groups", cap);
  k->s = s;
  uint8_t *c = realloc(k->c, cap * k->d * k->gbytes);
  if (!c) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory growing to %zu key groups", cap);
  k->c = c;
  k->cap = cap;
  return KVB_OK;
}

/* Quantizes G rows (row-major, d wide) as one group: channel c's G numbers share (z, s). */
static void chan_groups_push(chan_groups *k, const double *rows, unsigned bits, unsigned flags) {
  size_t g = k->n++;
  for (size_t c = 0; c < k->d; c++)
    kvb_asym_quantize(rows + c, k->G, k->d, bits, flags, &k->z[g * k->d + c],
                      &k->s[g * k->d + c], k->c + (g * k->d + c) * k->gbytes);
}

/* Token t (< n·G) of the quantized keys. */
static void chan_groups_get(const chan_groups *k, size_t t, unsigned bits, int no_zero,
                            double *x) {
  size_t g = t / k->G, j = t % k->G;
  for (size_t c = 0; c < k->d; c++) {
    double z = no_zero ? 0.0 : k->z[g * k->d + c], s = k->s[g * k->d + c];
    x[c] = (double)kvb_asym_code(k->c + (g * k->d + c) * k->gbytes, j, bits) * s + z;
  }
}

/* ---- the method ---- */

static void kivi_free(void *state) {
  kivi_state *st = state;
  if (!st) return;
  free(st->kq.z), free(st->kq.s), free(st->kq.c);
  tok_rows_free(&st->kt), tok_rows_free(&st->vq);
  free(st->kr), free(st->vr), free(st->sK), free(st->sV), free(st->sc);
  free(st);
}

static int kivi_init(kvb_method *m, const kvb_params *p) {
  double b = kvb_params_get(p, kivi_params, "bits");
  size_t G = (size_t)kvb_params_get(p, kivi_params, "group");
  size_t R = (size_t)kvb_params_get(p, kivi_params, "residual");
  if (b != 2 && b != 4)
    return KVB_ERROR(KVB_EINVAL, "kivi: bits = %g is not supported; KIVI quantizes to 2 or 4 bits "
                     "(arXiv 2402.02750: KIVI-2, KIVI-4)", b);
  if (R < G || R % G != 0)
    return KVB_ERROR(KVB_EINVAL, "kivi: residual = %zu must be a positive multiple of group = %zu "
                     "(Algorithm 1 quantizes a full residual of R keys as R/G groups of G tokens)",
                     R, G);
  kivi_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory");
  st->bits = (unsigned)b, st->G = G, st->R = R, st->Rv = R;
  if (kvb_method_is_mutant(m, "value_residual_short")) st->Rv = R - 1;
  if (kvb_method_is_mutant(m, "scale_2b")) st->qflags |= KVB_ASYM_MUT_SCALE_2B;
  st->keys_per_token = kvb_method_is_mutant(m, "keys_per_token");
  st->no_zero = kvb_method_is_mutant(m, "no_zero_point");
  st->kq.d = m->d_key, st->kq.G = G, st->kq.gbytes = kvb_asym_packed_bytes(G, st->bits);
  tok_rows_init(&st->kt, m->d_key, G, st->bits);
  tok_rows_init(&st->vq, m->d_value, G, st->bits);
  st->kr = malloc(R * m->d_key * sizeof *st->kr);
  st->vr = malloc((R + 1) * m->d_value * sizeof *st->vr);
  if (!st->kr || !st->vr) {
    kivi_free(st);
    return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory (residual of %zu tokens)", R);
  }
  m->state = st;
  return KVB_OK;
}

static int kivi_update(kvb_method *m, const double *k, const double *v) {
  kivi_state *st = m->state;
  size_t dk = m->d_key, dv = m->d_value;
  int flush_keys = st->nkr + 1 == st->R, pop_value = st->nvr + 1 > st->Rv;
  /* every allocation first, so an ENOMEM leaves the cache as it was */
  int rc = KVB_OK;
  if (flush_keys)
    rc = st->keys_per_token ? tok_rows_reserve(&st->kt, st->kt.n + st->R)
                            : chan_groups_reserve(&st->kq, st->kq.n + st->R / st->G);
  if (!rc && pop_value) rc = tok_rows_reserve(&st->vq, st->vq.n + 1);
  if (rc) return rc;

  memcpy(st->kr + st->nkr++ * dk, k, dk * sizeof *k);
  if (flush_keys) { /* Algorithm 1: len(X_Kr) = R → KeyQuant, X_Kr ← empty */
    for (size_t t = 0; t < st->R; t += st->G)
      if (st->keys_per_token)
        for (size_t i = t; i < t + st->G; i++)
          tok_rows_push(&st->kt, st->kr + i * dk, st->G, st->bits, st->qflags);
      else
        chan_groups_push(&st->kq, st->kr + t * dk, st->bits, st->qflags);
    st->nkr = 0;
  }
  memcpy(st->vr + st->nvr++ * dv, v, dv * sizeof *v);
  if (pop_value) { /* Algorithm 1: len(X_Vr) > R → quantize X_Vr[:−R] per token */
    tok_rows_push(&st->vq, st->vr, st->G, st->bits, st->qflags);
    memmove(st->vr, st->vr + dv, (st->nvr - 1) * dv * sizeof *st->vr);
    st->nvr--;
  }
  return KVB_OK;
}

/* The cache in stream order (quant_cache.h, kvb_quant_cache_read). */
static void kivi_fill(const kvb_method *m, double *K, double *V) {
  const kivi_state *st = m->state;
  size_t dk = m->d_key, dv = m->d_value, n = (size_t)m->n;
  size_t nkq = st->keys_per_token ? st->kt.n : st->kq.n * st->G;
  for (size_t t = 0; K && t < n; t++) {
    if (t >= nkq)
      memcpy(K + t * dk, st->kr + (t - nkq) * dk, dk * sizeof *K);
    else if (st->keys_per_token)
      tok_rows_get(&st->kt, t, st->G, st->bits, st->no_zero, K + t * dk);
    else
      chan_groups_get(&st->kq, t, st->bits, st->no_zero, K + t * dk);
  }
  for (size_t t = 0; V && t < n; t++) {
    if (t >= st->vq.n)
      memcpy(V + t * dv, st->vr + (t - st->vq.n) * dv, dv * sizeof *V);
    else
      tok_rows_get(&st->vq, t, st->G, st->bits, st->no_zero, V + t * dv);
  }
}

size_t kvb_kivi_read_(const kvb_method *m, double *K, double *V, size_t cap) {
  if ((size_t)m->n > cap) return (size_t)m->n;
  kivi_fill(m, K, V);
  return (size_t)m->n;
}

/* The reference path: the cache dequantized into scratch, then kvb_attention_exact — taken only
 * when the fused path meets a score or an output beyond double range (quant_attend.h). */
static int kivi_query_copy(kvb_method *m, const double *q, double *z) {
  kivi_state *st = m->state;
  size_t n = (size_t)m->n;
  if (n > st->scap) { /* scratch only: a failure here changes nothing the cache holds */
    size_t cap = st->scap ? st->scap : 64;
    while (cap < n) cap *= 2;
    double *K = realloc(st->sK, cap * m->d_key * sizeof *K);
    if (!K) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory dequantizing %zu tokens", n);
    st->sK = K;
    double *V = realloc(st->sV, cap * m->d_value * sizeof *V);
    if (!V) return KVB_ERROR(KVB_ENOMEM, "kivi: out of memory dequantizing %zu tokens", n);
    st->sV = V;
    st->scap = cap;
  }
  kivi_fill(m, st->sK, st->sV);
  return kvb_attention_exact(n, m->d_key, m->d_value, st->sK, st->sV, q, m->scale, z, NULL);
}

static kvb_qa_asym_rows asym_rows(const kivi_state *st, const tok_rows *t) {
  kvb_qa_asym_rows r = {t->d, st->G, t->ng, t->gbytes, t->rowbytes, st->bits, st->no_zero,
                        t->z, t->s, t->c, 0};
  return r;
}

/* Attention over [Q(X_Kg); X_Kr], [Q(X_Vg); X_Vr] in stream order (Algorithm 1's t_O), the
 * dequantization fused into the products (quant_attend.h; bit for bit the dequantized copy's
 * kvb_attention_exact). */
static int kivi_query(kvb_method *m, const double *q, double *z) {
  kivi_state *st = m->state;
  size_t n = (size_t)m->n, dk = m->d_key, dv = m->d_value;
  int rc = kvb_qa_reserve(&st->sc, &st->sccap, n, "kivi");
  if (rc) return rc;
  double *sc = st->sc, den;
  size_t nkq = st->keys_per_token ? st->kt.n : st->kq.n * st->G;
  if (st->keys_per_token) {
    kvb_qa_asym_rows kr = asym_rows(st, &st->kt);
    kvb_qa_asym_rows_scores(&kr, nkq, q, m->scale, sc);
  } else {
    kvb_qa_asym_chan_scores(st->kq.n, st->G, dk, st->kq.gbytes, st->bits, st->no_zero, 0,
                            st->kq.z, st->kq.s, st->kq.c, q, m->scale, sc);
  }
  for (size_t t = nkq; t < n; t++) sc[t] = kvb_score(st->kr + (t - nkq) * dk, q, dk, m->scale);
  int fallback = kvb_qa_softmax_weights(n, sc, &den);
  if (!fallback) {
    /* the quantized values (tokens 0..vq.n−1), then the residual X_Vr: every z[j] still adds
     * its tokens in stream order */
    memset(z, 0, dv * sizeof *z);
    kvb_qa_asym_rows vq = asym_rows(st, &st->vq);
    kvb_qa_asym_rows_values(&vq, st->vq.n, sc, z);
    for (size_t t = st->vq.n; t < n; t++) {
      const double *v = st->vr + (t - st->vq.n) * dv;
      double e = sc[t];
      for (size_t j = 0; j < dv; j++) z[j] += e * v[j];
    }
    fallback = kvb_qa_normalize(dv, den, z);
  }
  if (fallback) {
    rc = kivi_query_copy(m, q, z);
    if (rc) return rc;
  }
  m->work.dots += n, m->work.exps += n;
  return KVB_OK;
}

static void kivi_memory(const kvb_method *m, kvb_memory *out) {
  const kivi_state *st = m->state;
  out->vectors = 2 * (size_t)m->n;
  out->bytes = st->kq.n * st->kq.d * (st->kq.gbytes + 2 * sizeof(double)) +
               tok_rows_bytes(&st->kt) + tok_rows_bytes(&st->vq) +
               (st->nkr * m->d_key + st->nvr * m->d_value) * sizeof(double);
}

extern const kvb_method_type kvb_method_kivi;

int kvb_kivi_layout(const kvb_method *m, size_t *key_quantized, size_t *key_residual,
                    size_t *value_quantized, size_t *value_residual) {
  if (!m || m->type != &kvb_method_kivi || !m->state) return 0;
  const kivi_state *st = m->state;
  if (key_quantized) *key_quantized = st->keys_per_token ? st->kt.n : st->kq.n * st->G;
  if (key_residual) *key_residual = st->nkr;
  if (value_quantized) *value_quantized = st->vq.n;
  if (value_residual) *value_residual = st->nvr;
  return 1;
}

const kvb_method_type kvb_method_kivi = {
    "kivi",
    "KIVI: keys quantized per channel, values per token, b-bit asymmetric in groups of G, the "
    "last R tokens in full precision",
    "Liu et al., KIVI: A Tuning-Free Asymmetric 2bit Quantization for KV Cache, arXiv 2402.02750 "
    "§3.1, §4.1 Algorithm 1",
    kivi_params, kivi_mutants, 0, kivi_init, kivi_update, kivi_query, kivi_memory, kivi_free};

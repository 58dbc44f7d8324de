/* q_block_cache.c — llama.cpp's q8_0 and q4_0 block formats applied to the KV cache, both keys
 * and values (llama.cpp's --cache-type-k / --cache-type-v q8_0, q4_0): every token is kept, its
 * key and its value each cut into blocks of 32 consecutive head-dimension numbers, each block
 * stored as quant_cache.h describes (q8_0: an fp16 scale d = max|x|/127 and 32 int8 codes,
 * 34 bytes; q4_0: an fp16 scale d = max/−8 and 32 4-bit codes, 18 bytes). There is no
 * full-precision window: llama.cpp quantizes a token's K and V as it writes them. The query
 * answers attention in double by log-sum-exp over the dequantized blocks, with the dequantization
 * fused into the two products (quant_attend.h): each score is the dot of q with the codes times
 * their fp16 scale, each value row is added to the output straight from its codes — no
 * dequantized copy of the cache, and bit for bit what kvb_attention_exact returns on that copy.
 *
 * Head dimensions that are not a multiple of 32. llama.cpp requires the row to be whole blocks;
 * kvbound pads the last block of a key or value with zeros (quant_cache.h: a zero changes neither
 * maximum and is stored exactly, so the real numbers get the codes of an unpadded block) and
 * counts the padded block whole: at d = 4 a q8_0 key costs 34 bytes, more than its 32 bytes of
 * doubles — the format is made for d = 64 or 128.
 *
 * Memory, in bytes as stored: n·(⌈d_key/32⌉ + ⌈d_value/32⌉)·34 for q8_0, ·18 for q4_0;
 * vectors 2n. At d = 128 that is 8.5 bits (q8_0) or 4.5 bits (q4_0) per number against 64 for a
 * kept double.
 *
 * A block whose scale overflows fp16 (|x| ≥ 127·65520 for q8_0, 8·65520 for q4_0) cannot be
 * stored in the format: update refuses the token with KVB_ERANGE and keeps the cache as it was.
 * No parameters. */
#include "attention.h"
#include "kvb_error.h"
#include "method.h"
#include "quant_attend.h"
#include "quant_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int q4;                  /* 0: q8_0, 1: q4_0 */
  unsigned flags;          /* KVB_QB_MUT_* of the active mutant */
  int scale_fp32, offset;  /* mutants scale_fp32 (dequantize with the unrounded d), no_offset */
  size_t bs, nbk, nbv;     /* bytes per block; blocks per key and per value */
  size_t n, cap;           /* tokens held, allocated */
  uint8_t *K, *V;          /* n·nbk·bs, n·nbv·bs */
  double *dK, *dV;         /* unrounded scales, kept only under scale_fp32 */
  double *sK, *sV;         /* the fallback's dequantized copy (not counted: quant_cache.h) */
  size_t scap;
  double *sc;              /* the query's scores, n (not counted) */
  size_t sccap;
} qb_state;

static const kvb_param_spec qb_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec q8_mutants[] = {
    {"scale_fp32", "dequantizes with the exact scale max|x|/127, not its fp16 rounding (the "
                   "format stores d as fp16)"},
    {"trunc_codes", "codes truncated toward zero instead of rounded to nearest"},
    {NULL, NULL}};

static const kvb_mutant_spec q4_mutants[] = {
    {"no_offset", "dequantizes q·d instead of (q − 8)·d (the +8 offset of the codes forgotten)"},
    {"unsigned_max", "d = |max|/−8: the sign of the largest-magnitude element dropped"},
    {"nibble_swap", "packs element j in the high nibble and j + 16 in the low one (the reader "
                    "keeps the format's order)"},
    {NULL, NULL}};

extern const kvb_method_type kvb_method_q8_0, kvb_method_q4_0;

static void qb_free(void *state) {
  qb_state *st = state;
  if (!st) return;
  free(st->K), free(st->V), free(st->dK), free(st->dV), free(st->sK), free(st->sV), free(st->sc);
  free(st);
}

static int qb_init(kvb_method *m, const kvb_params *p) {
  (void)p;
  qb_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory", m->type->name);
  st->q4 = m->type == &kvb_method_q4_0;
  st->bs = st->q4 ? KVB_Q4_0_BYTES : KVB_Q8_0_BYTES;
  st->nbk = (m->d_key + KVB_QBLOCK - 1) / KVB_QBLOCK;
  st->nbv = (m->d_value + KVB_QBLOCK - 1) / KVB_QBLOCK;
  st->offset = 8;
  if (kvb_method_is_mutant(m, "trunc_codes")) st->flags |= KVB_QB_MUT_TRUNC;
  if (kvb_method_is_mutant(m, "unsigned_max")) st->flags |= KVB_QB_MUT_UNSIGNED_MAX;
  if (kvb_method_is_mutant(m, "nibble_swap")) st->flags |= KVB_QB_MUT_NIBBLE_SWAP;
  if (kvb_method_is_mutant(m, "no_offset")) st->offset = 0;
  st->scale_fp32 = kvb_method_is_mutant(m, "scale_fp32");
  m->state = st;
  return KVB_OK;
}

static int qb_reserve(kvb_method *m, qb_state *st, size_t need) {
  if (need <= st->cap) return KVB_OK;
  size_t cap = st->cap ? 2 * st->cap : 64;
  while (cap < need) cap *= 2;
  const char *who = m->type->name;
  uint8_t *K = realloc(st->K, cap * st->nbk * st->bs);
  if (!K) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory growing to %zu tokens", who, cap);
  st->K = K;
  uint8_t *V = realloc(st->V, cap * st->nbv * st->bs);
  if (!V) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory growing to %zu tokens", who, cap);
  st->V = V;
  if (st->scale_fp32) {
    double *dK = realloc(st->dK, cap * st->nbk * sizeof *dK);
    if (!dK) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory growing to %zu tokens", who, cap);
    st->dK = dK;
    double *dV = realloc(st->dV, cap * st->nbv * sizeof *dV);
    if (!dV) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory growing to %zu tokens", who, cap);
    st->dV = dV;
  }
  st->cap = cap;
  return KVB_OK;
}

/* Quantizes a d-vector into nb blocks at blk (and its exact scales at dex, may be NULL). */
static int qb_quantize_row(const qb_state *st, const double *x, size_t d, uint8_t *blk,
                           double *dex) {
  for (size_t b = 0; b * KVB_QBLOCK < d; b++) {
    size_t lo = b * KVB_QBLOCK, len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK;
    double de;
    int rc = st->q4 ? kvb_q4_0_quantize_block(x + lo, len, st->flags, blk + b * st->bs, &de)
                    : kvb_q8_0_quantize_block(x + lo, len, st->flags, blk + b * st->bs, &de);
    if (rc) return rc;
    if (dex) dex[b] = de;
  }
  return KVB_OK;
}

static void qb_dequantize_row(const qb_state *st, const uint8_t *blk, const double *dex, size_t d,
                              double *x) {
  double y[KVB_QBLOCK];
  for (size_t b = 0; b * KVB_QBLOCK < d; b++) {
    size_t lo = b * KVB_QBLOCK, len = d - lo < KVB_QBLOCK ? d - lo : KVB_QBLOCK;
    const uint8_t *p = blk + b * st->bs;
    double dd = dex ? dex[b] : kvb_qblock_scale(p);
    if (st->q4)
      kvb_q4_0_dequantize_block(p, dd, st->offset, y);
    else
      kvb_q8_0_dequantize_block(p, dd, y);
    memcpy(x + lo, y, len * sizeof *y);
  }
}

static int qb_update(kvb_method *m, const double *k, const double *v) {
  qb_state *st = m->state;
  int rc = qb_reserve(m, st, st->n + 1);
  if (rc) return rc;
  /* Written into slot n, which becomes part of the cache only when both succeed. */
  size_t i = st->n;
  rc = qb_quantize_row(st, k, m->d_key, st->K + i * st->nbk * st->bs,
                       st->scale_fp32 ? st->dK + i * st->nbk : NULL);
  if (!rc)
    rc = qb_quantize_row(st, v, m->d_value, st->V + i * st->nbv * st->bs,
                         st->scale_fp32 ? st->dV + i * st->nbv : NULL);
  if (rc) return rc; /* KVB_ERANGE: a scale beyond fp16 (message names the format) */
  st->n++;
  return KVB_OK;
}

static void qb_fill(const kvb_method *m, double *K, double *V) {
  const qb_state *st = m->state;
  for (size_t i = 0; i < st->n; i++) {
    if (K)
      qb_dequantize_row(st, st->K + i * st->nbk * st->bs, st->scale_fp32 ? st->dK + i * st->nbk : NULL,
                        m->d_key, K + i * m->d_key);
    if (V)
      qb_dequantize_row(st, st->V + i * st->nbv * st->bs, st->scale_fp32 ? st->dV + i * st->nbv : NULL,
                        m->d_value, V + i * m->d_value);
  }
}

size_t kvb_qblock_read_(const kvb_method *m, double *K, double *V, size_t cap) {
  const qb_state *st = m->state;
  if (st->n <= cap) qb_fill(m, K, V);
  return st->n;
}

/* Score of token i: scale·<q, dequantized key i>, accumulated in kvb_dot's order (block by
 * block, element by element), each element dequantized as kvb_q*_0_dequantize_block does
 * (code·d, (code − offset)·d) — so equal to kvb_score on the dequantized row while it is finite. */
static void qb_scores(const kvb_method *m, const qb_state *st, const double *q, double *sc) {
  size_t d = m->d_key, rb = st->nbk * st->bs;
  const double *dex = st->scale_fp32 ? st->dK : NULL;
  if (st->q4)
    kvb_qa_q4_0_scores(st->n, d, st->K, rb, dex, st->nbk, st->offset, q, m->scale, 0, sc);
  else
    kvb_qa_q8_0_scores(st->n, d, st->K, rb, dex, st->nbk, q, m->scale, 0, sc);
}

/* z += Σ_i e_i·(dequantized value i), the tokens in order. */
static void qb_values(const kvb_method *m, const qb_state *st, const double *e, double *z) {
  size_t rb = st->nbv * st->bs;
  const double *dex = st->scale_fp32 ? st->dV : NULL;
  if (st->q4) kvb_qa_q4_0_values(st->n, m->d_value, st->V, rb, dex, st->nbv, st->offset, e, 0, z);
  else kvb_qa_q8_0_values(st->n, m->d_value, st->V, rb, dex, st->nbv, e, 0, z);
}

/* The reference path: the cache dequantized into scratch, then kvb_attention_exact. Taken only
 * when the fused path meets a score or an output beyond double range, so that the overflow
 * handling (kvb_score's rescaling, kvb_attention_exact's value scaling, its errors) is that of
 * the exact computation. */
static int qb_query_copy(kvb_method *m, const double *q, double *z) {
  qb_state *st = m->state;
  size_t n = st->n;
  if (n > st->scap) { /* scratch only: a failure here changes nothing the cache holds */
    size_t cap = st->scap ? st->scap : 64;
    while (cap < n) cap *= 2;
    double *K = realloc(st->sK, cap * m->d_key * sizeof *K);
    if (!K) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory dequantizing %zu tokens", m->type->name, n);
    st->sK = K;
    double *V = realloc(st->sV, cap * m->d_value * sizeof *V);
    if (!V) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory dequantizing %zu tokens", m->type->name, n);
    st->sV = V;
    st->scap = cap;
  }
  qb_fill(m, st->sK, st->sV);
  return kvb_attention_exact(n, m->d_key, m->d_value, st->sK, st->sV, q, m->scale, z, NULL);
}

static int qb_query(kvb_method *m, const double *q, double *z) {
  qb_state *st = m->state;
  size_t n = st->n;
  int rc = kvb_qa_reserve(&st->sc, &st->sccap, n, m->type->name);
  if (rc) return rc;
  double den;
  qb_scores(m, st, q, st->sc);
  int fallback = kvb_qa_softmax_weights(n, st->sc, &den);
  if (!fallback) {
    memset(z, 0, m->d_value * sizeof *z);
    qb_values(m, st, st->sc, z);
    fallback = kvb_qa_normalize(m->d_value, den, z);
  }
  if (fallback) {
    rc = qb_query_copy(m, q, z);
    if (rc) return rc;
  }
  m->work.dots += n, m->work.exps += n;
  return KVB_OK;
}

static void qb_memory(const kvb_method *m, kvb_memory *out) {
  const qb_state *st = m->state;
  out->vectors = 2 * st->n;
  out->bytes = st->n * (st->nbk + st->nbv) * st->bs;
}

/* kvb_quant_cache_read for all three types (kivi's half is in kivi.c). */
extern const kvb_method_type kvb_method_kivi;
size_t kvb_quant_cache_read(const kvb_method *m, double *K, double *V, size_t cap) {
  if (!m || !m->state) return 0;
  if (m->type == &kvb_method_kivi) return kvb_kivi_read_(m, K, V, cap);
  if (m->type == &kvb_method_q8_0 || m->type == &kvb_method_q4_0)
    return kvb_qblock_read_(m, K, V, cap);
  return 0;
}

const kvb_method_type kvb_method_q8_0 = {
    "q8_0",
    "llama.cpp q8_0 cache: K and V in blocks of 32, one fp16 scale max|x|/127 + 32 int8 codes",
    "llama.cpp/ggml block format q8_0 (34 bytes per 32 numbers)",
    qb_params, q8_mutants, 0, qb_init, qb_update, qb_query, qb_memory, qb_free};

const kvb_method_type kvb_method_q4_0 = {
    "q4_0",
    "llama.cpp q4_0 cache: K and V in blocks of 32, one fp16 scale max/−8 + 32 4-bit codes",
    "llama.cpp/ggml block format q4_0 (18 bytes per 32 numbers)",
    qb_params, q4_mutants, 0, qb_init, qb_update, qb_query, qb_memory, qb_free};

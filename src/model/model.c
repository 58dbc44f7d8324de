/* model.c — load a GGUF transformer described by its architecture record (arch.h) and run the one
 * forward pass (see model.h). */
#include "model.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvb_error.h"
#include "model_ops.h"
#include "parallel.h"

int kvb_model_path_for(const char *file, const char *env, char *buf, size_t cap) {
  const char *e = env ? getenv(env) : NULL, *dir = getenv("KVB_MODEL_DIR");
  int k;
  if (e && *e) k = snprintf(buf, cap, "%s", e);
  else if (dir && *dir) k = snprintf(buf, cap, "%s/%s", dir, file);
  else if ((e = getenv("XDG_CACHE_HOME")) && *e) k = snprintf(buf, cap, "%s/kvbound/%s", e, file);
  else if ((e = getenv("HOME")) && *e) k = snprintf(buf, cap, "%s/.cache/kvbound/%s", e, file);
  else return KVB_ERROR(KVB_ENOTFOUND, "no model path: set %s or HOME", env ? env : "KVB_MODEL_DIR");
  if (k < 0 || (size_t)k >= cap) return KVB_ERROR(KVB_EINVAL, "the model path is too long");
  return KVB_OK;
}

int kvb_model_default_path(char *buf, size_t cap) {
  return kvb_model_path_for(KVB_MODEL_FILE, "KVB_MODEL", buf, cap);
}

int kvb_model_available_for(const char *file, const char *env, unsigned long long size,
                            const char *fetch) {
  char p[4096];
  struct stat sb;
  if (kvb_model_path_for(file, env, p, sizeof p)) return KVB_ENOTFOUND;
  if (stat(p, &sb) != 0)
    return KVB_ERROR(KVB_ENOTFOUND, "the model %s is not there; run %s (or scripts/install-deps) "
                     "to fetch and verify it", p, fetch);
  if ((env == NULL || getenv(env) == NULL) && (unsigned long long)sb.st_size != size)
    return KVB_ERROR(KVB_ENOTFOUND, "the model %s has %lld bytes, not %llu: it is corrupt; run "
                     "%s to fetch it again", p, (long long)sb.st_size, size, fetch);
  return KVB_OK;
}

int kvb_model_available(void) {
  return kvb_model_available_for(KVB_MODEL_FILE, "KVB_MODEL", KVB_MODEL_SIZE, "scripts/fetch-model");
}

void kvb_model_free(kvb_model *m) {
  if (!m) return;
  free(m->weights);
  free(m->layers);
  free(m->embd);
  kvb_tok_free(m->tok);
  kvb_spm_free(m->spm);
  memset(m, 0, sizeof *m);
}

int32_t kvb_model_bos(const kvb_model *m) {
  return m && m->cfg.add_bos && m->spm ? kvb_spm_bos(m->spm) : -1;
}

int kvb_model_encode(const kvb_model *m, const char *text, size_t len, int add_bos, int32_t **ids,
                     size_t *n) {
  if (!m || !(m->tok || m->spm)) return KVB_ERROR(KVB_ENULL, "kvb_model_encode: no model");
  if (m->cfg.tokenizer == KVB_TOK_SPM) return kvb_spm_encode(m->spm, text, len, add_bos && m->cfg.add_bos, ids, n);
  return kvb_tok_encode(m->tok, text, len, ids, n);
}

int kvb_model_decode(const kvb_model *m, const int32_t *ids, size_t n, char **text, size_t *len) {
  if (!m || !(m->tok || m->spm)) return KVB_ERROR(KVB_ENULL, "kvb_model_decode: no model");
  if (m->cfg.tokenizer == KVB_TOK_SPM) return kvb_spm_decode(m->spm, ids, n, text, len);
  return kvb_tok_decode(m->tok, ids, n, text, len);
}

int kvb_model_tokens(const kvb_model *m, const char *buf, size_t len, const char *text, long want,
                     const char *who, int32_t **ids, size_t *n) {
  *ids = NULL, *n = 0;
  int st = kvb_model_encode(m, buf, len, 1, ids, n);
  if (!st && *n <= (kvb_model_bos(m) >= 0 ? 1u : 0u)) st = KVB_ERROR(KVB_EINVAL, "%s: %s has no tokens", who, text);
  if (!st && want > 0 && (size_t)want > *n)
    st = KVB_ERROR(KVB_EINVAL, "%s: %ld tokens asked but %s has %zu", who, want, text, *n);
  if (st) {
    free(*ids), *ids = NULL, *n = 0;
    return st;
  }
  if (want > 0) *n = (size_t)want;
  if (*n > (size_t)m->cfg.n_ctx) *n = (size_t)m->cfg.n_ctx;
  return KVB_OK;
}

int kvb_model_load_tokens(const char *path, const char *buf, size_t len, const char *text,
                          long want, const char *who, kvb_model *m, int32_t **ids, size_t *n) {
  *ids = NULL, *n = 0;
  int st = kvb_model_load(path, m);
  if (st) return st;
  if ((st = kvb_model_tokens(m, buf, len, text, want, who, ids, n))) kvb_model_free(m);
  return st;
}

int kvb_model_load(const char *path, kvb_model *m) {
  if (!m) return KVB_ERROR(KVB_ENULL, "kvb_model_load: m is NULL");
  memset(m, 0, sizeof *m);
  char def[4096];
  if (!path) {
    int st = kvb_model_available();
    if (st) return st;
    kvb_model_default_path(def, sizeof def);
    path = def;
  }
  kvb_gguf g;
  int st = kvb_gguf_read(path, &g);
  if (st) return st;
  kvb_model mm;
  memset(&mm, 0, sizeof mm);
  kvb_arch *c = &mm.cfg;
  if ((st = kvb_arch_from_gguf(&g, path, c))) goto fail;
  const kvb_gguf_tensor *emb = kvb_gguf_tensor_find(&g, "token_embd.weight");
  uint64_t be, bb;
  if (!emb || emb->ne[0] != (uint64_t)c->d_model || emb->ne[1] > (1u << 24) || emb->ne[2] != 1 ||
      kvb_ggml_type_block(emb->type, &be, &bb) || emb->ne[0] % be) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: missing or misshapen token_embd.weight", path);
    goto fail;
  }
  c->n_vocab = (int)emb->ne[1];
  if (kvb_gguf_tensor_find(&g, "output.weight")) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: a separate output.weight is not supported (tied output only)", path);
    goto fail;
  }
  size_t D = (size_t)c->d_model, hd = (size_t)c->head_dim, Dq = (size_t)c->n_head * hd,
         Dkv = (size_t)c->n_head_kv * hd, F = (size_t)c->d_ff, V = (size_t)c->n_vocab;
  /* a float copy of the embedding up to KVB_MODEL_EMBD_F32_MAX bytes, else its file encoding */
  int embd_f32 = (unsigned long long)V * D * sizeof(float) <= KVB_MODEL_EMBD_F32_MAX;
  size_t per_layer = 2 * D + (c->qk_norm ? 2 * hd : 0) + (c->post_norms ? 2 * D : 0) +
                     2 * D * Dq + 2 * D * Dkv + 3 * D * F;
  mm.n_weights = (embd_f32 ? V * D : 0) + D + (size_t)c->n_layer * per_layer;
  mm.weights = malloc(mm.n_weights * sizeof(float));
  mm.layers = calloc((size_t)c->n_layer, sizeof *mm.layers);
  if (!embd_f32) {
    mm.embd_type = emb->type;
    mm.embd_row_bytes = (size_t)(emb->ne[0] / be * bb);
    if ((mm.embd = malloc((size_t)emb->n_bytes))) memcpy(mm.embd, emb->data, (size_t)emb->n_bytes);
  }
  if (!mm.weights || !mm.layers || (!embd_f32 && !mm.embd)) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory for %zu weights", mm.n_weights);
    goto fail;
  }
  float *at = mm.weights;
  if ((embd_f32 && (st = kvb_mo_take(&g, "token_embd.weight", D, V, &at, &mm.tok_embd))) ||
      (st = kvb_mo_take(&g, "output_norm.weight", D, 1, &at, &mm.out_norm)))
    goto fail;
  for (int l = 0; l < c->n_layer && !st; l++) {
    kvb_model_layer *L = &mm.layers[l];
    char nm[64];
#define T(field, suffix, a, b)                              \
  if (!st) {                                                \
    snprintf(nm, sizeof nm, "blk.%d.%s.weight", l, suffix); \
    st = kvb_mo_take(&g, nm, a, b, &at, &L->field);         \
  }
    T(attn_norm, "attn_norm", D, 1)
    T(wq, "attn_q", D, Dq)
    T(wk, "attn_k", D, Dkv)
    T(wv, "attn_v", D, Dkv)
    if (c->qk_norm) {
      T(q_norm, "attn_q_norm", hd, 1)
      T(k_norm, "attn_k_norm", hd, 1)
    }
    T(wo, "attn_output", Dq, D)
    if (c->post_norms) T(post_attn_norm, "post_attention_norm", D, 1)
    T(ffn_norm, "ffn_norm", D, 1)
    T(w_gate, "ffn_gate", D, F)
    T(w_up, "ffn_up", D, F)
    T(w_down, "ffn_down", F, D)
    if (c->post_norms) T(post_ffn_norm, "post_ffw_norm", D, 1)
#undef T
  }
  if (st) goto fail;
  if (c->norm_weight_offset) { /* 1 + w, for a file that stores the raw w */
    for (int l = 0; l < c->n_layer; l++) {
      kvb_model_layer *L = &mm.layers[l];
      float *nv[6] = {L->attn_norm, L->ffn_norm, L->post_attn_norm, L->post_ffn_norm, L->q_norm, L->k_norm};
      for (int j = 0; j < 6; j++)
        for (size_t i = 0; nv[j] && i < (j < 4 ? D : hd); i++) nv[j][i] += 1.0f;
    }
    for (size_t i = 0; i < D; i++) mm.out_norm[i] += 1.0f;
  }
  size_t nv_tok;
  if (c->tokenizer == KVB_TOK_SPM) {
    if ((st = kvb_spm_load(&g, &mm.spm))) goto fail;
    nv_tok = kvb_spm_vocab_size(mm.spm);
  } else {
    if ((st = kvb_tok_load(&g, &mm.tok))) goto fail;
    nv_tok = kvb_tok_vocab_size(mm.tok);
  }
  if (nv_tok != V) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: the tokenizer has %zu tokens, the embedding %d", path, nv_tok, c->n_vocab);
    goto fail;
  }
  kvb_gguf_free(&g);
  *m = mm;
  return KVB_OK;
fail:
  kvb_gguf_free(&g);
  kvb_model_free(&mm);
  return st;
}

/* ------------------------------------------------------------------ the block */

/* RoPE tables for one base: cs[(r·hd/2 + i)·2 + {0,1}] = cos, sin of (p0 + r)·base^(−2i/hd). */
static void rope_table(double base, size_t p0, size_t n, size_t hd, double *cs) {
  for (size_t i = 0; i < hd / 2; i++) {
    double inv = pow(base, -2.0 * (double)i / (double)hd);
    for (size_t r = 0; r < n; r++) {
      double th = (double)(p0 + r) * inv;
      cs[(r * (hd / 2) + i) * 2] = cos(th);
      cs[(r * (hd / 2) + i) * 2 + 1] = sin(th);
    }
  }
}

void kvb_model_ws_free(kvb_model_ws *w) {
  if (!w) return;
  free(w->h); free(w->q); free(w->k); free(w->v); free(w->g); free(w->u); free(w->o);
  free(w->tmp); free(w->cs_g); free(w->cs_l);
  memset(w, 0, sizeof *w);
}

int kvb_model_ws_init(const kvb_model *m, size_t p0, size_t n, kvb_model_ws *w) {
  memset(w, 0, sizeof *w);
  const kvb_arch *c = &m->cfg;
  size_t D = (size_t)c->d_model, hd = (size_t)c->head_dim, Dq = (size_t)c->n_head * hd,
         Dkv = (size_t)c->n_head_kv * hd, F = (size_t)c->d_ff;
  w->p0 = p0, w->n = n;
  w->h = malloc(n * D * sizeof(float)), w->q = malloc(n * (Dq + 2 * Dkv) * sizeof(float));
  w->k = malloc(n * Dkv * sizeof(float)), w->v = malloc(n * Dkv * sizeof(float));
  w->g = malloc(n * 2 * F * sizeof(float)), w->u = malloc(n * F * sizeof(float));
  w->o = malloc(n * D * sizeof(float)), w->tmp = malloc(KVB_MAX_THREADS * hd * sizeof(float)); /* a row per worker */
  w->cs_g = malloc(n * hd * sizeof(double)), w->cs_l = malloc(n * hd * sizeof(double));
  if (!w->h || !w->q || !w->k || !w->v || !w->g || !w->u || !w->o || !w->tmp || !w->cs_g || !w->cs_l) {
    kvb_model_ws_free(w);
    return KVB_ERROR(KVB_ENOMEM, "out of memory for %zu rows of the model", n);
  }
  rope_table(c->rope_base, p0, n, hd, w->cs_g);
  rope_table(c->rope_base_local, p0, n, hd, w->cs_l);
  return KVB_OK;
}

int kvb_model_embed(const kvb_model *m, const int32_t *tokens, size_t n, float *x) {
  size_t D = (size_t)m->cfg.d_model;
  const float emb_scale = sqrtf((float)D); /* llama.cpp scales by sqrtf(n_embd) in float */
  for (size_t p = 0; p < n; p++) {
    if (tokens[p] < 0 || tokens[p] >= m->cfg.n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token %zu is %d, outside the vocabulary", p, (int)tokens[p]);
    if (m->tok_embd) memcpy(x + p * D, m->tok_embd + (size_t)tokens[p] * D, D * sizeof(float));
    else {
      int st = kvb_gguf_dequant(m->embd_type, m->embd + (size_t)tokens[p] * m->embd_row_bytes, D, x + p * D);
      if (st) return st;
    }
    if (m->cfg.embd_scale_sqrt_d)
      for (size_t i = 0; i < D; i++) x[p * D + i] *= emb_scale;
  }
  return KVB_OK;
}

size_t kvb_model_window(const kvb_model *m, int l, unsigned variant) {
  return kvb_arch_is_global(&m->cfg, l) || (variant & KVB_MODEL_NO_WINDOW) ? 0 : (size_t)m->cfg.window;
}

/* ---- the row-wise parts of a layer, in blocks of rows on the library's workers ----
 *
 * Everything in a layer except attention acts on each token's row alone (norms, projections,
 * RoPE, the feed-forward), so the rows are cut into blocks and each block runs all of it on one
 * worker with single-threaded sgemm calls. Why not OpenBLAS's own threads on the whole matrix: between its products
 * the norms, RoPE and activations ran on one core while OpenBLAS's idle thread spun (its
 * sched_yield loop counts as CPU time), and each product paid a hand-off to its thread server.
 * The blocks are ROW_BLOCK rows whatever the thread count, so the numbers do not depend on it
 * (OpenBLAS rounds an entry differently at another tile position: against the earlier whole-
 * matrix products the hidden states moved by ≤ 2.3e-6 of their largest value at 2048 tokens,
 * and the golden tests' figures did not move in their printed digits).
 *
 * Fused projections: the weight arena takes Wq, Wk, Wv one after the other, and W_gate, W_up,
 * so [Wq; Wk; Wv] and [W_gate; W_up] are each one matrix already — one sgemm with N = Dq + 2·Dkv
 * (and 2·F) instead of three (two): the activations are packed once, not three (two) times.
 * A model whose tensors are not adjacent (a hand-built one) takes the separate products. */

/* y[n][out] (ld ldy) (+)= x[n][in] (ld ldx) · W[out][in]ᵀ */
static void matmul_ld(const float *x, size_t ldx, const float *W, size_t n, size_t in, size_t out,
                      float *y, size_t ldy, float beta) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)out, (int)in, 1.0f, x, (int)ldx,
              W, (int)in, beta, y, (int)ldy);
}

/* Rows per block: a constant, so the blocks — and with them every product's bits, which
 * OpenBLAS's kernels round differently at different tile positions — do not depend on the thread
 * count; 256 rows give a 512-token prefill two blocks (both cores) and keep sgemm's repacking of
 * the weights per block near 1/(2·256) of a block's flops. */
#define ROW_BLOCK 256

/* Runs fn over the row blocks on kvb_threads_default() workers, every product on one BLAS thread
 * whatever the worker count (parallel.h sets this only for several workers), so the numbers
 * depend neither on $KVBOUND_THREADS nor on OPENBLAS_NUM_THREADS. */
static void for_row_blocks(size_t n, kvb_parallel_fn fn, void *job) {
  int blas_prev = openblas_get_num_threads();
  if (blas_prev != 1) openblas_set_num_threads(1);
  kvb_parallel_for((n + ROW_BLOCK - 1) / ROW_BLOCK, kvb_threads_default(), fn, job);
  if (blas_prev != 1) openblas_set_num_threads(blas_prev);
}

typedef struct {
  const kvb_model *m;
  int l;
  unsigned variant;
  const float *x; /* layer input (qkv) */
  float *xo;      /* residual stream (rest) */
  const float *att;
  kvb_model_ws *w;
  float *qh, *kh, *vh;
} rows_job;

static int qkv_rows(size_t it, void *arg, int worker) {
  const rows_job *R = arg;
  const kvb_model *m = R->m;
  const kvb_arch *c = &m->cfg;
  const kvb_model_layer *L = &m->layers[R->l];
  kvb_model_ws *w = R->w;
  size_t n = w->n, D = (size_t)c->d_model, H = (size_t)c->n_head, Hk = (size_t)c->n_head_kv,
         hd = (size_t)c->head_dim, Dq = H * hd, Dkv = Hk * hd, half = hd / 2;
  size_t p0 = it * ROW_BLOCK, nr = n - p0 < ROW_BLOCK ? n - p0 : ROW_BLOCK;
  int global = kvb_arch_is_global(c, R->l), qk_norm = c->qk_norm && !(R->variant & KVB_MODEL_NO_QK_NORM);
  int neox = c->rope_layout == KVB_ROPE_NEOX;
  const double *cs = global && !(R->variant & KVB_MODEL_GLOBAL_LOCAL_BASE) ? w->cs_g : w->cs_l;
  int fused = L->wk == L->wq + Dq * D && L->wv == L->wk + Dkv * D;
  size_t ldq = fused ? Dq + 2 * Dkv : Dq; /* q's row stride; k and v follow q in a fused row */
  float *h = w->h + p0 * D, *q = w->q + p0 * ldq, *k = fused ? q + Dq : w->k + p0 * Dkv,
        *v = fused ? q + Dq + Dkv : w->v + p0 * Dkv, *tmp = w->tmp + (size_t)worker * hd;
  size_t ldk = fused ? ldq : Dkv;
  const float *x = R->x + p0 * D;
  for (size_t p = 0; p < nr; p++) kvb_mo_rmsnorm(x + p * D, L->attn_norm, D, c->rms_eps, h + p * D);
  if (fused) matmul_ld(h, D, L->wq, nr, D, Dq + 2 * Dkv, q, ldq, 0);
  else {
    matmul_ld(h, D, L->wq, nr, D, Dq, q, Dq, 0);
    matmul_ld(h, D, L->wk, nr, D, Dkv, k, Dkv, 0);
    matmul_ld(h, D, L->wv, nr, D, Dkv, v, Dkv, 0);
  }
  /* QK-norm, RoPE (pair i with i + hd/2 in NEOX, with i + 1 in the adjacent layout), and the
   * per-head layouts [head][n][hd] */
  for (size_t r = 0; r < nr; r++) {
    size_t p = p0 + r;
    const double *rt = cs + p * hd;
    for (size_t j = 0; j < H + Hk; j++) {
      float *src = j < H ? q + r * ldq + j * hd : k + r * ldk + (j - H) * hd;
      float *dst = j < H ? R->qh + (j * n + p) * hd : R->kh + ((j - H) * n + p) * hd;
      if (qk_norm) kvb_mo_rmsnorm(src, j < H ? L->q_norm : L->k_norm, hd, c->qk_norm_eps, tmp);
      else memcpy(tmp, src, hd * sizeof(float));
      for (size_t i = 0; i < half; i++) {
        size_t ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
        double a = tmp[ia], b = tmp[ib];
        dst[ia] = (float)(a * rt[2 * i] - b * rt[2 * i + 1]);
        dst[ib] = (float)(a * rt[2 * i + 1] + b * rt[2 * i]);
      }
    }
    for (size_t j = 0; j < Hk; j++)
      memcpy(R->vh + (j * n + p) * hd, v + r * ldk + j * hd, hd * sizeof(float));
  }
  return 0;
}

void kvb_model_layer_qkv(const kvb_model *m, int l, unsigned variant, const float *x,
                         kvb_model_ws *w, float *qh, float *kh, float *vh) {
  rows_job R = {m, l, variant, x, NULL, NULL, w, qh, kh, vh};
  for_row_blocks(w->n, qkv_rows, &R);
}

/* x += post ? RMSNorm(y)·post : y, where y = a[nr][in] (ld lda)·W[out = D][in]ᵀ (into x by
 * sgemm's β = 1 when there is no post-norm: the residual add in the product, as llama's block);
 * o and h are nr rows of scratch. */
static void residual(const kvb_model *m, const float *a, size_t lda, const float *W, size_t in,
                     const float *post, size_t nr, float *o, float *h, float *x) {
  size_t D = (size_t)m->cfg.d_model;
  if (!post) {
    matmul_ld(a, lda, W, nr, in, D, x, D, 1.0f);
    return;
  }
  matmul_ld(a, lda, W, nr, in, D, o, D, 0);
  for (size_t p = 0; p < nr; p++) {
    kvb_mo_rmsnorm(o + p * D, post, D, m->cfg.rms_eps, h + p * D);
    for (size_t i = 0; i < D; i++) x[p * D + i] += h[p * D + i];
  }
}

static int rest_rows(size_t it, void *arg, int worker) {
  (void)worker;
  const rows_job *R = arg;
  const kvb_model *m = R->m;
  const kvb_arch *c = &m->cfg;
  const kvb_model_layer *L = &m->layers[R->l];
  kvb_model_ws *w = R->w;
  size_t n = w->n, D = (size_t)c->d_model, Dq = (size_t)c->n_head * (size_t)c->head_dim,
         F = (size_t)c->d_ff;
  size_t p0 = it * ROW_BLOCK, nr = n - p0 < ROW_BLOCK ? n - p0 : ROW_BLOCK;
  int fused = L->w_up == L->w_gate + F * D;
  size_t ldg = fused ? 2 * F : F; /* a fused row holds gate then up */
  float *x = R->xo + p0 * D, *h = w->h + p0 * D, *o = w->o + p0 * D, *g = w->g + p0 * ldg,
        *u = fused ? g + F : w->u + p0 * F;
  residual(m, R->att + p0 * Dq, Dq, L->wo, Dq, c->post_norms ? L->post_attn_norm : NULL, nr, o, h, x);
  for (size_t p = 0; p < nr; p++) kvb_mo_rmsnorm(x + p * D, L->ffn_norm, D, c->rms_eps, h + p * D);
  if (fused) matmul_ld(h, D, L->w_gate, nr, D, 2 * F, g, ldg, 0);
  else {
    matmul_ld(h, D, L->w_gate, nr, D, F, g, F, 0);
    matmul_ld(h, D, L->w_up, nr, D, F, u, F, 0);
  }
  for (size_t p = 0; p < (fused ? nr : 1); p++) {
    size_t cnt = fused ? F : nr * F;
    if (c->act == KVB_ACT_GELU_TANH) kvb_mo_geglu(g + p * ldg, u + p * ldg, cnt);
    else kvb_mo_swiglu(g + p * ldg, u + p * ldg, cnt);
  }
  residual(m, g, ldg, L->w_down, F, c->post_norms ? L->post_ffn_norm : NULL, nr, o, h, x);
  return 0;
}

void kvb_model_layer_rest(const kvb_model *m, int l, const float *att, kvb_model_ws *w, float *x) {
  rows_job R = {m, l, 0, NULL, x, att, w, NULL, NULL, NULL};
  for_row_blocks(w->n, rest_rows, &R);
}

int kvb_model_prefill(const kvb_model *m, const int32_t *tokens, size_t n, float *hidden,
                      kvb_model_qkv_fn fn, void *ctx) {
  return kvb_model_prefill_variant(m, 0, tokens, n, hidden, fn, ctx);
}

int kvb_model_prefill_variant(const kvb_model *m, unsigned variant, const int32_t *tokens,
                              size_t n, float *hidden, kvb_model_qkv_fn fn, void *ctx) {
  if (!m || !m->weights || !tokens || !hidden) return KVB_ERROR(KVB_ENULL, "kvb_model_prefill: NULL argument");
  const kvb_arch *c = &m->cfg;
  if (n == 0 || n > (size_t)c->n_ctx)
    return KVB_ERROR(KVB_EINVAL, "%zu tokens: the model takes 1 to %d", n, c->n_ctx);
  for (size_t i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= c->n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token %zu is %d, outside the vocabulary", i, (int)tokens[i]);
  size_t D = (size_t)c->d_model, H = (size_t)c->n_head, Hk = (size_t)c->n_head_kv,
         hd = (size_t)c->head_dim, Dq = H * hd, Dkv = Hk * hd;
  kvb_model_ws w;
  int st = kvb_model_ws_init(m, 0, n, &w);
  if (st) return st;
  float *x = malloc(n * D * sizeof(float)), *qh = malloc(n * Dq * sizeof(float)),
        *kh = malloc(n * Dkv * sizeof(float)), *vh = malloc(n * Dkv * sizeof(float)),
        *att = malloc(n * Dq * sizeof(float));
  if (!x || !qh || !kh || !vh || !att) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory for a prefill of %zu tokens", n);
    goto done;
  }
  if ((st = kvb_model_embed(m, tokens, n, x))) goto done;
  const float scale = (float)c->attn_scale;
  for (int l = 0; l < c->n_layer; l++) {
    kvb_model_layer_qkv(m, l, variant, x, &w, qh, kh, vh);
    if (fn) fn(ctx, l, n, qh, kh, vh);
    if ((st = kvb_mo_attention(qh, kh, vh, n, H, Hk, hd, scale, kvb_model_window(m, l, variant), att, Dq)))
      goto done;
    kvb_model_layer_rest(m, l, att, &w, x);
  }
  for (size_t p = 0; p < n; p++) kvb_mo_rmsnorm(x + p * D, m->out_norm, D, c->rms_eps, hidden + p * D);
done:
  free(x); free(qh); free(kh); free(vh); free(att);
  kvb_model_ws_free(&w);
  return st;
}

/* ------------------------------------------------------------------ output */

#define VCHUNK 8192 /* vocabulary rows dequantized at a time for an encoded tied output */

/* Calls back with each chunk of the vocabulary's logits [rows][cnt] (row stride cnt): one chunk
 * (the float embedding itself) or VCHUNK rows of the encoded one at a time. */
typedef void (*chunk_fn)(void *ctx, size_t v0, size_t cnt, const float *lg, size_t rows);

static int logits_chunks(const kvb_model *m, const float *hidden, size_t rows, chunk_fn cb, void *ctx) {
  size_t D = (size_t)m->cfg.d_model, V = (size_t)m->cfg.n_vocab, vc = m->tok_embd ? V : VCHUNK;
  float *E = m->tok_embd ? NULL : malloc(VCHUNK * D * sizeof(float)), *lg = malloc(vc * rows * sizeof(float));
  int st = (E || m->tok_embd) && lg ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory for the output chunks");
  for (size_t v0 = 0; v0 < V && !st; v0 += vc) {
    size_t cnt = V - v0 < vc ? V - v0 : vc;
    if (E && (st = kvb_gguf_dequant(m->embd_type, m->embd + v0 * m->embd_row_bytes, cnt * D, E))) break;
    kvb_mo_matmul(hidden, E ? E : m->tok_embd, rows, D, cnt, lg, 0);
    cb(ctx, v0, cnt, lg, rows);
  }
  free(E);
  free(lg);
  return st;
}

typedef struct {
  float *out;
  size_t V;
} full_ctx;
static void to_full(void *vc, size_t v0, size_t cnt, const float *lg, size_t rows) {
  full_ctx *c = vc;
  for (size_t r = 0; r < rows; r++) memcpy(c->out + r * c->V + v0, lg + r * cnt, cnt * sizeof(float));
}

int kvb_model_logits(const kvb_model *m, const float *hidden, size_t rows, float *logits) {
  if (!m || !m->weights || !hidden || !logits) return KVB_ERROR(KVB_ENULL, "kvb_model_logits: NULL argument");
  if (m->tok_embd) {
    kvb_mo_matmul(hidden, m->tok_embd, rows, (size_t)m->cfg.d_model, (size_t)m->cfg.n_vocab, logits, 0);
    return KVB_OK;
  }
  full_ctx c = {logits, (size_t)m->cfg.n_vocab};
  return logits_chunks(m, hidden, rows, to_full, &c);
}

typedef struct {
  double *mx, *sum, *target;
  const int32_t *next; /* the token each row predicts */
} lse_ctx;
static void to_lse(void *vc, size_t v0, size_t cnt, const float *lg, size_t rows) {
  lse_ctx *c = vc;
  for (size_t r = 0; r < rows; r++) {
    const float *z = lg + r * cnt;
    double mx = c->mx[r];
    for (size_t i = 0; i < cnt; i++) mx = z[i] > mx ? z[i] : mx;
    double s = c->sum[r] * exp(c->mx[r] - mx);
    for (size_t i = 0; i < cnt; i++) s += exp((double)z[i] - mx);
    c->mx[r] = mx, c->sum[r] = s;
    size_t t = (size_t)c->next[r];
    if (t >= v0 && t < v0 + cnt) c->target[r] = z[t - v0];
  }
}

int kvb_model_perplexity_hidden(const kvb_model *m, const float *hid, const int32_t *tokens,
                                size_t n, double *ppl) {
  if (!m || !hid || !tokens || !ppl) return KVB_ERROR(KVB_ENULL, "kvb_model_perplexity: NULL argument");
  if (n < 2) return KVB_ERROR(KVB_EINVAL, "perplexity needs at least 2 tokens");
  for (size_t i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= m->cfg.n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token %zu is %d, outside the vocabulary", i, (int)tokens[i]);
  double *mx = malloc(n * sizeof(double)), *sum = calloc(n, sizeof(double)), *tg = calloc(n, sizeof(double));
  int st = mx && sum && tg ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  /* rows at a time: 64 against the whole float vocabulary (64·V floats of logits), all of them
   * against each chunk of an encoded one (its chunks are dequantized once) */
  size_t D = (size_t)m->cfg.d_model, rb = m->tok_embd ? 64 : n - 1;
  for (size_t i = 0; !st && i < n; i++) mx[i] = -INFINITY;
  for (size_t r0 = 0; !st && r0 + 1 < n; r0 += rb) {
    size_t rows = n - 1 - r0 < rb ? n - 1 - r0 : rb;
    lse_ctx c = {mx + r0, sum + r0, tg + r0, tokens + r0 + 1};
    st = logits_chunks(m, hid + r0 * D, rows, to_lse, &c);
  }
  double nll = 0;
  for (size_t r = 0; !st && r + 1 < n; r++) nll += mx[r] + log(sum[r]) - tg[r];
  if (!st) *ppl = exp(nll / (double)(n - 1));
  free(mx); free(sum); free(tg);
  return st;
}

int kvb_model_perplexity_variant(const kvb_model *m, unsigned variant, const int32_t *tokens,
                                 size_t n, double *ppl) {
  if (!m || !tokens || !ppl) return KVB_ERROR(KVB_ENULL, "kvb_model_perplexity: NULL argument");
  if (n < 2) return KVB_ERROR(KVB_EINVAL, "perplexity needs at least 2 tokens");
  float *hid = malloc(n * (size_t)m->cfg.d_model * sizeof(float));
  int st = hid ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) st = kvb_model_prefill_variant(m, variant, tokens, n, hid, NULL, NULL);
  if (!st) st = kvb_model_perplexity_hidden(m, hid, tokens, n, ppl);
  free(hid);
  return st;
}

int kvb_model_perplexity(const kvb_model *m, const int32_t *tokens, size_t n, double *ppl) {
  return kvb_model_perplexity_variant(m, 0, tokens, n, ppl);
}

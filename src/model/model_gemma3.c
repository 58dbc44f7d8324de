/* model_gemma3.c — load a Gemma 3 GGUF and run its forward pass (see model_gemma3.h). */
#include "model_gemma3.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"
#include "model_ops.h"

int kvb_gemma3_default_path(char *buf, size_t cap) {
  return kvb_model_path_for(KVB_GEMMA3_FILE, KVB_GEMMA3_ENV, buf, cap);
}

int kvb_gemma3_available(void) {
  return kvb_model_available_for(KVB_GEMMA3_FILE, KVB_GEMMA3_ENV, KVB_GEMMA3_SIZE,
                                 "scripts/fetch-model --model gemma3");
}

int kvb_gemma3_is_global(const kvb_gemma3_config *c, int layer) {
  return c->swa_period <= 0 || layer % c->swa_period == c->swa_period - 1;
}

void kvb_gemma3_free(kvb_gemma3 *m) {
  if (!m) return;
  free(m->weights);
  free(m->layers);
  free(m->embd);
  kvb_spm_free(m->tok);
  memset(m, 0, sizeof *m);
}

int kvb_gemma3_load(const char *path, kvb_gemma3 *m) {
  if (!m) return KVB_ERROR(KVB_ENULL, "kvb_gemma3_load: m is NULL");
  memset(m, 0, sizeof *m);
  char def[4096];
  if (!path) {
    int st = kvb_gemma3_available();
    if (st) return st;
    kvb_gemma3_default_path(def, sizeof def);
    path = def;
  }
  kvb_gguf g;
  int st = kvb_gguf_read(path, &g);
  if (st) return st;
  kvb_gemma3 mm;
  memset(&mm, 0, sizeof mm);
  kvb_gemma3_config *c = &mm.cfg;
  const char *arch = NULL;
  double f;
  if (kvb_gguf_get_str(&g, "general.architecture", &arch) || strcmp(arch, "gemma3") != 0) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: not a gemma3-architecture model", path);
    goto fail;
  }
  if ((st = kvb_mo_get_int(&g, "gemma3.block_count", 1, 1024, &c->n_layer)) ||
      (st = kvb_mo_get_int(&g, "gemma3.embedding_length", 1, 65536, &c->d_model)) ||
      (st = kvb_mo_get_int(&g, "gemma3.attention.head_count", 1, 1024, &c->n_head)) ||
      (st = kvb_mo_get_int(&g, "gemma3.attention.head_count_kv", 1, 1024, &c->n_head_kv)) ||
      (st = kvb_mo_get_int(&g, "gemma3.attention.key_length", 2, 4096, &c->head_dim)) ||
      (st = kvb_mo_get_int(&g, "gemma3.feed_forward_length", 1, 1 << 20, &c->d_ff)) ||
      (st = kvb_mo_get_int(&g, "gemma3.context_length", 1, 1 << 24, &c->n_ctx)) ||
      (st = kvb_mo_get_int(&g, "gemma3.attention.sliding_window", 1, 1 << 24, &c->window)))
    goto fail;
  int vlen;
  if ((st = kvb_mo_get_int(&g, "gemma3.attention.value_length", 1, 4096, &vlen))) goto fail;
  if (vlen != c->head_dim || c->head_dim % 2 || c->n_head % c->n_head_kv) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: key length %d and value length %d differ, are odd, or the "
                   "heads (%d, %d) do not group", path, c->head_dim, vlen, c->n_head, c->n_head_kv);
    goto fail;
  }
  c->swa_period = 6;
  c->rope_base_global = kvb_gguf_get_float(&g, "gemma3.rope.freq_base", &f) ? 1e6 : f;
  c->rope_base_local = 10000.0;
  c->rms_eps = kvb_gguf_get_float(&g, "gemma3.attention.layer_norm_rms_epsilon", &f) ? 1e-6 : f;
  c->attn_scale = 1.0 / sqrt((double)c->head_dim);
  if (!(c->rope_base_global > 1) || !isfinite(c->rope_base_global) || !(c->rms_eps > 0) ||
      !(c->rms_eps < 1) || kvb_gguf_find(&g, "gemma3.final_logit_softcapping") ||
      kvb_gguf_find(&g, "gemma3.attn_logit_softcapping")) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: a RoPE base (%g) not finite and > 1, an RMS epsilon (%g) "
                   "not in (0, 1), or soft-capping (not supported)", path, c->rope_base_global, c->rms_eps);
    goto fail;
  }
  const kvb_gguf_tensor *emb = kvb_gguf_tensor_find(&g, "token_embd.weight");
  uint64_t be, bb;
  if (!emb || emb->ne[0] != (uint64_t)c->d_model || emb->ne[1] > (1u << 24) || emb->ne[2] != 1 ||
      kvb_ggml_type_block(emb->type, &be, &bb) || emb->ne[0] % be) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: missing or misshapen token_embd.weight", path);
    goto fail;
  }
  if (kvb_gguf_tensor_find(&g, "output.weight")) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: a separate output.weight is not supported (tied output only)", path);
    goto fail;
  }
  c->n_vocab = (int)emb->ne[1];
  mm.embd_type = emb->type;
  mm.embd_row_bytes = (size_t)(emb->ne[0] / be * bb);
  mm.embd = malloc((size_t)emb->n_bytes);
  size_t D = (size_t)c->d_model, hd = (size_t)c->head_dim, Dq = (size_t)c->n_head * hd,
         Dkv = (size_t)c->n_head_kv * hd, F = (size_t)c->d_ff;
  size_t per_layer = 5 * D + 2 * hd + 2 * D * Dq + 2 * D * Dkv + 3 * D * F;
  mm.n_weights = D + (size_t)c->n_layer * per_layer;
  mm.weights = malloc(mm.n_weights * sizeof(float));
  mm.layers = calloc((size_t)c->n_layer, sizeof *mm.layers);
  if (!mm.embd || !mm.weights || !mm.layers) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory for %zu weights", mm.n_weights);
    goto fail;
  }
  memcpy(mm.embd, emb->data, (size_t)emb->n_bytes);
  float *at = mm.weights;
  if ((st = kvb_mo_take(&g, "output_norm.weight", D, 1, &at, &mm.out_norm))) goto fail;
  for (int l = 0; l < c->n_layer && !st; l++) {
    kvb_gemma3_layer *L = &mm.layers[l];
    char nm[64];
#define T(field, suffix, a, b)                              \
  if (!st) {                                                \
    snprintf(nm, sizeof nm, "blk.%d.%s.weight", l, suffix); \
    st = kvb_mo_take(&g, nm, a, b, &at, &L->field);                \
  }
    T(attn_norm, "attn_norm", D, 1)
    T(wq, "attn_q", D, Dq)
    T(wk, "attn_k", D, Dkv)
    T(wv, "attn_v", D, Dkv)
    T(q_norm, "attn_q_norm", hd, 1)
    T(k_norm, "attn_k_norm", hd, 1)
    T(wo, "attn_output", Dq, D)
    T(post_attn_norm, "post_attention_norm", D, 1)
    T(ffn_norm, "ffn_norm", D, 1)
    T(w_gate, "ffn_gate", D, F)
    T(w_up, "ffn_up", D, F)
    T(w_down, "ffn_down", F, D)
    T(post_ffn_norm, "post_ffw_norm", D, 1)
#undef T
  }
  if (st) goto fail;
  if ((st = kvb_spm_load(&g, &mm.tok))) goto fail;
  if (kvb_spm_vocab_size(mm.tok) != (size_t)c->n_vocab) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: the tokenizer has %zu tokens, the embedding %d", path,
                   kvb_spm_vocab_size(mm.tok), c->n_vocab);
    goto fail;
  }
  kvb_gguf_free(&g);
  *m = mm;
  return KVB_OK;
fail:
  kvb_gguf_free(&g);
  kvb_gemma3_free(&mm);
  return st;
}

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

void kvb_gemma3_ws_free(kvb_gemma3_ws *w) {
  if (!w) return;
  free(w->h); free(w->q); free(w->k); free(w->v); free(w->g); free(w->u); free(w->o);
  free(w->tmp); free(w->cs_g); free(w->cs_l);
  memset(w, 0, sizeof *w);
}

int kvb_gemma3_ws_init(const kvb_gemma3 *m, size_t p0, size_t n, kvb_gemma3_ws *w) {
  memset(w, 0, sizeof *w);
  const kvb_gemma3_config *c = &m->cfg;
  size_t D = (size_t)c->d_model, hd = (size_t)c->head_dim, Dq = (size_t)c->n_head * hd,
         Dkv = (size_t)c->n_head_kv * hd, F = (size_t)c->d_ff;
  w->p0 = p0, w->n = n;
  w->h = malloc(n * D * sizeof(float)), w->q = malloc(n * Dq * sizeof(float));
  w->k = malloc(n * Dkv * sizeof(float)), w->v = malloc(n * Dkv * sizeof(float));
  w->g = malloc(n * F * sizeof(float)), w->u = malloc(n * F * sizeof(float));
  w->o = malloc(n * D * sizeof(float)), w->tmp = malloc(hd * sizeof(float));
  w->cs_g = malloc(n * hd * sizeof(double)), w->cs_l = malloc(n * hd * sizeof(double));
  if (!w->h || !w->q || !w->k || !w->v || !w->g || !w->u || !w->o || !w->tmp || !w->cs_g || !w->cs_l) {
    kvb_gemma3_ws_free(w);
    return KVB_ERROR(KVB_ENOMEM, "out of memory for %zu Gemma 3 rows", n);
  }
  rope_table(c->rope_base_global, p0, n, hd, w->cs_g);
  rope_table(c->rope_base_local, p0, n, hd, w->cs_l);
  return KVB_OK;
}

int kvb_gemma3_embed(const kvb_gemma3 *m, const int32_t *tokens, size_t n, float *x) {
  size_t D = (size_t)m->cfg.d_model;
  const float emb_scale = sqrtf((float)D); /* llama.cpp scales by sqrtf(n_embd) in float */
  for (size_t p = 0; p < n; p++) {
    if (tokens[p] < 0 || tokens[p] >= m->cfg.n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token %zu is %d, outside the vocabulary", p, (int)tokens[p]);
    const unsigned char *row = m->embd + (size_t)tokens[p] * m->embd_row_bytes;
    int st = kvb_gguf_dequant(m->embd_type, row, D, x + p * D);
    if (st) return st;
    for (size_t i = 0; i < D; i++) x[p * D + i] *= emb_scale;
  }
  return KVB_OK;
}

void kvb_gemma3_layer_qkv(const kvb_gemma3 *m, int l, unsigned variant, const float *x,
                          kvb_gemma3_ws *w, float *qh, float *kh, float *vh) {
  const kvb_gemma3_config *c = &m->cfg;
  const kvb_gemma3_layer *L = &m->layers[l];
  size_t n = w->n, D = (size_t)c->d_model, H = (size_t)c->n_head, Hk = (size_t)c->n_head_kv,
         hd = (size_t)c->head_dim, Dq = H * hd, Dkv = Hk * hd, half = hd / 2;
  int global = kvb_gemma3_is_global(c, l);
  const double *cs = global && !(variant & KVB_GEMMA3_GLOBAL_LOCAL_BASE) ? w->cs_g : w->cs_l;
  float *h = w->h, *q = w->q, *k = w->k, *v = w->v, *tmp = w->tmp;
  for (size_t p = 0; p < n; p++) kvb_mo_rmsnorm(x + p * D, L->attn_norm, D, c->rms_eps, h + p * D);
  kvb_mo_matmul(h, L->wq, n, D, Dq, q, 0);
  kvb_mo_matmul(h, L->wk, n, D, Dkv, k, 0);
  kvb_mo_matmul(h, L->wv, n, D, Dkv, v, 0);
  /* QK-norm, RoPE (NEOX: i with i + hd/2), and the per-head layouts [head][n][hd] */
  for (size_t p = 0; p < n; p++) {
    const double *r = cs + p * hd;
    for (size_t j = 0; j < H + Hk; j++) {
      float *src = j < H ? q + p * Dq + j * hd : k + p * Dkv + (j - H) * hd;
      float *dst = j < H ? qh + (j * n + p) * hd : kh + ((j - H) * n + p) * hd;
      if (variant & KVB_GEMMA3_NO_QK_NORM) memcpy(tmp, src, hd * sizeof(float));
      else kvb_mo_rmsnorm(src, j < H ? L->q_norm : L->k_norm, hd, c->rms_eps, tmp);
      for (size_t i = 0; i < half; i++) {
        double a = tmp[i], b = tmp[i + half];
        dst[i] = (float)(a * r[2 * i] - b * r[2 * i + 1]);
        dst[i + half] = (float)(a * r[2 * i + 1] + b * r[2 * i]);
      }
    }
    for (size_t j = 0; j < Hk; j++) memcpy(vh + (j * n + p) * hd, v + p * Dkv + j * hd, hd * sizeof(float));
  }
}

void kvb_gemma3_layer_rest(const kvb_gemma3 *m, int l, const float *att, kvb_gemma3_ws *w,
                           float *x) {
  const kvb_gemma3_config *c = &m->cfg;
  const kvb_gemma3_layer *L = &m->layers[l];
  size_t n = w->n, D = (size_t)c->d_model, Dq = (size_t)c->n_head * (size_t)c->head_dim,
         F = (size_t)c->d_ff;
  float *h = w->h, *o = w->o, *g = w->g, *u = w->u;
  kvb_mo_matmul(att, L->wo, n, Dq, D, o, 0);
  for (size_t p = 0; p < n; p++) {
    kvb_mo_rmsnorm(o + p * D, L->post_attn_norm, D, c->rms_eps, h + p * D);
    for (size_t i = 0; i < D; i++) x[p * D + i] += h[p * D + i];
  }
  for (size_t p = 0; p < n; p++) kvb_mo_rmsnorm(x + p * D, L->ffn_norm, D, c->rms_eps, h + p * D);
  kvb_mo_matmul(h, L->w_gate, n, D, F, g, 0);
  kvb_mo_matmul(h, L->w_up, n, D, F, u, 0);
  kvb_mo_geglu(g, u, n * F);
  kvb_mo_matmul(g, L->w_down, n, F, D, o, 0);
  for (size_t p = 0; p < n; p++) {
    kvb_mo_rmsnorm(o + p * D, L->post_ffn_norm, D, c->rms_eps, h + p * D);
    for (size_t i = 0; i < D; i++) x[p * D + i] += h[p * D + i];
  }
}

int kvb_gemma3_prefill(const kvb_gemma3 *m, const int32_t *tokens, size_t n, float *hidden,
                       kvb_model_qkv_fn fn, void *ctx) {
  return kvb_gemma3_prefill_variant(m, 0, tokens, n, hidden, fn, ctx);
}

int kvb_gemma3_prefill_variant(const kvb_gemma3 *m, unsigned variant, const int32_t *tokens,
                               size_t n, float *hidden, kvb_model_qkv_fn fn, void *ctx) {
  if (!m || !m->weights || !tokens || !hidden)
    return KVB_ERROR(KVB_ENULL, "kvb_gemma3_prefill: NULL argument");
  const kvb_gemma3_config *c = &m->cfg;
  if (n == 0 || n > (size_t)c->n_ctx)
    return KVB_ERROR(KVB_EINVAL, "%zu tokens: the model takes 1 to %d", n, c->n_ctx);
  for (size_t i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= c->n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token %zu is %d, outside the vocabulary", i, (int)tokens[i]);
  size_t D = (size_t)c->d_model, H = (size_t)c->n_head, Hk = (size_t)c->n_head_kv,
         hd = (size_t)c->head_dim, Dq = H * hd, Dkv = Hk * hd;
  kvb_gemma3_ws w;
  int st = kvb_gemma3_ws_init(m, 0, n, &w);
  if (st) return st;
  float *x = malloc(n * D * sizeof(float)), *qh = malloc(n * Dq * sizeof(float)),
        *kh = malloc(n * Dkv * sizeof(float)), *vh = malloc(n * Dkv * sizeof(float)),
        *att = malloc(n * Dq * sizeof(float));
  if (!x || !qh || !kh || !vh || !att) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory for a prefill of %zu tokens", n);
    goto done;
  }
  if ((st = kvb_gemma3_embed(m, tokens, n, x))) goto done;
  const float scale = (float)c->attn_scale;
  for (int l = 0; l < c->n_layer; l++) {
    int global = kvb_gemma3_is_global(c, l);
    size_t win = global || (variant & KVB_GEMMA3_NO_WINDOW) ? 0 : (size_t)c->window;
    kvb_gemma3_layer_qkv(m, l, variant, x, &w, qh, kh, vh);
    if (fn) fn(ctx, l, n, qh, kh, vh);
    if ((st = kvb_mo_attention(qh, kh, vh, n, H, Hk, hd, scale, win, att, Dq))) goto done;
    kvb_gemma3_layer_rest(m, l, att, &w, x);
  }
  for (size_t p = 0; p < n; p++) kvb_mo_rmsnorm(x + p * D, m->out_norm, D, c->rms_eps, hidden + p * D);
done:
  free(x); free(qh); free(kh); free(vh); free(att);
  kvb_gemma3_ws_free(&w);
  return st;
}

#define VCHUNK 8192 /* vocabulary rows dequantized at a time for the tied output */

/* Calls back with each chunk of the vocabulary's logits [rows][cnt] (row stride cnt). */
typedef void (*chunk_fn)(void *ctx, size_t v0, size_t cnt, const float *lg, size_t rows);

static int logits_chunks(const kvb_gemma3 *m, const float *hidden, size_t rows, chunk_fn cb, void *ctx) {
  size_t D = (size_t)m->cfg.d_model, V = (size_t)m->cfg.n_vocab;
  float *E = malloc(VCHUNK * D * sizeof(float)), *lg = malloc(VCHUNK * rows * sizeof(float));
  int st = E && lg ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory for the output chunks");
  for (size_t v0 = 0; v0 < V && !st; v0 += VCHUNK) {
    size_t cnt = V - v0 < VCHUNK ? V - v0 : VCHUNK;
    st = kvb_gguf_dequant(m->embd_type, m->embd + v0 * m->embd_row_bytes, cnt * D, E);
    if (st) break;
    kvb_mo_matmul(hidden, E, rows, D, cnt, lg, 0);
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

int kvb_gemma3_logits(const kvb_gemma3 *m, const float *hidden, size_t rows, float *logits) {
  if (!m || !m->weights || !hidden || !logits) return KVB_ERROR(KVB_ENULL, "kvb_gemma3_logits: NULL argument");
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

int kvb_gemma3_perplexity_hidden(const kvb_gemma3 *m, const float *hid, const int32_t *tokens,
                                 size_t n, double *ppl) {
  if (!m || !hid || !tokens || !ppl) return KVB_ERROR(KVB_ENULL, "kvb_gemma3_perplexity: NULL argument");
  if (n < 2) return KVB_ERROR(KVB_EINVAL, "perplexity needs at least 2 tokens");
  for (size_t i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= m->cfg.n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token %zu is %d, outside the vocabulary", i, (int)tokens[i]);
  double *mx = malloc(n * sizeof(double)), *sum = calloc(n, sizeof(double)), *tg = calloc(n, sizeof(double));
  int st = mx && sum && tg ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) {
    for (size_t i = 0; i < n; i++) mx[i] = -INFINITY;
    lse_ctx c = {mx, sum, tg, tokens + 1};
    st = logits_chunks(m, hid, n - 1, to_lse, &c);
  }
  double nll = 0;
  for (size_t r = 0; !st && r + 1 < n; r++) nll += mx[r] + log(sum[r]) - tg[r];
  if (!st) *ppl = exp(nll / (double)(n - 1));
  free(mx); free(sum); free(tg);
  return st;
}

int kvb_gemma3_perplexity(const kvb_gemma3 *m, unsigned variant, const int32_t *tokens, size_t n,
                          double *ppl) {
  if (!m || !tokens || !ppl) return KVB_ERROR(KVB_ENULL, "kvb_gemma3_perplexity: NULL argument");
  if (n < 2) return KVB_ERROR(KVB_EINVAL, "perplexity needs at least 2 tokens");
  float *hid = malloc(n * (size_t)m->cfg.d_model * sizeof(float));
  int st = hid ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) st = kvb_gemma3_prefill_variant(m, variant, tokens, n, hid, NULL, NULL);
  if (!st) st = kvb_gemma3_perplexity_hidden(m, hid, tokens, n, ppl);
  free(hid);
  return st;
}

/* model.c — load a Llama GGUF into float32 and run its forward pass (see model.h). */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvb_error.h"
#include "model_ops.h"

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
  kvb_tok_free(m->tok);
  memset(m, 0, sizeof *m);
}

int kvb_model_load_tokens(const char *path, const char *buf, size_t len, const char *text,
                          long want, const char *who, kvb_model *m, int32_t **ids, size_t *n) {
  *ids = NULL, *n = 0;
  int st = kvb_model_load(path, m);
  if (st) return st;
  st = kvb_tok_encode(m->tok, buf, len, ids, n);
  if (!st && *n == 0) st = KVB_ERROR(KVB_EINVAL, "%s: %s has no tokens", who, text);
  if (!st && want > 0 && (size_t)want > *n)
    st = KVB_ERROR(KVB_EINVAL, "%s: %ld tokens asked but %s has %zu", who, want, text, *n);
  if (st) {
    free(*ids), *ids = NULL, *n = 0;
    kvb_model_free(m);
    return st;
  }
  if (want > 0) *n = (size_t)want;
  if (*n > (size_t)m->cfg.n_ctx) *n = (size_t)m->cfg.n_ctx;
  return KVB_OK;
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
  kvb_model_config *c = &mm.cfg;
  const char *arch = NULL;
  if (kvb_gguf_get_str(&g, "general.architecture", &arch) || strcmp(arch, "llama") != 0) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: not a llama-architecture model", path);
    goto fail;
  }
  double f;
  if ((st = kvb_mo_get_int(&g, "llama.block_count", 1, 1024, &c->n_layer)) ||
      (st = kvb_mo_get_int(&g, "llama.embedding_length", 1, 65536, &c->d_model)) ||
      (st = kvb_mo_get_int(&g, "llama.attention.head_count", 1, 1024, &c->n_head)) ||
      (st = kvb_mo_get_int(&g, "llama.attention.head_count_kv", 1, 1024, &c->n_head_kv)) ||
      (st = kvb_mo_get_int(&g, "llama.feed_forward_length", 1, 1 << 20, &c->d_ff)) ||
      (st = kvb_mo_get_int(&g, "llama.context_length", 1, 1 << 24, &c->n_ctx)))
    goto fail;
  if (c->d_model % c->n_head || c->n_head % c->n_head_kv) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: heads do not divide the model width", path);
    goto fail;
  }
  c->head_dim = c->d_model / c->n_head;
  c->rope_base = kvb_gguf_get_float(&g, "llama.rope.freq_base", &f) ? 10000.0 : f;
  c->rms_eps = kvb_gguf_get_float(&g, "llama.attention.layer_norm_rms_epsilon", &f) ? 1e-5 : f;
  /* finite, or every angle or every norm of the forward pass degenerates (an infinite base
   * makes every rotation the identity; an infinite epsilon zeroes every activation) */
  if (c->head_dim % 2 || !(c->rope_base > 1) || !isfinite(c->rope_base) || !(c->rms_eps > 0) ||
      !(c->rms_eps < 1)) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: odd head dimension (%zu), or a RoPE base (%g) not finite "
                   "and > 1, or an RMS epsilon (%g) not in (0, 1)", path, (size_t)c->head_dim,
                   c->rope_base, c->rms_eps);
    goto fail;
  }
  const kvb_gguf_tensor *emb = kvb_gguf_tensor_find(&g, "token_embd.weight");
  if (!emb || emb->ne[0] != (uint64_t)c->d_model || emb->ne[1] > (1u << 24)) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: missing or misshapen token_embd.weight", path);
    goto fail;
  }
  c->n_vocab = (int)emb->ne[1];
  if (kvb_gguf_tensor_find(&g, "output.weight")) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: a separate output.weight is not supported (tied output only)", path);
    goto fail;
  }
  size_t D = (size_t)c->d_model, Dkv = (size_t)c->n_head_kv * (size_t)c->head_dim, F = (size_t)c->d_ff;
  size_t per_layer = 2 * D + 2 * D * D + 2 * D * Dkv + 3 * D * F;
  mm.n_weights = (size_t)c->n_vocab * D + D + (size_t)c->n_layer * per_layer;
  mm.weights = malloc(mm.n_weights * sizeof(float));
  mm.layers = calloc((size_t)c->n_layer, sizeof *mm.layers);
  if (!mm.weights || !mm.layers) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory for %zu weights", mm.n_weights);
    goto fail;
  }
  float *at = mm.weights;
  if ((st = kvb_mo_take(&g, "token_embd.weight", D, (uint64_t)c->n_vocab, &at, &mm.tok_embd)) ||
      (st = kvb_mo_take(&g, "output_norm.weight", D, 1, &at, &mm.out_norm)))
    goto fail;
  for (int l = 0; l < c->n_layer && !st; l++) {
    kvb_model_layer *L = &mm.layers[l];
    char nm[64];
#define T(field, suffix, a, b)                                      \
  if (!st) {                                                        \
    snprintf(nm, sizeof nm, "blk.%d.%s.weight", l, suffix);         \
    st = kvb_mo_take(&g, nm, a, b, &at, &L->field);                        \
  }
    T(attn_norm, "attn_norm", D, 1)
    T(wq, "attn_q", D, D)
    T(wk, "attn_k", D, Dkv)
    T(wv, "attn_v", D, Dkv)
    T(wo, "attn_output", D, D)
    T(ffn_norm, "ffn_norm", D, 1)
    T(w_gate, "ffn_gate", D, F)
    T(w_up, "ffn_up", D, F)
    T(w_down, "ffn_down", F, D)
#undef T
  }
  if (st) goto fail;
  if ((st = kvb_tok_load(&g, &mm.tok))) goto fail;
  if (kvb_tok_vocab_size(mm.tok) != (size_t)c->n_vocab) {
    st = KVB_ERROR(KVB_EFORMAT, "%s: the tokenizer has %zu tokens, the embedding %d", path,
                   kvb_tok_vocab_size(mm.tok), c->n_vocab);
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

int kvb_model_prefill(const kvb_model *m, const int32_t *tokens, size_t n, float *hidden,
                      kvb_model_qkv_fn fn, void *ctx) {
  if (!m || !m->weights || !tokens || !hidden) return KVB_ERROR(KVB_ENULL, "kvb_model_prefill: NULL argument");
  const kvb_model_config *c = &m->cfg;
  if (n == 0 || n > (size_t)c->n_ctx)
    return KVB_ERROR(KVB_EINVAL, "%zu tokens: the model takes 1 to %d", n, c->n_ctx);
  for (size_t i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= c->n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token %zu is %d, outside the vocabulary", i, (int)tokens[i]);
  size_t D = (size_t)c->d_model, H = (size_t)c->n_head, Hk = (size_t)c->n_head_kv,
         hd = (size_t)c->head_dim, F = (size_t)c->d_ff, Dkv = Hk * hd;
  float *x = malloc(n * D * sizeof(float)), *h = malloc(n * D * sizeof(float)),
        *q = malloc(n * D * sizeof(float)), *k = malloc(n * Dkv * sizeof(float)),
        *v = malloc(n * Dkv * sizeof(float)), *qh = malloc(n * D * sizeof(float)),
        *kh = malloc(n * Dkv * sizeof(float)), *vh = malloc(n * Dkv * sizeof(float)),
        *att = malloc(n * D * sizeof(float)), *g = malloc(n * F * sizeof(float)),
        *u = malloc(n * F * sizeof(float));
  double *cs = malloc(n * (hd / 2) * 2 * sizeof(double));
  int st = KVB_OK;
  if (!x || !h || !q || !k || !v || !qh || !kh || !vh || !att || !g || !u || !cs) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory for a prefill of %zu tokens", n);
    goto done;
  }
  /* RoPE angles: pair i of a head turns by pos·base^(−2i/hd). */
  for (size_t p = 0; p < n; p++)
    for (size_t i = 0; i < hd / 2; i++) {
      double th = (double)p * pow(c->rope_base, -2.0 * (double)i / (double)hd);
      cs[(p * (hd / 2) + i) * 2] = cos(th);
      cs[(p * (hd / 2) + i) * 2 + 1] = sin(th);
    }
  for (size_t p = 0; p < n; p++) memcpy(x + p * D, m->tok_embd + (size_t)tokens[p] * D, D * sizeof(float));
  const float scale = (float)(1.0 / sqrt((double)hd));
  for (int l = 0; l < c->n_layer; l++) {
    const kvb_model_layer *L = &m->layers[l];
    for (size_t p = 0; p < n; p++) kvb_mo_rmsnorm(x + p * D, L->attn_norm, D, c->rms_eps, h + p * D);
    kvb_mo_matmul(h, L->wq, n, D, D, q, 0);
    kvb_mo_matmul(h, L->wk, n, D, Dkv, k, 0);
    kvb_mo_matmul(h, L->wv, n, D, Dkv, v, 0);
    /* RoPE, and the per-head layouts [head][n][hd] */
    for (size_t p = 0; p < n; p++) {
      const double *r = cs + p * hd;
      for (size_t j = 0; j < H + Hk; j++) {
        float *src = j < H ? q + p * D + j * hd : k + p * Dkv + (j - H) * hd;
        float *dst = j < H ? qh + (j * n + p) * hd : kh + ((j - H) * n + p) * hd;
        for (size_t i = 0; i < hd / 2; i++) {
          double a = src[2 * i], b = src[2 * i + 1];
          dst[2 * i] = (float)(a * r[2 * i] - b * r[2 * i + 1]);
          dst[2 * i + 1] = (float)(a * r[2 * i + 1] + b * r[2 * i]);
        }
      }
      for (size_t j = 0; j < Hk; j++) memcpy(vh + (j * n + p) * hd, v + p * Dkv + j * hd, hd * sizeof(float));
    }
    if (fn) fn(ctx, l, n, qh, kh, vh);
    if ((st = kvb_mo_attention(qh, kh, vh, n, H, Hk, hd, scale, 0, att, D))) goto done;
    kvb_mo_matmul(att, L->wo, n, D, D, x, 1.0f);
    for (size_t p = 0; p < n; p++) kvb_mo_rmsnorm(x + p * D, L->ffn_norm, D, c->rms_eps, h + p * D);
    kvb_mo_matmul(h, L->w_gate, n, D, F, g, 0);
    kvb_mo_matmul(h, L->w_up, n, D, F, u, 0);
    kvb_mo_swiglu(g, u, n * F);
    kvb_mo_matmul(g, L->w_down, n, F, D, x, 1.0f);
  }
  for (size_t p = 0; p < n; p++) kvb_mo_rmsnorm(x + p * D, m->out_norm, D, c->rms_eps, hidden + p * D);
done:
  free(x); free(h); free(q); free(k); free(v); free(qh); free(kh); free(vh);
  free(att); free(g); free(u); free(cs);
  return st;
}

int kvb_model_logits(const kvb_model *m, const float *hidden, size_t rows, float *logits) {
  if (!m || !m->weights || !hidden || !logits) return KVB_ERROR(KVB_ENULL, "kvb_model_logits: NULL argument");
  kvb_mo_matmul(hidden, m->tok_embd, rows, (size_t)m->cfg.d_model, (size_t)m->cfg.n_vocab, logits, 0);
  return KVB_OK;
}

int kvb_model_perplexity(const kvb_model *m, const int32_t *tokens, size_t n, double *ppl) {
  if (!m || !tokens || !ppl) return KVB_ERROR(KVB_ENULL, "kvb_model_perplexity: NULL argument");
  if (n < 2) return KVB_ERROR(KVB_EINVAL, "perplexity needs at least 2 tokens");
  size_t D = (size_t)m->cfg.d_model, V = (size_t)m->cfg.n_vocab, chunk = 64;
  float *hid = malloc(n * D * sizeof(float)), *lg = malloc(chunk * V * sizeof(float));
  int st = hid && lg ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) st = kvb_model_prefill(m, tokens, n, hid, NULL, NULL);
  double nll = 0;
  for (size_t p0 = 0; !st && p0 + 1 < n; p0 += chunk) {
    size_t rows = n - 1 - p0 < chunk ? n - 1 - p0 : chunk;
    kvb_model_logits(m, hid + p0 * D, rows, lg);
    for (size_t r = 0; r < rows; r++) {
      const float *z = lg + r * V;
      double mx = z[0], s = 0;
      for (size_t i = 1; i < V; i++) mx = z[i] > mx ? z[i] : mx;
      for (size_t i = 0; i < V; i++) s += exp((double)z[i] - mx);
      nll += mx + log(s) - (double)z[tokens[p0 + r + 1]];
    }
  }
  free(hid);
  free(lg);
  if (!st) *ppl = exp(nll / (double)(n - 1));
  return st;
}

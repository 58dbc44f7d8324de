/* decode_compressed.c — compressed decoding inside the model (see decode_compressed.h). */
#include "decode_compressed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"
#include "model_ops.h"
#include "pcg32.h"

/* StreamingLLM's cache (src/baselines/sink_recent.c) with sink 0 and budget w is exactly a
 * sliding window of the last w tokens: Gemma 3's local layers keep theirs with it. */
extern const kvb_method_type kvb_method_sink_recent;

struct kvb_dec_session {
  const kvb_model *m;   /* SmolLM2 (Llama), or NULL when */
  const kvb_gemma3 *g;  /* Gemma 3 runs */
  int n_layer, n_head, n_head_kv, head_dim, n_vocab, n_ctx;
  unsigned char *compressed; /* [method]: 1 when the caller's method (not a local window) */
  size_t pos;           /* tokens held */
  int rope_shift;
  size_t nm;            /* n_layer · n_head_kv methods */
  kvb_method **meth;    /* [layer][kv head] */
  gsl_rng **rng;        /* one per method */
  double mem_prefill;
  double bytes_prefill;
};

/* ------------------------------------------------------------------ prefix */

typedef struct {
  kvb_dec_prefix *p;
} prefix_ctx;

static void keep_layer(void *vc, int layer, size_t n, const float *q, const float *k,
                       const float *v) {
  kvb_dec_prefix *p = ((prefix_ctx *)vc)->p;
  size_t hd = (size_t)p->head_dim, qs = (size_t)p->n_head * n * hd,
         ks = (size_t)p->n_head_kv * n * hd;
  memcpy(p->q + (size_t)layer * qs, q, qs * sizeof(float));
  memcpy(p->k + (size_t)layer * ks, k, ks * sizeof(float));
  memcpy(p->v + (size_t)layer * ks, v, ks * sizeof(float));
}

void kvb_dec_prefix_free(kvb_dec_prefix *p) {
  if (!p) return;
  free(p->tokens);
  free(p->q);
  free(p->k);
  free(p->v);
  free(p->logits_last);
  memset(p, 0, sizeof *p);
}

/* The prefix buffers both models fill the same way (kvb_dec_prefix: q, k, v per layer and head
 * of the n0 prompt tokens); *hid is the prefill's scratch of n0 hidden rows. On error nothing is
 * left allocated. */
static int prefix_alloc(kvb_dec_prefix *p, const int32_t *tokens, size_t n0, int n_layer, int n_head,
                        int n_head_kv, int head_dim, int n_ctx, int d_model, float **hid) {
  memset(p, 0, sizeof *p);
  *hid = NULL;
  if (n0 == 0 || n0 >= (size_t)n_ctx)
    return KVB_ERROR(KVB_EINVAL, "compressed decoding: a prompt of %zu tokens (1 to %d)", n0, n_ctx - 1);
  p->n0 = n0, p->n_layer = n_layer, p->n_head = n_head, p->n_head_kv = n_head_kv;
  p->head_dim = head_dim;
  size_t L = (size_t)n_layer, hd = (size_t)head_dim;
  p->tokens = malloc(n0 * sizeof *p->tokens);
  p->q = malloc(L * (size_t)n_head * n0 * hd * sizeof(float));
  p->k = malloc(L * (size_t)n_head_kv * n0 * hd * sizeof(float));
  p->v = malloc(L * (size_t)n_head_kv * n0 * hd * sizeof(float));
  *hid = malloc(n0 * (size_t)d_model * sizeof(float));
  if (!p->tokens || !p->q || !p->k || !p->v || !*hid) {
    free(*hid);
    *hid = NULL;
    kvb_dec_prefix_free(p);
    return KVB_ERROR(KVB_ENOMEM, "compressed decoding: out of memory for a prefix of %zu tokens", n0);
  }
  memcpy(p->tokens, tokens, n0 * sizeof *tokens);
  return KVB_OK;
}

int kvb_dec_prefix_build(const kvb_model *m, const int32_t *tokens, size_t n0, kvb_dec_prefix *out) {
  if (!m || !m->weights || !tokens || !out) return KVB_ERROR(KVB_ENULL, "kvb_dec_prefix_build: NULL argument");
  memset(out, 0, sizeof *out);
  const kvb_model_config *c = &m->cfg;
  kvb_dec_prefix p;
  float *hid;
  int st = prefix_alloc(&p, tokens, n0, c->n_layer, c->n_head, c->n_head_kv, c->head_dim, c->n_ctx,
                        c->d_model, &hid);
  if (st) return st;
  prefix_ctx pc = {&p};
  st = kvb_model_prefill(m, tokens, n0, hid, keep_layer, &pc);
  p.n_vocab = c->n_vocab;
  if (!st && !(p.logits_last = malloc((size_t)c->n_vocab * sizeof(float))))
    st = KVB_ERROR(KVB_ENOMEM, "compressed decoding: out of memory");
  if (!st) st = kvb_model_logits(m, hid + (n0 - 1) * (size_t)c->d_model, 1, p.logits_last);
  free(hid);
  if (st) {
    kvb_dec_prefix_free(&p);
    return st;
  }
  *out = p;
  return KVB_OK;
}

int kvb_dec_prefix_build_gemma3(const kvb_gemma3 *g, const int32_t *tokens, size_t n0,
                                kvb_dec_prefix *out) {
  if (!g || !g->weights || !tokens || !out)
    return KVB_ERROR(KVB_ENULL, "kvb_dec_prefix_build_gemma3: NULL argument");
  memset(out, 0, sizeof *out);
  const kvb_gemma3_config *c = &g->cfg;
  kvb_dec_prefix p;
  float *hid;
  int st = prefix_alloc(&p, tokens, n0, c->n_layer, c->n_head, c->n_head_kv, c->head_dim, c->n_ctx,
                        c->d_model, &hid);
  if (st) return st;
  prefix_ctx pc = {&p};
  st = kvb_gemma3_prefill(g, tokens, n0, hid, keep_layer, &pc);
  p.n_vocab = c->n_vocab;
  if (!st && !(p.logits_last = malloc((size_t)c->n_vocab * sizeof(float))))
    st = KVB_ERROR(KVB_ENOMEM, "compressed decoding: out of memory");
  if (!st) st = kvb_gemma3_logits(g, hid + (n0 - 1) * (size_t)c->d_model, 1, p.logits_last);
  free(hid);
  if (st) {
    kvb_dec_prefix_free(&p);
    return st;
  }
  *out = p;
  return KVB_OK;
}

/* ------------------------------------------------------------------ session */

void kvb_dec_close(kvb_dec_session *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nm; i++) {
    if (s->meth) kvb_method_free(s->meth[i]);
    if (s->rng && s->rng[i]) gsl_rng_free(s->rng[i]);
  }
  free(s->meth);
  free(s->rng);
  free(s->compressed);
  free(s);
}

size_t kvb_dec_memory_of(const kvb_dec_session *s, int layer, int kv_head) {
  if (!s || layer < 0 || kv_head < 0 || layer >= s->n_layer || kv_head >= s->n_head_kv)
    return 0;
  kvb_memory mem;
  kvb_method_memory(s->meth[(size_t)layer * (size_t)s->n_head_kv + (size_t)kv_head], &mem);
  return mem.vectors;
}

double kvb_dec_memory_now(const kvb_dec_session *s) {
  if (!s || !s->nm) return 0;
  double tot = 0, cnt = 0;
  for (size_t i = 0; i < s->nm; i++) {
    if (!s->compressed[i]) continue; /* Gemma 3's local windows: fixed, not the method's */
    kvb_memory mem;
    kvb_method_memory(s->meth[i], &mem);
    tot += (double)mem.vectors, cnt++;
  }
  return cnt > 0 ? tot / cnt : 0;
}

double kvb_dec_memory_prefill(const kvb_dec_session *s) { return s ? s->mem_prefill : 0; }

double kvb_dec_bytes_now(const kvb_dec_session *s) {
  if (!s || !s->nm) return 0;
  double tot = 0, cnt = 0;
  for (size_t i = 0; i < s->nm; i++) {
    if (!s->compressed[i]) continue; /* as kvb_dec_memory_now: Gemma 3's local windows are not the method's */
    kvb_memory mem;
    kvb_method_memory(s->meth[i], &mem);
    tot += (double)mem.bytes, cnt++;
  }
  return cnt > 0 ? tot / cnt : 0;
}

double kvb_dec_bytes_prefill(const kvb_dec_session *s) { return s ? s->bytes_prefill : 0; }
size_t kvb_dec_position(const kvb_dec_session *s) { return s ? s->pos : 0; }

/* Feeds one prompt-cache head into its method (and the observed queries). */
static int feed_head(kvb_method *me, const kvb_dec_prefix *p, int layer, int g, size_t observe) {
  size_t n0 = p->n0, hd = (size_t)p->head_dim, Hk = (size_t)p->n_head_kv, H = (size_t)p->n_head,
         grp = H / Hk;
  const float *K = p->k + (((size_t)layer * Hk + (size_t)g) * n0) * hd;
  const float *V = p->v + (((size_t)layer * Hk + (size_t)g) * n0) * hd;
  double kd[256], vd[256], qd[256], z[256];
  for (size_t t = 0; t < n0; t++) {
    for (size_t i = 0; i < hd; i++) kd[i] = K[t * hd + i], vd[i] = V[t * hd + i];
    int st = kvb_method_update(me, kd, hd, vd, hd);
    if (st) return st;
    /* observe == 0: one query still, the last prompt token's of the group's first head, so
     * the one-shot compressors have compressed when the memory is read (kvb_dec_open) */
    if (t + observe < n0 && !(observe == 0 && t + 1 == n0)) continue;
    size_t jend = observe == 0 ? (size_t)g * grp + 1 : ((size_t)g + 1) * grp;
    for (size_t j = (size_t)g * grp; j < jend; j++) {
      const float *Q = p->q + (((size_t)layer * H + j) * n0 + t) * hd;
      for (size_t i = 0; i < hd; i++) qd[i] = Q[i];
      if ((st = kvb_method_query(me, qd, hd, z, hd))) return st;
    }
  }
  return KVB_OK;
}

/* The session both models share: one method per (layer, kv head), made by the caller's make on
 * every layer where compress[layer] (NULL: every layer), else a sliding window of `window`
 * tokens (sink_recent, sink 0), each fed the prefix. */
static int open_session(kvb_dec_session *s, const kvb_dec_prefix *p, kvb_dec_make_fn make,
                        void *ctx, const kvb_dec_opts *opts, const unsigned char *compress,
                        size_t window) {
  if (p->n_layer != s->n_layer || p->n_head != s->n_head || p->n_head_kv != s->n_head_kv ||
      p->head_dim != s->head_dim || s->head_dim > 256)
    return KVB_ERROR(KVB_EINVAL, "compressed decoding: the prefix was built by another model");
  if (opts->observe > p->n0)
    return KVB_ERROR(KVB_EINVAL, "compressed decoding: observe = %zu exceeds the prompt's %zu tokens",
                     opts->observe, p->n0);
  s->pos = p->n0, s->rope_shift = opts->rope_shift;
  s->nm = (size_t)s->n_layer * (size_t)s->n_head_kv;
  s->meth = calloc(s->nm, sizeof *s->meth);
  s->rng = calloc(s->nm, sizeof *s->rng);
  s->compressed = calloc(s->nm, 1);
  int st = s->meth && s->rng && s->compressed ? KVB_OK
                                               : KVB_ERROR(KVB_ENOMEM, "compressed decoding: out of memory");
  for (size_t i = 0; i < s->nm && !st; i++) {
    int layer = (int)(i / (size_t)s->n_head_kv), g = (int)(i % (size_t)s->n_head_kv);
    s->rng[i] = kvb_rng_alloc_substream(opts->seed, i);
    if (!s->rng[i]) {
      st = KVB_ENOMEM;
      break;
    }
    kvb_method_config cfg = {(size_t)s->head_dim, (size_t)s->head_dim,
                             1.0 / sqrt((double)s->head_dim), s->rng[i]};
    s->compressed[i] = !compress || compress[layer];
    if (s->compressed[i]) {
      st = make(ctx, layer, g, &cfg, &s->meth[i]);
    } else {
      kvb_params wp;
      kvb_params_init(&wp);
      kvb_params_set(&wp, "budget", (double)window);
      kvb_params_set(&wp, "sink", 0);
      st = kvb_method_alloc_type(&kvb_method_sink_recent, &cfg, &wp, &s->meth[i]);
    }
    if (!st && !s->meth[i]) st = KVB_ERROR(KVB_EINVAL, "compressed decoding: no method made");
    if (!st) st = feed_head(s->meth[i], p, layer, g, s->compressed[i] ? opts->observe : 0);
    if (st) {
      char why[300];
      snprintf(why, sizeof why, "%s", kvb_strerror_last());
      st = KVB_ERROR(st, "compressed decoding, layer %d head %d: %s", layer, g, why);
    }
  }
  if (!st) s->mem_prefill = kvb_dec_memory_now(s), s->bytes_prefill = kvb_dec_bytes_now(s);
  return st;
}

int kvb_dec_open(const kvb_model *m, const kvb_dec_prefix *p, kvb_dec_make_fn make, void *ctx,
                 const kvb_dec_opts *opts, kvb_dec_session **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "kvb_dec_open: out is NULL");
  *out = NULL;
  if (!m || !m->weights || !p || !p->k || !make || !opts)
    return KVB_ERROR(KVB_ENULL, "kvb_dec_open: NULL argument");
  const kvb_model_config *c = &m->cfg;
  kvb_dec_session *s = calloc(1, sizeof *s);
  if (!s) return KVB_ERROR(KVB_ENOMEM, "compressed decoding: out of memory");
  s->m = m;
  s->n_layer = c->n_layer, s->n_head = c->n_head, s->n_head_kv = c->n_head_kv;
  s->head_dim = c->head_dim, s->n_vocab = c->n_vocab, s->n_ctx = c->n_ctx;
  int st = open_session(s, p, make, ctx, opts, NULL, 0);
  if (st) {
    kvb_dec_close(s);
    return st;
  }
  *out = s;
  return KVB_OK;
}

int kvb_dec_open_gemma3(const kvb_gemma3 *g, const kvb_dec_prefix *p, kvb_dec_make_fn make,
                        void *ctx, const kvb_dec_opts *opts, kvb_dec_session **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "kvb_dec_open_gemma3: out is NULL");
  *out = NULL;
  if (!g || !g->weights || !p || !p->k || !make || !opts)
    return KVB_ERROR(KVB_ENULL, "kvb_dec_open_gemma3: NULL argument");
  const kvb_gemma3_config *c = &g->cfg;
  if (c->n_layer > 1024) return KVB_ERROR(KVB_EINVAL, "kvb_dec_open_gemma3: too many layers");
  /* The methods replace attention on the global layers only; a file whose layer count leaves
   * none (5 layers with period 6) would decode exactly, reporting a method that never ran. */
  int n_global = 0;
  for (int l = 0; l < c->n_layer; l++) n_global += kvb_gemma3_is_global(c, l);
  if (n_global == 0)
    return KVB_ERROR(KVB_EINVAL, "Gemma 3 model with %d layers has no global layer (layer l is "
                     "global when l %% %d == %d): a method would replace no attention",
                     c->n_layer, c->swa_period, c->swa_period - 1);
  kvb_dec_session *s = calloc(1, sizeof *s);
  if (!s) return KVB_ERROR(KVB_ENOMEM, "compressed decoding: out of memory");
  s->g = g;
  s->n_layer = c->n_layer, s->n_head = c->n_head, s->n_head_kv = c->n_head_kv;
  s->head_dim = c->head_dim, s->n_vocab = c->n_vocab, s->n_ctx = c->n_ctx;
  unsigned char glob[1024];
  for (int l = 0; l < c->n_layer; l++) glob[l] = (unsigned char)kvb_gemma3_is_global(c, l);
  int st = open_session(s, p, make, ctx, opts, glob, (size_t)c->window);
  if (st) {
    kvb_dec_close(s);
    return st;
  }
  *out = s;
  return KVB_OK;
}

size_t kvb_dec_observe_default(const kvb_method_type *t, size_t n0, size_t window) {
  if (!t) return 0;
  if (t->observe == KVB_OBSERVE_PROMPT) return n0;
  if (t->observe == KVB_OBSERVE_WINDOW) return window < n0 ? window : n0;
  return 0;
}

/* ------------------------------------------------------------------ forward */

/* RoPE of one head's vector at position p (model.h: pair i turns by p·base^(−2i/hd)). */
static void rope(const float *src, size_t hd, double base, double p, double *dst) {
  for (size_t i = 0; i < hd / 2; i++) {
    double th = p * pow(base, -2.0 * (double)i / (double)hd), cs = cos(th), sn = sin(th);
    double a = src[2 * i], b = src[2 * i + 1];
    /* rounded through float as model.c stores them */
    dst[2 * i] = (float)(a * cs - b * sn);
    dst[2 * i + 1] = (float)(a * sn + b * cs);
  }
}

/* Gemma 3's new tokens: model_gemma3's block pieces around the methods' answers (one method per
 * layer: the caller's on global layers, the 512-token window on local ones). */
static int forward_gemma3(kvb_dec_session *s, const int32_t *tokens, size_t n, float *logits) {
  const kvb_gemma3 *m = s->g;
  const kvb_gemma3_config *c = &m->cfg;
  size_t D = (size_t)c->d_model, H = (size_t)c->n_head, Hk = (size_t)c->n_head_kv,
         hd = (size_t)c->head_dim, Dq = H * hd, grp = H / Hk;
  long p0 = (long)s->pos + s->rope_shift;
  kvb_gemma3_ws w;
  int st = kvb_gemma3_ws_init(m, p0 > 0 ? (size_t)p0 : 0, n, &w);
  if (st) return st;
  float *x = malloc(n * D * sizeof(float)), *qh = malloc(n * Dq * sizeof(float)),
        *kh = malloc(n * Hk * hd * sizeof(float)), *vh = malloc(n * Hk * hd * sizeof(float)),
        *att = malloc(n * Dq * sizeof(float)), *h = malloc(n * D * sizeof(float));
  if (!x || !qh || !kh || !vh || !att || !h)
    st = KVB_ERROR(KVB_ENOMEM, "compressed decoding: out of memory for %zu tokens", n);
  if (!st) st = kvb_gemma3_embed(m, tokens, n, x);
  for (int l = 0; l < c->n_layer && !st; l++) {
    kvb_gemma3_layer_qkv(m, l, 0, x, &w, qh, kh, vh);
    double kd[256], vd[256], qd[256], z[256];
    for (size_t i = 0; i < n && !st; i++) {
      for (size_t gh = 0; gh < Hk && !st; gh++) {
        kvb_method *me = s->meth[(size_t)l * Hk + gh];
        for (size_t a = 0; a < hd; a++) kd[a] = kh[(gh * n + i) * hd + a], vd[a] = vh[(gh * n + i) * hd + a];
        if ((st = kvb_method_update(me, kd, hd, vd, hd))) break;
        for (size_t j = gh * grp; j < (gh + 1) * grp; j++) {
          for (size_t a = 0; a < hd; a++) qd[a] = qh[(j * n + i) * hd + a];
          if ((st = kvb_method_query(me, qd, hd, z, hd))) break;
          for (size_t a = 0; a < hd; a++) att[i * Dq + j * hd + a] = (float)z[a];
        }
      }
      if (st) {
        char why[300];
        snprintf(why, sizeof why, "%s", kvb_strerror_last());
        st = KVB_ERROR(st, "compressed decoding, layer %d, position %zu: %s", l, s->pos + i, why);
      }
    }
    if (!st) kvb_gemma3_layer_rest(m, l, att, &w, x);
  }
  if (!st) {
    for (size_t i = 0; i < n; i++) kvb_mo_rmsnorm(x + i * D, m->out_norm, D, c->rms_eps, h + i * D);
    if (logits) st = kvb_gemma3_logits(m, h, n, logits);
    if (!st) s->pos += n;
  }
  free(x), free(qh), free(kh), free(vh), free(att), free(h);
  kvb_gemma3_ws_free(&w);
  return st;
}

int kvb_dec_forward(kvb_dec_session *s, const int32_t *tokens, size_t n, float *logits) {
  if (!s || !tokens) return KVB_ERROR(KVB_ENULL, "kvb_dec_forward: NULL argument");
  if (s->g) {
    if (n == 0) return KVB_OK;
    if (s->pos + n > (size_t)s->n_ctx)
      return KVB_ERROR(KVB_EINVAL, "compressed decoding: %zu + %zu tokens exceed the context %d",
                       s->pos, n, s->n_ctx);
    return forward_gemma3(s, tokens, n, logits);
  }
  const kvb_model *m = s->m;
  const kvb_model_config *c = &m->cfg;
  if (n == 0) return KVB_OK;
  if (s->pos + n > (size_t)c->n_ctx)
    return KVB_ERROR(KVB_EINVAL, "compressed decoding: %zu + %zu tokens exceed the context %d",
                     s->pos, n, c->n_ctx);
  for (size_t i = 0; i < n; i++)
    if (tokens[i] < 0 || tokens[i] >= c->n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token %zu is %d, outside the vocabulary", i, (int)tokens[i]);
  size_t D = (size_t)c->d_model, H = (size_t)c->n_head, Hk = (size_t)c->n_head_kv,
         hd = (size_t)c->head_dim, F = (size_t)c->d_ff, Dkv = Hk * hd, grp = H / Hk;
  float *x = malloc(n * D * sizeof(float)), *h = malloc(n * D * sizeof(float)),
        *q = malloc(n * D * sizeof(float)), *k = malloc(n * Dkv * sizeof(float)),
        *v = malloc(n * Dkv * sizeof(float)), *att = malloc(n * D * sizeof(float)),
        *g = malloc(n * F * sizeof(float)), *u = malloc(n * F * sizeof(float));
  int st = KVB_OK;
  if (!x || !h || !q || !k || !v || !att || !g || !u) {
    st = KVB_ERROR(KVB_ENOMEM, "compressed decoding: out of memory for %zu tokens", n);
    goto done;
  }
  for (size_t i = 0; i < n; i++) memcpy(x + i * D, m->tok_embd + (size_t)tokens[i] * D, D * sizeof(float));
  for (int l = 0; l < c->n_layer && !st; l++) {
    const kvb_model_layer *L = &m->layers[l];
    for (size_t i = 0; i < n; i++) kvb_mo_rmsnorm(x + i * D, L->attn_norm, D, c->rms_eps, h + i * D);
    kvb_mo_matmul(h, L->wq, n, D, D, q, 0);
    kvb_mo_matmul(h, L->wk, n, D, Dkv, k, 0);
    kvb_mo_matmul(h, L->wv, n, D, Dkv, v, 0);
    /* Token by token inside the layer: update every head's method with the token's key and
     * value, then ask it the group's queries (decode_compressed.h: new tokens are fed). */
    for (size_t i = 0; i < n && !st; i++) {
      double p = (double)(s->pos + i) + (double)s->rope_shift;
      double kd[256], vd[256], qd[256], z[256];
      for (size_t gh = 0; gh < Hk && !st; gh++) {
        kvb_method *me = s->meth[(size_t)l * Hk + gh];
        rope(k + i * Dkv + gh * hd, hd, c->rope_base, p, kd);
        for (size_t a = 0; a < hd; a++) vd[a] = v[i * Dkv + gh * hd + a];
        if ((st = kvb_method_update(me, kd, hd, vd, hd))) break;
        for (size_t j = gh * grp; j < (gh + 1) * grp; j++) {
          rope(q + i * D + j * hd, hd, c->rope_base, p, qd);
          if ((st = kvb_method_query(me, qd, hd, z, hd))) break;
          for (size_t a = 0; a < hd; a++) att[i * D + j * hd + a] = (float)z[a];
        }
      }
      if (st) {
        char why[300];
        snprintf(why, sizeof why, "%s", kvb_strerror_last());
        st = KVB_ERROR(st, "compressed decoding, layer %d, position %zu: %s", l, s->pos + i, why);
      }
    }
    if (st) break;
    kvb_mo_matmul(att, L->wo, n, D, D, x, 1.0f);
    for (size_t i = 0; i < n; i++) kvb_mo_rmsnorm(x + i * D, L->ffn_norm, D, c->rms_eps, h + i * D);
    kvb_mo_matmul(h, L->w_gate, n, D, F, g, 0);
    kvb_mo_matmul(h, L->w_up, n, D, F, u, 0);
    kvb_mo_swiglu(g, u, n * F); /* model.c's SwiGLU, the same bits */
    kvb_mo_matmul(g, L->w_down, n, F, D, x, 1.0f);
  }
  if (!st) {
    for (size_t i = 0; i < n; i++) kvb_mo_rmsnorm(x + i * D, m->out_norm, D, c->rms_eps, h + i * D);
    if (logits) st = kvb_model_logits(m, h, n, logits);
    s->pos += n;
  }
done:
  free(x); free(h); free(q); free(k); free(v); free(att); free(g); free(u);
  return st;
}

/* ------------------------------------------------------------------ measures */

size_t kvb_dec_log_softmax(const float *z, size_t n, double *out) {
  size_t am = 0;
  for (size_t i = 1; i < n; i++)
    if (z[i] > z[am]) am = i;
  double mx = z[am], s = 0;
  for (size_t i = 0; i < n; i++) s += exp((double)z[i] - mx);
  double lz = mx + log(s);
  for (size_t i = 0; i < n; i++) out[i] = (double)z[i] - lz;
  return am;
}

int kvb_dec_reference(const kvb_model *m, const int32_t *t, size_t n0, size_t n1, float **lp) {
  if (!m || !t || !lp) return KVB_ERROR(KVB_ENULL, "kvb_dec_reference: NULL argument");
  *lp = NULL;
  if (n0 == 0 || n1 == 0) return KVB_ERROR(KVB_EINVAL, "kvb_dec_reference: n0 and n1 must be >= 1");
  size_t D = (size_t)m->cfg.d_model, V = (size_t)m->cfg.n_vocab, n = n0 + n1;
  float *hid = malloc(n * D * sizeof(float)), *lg = malloc(n1 * V * sizeof(float)),
        *out = malloc(n1 * V * sizeof(float));
  double *row = malloc(V * sizeof(double));
  int st = hid && lg && out && row ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) st = kvb_model_prefill(m, t, n, hid, NULL, NULL);
  if (!st) st = kvb_model_logits(m, hid + n0 * D, n1, lg);
  for (size_t r = 0; !st && r < n1; r++) {
    kvb_dec_log_softmax(lg + r * V, V, row);
    for (size_t i = 0; i < V; i++) out[r * V + i] = (float)row[i];
  }
  free(hid), free(lg), free(row);
  if (st) {
    free(out);
    return st;
  }
  *lp = out;
  return KVB_OK;
}

int kvb_dec_reference_gemma3(const kvb_gemma3 *g, const int32_t *t, size_t n0, size_t n1,
                             float **lp) {
  if (!g || !t || !lp) return KVB_ERROR(KVB_ENULL, "kvb_dec_reference_gemma3: NULL argument");
  *lp = NULL;
  if (n0 == 0 || n1 == 0) return KVB_ERROR(KVB_EINVAL, "kvb_dec_reference: n0 and n1 must be >= 1");
  size_t D = (size_t)g->cfg.d_model, V = (size_t)g->cfg.n_vocab, n = n0 + n1;
  float *hid = malloc(n * D * sizeof(float)), *out = malloc(n1 * V * sizeof(float));
  double *row = malloc(V * sizeof(double));
  int st = hid && out && row ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) st = kvb_gemma3_prefill(g, t, n, hid, NULL, NULL);
  if (!st) st = kvb_gemma3_logits(g, hid + n0 * D, n1, out);
  for (size_t r = 0; !st && r < n1; r++) {
    kvb_dec_log_softmax(out + r * V, V, row);
    for (size_t i = 0; i < V; i++) out[r * V + i] = (float)row[i];
  }
  free(hid), free(row);
  if (st) {
    free(out);
    return st;
  }
  *lp = out;
  return KVB_OK;
}

int kvb_dec_score(kvb_dec_session *s, const int32_t *cont, size_t n1, const float *ref_lp,
                  double *nll, double *kl, int *agree, double *mem_end) {
  if (!s || !cont) return KVB_ERROR(KVB_ENULL, "kvb_dec_score: NULL argument");
  if (n1 == 0) return KVB_ERROR(KVB_EINVAL, "kvb_dec_score: n1 must be >= 1");
  size_t V = (size_t)s->n_vocab;
  for (size_t i = 1; i <= n1; i++)
    if (cont[i] < 0 || (size_t)cont[i] >= V)
      return KVB_ERROR(KVB_EINVAL, "target token %zu is %d, outside the vocabulary", i, (int)cont[i]);
  float *lg = malloc(n1 * V * sizeof(float));
  double *lp = malloc(V * sizeof(double));
  int st = lg && lp ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  /* One chunk: equal to token-by-token decoding (decode_compressed.h), the weights read once. */
  if (!st) st = kvb_dec_forward(s, cont, n1, lg);
  for (size_t i = 0; !st && i < n1; i++) {
    size_t am = kvb_dec_log_softmax(lg + i * V, V, lp);
    if (nll) nll[i] = -lp[cont[i + 1]];
    if (ref_lp) {
      const float *r = ref_lp + i * V;
      double d = 0;
      size_t ar = 0;
      for (size_t a = 0; a < V; a++) {
        double pe = exp((double)r[a]);
        d += pe * ((double)r[a] - lp[a]);
        if (r[a] > r[ar]) ar = a;
      }
      if (kl) kl[i] = d > 0 ? d : 0; /* rounding can make a KL of ~1e-12 negative */
      if (agree) agree[i] = ar == am;
    }
  }
  free(lg), free(lp);
  if (!st && mem_end) *mem_end = kvb_dec_memory_now(s);
  return st;
}

int kvb_dec_greedy(kvb_dec_session *s, const int32_t *tail, size_t n_tail, size_t max_new,
                   int32_t *out) {
  if (!s || !tail || (max_new && !out)) return KVB_ERROR(KVB_ENULL, "kvb_dec_greedy: NULL argument");
  if (n_tail == 0) return KVB_ERROR(KVB_EINVAL, "kvb_dec_greedy: the tail needs at least one token");
  size_t V = (size_t)s->n_vocab;
  float *lg = malloc(n_tail * V * sizeof(float));
  if (!lg) return KVB_ERROR(KVB_ENOMEM, "out of memory");
  int st = kvb_dec_forward(s, tail, n_tail, lg);
  const float *last = lg + (n_tail - 1) * V;
  for (size_t i = 0; !st && i < max_new; i++) {
    size_t am = 0;
    for (size_t a = 1; a < V; a++)
      if (last[a] > last[am]) am = a;
    out[i] = (int32_t)am;
    if (i + 1 < max_new) {
      st = kvb_dec_forward(s, out + i, 1, lg);
      last = lg;
    }
  }
  free(lg);
  return st;
}

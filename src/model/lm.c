/* lm.c — one handle on either real model (lm.h). */
#include "lm.h"

#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"

static const char *const KEY[KVB_LM_N_KINDS] = {"smollm2", "gemma3"};

int kvb_lm_kind_lookup(const char *key, kvb_lm_kind *kind) {
  if (!key || !kind) return KVB_ERROR(KVB_ENULL, "kvb_lm_kind_lookup: NULL argument");
  for (int k = 0; k < KVB_LM_N_KINDS; k++)
    if (!strcmp(key, KEY[k])) {
      *kind = (kvb_lm_kind)k;
      return KVB_OK;
    }
  return KVB_ERROR(KVB_EINVAL, "unknown model '%s' (known: smollm2, gemma3)", key);
}

const char *kvb_lm_kind_key(kvb_lm_kind kind) {
  return kind >= 0 && kind < KVB_LM_N_KINDS ? KEY[kind] : "?";
}

int kvb_lm_available(kvb_lm_kind kind) {
  if (kind == KVB_LM_SMOLLM2) return kvb_model_available();
  if (kind == KVB_LM_GEMMA3) return kvb_gemma3_available();
  return KVB_ERROR(KVB_EINVAL, "kvb_lm_available: unknown model kind %d", (int)kind);
}

kvb_lm kvb_lm_view_smollm2(const kvb_model *m) {
  kvb_lm lm;
  memset(&lm, 0, sizeof lm);
  lm.kind = KVB_LM_SMOLLM2, lm.smol = m, lm.key = KEY[0], lm.name = "SmolLM2-135M";
  if (m) {
    const kvb_model_config *c = &m->cfg;
    lm.n_ctx = c->n_ctx, lm.n_layer = c->n_layer, lm.n_head = c->n_head;
    lm.n_head_kv = c->n_head_kv, lm.head_dim = c->head_dim, lm.n_vocab = c->n_vocab;
  }
  return lm;
}

kvb_lm kvb_lm_view_gemma3(const kvb_gemma3 *g) {
  kvb_lm lm;
  memset(&lm, 0, sizeof lm);
  lm.kind = KVB_LM_GEMMA3, lm.gemma = g, lm.key = KEY[1], lm.name = "Gemma 3 270M";
  if (g) {
    const kvb_gemma3_config *c = &g->cfg;
    lm.n_ctx = c->n_ctx, lm.n_layer = c->n_layer, lm.n_head = c->n_head;
    lm.n_head_kv = c->n_head_kv, lm.head_dim = c->head_dim, lm.n_vocab = c->n_vocab;
  }
  return lm;
}

int kvb_lm_load(kvb_lm_kind kind, const char *path, kvb_lm *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "kvb_lm_load: out is NULL");
  memset(out, 0, sizeof *out);
  if (kind == KVB_LM_SMOLLM2) {
    kvb_model *m = calloc(1, sizeof *m);
    if (!m) return KVB_ERROR(KVB_ENOMEM, "kvb_lm_load: out of memory");
    int st = kvb_model_load(path, m);
    if (st) {
      free(m);
      return st;
    }
    *out = kvb_lm_view_smollm2(m);
    out->owned = m;
    return KVB_OK;
  }
  if (kind == KVB_LM_GEMMA3) {
    kvb_gemma3 *g = calloc(1, sizeof *g);
    if (!g) return KVB_ERROR(KVB_ENOMEM, "kvb_lm_load: out of memory");
    int st = kvb_gemma3_load(path, g);
    if (st) {
      free(g);
      return st;
    }
    *out = kvb_lm_view_gemma3(g);
    out->owned = g;
    return KVB_OK;
  }
  return KVB_ERROR(KVB_EINVAL, "kvb_lm_load: unknown model kind %d", (int)kind);
}

void kvb_lm_free(kvb_lm *lm) {
  if (!lm) return;
  if (lm->owned) {
    if (lm->kind == KVB_LM_SMOLLM2) kvb_model_free(lm->owned);
    else kvb_gemma3_free(lm->owned);
    free(lm->owned);
  }
  memset(lm, 0, sizeof *lm);
}

static int ready(const kvb_lm *lm) {
  return lm && ((lm->kind == KVB_LM_SMOLLM2 && lm->smol) || (lm->kind == KVB_LM_GEMMA3 && lm->gemma));
}

int kvb_lm_encode(const kvb_lm *lm, const char *text, size_t len, int32_t **ids, size_t *n) {
  if (!ready(lm)) return KVB_ERROR(KVB_ENULL, "kvb_lm_encode: no model");
  if (lm->kind == KVB_LM_SMOLLM2) return kvb_tok_encode(lm->smol->tok, text, len, ids, n);
  return kvb_spm_encode(lm->gemma->tok, text, len, 0, ids, n);
}

int kvb_lm_decode(const kvb_lm *lm, const int32_t *ids, size_t n, char **text, size_t *len) {
  if (!ready(lm)) return KVB_ERROR(KVB_ENULL, "kvb_lm_decode: no model");
  if (lm->kind == KVB_LM_SMOLLM2) return kvb_tok_decode(lm->smol->tok, ids, n, text, len);
  return kvb_spm_decode(lm->gemma->tok, ids, n, text, len);
}

int32_t kvb_lm_bos(const kvb_lm *lm) {
  return ready(lm) && lm->kind == KVB_LM_GEMMA3 ? kvb_spm_bos(lm->gemma->tok) : -1;
}

int kvb_lm_compressed(const kvb_lm *lm, int layer) {
  if (!ready(lm) || layer < 0 || layer >= lm->n_layer) return 0;
  return lm->kind == KVB_LM_SMOLLM2 ? 1 : kvb_gemma3_is_global(&lm->gemma->cfg, layer);
}

int kvb_lm_n_compressed(const kvb_lm *lm) {
  int n = 0;
  for (int l = 0; lm && l < lm->n_layer; l++) n += kvb_lm_compressed(lm, l);
  return n;
}

int kvb_lm_compressed_index(const kvb_lm *lm, int layer) {
  if (!kvb_lm_compressed(lm, layer)) return -1;
  int i = 0;
  for (int l = 0; l < layer; l++) i += kvb_lm_compressed(lm, l);
  return i;
}

int kvb_lm_prefix_build(const kvb_lm *lm, const int32_t *tokens, size_t n0, kvb_dec_prefix *out) {
  if (!ready(lm)) return KVB_ERROR(KVB_ENULL, "kvb_lm_prefix_build: no model");
  if (lm->kind == KVB_LM_SMOLLM2) return kvb_dec_prefix_build(lm->smol, tokens, n0, out);
  return kvb_dec_prefix_build_gemma3(lm->gemma, tokens, n0, out);
}

int kvb_lm_dec_open(const kvb_lm *lm, const kvb_dec_prefix *p, kvb_dec_make_fn make, void *ctx,
                    const kvb_dec_opts *opts, kvb_dec_session **out) {
  if (!ready(lm)) {
    if (out) *out = NULL;
    return KVB_ERROR(KVB_ENULL, "kvb_lm_dec_open: no model");
  }
  if (lm->kind == KVB_LM_SMOLLM2) return kvb_dec_open(lm->smol, p, make, ctx, opts, out);
  return kvb_dec_open_gemma3(lm->gemma, p, make, ctx, opts, out);
}

int kvb_lm_reference(const kvb_lm *lm, const int32_t *t, size_t n0, size_t n1, float **lp) {
  if (!ready(lm)) return KVB_ERROR(KVB_ENULL, "kvb_lm_reference: no model");
  if (lm->kind == KVB_LM_SMOLLM2) return kvb_dec_reference(lm->smol, t, n0, n1, lp);
  return kvb_dec_reference_gemma3(lm->gemma, t, n0, n1, lp);
}

/* lm.c — the known real models (lm.h): the table, and one handle on any of them. */
#include "lm.h"

#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "kvb_error.h"

typedef struct {
  const char *key, *name, *arch, *file, *env, *fetch;
  unsigned long long size;
  int n_layer, n_head, n_head_kv, head_dim; /* the file's shape (its record says the same) */
  int n_ctx, swa_period; /* its trained context; its record's sliding-window period (0: none) */
} known_model;

/* One row per model, in kvb_lm_kind order: the registry (file name, size in bytes with its SHA-256
 * in scripts/fetch-model, the variable that overrides its path). The first row is the default
 * model (--model, the "model" stream, specs). */
static const known_model KNOWN[KVB_LM_N_KINDS] = {
    {"smollm2", "SmolLM2-135M", "llama", KVB_MODEL_FILE, "KVB_MODEL", "scripts/fetch-model", KVB_MODEL_SIZE,
     30, 9, 3, 64, 8192, 0},
    {"gemma3", "Gemma 3 270M", "gemma3", "gemma-3-270m-q4_k_m.gguf", "KVB_MODEL_GEMMA3",
     "scripts/fetch-model --model gemma3", 253113024ull, 18, 4, 1, 256, 32768, 6},
};

static const known_model *row(kvb_lm_kind kind) {
  return kind >= 0 && kind < KVB_LM_N_KINDS ? &KNOWN[kind] : NULL;
}

int kvb_lm_kind_lookup(const char *key, kvb_lm_kind *kind) {
  if (!key || !kind) return KVB_ERROR(KVB_ENULL, "kvb_lm_kind_lookup: NULL argument");
  for (int k = 0; k < KVB_LM_N_KINDS; k++)
    if (!strcmp(key, KNOWN[k].key)) {
      *kind = (kvb_lm_kind)k;
      return KVB_OK;
    }
  char known[256];
  kvb_lm_known_keys(known, sizeof known, ", ");
  return KVB_ERROR(KVB_EINVAL, "unknown model '%s' (known: %s)", key, known);
}

const char *kvb_lm_known_keys(char *buf, size_t cap, const char *sep) {
  size_t k = 0;
  if (cap) buf[0] = 0;
  for (int i = 0; i < KVB_LM_N_KINDS && k < cap; i++) {
    int w = snprintf(buf + k, cap - k, "%s%s", i ? sep : "", KNOWN[i].key);
    if (w < 0) break;
    k += (size_t)w;
  }
  return buf;
}

const char *kvb_lm_kind_key(kvb_lm_kind kind) { return row(kind) ? row(kind)->key : "?"; }
const char *kvb_lm_kind_name(kvb_lm_kind kind) { return row(kind) ? row(kind)->name : "?"; }
const char *kvb_lm_fetch_hint(kvb_lm_kind kind) { return row(kind) ? row(kind)->fetch : "?"; }

int kvb_lm_kind_shape(kvb_lm_kind kind, int *n_layer, int *n_head, int *n_head_kv, int *head_dim) {
  const known_model *r = row(kind);
  if (!r) return KVB_ERROR(KVB_EINVAL, "unknown model kind %d", (int)kind);
  *n_layer = r->n_layer, *n_head = r->n_head, *n_head_kv = r->n_head_kv, *head_dim = r->head_dim;
  return KVB_OK;
}

int kvb_lm_kind_n_ctx(kvb_lm_kind kind) { return row(kind) ? row(kind)->n_ctx : 0; }

int kvb_lm_kind_global(kvb_lm_kind kind, int layer) {
  const known_model *r = row(kind);
  if (!r || layer < 0 || layer >= r->n_layer) return 0;
  return r->swa_period <= 0 || layer % r->swa_period == r->swa_period - 1;
}

int kvb_lm_default_path(kvb_lm_kind kind, char *buf, size_t cap) {
  const known_model *r = row(kind);
  if (!r) return KVB_ERROR(KVB_EINVAL, "unknown model kind %d", (int)kind);
  return kvb_model_path_for(r->file, r->env, buf, cap);
}

int kvb_lm_available(kvb_lm_kind kind) {
  const known_model *r = row(kind);
  if (!r) return KVB_ERROR(KVB_EINVAL, "kvb_lm_available: unknown model kind %d", (int)kind);
  return kvb_model_available_for(r->file, r->env, r->size, r->fetch);
}

int kvb_lm_model_load(kvb_lm_kind kind, const char *path, kvb_model *m) {
  if (!m) return KVB_ERROR(KVB_ENULL, "kvb_lm_model_load: m is NULL");
  memset(m, 0, sizeof *m);
  char def[4096];
  if (!path) {
    int st = kvb_lm_available(kind);
    if (st) return st;
    kvb_lm_default_path(kind, def, sizeof def);
    path = def;
  }
  return kvb_model_load(path, m);
}

kvb_lm kvb_lm_view(const kvb_model *m) {
  kvb_lm lm;
  memset(&lm, 0, sizeof lm);
  lm.kind = KVB_LM_SMOLLM2;
  for (int k = 0; m && m->cfg.arch && k < KVB_LM_N_KINDS; k++)
    if (!strcmp(m->cfg.arch, KNOWN[k].arch)) lm.kind = (kvb_lm_kind)k;
  lm.m = m, lm.key = KNOWN[lm.kind].key, lm.name = KNOWN[lm.kind].name;
  if (m) {
    const kvb_arch *c = &m->cfg;
    lm.n_ctx = c->n_ctx, lm.n_layer = c->n_layer, lm.n_head = c->n_head;
    lm.n_head_kv = c->n_head_kv, lm.head_dim = c->head_dim, lm.n_vocab = c->n_vocab;
  }
  return lm;
}

kvb_lm kvb_lm_view_smollm2(const kvb_model *m) { return kvb_lm_view(m); }

int kvb_lm_load(kvb_lm_kind kind, const char *path, kvb_lm *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "kvb_lm_load: out is NULL");
  memset(out, 0, sizeof *out);
  if (!row(kind)) return KVB_ERROR(KVB_EINVAL, "kvb_lm_load: unknown model kind %d", (int)kind);
  kvb_model *m = calloc(1, sizeof *m);
  if (!m) return KVB_ERROR(KVB_ENOMEM, "kvb_lm_load: out of memory");
  int st = kvb_lm_model_load(kind, path, m);
  if (st) {
    free(m);
    return st;
  }
  *out = kvb_lm_view(m);
  out->kind = kind, out->key = KNOWN[kind].key, out->name = KNOWN[kind].name;
  out->owned = m;
  return KVB_OK;
}

void kvb_lm_free(kvb_lm *lm) {
  if (!lm) return;
  if (lm->owned) {
    kvb_model_free(lm->owned);
    free(lm->owned);
  }
  memset(lm, 0, sizeof *lm);
}

static int ready(const kvb_lm *lm) { return lm && lm->m; }

int kvb_lm_encode(const kvb_lm *lm, const char *text, size_t len, int32_t **ids, size_t *n) {
  if (!ready(lm)) return KVB_ERROR(KVB_ENULL, "kvb_lm_encode: no model");
  return kvb_model_encode(lm->m, text, len, 0, ids, n);
}

int kvb_lm_decode(const kvb_lm *lm, const int32_t *ids, size_t n, char **text, size_t *len) {
  if (!ready(lm)) return KVB_ERROR(KVB_ENULL, "kvb_lm_decode: no model");
  return kvb_model_decode(lm->m, ids, n, text, len);
}

int32_t kvb_lm_bos(const kvb_lm *lm) { return ready(lm) ? kvb_model_bos(lm->m) : -1; }

int kvb_lm_compressed(const kvb_lm *lm, int layer) {
  if (!ready(lm) || layer < 0 || layer >= lm->n_layer) return 0;
  return kvb_arch_is_global(&lm->m->cfg, layer);
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
  return kvb_dec_prefix_build(lm->m, tokens, n0, out);
}

int kvb_lm_dec_open(const kvb_lm *lm, const kvb_dec_prefix *p, kvb_dec_make_fn make, void *ctx,
                    const kvb_dec_opts *opts, kvb_dec_session **out) {
  if (!ready(lm)) {
    if (out) *out = NULL;
    return KVB_ERROR(KVB_ENULL, "kvb_lm_dec_open: no model");
  }
  return kvb_dec_open(lm->m, p, make, ctx, opts, out);
}

int kvb_lm_reference(const kvb_lm *lm, const int32_t *t, size_t n0, size_t n1, float **lp) {
  if (!ready(lm)) return KVB_ERROR(KVB_ENULL, "kvb_lm_reference: no model");
  return kvb_dec_reference(lm->m, t, n0, n1, lp);
}

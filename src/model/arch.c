/* arch.c — the architecture record from GGUF metadata (arch.h); the table below is the only place
 * that names an architecture. */
#include "arch.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kvb_error.h"
#include "model_ops.h"

/* One row per architecture: its defaults where the file is silent (arch.h's table). */
typedef struct {
  const char *name;
  int head_dim_from_key_length; /* else d_model / n_head */
  double rms_eps;
  int qk_norm, post_norms, has_window, swa_period;
  double rope_base, rope_base_local; /* local 0: the global base */
  kvb_rope_layout layout;
  kvb_act act;
  int embd_scale_sqrt_d, add_bos;
  kvb_tok_kind tokenizer;
} arch_row;

static const arch_row KNOWN[] = {
    {"llama", 0, 1e-5, 0, 0, 0, 0, 10000.0, 0, KVB_ROPE_ADJACENT, KVB_ACT_SILU, 0, 0, KVB_TOK_BPE},
    {"gemma3", 1, 1e-6, 1, 1, 1, 6, 1e6, 10000.0, KVB_ROPE_NEOX, KVB_ACT_GELU_TANH, 1, 1, KVB_TOK_SPM},
};

int kvb_arch_is_global(const kvb_arch *a, int layer) {
  return a->swa_period <= 0 || layer % a->swa_period == a->swa_period - 1;
}

int kvb_arch_n_global(const kvb_arch *a) {
  int n = 0;
  for (int l = 0; l < a->n_layer; l++) n += kvb_arch_is_global(a, l);
  return n;
}

/* "<arch>.<rest>" into buf */
static const char *key(char *buf, size_t cap, const char *arch, const char *rest) {
  snprintf(buf, cap, "%s.%s", arch, rest);
  return buf;
}

int kvb_arch_from_gguf(const kvb_gguf *g, const char *path, kvb_arch *out) {
  if (!g || !out) return KVB_ERROR(KVB_ENULL, "kvb_arch_from_gguf: NULL argument");
  if (!path) path = "the model file";
  const char *name = NULL;
  if (kvb_gguf_get_str(g, "general.architecture", &name))
    return KVB_ERROR(KVB_EFORMAT, "%s: no general.architecture", path);
  const arch_row *r = NULL;
  for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++)
    if (!strcmp(name, KNOWN[i].name)) r = &KNOWN[i];
  if (!r) return KVB_ERROR(KVB_EFORMAT, "%s: architecture '%s' is not known (known: llama, gemma3)", path, name);
  kvb_arch a;
  memset(&a, 0, sizeof a);
  a.arch = r->name;
  char k[96];
  int st;
  if ((st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "block_count"), 1, 1024, &a.n_layer)) ||
      (st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "embedding_length"), 1, 65536, &a.d_model)) ||
      (st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "attention.head_count"), 1, 1024, &a.n_head)) ||
      (st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "attention.head_count_kv"), 1, 1024, &a.n_head_kv)) ||
      (st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "feed_forward_length"), 1, 1 << 20, &a.d_ff)) ||
      (st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "context_length"), 1, 1 << 24, &a.n_ctx)))
    return st;
  if (r->head_dim_from_key_length) {
    int vlen;
    if ((st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "attention.key_length"), 2, 4096, &a.head_dim)) ||
        (st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "attention.value_length"), 1, 4096, &vlen)))
      return st;
    if (vlen != a.head_dim)
      return KVB_ERROR(KVB_EFORMAT, "%s: key length %d and value length %d differ", path, a.head_dim, vlen);
  } else {
    if (a.d_model % a.n_head) return KVB_ERROR(KVB_EFORMAT, "%s: heads do not divide the model width", path);
    a.head_dim = a.d_model / a.n_head;
  }
  if (a.n_head % a.n_head_kv || a.head_dim % 2)
    return KVB_ERROR(KVB_EFORMAT, "%s: %d query heads do not group over %d key/value heads, or the "
                     "head dimension %d is odd", path, a.n_head, a.n_head_kv, a.head_dim);
  if (r->has_window &&
      (st = kvb_mo_get_int(g, key(k, sizeof k, r->name, "attention.sliding_window"), 1, 1 << 24, &a.window)))
    return st;
  a.swa_period = r->swa_period;
  double f;
  a.rope_base = kvb_gguf_get_float(g, key(k, sizeof k, r->name, "rope.freq_base"), &f) ? r->rope_base : f;
  a.rope_base_local = r->rope_base_local > 0 ? r->rope_base_local : a.rope_base;
  a.rms_eps = kvb_gguf_get_float(g, key(k, sizeof k, r->name, "attention.layer_norm_rms_epsilon"), &f)
                  ? r->rms_eps : f;
  a.qk_norm = r->qk_norm, a.qk_norm_eps = r->qk_norm ? a.rms_eps : 0;
  a.post_norms = r->post_norms;
  a.rope_layout = r->layout, a.act = r->act;
  a.embd_scale_sqrt_d = r->embd_scale_sqrt_d;
  a.tied_output = 1;
  a.attn_scale = 1.0 / sqrt((double)a.head_dim);
  a.add_bos = r->add_bos, a.tokenizer = r->tokenizer;
  /* finite, or every angle or every norm of the forward pass degenerates (an infinite base makes
   * every rotation the identity; an infinite ε zeroes every activation) */
  if (!(a.rope_base > 1) || !isfinite(a.rope_base) || !(a.rms_eps > 0) || !(a.rms_eps < 1))
    return KVB_ERROR(KVB_EFORMAT, "%s: a RoPE base (%g) not finite and > 1, or an RMS epsilon (%g) "
                     "not in (0, 1)", path, a.rope_base, a.rms_eps);
  if (kvb_gguf_find(g, key(k, sizeof k, r->name, "final_logit_softcapping")) ||
      kvb_gguf_find(g, key(k, sizeof k, r->name, "attn_logit_softcapping")))
    return KVB_ERROR(KVB_EFORMAT, "%s: logit soft-capping (%s) is not supported", path, k);
  *out = a;
  return KVB_OK;
}

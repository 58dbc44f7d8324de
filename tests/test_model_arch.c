/* test_model_arch.c — the model record pinned without the model files: known answers of the
 * architecture record (arch.h) from hand-built GGUF metadata, and hand-worked cases for the three
 * constants no golden file can see (real activations are far above every ε, and no golden text
 * has an equal-score merge):
 *   - RMSNorm's ε sits INSIDE the square root (model_ops.c): x = (1e-3, 1e-3), w = 1, ε = 1e-6
 *     gives 1e-3/√(1e-6 + 1e-6) = 0.70710678 per entry; ε outside, 1e-3/(1e-3 + 1e-6), gives
 *     0.999.
 *   - Gemma's QK-norm ε is the file's RMS ε, 1e-6 (llama.cpp's build_norm with f_norm_rms_eps
 *     for attn_q_norm / attn_k_norm): the record says so with and without the key, and a one-row
 *     block (model.h's kvb_model_layer_qkv at position 0, where RoPE is the identity) with
 *     x = (1, 1), unit norms, Wq = Wk = 1e-3·I gives q = h·s/√(h²s² + 1e-6) with
 *     h = 1/√(1 + 1e-6), s = 1e-3: 0.70710661; ε = 1e-5 would give 0.30151.
 *   - SentencePiece takes equal-score merges LEFTMOST first (llama.cpp's llm_tokenizer_spm: its
 *     bigram queue orders equal scores by the smaller left index): with pieces "a" and "aa" only,
 *     "aaa" is [aa, a] and "aaaaa" [aa, aa, a]; rightmost first gives [a, aa] and [a, aa, aa].
 * Each of the three fails under its mutant (ε outside the root; qk_norm_eps = 1e-5; ties to the
 * larger left index): see the closing note of the change that added this file. */
#include "arch.h"
#include "gguf.h"
#include "kvb_error.h"
#include "model.h"
#include "model_ops.h"
#include "tokenizer_spm.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a GGUF image in memory (metadata only, or a tokenizer): tests/gguf_write.h ---- */
#include "gguf_write.h"
static void kv_u32(wbuf *w, const char *k, uint32_t v) { str(w, k); u32(w, KVB_GGUF_UINT32); u32(w, v); }
static void kv_f32(wbuf *w, const char *k, float v) { str(w, k); u32(w, KVB_GGUF_FLOAT32); f32(w, v); }
static void kv_str(wbuf *w, const char *k, const char *v) { str(w, k); u32(w, KVB_GGUF_STRING); str(w, v); }
static void header(wbuf *w, uint64_t n_kv) { put(w, "GGUF", 4); u32(w, 3); u64(w, 0); u64(w, n_kv); }

/* SmolLM2's metadata; drop_defaults leaves out the keys the record has defaults for. */
static void llama_meta(wbuf *w, int drop_defaults) {
  header(w, drop_defaults ? 7 : 9);
  kv_str(w, "general.architecture", "llama");
  kv_u32(w, "llama.block_count", 30);
  kv_u32(w, "llama.embedding_length", 576);
  kv_u32(w, "llama.attention.head_count", 9);
  kv_u32(w, "llama.attention.head_count_kv", 3);
  kv_u32(w, "llama.feed_forward_length", 1536);
  kv_u32(w, "llama.context_length", 8192);
  if (!drop_defaults) {
    kv_f32(w, "llama.rope.freq_base", 100000.0f);
    kv_f32(w, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  }
}

/* Gemma 3 270M's metadata; extra: 0 none, 1 a final soft-capping key, 2 value_length 128. */
static void gemma3_meta(wbuf *w, int drop_defaults, int extra) {
  header(w, (drop_defaults ? 10 : 12) + (extra == 1));
  kv_str(w, "general.architecture", "gemma3");
  kv_u32(w, "gemma3.block_count", 18);
  kv_u32(w, "gemma3.embedding_length", 640);
  kv_u32(w, "gemma3.attention.head_count", 4);
  kv_u32(w, "gemma3.attention.head_count_kv", 1);
  kv_u32(w, "gemma3.attention.key_length", 256);
  kv_u32(w, "gemma3.attention.value_length", extra == 2 ? 128 : 256);
  kv_u32(w, "gemma3.feed_forward_length", 2048);
  kv_u32(w, "gemma3.context_length", 32768);
  kv_u32(w, "gemma3.attention.sliding_window", 512);
  if (!drop_defaults) {
    kv_f32(w, "gemma3.rope.freq_base", 1e6f);
    kv_f32(w, "gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
  }
  if (extra == 1) kv_f32(w, "gemma3.final_logit_softcapping", 30.0f);
}

static int arch_of(wbuf *w, kvb_arch *a) {
  kvb_gguf g;
  int st = kvb_gguf_parse(w->b, w->n, &g);
  if (!st) st = kvb_arch_from_gguf(&g, "test.gguf", a);
  kvb_gguf_free(&g);
  free(w->b);
  memset(w, 0, sizeof *w);
  return st;
}

static void test_llama_record(void) {
  for (int drop = 0; drop <= 1; drop++) {
    wbuf w = {0};
    kvb_arch a;
    memset(&a, 0, sizeof a);
    llama_meta(&w, drop);
    int st = arch_of(&w, &a);
    int all_global = 1;
    for (int l = 0; l < 30; l++) all_global &= kvb_arch_is_global(&a, l);
    double base = drop ? 10000.0 : 100000.0, eps = drop ? 1e-5 : (double)1e-5f;
    CHECK(st == KVB_OK && !strcmp(a.arch, "llama") && a.n_layer == 30 && a.d_model == 576 &&
              a.n_head == 9 && a.n_head_kv == 3 && a.head_dim == 64 && a.d_ff == 1536 &&
              a.n_ctx == 8192 && a.rope_base == base && a.rope_base_local == base &&
              a.rms_eps == eps && !a.qk_norm && !a.post_norms && a.window == 0 &&
              a.swa_period == 0 && all_global && kvb_arch_n_global(&a) == 30 &&
              a.rope_layout == KVB_ROPE_ADJACENT && a.act == KVB_ACT_SILU &&
              !a.embd_scale_sqrt_d && a.tied_output && a.attn_scale == 0.125 && !a.add_bos &&
              a.tokenizer == KVB_TOK_BPE && a.norm_weight_offset == 0,
          drop ? "arch.llama_defaults" : "arch.llama_from_metadata",
          "status %d (%s): head_dim %d, base %g, eps %g, period %d", st, kvb_strerror_last(),
          a.head_dim, a.rope_base, a.rms_eps, a.swa_period);
  }
}

static void test_gemma3_record(void) {
  for (int drop = 0; drop <= 1; drop++) {
    wbuf w = {0};
    kvb_arch a;
    memset(&a, 0, sizeof a);
    gemma3_meta(&w, drop, 0);
    int st = arch_of(&w, &a);
    double eps = drop ? 1e-6 : (double)1e-6f;
    int globals_ok = kvb_arch_n_global(&a) == 3;
    for (int l = 0; l < 18; l++) globals_ok &= kvb_arch_is_global(&a, l) == (l == 5 || l == 11 || l == 17);
    CHECK(st == KVB_OK && !strcmp(a.arch, "gemma3") && a.n_layer == 18 && a.d_model == 640 &&
              a.n_head == 4 && a.n_head_kv == 1 && a.head_dim == 256 && a.d_ff == 2048 &&
              a.n_ctx == 32768 && a.window == 512 && a.swa_period == 6 && globals_ok &&
              a.rope_base == 1e6 && a.rope_base_local == 10000.0 && a.rms_eps == eps &&
              a.qk_norm && a.qk_norm_eps == eps && a.post_norms &&
              a.rope_layout == KVB_ROPE_NEOX && a.act == KVB_ACT_GELU_TANH &&
              a.embd_scale_sqrt_d && a.tied_output && a.attn_scale == 1.0 / 16 && a.add_bos &&
              a.tokenizer == KVB_TOK_SPM && a.norm_weight_offset == 0 && a.final_softcap == 0,
          drop ? "arch.gemma3_defaults" : "arch.gemma3_from_metadata",
          "status %d (%s): eps %g, qk eps %g, window %d, period %d, local base %g", st,
          kvb_strerror_last(), a.rms_eps, a.qk_norm_eps, a.window, a.swa_period, a.rope_base_local);
  }
}

static void test_refused(void) {
  struct {
    const char *name, *msg;
    int which;
  } bad[] = {{"arch.softcap_refused", "soft-capping", 1},
             {"arch.value_length_differs_refused", "differ", 2},
             {"arch.unknown_architecture_refused", "not known", 3},
             {"arch.heads_not_grouping_refused", "do not group", 4}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    wbuf w = {0};
    if (bad[i].which <= 2) gemma3_meta(&w, 0, bad[i].which);
    else if (bad[i].which == 3) {
      header(&w, 1);
      kv_str(&w, "general.architecture", "mamba");
    } else {
      header(&w, 7);
      kv_str(&w, "general.architecture", "llama");
      kv_u32(&w, "llama.block_count", 2);
      kv_u32(&w, "llama.embedding_length", 64);
      kv_u32(&w, "llama.attention.head_count", 4);
      kv_u32(&w, "llama.attention.head_count_kv", 3);
      kv_u32(&w, "llama.feed_forward_length", 8);
      kv_u32(&w, "llama.context_length", 16);
    }
    kvb_arch a;
    memset(&a, 0x5a, sizeof a);
    kvb_arch before = a;
    kvb_error_clear();
    int st = arch_of(&w, &a);
    CHECK(st == KVB_EFORMAT && strstr(kvb_strerror_last(), bad[i].msg) && !memcmp(&a, &before, sizeof a),
          bad[i].name, "status %d: %s", st, kvb_strerror_last());
  }
}

/* ---- hand-worked ε cases ---- */

static void test_rmsnorm_eps_inside_root(void) {
  const float x[2] = {1e-3f, 1e-3f}, w[2] = {1, 1};
  float out[2];
  kvb_mo_rmsnorm(x, w, 2, 1e-6, out);
  double ms = (double)x[0] * x[0], want = (double)x[0] / sqrt(ms + 1e-6); /* 0.70710678 */
  CHECK(fabs(out[0] - want) <= 1e-6 * want && fabs(out[1] - want) <= 1e-6 * want,
        "arch.rmsnorm_eps_inside_root", "RMSNorm((1e-3, 1e-3), eps 1e-6) = %.8f, hand-worked %.8f "
        "(eps outside the root gives %.8f)", out[0], want, (double)x[0] / (sqrt(ms) + 1e-6));
  /* where ε is negligible, both readings agree: x = (3, 4), ε = 1e-5 → 3/√12.50001 */
  const float y[2] = {3, 4};
  kvb_mo_rmsnorm(y, w, 2, 1e-5, out);
  CHECK(fabs(out[0] - 3 / sqrt(12.5 + 1e-5)) < 1e-6 && fabs(out[1] - 4 / sqrt(12.5 + 1e-5)) < 1e-6,
        "arch.rmsnorm_known_answer", "RMSNorm((3, 4)) = (%.7f, %.7f)", out[0], out[1]);
}

/* One Gemma-record layer of width 2 (one head of 2, one key/value head) with unit norms and
 * Wq = Wk = Wv = s·I, run at position 0. */
static void test_qk_norm_eps(void) {
  wbuf w = {0};
  kvb_arch a;
  memset(&a, 0, sizeof a);
  gemma3_meta(&w, 0, 0);
  int st = arch_of(&w, &a);
  a.n_layer = 1, a.d_model = 2, a.n_head = 1, a.n_head_kv = 1, a.head_dim = 2, a.d_ff = 1;
  a.n_vocab = 1, a.n_ctx = 4, a.attn_scale = 1 / sqrt(2.0);
  const float s = 1e-3f;
  float one[2] = {1, 1}, W[4] = {s, 0, 0, s};
  kvb_model_layer L;
  memset(&L, 0, sizeof L);
  L.attn_norm = L.q_norm = L.k_norm = one, L.wq = L.wk = L.wv = W;
  kvb_model m;
  memset(&m, 0, sizeof m);
  m.cfg = a, m.layers = &L;
  kvb_model_ws ws;
  float x[2] = {1, 1}, q[2] = {0}, k[2] = {0}, v[2] = {0};
  if (!st) st = kvb_model_ws_init(&m, 0, 1, &ws);
  if (!st) {
    kvb_model_layer_qkv(&m, 0, 0, x, &ws, q, k, v);
    kvb_model_ws_free(&ws);
  }
  double h = 1 / sqrt(1 + a.rms_eps), hs = h * (double)s, want = hs / sqrt(hs * hs + 1e-6);
  CHECK(st == KVB_OK && a.qk_norm_eps == (double)1e-6f && fabs(q[0] - want) <= 1e-5 * want &&
            fabs(q[1] - want) <= 1e-5 * want && fabs(k[0] - want) <= 1e-5 * want,
        "arch.gemma3_qk_norm_eps", "q = (%.8f, %.8f), k0 %.8f, hand-worked %.8f with eps 1e-6 "
        "(1e-5 gives %.8f); record qk eps %g", q[0], q[1], k[0], want, hs / sqrt(hs * hs + 1e-5),
        a.qk_norm_eps);
}

/* ---- SentencePiece's equal-score merges ---- */

static int spm_ids(const kvb_spm *t, const char *text, int32_t *want, size_t nw) {
  int32_t *ids = NULL;
  size_t n = 0;
  int ok = kvb_spm_encode(t, text, strlen(text), 0, &ids, &n) == KVB_OK && n == nw &&
           !memcmp(ids, want, nw * sizeof *want);
  if (!ok) {
    printf("  %s ->", text);
    for (size_t i = 0; i < n; i++) printf(" %d", (int)ids[i]);
    printf("\n");
  }
  free(ids);
  return ok;
}

static void test_spm_tie_leftmost(void) {
  /* 256 byte tokens, "a" (256), "aa" (257, score −1), "<bos>" (258, control) */
  wbuf w = {0};
  header(&w, 5);
  kv_str(&w, "tokenizer.ggml.model", "llama");
  str(&w, "tokenizer.ggml.tokens");
  u32(&w, KVB_GGUF_ARRAY), u32(&w, KVB_GGUF_STRING), u64(&w, 259);
  for (int i = 0; i < 256; i++) {
    char b[8];
    snprintf(b, sizeof b, "<0x%02X>", (unsigned)i);
    str(&w, b);
  }
  str(&w, "a"), str(&w, "aa"), str(&w, "<bos>");
  str(&w, "tokenizer.ggml.scores");
  u32(&w, KVB_GGUF_ARRAY), u32(&w, KVB_GGUF_FLOAT32), u64(&w, 259);
  for (int i = 0; i < 256; i++) f32(&w, 0);
  f32(&w, 0), f32(&w, -1), f32(&w, 0);
  str(&w, "tokenizer.ggml.token_type");
  u32(&w, KVB_GGUF_ARRAY), u32(&w, KVB_GGUF_INT32), u64(&w, 259);
  for (int i = 0; i < 256; i++) u32(&w, 6);
  u32(&w, 1), u32(&w, 1), u32(&w, 3);
  kv_u32(&w, "tokenizer.ggml.bos_token_id", 258);
  kvb_gguf g;
  kvb_spm *t = NULL;
  int st = kvb_gguf_parse(w.b, w.n, &g);
  if (!st) st = kvb_spm_load(&g, &t);
  int32_t three[2] = {257, 256}, five[3] = {257, 257, 256};
  CHECK(st == KVB_OK && spm_ids(t, "aaa", three, 2) && spm_ids(t, "aaaaa", five, 3),
        "arch.spm_equal_scores_merge_leftmost", "status %d (%s): \"aaa\" must be [aa, a] and "
        "\"aaaaa\" [aa, aa, a] (rightmost first gives [a, aa], [a, aa, aa])", st, kvb_strerror_last());
  kvb_spm_free(t);
  if (!st) kvb_gguf_free(&g);
  free(w.b);
}

int main(void) {
  test_llama_record();
  test_gemma3_record();
  test_refused();
  test_rmsnorm_eps_inside_root();
  test_qk_norm_eps();
  test_spm_tie_leftmost();
  UNIT_EXIT();
}

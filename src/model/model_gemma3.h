/* model_gemma3.h — Gemma 3 (architecture "gemma3"; Gemma 3 270M: 18 blocks, d_model 640,
 * 4 query heads sharing ONE key/value head of length 256, GeGLU feed-forward of width 2048,
 * 262144 tokens, sliding window 512) read from a GGUF file. Weights are dequantized to float32
 * at load except the token embedding, which stays in its file encoding (Q8_0, 178 MB instead
 * of 671 MB of floats) and is dequantized row by row for the input and in vocabulary chunks
 * for the (tied) output. Prefill by OpenBLAS sgemm, as model.c.
 *
 * The block, as llama.cpp builds it (src/models/gemma3.cpp, llm_build_gemma3, and the hyper-
 * parameters of llama_model::load_hparams for LLM_ARCH_GEMMA3; facts, not code):
 *   x = E[token]·√d_model;
 *   per layer l: h = RMSNorm(x)·w_attn_norm;  q = h·Wqᵀ, k = h·Wkᵀ, v = h·Wvᵀ;
 *     QK-norm: each head's q and k (256 values) RMSNorm'ed with w_q_norm / w_k_norm;
 *     RoPE, NEOX layout (Gemma's rope type: coordinate i pairs with i + 128), angle
 *       pos·base^(−2i/256) with base 1e6 (gemma3.rope.freq_base) on global layers and 10000
 *       (llama.cpp's rope_freq_base_train_swa for gemma3; not in the file) on local ones;
 *     scores q·k scaled by 1/√256 (f_attention_scale = 1/√n_embd_head_k for every size but
 *       27B — the file has no query_pre_attn_scalar), causal; a LOCAL layer lets query p see
 *       key p′ only when p − p′ < 512 (gemma3.attention.sliding_window; llama.cpp's
 *       LLAMA_SWA_TYPE_STANDARD); layer l is GLOBAL when l % 6 == 5 (set_swa_pattern(6): layers
 *       5, 11, 17 of 18), local otherwise;
 *     x += RMSNorm(concat(heads)·Woᵀ)·w_post_attention_norm;
 *     h = RMSNorm(x)·w_ffn_norm;  f = (gelu_tanh(h·Wgateᵀ) ⊙ h·Wupᵀ)·Wdownᵀ;
 *     x += RMSNorm(f)·w_post_ffw_norm;
 *   hidden = RMSNorm(x)·w_output_norm; logits = hidden·Eᵀ (tied; no final soft-capping: the
 *   file has no gemma3.final_logit_softcapping).
 * RMSNorm(x) = x/√(mean(x²) + ε), ε = 1e-6 from the file. Gemma's own norm multiplies by
 * (1 + w); llama.cpp's build_norm multiplies by the stored tensor as it is, the GGUF converter
 * having written 1 + w (convert_hf_to_gguf.py shifts Gemma's norm weights), so the weights here
 * are applied as stored. Nothing in the file says which one it holds (the output norm averages
 * 26.3 either way); the agreement with llama.cpp's logits is the check.
 * gelu_tanh(x) = x/2·(1 + tanh(√(2/π)(x + 0.044715x³))) (computed as model_ops.h's kvb_mo_geglu
 * says). Attention: model_ops.h's kvb_mo_attention, the window passed on local layers, so a
 * local layer costs O(n·512) and only the three global layers O(n²). */
#ifndef KVB_MODEL_GEMMA3_H
#define KVB_MODEL_GEMMA3_H

#include <stddef.h>
#include <stdint.h>

#include "gguf.h"
#include "model.h"
#include "tokenizer_spm.h"

#define KVB_GEMMA3_FILE "gemma-3-270m-q4_k_m.gguf"
#define KVB_GEMMA3_SIZE 253113024ull /* bytes; SHA-256 in scripts/fetch-model */
#define KVB_GEMMA3_ENV "KVB_MODEL_GEMMA3"

typedef struct {
  int n_layer, d_model, n_head, n_head_kv, head_dim, d_ff, n_vocab, n_ctx, window, swa_period;
  double rope_base_global, rope_base_local, rms_eps, attn_scale;
} kvb_gemma3_config;

typedef struct {
  float *attn_norm, *wq, *wk, *wv, *q_norm, *k_norm, *wo, *post_attn_norm, *ffn_norm, *w_gate,
      *w_up, *w_down, *post_ffn_norm;
} kvb_gemma3_layer;

typedef struct {
  kvb_gemma3_config cfg;
  unsigned char *embd;  /* token_embd.weight in its file encoding */
  uint32_t embd_type;
  size_t embd_row_bytes;
  float *out_norm;
  kvb_gemma3_layer *layers;
  float *weights;       /* one allocation holding every float tensor above */
  size_t n_weights;
  kvb_spm *tok;
} kvb_gemma3;

/* Deliberately broken variants, for the validation test to show it can fail (test-only; the
 * faithful model is 0). */
enum {
  KVB_GEMMA3_NO_QK_NORM = 1u,     /* skip the per-head RMSNorm of q and k */
  KVB_GEMMA3_NO_WINDOW = 2u,      /* local layers attend to the whole prefix */
  KVB_GEMMA3_GLOBAL_LOCAL_BASE = 4u /* global layers rotate with the local base 10000 */
};

int kvb_gemma3_is_global(const kvb_gemma3_config *c, int layer);

/* Default path lookup and availability (as kvb_model_default_path / kvb_model_available, with
 * $KVB_MODEL_GEMMA3 and scripts/fetch-model --model gemma3). */
int kvb_gemma3_default_path(char *buf, size_t cap);
int kvb_gemma3_available(void);

/* Loads the model and its tokenizer (path NULL = the default path). KVB_EFORMAT for a file that
 * is not a gemma3 GGUF with the tensors and shapes the config implies. */
int kvb_gemma3_load(const char *path, kvb_gemma3 *m);
void kvb_gemma3_free(kvb_gemma3 *m);

/* Runs tokens[0..n) from position 0 and writes the final normed hidden states [n][d_model].
 * fn (may be NULL) sees every layer's post-RoPE q [n_head][n][256] (not yet scaled) and k, v
 * [n_head_kv][n][256]. The variant runs a broken model (0 = faithful). */
int kvb_gemma3_prefill(const kvb_gemma3 *m, const int32_t *tokens, size_t n, float *hidden,
                       kvb_model_qkv_fn fn, void *ctx);
int kvb_gemma3_prefill_variant(const kvb_gemma3 *m, unsigned variant, const int32_t *tokens,
                               size_t n, float *hidden, kvb_model_qkv_fn fn, void *ctx);
/* The block in pieces, shared by the prefill above and compressed decoding
 * (decode_compressed.h), so both run the same arithmetic. A workspace holds the scratch rows and
 * both RoPE tables for n rows at positions p0 .. p0 + n − 1. */
typedef struct {
  size_t p0, n;
  float *h, *q, *k, *v, *g, *u, *o, *tmp;
  double *cs_g, *cs_l;
} kvb_gemma3_ws;
int kvb_gemma3_ws_init(const kvb_gemma3 *m, size_t p0, size_t n, kvb_gemma3_ws *w);
void kvb_gemma3_ws_free(kvb_gemma3_ws *w);
/* x [n][d_model] = E[token]·√d_model (KVB_EINVAL for a token outside the vocabulary). */
int kvb_gemma3_embed(const kvb_gemma3 *m, const int32_t *tokens, size_t n, float *x);
/* Layer l before attention for the workspace's n rows x: RMSNorm, projections, QK-norm, RoPE
 * with the layer's base at the workspace's positions; q [n_head][n][hd], k, v [n_head_kv][n][hd]. */
void kvb_gemma3_layer_qkv(const kvb_gemma3 *m, int l, unsigned variant, const float *x,
                          kvb_gemma3_ws *w, float *qh, float *kh, float *vh);
/* Layer l after attention: x += RMSNorm(att·Woᵀ)·w_post_attn, then the GeGLU feed-forward with
 * its post-norm (att [n][n_head·hd]). */
void kvb_gemma3_layer_rest(const kvb_gemma3 *m, int l, const float *att, kvb_gemma3_ws *w,
                           float *x);

/* logits [rows][n_vocab] = hidden [rows][d_model] · Eᵀ (E dequantized in chunks). */
int kvb_gemma3_logits(const kvb_gemma3 *m, const float *hidden, size_t rows, float *logits);
/* Perplexity of tokens[1..n) given their prefixes, log-softmax in double (variant as above). */
int kvb_gemma3_perplexity(const kvb_gemma3 *m, unsigned variant, const int32_t *tokens, size_t n,
                          double *ppl);
/* The same from a prefill's final hidden states [n][d_model] (no second prefill). */
int kvb_gemma3_perplexity_hidden(const kvb_gemma3 *m, const float *hidden, const int32_t *tokens,
                                 size_t n, double *ppl);

#endif

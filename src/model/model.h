/* model.h — a Llama-architecture transformer read from a GGUF file (SmolLM2-135M: 30 layers,
 * d_model 576, 9 query heads sharing 3 key/value heads, head dimension 64, SwiGLU feed-forward
 * of width 1536, RoPE base 100000, output tied to the token embedding), weights dequantized to
 * float32 at load, prefill by OpenBLAS sgemm.
 *
 * One layer, for the rows x (n tokens × d_model) of a prefill starting at position 0:
 *   h = RMSNorm(x)·w_attn_norm;  q = h·Wqᵀ, k = h·Wkᵀ, v = h·Wvᵀ;
 *   RoPE on q and k per head: the pairs (2i, 2i+1) of a head's 64 coordinates rotate by the
 *     angle pos·base^(−2i/64) — the "normal" (adjacent-pair) layout of GGUF llama files, whose
 *     converter permutes Wq and Wk rows for it;
 *   attention per query head j with key/value head j / (n_head / n_head_kv), causal, scores
 *     scaled by 1/√64;  x += concat(heads)·Woᵀ;
 *   h = RMSNorm(x)·w_ffn_norm;  x += (silu(h·Wgateᵀ) ⊙ (h·Wupᵀ))·Wdownᵀ;
 * then the final RMSNorm and logits = h·Eᵀ with E the token embedding (tied output).
 * RMSNorm(x) = x / √(mean(x²) + ε), ε from the file (1e-5). */
#ifndef KVB_MODEL_H
#define KVB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gguf.h"
#include "tokenizer.h"

#define KVB_MODEL_FILE "SmolLM2-135M-Instruct.Q4_1.gguf"
#define KVB_MODEL_SIZE 98362432ull /* bytes; SHA-256 in scripts/fetch-model */

typedef struct {
  int n_layer, d_model, n_head, n_head_kv, head_dim, d_ff, n_vocab, n_ctx;
  double rope_base, rms_eps;
} kvb_model_config;

typedef struct {
  float *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down;
} kvb_model_layer;

typedef struct {
  kvb_model_config cfg;
  float *tok_embd;   /* [n_vocab][d_model], also the output matrix */
  float *out_norm;   /* [d_model] */
  kvb_model_layer *layers;
  float *weights;    /* one allocation holding every tensor above */
  size_t n_weights;  /* floats in it */
  kvb_tokenizer *tok;
} kvb_model;

/* Where the model file is expected: $KVB_MODEL, else $KVB_MODEL_DIR/KVB_MODEL_FILE, else
 * ${XDG_CACHE_HOME:-$HOME/.cache}/kvbound/KVB_MODEL_FILE (as scripts/fetch-model). */
int kvb_model_default_path(char *buf, size_t cap);
/* The same lookup for any model file `file` of `size` bytes whose override variable is `env`
 * (scripts/fetch-model --model NAME --path agrees): kvb_model_default_path is
 * kvb_model_path_for(KVB_MODEL_FILE, "KVB_MODEL"); Gemma 3 (model_gemma3.h) uses
 * KVB_GEMMA3_FILE and "KVB_MODEL_GEMMA3". kvb_model_available_for as kvb_model_available. */
int kvb_model_path_for(const char *file, const char *env, char *buf, size_t cap);
int kvb_model_available_for(const char *file, const char *env, unsigned long long size,
                            const char *fetch_hint);
/* KVB_OK when the default path holds a file of the expected size, else KVB_ENOTFOUND with a
 * message saying how to fetch it (tests print SKIP on it). */
int kvb_model_available(void);

/* Loads the model and its tokenizer (path NULL = the default path). KVB_EFORMAT for a file
 * that is not a Llama GGUF with the tensors and shapes the config implies. */
int kvb_model_load(const char *path, kvb_model *m);
void kvb_model_free(kvb_model *m);

/* The model (path NULL = the default) and the tokens of a text for a run over its first n: all
 * of them (want <= 0) or exactly `want` (KVB_EINVAL when the text has fewer), at most the
 * model's context. Errors are prefixed by `who` and name the text. On success the caller frees
 * *ids and the model (kvb_model_free); on error nothing is left allocated. */
int kvb_model_load_tokens(const char *path, const char *buf, size_t len, const char *text,
                          long want, const char *who, kvb_model *m, int32_t **ids, size_t *n);

/* Called after RoPE in every layer with that layer's post-RoPE q [n_head][n][head_dim],
 * k and v [n_head_kv][n][head_dim] (positions 0..n-1); may be NULL. */
typedef void (*kvb_model_qkv_fn)(void *ctx, int layer, size_t n, const float *q, const float *k,
                                 const float *v);

/* Runs tokens[0..n) from position 0 and writes the final normed hidden states [n][d_model]
 * to hidden (which kvb_model_logits turns into logits). */
int kvb_model_prefill(const kvb_model *m, const int32_t *tokens, size_t n, float *hidden,
                      kvb_model_qkv_fn fn, void *ctx);
/* logits [rows][n_vocab] = hidden [rows][d_model] · Eᵀ. */
int kvb_model_logits(const kvb_model *m, const float *hidden, size_t rows, float *logits);
/* Perplexity of tokens[1..n) given their prefixes: exp(mean −log p(t_i | t_<i)), the
 * log-softmax in double. */
int kvb_model_perplexity(const kvb_model *m, const int32_t *tokens, size_t n, double *ppl);

#endif

/* model.h — the one transformer forward pass, parameterized by an architecture record (arch.h):
 * SmolLM2-135M (general.architecture "llama": 30 layers, d_model 576, 9 query heads sharing 3
 * key/value heads of 64, SwiGLU of width 1536, RoPE base 100000) and Gemma 3 270M ("gemma3": 18
 * layers, d_model 640, 4 query heads sharing one key/value head of 256, GeGLU of width 2048,
 * QK-norm, pre- and post-norms, a 512-token window on five of every six layers) are two records
 * read from their files, not two code paths. Weights are dequantized to float32 at load; the token
 * embedding too when its float copy is at most KVB_MODEL_EMBD_F32_MAX bytes (SmolLM2: 113 MB),
 * else it stays in its file encoding (Gemma's Q8_0: 178 MB instead of 671 MB of floats) and is
 * dequantized row by row for the input and in vocabulary chunks for the (tied) output. Prefill by
 * OpenBLAS sgemm, one BLAS thread per block of rows on kvb_threads_default() workers (model.c).
 * The block is arch.h's; llama.cpp's builds (src/models/llama.cpp, gemma3.cpp;
 * llama_model::load_hparams) are the sources of the facts, not of code:
 *   - llama: RoPE in the adjacent-pair layout of GGUF llama files, whose converter permutes Wq
 *     and Wk rows for it; attention with key/value head j / (n_head / n_head_kv), scale 1/√64.
 *   - gemma3: embedding ×sqrtf(640) (in float, as llama.cpp); QK-norm; NEOX RoPE with base 1e6
 *     on global layers (l % 6 == 5) and 10000 on local ones; scores scaled by 1/√256 (no
 *     query_pre_attn_scalar in the file); a local layer lets query p see key p′ only when
 *     p − p′ < 512 (LLAMA_SWA_TYPE_STANDARD); x += RMSNorm(a)·w_post_attention_norm and the same
 *     after the feed-forward; no final soft-capping (the file has no final_logit_softcapping).
 *     Gemma's own norm multiplies by (1 + w); the GGUF converter stores 1 + w (convert_hf_to_gguf.py
 *     shifts Gemma's norm weights) and llama.cpp applies the tensor as stored, so do we.
 * RMSNorm(x) = x/√(mean(x²) + ε), ε from the file (1e-5 SmolLM2, 1e-6 Gemma; QK-norm the same).
 * Attention: model_ops.h's kvb_mo_attention, the window passed on local layers, so a local layer
 * costs O(n·window) and only the global layers O(n²). */
#ifndef KVB_MODEL_H
#define KVB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "gguf.h"
#include "tokenizer.h"
#include "tokenizer_spm.h"

#define KVB_MODEL_FILE "SmolLM2-135M-Instruct.Q4_1.gguf"
#define KVB_MODEL_SIZE 98362432ull /* bytes; SHA-256 in scripts/fetch-model */

#define KVB_MODEL_EMBD_F32_MAX (256ull << 20) /* bytes of a float32 embedding kept at load */

typedef kvb_arch kvb_model_config;

typedef struct { /* the arch's tensors; NULL where the record has no use for one */
  float *attn_norm, *wq, *wk, *wv, *q_norm, *k_norm, *wo, *post_attn_norm, *ffn_norm, *w_gate,
      *w_up, *w_down, *post_ffn_norm;
} kvb_model_layer;

typedef struct {
  kvb_arch cfg;
  float *tok_embd;          /* [n_vocab][d_model] float32 (also the output), or NULL when */
  unsigned char *embd;      /* the embedding stays in its file encoding: */
  uint32_t embd_type;       /*   its ggml type */
  size_t embd_row_bytes;    /*   and bytes per row */
  float *out_norm;          /* [d_model] */
  kvb_model_layer *layers;
  float *weights;           /* one allocation holding every float tensor above */
  size_t n_weights;         /* floats in it */
  kvb_tokenizer *tok;       /* cfg.tokenizer KVB_TOK_BPE */
  kvb_spm *spm;             /* cfg.tokenizer KVB_TOK_SPM */
} kvb_model;

/* Deliberately broken variants, for the validation tests to show they can fail (test-only; the
 * faithful model is 0). */
enum {
  KVB_MODEL_NO_QK_NORM = 1u,      /* skip the per-head RMSNorm of q and k */
  KVB_MODEL_NO_WINDOW = 2u,       /* local layers attend to the whole prefix */
  KVB_MODEL_GLOBAL_LOCAL_BASE = 4u /* global layers rotate with the local base */
};

/* Where the model file is expected: $KVB_MODEL, else $KVB_MODEL_DIR/KVB_MODEL_FILE, else
 * ${XDG_CACHE_HOME:-$HOME/.cache}/kvbound/KVB_MODEL_FILE (as scripts/fetch-model). */
int kvb_model_default_path(char *buf, size_t cap);
/* The same lookup for any model file `file` of `size` bytes whose override variable is `env`
 * (scripts/fetch-model --model NAME --path agrees): kvb_model_default_path is
 * kvb_model_path_for(KVB_MODEL_FILE, "KVB_MODEL"); lm.h's table holds the other known models'
 * files and variables. kvb_model_available_for as kvb_model_available. */
int kvb_model_path_for(const char *file, const char *env, char *buf, size_t cap);
int kvb_model_available_for(const char *file, const char *env, unsigned long long size,
                            const char *fetch_hint);
/* KVB_OK when the default path holds a file of the expected size, else KVB_ENOTFOUND with a
 * message saying how to fetch it (tests print SKIP on it). */
int kvb_model_available(void);

/* Loads the model and its tokenizer (path NULL = SmolLM2's default path; lm.h's kvb_lm_model_load
 * finds the other known models' files). The architecture record comes from the file (arch.h);
 * KVB_EFORMAT for a file of an unknown architecture or without the tensors and shapes its record
 * implies. */
int kvb_model_load(const char *path, kvb_model *m);
void kvb_model_free(kvb_model *m);

/* The model's tokenizer (the record's choice). add_bos: put the BOS first when the record says
 * the model takes one (kvb_model_bos ≥ 0). */
int kvb_model_encode(const kvb_model *m, const char *text, size_t len, int add_bos, int32_t **ids,
                     size_t *n);
int kvb_model_decode(const kvb_model *m, const int32_t *ids, size_t n, char **text, size_t *len);
/* The id every sequence starts with, or −1 when the model takes none. */
int32_t kvb_model_bos(const kvb_model *m);

/* The model (path NULL = the default) and the tokens of a text for a run over its first n: all
 * of them (want <= 0) or exactly `want` (KVB_EINVAL when the text has fewer), at most the
 * model's context; the BOS first when the model takes one (counted in n). Errors are prefixed by
 * `who` and name the text. On success the caller frees *ids and the model (kvb_model_free); on
 * error nothing is left allocated. kvb_model_tokens does the same for a loaded model. */
int kvb_model_load_tokens(const char *path, const char *buf, size_t len, const char *text,
                          long want, const char *who, kvb_model *m, int32_t **ids, size_t *n);
int kvb_model_tokens(const kvb_model *m, const char *buf, size_t len, const char *text, long want,
                     const char *who, int32_t **ids, size_t *n);

/* Called after RoPE in every layer with that layer's post-RoPE q [n_head][n][head_dim] (not yet
 * scaled), k and v [n_head_kv][n][head_dim] (positions 0..n-1); may be NULL. */
typedef void (*kvb_model_qkv_fn)(void *ctx, int layer, size_t n, const float *q, const float *k,
                                 const float *v);

/* Runs tokens[0..n) from position 0 and writes the final normed hidden states [n][d_model]
 * to hidden (which kvb_model_logits turns into logits). The variant runs a broken model. */
int kvb_model_prefill(const kvb_model *m, const int32_t *tokens, size_t n, float *hidden,
                      kvb_model_qkv_fn fn, void *ctx);
int kvb_model_prefill_variant(const kvb_model *m, unsigned variant, const int32_t *tokens,
                              size_t n, float *hidden, kvb_model_qkv_fn fn, void *ctx);

/* The block in pieces, shared by the prefill and compressed decoding (decode_compressed.h), so
 * both run the same arithmetic. A workspace holds the scratch rows and both RoPE tables for n
 * rows at positions p0 .. p0 + n − 1. */
typedef struct {
  size_t p0, n;
  float *h, *q, *k, *v, *g, *u, *o, *tmp;
  double *cs_g, *cs_l;
} kvb_model_ws;
int kvb_model_ws_init(const kvb_model *m, size_t p0, size_t n, kvb_model_ws *w);
void kvb_model_ws_free(kvb_model_ws *w);
/* x [n][d_model] = E[token] (·sqrtf(d_model) when the record says so); KVB_EINVAL for a token
 * outside the vocabulary. */
int kvb_model_embed(const kvb_model *m, const int32_t *tokens, size_t n, float *x);
/* Layer l before attention for the workspace's n rows x: norm, projections, QK-norm, RoPE with
 * the layer's base at the workspace's positions; q [n_head][n][hd], k, v [n_head_kv][n][hd]. */
void kvb_model_layer_qkv(const kvb_model *m, int l, unsigned variant, const float *x,
                         kvb_model_ws *w, float *qh, float *kh, float *vh);
/* Layer l after attention (att [n][n_head·hd]): x += (post-normed) att·Woᵀ, then the gated
 * feed-forward and its residual. */
void kvb_model_layer_rest(const kvb_model *m, int l, const float *att, kvb_model_ws *w, float *x);
/* The sliding window layer l attends over (0: the whole prefix). */
size_t kvb_model_window(const kvb_model *m, int l, unsigned variant);

/* logits [rows][n_vocab] = hidden [rows][d_model] · Eᵀ. */
int kvb_model_logits(const kvb_model *m, const float *hidden, size_t rows, float *logits);
/* Perplexity of tokens[1..n) given their prefixes: exp(mean −log p(t_i | t_<i)), the
 * log-softmax in double; _variant as above; _hidden from a prefill's final hidden states
 * [n][d_model] (no second prefill). */
int kvb_model_perplexity(const kvb_model *m, const int32_t *tokens, size_t n, double *ppl);
int kvb_model_perplexity_variant(const kvb_model *m, unsigned variant, const int32_t *tokens,
                                 size_t n, double *ppl);
int kvb_model_perplexity_hidden(const kvb_model *m, const float *hidden, const int32_t *tokens,
                                size_t n, double *ppl);

#endif

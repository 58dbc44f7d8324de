/* arch.h — a transformer described by a record, not by a code path: everything the one forward
 * pass (model.h) needs to know about an architecture, filled from the GGUF metadata
 * (general.architecture and "<arch>.*" keys) with each architecture's defaults for what the file
 * does not say — the way llama.cpp's llama_hparams (filled in llama_model::load_hparams) or
 * llama2.c's Config describe a model. Adding an architecture is one row of the table in arch.c
 * (its defaults), a tokenizer choice and a golden file.
 *
 * The block the record parameterizes (model.h):
 *   x = E[token] · (√d_model when embd_scale_sqrt_d);
 *   per layer l: h = N(x)·w_attn_norm; q = h·Wqᵀ, k = h·Wkᵀ, v = h·Wvᵀ;
 *     QK-norm (qk_norm): each head's q and k RMSNorm'ed with ε qk_norm_eps and w_q_norm/w_k_norm;
 *     RoPE, layout rope_layout, angle pos·base^(−2i/head_dim), base rope_base on global layers and
 *       rope_base_local on local ones; a layer is GLOBAL when swa_period is 0 or
 *       l % swa_period == swa_period − 1, else LOCAL: query p sees key p′ only when p − p′ < window;
 *     scores q·k·attn_scale, causal softmax; a = concat(heads)·Woᵀ;
 *     x += post_norms ? N(a)·w_post_attention_norm : a;
 *     h = N(x)·w_ffn_norm; f = (act(h·Wgateᵀ) ⊙ h·Wupᵀ)·Wdownᵀ;  x += post_norms ? N(f)·w_post_ffw : f;
 *   hidden = N(x)·w_output_norm; logits = hidden·Eᵀ (tied output).
 * N(x) = x/√(mean(x²) + rms_eps): ε INSIDE the square root (model_ops.h's kvb_mo_rmsnorm), the
 * weights applied as stored (norm_weight_offset 0: the GGUF converter already wrote Gemma's 1 + w).
 *
 * Per-architecture defaults (the file's value wins where it has one; "—" = not read):
 *                      llama (SmolLM2)            gemma3 (Gemma 3 270M)
 *   head_dim           d_model / n_head           <arch>.attention.key_length (= value_length)
 *   rms_eps            1e-5                       1e-6   (<arch>.attention.layer_norm_rms_epsilon)
 *   qk_norm / ε        off                        on, ε = rms_eps (llama.cpp's build_norm with
 *                                                 f_norm_rms_eps for attn_q_norm / attn_k_norm)
 *   post_norms         off                        on (post_attention_norm, post_ffw_norm)
 *   window / period    0 / 0 (every layer global) <arch>.attention.sliding_window / 6
 *                                                 (llama.cpp's set_swa_pattern(6) for gemma3)
 *   rope_base          10000 (<arch>.rope.freq_base; SmolLM2's file: 100000)   1e6
 *   rope_base_local    = rope_base                10000 (llama.cpp's rope_freq_base_train_swa)
 *   rope_layout        adjacent pairs (2i, 2i+1)  NEOX (i, i + head_dim/2)
 *   act                SiLU (SwiGLU)              GELU-tanh (GeGLU)
 *   embd_scale_sqrt_d  no                         yes (sqrtf(d_model) in float, as llama.cpp)
 *   attn_scale         1/√head_dim                1/√head_dim (no query_pre_attn_scalar in file)
 *   softcaps           none (refused if present)  none (refused if present)
 *   bos                none                       <bos> first in every sequence
 *   tokenizer          byte-level BPE (tokenizer.h)   SentencePiece (tokenizer_spm.h) */
#ifndef KVB_ARCH_H
#define KVB_ARCH_H

#include "gguf.h"

typedef enum {
  KVB_ROPE_ADJACENT = 0, /* pairs (2i, 2i+1): GGUF llama files (the converter permutes Wq, Wk) */
  KVB_ROPE_NEOX = 1      /* pairs (i, i + head_dim/2) */
} kvb_rope_layout;

typedef enum { KVB_ACT_SILU = 0, KVB_ACT_GELU_TANH = 1 } kvb_act;

typedef enum { KVB_TOK_BPE = 0, KVB_TOK_SPM = 1 } kvb_tok_kind;

typedef struct {
  const char *arch; /* general.architecture: "llama", "gemma3" (static storage) */
  int n_layer, d_model, n_head, n_head_kv, head_dim, d_ff, n_vocab, n_ctx;
  double rms_eps;          /* every norm's ε, inside the square root */
  int norm_weight_offset;  /* 0: weights as stored (1: multiply by 1 + w; no GGUF needs it) */
  int qk_norm;             /* per-head RMSNorm of q and k before RoPE */
  double qk_norm_eps;
  int post_norms;          /* RMSNorm of the attention and feed-forward outputs before the residual */
  int window, swa_period;  /* local layers' sliding window; global when l % period == period − 1 */
  double rope_base, rope_base_local;
  kvb_rope_layout rope_layout;
  kvb_act act;
  int embd_scale_sqrt_d;   /* x = E[t]·sqrtf(d_model) */
  int tied_output;         /* logits by the token embedding (the only kind supported) */
  double attn_scale;
  double attn_softcap, final_softcap; /* 0: none (a file that asks for one is refused) */
  int add_bos;             /* every sequence starts with the tokenizer's BOS */
  kvb_tok_kind tokenizer;
} kvb_arch;

/* Fills *a from the file's metadata (path only names the file in messages; n_vocab is left 0 for
 * the loader, which reads it from token_embd.weight). KVB_EFORMAT naming the key for an unknown
 * architecture, a missing or out-of-range value, heads that do not group, an odd head dimension,
 * a RoPE base not finite and > 1, an ε not in (0, 1), or a soft-capping key. *a is unchanged on
 * error. */
int kvb_arch_from_gguf(const kvb_gguf *g, const char *path, kvb_arch *a);
/* Whether layer l attends over the whole prefix (global) or a sliding window (local). */
int kvb_arch_is_global(const kvb_arch *a, int layer);
/* Layers that are global. */
int kvb_arch_n_global(const kvb_arch *a);

#endif

/* lm.h — either real model (SmolLM2-135M, model.h; Gemma 3 270M, model_gemma3.h) behind one
 * handle, for the code that runs the same experiment on both: the long-context tasks (tasks.h,
 * task_run.h), the pass-key prompts and compressed decoding (decode_compressed.h), the props'
 * real-model checks and the CLI's --model. What differs between the two stays in their own
 * files; this only dispatches.
 *
 * The differences a caller must know:
 *   tokenizer  SmolLM2: byte-level BPE (tokenizer.h), no BOS (its runs start with the text);
 *              Gemma 3: SentencePiece (tokenizer_spm.h), <bos> first in every sequence (the
 *              model is trained so; kvb_lm_bos). Encoding here never adds the BOS: a caller
 *              that builds a sequence from pieces puts kvb_lm_bos() in front of the first
 *              piece when it is ≥ 0.
 *   compressed layers  SmolLM2: every layer's every KV head (30 × 3 caches); Gemma 3: the
 *              GLOBAL layers only (5, 11, 17; one KV head each), the local layers keep their
 *              512-token window exactly (kvb_dec_open_gemma3). kvb_lm_compressed /
 *              kvb_lm_n_compressed / kvb_lm_compressed_index say which and in what order
 *              (a layer-dependent method such as PyramidKV takes the index among them). */
#ifndef KVB_LM_H
#define KVB_LM_H

#include <stddef.h>
#include <stdint.h>

#include "decode_compressed.h"
#include "model.h"
#include "model_gemma3.h"

typedef enum { KVB_LM_SMOLLM2 = 0, KVB_LM_GEMMA3 = 1, KVB_LM_N_KINDS } kvb_lm_kind;

typedef struct {
  kvb_lm_kind kind;
  const kvb_model *smol;   /* kind SMOLLM2 */
  const kvb_gemma3 *gemma; /* kind GEMMA3 */
  void *owned;             /* the model kvb_lm_load allocated (freed by kvb_lm_free); NULL for a view */
  const char *key;         /* "smollm2" / "gemma3" (--model, spec fields, check ids) */
  const char *name;        /* "SmolLM2-135M" / "Gemma 3 270M" */
  int n_ctx, n_layer, n_head, n_head_kv, head_dim, n_vocab;
} kvb_lm;

/* "smollm2" / "gemma3" → kind; KVB_EINVAL naming the known keys otherwise. */
int kvb_lm_kind_lookup(const char *key, kvb_lm_kind *kind);
const char *kvb_lm_kind_key(kvb_lm_kind kind);
/* KVB_OK when the kind's default file is present (kvb_model_available / kvb_gemma3_available),
 * else their KVB_ENOTFOUND with the fetch hint. */
int kvb_lm_available(kvb_lm_kind kind);
/* Loads the kind's model (path NULL = its default path). On error *out is zeroed. */
int kvb_lm_load(kvb_lm_kind kind, const char *path, kvb_lm *out);
void kvb_lm_free(kvb_lm *lm);
/* A handle on a model the caller loaded and keeps (kvb_lm_free does nothing to it). */
kvb_lm kvb_lm_view_smollm2(const kvb_model *m);
kvb_lm kvb_lm_view_gemma3(const kvb_gemma3 *g);

/* The model's tokenizer, without BOS (see above); errors as tokenizer.h / tokenizer_spm.h. */
int kvb_lm_encode(const kvb_lm *lm, const char *text, size_t len, int32_t **ids, size_t *n);
int kvb_lm_decode(const kvb_lm *lm, const int32_t *ids, size_t n, char **text, size_t *len);
/* The id to put first in a sequence, or −1 when the model takes none. */
int32_t kvb_lm_bos(const kvb_lm *lm);

/* Whether compressed decoding hands layer l's caches to the method; how many layers it does;
 * l's index among them (0-based, −1 when l is not compressed). */
int kvb_lm_compressed(const kvb_lm *lm, int layer);
int kvb_lm_n_compressed(const kvb_lm *lm);
int kvb_lm_compressed_index(const kvb_lm *lm, int layer);

/* decode_compressed.h for the handle's model. */
int kvb_lm_prefix_build(const kvb_lm *lm, const int32_t *tokens, size_t n0, kvb_dec_prefix *out);
int kvb_lm_dec_open(const kvb_lm *lm, const kvb_dec_prefix *p, kvb_dec_make_fn make, void *ctx,
                    const kvb_dec_opts *opts, kvb_dec_session **out);
int kvb_lm_reference(const kvb_lm *lm, const int32_t *t, size_t n0, size_t n1, float **lp);

#endif

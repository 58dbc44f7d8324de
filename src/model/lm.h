/* lm.h — the known real models (a table: key, name, file; each read into the one model of model.h
 * by its architecture record, arch.h) behind one handle, for the code that runs the same
 * experiment on every model: the long-context tasks (tasks.h, task_run.h), the pass-key prompts
 * and compressed decoding (decode_compressed.h), the props' real-model checks and the CLI's
 * --model. Nothing here depends on which model it is beyond the table's row and the record.
 *
 * What a caller must know, all from the record:
 *   tokenizer  SmolLM2: byte-level BPE (tokenizer.h), no BOS (its runs start with the text);
 *              Gemma 3: SentencePiece (tokenizer_spm.h), <bos> first in every sequence (the
 *              model is trained so; kvb_lm_bos). Encoding here never adds the BOS: a caller
 *              that builds a sequence from pieces puts kvb_lm_bos() in front of the first
 *              piece when it is ≥ 0.
 *   compressed layers  the GLOBAL layers (arch.h: every layer of SmolLM2, 30 × 3 caches; layers
 *              5, 11, 17 of Gemma 3, one KV head each); a local layer keeps its sliding window
 *              exactly (decode_compressed.h). kvb_lm_compressed / kvb_lm_n_compressed /
 *              kvb_lm_compressed_index say which and in what order (a layer-dependent method
 *              such as PyramidKV takes the index among them).
 * Adding a model: a row of lm.c's table (and of the kind enum), its architecture's row in arch.c
 * if new, a tokenizer choice, and a golden file. */
#ifndef KVB_LM_H
#define KVB_LM_H

#include <stddef.h>
#include <stdint.h>

#include "decode_compressed.h"
#include "model.h"

typedef enum { KVB_LM_SMOLLM2 = 0, KVB_LM_GEMMA3 = 1, KVB_LM_N_KINDS } kvb_lm_kind;

typedef struct {
  kvb_lm_kind kind;
  const kvb_model *m;      /* the model (arch.h's record in m->cfg) */
  void *owned;             /* the model kvb_lm_load allocated (freed by kvb_lm_free); NULL for a view */
  const char *key;         /* the registry's key, "smollm2", … (--model, spec fields, check ids) */
  const char *name;        /* "SmolLM2-135M" / "Gemma 3 270M" */
  int n_ctx, n_layer, n_head, n_head_kv, head_dim, n_vocab;
} kvb_lm;

/* A registry key ("smollm2", …) → kind; KVB_EINVAL naming the known keys otherwise. */
int kvb_lm_kind_lookup(const char *key, kvb_lm_kind *kind);
/* The registry's keys in its order, joined by sep, into buf (cut at cap; "" when cap is 1):
 * for messages and help that list the models. Returns buf. */
const char *kvb_lm_known_keys(char *buf, size_t cap, const char *sep);
const char *kvb_lm_kind_key(kvb_lm_kind kind);
const char *kvb_lm_kind_name(kvb_lm_kind kind);
/* The shape of the kind's file (layers, query heads, key/value heads, head dimension), known
 * before it is loaded (the model stream checks a layer and head against it). */
int kvb_lm_kind_shape(kvb_lm_kind kind, int *n_layer, int *n_head, int *n_head_kv, int *head_dim);
/* The kind's trained context (the file's <arch>.context_length), and whether its layer is GLOBAL
 * (kvb_arch_is_global of its record), known before it is loaded; 0 for an unknown kind or layer. */
int kvb_lm_kind_n_ctx(kvb_lm_kind kind);
int kvb_lm_kind_global(kvb_lm_kind kind, int layer);
/* The kind's file: its default path (kvb_model_path_for with the row's file and variable) and
 * the fetch command to name when it is missing. */
int kvb_lm_default_path(kvb_lm_kind kind, char *buf, size_t cap);
const char *kvb_lm_fetch_hint(kvb_lm_kind kind);
/* KVB_OK when the kind's default file is present with its size, else KVB_ENOTFOUND with the
 * fetch hint. */
int kvb_lm_available(kvb_lm_kind kind);
/* Loads the kind's model into *m (path NULL = its default path; the caller frees it with
 * kvb_model_free). */
int kvb_lm_model_load(kvb_lm_kind kind, const char *path, kvb_model *m);
/* Loads the kind's model (path NULL = its default path). On error *out is zeroed. */
int kvb_lm_load(kvb_lm_kind kind, const char *path, kvb_lm *out);
void kvb_lm_free(kvb_lm *lm);
/* A handle on a model the caller loaded and keeps (kvb_lm_free does nothing to it); the kind is
 * the table's row of the model's architecture. _smollm2 is the same call. */
kvb_lm kvb_lm_view(const kvb_model *m);
kvb_lm kvb_lm_view_smollm2(const kvb_model *m);

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

/* per_model.h — a real-model check written once and run on every model of lm.h's registry.
 *
 * A file with such checks writes them once, for the registry's first model (the reference model,
 * SmolLM2-135M), and expands that table over the registry when the library loads: one copy of
 * the checks per model, in registry order (so adding a model to the registry adds its checks, no
 * props code). The entry points find their model from the claim id (prop_model_of).
 *
 * Claim ids: the first model keeps the ids its checks had before a second model came
 * ("real.cluster"); model k > 0 inserts its registry key after the id's first component
 * ("real.<key>.cluster"), so ids stay stable for props/tiers.tsv, check-costs.tsv, the paper-claim
 * mapping and the pre-registered verdicts.
 *
 * Wording: a check's source, statement, mutants and question are the reference model's; a model
 * whose numbers or design differ says so in a wording row (prop_model_wording), matched by the
 * check's reference id and the model's display name (kvb_lm_kind_name). A model without a row
 * gets the reference wording with "<name>: as <reference id>" as its statement. */
#ifndef KVB_PER_MODEL_H
#define KVB_PER_MODEL_H

#include "lm.h"
#include "prop.h"

typedef struct {
  const char *ref_id;     /* the reference model's check ("real.cluster") */
  const char *model;      /* kvb_lm_kind_name of the model the wording is for */
  const char *source, *statement;
  const char *mutants[8]; /* mutants[0] NULL: the reference check's */
  const char *question;   /* NULL: the reference check's */
} prop_model_wording;

/* The model of the running claim (ctx->id): the registry row whose key follows the id's first
 * component, else the first row. */
kvb_lm_kind prop_model_of(const prop_ctx *ctx);

/* ref's id for model kind into buf ("real.cluster" → "real.<key>.cluster"; unchanged for kind 0). */
void prop_model_id(const char *ref_id, kvb_lm_kind kind, char *buf, size_t cap);

/* Appends to out (at *n; capacity cap entries, the NULL terminator included) the n_ref checks of
 * ref for every model of the registry in order: model 0 gets ref's entries as written; model k > 0
 * every check whose id is not in ref_only (NULL-terminated, may be NULL), with the id of
 * prop_model_id and the wording row of `words` (NULL-ref_id-terminated) when there is one. The
 * strings made here live as long as the library. Returns 0, or -1 when out or the string store
 * is too small (the table is then cut at its last whole entry and terminated). */
int prop_models_expand(prop_claim *out, size_t *n, size_t cap, const prop_claim *ref, size_t n_ref,
                       const char *const *ref_only, const prop_model_wording *words);

/* A sign test over c caches rejects at α = 1e-6 only when 2^−c ≤ α, i.e. c ≥ 20: a model with
 * fewer caches than this (Gemma 3's global layers: 3) makes each seed of a cache its own item in
 * the real-cache and proxy checks. */
#define PROP_SIGN_TEST_MIN_ITEMS 20

#endif

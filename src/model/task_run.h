/* task_run.h — one long-context task (tasks.h) answered inside a real model (lm.h: SmolLM2-135M,
 * or Gemma 3 270M with the method on its global layers only) with a method standing in for
 * attention (decode_compressed.h), in either of the two forms of the README's "Long-context
 * tasks":
 *   question-agnostic  the context alone is the compressed prompt; the question and the answer
 *                      cue are fed after it through the compressed cache (kvpress / SCBench: a
 *                      cache is compressed once and reused for questions not yet known);
 *   question-aware     context + question are the compressed prompt; only the cue follows.
 * Two scores per pass, both against the same task:
 *   exact match        the greedy continuation of the cue (t->max_new tokens), scored by RULER's
 *                      string match (kvb_task_score: `right` when every expected string is in it);
 *   answer log-lik     Σ log p(answer token) of the task's canonical answer under teacher forcing
 *                      after the cue — a continuous score with far more power per task; its
 *                      difference from exact attention's on the same task (Δ log-lik ≤ 0 in the
 *                      typical case, 0 for exact attention itself) is the paired measure.
 * The prefill of the compressed prompt runs once per task (kvb_task_prepare) and is shared by
 * every method's pass. Both sessions of a pass (greedy, teacher-forced) open on that prefix.
 *
 * The library form of what `kvbound decode --task` runs (src/app/decode_cli.c) and what the
 * props suite (props/long_context.c) and the spec runner's task stage call. Statuses as
 * everywhere (kvb_error.h): invalid input leaves nothing allocated. */
#ifndef KVB_TASK_RUN_H
#define KVB_TASK_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "decode_compressed.h"
#include "method.h"
#include "lm.h"
#include "params.h"
#include "tasks.h"

/* The protocols (kvb_task_prepare's `aware`):
 *   KVB_TASK_AGNOSTIC, KVB_TASK_AWARE  kvbound's (above): the cue, and in the agnostic form the
 *                      question, run through the compressed cache;
 *   KVB_TASK_AUTHORS   the BalanceKV authors' needle protocol (github.com/ksheth96/BalanceKV,
 *                      run_needle_in_haystack.py, evaluate_and_log → src/llama_forward.py,
 *                      greedy_generate): the whole prompt — context, question AND the answer cue
 *                      — is prefilled exactly and then compressed (n_tail = 0); the first answer
 *                      token is the argmax of the exact prefill's last logits (greedy_generate's
 *                      first `logits[:, -1, :].argmax`), and its log-probability in the answer
 *                      log-lik is the exact one; the following tokens run through the compressed
 *                      cache. The method's sink/window/block are the caller's parameters (the
 *                      authors': 32, 32, 128; T = 2). */
enum { KVB_TASK_AGNOSTIC = 0, KVB_TASK_AWARE = 1, KVB_TASK_AUTHORS = 2 };

/* "kvbound" (question-aware) or "authors" → KVB_TASK_AWARE / KVB_TASK_AUTHORS; KVB_EINVAL naming
 * the two otherwise. */
int kvb_task_protocol_lookup(const char *name, int *aware);

/* A task split for one form, with the exact prefill of its compressed prompt. */
typedef struct {
  const kvb_task *task; /* borrowed */
  int aware;            /* KVB_TASK_AWARE, KVB_TASK_AGNOSTIC or KVB_TASK_AUTHORS */
  size_t n0;            /* compressed prompt tokens (context, + question when aware) */
  size_t n_tail;        /* tokens fed after it before the answer (question when agnostic, cue) */
  int32_t *tokens;      /* n0 + n_tail tokens: prompt then tail */
  kvb_dec_prefix pre;   /* the prompt's exact prefill */
  double prefill_wall, prefill_cpu; /* seconds (wall, this process's CPU) */
} kvb_task_prep;

int kvb_task_prepare(const kvb_lm *lm, const kvb_task *t, int aware, kvb_task_prep *out);
void kvb_task_prep_free(kvb_task_prep *p);

/* One method's pass over a prepared task. */
typedef struct {
  char *text;     /* the greedy continuation, decoded, newlines and tabs made spaces (malloc'd) */
  double score;   /* string-match fraction */
  int right;      /* every expected string found (RULER's exact match) */
  double loglik;  /* Σ log p(answer token), teacher-forced after the tail */
  double vectors; /* stored vectors per compressed (layer, kv head) cache after the compressed
                     prompt (mean; Gemma 3: its global layers' caches, kvb_dec_memory_prefill) */
  double bytes;   /* bytes per such cache as stored (method.h, quant_cache.h) after the prompt */
  /* balancekv_augmented's detector (aug_heads = 0 for every other method): the shared mask of
   * the model's layer with compressed index 1 over the prompt's middle [f, n0 − w) */
  int aug_heads;             /* kv heads (at most KVB_TASK_AUG_MAXH reported) */
  size_t aug_mid;            /* middle tokens per head */
  size_t aug_flagged[8];     /* flagged (protected) tokens per head */
  double aug_mu_min[8];      /* the detector's smallest statistic per head (fires iff <= 0) */
  int needle_heads;          /* heads whose protected set holds every needle token of the
                                middle (−1: no needle, or none of it in the middle) */
} kvb_task_pass;
#define KVB_TASK_AUG_MAXH 8

/* make NULL runs exact attention. opts as kvb_dec_open's (observe ≤ n0 or kvb_dec_open refuses). */
int kvb_task_pass_run(const kvb_lm *lm, const kvb_task_prep *p, kvb_dec_make_fn make, void *ctx,
                      const kvb_dec_opts *opts, kvb_task_pass *out);
void kvb_task_pass_free(kvb_task_pass *r);

/* A method type (the caller looks it up by name: registry.h) with parameters, for
 * kvb_task_pass_run's factory (kvb_task_method_make), which reads the type's in_model bits
 * (method.h), never its name: KVB_IN_MODEL_PER_LAYER (pyramidkv) gets layer = its layer's index
 * among the compressed layers and layers = their count unless given (kvb_lm_compressed_index /
 * kvb_lm_n_compressed: SmolLM2's layer and 30; Gemma 3's global layers 5, 11, 17 are 0, 1, 2 of
 * 3, since its pyramid of budgets spans the layers it compresses); KVB_IN_MODEL_ONCE_AT_PROMPT
 * (the query-aware selectors snapkv and pyramidkv, the one-shot compressors balancekv_block,
 * uniform_sample, recent_kcenter and balancekv_augmented) gets prompt = n0 unless given (compress
 * the prompt once, keep what is fed after it exactly: their "compress once" parameter);
 * KVB_IN_MODEL_SHARED_MASK (balancekv_augmented) gets the shared mask below. `mutant` non-NULL
 * sets the method's mutant (method.h). */
typedef struct {
  const kvb_method_type *type;
  kvb_params params;
  const kvb_lm *lm; /* borrowed: which layers are compressed */
  size_t prompt;
  const char *mutant;
  /* balancekv_augmented's layer-1 mask, shared by every compressed layer >= 1 (the authors'
   * manual_forward_llama_needle_detection passes layer 1's needle_mask to every later layer):
   * kvb_task_pass_run computes it from the prompt's prefill for the pass and frees it after;
   * the factory refuses the method without it. */
  const kvb_dec_prefix *pre;
  unsigned char *aug_mask; /* [kv head][middle token] */
  size_t aug_mid;
  int aug_heads, aug_any;
} kvb_task_method;

/* balancekv_augmented's shared layer-1 mask for one pass over p (kvb_task_pass_run calls these
 * around every pass; exposed for the tests): _begin computes tm's mask from p's prefill (a no-op
 * for any other method) and fills r's detector fields; _end frees it. */
int kvb_task_aug_begin(kvb_task_method *tm, const kvb_lm *lm, const kvb_task_prep *p,
                       kvb_task_pass *r);
void kvb_task_aug_end(kvb_task_method *tm);

void kvb_task_method_init(kvb_task_method *tm, const kvb_method_type *type,
                          const kvb_params *params, const kvb_lm *lm, size_t n0);
int kvb_task_method_make(void *tm, int layer, int kv_head, const kvb_method_config *cfg,
                         kvb_method **out);
/* The prefill queries the method needs (kvb_dec_observe_default with its window, default 32),
 * at most n0. */
size_t kvb_task_method_observe(const kvb_task_method *tm, size_t n0);

/* One task, both passes: exact attention, then the method (tm NULL, or "exact" with no
 * parameters and no mutant: the exact pass is reused, Δ = 0 by construction). The method's
 * pass gets prompt = p->n0 (tm->prompt is restored) and observe = kvb_task_method_observe. */
typedef struct {
  kvb_task_pass exact, method;
  double delta; /* method.loglik − exact.loglik */
} kvb_task_result;

int kvb_task_run(const kvb_lm *lm, const kvb_task_prep *p, kvb_task_method *tm, uint64_t seed,
                 kvb_task_result *out);
void kvb_task_result_free(kvb_task_result *r);

#endif

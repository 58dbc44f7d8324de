/* tasks.h — seeded long-context tasks over a real model's tokenizer (lm.h: SmolLM2-135M or
 * Gemma 3 270M), in the style of RULER (Hsieh et
 * al., "RULER: What's the Real Context Size of Your Long-Context Language Models?", arXiv
 * 2404.06654): synthetic retrieval, tracing and aggregation tasks whose length, needle depth and
 * content are set by the caller, so a method's accuracy can be read against the context length.
 * The families (wording and layout are kvbound's own):
 *   niah_single      one sentence "The secret number of WORD is NNNNNNN." (a 7-digit number) in a
 *                    haystack; asked for WORD's number.
 *   niah_multikey    the same, with three more such sentences for other words (distractors).
 *   niah_multivalue  four sentences give WORD four different numbers; all four must be returned.
 *   niah_multiquery  four words, one number each; the four are asked at once.
 *   vt               variable tracking: "Set ABCDE to 12345." then "Set FGHIJ to ABCDE." … (one
 *                    chain of five names, and a distractor chain with another value); asked for
 *                    every name that ends up holding the value.
 *   cwe              common-words extraction: a numbered list of words where ten words recur many
 *                    times and the rest a few times; asked for the ten recurring ones.
 *   fwe              frequent-words extraction: made-up words with Zipf-like frequencies
 *                    (count ∝ rank^-2); asked for the three most frequent.
 * The needle families and vt hide their sentences in a haystack (haystack.h): one license text
 * picked by the seed, whole sentences from a seeded starting sentence, wrapping to the text's
 * start when it ends (no text is as long as the model's context), cut to the length. The target
 * sentence (the first of the target's, for multivalue/multiquery/vt) goes at the sentence
 * boundary nearest to depth · (haystack tokens), the earlier of two equally near (a fixed rule,
 * pinned by tests/test_tasks.c); further target sentences follow it in order at
 * seeded positions after it, distractors at seeded positions anywhere. cwe and fwe have no
 * haystack and ignore depth.
 *
 * A task is a prompt of three parts, tokenized separately and concatenated:
 *   context   the model's BOS when it takes one (Gemma 3), an instruction, then the haystack
 *             with the needles (or the word list);
 *   question  "\n\nQuestion: …" — in the question-aware form it is part of the compressed
 *             prompt; in the question-agnostic form (kvpress / SCBench: the cache is compressed
 *             before the question is known) it is fed after the compression;
 *   cue       "\nAnswer: The secret number of WORD is" — the start of the answer, always fed
 *             after the compression, so the model answers by continuing it (as the pass-key
 *             prompts of decode_compressed.h do; no chat template there either).
 * The expected answer is a list of strings (numbers, names or words); RULER's string match
 * scores a generated text by the fraction of them it contains. answer / answer_ids: the
 * canonical continuation of the cue (" 1234567." or " a, b, c."), for teacher-forced scoring.
 *
 * Length. `length` is the whole sequence the task needs: context + question + cue + max_new
 * (the generation budget), so length ≤ the model's context always fits. The haystack (word
 * list) is filled to at most length and at least length − KVB_TASK_TOLERANCE tokens. */
#ifndef KVB_TASKS_H
#define KVB_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "lm.h"

typedef enum {
  KVB_TASK_NIAH_SINGLE,
  KVB_TASK_NIAH_MULTIKEY,
  KVB_TASK_NIAH_MULTIVALUE,
  KVB_TASK_NIAH_MULTIQUERY,
  KVB_TASK_VT,
  KVB_TASK_CWE,
  KVB_TASK_FWE,
  KVB_TASK_N_FAMILIES
} kvb_task_family;

#define KVB_TASK_MIN_LENGTH 1024 /* tokens */
#define KVB_TASK_TOLERANCE 256   /* tokens a task may fall short of its length: one haystack
                                  * sentence (the longest of the texts has 206) */
#define KVB_TASK_MAX_EXPECTED 10

const char *kvb_task_family_name(kvb_task_family f);
/* KVB_EINVAL with the list of family names when name is none of them. */
int kvb_task_family_lookup(const char *name, kvb_task_family *f);

typedef struct {
  kvb_task_family family;
  size_t length;
  double depth;
  uint64_t seed;
  int32_t *context, *question, *cue, *answer_ids;
  size_t n_context, n_question, n_cue, n_answer;
  size_t max_new;         /* greedy tokens to generate (fixed per family) */
  char *answer;           /* the canonical continuation of the cue */
  size_t n_expected;      /* strings the generated text must contain */
  char expected[KVB_TASK_MAX_EXPECTED][32];
  const char *text;       /* the haystack text's name ("GPL-2", ...); "" for cwe / fwe */
  size_t needle_at;       /* token offset in context of the (first) target sentence; (size_t)-1
                             for cwe / fwe */
  size_t needle_end;      /* one past its last token (needle_at when there is none) */
  size_t haystack_begin, haystack_end; /* the haystack's token range in context */
} kvb_task;

/* Builds the task (family, length, depth, seed) with lm's tokenizer, for lm's context (lm->n_ctx,
 * the GGUF file's context_length). When the model takes a BOS (kvb_lm_bos ≥ 0: Gemma 3) the
 * context starts with it, and it counts in the length and in needle_at / haystack_begin /
 * haystack_end; SmolLM2's tasks have none (the same tokens as before lm.h). KVB_EINVAL with a
 * message for depth outside [0, 1], a length below KVB_TASK_MIN_LENGTH or above the context, or a
 * family out of range; a haystack text's errors (haystack.h) pass through. Same arguments → the
 * same tokens. Free with kvb_task_free. */
int kvb_task_make(const kvb_lm *lm, kvb_task_family family, size_t length, double depth,
                  uint64_t seed, kvb_task *out);
void kvb_task_free(kvb_task *t);

/* RULER's string match: the fraction of the expected strings found in text, case-insensitive;
 * a match must be a whole word or number (no letter or digit right before or after it: RULER
 * matches substrings, which would count "form" in "information" or 1234567 in 12345678);
 * *all set to whether every one was found (may be NULL). */
double kvb_task_score(const kvb_task *t, const char *text, int *all);

#endif

/* passkey.h — the pass-key retrieval task for either real model (lm.h). */
#ifndef KVB_PASSKEY_H
#define KVB_PASSKEY_H

#include <stddef.h>
#include <stdint.h>

#include "lm.h"

/* The pass-key retrieval task (in the spirit of LongEval's line retrieval, 000 Table 1, and
 * needle-in-a-haystack, 003 Fig. 4).
 * The prompt: an instruction, `reps` repetitions of a filler paragraph with the needle
 * "The pass key is K. Remember it. K is the pass key." inserted after round(depth · reps) of
 * them, the question, and the cue " The pass key is" — the cue's tokens are the tail
 * (kvb_dec_greedy feeds them through the compressed cache, so every answer token depends on
 * it; the prompt before the cue, question included, is the n0 prefix that is compressed).
 * *ids (malloc'd) holds prefix and tail, *n0 the prefix length, *n_tail the cue's. key is a
 * 5-digit number (10000..99999); depth in [0, 1]. A model that takes a BOS (kvb_lm_bos) gets it
 * first, inside the prefix. */
int kvb_dec_passkey_prompt(const kvb_lm *lm, unsigned key, double depth, unsigned reps,
                           int32_t **ids, size_t *n0, size_t *n_tail);
/* Whether the first five digits in the decoded text of gen[0..n) are the key's (its answer). */
int kvb_dec_passkey_correct(const kvb_lm *lm, const int32_t *gen, size_t n, unsigned key);

#endif

/* decode_gemma3_cli.h — `kvbound decode --model gemma3`'s text mode (decode_cli.c parses the
 * options; this file runs Gemma 3 270M through decode_compressed.h's kvb_dec_open_gemma3). */
#ifndef KVB_CLI_DECODE_GEMMA3_CLI_H
#define KVB_CLI_DECODE_GEMMA3_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "decode_compressed.h"
#include "model_gemma3.h"

/* With Gemma 3 loaded by the caller (decode_cli.c, through lm.h), reads the text and scores
 * tokens [start + n0 + 1, start + n0 + n1] teacher-forced with the method on the global layers
 * (BOS first, then the text's tokens from start: the prompt is BOS + n0 − 1 text tokens).
 * observe (size_t)−1 = n0. Prints what run_text prints for SmolLM2, the memory counted over the
 * global layers' caches. Returns the exit status (0, 1 run error, 2 usage error). */
int kvb_decode_text_gemma3(const kvb_gemma3 *g, kvb_dec_make_fn make, void *mc, const char *method,
                           const char *text, size_t start, size_t n0, size_t n1, size_t observe,
                           uint64_t seed);

#endif

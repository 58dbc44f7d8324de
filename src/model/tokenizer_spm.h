/* tokenizer_spm.h — the SentencePiece-style tokenizer of GGUF files whose tokenizer.ggml.model
 * is "llama" (Gemma 3's 262144 tokens with scores), as llama.cpp applies it (facts read from
 * llama.cpp's src/llama-vocab.cpp, llm_tokenizer_spm and tokenizer_st_partition; no code
 * copied):
 *   1. special pieces first: every token of type control (3: <bos>, <start_of_turn>,
 *      <unusedN>, ...), user-defined (4: runs of \n or \t, [multimodal], ...) or unknown
 *      (2: <unk>) is cut out of the raw text, the longest tokens first, each at all its
 *      non-overlapping occurrences left to right in what is still raw;
 *   2. in each remaining raw piece every space ' ' becomes "▁" (U+2581); no space is added in
 *      front (tokenizer.ggml.add_space_prefix is false for Gemma 3: the loader refuses true);
 *   3. the piece is split into UTF-8 characters (each character's length read from its first
 *      byte alone, as llama.cpp does, cut at the piece's end);
 *      then, repeatedly, the adjacent pair whose concatenation is a vocabulary token with the
 *      highest score is merged (the leftmost pair on equal scores), until no adjacent pair
 *      forms a token;
 *   4. each final symbol is its token; a symbol that is not a token (a character outside the
 *      vocabulary) becomes the byte tokens <0xXX> of its UTF-8 bytes ("byte fallback");
 *   5. with add_bos, tokenizer.ggml.bos_token_id (<bos> = 2) comes first.
 * Validated token for token against llama.cpp's own tokenizer (tests/golden/gemma3_tokens.txt,
 * written by scripts/model-golden --gemma3). */
#ifndef KVB_TOKENIZER_SPM_H
#define KVB_TOKENIZER_SPM_H

#include <stddef.h>
#include <stdint.h>

#include "gguf.h"

typedef struct kvb_spm kvb_spm;

/* Builds the tokenizer from a parsed GGUF file (copies what it needs). KVB_EFORMAT when the
 * model is not "llama", the tokens, scores or types are missing or of different lengths, a
 * byte token <0xXX> is missing, or add_space_prefix is true. */
int kvb_spm_load(const kvb_gguf *g, kvb_spm **out);
void kvb_spm_free(kvb_spm *t);
size_t kvb_spm_vocab_size(const kvb_spm *t);
int32_t kvb_spm_bos(const kvb_spm *t);

/* Encodes len bytes of text into *ids (malloc'd, *n of them; BOS first when add_bos). */
int kvb_spm_encode(const kvb_spm *t, const char *text, size_t len, int add_bos, int32_t **ids,
                   size_t *n);
/* Decodes ids to text: "▁" becomes a space, <0xXX> the byte, control tokens nothing;
 * KVB_EINVAL for an id outside the vocabulary. *text malloc'd and NUL-terminated. */
int kvb_spm_decode(const kvb_spm *t, const int32_t *ids, size_t n, char **text, size_t *len);

#endif

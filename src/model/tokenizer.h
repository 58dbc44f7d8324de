/* tokenizer.h — the GPT-2 byte-level BPE tokenizer, built from the vocabulary and merges a
 * GGUF file stores (tokenizer.ggml.tokens / .merges / .token_type), with SmolLM2's
 * pre-tokenizer ("smollm"):
 *   1. control tokens (token_type 3: <|im_start|>, <|endoftext|>, ...) are matched in the raw
 *      text first (longest match) and emitted as their ids;
 *   2. the rest is split so every Unicode number (\p{N}) is a piece of its own (the
 *      "individual digits" pre-tokenizer);
 *   3. each piece is split by GPT-2's pattern
 *        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *      (leftmost alternative first; the lookahead sees the end of the piece as the end);
 *   4. each match's bytes are mapped to GPT-2's printable byte alphabet and merged by BPE: the
 *      adjacent pair with the lowest merge rank (leftmost on ties) is merged until none is in
 *      the merge list; a byte the vocabulary has no token for is dropped (as HF's BPE without
 *      an unknown token does).
 * Validated token for token against Hugging Face `tokenizers` (tests/golden/tokens.txt). */
#ifndef KVB_TOKENIZER_H
#define KVB_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "gguf.h"

typedef struct kvb_tokenizer kvb_tokenizer;

/* Builds the tokenizer from a parsed GGUF file (copies what it needs; g may be freed after).
 * KVB_EFORMAT when the vocabulary or merges are missing or inconsistent (a merge naming a token
 * that is not in the vocabulary). */
int kvb_tok_load(const kvb_gguf *g, kvb_tokenizer **out);
void kvb_tok_free(kvb_tokenizer *t);
size_t kvb_tok_vocab_size(const kvb_tokenizer *t);

/* Encodes len bytes of UTF-8 text (invalid UTF-8 bytes are kept as single bytes) into *ids
 * (malloc'd, *n of them). */
int kvb_tok_encode(const kvb_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n);
/* Decodes ids to bytes (*text malloc'd and NUL-terminated, *len bytes); KVB_EINVAL for an id
 * outside the vocabulary. */
int kvb_tok_decode(const kvb_tokenizer *t, const int32_t *ids, size_t n, char **text, size_t *len);

#endif

/* haystack.h — the filler texts of the long-context tasks (tasks.h): seven license texts Debian's
 * base-files package (Essential: on every Debian system; Debian 12: base-files 12.4) ships under
 * /usr/share/common-licenses, each checked against its SHA-256 before use so every machine reads
 * the same bytes (as real_text.h does for GPL-3). $KVB_COMMON_LICENSES replaces the directory
 * (tests use it to show that a changed file is refused).
 *
 * A text is split into sentences (a sentence ends after '.', '?', '!' or ':' followed by white
 * space, or at a blank line; the white space before a sentence belongs to it) and each sentence
 * is tokenized on its own, with the model's tokenizer (lm.h: SmolLM2's BPE or Gemma 3's
 * SentencePiece, no BOS), so a haystack of whole sentences has an exact token count and a needle
 * can go between any two sentences. Nothing is cached: every load tokenizes for the model given. */
#ifndef KVB_HAYSTACK_H
#define KVB_HAYSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "lm.h"

typedef struct {
  const char *name;    /* file name under the directory: "GPL-2", ... */
  const char *package; /* the Debian package shipping it */
  const char *sha256;  /* of the file's bytes (Debian 12's base-files) */
} kvb_haystack_text;

/* The texts, in a fixed order (the task seed picks one by index). */
extern const kvb_haystack_text kvb_haystack_texts[];
extern const size_t kvb_haystack_n_texts;

/* One text, sentence by sentence: tokens of sentence i are ids[off[i] .. off[i+1]). */
typedef struct {
  const kvb_haystack_text *text;
  size_t n_sent;
  size_t *off; /* n_sent + 1 entries */
  int32_t *ids;
  char *bytes; /* the file (NUL-terminated), for word lists */
  size_t len;
} kvb_haystack;

/* Reads text i (0 ≤ i < kvb_haystack_n_texts), checks its SHA-256 (KVB_EFORMAT naming the file
 * and both hashes on a mismatch; KVB_ENOTFOUND naming the package when it is missing) and
 * tokenizes it sentence by sentence with lm's tokenizer. Nothing is left allocated on error. */
int kvb_haystack_load(const kvb_lm *lm, size_t i, kvb_haystack *out);
void kvb_haystack_free(kvb_haystack *h);

/* Reads text i's bytes after the same check (*buf malloc'd, NUL-terminated). */
int kvb_haystack_read(size_t i, char **buf, size_t *len);

#endif

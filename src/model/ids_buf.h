/* ids_buf.h — a growable array of token ids, the output both tokenizers (tokenizer.c: byte-level
 * BPE; tokenizer_spm.c: SentencePiece) encode into. */
#ifndef KVB_IDS_BUF_H
#define KVB_IDS_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  int32_t *v;
  size_t n, cap;
} kvb_ids_buf;

/* Appends id (doubling the capacity from 256); KVB_ENOMEM with the buffer unchanged. */
int kvb_ids_push(kvb_ids_buf *b, int32_t id);

#endif

/* ids_buf.c — a growable array of token ids (ids_buf.h). */
#include "ids_buf.h"

#include <stdlib.h>

#include "kvb_error.h"

int kvb_ids_push(kvb_ids_buf *b, int32_t id) {
  if (b->n == b->cap) {
    size_t c = b->cap ? 2 * b->cap : 256;
    int32_t *v = realloc(b->v, c * sizeof *v);
    if (!v) return KVB_ERROR(KVB_ENOMEM, "out of memory encoding text");
    b->v = v;
    b->cap = c;
  }
  b->v[b->n++] = id;
  return KVB_OK;
}

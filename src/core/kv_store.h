/* kv_store.h — the raw key/value store a method keeps when its paper's algorithm needs the
 * whole stream (exact attention) or when this reference recompresses from scratch and is checked
 * against an offline recomputation (the block-parallel methods, recent window + k-center). Not
 * counted as the algorithm's memory (method.h). Rows are appended in stream order, row-major:
 * K is n × d_key, V is n × d_value. */
#ifndef KVB_KV_STORE_H
#define KVB_KV_STORE_H

#include <stddef.h>

typedef struct {
  size_t n, cap;          /* rows stored, rows allocated */
  size_t d_key, d_value;
  double *K, *V;
} kvb_kv_store;

/* An empty store for rows of the given dimensions (allocates nothing). */
void kvb_kv_init(kvb_kv_store *s, size_t d_key, size_t d_value);
/* Appends (k, v). Grows by doubling before anything changes, so on failure (KVB_ENOMEM, with a
 * message naming `who`) the store is exactly as it was. */
int kvb_kv_append(kvb_kv_store *s, const double *k, const double *v, const char *who);
/* Frees the rows; the store is empty again. */
void kvb_kv_free(kvb_kv_store *s);

/* kvb_kv_append and kvb_kv_free for a store this reference keeps only to recompress from scratch
 * and be checked against an offline recomputation (the raw stream of the block-parallel methods,
 * recent window + k-center, SnapKV's selection): not the algorithm's memory (method.h). Its
 * allocated bytes are also counted process-wide in kvb_kv_reference_bytes, so that the battery,
 * which measures what a method holds from the heap (heap_meter.h), can set them apart — for
 * built-in methods only: a plugin's or Python method's store is counted as its memory whatever
 * functions it calls. A store must go through these two only (never the plain ones). */
int kvb_kv_append_reference(kvb_kv_store *s, const double *k, const double *v, const char *who);
void kvb_kv_free_reference(kvb_kv_store *s);
/* The bytes allocated now by every live store grown by kvb_kv_append_reference (all threads). */
size_t kvb_kv_reference_bytes(void);

#endif

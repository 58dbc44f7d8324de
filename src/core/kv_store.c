/* kv_store.c — see kv_store.h. */
#include "kv_store.h"

#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"

#include <stdatomic.h>

static _Atomic size_t reference_bytes;

static size_t store_bytes(const kvb_kv_store *s) {
  return s->cap * (s->d_key + s->d_value) * sizeof(double);
}

void kvb_kv_init(kvb_kv_store *s, size_t d_key, size_t d_value) {
  memset(s, 0, sizeof *s);
  s->d_key = d_key;
  s->d_value = d_value;
}

int kvb_kv_append(kvb_kv_store *s, const double *k, const double *v, const char *who) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    if (cap < s->cap || cap > (size_t)-1 / sizeof(double) / (s->d_key + s->d_value))
      return KVB_ERROR(KVB_ENOMEM, "%s: the stream store cannot grow past %zu tokens", who, s->cap);
    /* Both reallocations succeed before the store points at either, so a failure leaves it whole:
     * a grown K with the old V is harmless (cap is not raised until both succeed). */
    double *K = realloc(s->K, cap * s->d_key * sizeof *K);
    if (!K) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory growing to %zu tokens", who, cap);
    s->K = K;
    double *V = realloc(s->V, cap * s->d_value * sizeof *V);
    if (!V) return KVB_ERROR(KVB_ENOMEM, "%s: out of memory growing to %zu tokens", who, cap);
    s->V = V;
    s->cap = cap;
  }
  memcpy(s->K + s->n * s->d_key, k, s->d_key * sizeof *k);
  memcpy(s->V + s->n * s->d_value, v, s->d_value * sizeof *v);
  s->n++;
  return KVB_OK;
}

void kvb_kv_free(kvb_kv_store *s) {
  free(s->K);
  free(s->V);
  s->K = s->V = NULL;
  s->n = s->cap = 0;
}

int kvb_kv_append_reference(kvb_kv_store *s, const double *k, const double *v, const char *who) {
  size_t before = store_bytes(s);
  int rc = kvb_kv_append(s, k, v, who);
  size_t after = store_bytes(s);
  if (after > before) atomic_fetch_add(&reference_bytes, after - before);
  return rc;
}

void kvb_kv_free_reference(kvb_kv_store *s) {
  atomic_fetch_sub(&reference_bytes, store_bytes(s));
  kvb_kv_free(s);
}

size_t kvb_kv_reference_bytes(void) { return atomic_load(&reference_bytes); }

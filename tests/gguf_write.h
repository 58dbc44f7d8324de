/* gguf_write.h — a GGUF image built in memory by the tests (test_model_gguf, test_model_arch):
 * little-endian scalars, strings and typed key/value pairs, as the GGUF format lays them out. */
#ifndef KVB_TEST_GGUF_WRITE_H
#define KVB_TEST_GGUF_WRITE_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned char *b;
  size_t n, cap;
} wbuf;
static void put(wbuf *w, const void *p, size_t n) {
  if (w->n + n > w->cap) {
    w->cap = (w->n + n) * 2 + 64;
    w->b = realloc(w->b, w->cap);
  }
  memcpy(w->b + w->n, p, n);
  w->n += n;
}
static void u32(wbuf *w, uint32_t v) { unsigned char b[4]; for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> 8 * i); put(w, b, 4); }
static void u64(wbuf *w, uint64_t v) { unsigned char b[8]; for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> 8 * i); put(w, b, 8); }
static void str(wbuf *w, const char *s) { u64(w, strlen(s)); put(w, s, strlen(s)); }
static void f32(wbuf *w, float f) { uint32_t v; memcpy(&v, &f, 4); u32(w, v); }

#endif

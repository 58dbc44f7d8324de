/* fuzz_gguf.c — libFuzzer harness for the GGUF reader (a malformed file gets a clear error,
 * never a crash). Built only by `make fuzz-gguf` (clang -fsanitize=fuzzer,address); seed corpus
 * in tests/fuzz_corpus/gguf/. Every input must either parse into a table whose tensors lie
 * inside the input (each is dequantized when its type allows, touching every byte under ASan)
 * or be rejected with a message and nothing left allocated. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "kvb_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kvb_gguf g;
  int st = kvb_gguf_parse(data, size, &g);
  if (st == KVB_OK) {
    for (uint64_t i = 0; i < g.n_tensors; i++) {
      const kvb_gguf_tensor *t = &g.tensors[i];
      if (t->data < data || t->data + t->n_bytes > data + size) abort();
      if (t->n_elements > 1 << 16) continue;
      float *out = malloc((size_t)t->n_elements * sizeof(float));
      if (!out) abort();
      (void)kvb_gguf_dequant(t->type, t->data, t->n_elements, out);
      free(out);
    }
    for (uint64_t i = 0; i < g.n_kv; i++) {
      const kvb_gguf_kv *kv = &g.kv[i];
      volatile size_t s = strlen(kv->key);
      if (kv->arr_str)
        for (uint64_t j = 0; j < kv->arr_n; j++) s += strlen(kv->arr_str[j]);
      (void)s;
    }
    kvb_gguf_free(&g);
  } else if (kvb_strerror_last()[0] == '\0' || g.kv != NULL || g.tensors != NULL) {
    abort();
  }
  return 0;
}

/* fuzz_npy.c — libFuzzer harness for the .npy parser (a malformed file gets a
 * clear error, never a crash). Built only by `make fuzz` (clang -fsanitize=fuzzer,address);
 * seed corpus in tests/fuzz_corpus/npy/. Every input must either parse into an array whose
 * element count matches its shape or be rejected with a message. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kvb_npy_array a;
  int st = kvb_npy_parse(data, size, &a);
  if (st == KVB_OK) {
    size_t c = 1;
    for (size_t i = 0; i < a.ndim; i++) c *= a.shape[i];
    if (c != a.count || a.ndim < 1 || a.ndim > KVB_NPY_MAX_DIMS) abort();
    volatile double s = 0;
    for (size_t i = 0; i < a.count; i++) s += a.data[i]; /* touch every element under ASan */
    kvb_npy_free(&a);
  } else if (kvb_strerror_last()[0] == '\0' || a.data != NULL) {
    abort(); /* an error must carry a message and leave nothing allocated */
  }
  return 0;
}

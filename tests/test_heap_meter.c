/* test_heap_meter.c — the allocator's count the battery measures a method's memory by
 * (src/core/heap_meter.h) and the set-apart count of the built-ins' reference stores
 * (kv_store.h, kvb_kv_append_reference): a block held is seen at its size, a freed one is not, and
 * only reference stores enter the set-apart count. */
#include "heap_meter.h"
#include "kv_store.h"
#include "kvbound.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

/* through a volatile pointer, so the compiler cannot drop the allocation it never reads */
static char *volatile held;

int main(void) {
  size_t a = 0, b = 0, c = 0;
  int ok = kvb_heap_in_use(&a) == KVB_OK;
  if (!ok) /* a build without the count (AddressSanitizer, not glibc): said, not failed */
    printf("SKIP heap_meter.counts: %s\n", kvb_strerror_last());
  /* 40 KiB (below glibc's mmap threshold) and 4 MiB (served by mmap): both counted */
  size_t sizes[2] = {40 << 10, 4 << 20};
  for (int t = 0; ok && t < 2; t++) {
    kvb_heap_in_use(&a);
    held = malloc(sizes[t]);
    memset(held, 1, sizes[t]);
    kvb_heap_in_use(&b);
    free(held);
    kvb_heap_in_use(&c);
    CHECK(b >= a + sizes[t] && b <= a + sizes[t] + 4096, t ? "heap_meter.sees_a_mapped_block"
                                                           : "heap_meter.sees_a_heap_block",
          "in use %zu before, %zu while holding %zu bytes", a, b, sizes[t]);
    CHECK(c + sizes[t] <= b, t ? "heap_meter.mapped_block_freed_not_counted"
                               : "heap_meter.heap_block_freed_not_counted",
          "in use %zu while holding, %zu after free", b, c);
  }
  CHECK(kvb_heap_in_use(NULL) == KVB_ENULL, "heap_meter.null_refused", "status");

  /* the set-apart count: a reference store's allocated rows, and nothing of an ordinary store */
  size_t r0 = kvb_kv_reference_bytes();
  kvb_kv_store ref, own;
  kvb_kv_init(&ref, 4, 2);
  kvb_kv_init(&own, 4, 2);
  double k[4] = {1, 2, 3, 4}, v[2] = {5, 6};
  for (int i = 0; i < 100; i++)
    kvb_kv_append_reference(&ref, k, v, "ref"), kvb_kv_append(&own, k, v, "own");
  size_t r1 = kvb_kv_reference_bytes();
  CHECK(r1 - r0 == ref.cap * 6 * sizeof(double), "kv_store.reference_bytes_counted",
        "%zu counted for a capacity of %zu rows of 6 doubles", r1 - r0, ref.cap);
  kvb_kv_free(&own);
  CHECK(kvb_kv_reference_bytes() == r1, "kv_store.ordinary_store_not_counted", "%zu vs %zu",
        kvb_kv_reference_bytes(), r1);
  kvb_kv_free_reference(&ref);
  CHECK(kvb_kv_reference_bytes() == r0, "kv_store.reference_bytes_released", "%zu vs %zu",
        kvb_kv_reference_bytes(), r0);
  UNIT_EXIT();
}

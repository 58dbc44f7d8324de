/* heap_meter.c — see heap_meter.h. */
#include "heap_meter.h"
#include "kvb_error.h"

#include <stdlib.h> /* defines __GLIBC__ where it is glibc */

/* Under AddressSanitizer malloc is ASan's, and glibc's counters do not see it. */
#if defined(__SANITIZE_ADDRESS__)
#define KVB_HEAP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KVB_HEAP_ASAN 1
#endif
#endif

#if !defined(KVB_HEAP_ASAN) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define KVB_HAVE_MALLINFO2 1
#endif

int kvb_heap_in_use(size_t *bytes) {
  if (!bytes) return KVB_ERROR(KVB_ENULL, "heap meter: NULL output");
#ifdef KVB_HAVE_MALLINFO2
  /* uordblks: bytes in allocated chunks of all arenas (glibc sums every arena); hblkhd: bytes
   * in blocks served by mmap (large allocations). Blocks parked in the per-thread cache (tcache,
   * at most 7 of each size up to 1032 bytes) still count as allocated: the noise the battery's
   * fixed allowance covers. */
  struct mallinfo2 mi = mallinfo2();
  *bytes = mi.uordblks + mi.hblkhd;
  return KVB_OK;
#else
  *bytes = 0;
  return KVB_ERROR(KVB_EINVAL, "heap meter: this build has no allocator count (glibc >= 2.33's "
                               "mallinfo2, not under AddressSanitizer), so the heap a method holds "
                               "cannot be measured here");
#endif
}

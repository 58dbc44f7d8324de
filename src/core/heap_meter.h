/* heap_meter.h — the bytes the process's C heap holds, read from the allocator itself: the route
 * by which kvb-props --method measures a method's memory without asking the method (src/README.md, "Your
 * own method"; props/method_battery.c, method.contract.memory).
 *
 * What it sees: every block obtained from malloc/calloc/realloc/posix_memalign — by kvbound's
 * built-ins, by a plugin (a plugin links the same C library), by NumPy (its array buffers come
 * from malloc) or by anything else in the process — including the allocator's per-block header
 * and blocks served by mmap. What it cannot see: static or stack storage, memory a method maps
 * itself (mmap, shared memory, a GPU buffer), and Python's small objects, which CPython's own
 * allocator keeps in arenas it maps directly (a Python method keeping its vectors in lists of
 * floats rather than NumPy arrays is not seen). It is process-wide: the caller holds everything
 * else still between its two readings (the battery reads it in one thread, with the stream and
 * its scratch allocated before the method). */
#ifndef KVB_HEAP_METER_H
#define KVB_HEAP_METER_H

#include <stddef.h>

/* The C heap's bytes in use now (glibc: mallinfo2's in-use bytes of every arena plus its
 * mmapped blocks). KVB_OK, or KVB_EINVAL with a message where the C library offers no such count
 * (not glibc ≥ 2.33): then the caller cannot measure and must say so. */
int kvb_heap_in_use(size_t *bytes);

#endif

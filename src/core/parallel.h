/* parallel.h — a deterministic parallel-for over independent work items, shared by every
 * multi-threaded kernel of the library (block BalanceKV over (head, block), exact decode over
 * (head, query tile), the runner's trials).
 *
 * Why one helper: results must be identical for any thread count, so no kernel may let a
 * thread's identity or the order items finish in reach its numbers. Items are claimed from an
 * atomic counter (load balance); each item must write only its own outputs and draw its
 * randomness from its own substream. The worker index passed to fn selects per-worker scratch.
 *
 * BLAS inside items: OpenBLAS must run single-threaded inside workers, or 2 workers × 2 BLAS
 * threads oversubscribe the cores; kvb_parallel_for sets OpenBLAS to one thread while it runs
 * items on more than one worker and restores the previous value afterwards. */
#ifndef KVB_PARALLEL_H
#define KVB_PARALLEL_H

#include <stddef.h>

/* fn(item, arg, worker): worker ∈ [0, threads). Returns 0 or a KVB_E* code; the first non-zero
 * code (lowest item index among failures) is returned by kvb_parallel_for, and once an item has
 * failed no further items are started. */
typedef int (*kvb_parallel_fn)(size_t item, void *arg, int worker);

/* Runs fn for item = 0 … n−1 on min(threads, n) threads (threads <= 0: kvb_threads_default()),
 * the caller being worker 0. With one thread the items run in order on the calling thread; a
 * thread that cannot be started only means fewer workers, never a different result. Returns 0
 * or the code of the lowest-indexed failing item, with its message re-raised in the caller's
 * thread (kvb_strerror_last). */
int kvb_parallel_for(size_t n, int threads, kvb_parallel_fn fn, void *arg);

/* The default thread count: $KVBOUND_THREADS if set to a positive integer, else the number of
 * online processors (at least 1, at most KVB_MAX_THREADS). */
int kvb_threads_default(void);

/* Parses a --threads value: a positive integer ≤ KVB_MAX_THREADS. Returns 0 or KVB_EINVAL. */
int kvb_threads_parse(const char *s, int *out);

#define KVB_MAX_THREADS 256

#endif

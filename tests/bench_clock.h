/* bench_clock.h — the clocks every bench reads: wall seconds (CLOCK_MONOTONIC) and the
 * process's CPU seconds over all its threads (CLOCK_PROCESS_CPUTIME_ID), which on a shared
 * machine, unlike the wall clock, do not count other processes' turns; and one thread's own CPU
 * seconds (CLOCK_THREAD_CPUTIME_ID), which the limits' per-core samples are timed in
 * (bench_limit.h). */
#ifndef KVB_BENCH_CLOCK_H
#define KVB_BENCH_CLOCK_H

#include <time.h>

static inline double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline double thread_cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif

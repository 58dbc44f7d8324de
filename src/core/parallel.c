/* parallel.c — see parallel.h. */
#include "parallel.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "kvb_error.h"

typedef struct {
  size_t n;
  kvb_parallel_fn fn;
  void *arg;
  atomic_size_t next;
  atomic_int stop;
  pthread_mutex_t mu;
  size_t fail_item; /* lowest failing item so far (n if none) */
  int fail_code;
  char fail_msg[512];
  char fail_where[128];
} pool;

typedef struct {
  pool *P;
  int worker;
} task;

static void record_failure(pool *P, size_t item, int code) {
  pthread_mutex_lock(&P->mu);
  if (item < P->fail_item) {
    P->fail_item = item;
    P->fail_code = code;
    /* Error messages are thread-local: copy the worker's so the caller can re-raise it. */
    snprintf(P->fail_msg, sizeof P->fail_msg, "%s", kvb_strerror_last());
    snprintf(P->fail_where, sizeof P->fail_where, "%s", kvb_error_where_last());
  }
  pthread_mutex_unlock(&P->mu);
  atomic_store(&P->stop, 1);
}

static void *run_items(void *vt) {
  task *t = vt;
  pool *P = t->P;
  for (;;) {
    if (atomic_load(&P->stop)) break;
    size_t i = atomic_fetch_add(&P->next, 1);
    if (i >= P->n) break;
    int rc = P->fn(i, P->arg, t->worker);
    if (rc) record_failure(P, i, rc);
  }
  return NULL;
}

int kvb_threads_default(void) {
  const char *e = getenv("KVBOUND_THREADS");
  int t;
  if (e && *e && kvb_threads_parse(e, &t) == 0) return t;
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  if (c < 1) c = 1;
  if (c > KVB_MAX_THREADS) c = KVB_MAX_THREADS;
  return (int)c;
}

int kvb_threads_parse(const char *s, int *out) {
  if (!s || !out) return KVB_ERROR(KVB_ENULL, "threads: NULL argument");
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < 1 || v > KVB_MAX_THREADS)
    return KVB_ERROR(KVB_EINVAL, "threads must be an integer in [1, %d], got '%s'",
                     KVB_MAX_THREADS, s);
  *out = (int)v;
  return 0;
}

int kvb_parallel_for(size_t n, int threads, kvb_parallel_fn fn, void *arg) {
  if (!fn) return KVB_ERROR(KVB_ENULL, "parallel_for: NULL function");
  if (threads <= 0) threads = kvb_threads_default();
  if (threads > KVB_MAX_THREADS) threads = KVB_MAX_THREADS;
  if ((size_t)threads > n) threads = (int)(n ? n : 1);
  if (threads == 1) {
    for (size_t i = 0; i < n; i++) {
      int rc = fn(i, arg, 0);
      if (rc) return rc;
    }
    return 0;
  }
  pool P;
  P.n = n, P.fn = fn, P.arg = arg;
  atomic_init(&P.next, 0);
  atomic_init(&P.stop, 0);
  pthread_mutex_init(&P.mu, NULL);
  P.fail_item = n, P.fail_code = 0, P.fail_msg[0] = P.fail_where[0] = 0;
  task tk[KVB_MAX_THREADS];
  pthread_t th[KVB_MAX_THREADS];
  int blas_prev = openblas_get_num_threads();
  openblas_set_num_threads(1);
  int started = 0;
  for (int w = 1; w < threads; w++) {
    tk[w].P = &P, tk[w].worker = w;
    if (pthread_create(&th[w], NULL, run_items, &tk[w]) != 0) break;
    started++;
  }
  tk[0].P = &P, tk[0].worker = 0;
  run_items(&tk[0]); /* the caller is worker 0; with no extra thread it runs every item */
  for (int w = 1; w <= started; w++) pthread_join(th[w], NULL);
  openblas_set_num_threads(blas_prev);
  pthread_mutex_destroy(&P.mu);
  if (P.fail_code) {
    /* Re-raise in the caller's thread, keeping the worker's message and source position. */
    return kvb_error_restore(P.fail_code, P.fail_msg, P.fail_where);
  }
  return 0;
}

/* test_parallel.c — kvb_parallel_for: every item exactly once for any thread count, the lowest
 * failing item's code and message reach the caller (also when a higher item failed first),
 * bad --threads values are refused. */
#include "kvbound.h"
#include "unit.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

typedef struct {
  atomic_int hits[1000];
  size_t fail_from; /* items >= fail_from fail with KVB_EDOM (n: none) */
} ctx;

static int count_item(size_t i, void *arg, int worker) {
  ctx *c = arg;
  if (worker < 0 || worker >= KVB_MAX_THREADS) return KVB_EINVAL;
  atomic_fetch_add(&c->hits[i], 1);
  if (i >= c->fail_from) return KVB_ERROR(KVB_EDOM, "item %zu refused", i);
  return 0;
}

/* Item 0 fails slowly — it waits until item 1 (on the other worker) has failed — and item 1
 * fails at once: the report must still be item 0's, the lowest failing item, not the first
 * failure seen. Item 0 gives up waiting after 2 s (a second worker that never started runs
 * nothing; item 0 is then the only failure either way). */
static atomic_int item1_failed;
static int slow_low_fast_high(size_t i, void *arg, int worker) {
  (void)arg, (void)worker;
  if (i == 1) {
    int st = KVB_ERROR(KVB_ERANGE, "item 1 failed fast");
    atomic_store(&item1_failed, 1);
    return st;
  }
  for (int ms = 0; ms < 2000 && !atomic_load(&item1_failed); ms++)
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  nanosleep(&(struct timespec){0, 20000000}, NULL); /* item 1's failure is recorded meanwhile */
  return KVB_ERROR(KVB_EDOM, "item 0 failed slowly");
}

int main(void) {
  static ctx c;
  const int counts[] = {1, 2, 3, 7, 64};
  for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
    for (size_t i = 0; i < 1000; i++) atomic_init(&c.hits[i], 0);
    c.fail_from = 1000;
    int rc = kvb_parallel_for(1000, counts[k], count_item, &c);
    int once = 1;
    for (size_t i = 0; i < 1000; i++) once &= atomic_load(&c.hits[i]) == 1;
    char name[64];
    snprintf(name, sizeof name, "parallel.each_item_once.threads_%d", counts[k]);
    CHECK(rc == 0 && once, name, "rc %d, some item not run exactly once", rc);
  }
  /* A failure stops the loop and reports the lowest failing item, in the caller's thread. */
  for (size_t i = 0; i < 1000; i++) atomic_init(&c.hits[i], 0);
  c.fail_from = 500;
  kvb_error_clear();
  int rc = kvb_parallel_for(1000, 2, count_item, &c);
  int all = 1;
  for (size_t i = 0; i < 500; i++) all &= atomic_load(&c.hits[i]) == 1;
  (void)all; /* items below 500 may be skipped once a failure stops the loop */
  CHECK(rc == KVB_EDOM && strstr(kvb_strerror_last(), "item 500 refused") != NULL,
        "parallel.lowest_failure_reported", "rc %d, message '%s'", rc, kvb_strerror_last());
  atomic_init(&item1_failed, 0);
  kvb_error_clear();
  rc = kvb_parallel_for(2, 2, slow_low_fast_high, NULL);
  CHECK(rc == KVB_EDOM && strstr(kvb_strerror_last(), "item 0 failed slowly") != NULL,
        "parallel.lowest_failure_not_first_seen", "rc %d (item 1 failed first: %d), message '%s'",
        rc, atomic_load(&item1_failed), kvb_strerror_last());
  CHECK(kvb_parallel_for(0, 2, count_item, &c) == 0, "parallel.zero_items", "n = 0 failed");
  int t = 0;
  CHECK(kvb_threads_parse("0", &t) == KVB_EINVAL && kvb_threads_parse("x", &t) == KVB_EINVAL &&
            kvb_threads_parse("2x", &t) == KVB_EINVAL && kvb_threads_parse("3", &t) == 0 && t == 3,
        "parallel.threads_parse", "bad values accepted or good refused");
  CHECK(kvb_threads_default() >= 1, "parallel.threads_default", "default < 1");
  UNIT_EXIT();
}

/* test_parallel.c — kvb_parallel_for: every item exactly once for any thread count, the lowest
 * failing item's code and message reach the caller, bad --threads values are refused. */
#include "kvbound.h"
#include "unit.h"

#include <stdatomic.h>
#include <string.h>

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
  CHECK(kvb_parallel_for(0, 2, count_item, &c) == 0, "parallel.zero_items", "n = 0 failed");
  int t = 0;
  CHECK(kvb_threads_parse("0", &t) == KVB_EINVAL && kvb_threads_parse("x", &t) == KVB_EINVAL &&
            kvb_threads_parse("2x", &t) == KVB_EINVAL && kvb_threads_parse("3", &t) == 0 && t == 3,
        "parallel.threads_parse", "bad values accepted or good refused");
  CHECK(kvb_threads_default() >= 1, "parallel.threads_default", "default < 1");
  UNIT_EXIT();
}

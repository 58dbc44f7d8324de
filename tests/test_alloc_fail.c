/* test_alloc_fail.c — an allocation that fails inside a method's update is never hidden: the
 * update reports it, and a sketch whose parts it may have left out of step refuses to answer.
 *
 * This binary is linked with --wrap=malloc,calloc,realloc,aligned_alloc (Makefile), so the
 * library's own allocations go through the wrappers below; allocation number `fail_at` (counted
 * from when the test arms it) fails. For every injection point over a short stream, for the
 * streaming methods built from two MergeAndReduce instances (003 Alg. 1, Alg. 4): an update
 * during which an allocation failed must not return OK, and after a failed update the method
 * either answers (its parts consistent; an empty denominator or no token yet is its ordinary
 * KVB_ESTATE) or refuses every later update and query with KVB_ESTATE, saying its parts are out
 * of step. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t al, size_t n);

static long armed = -1, count = 0, failed_allocs = 0;

static int should_fail(void) {
  if (armed < 0) return 0;
  if (count++ != armed) return 0;
  failed_allocs++;
  return 1;
}
void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t a, size_t b) { return should_fail() ? NULL : __real_calloc(a, b); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t al, size_t n) {
  return should_fail() ? NULL : __real_aligned_alloc(al, n);
}

/* One run with failure at allocation `at` (counted from the first update). Returns 1 when the
 * contract held; *reached says whether the injection point was reached at all. */
static int one_run(const char *name, long at, int *reached, int *refused, char *why, size_t cap) {
  const size_t d = 3, n = 64;
  gsl_rng *rng = kvb_rng_alloc_substream(7, 0);
  kvb_method_config cfg = {d, d, 1 / sqrt((double)d), rng};
  kvb_params p;
  kvb_params_init(&p);
  const char *const common[] = {"t=4", "T=3", "delta=0.001", NULL};
  for (const char *const *a = common; *a; a++) kvb_params_parse(&p, *a);
  if (!strcmp(name, "merge_reduce")) {
    kvb_params_set(&p, "r_key", 2), kvb_params_set(&p, "r_value", 2);
  } else {
    kvb_params_set(&p, "r", 2), kvb_params_set(&p, "eps", 0.5), kvb_params_set(&p, "n", (double)n);
  }
  kvb_method *m = NULL;
  if (kvb_method_alloc(name, &cfg, &p, &m)) {
    snprintf(why, cap, "alloc: %s", kvb_strerror_last());
    gsl_rng_free(rng);
    return 0;
  }
  int ok = 1, broken = 0;
  count = 0, failed_allocs = 0, armed = at;
  *reached = 0;
  for (size_t i = 0; i < n && ok; i++) {
    double k[3], v[3], z[3];
    for (size_t a = 0; a < d; a++) k[a] = 0.5 * gsl_rng_uniform(rng), v[a] = gsl_rng_uniform(rng);
    long before = failed_allocs;
    int st = kvb_method_update(m, k, d, v, d);
    int qs = kvb_method_query(m, k, d, z, d);
    if (failed_allocs > before) {
      *reached = 1;
      if (st == KVB_OK) {
        snprintf(why, cap, "token %zu: an allocation failed and the update said OK", i);
        ok = 0;
      }
      if (qs == KVB_ESTATE && strstr(kvb_strerror_last(), "out of step")) broken = 1, *refused = 1;
    } else if (broken && (st != KVB_ESTATE || qs != KVB_ESTATE)) {
      snprintf(why, cap, "token %zu: a refused sketch answered again (update %d, query %d)", i, st,
               qs);
      ok = 0;
    } else if (!broken && qs != KVB_OK && qs != KVB_ENOMEM && qs != KVB_ESTATE) {
      snprintf(why, cap, "token %zu: query failed with %d (%s)", i, qs, kvb_strerror_last());
      ok = 0;
    }
  }
  armed = -1;
  kvb_method_free(m);
  gsl_rng_free(rng);
  return ok;
}

int main(void) {
  static const char *const methods[] = {"merge_reduce", "balancekv"};
  for (int mi = 0; mi < 2; mi++) {
    int ok = 1, runs = 0, refused = 0;
    char why[256] = "";
    for (long at = 0; ok; at++) {
      int reached = 0;
      ok = one_run(methods[mi], at, &reached, &refused, why, sizeof why);
      if (!reached) break; /* past the last allocation the stream makes */
      runs++;
    }
    char name[96];
    snprintf(name, sizeof name, "alloc_fail.%s.never_hidden", methods[mi]);
    CHECK(ok && runs > 10, name, "%d injection points: %s", runs, why);
    snprintf(name, sizeof name, "alloc_fail.%s.out_of_step_refused", methods[mi]);
    CHECK(refused, name, "no injection point left the parts out of step (%d points)", runs);
  }
  UNIT_EXIT();
}

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

/* The quantized caches (quant_cache.h) promise more: an update or query whose allocation fails
 * returns KVB_ENOMEM and leaves the cache exactly as it was, so retrying the same token gives
 * the cache a run without failures has. One run fails allocation `at` (counted over the
 * victim's calls only) and compares the victim with a reference fed the same tokens. */
static double qa_K[2][40 * 40], qa_V[2][40 * 3];
static int quant_run(const char *name, long at, int *reached, char *why, size_t cap) {
  const size_t dk = 40, dv = 3, n = 40; /* dk: two blocks of 32, the second padded */
  kvb_method_config cfg = {dk, dv, 0.2, NULL};
  kvb_params p;
  kvb_params_init(&p);
  if (!strcmp(name, "kivi")) kvb_params_parse(&p, "group=2"), kvb_params_parse(&p, "residual=4");
  kvb_method *m = NULL, *ref = NULL;
  if (kvb_method_alloc(name, &cfg, &p, &m) || kvb_method_alloc(name, &cfg, &p, &ref)) {
    snprintf(why, cap, "alloc: %s", kvb_strerror_last());
    kvb_method_free(m);
    return 0;
  }
  gsl_rng *rng = kvb_rng_alloc_substream(7, 1);
  int ok = 1;
  count = 0, failed_allocs = 0;
  *reached = 0;
  for (size_t i = 0; i < n && ok; i++) {
    double k[40], v[3], z[3], zr[3];
    for (size_t a = 0; a < dk; a++) k[a] = gsl_rng_uniform(rng) - 0.5;
    for (size_t a = 0; a < dv; a++) v[a] = gsl_rng_uniform(rng);
    kvb_memory m0, m1;
    kvb_method_memory(m, &m0);
    size_t n0 = kvb_quant_cache_read(m, qa_K[0], qa_V[0], 40);
    long before = failed_allocs;
    armed = at;
    int st = kvb_method_update(m, k, dk, v, dv);
    armed = -1;
    if (failed_allocs > before) {
      *reached = 1;
      kvb_method_memory(m, &m1);
      size_t n1 = kvb_quant_cache_read(m, qa_K[1], qa_V[1], 40);
      if (st != KVB_ENOMEM || n1 != n0 || m1.bytes != m0.bytes ||
          memcmp(qa_K[0], qa_K[1], n0 * dk * sizeof(double)) ||
          memcmp(qa_V[0], qa_V[1], n0 * dv * sizeof(double)))
        ok = 0, snprintf(why, cap, "token %zu: failed update returned %d or changed the cache", i, st);
      st = kvb_method_update(m, k, dk, v, dv); /* the retry */
    }
    before = failed_allocs;
    armed = at;
    int qs = kvb_method_query(m, k, dk, z, dv);
    armed = -1;
    if (failed_allocs > before) {
      *reached = 1;
      if (qs != KVB_ENOMEM) ok = 0, snprintf(why, cap, "token %zu: failed query returned %d", i, qs);
      qs = kvb_method_query(m, k, dk, z, dv);
    }
    int sr = kvb_method_update(ref, k, dk, v, dv), qr = kvb_method_query(ref, k, dk, zr, dv);
    if (ok && (st || qs || sr || qr || memcmp(z, zr, sizeof z)))
      ok = 0, snprintf(why, cap, "token %zu: after a retry the answer differs from the reference "
                       "(statuses %d %d %d %d)", i, st, qs, sr, qr);
  }
  kvb_method_free(m);
  kvb_method_free(ref);
  gsl_rng_free(rng);
  return ok;
}

int main(void) {
  static const char *const qmethods[] = {"kivi", "q8_0", "q4_0"};
  for (int mi = 0; mi < 3; mi++) {
    int ok = 1, runs = 0;
    char why[256] = "";
    for (long at = 0; ok; at++) {
      int reached = 0;
      ok = quant_run(qmethods[mi], at, &reached, why, sizeof why);
      if (!reached) break;
      runs++;
    }
    char name[96];
    snprintf(name, sizeof name, "alloc_fail.%s.enomem_leaves_cache_unchanged", qmethods[mi]);
    CHECK(ok && runs >= 3, name, "%d injection points: %s", runs, why);
  }
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

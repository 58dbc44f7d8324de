/* test_kcenter.c — greedy k-center, the clusterability profile and the recent_kcenter method on
 * small configurations worked out by hand; ties, duplicates; bad input leaves outputs and the
 * method unchanged. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <string.h>

#define SENT ((size_t)777)

static int eq_sz(const size_t *a, const size_t *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static void test_greedy_known(void) {
  /* 1D points 0, 1, 10, 11, 20 (d = 2, second coordinate 0). From index 0: radius 20; add 20
   * (idx 4): radius 10 (point 10); add 10 (idx 2): radius 1; points 1 and 11 tie at 1 -> the
   * smaller index 1; then 3: radius 0. */
  const double X[] = {0, 0, 1, 0, 10, 0, 11, 0, 20, 0};
  size_t c[5];
  double r[5];
  int rc = kvb_kcenter_greedy(5, 2, X, 5, 0, c, r);
  const size_t ce[5] = {0, 4, 2, 1, 3};
  const double re[5] = {20, 10, 1, 1, 0};
  int ok = rc == KVB_OK && eq_sz(c, ce, 5);
  for (int j = 0; j < 5; j++) ok &= r[j] == re[j];
  CHECK(ok, "kcenter.known_1d", "rc %d centers %zu %zu %zu %zu %zu radii %g %g %g %g %g", rc, c[0],
        c[1], c[2], c[3], c[4], r[0], r[1], r[2], r[3], r[4]);

  /* Prefix property: k = 3 gives the first three of the k = 5 run. */
  size_t c3[3];
  double r3[3];
  rc = kvb_kcenter_greedy(5, 2, X, 3, 0, c3, r3);
  CHECK(rc == 0 && eq_sz(c3, ce, 3) && r3[2] == 1, "kcenter.prefix", "k=3 differs from k=5 prefix");

  /* Caller-supplied first center: from 20 (idx 4) the farthest is 0 (idx 0), radius 20 then 10. */
  rc = kvb_kcenter_greedy(5, 2, X, 3, 4, c3, r3);
  CHECK(rc == 0 && c3[0] == 4 && c3[1] == 0 && c3[2] == 2 && r3[0] == 20 && r3[1] == 10 &&
            r3[2] == 1,
        "kcenter.first_given", "centers %zu %zu %zu", c3[0], c3[1], c3[2]);
  /* radius may be NULL */
  rc = kvb_kcenter_greedy(5, 2, X, 2, 0, c3, NULL);
  CHECK(rc == 0 && c3[1] == 4, "kcenter.radius_null", "rc %d", rc);
}

static void test_greedy_ties_dups(void) {
  /* Unit square: from (0,0) the farthest is (1,1) (idx 3, √2); then (1,0) and (0,1) tie at 1 ->
   * idx 1. */
  const double S[] = {0, 0, 1, 0, 0, 1, 1, 1};
  size_t c[4];
  double r[4];
  int rc = kvb_kcenter_greedy(4, 2, S, 4, 0, c, r);
  CHECK(rc == 0 && c[0] == 0 && c[1] == 3 && c[2] == 1 && c[3] == 2 && r[0] == sqrt(2.0) &&
            r[1] == 1 && r[2] == 1 && r[3] == 0,
        "kcenter.ties_smallest_index", "centers %zu %zu %zu %zu", c[0], c[1], c[2], c[3]);

  /* All duplicates: every k is allowed, centers in index order, radius 0; no index repeats. */
  const double D[] = {3, 3, 3, 3, 3, 3};
  rc = kvb_kcenter_greedy(3, 2, D, 3, 1, c, r);
  CHECK(rc == 0 && c[0] == 1 && c[1] == 0 && c[2] == 2 && r[0] == 0 && r[2] == 0,
        "kcenter.all_duplicates", "centers %zu %zu %zu", c[0], c[1], c[2]);
  /* Duplicate pair plus a far point: 0, far, then the duplicate at distance 0. */
  const double E[] = {0, 0, 5};
  rc = kvb_kcenter_greedy(3, 1, E, 3, 0, c, r);
  CHECK(rc == 0 && c[0] == 0 && c[1] == 2 && c[2] == 1 && r[0] == 5 && r[1] == 0 && r[2] == 0,
        "kcenter.duplicates", "centers %zu %zu %zu", c[0], c[1], c[2]);
  /* Nearest-point mutant differs on the 1D configuration (it must, or the props could not
   * catch it): from 0 it adds 1, then 10, leaving radius 10 (faithful: 1). */
  const double X[] = {0, 1, 10, 11, 20};
  rc = kvb_kcenter_greedy_variant(5, 1, X, 3, 0, c, r, KVB_KCENTER_MUT_NEAREST);
  CHECK(rc == 0 && c[1] == 1 && c[2] == 2 && r[2] == 10, "kcenter.mutant_nearest_differs",
        "centers %zu %zu %zu", c[0], c[1], c[2]);
}

static void test_greedy_bad_input(void) {
  const double X[] = {0, 1, 10, 11, 20};
  const double N[] = {0, NAN, 1};
  const double I[] = {0, 1, INFINITY};
  size_t c[6] = {SENT, SENT, SENT, SENT, SENT, SENT};
  const size_t s6[6] = {SENT, SENT, SENT, SENT, SENT, SENT};
  double r[6] = {-1, -1, -1, -1, -1, -1};
  struct {
    const char *name;
    int rc, want;
  } cases[] = {
      {"k0", kvb_kcenter_greedy(5, 1, X, 0, 0, c, r), KVB_EINVAL},
      {"k_gt_n", kvb_kcenter_greedy(5, 1, X, 6, 0, c, r), KVB_EINVAL},
      {"n0", kvb_kcenter_greedy(0, 1, X, 1, 0, c, r), KVB_EINVAL},
      {"d0", kvb_kcenter_greedy(5, 0, X, 1, 0, c, r), KVB_EINVAL},
      {"first_out", kvb_kcenter_greedy(5, 1, X, 2, 5, c, r), KVB_EINVAL},
      {"nan", kvb_kcenter_greedy(3, 1, N, 2, 0, c, r), KVB_EDOM},
      {"inf", kvb_kcenter_greedy(3, 1, I, 2, 0, c, r), KVB_EDOM},
      {"null_X", kvb_kcenter_greedy(5, 1, NULL, 2, 0, c, r), KVB_ENULL},
      {"null_centers", kvb_kcenter_greedy(5, 1, X, 2, 0, NULL, r), KVB_ENULL},
      {"bad_variant", kvb_kcenter_greedy_variant(5, 1, X, 2, 0, c, r, (kvb_kcenter_variant)9),
       KVB_EINVAL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char name[64];
    snprintf(name, sizeof name, "kcenter.bad.%s", cases[i].name);
    int unchanged = eq_sz(c, s6, 6) && r[0] == -1 && r[5] == -1;
    CHECK(cases[i].rc == cases[i].want && unchanged && kvb_strerror_last()[0] != '\0', name,
          "rc %d want %d unchanged %d", cases[i].rc, cases[i].want, unchanged);
  }
}

/* SubGen's m′ after feeding X (d_value 1, all-ones values) with threshold delta. */
static size_t subgen_mprime(size_t n, size_t d, const double *X, double delta) {
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "delta", delta);
  kvb_params_set(&p, "t", 1);
  kvb_params_set(&p, "s", 1);
  gsl_rng *rng = kvb_rng_alloc_substream(5, 0);
  kvb_method_config cfg = {d, 1, 1.0, rng};
  kvb_method *m = NULL;
  size_t out = SIZE_MAX;
  const double one = 1;
  if (kvb_method_alloc("subgen", &cfg, &p, &m) == 0) {
    for (size_t i = 0; i < n; i++) kvb_method_update(m, X + i * d, d, &one, 1);
    out = kvb_subgen_num_clusters(m);
  }
  kvb_method_free(m);
  gsl_rng_free(rng);
  return out;
}

static void test_threshold_and_profile(void) {
  /* Integers 0..9 on a line, δ = 1 (distances exactly δ join, line 12 is ≤): 0 opens, 1 joins,
   * 2 opens (2 from 0), 3 joins ... -> 5 clusters; δ = 0.5 -> 10; δ = 100 -> 1. */
  double L[10];
  for (int i = 0; i < 10; i++) L[i] = i;
  size_t mp = 0;
  int rc = kvb_threshold_clusters(10, 1, L, 1.0, &mp);
  CHECK(rc == 0 && mp == 5, "threshold.exact_delta_joins", "m' = %zu", mp);
  CHECK(subgen_mprime(10, 1, L, 1.0) == 5, "threshold.matches_subgen_line", "subgen %zu",
        subgen_mprime(10, 1, L, 1.0));
  const double deltas[3] = {0.5, 1.0, 100.0};
  size_t mps[3] = {0, 0, 0};
  double rad[4];
  rc = kvb_clusterability_profile(10, 1, L, 4, rad, 3, deltas, mps);
  /* k-center from 0: 9 (r 9->... radius after 1 center 9, after 2 centers 4.5 -> 4 or 5: the
   * farthest from {0, 9} is 4 or 5 at distance 4 (4 is 4 from 0, 5 is 4 from 9): idx 4 first. */
  CHECK(rc == 0 && mps[0] == 10 && mps[1] == 5 && mps[2] == 1 && rad[0] == 9 && rad[1] == 4 &&
            rad[2] == 2,
        "profile.known_line", "rc %d m' %zu %zu %zu radii %g %g %g", rc, mps[0], mps[1], mps[2],
        rad[0], rad[1], rad[2]);

  /* On a clusterable stream, m'(δ) equals SubGen's cluster count for several δ. */
  kvb_params sp;
  kvb_params_init(&sp);
  kvb_params_parse(&sp, "n=600");
  kvb_params_parse(&sp, "d_key=8");
  kvb_params_parse(&sp, "d_value=1");
  kvb_params_parse(&sp, "m=7");
  kvb_params_parse(&sp, "delta=1");
  gsl_rng *rng = kvb_rng_alloc_substream(11, 3);
  kvb_stream *s = NULL;
  rc = kvb_stream_generate("clusterable", &sp, rng, &s);
  const double ds[4] = {0.3, 1.0, 2.0, 6.0};
  size_t got[4];
  int ok = rc == 0 && kvb_clusterability_profile(s->n, s->d_key, s->K, 0, NULL, 4, ds, got) == 0;
  for (int i = 0; ok && i < 4; i++) ok &= got[i] == subgen_mprime(s->n, s->d_key, s->K, ds[i]);
  CHECK(ok, "profile.mprime_equals_subgen", "m'(%g) = %zu", ds[1], ok ? got[1] : 0);
  CHECK(ok && got[1] <= 7, "profile.mprime_le_m", "m'(δ) = %zu > m = 7", got[1]);

  /* Bad input, outputs untouched. */
  size_t keep[3] = {SENT, SENT, SENT};
  double rk[2] = {-1, -1};
  const double bad_d[2] = {1.0, 0.0}, nan_d[1] = {NAN};
  int r1 = kvb_clusterability_profile(10, 1, L, 2, rk, 2, bad_d, keep);
  int r2 = kvb_clusterability_profile(10, 1, L, 2, rk, 1, nan_d, keep);
  int r3 = kvb_clusterability_profile(10, 1, L, 11, rk, 0, NULL, NULL);
  int r4 = kvb_clusterability_profile(10, 1, L, 2, NULL, 0, NULL, NULL);
  int r5 = kvb_threshold_clusters(10, 1, L, -1, keep);
  int r6 = kvb_clusterability_profile(10, 1, L, 0, NULL, 0, NULL, NULL);
  int r7 = kvb_threshold_clusters(10, 1, L, 1, NULL);
  CHECK(r1 == KVB_EINVAL && r2 == KVB_EINVAL && r3 == KVB_EINVAL && r4 == KVB_ENULL &&
            r5 == KVB_EINVAL && r6 == KVB_EINVAL && r7 == KVB_ENULL && keep[0] == SENT &&
            keep[1] == SENT && rk[0] == -1 && rk[1] == -1,
        "profile.bad_input_unchanged", "%d %d %d %d %d %d %d", r1, r2, r3, r4, r5, r6, r7);
  kvb_stream_free(s);
  gsl_rng_free(rng);
}

static kvb_method *make_rk(size_t dk, size_t dv, int window, int centers, const char *mutant,
                           int *rc) {
  kvb_params p;
  kvb_params_init(&p);
  if (window >= 0) kvb_params_set(&p, "window", window);
  if (centers >= 0) kvb_params_set(&p, "centers", centers);
  if (mutant) kvb_params_set_str(&p, "mutant", mutant);
  kvb_method_config cfg = {dk, dv, 1.0, NULL};
  kvb_method *m = NULL;
  *rc = kvb_method_alloc("recent_kcenter", &cfg, &p, &m);
  return m;
}

static void test_recent_kcenter(void) {
  /* Keys 0, 100, 1, 2, 50, 3, 4 (d_key 1), values = position. window 2, centers 2: old tokens
   * 0..4; greedy from 0 adds 100 (idx 1) -> kept {0, 1, 5, 6}. */
  const double keys[7] = {0, 100, 1, 2, 50, 3, 4};
  int rc;
  kvb_method *m = make_rk(1, 1, 2, 2, NULL, &rc);
  CHECK(rc == 0 && m, "recent_kcenter.alloc", "rc %d: %s", rc, kvb_strerror_last());
  if (!m) return;
  for (int i = 0; i < 7; i++) {
    double v = i;
    kvb_method_update(m, &keys[i], 1, &v, 1);
  }
  double q = 0.01, z = NAN;
  rc = kvb_method_query(m, &q, 1, &z, 1);
  size_t kept[8];
  size_t nk = kvb_recent_kcenter_kept(m, kept, 8);
  const size_t ke[4] = {0, 1, 5, 6};
  CHECK(rc == 0 && nk == 4 && eq_sz(kept, ke, 4), "recent_kcenter.kept_known", "nk %zu", nk);
  /* Output = exact attention over the kept rows. */
  const double Kk[4] = {0, 100, 3, 4}, Vk[4] = {0, 1, 5, 6};
  double ze;
  kvb_attention_exact(4, 1, 1, Kk, Vk, &q, 1.0, &ze, NULL);
  CHECK(z == ze, "recent_kcenter.attention_over_kept", "z %.17g exact-over-kept %.17g", z, ze);
  kvb_memory mem;
  kvb_method_memory(m, &mem);
  CHECK(mem.vectors == 8 && mem.bytes == 4 * 2 * sizeof(double) &&
            kvb_recent_kcenter_stored_tokens(m) == 7,
        "recent_kcenter.memory_accounting", "vectors %zu bytes %zu stored %zu", mem.vectors,
        mem.bytes, kvb_recent_kcenter_stored_tokens(m));

  /* Bad input leaves the method unchanged. */
  double nan_k = NAN, v = 1, big_k[2] = {1, 2};
  int b1 = kvb_method_update(m, &nan_k, 1, &v, 1);
  int b2 = kvb_method_update(m, big_k, 2, &v, 1);
  int b3 = kvb_method_query(m, &nan_k, 1, &z, 1);
  CHECK(b1 == KVB_EDOM && b2 == KVB_EDIM && b3 != 0 && kvb_recent_kcenter_stored_tokens(m) == 7 &&
            m->n == 7,
        "recent_kcenter.bad_input_unchanged", "%d %d %d stored %zu", b1, b2, b3,
        kvb_recent_kcenter_stored_tokens(m));

  /* window_off_by_one mutant keeps {0, 1, 4?..}: window 1 (token 6), centers from 0..5. */
  kvb_method *mo = make_rk(1, 1, 2, 2, "window_off_by_one", &rc);
  for (int i = 0; mo && i < 7; i++) {
    double vv = i;
    kvb_method_update(mo, &keys[i], 1, &vv, 1);
  }
  if (mo) kvb_method_query(mo, &q, 1, &z, 1);
  nk = kvb_recent_kcenter_kept(mo, kept, 8);
  const size_t ko[3] = {0, 1, 6};
  CHECK(mo && nk == 3 && eq_sz(kept, ko, 3), "recent_kcenter.mutant_off_by_one_differs", "nk %zu",
        nk);
  kvb_method_free(mo);
  kvb_method_free(m);

  /* Parameters: both zero, missing, negative; random_centers without a generator. */
  kvb_method *bad;
  bad = make_rk(1, 1, 0, 0, NULL, &rc);
  CHECK(!bad && rc == KVB_EINVAL, "recent_kcenter.bad.zero_budget", "rc %d", rc);
  bad = make_rk(1, 1, 4, -1, NULL, &rc);
  CHECK(!bad && rc != 0, "recent_kcenter.bad.missing_centers", "rc %d", rc);
  bad = make_rk(1, 1, 4, 2, "random_centers", &rc);
  CHECK(!bad && rc == KVB_ENULL, "recent_kcenter.bad.random_needs_rng", "rc %d", rc);
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "window", 2.5);
  kvb_params_set(&p, "centers", 1);
  kvb_method_config cfg = {1, 1, 1.0, NULL};
  bad = NULL;
  rc = kvb_method_alloc("recent_kcenter", &cfg, &p, &bad);
  CHECK(!bad && rc != 0, "recent_kcenter.bad.noninteger_window", "rc %d", rc);

  /* ℓ + k ≥ n: bit-identical to exact attention at every step; and ℓ = 0 (pure k-center). */
  int ok = 1;
  for (int pass = 0; pass < 2; pass++) {
    kvb_method *a = make_rk(1, 1, pass ? 0 : 3, pass ? 7 : 4, NULL, &rc), *e = NULL;
    kvb_method_alloc("exact", &cfg, NULL, &e);
    for (int i = 0; a && e && i < 7; i++) {
      double vv = i * 0.5 - 1, za, zb;
      kvb_method_update(a, &keys[i], 1, &vv, 1);
      kvb_method_update(e, &keys[i], 1, &vv, 1);
      kvb_method_query(a, &q, 1, &za, 1);
      kvb_method_query(e, &q, 1, &zb, 1);
      ok &= za == zb;
    }
    ok &= a && e;
    kvb_method_free(a);
    kvb_method_free(e);
  }
  CHECK(ok, "recent_kcenter.exact_when_budget_covers", "differs from exact");
}

int main(void) {
  test_greedy_known();
  test_greedy_ties_dups();
  test_greedy_bad_input();
  test_threshold_and_profile();
  test_recent_kcenter();
  UNIT_EXIT();
}

/* test_baselines.c — the eviction baselines (src/baselines/baselines.h): each against a tiny
 * example worked out by hand in the comments (kept set and answer), its mutants against the
 * same example where they differ, and bad input (parameters refused, a bad token leaving the
 * method unchanged). Values are v_i = i (or i²) so an answer names the kept set. */
#include "baselines.h"
#include "kvbound.h"
#include "unit.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Builds `name` (d_key = dk, d_value = 1, scale 1) from "k=v" assignments; NULL on error. */
static kvb_method *mk(const char *name, size_t dk, const char *const *as) {
  kvb_method_config cfg = {.d_key = dk, .d_value = 1, .scale = 1.0, .rng = NULL};
  kvb_params p;
  kvb_params_init(&p);
  for (; as && *as; as++) kvb_params_parse(&p, *as);
  kvb_method *m = NULL;
  if (kvb_method_alloc(name, &cfg, &p, &m)) return NULL;
  return m;
}

/* Feeds tokens (keys K, n × dk; values vals) asking q_t after token t when Q is not NULL;
 * returns the last answer (0 when nothing was asked; NaN on error). */
static double feed(kvb_method *m, size_t n, size_t dk, const double *K, const double *vals,
                   const double *Q) {
  double z = Q ? NAN : 0;
  for (size_t t = 0; t < n; t++) {
    if (kvb_method_update(m, K + t * dk, dk, vals + t, 1)) return NAN;
    if (Q && kvb_method_query(m, Q + t * dk, dk, &z, 1)) return NAN;
  }
  return z;
}

static int kept_is(const kvb_method *m, const size_t *want, size_t nw) {
  size_t got[64];
  size_t n = kvb_baseline_kept(m, got, 64);
  if (n != nw) return 0;
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) return 0;
  return 1;
}

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * (1 + fabs(b)); }

int main(void) {
  const double pos[8] = {0, 1, 2, 3, 4, 5, 6, 7};

  /* sink_recent, budget 3, sink 1, keys all 0 (d = 1), no queries until the end. After 5
   * tokens: sink {0} + window of 2 {3, 4}. q = 0: equal weights, z = (0 + 3 + 4)/3 = 7/3.
   * sink_off_by_one evicts cache index 0 each time: {1,2,3} then {2,3,4}, z = 3.
   * evict_newest: {0,1,2} → drop 2, add 3 → {0,1,3} → drop 3, add 4 → {0,1,4}, z = 5/3. */
  {
    const double K[5] = {0, 0, 0, 0, 0}, q = 0;
    const char *as[] = {"budget=3", "sink=1", NULL, NULL};
    double zs[3], z = NAN;
    const char *mut[3] = {NULL, "mutant=sink_off_by_one", "mutant=evict_newest"};
    size_t want[3][3] = {{0, 3, 4}, {2, 3, 4}, {0, 1, 4}};
    int ok = 1;
    for (int i = 0; i < 3; i++) {
      as[2] = mut[i];
      kvb_method *m = mk("sink_recent", 1, as);
      ok &= m != NULL && feed(m, 5, 1, K, pos, NULL) == 0 && !kvb_method_query(m, &q, 1, &z, 1);
      zs[i] = z;
      ok &= kept_is(m, want[i], 3);
      kvb_method_free(m);
    }
    CHECK(ok && near(zs[0], 7.0 / 3) && near(zs[1], 3) && near(zs[2], 5.0 / 3),
          "baselines.sink_recent.hand_example", "z %g %g %g (want 7/3, 3, 5/3)", zs[0], zs[1],
          zs[2]);
  }

  /* h2o, budget 3, recent 1, keys (d = 1) 2, 0, 1, 0, every token queried with q = 1.
   * t=0: {0}, p = (1): S0 = 1.
   * t=1: {0,1}, logits (2, 0): p = (e², 1)/(e²+1) = (.8808, .1192): S = (1.8808, .1192).
   * t=2: {0,1,2}, logits (2,0,1), Z = e²+1+e = 11.107: p = (.6652, .0900, .2447):
   *      S = (2.546, .2092, .2447).
   * t=3: full, recent 1: candidates are all 3 held; smallest S is token 1 → {0,2,3};
   *      z = (e²·0 + e·2 + 1·3)/(e² + e + 1) = (2e + 3)/(e² + e + 1).
   * evict_largest drops token 0 → {1,2,3}. */
  {
    const double K[4] = {2, 0, 1, 0}, Q[4] = {1, 1, 1, 1};
    const char *as[] = {"budget=3", "recent=1", NULL};
    kvb_method *m = mk("h2o", 1, as);
    double z = m ? feed(m, 4, 1, K, pos, Q) : NAN, e = exp(1.0);
    size_t want[3] = {0, 2, 3}, wantm[3] = {1, 2, 3};
    int ok = m && kept_is(m, want, 3);
    kvb_memory mem = {0, 0};
    if (m) kvb_method_memory(m, &mem);
    kvb_method_free(m);
    CHECK(ok && near(z, (2 * e + 3) / (e * e + e + 1)) && mem.vectors == 6 &&
              mem.bytes == 3 * 3 * sizeof(double),
          "baselines.h2o.hand_example", "z %.15g want %.15g; memory %zu vectors %zu bytes", z,
          (2 * e + 3) / (e * e + e + 1), mem.vectors, mem.bytes);
    const char *am[] = {"budget=3", "recent=1", "mutant=evict_largest", NULL};
    m = mk("h2o", 1, am);
    if (m) feed(m, 4, 1, K, pos, Q);
    CHECK(m && kept_is(m, wantm, 3), "baselines.h2o.mutant_evict_largest_differs",
          "kept set not {1,2,3}");
    kvb_method_free(m);
    /* recent 2 (budget 3): at t=3 the window is {2, 3}; candidates tokens 0, 1 → drop 1. */
    const char *a2[] = {"budget=3", "recent=2", NULL};
    m = mk("h2o", 1, a2);
    if (m) feed(m, 4, 1, K, pos, Q);
    CHECK(m && kept_is(m, want, 3), "baselines.h2o.recent_window", "kept set not {0,2,3}");
    kvb_method_free(m);
  }

  /* tova, budget 2, keys (d = 1) 1, −1, 0.5; queries q0 = 1, q1 = −1, q2 = 1.
   * t=2: full; the recorded query is q1 = −1: weights ∝ (e^{-1}, e^{1}) for tokens (0, 1):
   *      token 0 is lowest → {1, 2}; z = (e^{-1}·1 + e^{0.5}·2)/(e^{-1} + e^{0.5}).
   * evict_highest drops token 1 → {0, 2}; stale_query scores with q0 = 1: drops 1 → {0, 2}.
   * Without any query the earliest token leaves: {1, 2}. */
  {
    const double K[3] = {1, -1, 0.5}, Q[3] = {1, -1, 1};
    const char *as[] = {"budget=2", NULL, NULL};
    kvb_method *m = mk("tova", 1, as);
    double z = m ? feed(m, 3, 1, K, pos, Q) : NAN;
    double want_z = (exp(-1.0) + 2 * exp(0.5)) / (exp(-1.0) + exp(0.5));
    size_t w12[2] = {1, 2}, w02[2] = {0, 2};
    int ok = m && kept_is(m, w12, 2);
    kvb_method_free(m);
    CHECK(ok && near(z, want_z), "baselines.tova.hand_example", "z %.15g want %.15g", z, want_z);
    const char *mut[2] = {"mutant=evict_highest", "mutant=stale_query"};
    int okm = 1;
    for (int i = 0; i < 2; i++) {
      as[1] = mut[i];
      m = mk("tova", 1, as);
      if (m) feed(m, 3, 1, K, pos, Q);
      okm &= m && kept_is(m, w02, 2);
      kvb_method_free(m);
    }
    CHECK(okm, "baselines.tova.mutants_differ", "a mutant did not keep {0, 2}");
    as[1] = NULL;
    m = mk("tova", 1, as);
    if (m) feed(m, 3, 1, K, pos, NULL);
    CHECK(m && kept_is(m, w12, 2), "baselines.tova.no_query_sliding", "not {1, 2}");
    kvb_method_free(m);
  }

  /* knorm, budget 2, d = 2, keys (3,4) (1,0) (0,2) (0,3) (2,0): norms 5, 1, 2, 3, 2.
   * The two smallest: tokens 1 (1) and 2 (2); token 4 ties token 2 at 2 and the earlier stays.
   * v = i²: z at q = 0 is (1 + 4)/2 = 2.5. keep_largest keeps 0 (5) and 3 (3): (0 + 9)/2 = 4.5. */
  {
    const double K[10] = {3, 4, 1, 0, 0, 2, 0, 3, 2, 0}, sq[5] = {0, 1, 4, 9, 16}, q[2] = {0, 0};
    const char *as[] = {"budget=2", NULL, NULL};
    double z = NAN, zm = NAN;
    kvb_method *m = mk("knorm", 2, as);
    if (m && feed(m, 5, 2, K, sq, NULL) == 0) kvb_method_query(m, q, 2, &z, 1);
    size_t w12[2] = {1, 2}, w03[2] = {0, 3};
    int ok = m && kept_is(m, w12, 2);
    kvb_method_free(m);
    as[1] = "mutant=keep_largest";
    m = mk("knorm", 2, as);
    if (m && feed(m, 5, 2, K, sq, NULL) == 0) kvb_method_query(m, q, 2, &zm, 1);
    int okm = m && kept_is(m, w03, 2);
    kvb_method_free(m);
    CHECK(ok && near(z, 2.5), "baselines.knorm.hand_example", "z %g want 2.5", z);
    CHECK(okm && near(zm, 4.5), "baselines.knorm.mutant_keep_largest_differs", "z %g", zm);
  }

  /* snapkv, budget 3, window 1, keys (d = 1) 0, 2, 0, 0, 0, every token queried with q = 1.
   * At n = 5 the window is the last query (position 5): weights ∝ (1, e², 1, 1, 1) =: (a, b, a,
   * a, a). Votes on the prefix 0..3 (L = 4): (a, b, a, a); B − w = 2 are picked.
   * kernel 3, avg, zero padding: pooled = ((a+b)/3, (2a+b)/3, (2a+b)/3, 2a/3) → tokens 1, 2
   * (tie: earlier) → kept {1, 2, 4}; z = (e²·1 + 2 + 4)/(e² + 2).
   * no_pooling: votes (a, b, a, a) → 1 then 0 (tie: earlier) → {0, 1, 4}.
   * window_excluded (kernel 3 over all 5, pick 3): pooled (a+b, 2a+b, 2a+b, 3a, 2a)/3 with
   * b = e²a ≈ 7.39a: 1 and 2 (3.13a), then 0 (2.80a) → {0, 1, 2}. */
  {
    const double K[5] = {0, 2, 0, 0, 0}, Q[5] = {1, 1, 1, 1, 1};
    const char *as[] = {"budget=3", "window=1", "kernel=3", NULL, NULL};
    const char *mut[3] = {NULL, "mutant=no_pooling", "mutant=window_excluded"};
    size_t want[3][3] = {{1, 2, 4}, {0, 1, 4}, {0, 1, 2}};
    double z[3];
    int ok[3];
    for (int i = 0; i < 3; i++) {
      as[3] = mut[i];
      kvb_method *m = mk("snapkv", 1, as);
      z[i] = m ? feed(m, 5, 1, K, pos, Q) : NAN;
      ok[i] = m && kept_is(m, want[i], 3);
      kvb_method_free(m);
    }
    double e2 = exp(2.0);
    CHECK(ok[0] && near(z[0], (e2 + 6) / (e2 + 2)), "baselines.snapkv.hand_example",
          "z %.15g want %.15g", z[0], (e2 + 6) / (e2 + 2));
    CHECK(ok[1] && ok[2], "baselines.snapkv.mutants_differ", "no_pooling %d window_excluded %d",
          ok[1], ok[2]);
    /* max pooling: pooled (b, b, b, a) → 0, 1 (ties: earlier) → {0, 1, 4}. */
    const char *am[] = {"budget=3", "window=1", "kernel=3", "pooling=max", NULL};
    kvb_method *m = mk("snapkv", 1, am);
    if (m) feed(m, 5, 1, K, pos, Q);
    CHECK(m && kept_is(m, want[1], 3), "baselines.snapkv.max_pooling", "kept set not {0,1,4}");
    kvb_method_free(m);
    /* compress once (prompt = 5): the selection at n = 5 is {1, 2, 4} as above; tokens 5..7
     * (keys 2, 0, 0: token 5 would win a re-selection) are appended: {1, 2, 4, 5, 6, 7}, and the
     * answer to q = 1 is (e²·1 + 2 + 4 + e²·5 + 6 + 7)/(2e² + 4). Without prompt the query at
     * n = 8 re-selects three tokens. */
    const double K8[8] = {0, 2, 0, 0, 0, 2, 0, 0}, Q8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    const double pos8[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const char *ao[] = {"budget=3", "window=1", "kernel=3", "prompt=5", NULL};
    size_t want_once[6] = {1, 2, 4, 5, 6, 7};
    m = mk("snapkv", 1, ao);
    double zo = m ? feed(m, 8, 1, K8, pos8, Q8) : NAN;
    kvb_memory mem = {0};
    if (m) kvb_method_memory(m, &mem);
    CHECK(m && kept_is(m, want_once, 6) && near(zo, (6 * e2 + 19) / (2 * e2 + 4)) &&
              mem.vectors == 12,
          "baselines.snapkv.prompt_compresses_once", "z %.15g, %zu vectors", zo, mem.vectors);
    kvb_method_free(m);
    as[3] = NULL;
    m = mk("snapkv", 1, as);
    if (m) feed(m, 8, 1, K8, pos8, Q8);
    CHECK(m && kvb_baseline_kept(m, NULL, 0) == 3, "baselines.snapkv.reselects_without_prompt",
          "%zu kept", m ? kvb_baseline_kept(m, NULL, 0) : 0);
    kvb_method_free(m);
    /* a sealed cache grows past its capacity (budget 3, 40 appended tokens) */
    double K50[50], Q50[50], V50[50];
    for (int i = 0; i < 50; i++) K50[i] = (i % 7) * 0.1, Q50[i] = 1, V50[i] = i;
    m = mk("snapkv", 1, ao);
    double z50 = m ? feed(m, 50, 1, K50, V50, Q50) : NAN;
    CHECK(m && kvb_baseline_kept(m, NULL, 0) == 48 && isfinite(z50), "baselines.snapkv.prompt_grows",
          "%zu kept", m ? kvb_baseline_kept(m, NULL, 0) : 0);
    kvb_method_free(m);
  }

  /* pyramidkv layer budgets, B = 40, w = 8 (c = 32), β = 4, 5 layers: top c/β = 8, bottom
   * 2c − 8 = 56, step (56 − 8)/4 = 12: 56, 44, 32, 20, 8 selected, + w = 64, 52, 40, 28, 16
   * (mean 40). At n = 50 (prefix 42 < 56): bottom 42, top 2·32 − 42 = 22, step 5: 42, 37, 32,
   * 27, 22 → 50, 45, 40, 35, 30. One layer: B. */
  {
    size_t big[5] = {64, 52, 40, 28, 16}, small[5] = {50, 45, 40, 35, 30};
    int ok = kvb_pyramidkv_layer_budget(40, 8, 1, 0, 4, 1000) == 40;
    for (size_t l = 0; l < 5; l++)
      ok &= kvb_pyramidkv_layer_budget(40, 8, 5, l, 4, 1000) == big[l] &&
            kvb_pyramidkv_layer_budget(40, 8, 5, l, 4, 50) == small[l];
    CHECK(ok, "baselines.pyramidkv.layer_budgets_by_hand", "a layer budget differs");
    /* On a stream, layer 4 of 5 keeps SnapKV's set at budget 16 (n = 200: no clamp). */
    gsl_rng *r = kvb_rng_alloc_substream(7, 1);
    enum { N = 200, D = 3 };
    double *K = malloc(N * D * sizeof *K), *Q = malloc(N * D * sizeof *Q), V[N];
    for (size_t i = 0; i < N * D; i++) K[i] = gsl_ran_gaussian(r, 1), Q[i] = gsl_ran_gaussian(r, 1);
    for (size_t i = 0; i < N; i++) V[i] = (double)i;
    const char *ap[] = {"budget=40", "window=8", "layers=5", "layer=4", "beta=4", NULL};
    const char *asn[] = {"budget=16", "window=8", NULL};
    kvb_method *mp = mk("pyramidkv", D, ap), *ms = mk("snapkv", D, asn);
    double zp = mp ? feed(mp, N, D, K, V, Q) : NAN, zs = ms ? feed(ms, N, D, K, V, Q) : NAN;
    size_t kp[64], ks[64], np = kvb_baseline_kept(mp, kp, 64), ns = kvb_baseline_kept(ms, ks, 64);
    int same = np == 16 && ns == 16 && zp == zs;
    for (size_t i = 0; same && i < np; i++) same = kp[i] == ks[i];
    CHECK(same, "baselines.pyramidkv.is_snapkv_at_layer_budget", "kept %zu vs %zu, z %g vs %g",
          np, ns, zp, zs);
    kvb_method_free(mp), kvb_method_free(ms);
    const char *arev[] = {"budget=40", "window=8", "layers=5", "layer=4", "beta=4",
                          "mutant=layer_reversed", NULL};
    mp = mk("pyramidkv", D, arev);
    if (mp) feed(mp, N, D, K, V, Q);
    CHECK(mp && kvb_baseline_kept(mp, NULL, 0) == 64, "baselines.pyramidkv.mutant_reversed",
          "kept %zu (want layer 0's 64)", kvb_baseline_kept(mp, NULL, 0));
    kvb_method_free(mp);
    free(K), free(Q), gsl_rng_free(r);
  }

  /* Bad parameters are refused with a message. */
  {
    const char *bad[][4] = {
        {"sink_recent", "budget=4", "sink=4", NULL},  {"sink_recent", "sink=2", NULL, NULL},
        {"h2o", "budget=3", "recent=4", NULL},         {"h2o", "budget=0", NULL, NULL},
        {"tova", "budget=0", NULL, NULL},              {"knorm", "budget=-1", NULL, NULL},
        {"snapkv", "budget=4", "window=5", NULL},      {"snapkv", "budget=8", "kernel=4", NULL},
        {"snapkv", "budget=8", "pooling=median", NULL}, {"pyramidkv", "budget=40", "layer=32", NULL},
        {"pyramidkv", "budget=40", "beta=0.5", NULL},   {"snapkv", "budget=8", "window=0", NULL},
    };
    int refused = 0, msgs = 0, nb = (int)(sizeof bad / sizeof bad[0]);
    for (int i = 0; i < nb; i++) {
      kvb_method *m = mk(bad[i][0], 2, bad[i] + 1);
      refused += m == NULL;
      msgs += m == NULL && strlen(kvb_strerror_last()) > 0;
      kvb_method_free(m);
    }
    CHECK(refused == nb && msgs == nb, "baselines.bad_parameters_refused", "%d of %d refused",
          refused, nb);
  }

  /* A bad token (NaN, wrong dimension) or a NaN query leaves each method as it
   * was: the same kept set and the same answer afterwards. */
  {
    const char *names[6] = {"sink_recent", "h2o", "tova", "knorm", "snapkv", "pyramidkv"};
    const char *as[6][4] = {{"budget=4", "sink=1", NULL}, {"budget=4", NULL},
                            {"budget=4", NULL},           {"budget=4", NULL},
                            {"budget=4", "window=2", "kernel=1", NULL},
                            {"budget=4", "window=2", "layers=2", NULL}};
    const double K[12] = {1, 0, 0, 1, 1, 1, -1, 0, 0.5, 0.5, 2, -1}, Q[12] = {1, 1, 0, 1, 1, 0,
                                                                              0, 1, 1, 1, 1, 0};
    int ok = 1;
    for (int i = 0; i < 6; i++) {
      kvb_method *m = mk(names[i], 2, as[i]);
      double z0 = m ? feed(m, 6, 2, K, pos, Q) : NAN, z1 = NAN, nanv[2] = {NAN, 0}, v = 1;
      double qnan[2] = {0, NAN}, zb;
      size_t k0[8], k1[8], n0 = kvb_baseline_kept(m, k0, 8);
      int r1 = m ? kvb_method_update(m, nanv, 2, &v, 1) : 0;
      int r2 = m ? kvb_method_update(m, K, 1, &v, 1) : 0;
      int r3 = m ? kvb_method_query(m, qnan, 2, &zb, 1) : 0;
      if (m) kvb_method_query(m, Q + 10, 2, &z1, 1);
      size_t n1 = kvb_baseline_kept(m, k1, 8);
      int same = n0 == n1 && n0 > 0 && z0 == z1 && r1 && r2 && r3;
      for (size_t j = 0; same && j < n0; j++) same = k0[j] == k1[j];
      if (!same) printf("  %s: r %d %d %d, kept %zu/%zu z %g/%g\n", names[i], r1, r2, r3, n0, n1,
                        z0, z1);
      ok &= same;
      kvb_method_free(m);
    }
    CHECK(ok, "baselines.bad_input_leaves_state", "see above");
  }

  /* Memory: stored vectors ≤ 2·budget at every step and bytes ≥ 8·d·vectors/2 (method.h). */
  {
    const char *names[6] = {"sink_recent", "h2o", "tova", "knorm", "snapkv", "pyramidkv"};
    gsl_rng *r = kvb_rng_alloc_substream(9, 2);
    int ok = 1;
    for (int i = 0; i < 6; i++) {
      const char *as[] = {"budget=5", i >= 4 ? "window=2" : NULL, NULL};
      kvb_method *m = mk(names[i], 2, as);
      size_t cap = i == 5 ? 10 : 5; /* pyramidkv's bottom layer may hold up to 2B */
      for (int t = 0; t < 40 && m; t++) {
        double k[2] = {gsl_ran_gaussian(r, 1), gsl_ran_gaussian(r, 1)}, v = t, z;
        kvb_method_update(m, k, 2, &v, 1);
        if (t % 3 == 0) kvb_method_query(m, k, 2, &z, 1);
        kvb_memory mem;
        kvb_method_memory(m, &mem);
        ok &= mem.vectors <= 2 * cap && mem.bytes >= mem.vectors / 2 * 3 * sizeof(double) &&
              kvb_baseline_kept(m, NULL, 0) <= cap;
      }
      ok &= m != NULL;
      kvb_method_free(m);
    }
    gsl_rng_free(r);
    CHECK(ok, "baselines.memory_within_budget", "a method exceeded its budget");
  }
  UNIT_EXIT();
}

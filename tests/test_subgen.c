/* test_subgen.c — SubGen's degenerate cases as subgen.h defines them (first token, all-zero
 * values, identical keys, a query orthogonal to every key) and its bad-input contract: every
 * bad call returns the right KVB_* code with a message naming the problem and leaves the
 * sketch exactly as it was (µ, m′, memory, n and the answer to a query compared before/after). */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <string.h>

static kvb_method *make(gsl_rng *rng, size_t dk, size_t dv, double delta, double t, double s) {
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "delta", delta);
  kvb_params_set(&p, "t", t);
  kvb_params_set(&p, "s", s);
  kvb_method_config cfg = {dk, dv, 1.0, rng};
  kvb_method *m = NULL;
  if (kvb_method_alloc("subgen", &cfg, &p, &m)) return NULL;
  return m;
}

/* Everything observable about a sketch, to show a bad call changed nothing. */
typedef struct {
  double mu, z[3];
  size_t clusters;
  uint64_t n;
  kvb_memory mem;
  uint64_t count0, slot_pos[4];
} snapshot;

static void snap(kvb_method *m, const double *q, snapshot *s) {
  memset(s, 0, sizeof *s);
  s->mu = kvb_subgen_mu(m);
  s->clusters = kvb_subgen_num_clusters(m);
  s->n = m->n;
  kvb_method_memory(m, &s->mem);
  kvb_method_query(m, q, m->d_key, s->z, m->d_value);
  kvb_subgen_cluster(m, 0, NULL, &s->count0, NULL, NULL, NULL);
  for (size_t j = 0; j < kvb_subgen_s(m) && j < 4; j++)
    kvb_subgen_slot(m, j, NULL, NULL, &s->slot_pos[j]);
}

static int same(const snapshot *a, const snapshot *b) {
  return memcmp(a, b, sizeof *a) == 0;
}

static int msg_has(const char *needle) { return strstr(kvb_strerror_last(), needle) != NULL; }

int main(void) {
  gsl_rng *rng = kvb_rng_alloc_substream(77, 0);

  /* First token: every slot and every sample is (k1, v1), µ = ‖v1‖², so z = v1 exactly
   * (s and t powers of two make every weight and sum exact). */
  {
    kvb_method *m = make(rng, 3, 3, 0.5, 2, 4);
    double k[3] = {0.3, -1.2, 2.0}, v[3] = {1.5, -0.25, 3.0}, q[3] = {0.7, 0.1, -0.4}, z[3];
    int rc = kvb_method_update(m, k, 3, v, 3);
    rc |= kvb_method_query(m, q, 3, z, 3);
    CHECK(rc == 0 && z[0] == v[0] && z[1] == v[1] && z[2] == v[2], "subgen.first_token_exact",
          "z = (%.17g, %.17g, %.17g)", z[0], z[1], z[2]);
    uint64_t pos;
    const double *mk;
    kvb_subgen_slot(m, 3, &mk, NULL, &pos);
    CHECK(pos == 0 && mk && memcmp(mk, k, sizeof k) == 0 && kvb_subgen_num_clusters(m) == 1,
          "subgen.first_token_fills_all", "slot 3 holds position %llu", (unsigned long long)pos);
    kvb_method_free(m);
    /* s, t not powers of two: equal to rounding. */
    m = make(rng, 3, 3, 0.5, 3, 5);
    kvb_method_update(m, k, 3, v, 3);
    kvb_method_query(m, q, 3, z, 3);
    double e = 0;
    for (int j = 0; j < 3; j++) e = fmax(e, fabs(z[j] - v[j]));
    CHECK(e <= 1e-15 * 3, "subgen.first_token_t3_s5", "max error %.3g", e);
    kvb_method_free(m);
  }

  /* All-zero values: µ = 0, slots stay null, z = 0 (= Attn, since V = 0); the first nonzero
   * value then fills all s slots (p = ‖v‖²/(0 + ‖v‖²) = 1). */
  {
    kvb_method *m = make(rng, 2, 2, 1.0, 2, 3);
    double zero[2] = {0, 0}, z[2] = {9, 9}, q[2] = {1, -2};
    int rc = 0;
    for (int i = 0; i < 10; i++) {
      double k[2] = {i * 0.1, 1};
      rc |= kvb_method_update(m, k, 2, zero, 2);
    }
    rc |= kvb_method_query(m, q, 2, z, 2);
    uint64_t pos;
    const double *sk, *sv;
    int nulls = 1;
    for (size_t j = 0; j < 3; j++) {
      kvb_subgen_slot(m, j, &sk, &sv, &pos);
      nulls &= pos == UINT64_MAX && !sk && !sv;
    }
    CHECK(rc == 0 && kvb_subgen_mu(m) == 0 && nulls && z[0] == 0 && z[1] == 0,
          "subgen.all_zero_values", "rc %d µ %g z (%g, %g) nulls %d", rc, kvb_subgen_mu(m), z[0],
          z[1], nulls);
    double k[2] = {5, 5}, v[2] = {0, 2};
    kvb_method_update(m, k, 2, v, 2);
    int all = 1;
    for (size_t j = 0; j < 3; j++) {
      kvb_subgen_slot(m, j, NULL, NULL, &pos);
      all &= pos == 10;
    }
    CHECK(all && kvb_subgen_mu(m) == 4, "subgen.first_nonzero_fills_slots", "µ = %g",
          kvb_subgen_mu(m));
    kvb_method_free(m);
  }

  /* Identical keys: one cluster with n_1 = n, every sample the key. */
  {
    kvb_method *m = make(rng, 4, 1, 1e-9, 3, 2);
    double k[4] = {1, 2, 3, 4}, v = 1, q[4] = {0.1, 0, 0, 0}, z;
    for (int i = 0; i < 50; i++) kvb_method_update(m, k, 4, &v, 1);
    uint64_t cnt;
    const double *S;
    kvb_subgen_cluster(m, 0, NULL, &cnt, &S, NULL, NULL);
    int eq = 1;
    for (int j = 0; j < 3; j++) eq &= memcmp(S + 4 * j, k, sizeof k) == 0;
    kvb_method_query(m, q, 4, &z, 1);
    CHECK(kvb_subgen_num_clusters(m) == 1 && cnt == 50 && eq && fabs(z - 1) <= 1e-15,
          "subgen.identical_keys", "m′ = %zu, n_1 = %llu, z = %.17g", kvb_subgen_num_clusters(m),
          (unsigned long long)cnt, z);
    kvb_method_free(m);
  }

  /* Query orthogonal to every key: every score is 0, so τ = Σ n_i = n and
   * z = (µ/s)·Σ_slots v/‖v‖² (000 Alg. 1 lines 28-29 with exp(0) = 1). */
  {
    enum { N = 40, S = 3 };
    kvb_method *m = make(rng, 3, 2, 0.3, 2, S);
    double q[3] = {0, 0, 2.5};
    for (int i = 0; i < N; i++) {
      double k[3] = {gsl_rng_uniform(rng), gsl_rng_uniform(rng), 0}, v[2];
      kvb_rand_gaussian_vec(rng, v, 2, 1.0);
      kvb_method_update(m, k, 3, v, 2);
    }
    double zs[2], tau, shift, z[2], ref[2] = {0, 0};
    int rc = kvb_subgen_query_parts(m, q, zs, &tau, &shift);
    rc |= kvb_method_query(m, q, 3, z, 2);
    for (size_t j = 0; j < S; j++) {
      const double *v;
      kvb_subgen_slot(m, j, NULL, &v, NULL);
      double v2 = v[0] * v[0] + v[1] * v[1];
      for (int c = 0; c < 2; c++) ref[c] += kvb_subgen_mu(m) / S * v[c] / v2;
    }
    double e = fmax(fabs(z[0] - ref[0] / N), fabs(z[1] - ref[1] / N));
    CHECK(rc == 0 && shift == 0 && fabs(tau - N) <= 1e-13 * N &&
              e <= 1e-13 * fmax(1, fabs(ref[0] / N) + fabs(ref[1] / N)),
          "subgen.orthogonal_query", "shift %g τ %.17g (n = %d), z error %.3g", shift, tau, N, e);
    kvb_method_free(m);
  }

  /* Bad input on a live sketch: code, message, and nothing changed. */
  {
    kvb_method *m = make(rng, 3, 2, 0.8, 2, 3);
    double q[3] = {0.2, -0.1, 0.5};
    for (int i = 0; i < 20; i++) {
      double k[3], v[2];
      kvb_rand_gaussian_vec(rng, k, 3, 1.0);
      kvb_rand_gaussian_vec(rng, v, 2, 1.0);
      kvb_method_update(m, k, 3, v, 2);
    }
    snapshot before, after;
    snap(m, q, &before);
    double k[3] = {0.1, 0.2, 0.3}, v[2] = {1, 1}, z[2];
    double knan[3] = {0.1, NAN, 0.3}, kinf[3] = {INFINITY, 0, 0}, vnan[2] = {NAN, 1},
           vinf[2] = {1, -INFINITY}, qnan[3] = {0, 0, NAN}, qinf[3] = {-INFINITY, 0, 0};
    /* Each bad call: the right code, a message naming the problem, and the sketch unchanged
     * (snapshot after every call, so one call's damage is not hidden by another's). */
#define BAD(name, call, want, needle)                                                         \
  do {                                                                                        \
    int rc_ = (call);                                                                         \
    snap(m, q, &after);                                                                       \
    CHECK(rc_ == (want) && msg_has(needle) && same(&before, &after), name,                   \
          "got %s '%s' (want %s naming '%s'), sketch %s", kvb_status_name(rc_),               \
          kvb_strerror_last(), kvb_status_name(want), needle,                                 \
          same(&before, &after) ? "unchanged" : "CHANGED");                                   \
  } while (0)
    BAD("subgen.bad.key_nan", kvb_method_update(m, knan, 3, v, 2), KVB_EDOM, "key has a NaN or Inf");
    BAD("subgen.bad.key_inf", kvb_method_update(m, kinf, 3, v, 2), KVB_EDOM, "key has a NaN or Inf");
    BAD("subgen.bad.value_nan", kvb_method_update(m, k, 3, vnan, 2), KVB_EDOM,
        "value has a NaN or Inf");
    BAD("subgen.bad.value_inf", kvb_method_update(m, k, 3, vinf, 2), KVB_EDOM,
        "value has a NaN or Inf");
    BAD("subgen.bad.query_nan", kvb_method_query(m, qnan, 3, z, 2), KVB_EDOM,
        "query has a NaN or Inf");
    BAD("subgen.bad.query_inf", kvb_method_query(m, qinf, 3, z, 2), KVB_EDOM,
        "query has a NaN or Inf");
    BAD("subgen.bad.key_dim", kvb_method_update(m, k, 2, v, 2), KVB_EDIM, "dimensions 2/2");
    BAD("subgen.bad.value_dim", kvb_method_update(m, k, 3, v, 1), KVB_EDIM, "dimensions 3/1");
    BAD("subgen.bad.query_dim", kvb_method_query(m, q, 4, z, 2), KVB_EDIM, "dimensions 4/2");
    BAD("subgen.bad.output_dim", kvb_method_query(m, q, 3, z, 3), KVB_EDIM, "dimensions 3/3");
    BAD("subgen.bad.null_key", kvb_method_update(m, NULL, 3, v, 2), KVB_ENULL, "NULL");
    BAD("subgen.bad.null_value", kvb_method_update(m, k, 3, NULL, 2), KVB_ENULL, "NULL");
    BAD("subgen.bad.null_method", kvb_method_update(NULL, k, 3, v, 2), KVB_ENULL, "NULL");
    BAD("subgen.bad.null_query", kvb_method_query(m, NULL, 3, z, 2), KVB_ENULL, "NULL");
    BAD("subgen.bad.null_output", kvb_method_query(m, q, 3, NULL, 2), KVB_ENULL, "NULL");
    BAD("subgen.bad.parts_null", kvb_subgen_query_parts(m, q, NULL, NULL, NULL), KVB_ENULL,
        "NULL");
    BAD("subgen.bad.cluster_index", kvb_subgen_cluster(m, 1000, NULL, NULL, NULL, NULL, NULL),
        KVB_EINVAL, "cluster 1000");
    BAD("subgen.bad.slot_index", kvb_subgen_slot(m, 3, NULL, NULL, NULL), KVB_EINVAL, "slot 3");
#undef BAD
    /* And the sketch still works. */
    int rc = kvb_method_update(m, k, 3, v, 2);
    CHECK(rc == 0 && m->n == before.n + 1, "subgen.bad.then_valid_update", "rc %d", rc);
    kvb_method_free(m);
  }

  /* Bad parameters at creation: an error naming the parameter, and no sketch. */
  {
    struct {
      const char *name;
      const char *assign[5];
      int want;
      const char *needle;
    } cases[] = {
        {"subgen.param.delta_zero", {"delta=0", "t=2", "s=2"}, KVB_EINVAL, "'delta'"},
        {"subgen.param.delta_negative", {"delta=-1", "t=2", "s=2"}, KVB_EINVAL, "'delta'"},
        {"subgen.param.delta_inf", {"delta=inf", "t=2", "s=2"}, KVB_EDOM, "'delta'"},
        {"subgen.param.delta_nan", {"delta=nan", "t=2", "s=2"}, KVB_EDOM, "'delta'"},
        {"subgen.param.delta_missing", {"t=2", "s=2"}, KVB_EINVAL, "'delta' is missing"},
        {"subgen.param.s_zero", {"delta=1", "t=2", "s=0"}, KVB_EINVAL, "'s'"},
        {"subgen.param.t_zero", {"delta=1", "t=0", "s=2"}, KVB_EINVAL, "'t'"},
        {"subgen.param.t_fraction", {"delta=1", "t=1.5", "s=2"}, KVB_EINVAL, "integer"},
        {"subgen.param.s_string", {"delta=1", "t=2", "s=many"}, KVB_EINVAL, "'s'"},
        {"subgen.param.unknown", {"delta=1", "t=2", "s=2", "tau=3"}, KVB_ENOTFOUND, "'tau'"},
        {"subgen.param.unknown_mutant", {"delta=1", "t=2", "s=2", "mutant=nope"}, KVB_ENOTFOUND,
         "mutant 'nope'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      kvb_params p;
      kvb_params_init(&p);
      for (int a = 0; cases[i].assign[a]; a++) kvb_params_parse(&p, cases[i].assign[a]);
      kvb_method_config cfg = {2, 2, 1.0, rng};
      kvb_method *m = (kvb_method *)&cfg; /* must be set to NULL on failure */
      int rc = kvb_method_alloc("subgen", &cfg, &p, &m);
      CHECK(rc == cases[i].want && m == NULL && msg_has(cases[i].needle), cases[i].name,
            "got %s '%s'", kvb_status_name(rc), kvb_strerror_last());
      if (rc == 0) kvb_method_free(m);
    }
    kvb_params p;
    kvb_params_init(&p);
    kvb_params_parse(&p, "delta=1");
    kvb_params_parse(&p, "t=2");
    kvb_params_parse(&p, "s=2");
    kvb_method_config nor = {2, 2, 1.0, NULL}, d0 = {0, 2, 1.0, rng}, sc = {2, 2, NAN, rng};
    kvb_method *m = NULL;
    int rc = kvb_method_alloc("subgen", &nor, &p, &m);
    CHECK(rc == KVB_ENULL && !m && msg_has("generator"), "subgen.param.null_rng", "%s '%s'",
          kvb_status_name(rc), kvb_strerror_last());
    rc = kvb_method_alloc("subgen", &d0, &p, &m);
    CHECK(rc == KVB_EINVAL && !m && msg_has("d_key"), "subgen.param.zero_dim", "%s",
          kvb_status_name(rc));
    rc = kvb_method_alloc("subgen", &sc, &p, &m);
    CHECK(rc == KVB_EINVAL && !m && msg_has("scale"), "subgen.param.bad_scale", "%s",
          kvb_status_name(rc));
    rc = kvb_method_alloc("subgen", NULL, &p, &m);
    CHECK(rc == KVB_ENULL && !m, "subgen.param.null_config", "%s", kvb_status_name(rc));
    rc = kvb_method_alloc("subgen", &d0, &p, NULL);
    CHECK(rc == KVB_ENULL, "subgen.param.null_out", "%s", kvb_status_name(rc));
    rc = kvb_method_alloc("subgenn", &d0, &p, &m);
    CHECK(rc == KVB_ENOTFOUND && msg_has("subgenn"), "subgen.param.unknown_method", "%s",
          kvb_status_name(rc));
    /* Query before any update: the empty context is a state error. */
    kvb_method_config ok = {2, 2, 1.0, rng};
    rc = kvb_method_alloc("subgen", &ok, &p, &m);
    double q[2] = {1, 1}, z[2];
    int rq = kvb_method_query(m, q, 2, z, 2);
    CHECK(rc == 0 && rq == KVB_ESTATE && msg_has("no token"), "subgen.query_before_update",
          "%s", kvb_status_name(rq));
    kvb_method_free(m);
    /* Introspection on a non-SubGen method is an error / zero, never a crash. */
    kvb_method *ex = NULL;
    kvb_method_alloc("exact", &ok, NULL, &ex);
    CHECK(ex && kvb_subgen_num_clusters(ex) == 0 && kvb_subgen_mu(ex) == 0 &&
              kvb_subgen_slot(ex, 0, NULL, NULL, NULL) == KVB_EINVAL,
          "subgen.introspection_other_method", "accepted a non-SubGen method");
    kvb_method_free(ex);
  }
  gsl_rng_free(rng);
  UNIT_EXIT();
}

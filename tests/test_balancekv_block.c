/* test_balancekv_block.c — bad input of balancekv_block / uniform_sample / the C API, hand-checked
 * examples of the walk and the halving rule (003 App. B; the authors' src/balanced_walk.py), and
 * the uniform baseline's Horvitz–Thompson weight m/k. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static kvb_method *mk(const char *name, gsl_rng *r, size_t dk, size_t dv, const char *a1,
                      const char *a2, int *rc) {
  kvb_params p;
  kvb_params_init(&p);
  if (a1) kvb_params_parse(&p, a1);
  if (a2) kvb_params_parse(&p, a2);
  kvb_method_config cfg = {dk, dv, 1.0 / sqrt((double)dk), r};
  kvb_method *m = NULL;
  *rc = kvb_method_alloc(name, &cfg, &p, &m);
  return m;
}

static int same(const size_t *a, const double *w, const size_t *ea, const double *ew, size_t h) {
  for (size_t i = 0; i < h; i++)
    if (a[i] != ea[i] || w[i] != ew[i]) return 0;
  return 1;
}

static void halving_examples(void) {
  size_t keep[8];
  double mult[8];
  /* + + − + − −: h=3, + reaches 3 at 3, − at 5; c=5, s_c=−: the +'s at 0,1,3 get ×2 */
  const int8_t a[] = {1, 1, -1, 1, -1, -1};
  size_t h = kvb_bkvb_halve(6, a, 0, keep, mult);
  CHECK(h == 3 && same(keep, mult, (size_t[]){0, 1, 3}, (double[]){2, 2, 2}, 3),
        "halve ++-+-- keeps 0,1,3 ×2", "h=%zu keep %zu %zu %zu", h, keep[0], keep[1], keep[2]);
  /* + + + + − +: + reaches 3 at 2, − never (0); c=2, s_c=+: no − at <=2; tail 3,4,5 ×1 */
  const int8_t b[] = {1, 1, 1, 1, -1, 1};
  h = kvb_bkvb_halve(6, b, 0, keep, mult);
  CHECK(h == 3 && same(keep, mult, (size_t[]){3, 4, 5}, (double[]){1, 1, 1}, 3),
        "halve ++++-+ keeps the tail 3,4,5 ×1", "h=%zu keep %zu %zu %zu", h, keep[0], keep[1],
        keep[2]);
  /* m=5 odd, + − − + +: h=2, − reaches 2 at 2, + at 3; c=3, s_c=+: − at 1,2 ×2 (4 dropped) */
  const int8_t c[] = {1, -1, -1, 1, 1};
  h = kvb_bkvb_halve(5, c, 0, keep, mult);
  CHECK(h == 2 && same(keep, mult, (size_t[]){1, 2}, (double[]){2, 2}, 2),
        "halve +--++ (odd) keeps 1,2 ×2", "h=%zu keep %zu %zu", h, keep[0], keep[1]);
  /* − − + + + +: − never reaches 3 (0), + at 4; c=4: − at 0,1 ×2 then 5 ×1 */
  const int8_t d[] = {-1, -1, 1, 1, 1, 1};
  h = kvb_bkvb_halve(6, d, 0, keep, mult);
  CHECK(h == 3 && same(keep, mult, (size_t[]){0, 1, 5}, (double[]){2, 2, 1}, 3),
        "halve --++++ keeps 0,1 ×2 then 5 ×1", "h=%zu keep %zu %zu %zu", h, keep[0], keep[1],
        keep[2]);
  /* + −: h=1, + at 0, − at 1; c=1, s_c=−: 0 ×2 */
  const int8_t e[] = {1, -1};
  h = kvb_bkvb_halve(2, e, 0, keep, mult);
  CHECK(h == 1 && keep[0] == 0 && mult[0] == 2, "halve +- keeps 0 ×2", "h=%zu", h);
  /* + +: h=1, + at 0, − never (0); c=0, s_c=+: tail 1 ×1 */
  const int8_t f[] = {1, 1};
  h = kvb_bkvb_halve(2, f, 0, keep, mult);
  CHECK(h == 1 && keep[0] == 1 && mult[0] == 1, "halve ++ keeps 1 ×1", "h=%zu", h);
  const int8_t g[] = {1, 0, 1};
  CHECK(kvb_bkvb_halve(3, g, 0, keep, mult) == 0 && kvb_bkvb_halve(1, f, 0, keep, mult) == 0,
        "halve rejects a sign 0 and m < 2", "accepted");
}

/* Walk, by hand. Keys (1-d) 1, 3: block mean 2, k̃ = −1, +1, ⟨k̃0,k̃1⟩ = −1; values 1, 2:
 * K01 = e^{−1}·(2 + 0.025) = 0.744946…; γ = 0.1: p1 = ½ − 0.0744946 = 0.4255054.
 * u1 = 0.42 → s = (+,+) → keep 1 ×1;  u1 = 0.43 → s = (+,−) → keep 0 ×2. */
static void walk_example(void) {
  const double K[] = {1, 3}, V[] = {1, 2};
  kvb_bkvb_opts o;
  kvb_bkvb_opts_default(&o);
  o.b = 8, o.T = 1, o.gamma = 0.1;
  double u0[] = {0.9, 0.42}, u1[] = {0.9, 0.43};
  const double *ua[] = {u0}, *ub[] = {u1};
  size_t idx = 99;
  double w = 0;
  kvb_bkvb_stats st = {0};
  int rc = kvb_bkvb_compress(1, 2, 1, 1, K, V, &o, ua, NULL, &idx, &w, &st);
  CHECK(rc == 0 && idx == 1 && w == 1 && st.steps == 1 && st.clipped0 + st.clipped1 == 0,
        "walk u=0.42 < p=0.4255: (+,+), keeps 1 ×1", "rc=%d idx=%zu w=%g", rc, idx, w);
  rc = kvb_bkvb_compress(1, 2, 1, 1, K, V, &o, ub, NULL, &idx, &w, NULL);
  CHECK(rc == 0 && idx == 0 && w == 2, "walk u=0.43 > p=0.4255: (+,−), keeps 0 ×2",
        "rc=%d idx=%zu w=%g", rc, idx, w);
  o.gamma = 100; /* p = ½ − 74.5 <= 0: clipped */
  kvb_bkvb_stats st2 = {0};
  rc = kvb_bkvb_compress(1, 2, 1, 1, K, V, &o, ua, NULL, &idx, &w, &st2);
  CHECK(rc == 0 && st2.clipped0 == 1 && idx == 0 && w == 2, "walk γ=100: p clipped to 0",
        "rc=%d clipped0=%llu", rc, (unsigned long long)st2.clipped0);
  /* γ = 0: p = ½ everywhere; s = (+, +, −, +) from u = (·, .2, .7, .3): h = 2, c = 1 → tail 2,3 */
  const double K4[] = {0, 1, 2, 3}, V4[] = {1, 1, 1, 1};
  double u4[] = {0.5, 0.2, 0.7, 0.3};
  const double *uc[] = {u4};
  size_t i4[2];
  double w4[2];
  o.gamma = 0;
  rc = kvb_bkvb_compress(1, 4, 1, 1, K4, V4, &o, uc, NULL, i4, w4, NULL);
  CHECK(rc == 0 && i4[0] == 2 && i4[1] == 3 && w4[0] == 1 && w4[1] == 1,
        "walk γ=0 (++-+): keeps 2,3 ×1", "rc=%d %zu %zu", rc, i4[0], i4[1]);
}

/* float32 path: the hand example gives the same signs; bad input as in double. */
static void f32_examples(void) {
  const float K[] = {1, 3}, V[] = {1, 2};
  kvb_bkvb_opts o;
  kvb_bkvb_opts_default(&o);
  o.b = 8, o.T = 1, o.gamma = 0.1;
  double u0[] = {0.9, 0.42}, u1[] = {0.9, 0.43};
  const double *ua[] = {u0}, *ub[] = {u1};
  size_t idx = 99;
  double w = 0;
  int rc = kvb_bkvb_compress_f32(1, 2, 1, 1, K, V, &o, ua, NULL, &idx, &w, NULL);
  CHECK(rc == 0 && idx == 1 && w == 1, "f32 walk u=0.42: keeps 1 ×1", "rc=%d idx=%zu", rc, idx);
  rc = kvb_bkvb_compress_f32(1, 2, 1, 1, K, V, &o, ub, NULL, &idx, &w, NULL);
  CHECK(rc == 0 && idx == 0 && w == 2, "f32 walk u=0.43: keeps 0 ×2", "rc=%d idx=%zu", rc, idx);
  const float Kn[] = {1, NAN};
  idx = 99;
  rc = kvb_bkvb_compress_f32(1, 2, 1, 1, Kn, V, &o, ua, NULL, &idx, &w, NULL);
  CHECK(rc == KVB_EDOM && idx == 99, "f32 NaN key -> KVB_EDOM, nothing written", "rc=%d", rc);
  o.b = 0;
  rc = kvb_bkvb_compress_f32(1, 2, 1, 1, K, V, &o, ua, NULL, &idx, &w, NULL);
  CHECK(rc == KVB_EINVAL, "f32 b = 0 -> KVB_EINVAL", "rc=%d", rc);
}

/* b = 16, T = 2 on H×n tokens (n·H/4 <= 150 kept) with a non-finite key or value: KVB_EDOM and
 * the outputs untouched, on t threads. */
static int edom_untouched(size_t H, size_t n, size_t d, size_t dv, const double *K,
                          const double *V, const double *const *u, int t) {
  kvb_bkvb_opts o;
  kvb_bkvb_opts_default(&o);
  o.b = 16, o.T = 2, o.threads = t;
  size_t idx[150];
  double w[150];
  int ok = 1;
  for (int k = 0; k < 150; k++) idx[k] = 7, w[k] = -1;
  int rc = kvb_bkvb_compress(H, n, d, dv, K, V, &o, u, NULL, idx, w, NULL);
  for (int k = 0; k < 150; k++) ok &= idx[k] == 7 && w[k] == -1;
  return ok && rc == KVB_EDOM;
}

/* The (head, block) parallel path: indices, weights and every counter identical for threads =
 * 2, 3, 7 to threads = 1, float64 and float32, at shapes where n is not a multiple of b, the
 * tail block has 1 token, H is not a multiple of the thread count, T = 1..3, and through the
 * generator path (uniforms drawn, not supplied). Keys spread enough that the walk is not
 * always clipped (so the signs depend on the sums). */
static void threads_identical(gsl_rng *r) {
  static const struct { size_t H, n, d, dv, b; } sh[] = {
      {3, 1000, 8, 5, 64}, {1, 777, 16, 3, 50}, {5, 301, 4, 4, 7}, {2, 129, 3, 2, 128},
      {4, 513, 6, 6, 256}, {7, 64, 2, 3, 64}};
  size_t diff = 0, cases = 0, clipped = 0, steps = 0;
  for (size_t c = 0; c < sizeof sh / sizeof sh[0]; c++) {
    size_t H = sh[c].H, n = sh[c].n, d = sh[c].d, dv = sh[c].dv;
    double *K = malloc(H * n * d * sizeof *K), *V = malloc(H * n * dv * sizeof *V);
    float *Kf = malloc(H * n * d * sizeof *Kf), *Vf = malloc(H * n * dv * sizeof *Vf);
    for (size_t i = 0; i < H * n * d; i++)
      K[i] = (gsl_rng_uniform(r) - 0.5) * 0.8, Kf[i] = (float)K[i];
    for (size_t i = 0; i < H * n * dv; i++) V[i] = gsl_rng_uniform(r) - 0.5, Vf[i] = (float)V[i];
    double *u[3];
    for (unsigned t = 0; t < 3; t++) {
      u[t] = malloc(H * (n >> t) * sizeof(double));
      for (size_t i = 0; i < H * (n >> t); i++) u[t][i] = gsl_rng_uniform(r);
    }
    size_t *i1 = malloc(H * n * sizeof *i1), *i2 = malloc(H * n * sizeof *i2);
    double *w1 = malloc(H * n * sizeof *w1), *w2 = malloc(H * n * sizeof *w2);
    for (int f32 = 0; f32 < 2; f32++)
      for (unsigned T = 1; T <= 3; T++)
        for (int gen = 0; gen < 2; gen++) {
          kvb_bkvb_opts o;
          kvb_bkvb_opts_default(&o);
          o.b = sh[c].b, o.T = T, o.gamma = 0.5;
          size_t kept = H * (n >> T);
          kvb_bkvb_stats s1 = {0};
          o.threads = 1;
          gsl_rng *g = gsl_rng_alloc(kvb_rng_pcg32);
          gsl_rng_set(g, 1000 + c);
          const double *const *ua = gen ? NULL : (const double *const *)u;
          int rc1 = f32 ? kvb_bkvb_compress_f32(H, n, d, dv, Kf, Vf, &o, ua, g, i1, w1, &s1)
                        : kvb_bkvb_compress(H, n, d, dv, K, V, &o, ua, g, i1, w1, &s1);
          steps += s1.steps, clipped += s1.clipped0 + s1.clipped1;
          /* then threads 2 with the AVX2 and the portable kernels (Gram, packing, expf): the
           * same bits on every CPU, not only for every thread count */
          static const int th[] = {2, 3, 7, 2, 2};
          static const char *simd[] = {NULL, NULL, NULL, "avx2", "generic"};
          for (int t = 0; t < 5; t++) {
            kvb_bkvb_stats s2 = {0};
            o.threads = th[t];
            gsl_rng_set(g, 1000 + c);
            if (simd[t]) setenv("KVBOUND_SIMD", simd[t], 1);
            int rc2 = f32 ? kvb_bkvb_compress_f32(H, n, d, dv, Kf, Vf, &o, ua, g, i2, w2, &s2)
                          : kvb_bkvb_compress(H, n, d, dv, K, V, &o, ua, g, i2, w2, &s2);
            unsetenv("KVBOUND_SIMD");
            int bad = rc1 || rc2 || s1.steps != s2.steps || s1.clipped0 != s2.clipped0 ||
                      s1.clipped1 != s2.clipped1 || s1.nan_p != s2.nan_p || s1.exps != s2.exps;
            for (size_t k = 0; k < kept && !bad; k++) bad = i1[k] != i2[k] || w1[k] != w2[k];
            diff += bad != 0, cases++;
          }
          gsl_rng_free(g);
        }
    for (unsigned t = 0; t < 3; t++) free(u[t]);
    free(K), free(V), free(Kf), free(Vf), free(i1), free(i2), free(w1), free(w2);
  }
  CHECK(diff == 0 && cases == 6 * 2 * 3 * 2 * 5,
        "threads 2, 3, 7 and the AVX2 / portable kernels give the indices, weights and counters "
        "of threads 1 (f64, f32, T 1..3)",
        "%zu of %zu cases differ", diff, cases);
  /* the comparison is not vacuous: some steps are clipped, most are not */
  CHECK(steps > 0 && clipped < steps / 2, "threads test: the walk is mostly unclipped",
        "clipped %zu of %zu", clipped, steps);

  /* A non-finite value in a late block of a late head, found by a worker while round 0 gathers:
   * KVB_EDOM for every thread count, nothing written. */
  const size_t H = 3, n = 200, d = 4, dv = 2;
  double K[3 * 200 * 4], V[3 * 200 * 2], u0[600], u1[300];
  for (size_t i = 0; i < H * n * d; i++) K[i] = gsl_rng_uniform(r);
  for (size_t i = 0; i < H * n * dv; i++) V[i] = gsl_rng_uniform(r);
  for (size_t i = 0; i < 600; i++) u0[i] = gsl_rng_uniform(r);
  for (size_t i = 0; i < 300; i++) u1[i] = gsl_rng_uniform(r);
  const double *u[] = {u0, u1};
  V[(2 * n + 190) * dv + 1] = INFINITY;
  int ok = 1;
  for (int t = 1; t <= 4; t++) ok &= edom_untouched(H, n, d, dv, K, V, u, t);
  CHECK(ok, "non-finite value found by a worker -> KVB_EDOM, nothing written, threads 1..4",
        "%s", "");
  V[(2 * n + 190) * dv + 1] = 0.5;
  ok = 1;
  for (int bad = 0; bad < 2; bad++)
    for (int t = 1; t <= 3; t++) {
      K[(1 * n + 77) * d + 3] = bad ? -INFINITY : NAN; /* head 1, block 4 of 13 */
      ok &= edom_untouched(H, n, d, dv, K, V, u, t);
    }
  K[(1 * n + 77) * d + 3] = 0.25;
  /* finite keys whose block sum overflows (the gather's quick test sees an infinite sum) are
   * still accepted: the rows are then checked one by one */
  {
    float Kb[4 * 2], Vb[4 * 1] = {1, 2, 3, 4};
    for (int i = 0; i < 8; i++) Kb[i] = (i % 2) ? 1.0f : 3e38f;
    double ub0[4] = {0.1, 0.2, 0.3, 0.4};
    const double *ub[] = {ub0};
    kvb_bkvb_opts ob;
    kvb_bkvb_opts_default(&ob);
    ob.b = 4, ob.T = 1;
    size_t ib[2];
    double wb[2];
    CHECK(kvb_bkvb_compress_f32(1, 4, 2, 1, Kb, Vb, &ob, ub, NULL, ib, wb, NULL) == 0,
          "f32 keys near FLT_MAX (sum overflows) are finite input: accepted", "rejected");
  }
  kvb_bkvb_opts o;
  kvb_bkvb_opts_default(&o);
  o.b = 16, o.T = 2, o.threads = 2;
  size_t idx[150];
  double w[150];
  ok &= kvb_bkvb_compress(H, n, d, dv, K, V, &o, u, NULL, idx, w, NULL) == 0;
  CHECK(ok, "NaN / -Inf key found by a worker -> KVB_EDOM, nothing written; finite again -> 0",
        "%s", "");
}

static void api_bad_input(void) {
  const double K[8] = {1, 2, 3, 4, 5, 6, 7, 8}, V[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  double u0[8] = {.1, .2, .3, .4, .5, .6, .7, .8}, u1[4] = {.1, .2, .3, .4};
  const double *u[] = {u0, u1};
  kvb_bkvb_opts o;
  kvb_bkvb_opts_default(&o);
  size_t idx[4] = {7, 7, 7, 7};
  double w[4] = {-1, -1, -1, -1};
  o.b = 0;
  int rc = kvb_bkvb_compress(1, 8, 1, 1, K, V, &o, u, NULL, idx, w, NULL);
  CHECK(rc == KVB_EINVAL && idx[0] == 7 && w[0] == -1, "api b = 0 -> KVB_EINVAL, nothing written",
        "rc=%d", rc);
  o.b = 4, o.T = 4; /* 8 < 2^4 */
  rc = kvb_bkvb_compress(1, 8, 1, 1, K, V, &o, u, NULL, idx, w, NULL);
  CHECK(rc == KVB_EINVAL && idx[0] == 7, "api T > log2 n -> KVB_EINVAL", "rc=%d", rc);
  o.T = 2, o.c0 = -0.1;
  rc = kvb_bkvb_compress(1, 8, 1, 1, K, V, &o, u, NULL, idx, w, NULL);
  CHECK(rc == KVB_EINVAL, "api c0 < 0 -> KVB_EINVAL", "rc=%d", rc);
  o.c0 = 0.025, o.gamma = NAN;
  rc = kvb_bkvb_compress(1, 8, 1, 1, K, V, &o, u, NULL, idx, w, NULL);
  CHECK(rc == KVB_EINVAL, "api gamma NaN -> KVB_EINVAL", "rc=%d", rc);
  o.gamma = 4;
  double Kn[8];
  memcpy(Kn, K, sizeof Kn);
  Kn[3] = NAN;
  rc = kvb_bkvb_compress(1, 8, 1, 1, Kn, V, &o, u, NULL, idx, w, NULL);
  CHECK(rc == KVB_EDOM && idx[0] == 7, "api NaN key -> KVB_EDOM", "rc=%d", rc);
  u1[2] = 1.0;
  rc = kvb_bkvb_compress(1, 8, 1, 1, K, V, &o, u, NULL, idx, w, NULL);
  CHECK(rc == KVB_EDOM, "api uniform 1.0 (outside [0,1)) -> KVB_EDOM", "rc=%d", rc);
  u1[2] = 0.3;
  rc = kvb_bkvb_compress(1, 8, 1, 1, K, V, &o, NULL, NULL, idx, w, NULL);
  CHECK(rc == KVB_ENULL, "api no uniforms and no generator -> KVB_ENULL", "rc=%d", rc);
  rc = kvb_bkvb_compress(1, 8, 1, 1, K, V, &o, u, NULL, idx, w, NULL);
  CHECK(rc == 0 && idx[0] < 8 && (w[0] == 1 || w[0] == 2 || w[0] == 4), "api valid call works",
        "rc=%d", rc);
}

static void method_bad_input(gsl_rng *r) {
  int rc;
  kvb_method *m = mk("balancekv_block", r, 4, 2, "b=0", NULL, &rc);
  CHECK(!m && rc == KVB_EINVAL, "b = 0 rejected", "rc=%d", rc);
  m = mk("balancekv_block", r, 4, 2, "c0=-0.5", NULL, &rc);
  CHECK(!m && rc == KVB_EINVAL, "c0 < 0 rejected", "rc=%d", rc);
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "gamma", NAN);
  kvb_method_config cfg = {4, 2, 0.5, r};
  rc = kvb_method_alloc("balancekv_block", &cfg, &p, &m);
  CHECK(rc != 0 && !m, "gamma = NaN rejected", "rc=%d", rc);
  m = mk("balancekv_block", r, 4, 2, "denominator=both", NULL, &rc);
  CHECK(!m && rc == KVB_EINVAL, "denominator=both rejected", "rc=%d", rc);
  m = mk("uniform_sample", r, 4, 2, "T=-1", NULL, &rc);
  CHECK(!m && rc != 0, "uniform_sample T = -1 rejected", "rc=%d", rc);
  kvb_method_config nog = {4, 2, 0.5, NULL};
  kvb_params_init(&p);
  rc = kvb_method_alloc("balancekv_block", &nog, &p, &m);
  CHECK(rc == KVB_ENULL && !m, "no generator rejected", "rc=%d", rc);

  /* T larger than log2 of the middle: detected at query, state unchanged */
  m = mk("balancekv_block", r, 4, 2, "T=4", "f=2", &rc);
  kvb_method *u = mk("uniform_sample", r, 4, 2, "T=4", "f=2", &rc);
  double k[4] = {1, 0, 0, 0}, v[2] = {1, 2}, q[4] = {1, 1, 1, 1}, z[2] = {-7, -7};
  for (int i = 0; i < 40; i++) { /* n = 40, f = 2, w = 32 (default): middle 6 < 16 */
    k[i % 4] += 0.5;
    kvb_method_update(m, k, 4, v, 2);
    kvb_method_update(u, k, 4, v, 2);
  }
  kvb_memory mem0, mem1;
  kvb_method_memory(m, &mem0);
  rc = kvb_method_query(m, q, 4, z, 2);
  kvb_method_memory(m, &mem1);
  CHECK(rc == KVB_EINVAL && z[0] == -7 && m->n == 40 && mem0.vectors == mem1.vectors &&
            kvb_bkvb_kept_set(m, NULL, NULL, NULL) == KVB_ESTATE,
        "T > log2(middle) -> KVB_EINVAL at query, state unchanged", "rc=%d", rc);
  rc = kvb_method_query(u, q, 4, z, 2);
  CHECK(rc == KVB_EINVAL && z[0] == -7, "uniform_sample T > log2(middle) -> KVB_EINVAL", "rc=%d",
        rc);
  /* dimension mismatch and NaN through the generic layer; state unchanged */
  rc = kvb_method_update(m, k, 3, v, 2);
  CHECK(rc == KVB_EDIM && m->n == 40, "update dim mismatch -> KVB_EDIM", "rc=%d", rc);
  k[1] = NAN;
  rc = kvb_method_update(m, k, 4, v, 2);
  CHECK(rc == KVB_EDOM && m->n == 40, "update NaN key -> KVB_EDOM", "rc=%d", rc);
  k[1] = 0;
  rc = kvb_method_query(m, q, 4, z, 3);
  CHECK(rc == KVB_EDIM, "query dim mismatch -> KVB_EDIM", "rc=%d", rc);
  double zp[2], zc[2];
  rc = kvb_bkvb_query_both(m, q, 4, zp, zc, 1);
  CHECK(rc == KVB_EDIM, "query_both dim mismatch -> KVB_EDIM", "rc=%d", rc);
  /* more tokens: the middle reaches 16 and the same method now answers */
  for (int i = 0; i < 10; i++) kvb_method_update(m, k, 4, v, 2);
  rc = kvb_method_query(m, q, 4, z, 2);
  size_t cnt = 0;
  kvb_bkvb_kept_set(m, &cnt, NULL, NULL);
  CHECK(rc == 0 && cnt == 1 && fabs(z[0] - 1) < 1e-12 && fabs(z[1] - 2) < 1e-12,
        "middle 16, T=4: one kept token, constant values reproduced", "rc=%d cnt=%zu z=%g %g", rc,
        cnt, z[0], z[1]);
  kvb_method_free(m);
  kvb_method_free(u);
}

/* The uniform baseline's weight (method_uniform_sample.c): k = ⌊m/2^T⌋ kept, each weighted m/k.
 * All keys 0 (every score 0), first/recent values 0, middle values (1, 3): whichever k tokens are
 * drawn, τ̂ = f + w + k·(m/k) = f + w + m and ẑ = m·(1, 3) exactly — the exact sums — while the
 * old weight 2^T gives f + w + k·2^T. Here f = w = 2, m = 7, T = 1: k = 3, weight 7/3. */
static void usample_weight_examples(gsl_rng *r) {
  int rc;
  for (int mut = 0; mut < 2; mut++) {
    kvb_params p;
    kvb_params_init(&p);
    kvb_params_parse(&p, "T=1"), kvb_params_parse(&p, "f=2"), kvb_params_parse(&p, "w=2");
    if (mut) kvb_params_parse(&p, "mutant=weight_2T");
    kvb_method_config cfg = {4, 2, 0.5, r};
    kvb_method *u = NULL;
    rc = kvb_method_alloc("uniform_sample", &cfg, &p, &u);
    if (rc) {
      CHECK(0, "uniform_sample alloc", "rc=%d", rc);
      return;
    }
    double k[4] = {0, 0, 0, 0}, v0[2] = {0, 0}, v1[2] = {1, 3}, q[4] = {0.3, -1, 2, 0.5};
    for (int i = 0; i < 11; i++) kvb_method_update(u, k, 4, (i >= 2 && i < 9) ? v1 : v0, 2);
    double num[2] = {0, 0}, den = 0, z[2];
    rc = kvb_usample_sums(u, q, 4, 0.0, num, 2, &den);
    double W = kvb_usample_weight(u);
    kvb_method_query(u, q, 4, z, 2);
    if (!mut)
      CHECK(rc == 0 && fabs(W - 7.0 / 3) < 1e-15 && fabs(den - 11) < 1e-12 &&
                fabs(num[0] - 7) < 1e-12 && fabs(num[1] - 21) < 1e-12 &&
                fabs(z[0] - 7.0 / 11) < 1e-15 && fabs(z[1] - 21.0 / 11) < 1e-15,
            "uniform_sample m=7 T=1: weight 7/3, τ̂ = 11, ẑ = (7, 21), z = exact",
            "rc=%d W=%g den=%g num=%g %g z=%g %g", rc, W, den, num[0], num[1], z[0], z[1]);
    else
      CHECK(rc == 0 && W == 2 && fabs(den - 10) < 1e-12 && fabs(z[0] - 0.6) < 1e-15,
            "uniform_sample mutant weight_2T: weight 2, τ̂ = 10 (biased low), z = 0.6",
            "rc=%d W=%g den=%g z=%g", rc, W, den, z[0]);
    /* bad input of the sums accessor: error, outputs untouched */
    double keep = num[0];
    CHECK(kvb_usample_sums(u, q, 3, 0.0, num, 2, &den) == KVB_EDIM && num[0] == keep,
          "usample_sums dim mismatch -> KVB_EDIM", "%s", "");
    CHECK(kvb_usample_sums(u, q, 4, NAN, num, 2, &den) == KVB_EDOM && num[0] == keep,
          "usample_sums NaN shift -> KVB_EDOM", "%s", "");
    CHECK(kvb_usample_sums(u, NULL, 4, 0.0, num, 2, &den) == KVB_ENULL,
          "usample_sums NULL query -> KVB_ENULL", "%s", "");
    kvb_method_free(u);
  }
  kvb_method *b = mk("balancekv_block", r, 4, 2, NULL, NULL, &rc);
  double q[4] = {0}, num[2], den;
  CHECK(b && kvb_usample_sums(b, q, 4, 0.0, num, 2, &den) == KVB_EINVAL &&
            isnan(kvb_usample_weight(b)),
        "usample_sums on balancekv_block -> KVB_EINVAL", "%s", "");
  kvb_method_free(b);
}

int main(void) {
  gsl_rng *r = gsl_rng_alloc(kvb_rng_pcg32);
  gsl_rng_set(r, 12345);
  halving_examples();
  walk_example();
  api_bad_input();
  f32_examples();
  threads_identical(r);
  method_bad_input(r);
  usample_weight_examples(r);
  gsl_rng_free(r);
  UNIT_EXIT();
}

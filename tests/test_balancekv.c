/* test_balancekv.c — 003 Algorithms 1-4: bad input (status, message, object unchanged) and
 * exact facts (bucket boundary, caller-supplied uniforms, no compression before t tokens). */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <string.h>

static kvb_method *make(const char *name, gsl_rng *rng, size_t dk, size_t dv, const char *const *a,
                        int *rc) {
  kvb_params p;
  kvb_params_init(&p);
  for (size_t i = 0; a[i]; i++) kvb_params_parse(&p, a[i]);
  kvb_method_config cfg = {dk, dv, 1.0 / sqrt((double)dk), rng};
  kvb_method *m = NULL;
  *rc = kvb_method_alloc(name, &cfg, &p, &m);
  return m;
}

int main(void) {
  gsl_rng *rng = kvb_rng_alloc_substream(11, 0);
  int rc;
  /* Parameters. */
  static const char *const c0[] = {"r=2", "t=8", "T=2", "eps=0.5", "n=32", "c=0", NULL};
  kvb_method *m = make("balancekv", rng, 4, 3, c0, &rc);
  CHECK(!m && rc == KVB_EINVAL, "balancekv.bad.c_zero", "rc %d", rc);
  static const char *const c1[] = {"r=2", "t=8", "T=2", "eps=0.5", "n=32", "c=-3", NULL};
  m = make("balancekv", rng, 4, 3, c1, &rc);
  CHECK(!m && rc == KVB_EINVAL, "balancekv.bad.c_negative", "rc %d", rc);
  static const char *const t0[] = {"r=2", "t=0", "T=2", "eps=0.5", "n=32", NULL};
  m = make("balancekv", rng, 4, 3, t0, &rc);
  CHECK(!m && rc == KVB_EINVAL, "balancekv.bad.t_zero", "rc %d", rc);
  static const char *const t1[] = {"r_key=2", "r_value=1", "t=0", "T=2", NULL};
  m = make("merge_reduce", rng, 4, 3, t1, &rc);
  CHECK(!m && rc == KVB_EINVAL, "merge_reduce.bad.t_zero", "rc %d", rc);
  static const char *const miss[] = {"t=8", "T=2", "eps=0.5", "n=32", NULL};
  m = make("balancekv", rng, 4, 3, miss, &rc);
  CHECK(!m && rc == KVB_EINVAL, "balancekv.bad.r_missing", "rc %d", rc);
  /* 003 Alg. 1 line 8 needs the stream length n: no silent fallback to the tokens so far. */
  static const char *const nmiss[] = {"r=2", "t=8", "T=2", "eps=0.5", NULL};
  m = make("balancekv", rng, 4, 3, nmiss, &rc);
  CHECK(!m && rc == KVB_EINVAL && strstr(kvb_strerror_last(), "'n'"), "balancekv.bad.n_missing",
        "rc %d %s", rc, kvb_strerror_last());

  /* A good method; bad updates leave it unchanged (memory, n, query output). */
  static const char *const ok[] = {"r=2", "t=4", "T=2", "eps=0.5", "n=16", NULL};
  m = make("balancekv", rng, 4, 3, ok, &rc);
  CHECK(m && rc == KVB_OK, "balancekv.alloc", "rc %d %s", rc, kvb_strerror_last());
  if (!m) return 1;
  double k[4] = {0.5, -0.2, 0.1, 0.3}, v[3] = {1, 2, -1}, q[4] = {0.1, 0.2, 0.3, -0.4};
  for (int i = 0; i < 6; i++) {
    k[0] = 0.1 * i;
    kvb_method_update(m, k, 4, v, 3);
  }
  double z0[3], z1[3];
  kvb_memory mem0, mem1;
  kvb_method_memory(m, &mem0);
  kvb_method_query(m, q, 4, z0, 3);
  uint64_t n0 = m->n;
  double kn[4] = {NAN, 0, 0, 0}, vbig[3] = {1, INFINITY, 0}, kbig[4] = {3, 0, 0, 0};
  int r1 = kvb_method_update(m, kn, 4, v, 3);
  int r2 = kvb_method_update(m, k, 4, vbig, 3);
  int r3 = kvb_method_update(m, k, 3, v, 3);
  int r4 = kvb_method_update(m, k, 4, v, 2);
  int r5 = kvb_method_update(m, kbig, 4, v, 3); /* ‖k‖ = 3 > r = 2 */
  char msg5[256];
  snprintf(msg5, sizeof msg5, "%s", kvb_strerror_last());
  int r6 = kvb_method_update(m, NULL, 4, v, 3);
  kvb_method_memory(m, &mem1);
  kvb_method_query(m, q, 4, z1, 3);
  CHECK(r1 == KVB_EDOM && r2 == KVB_EDOM, "balancekv.bad.nan_inf", "%d %d", r1, r2);
  CHECK(r3 == KVB_EDIM && r4 == KVB_EDIM, "balancekv.bad.dim", "%d %d", r3, r4);
  CHECK(r5 == KVB_EINVAL && strstr(msg5, "exceeds r"), "balancekv.bad.key_norm",
        "%d %s", r5, msg5);
  CHECK(r6 == KVB_ENULL, "balancekv.bad.null", "%d", r6);
  CHECK(m->n == n0 && mem0.vectors == mem1.vectors && mem0.bytes == mem1.bytes &&
            memcmp(z0, z1, sizeof z0) == 0,
        "balancekv.bad.unchanged", "state changed by rejected updates");
  double zq[3];
  int rq = kvb_method_query(m, q, 5, zq, 3);
  CHECK(rq == KVB_EDIM, "balancekv.bad.query_dim", "%d", rq);

  /* Zero-norm values: no numerator bucket, counted in the denominator. */
  double v0[3] = {0, 0, 0};
  kvb_balancekv_info inf0, inf1;
  kvb_balancekv_get_info(m, &inf0);
  const kvb_mr *den = kvb_balancekv_denominator(m);
  uint64_t dj = den->j;
  rc = kvb_method_update(m, k, 4, v0, 3);
  kvb_balancekv_get_info(m, &inf1);
  CHECK(rc == KVB_OK && inf1.zero_values == inf0.zero_values + 1 && inf1.buckets == inf0.buckets &&
            den->j == dj + 1,
        "balancekv.zero_value", "rc %d zero %llu buckets %zu→%zu den %llu", rc,
        (unsigned long long)inf1.zero_values, inf0.buckets, inf1.buckets,
        (unsigned long long)den->j);
  kvb_method_free(m);

  /* merge_reduce: a value beyond r_value is rejected and nothing changes. */
  static const char *const mrp[] = {"r_key=2", "r_value=1", "t=4", "T=2", NULL};
  m = make("merge_reduce", rng, 4, 3, mrp, &rc);
  double vs[3] = {0.5, 0.1, 0.2}, vbigv[3] = {2, 0, 0};
  for (int i = 0; i < 5; i++) kvb_method_update(m, k, 4, vs, 3);
  kvb_method_memory(m, &mem0);
  n0 = m->n;
  int rv = kvb_method_update(m, k, 4, vbigv, 3);
  kvb_method_memory(m, &mem1);
  CHECK(rv == KVB_EINVAL && m->n == n0 && mem0.vectors == mem1.vectors &&
            kvb_mr_stored(kvb_merge_reduce_numerator(m)) == kvb_mr_stored(kvb_merge_reduce_denominator(m)),
        "merge_reduce.bad.value_norm", "rc %d", rv);
  kvb_method_free(m);
  static const char *const mrc[] = {"r_key=2", "r_value=1", "t=4", "T=2", "c=0", NULL};
  m = make("merge_reduce", rng, 4, 3, mrc, &rc);
  CHECK(!m && rc == KVB_EINVAL, "merge_reduce.bad.c_zero", "rc %d", rc);

  /* Bucket boundary: ‖v‖ = 2^i goes to bucket i; just above goes to i+1. */
  CHECK(kvb_balancekv_bucket_of(1.0) == 0 && kvb_balancekv_bucket_of(2.0) == 1 &&
            kvb_balancekv_bucket_of(nextafter(2.0, 3)) == 2 && kvb_balancekv_bucket_of(0.75) == 0 &&
            kvb_balancekv_bucket_of(0.5) == -1 && kvb_balancekv_bucket_of(3.0) == 2,
        "balancekv.bucket_boundary", "boundary convention broken");

  /* Before t tokens nothing is compressed: the estimate is exact attention. */
  static const char *const big[] = {"r=3", "t=64", "T=2", "eps=0.1", "n=256", NULL};
  m = make("balancekv", rng, 4, 3, big, &rc);
  double K[40 * 4], V[40 * 3];
  for (int i = 0; i < 40; i++) {
    kvb_rand_ball(rng, K + 4 * i, 4, 3.0);
    kvb_rand_gaussian_vec(rng, V + 3 * i, 3, 1.0);
    kvb_method_update(m, K + 4 * i, 4, V + 3 * i, 3);
  }
  double ze[3], zb[3];
  kvb_attention_exact(40, 4, 3, K, V, q, 0.5, ze, NULL);
  kvb_method_query(m, q, 4, zb, 3);
  double err = 0;
  for (int a = 0; a < 3; a++) err = fmax(err, fabs(ze[a] - zb[a]));
  CHECK(err < 1e-12, "balancekv.exact_before_t", "max error %g", err);
  kvb_method_free(m);

  /* Walk: caller-supplied uniforms reproduce the rng path bit for bit; bad inputs rejected. */
  double U[50 * 5], un[50];
  for (int i = 0; i < 50; i++) kvb_rand_ball(rng, U + 5 * i, 5, 1.0);
  gsl_rng *a = kvb_rng_alloc_substream(5, 1), *b = kvb_rng_alloc_substream(5, 1);
  for (int i = 0; i < 50; i++) un[i] = gsl_rng_uniform(b);
  int e1[50], e2[50];
  uint64_t f1 = 9, f2 = 9;
  int w1 = kvb_walk_vectors(50, 5, U, 1.0, 2.0, NULL, a, 0, e1, &f1);
  int w2 = kvb_walk_vectors(50, 5, U, 1.0, 2.0, un, NULL, 0, e2, &f2);
  CHECK(w1 == w2 && f1 == f2 && memcmp(e1, e2, sizeof e1) == 0, "walk.uniforms_match_rng",
        "rng and supplied uniforms disagree");
  int wc = kvb_walk_vectors(50, 5, U, 1.0, 0.0, un, NULL, 0, e2, &f2);
  int wr = kvb_walk_vectors(50, 5, U, 0.5, 2.0, un, NULL, 0, e2, &f2); /* ‖u‖ up to 1 > r */
  un[3] = 1.0;
  int wu = kvb_walk_vectors(50, 5, U, 1.0, 2.0, un, NULL, 0, e2, &f2);
  CHECK(wc == KVB_EINVAL && wr == KVB_EINVAL && wu == KVB_EINVAL, "walk.bad_input",
        "%d %d %d", wc, wr, wu);
  /* The Gram forms of the walk (the whole matrix; one row per step, as SoftmaxBalance uses it)
   * give the vector walk's signs on these fixed inputs (their corr sums differ only in rounding
   * order: Σ_j ε_j<u_i,u_j> against <Σ_j ε_j u_j, u_i>). */
  {
    un[3] = 0.25;
    double G[50 * 50], buf[50];
    for (int i = 0; i < 50; i++)
      for (int j = 0; j < 50; j++) G[i * 50 + j] = kvb_dot(U + 5 * i, U + 5 * j, 5);
    int ev[50], eg[50];
    uint64_t fv = 7, fg = 7;
    int rv = kvb_walk_vectors(50, 5, U, 1.0, 2.0, un, NULL, 0, ev, &fv);
    int rg = kvb_walk_gram(50, G, 2.0, un, NULL, 0, eg, &fg);
    int same = rv == rg && fv == fg;
    for (int i = 0; i < 50; i++) same &= ev[i] == eg[i];
    CHECK(same, "walk.gram_equals_vectors", "rc %d/%d, fails %llu/%llu", rv, rg,
          (unsigned long long)fv, (unsigned long long)fg);
    int rn = kvb_walk_gram_rows(50, NULL, NULL, buf, 2.0, un, NULL, 0, eg, &fg);
    CHECK(rn == KVB_ENULL, "walk.gram_rows_null_refused", "rc %d", rn);
  }
  /* Tiny c forces FAIL: reported, partition still complete. */
  uint64_t ff = 0;
  int wf = kvb_walk_vectors(50, 5, U, 1.0, 0.01, NULL, a, 0, e1, &ff);
  int allpm = 1;
  for (int i = 0; i < 50; i++) allpm &= (e1[i] == 1 || e1[i] == -1);
  CHECK(wf == KVB_EFAIL && ff > 0 && allpm, "walk.fail_reported", "rc %d fails %llu", wf,
        (unsigned long long)ff);
  /* SoftmaxBalance: output at most half, and bad radii rejected. */
  kvb_sb_config sb = {0.5, 3.0, 10.0, 1e-3, 0, 0};
  size_t keep[40], nk = 99;
  int sr = kvb_softmax_balance(40, 4, 3, K, V, &sb, NULL, a, NULL, keep, &nk, NULL);
  CHECK((sr == KVB_OK || sr == KVB_EFAIL) && nk <= 20, "softmax_balance.half", "rc %d n_keep %zu",
        sr, nk);
  kvb_sb_config sbad = {0.5, 0.1, 10.0, 1e-3, 0, 0};
  nk = 99;
  sr = kvb_softmax_balance(40, 4, 3, K, V, &sbad, NULL, a, NULL, keep, &nk, NULL);
  CHECK(sr == KVB_EINVAL && nk == 99, "softmax_balance.bad_radius", "rc %d", sr);
  gsl_rng_free(a);
  gsl_rng_free(b);
  gsl_rng_free(rng);
  UNIT_EXIT();
}

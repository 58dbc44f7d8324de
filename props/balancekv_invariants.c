/* balancekv_invariants.c — exact invariants of 003 Algorithm 4 (MergeAndReduce, Theorem 3.4)
 * and Algorithm 1 (BalanceKV, Theorem 3.1), checked after every step of the stream:
 *   mr.invariants    |C⁰| = j mod t, |C^i| ≤ t, levels C⁰..C^T only, every stored pair is a
 *                    stream token (bitwise) stored once, |C′| ≤ |C|/2 per balance (the count
 *                    of stored pairs), estimator = Σ_i 2^i Σ_{C^i} exp(scale<k,q>)v recomputed
 *                    here, memory ≤ t(T+1) pairs per instance;
 *   alg1.buckets     every token of bucket i has 2^{i−1} < ‖v‖ ≤ 2^i, every erasure satisfied
 *                    line 8 when made (recomputed here from ε, the stream length n, r, d and the
 *                    running v_max; a rule with n = j, the tokens so far, is the mutant n_so_far),
 *                    no live bucket satisfies line 8 after a step, MR-DENOMINATOR absorbed every
 *                    token (zero-norm values included), memory = recount, estimator recomputed. */
#include "prop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static kvb_method *make(prop_ctx *ctx, const char *name, gsl_rng *rng, size_t dk, size_t dv,
                        const char *const *a) {
  kvb_params p;
  kvb_params_init(&p);
  for (size_t i = 0; a[i]; i++) kvb_params_parse(&p, a[i]);
  prop_apply_mutant(ctx, name, &p);
  kvb_method_config cfg = {dk, dv, 1.0 / sqrt((double)dk), rng};
  kvb_method *m = NULL;
  if (kvb_method_alloc(name, &cfg, &p, &m)) prop_check(ctx, 0, "alloc %s: %s", name, kvb_strerror_last());
  return m;
}

/* Every stored pair of `mr` is stream token pos (bitwise), none twice (seen[] marks). */
static int check_levels(prop_ctx *ctx, const kvb_mr *mr, const double *K, const double *V,
                        uint64_t j, unsigned char *seen, size_t *stored, const char *what) {
  int ok = 1;
  for (size_t i = 0; i <= mr->T; i++) {
    const kvb_mr_level *L = &mr->lev[i];
    for (size_t a = 0; a < L->cnt; a++) {
      uint64_t p = L->pos[a];
      int good = p < j && !seen[p] &&
                 memcmp(L->K + a * mr->dk, K + p * mr->dk, mr->dk * sizeof(double)) == 0 &&
                 (mr->ones || memcmp(L->V + a * mr->dv, V + p * mr->dv, mr->dv * sizeof(double)) == 0);
      if (!good) ok = 0;
      if (p < j) seen[p] = 1;
    }
    *stored += L->cnt;
  }
  if (!ok) prop_check(ctx, 0, "%s: a stored pair is not a distinct stream token at step %llu", what,
                      (unsigned long long)j);
  return ok;
}

/* Σ_i 2^i Σ_{C^i} exp(scale<k,q>)·v written independently (plain long double, small norms). */
static void recompute(const kvb_mr *mr, const double *q, double scale, long double *out) {
  for (size_t i = 0; i <= mr->T; i++)
    for (size_t a = 0; a < mr->lev[i].cnt; a++) {
      long double w = ldexpl(1.0L, (int)i) * expl((long double)scale * kvb_dot(q, mr->lev[i].K + a * mr->dk, mr->dk));
      for (size_t b = 0; b < mr->dv; b++) out[b] += w * (mr->ones ? 1.0L : mr->lev[i].V[a * mr->dv + b]);
    }
}

static void mr_invariants(prop_ctx *ctx) {
  const size_t dk = 8, dv = 3, t = 16, T = 4, n = 16 * 16; /* n = t·2^T (Theorem 3.4) */
  const double r = 2.0, rv = 3.0;
  gsl_rng *rng = prop_rng(ctx, 0), *mrng = prop_rng(ctx, 1);
  double *K = malloc(n * dk * sizeof *K), *V = malloc(n * dv * sizeof *V), q[8];
  unsigned char *seen = malloc(n);
  for (size_t i = 0; i < n; i++) {
    kvb_rand_ball(rng, K + i * dk, dk, r);
    kvb_rand_ball(rng, V + i * dv, dv, rv);
  }
  static const char *const a[] = {"r_key=2", "r_value=3", "t=16", "T=4", "c=2", NULL};
  kvb_method *m = make(ctx, "merge_reduce", mrng, dk, dv, a);
  size_t bad_size = 0, bad_c0 = 0, bad_mem = 0, bad_est = 0, bad_half = 0, prev_stored = 0;
  for (size_t j = 1; m && j <= n; j++) {
    kvb_method_update(m, K + (j - 1) * dk, dk, V + (j - 1) * dv, dv);
    const kvb_mr *insts[2] = {kvb_merge_reduce_numerator(m), kvb_merge_reduce_denominator(m)};
    for (int w = 0; w < 2; w++) {
      const kvb_mr *mr = insts[w];
      memset(seen, 0, n);
      size_t stored = 0;
      check_levels(ctx, mr, K, V, j, seen, &stored, w ? "denominator" : "numerator");
      for (size_t i = 0; i <= T; i++) bad_size += mr->lev[i].cnt > t;
      bad_c0 += mr->lev[0].cnt != j % t;
      bad_mem += stored > t * (T + 1);
      /* A cascade replaces |C| pairs by |C′| ≤ |C|/2 each time: after a multiple of t the
       * stored count cannot exceed (previous + 1) − t/2. */
      if (w == 0 && j % t == 0 && stored + t / 2 > prev_stored + 1) bad_half++;
      if (w == 0) prev_stored = stored;
    }
    if (j % 8 == 0 || j == n) {
      kvb_rand_ball(rng, q, dk, r);
      double z[3];
      kvb_method_query(m, q, dk, z, dv);
      long double num[3] = {0, 0, 0}, den = 0;
      recompute(insts[0], q, m->scale, num);
      recompute(insts[1], q, m->scale, &den);
      for (size_t b = 0; b < dv; b++)
        if (fabsl(num[b] / den - z[b]) > 1e-10L * (1 + fabsl(num[b] / den))) bad_est++;
    }
  }
  prop_check(ctx, bad_size == 0, "|C^i| > t at %zu (step, level) pairs", bad_size);
  prop_check(ctx, bad_c0 == 0, "|C⁰| ≠ j mod t at %zu steps", bad_c0);
  prop_check(ctx, bad_mem == 0, "stored pairs > t(T+1) at %zu steps", bad_mem);
  prop_check(ctx, bad_half == 0, "a cascade kept more than half at %zu steps", bad_half);
  prop_check(ctx, bad_est == 0, "estimator ≠ Σ 2^i Σ exp(<k,q>/√d) v at %zu queries", bad_est);
  if (m) {
    kvb_memory mem;
    kvb_method_memory(m, &mem);
    prop_note(ctx, "n = %zu, t = %zu, T = %zu: final stored %zu + %zu pairs (bound t(T+1) = %zu each); "
              "%llu walk FAILs at c = 2", n, t, T, kvb_mr_stored(kvb_merge_reduce_numerator(m)),
              kvb_mr_stored(kvb_merge_reduce_denominator(m)), t * (T + 1),
              (unsigned long long)m->work.fails);
  }
  kvb_method_free(m);
  free(K), free(V), free(seen);
  gsl_rng_free(rng), gsl_rng_free(mrng);
}

static void alg1_buckets(prop_ctx *ctx) {
  const size_t dk = 8, dv = 3, t = 8, T = 3, n = 600;
  const double r = 2.0, eps = 0.5;
  gsl_rng *rng = prop_rng(ctx, 0), *mrng = prop_rng(ctx, 1);
  double *K = malloc(n * dk * sizeof *K), *V = malloc(n * dv * sizeof *V), q[8];
  unsigned char *seen = malloc(n);
  for (size_t i = 0; i < n; i++) {
    kvb_rand_ball(rng, K + i * dk, dk, r);
    kvb_rand_sphere(rng, V + i * dv, dv, 1.0);
    /* value norms log-uniform over 2^-30 .. 2^4, exact powers of two and zeros mixed in */
    double u = gsl_rng_uniform(rng), s;
    if (u < 0.05) s = 0;
    else if (u < 0.2) s = ldexp(1.0, (int)gsl_rng_uniform_int(rng, 35) - 30);
    else s = exp2(-30 + 34 * gsl_rng_uniform(rng));
    for (size_t b = 0; b < dv; b++) V[i * dv + b] *= s;
  }
  /* n = 600 is the stream length 003 Alg. 1 takes as input (line 8). */
  static const char *const a[] = {"r=2", "t=8", "T=3", "eps=0.5", "c=2", "n=600", NULL};
  kvb_method *m = make(ctx, "balancekv", mrng, dk, dv, a);
  double scale = 1.0 / sqrt((double)dk), vmax = 0;
  size_t bad_bucket = 0, bad_erase = 0, bad_live = 0, bad_den = 0, bad_mem = 0, bad_est = 0, nerase = 0;
  uint64_t zeros = 0;
  for (size_t j = 1; m && j <= n; j++) {
    const double *v = V + (j - 1) * dv;
    kvb_method_update(m, K + (j - 1) * dk, dk, v, dv);
    double nv = kvb_norm2(v, dv);
    zeros += nv == 0;
    vmax = fmax(vmax, nv);
    double th = eps / (2.0 * (double)n) * exp(-r * r * scale) * vmax; /* line 8, n = 600 */
    size_t ne;
    const kvb_balancekv_erasure *er = kvb_balancekv_erasures(m, &ne);
    for (; nerase < ne; nerase++)
      if (!(er[nerase].step == j && ldexp(1.0, er[nerase].bucket) <= th)) bad_erase++;
    memset(seen, 0, n);
    size_t stored = 0, nb = 0;
    int idx;
    const kvb_mr *mr;
    for (size_t b = 0; (mr = kvb_balancekv_bucket(m, b, &idx)); b++, nb++) {
      if (ldexp(1.0, idx) <= th) bad_live++;
      check_levels(ctx, mr, K, V, j, seen, &stored, "bucket");
      for (size_t l = 0; l <= T; l++)
        for (size_t x = 0; x < mr->lev[l].cnt; x++) {
          double nx = kvb_norm2(mr->lev[l].V + x * dv, dv);
          if (!(nx > ldexp(1.0, idx - 1) && nx <= ldexp(1.0, idx))) bad_bucket++;
        }
    }
    const kvb_mr *den = kvb_balancekv_denominator(m);
    if (den->j != j) bad_den++;
    size_t sd = 0;
    memset(seen, 0, n);
    check_levels(ctx, den, K, V, j, seen, &sd, "denominator");
    kvb_memory mem;
    kvb_method_memory(m, &mem);
    if (mem.vectors != 2 * stored + sd || sd > t * (T + 1) + (j > t << T ? j / (1u << T) : 0))
      bad_mem++;
    if (j % 10 == 0) {
      kvb_rand_ball(rng, q, dk, r);
      double z[3];
      kvb_method_query(m, q, dk, z, dv);
      long double num[3] = {0, 0, 0}, dd = 0;
      for (size_t b = 0; (mr = kvb_balancekv_bucket(m, b, NULL)); b++) recompute(mr, q, scale, num);
      recompute(den, q, scale, &dd);
      for (size_t b = 0; b < dv; b++)
        if (fabsl(num[b] / dd - z[b]) > 1e-10L * (1e-30L + fabsl(num[b] / dd))) bad_est++;
    }
    (void)nb;
  }
  kvb_balancekv_info info = {0, 0, 0, 0};
  if (m) kvb_balancekv_get_info(m, &info);
  prop_check(ctx, bad_bucket == 0, "%zu stored values outside their bucket 2^{i−1} < ‖v‖ ≤ 2^i", bad_bucket);
  prop_check(ctx, bad_erase == 0, "%zu erasures did not satisfy line 8 when made", bad_erase);
  prop_check(ctx, bad_live == 0, "%zu (step, bucket) pairs left alive satisfying line 8", bad_live);
  prop_check(ctx, bad_den == 0 && info.zero_values == zeros,
             "MR-DENOMINATOR missed tokens at %zu steps (zero values %llu of %llu counted)", bad_den,
             (unsigned long long)info.zero_values, (unsigned long long)zeros);
  prop_check(ctx, bad_mem == 0, "memory accounting wrong at %zu steps", bad_mem);
  prop_check(ctx, bad_est == 0, "estimator ≠ line 13 recomputed at %zu queries", bad_est);
  prop_check(ctx, nerase > 0, "the stream never exercised line 8 (no erasure)");
  prop_note(ctx, "n = %zu: %zu erasures, %zu live buckets at the end, %llu zero-norm values",
            n, nerase, info.buckets, (unsigned long long)zeros);
  kvb_method_free(m);
  free(K), free(V), free(seen);
  gsl_rng_free(rng), gsl_rng_free(mrng);
}

const prop_claim props_balancekv_invariants[] = {
    {"balancekv.mr.invariants", "003 Alg. 4, Theorem 3.4", "invariant",
     "after every step: |C⁰| = j mod t, |C^i| ≤ t, stored pairs are distinct stream tokens, "
     "≤ t(T+1) per instance, cascades keep ≤ half, estimator = Σ 2^i Σ exp(<k,q>/√d)v (exact)",
     {"method:merge_reduce:keep_larger", "method:merge_reduce:level_weight"}, mr_invariants, {"B-ALG4.inv"}},
    {"balancekv.alg1.buckets", "003 Alg. 1 lines 5-13, Theorem 3.1", "invariant",
     "after every step: bucket i holds 2^{i−1} < ‖v‖ ≤ 2^i, erasures satisfy line 8 and none "
     "is missed, MR-DENOMINATOR sees every token (zero values too), memory = recount, "
     "estimator = line 13 (exact)",
     {"method:balancekv:bucket_low", "method:balancekv:erase_2x", "method:balancekv:no_erase", "method:balancekv:zero_skip_den",
      "method:balancekv:level_weight", "method:balancekv:n_so_far"},
     alg1_buckets, {"B-ALG1.bucket", "B-T3.1.inst"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

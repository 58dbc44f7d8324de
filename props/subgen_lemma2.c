/* subgen_lemma2.c — 000 Lemma 2 (001 Lemma 2.3): correctness of UpdateSoftmaxNormalizer.
 * After every step there is a partition C_1..C_m′ of the keys so far with
 *   (1) x_i ∈ C_i, (2) n_i = |C_i|, (3) ‖x_i − k′‖ ≤ δ for k′ ∈ C_i, (4) ‖x_i − x_j‖ > δ (i ≠ j),
 *   (5) S_i is t i.i.d. uniform samples from C_i.
 *
 * The witness partition is a SHADOW that stores every key and replays 000 Alg. 1 lines 11-21
 * itself: each key joins the nearest representative (ties: the earliest, as subgen.h reads the
 * arg min) when that distance is <= δ, else it opens a cluster and becomes its representative.
 * After every update the sketch is compared with the shadow and (1)-(4) are checked exactly:
 *   m′ equal; x_i is the key at the shadow representative's position (1); n_i = |C_i| and
 *   Σ n_i = n (2); every key of C_i within δ of the sketch's x_i (3); the sketch's
 *   representatives pairwise > δ apart (4); every sample of S_i is a key of C_i (the support
 *   of (5)). Because the shadow assigns by the NEAREST representative, a sketch that assigns a
 *   key to another representative within δ (mutant cluster_farthest) disagrees on n_i.
 * Streams: random clusterable keys, Gaussian keys in d = 2 with δ large enough that many keys
 * are within δ of several representatives, and adversarial orders of them (sorted by ‖k‖,
 * clusters interleaved round robin); the ties_at_delta stream (adversarial/orders.c) puts keys
 * at distance exactly δ (in double) from a representative, where ≤ versus < matters.
 * (5) is a law over the coins for a fixed stream: R independent runs, the index within C_i of
 * every slot pooled over clusters against the uniform expected counts (chi-square GOF), and
 * slot 0 versus slots 1 and t−1 of the largest cluster, indices binned into <= 8 groups
 * (chi-square independence); checked at
 * the middle and at the end of the stream, α = 1e-6 per test. */
#include "prop.h"
#include "orders.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the shadow partition ---- */
typedef struct {
  const kvb_stream *s;
  double delta;
  size_t n;        /* keys absorbed */
  size_t mc;       /* clusters */
  size_t *label;   /* n: cluster of each key */
  size_t *rep_pos; /* mc: stream position of x_i */
  size_t *size;    /* mc: |C_i| */
} shadow;

static int shadow_init(shadow *sh, const kvb_stream *s, double delta) {
  memset(sh, 0, sizeof *sh);
  sh->s = s;
  sh->delta = delta;
  sh->label = malloc(s->n * sizeof(size_t));
  sh->rep_pos = malloc(s->n * sizeof(size_t));
  sh->size = calloc(s->n, sizeof(size_t));
  return sh->label && sh->rep_pos && sh->size ? 0 : -1;
}

static void shadow_free(shadow *sh) {
  free(sh->label);
  free(sh->rep_pos);
  free(sh->size);
}

/* 000 Alg. 1 lines 11-21, on the stored keys. */
static void shadow_step(shadow *sh) {
  size_t dk = sh->s->d_key, pos = sh->n++;
  const double *k = sh->s->K + pos * dk;
  size_t best = 0;
  double bestd = INFINITY;
  for (size_t i = 0; i < sh->mc; i++) {
    double d = kvb_dist2(sh->s->K + sh->rep_pos[i] * dk, k, dk);
    if (d < bestd) best = i, bestd = d;
  }
  if (sh->mc > 0 && bestd <= sh->delta) {
    sh->label[pos] = best;
    sh->size[best]++;
  } else {
    sh->label[pos] = sh->mc;
    sh->rep_pos[sh->mc] = pos;
    sh->size[sh->mc++] = 1;
  }
}

static kvb_method *make_subgen(prop_ctx *ctx, gsl_rng *rng, const kvb_stream *s, double delta,
                               int t, int sl) {
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "delta", delta);
  kvb_params_set(&p, "t", t);
  kvb_params_set(&p, "s", sl);
  prop_apply_mutant(ctx, "subgen", &p);
  kvb_method_config cfg = {s->d_key, s->d_value, 1.0, rng};
  kvb_method *m = NULL;
  if (kvb_method_alloc("subgen", &cfg, &p, &m)) prop_check(ctx, 0, "alloc: %s", kvb_strerror_last());
  return m;
}

/* Violations by kind, with the first step each was seen at. */
enum { V_MC, V_1, V_2, V_SUM, V_3, V_4, V_SUPPORT, V_KINDS };
static const char *const v_name[V_KINDS] = {
    "m′ differs from the shadow's cluster count (line 11/12 rule)",
    "(1) x_i is not the key at the shadow representative's position",
    "(2) n_i ≠ |C_i| (shadow, nearest-representative rule)",
    "(2) Σ n_i ≠ n",
    "(3) a key of C_i is farther than δ from x_i",
    "(4) two representatives within δ",
    "(5, support) a sample of S_i is not a key of C_i"};

typedef struct {
  size_t count[V_KINDS];
  size_t first[V_KINDS];
} violations;

static void flag(violations *v, int kind, size_t step) {
  if (!v->count[kind]) v->first[kind] = step;
  v->count[kind]++;
}

/* (1)-(4) and the support of (5), exactly, for the sketch after `step` updates. */
static void check_step(const kvb_method *m, const shadow *sh, violations *v) {
  const kvb_stream *s = sh->s;
  size_t dk = s->d_key, step = sh->n, mc = kvb_subgen_num_clusters(m), t = kvb_subgen_t(m);
  double delta = kvb_subgen_delta(m);
  if (mc != sh->mc) flag(v, V_MC, step);
  uint64_t total = 0;
  for (size_t i = 0; i < mc; i++) {
    const double *rep, *S;
    const uint64_t *Spos;
    uint64_t cnt, rpos;
    kvb_subgen_cluster(m, i, &rep, &cnt, &S, &Spos, &rpos);
    total += cnt;
    int in_shadow = i < sh->mc;
    if (!in_shadow || rpos != sh->rep_pos[i] || memcmp(rep, s->K + rpos * dk, dk * sizeof *rep))
      flag(v, V_1, step);
    if (!in_shadow || cnt != sh->size[i]) flag(v, V_2, step);
    if (in_shadow)
      for (size_t p = 0; p < step; p++)
        if (sh->label[p] == i && !(kvb_dist2(rep, s->K + p * dk, dk) <= delta)) {
          flag(v, V_3, step);
          break;
        }
    for (size_t j = 0; j < i; j++) {
      const double *rj;
      kvb_subgen_cluster(m, j, &rj, NULL, NULL, NULL, NULL);
      if (!(kvb_dist2(rep, rj, dk) > delta)) flag(v, V_4, step);
    }
    for (size_t j = 0; j < t; j++)
      if (Spos[j] >= step || !in_shadow || sh->label[Spos[j]] != i ||
          memcmp(S + j * dk, s->K + Spos[j] * dk, dk * sizeof *S))
        flag(v, V_SUPPORT, step);
  }
  if (total != step) flag(v, V_SUM, step);
}

/* Streams s through a sketch with threshold delta, checking after every step. */
static void invariants_on(prop_ctx *ctx, const kvb_stream *s, double delta, const char *what,
                          uint64_t sub) {
  shadow sh;
  gsl_rng *rng = prop_rng(ctx, sub);
  kvb_method *m = make_subgen(ctx, rng, s, delta, 3, 2);
  if (!m || shadow_init(&sh, s, delta)) {
    prop_check(ctx, 0, "%s: setup failed", what);
    kvb_method_free(m);
    gsl_rng_free(rng);
    return;
  }
  violations v;
  memset(&v, 0, sizeof v);
  for (size_t i = 0; i < s->n; i++) {
    kvb_method_update(m, s->K + i * s->d_key, s->d_key, s->V + i * s->d_value, s->d_value);
    shadow_step(&sh);
    check_step(m, &sh, &v);
  }
  int ok = 1;
  for (int k = 0; k < V_KINDS; k++)
    ok &= prop_check(ctx, v.count[k] == 0, "%s (δ = %g, n = %zu): %s at %zu steps, first after %zu",
                     what, delta, s->n, v_name[k], v.count[k], v.first[k]);
  if (ok) prop_note(ctx, "%s: (1)-(4) held after all %zu steps, m′ = %zu", what, s->n, sh.mc);
  shadow_free(&sh);
  kvb_method_free(m);
  gsl_rng_free(rng);
}

/* The stream in its own order, sorted by ‖k‖ both ways, and clusters interleaved round robin
 * (clusters as the online rule forms them in stream order). */
static void invariants_orders(prop_ctx *ctx, const kvb_stream *s, double delta, const char *name,
                              uint64_t sub) {
  char what[96];
  snprintf(what, sizeof what, "%s, stream order", name);
  invariants_on(ctx, s, delta, what, sub);
  kvb_stream *o = NULL;
  for (int desc = 0; desc < 2; desc++) {
    if (!prop_check(ctx, kvb_stream_reorder_by_key_norm(s, desc, &o) == KVB_OK, "reorder: %s",
                    kvb_strerror_last()))
      return;
    snprintf(what, sizeof what, "%s, sorted by ‖k‖ %s", name, desc ? "descending" : "ascending");
    invariants_on(ctx, o, delta, what, sub + 1 + (uint64_t)desc);
    kvb_stream_free(o);
  }
  shadow sh;
  if (shadow_init(&sh, s, delta)) return;
  for (size_t i = 0; i < s->n; i++) shadow_step(&sh);
  if (prop_check(ctx, kvb_stream_interleave_clusters(s, sh.label, sh.mc, &o) == KVB_OK,
                 "interleave: %s", kvb_strerror_last())) {
    snprintf(what, sizeof what, "%s, %zu clusters interleaved", name, sh.mc);
    invariants_on(ctx, o, delta, what, sub + 3);
    kvb_stream_free(o);
  }
  shadow_free(&sh);
}

static void lemma2_invariants(prop_ctx *ctx) {
  static const char *const clus[] = {"n=300", "d_key=4", "d_value=2", "m=6", "delta=0.5",
                                     "key_norm=2", NULL};
  static const char *const gaus[] = {"n=300", "d_key=2", "d_value=2", NULL};
  kvb_stream *a = prop_stream(ctx, 0, "clusterable", clus);
  kvb_stream *b = prop_stream(ctx, 1, "gaussian", gaus);
  if (a) invariants_orders(ctx, a, 0.5, "clusterable m=6", 10);
  /* δ = 0.8 on N(0, I₂) keys: representatives crowd, so keys often have several within δ. */
  if (b) invariants_orders(ctx, b, 0.8, "gaussian d=2", 20);
  kvb_stream_free(a);
  kvb_stream_free(b);
}

static void lemma2_ties(prop_ctx *ctx) {
  static const char *const ties[] = {"n=300", "d_key=3", "d_value=2", "m=5", "delta=1",
                                     "tie_fraction=0.5", NULL};
  kvb_stream *s = prop_stream(ctx, 0, "ties_at_delta", ties);
  if (!s) return;
  /* The premise of the attack, checked on the data: some key is at distance exactly δ from
   * the first key of its generating segment (its representative in stream order). */
  size_t exact = 0;
  shadow sh;
  if (shadow_init(&sh, s, 1.0) == 0) {
    for (size_t i = 0; i < s->n; i++) shadow_step(&sh);
    for (size_t i = 0; i < s->n; i++)
      exact += kvb_dist2(s->K + sh.rep_pos[sh.label[i]] * s->d_key, s->K + i * s->d_key,
                         s->d_key) == 1.0;
    shadow_free(&sh);
  }
  prop_check(ctx, exact > 0, "ties_at_delta produced no key at distance exactly δ");
  prop_note(ctx, "ties_at_delta: %zu of %zu keys at distance exactly δ from their representative",
            exact, s->n);
  invariants_orders(ctx, s, 1.0, "ties_at_delta m=5", 30);
  kvb_stream_free(s);
}

/* ---- (5): S_i uniform over C_i, slots independent ---- */

/* Index of every stream position within its shadow cluster (0 = representative). */
static void member_index(const shadow *sh, size_t upto, size_t *idx) {
  size_t *seen = calloc(sh->mc ? sh->mc : 1, sizeof *seen);
  for (size_t p = 0; p < upto; p++) idx[p] = seen[sh->label[p]]++;
  free(seen);
}

static void uniform_on(prop_ctx *ctx, const kvb_stream *s, double delta, const char *what,
                       uint64_t base) {
  enum { T = 4 };
  unsigned R = prop_trials(ctx, 3000, 20000);
  size_t n = s->n, checkpoints[2] = {n / 2, n};
  shadow sh;
  if (shadow_init(&sh, s, delta)) return;
  for (size_t i = 0; i < n; i++) shadow_step(&sh);
  size_t *idx = malloc(n * sizeof *idx), *off = malloc((sh.mc + 1) * sizeof *off);
  member_index(&sh, n, idx);
  for (int c = 0; c < 2; c++) {
    size_t upto = checkpoints[c];
    /* cluster sizes after `upto` keys (clusters open in order, so the first ones exist) */
    size_t mc = 0, *sz = calloc(sh.mc, sizeof *sz);
    for (size_t p = 0; p < upto; p++) {
      sz[sh.label[p]]++;
      if (sh.label[p] + 1 > mc) mc = sh.label[p] + 1;
    }
    off[0] = 0;
    size_t big = 0;
    for (size_t i = 0; i < mc; i++) {
      off[i + 1] = off[i] + sz[i];
      if (sz[i] > sz[big]) big = i;
    }
    /* The pair tables bin the index within the largest cluster into B <= 8 equal groups
     * (functions of independent variables are independent), so cells keep expected counts
     * well above 5 and the table is not merged away. */
    size_t cells = off[mc], B = sz[big] < 8 ? sz[big] : 8, Cb = sz[big];
    double *obs = calloc(cells, sizeof *obs), *ex = malloc(cells * sizeof *ex);
    double *t01 = calloc(B * B, sizeof *t01), *t0L = calloc(B * B, sizeof *t0L);
    int broken = 0;
    for (unsigned r = 0; r < R && !broken; r++) {
      gsl_rng *rng = prop_rng(ctx, base + (uint64_t)c * 1000000 + r);
      kvb_method *m = make_subgen(ctx, rng, s, delta, T, 1);
      if (!m) {
        gsl_rng_free(rng);
        broken = 1;
        break;
      }
      for (size_t i = 0; i < upto; i++)
        kvb_method_update(m, s->K + i * s->d_key, s->d_key, s->V + i * s->d_value, s->d_value);
      if (!prop_check(ctx, kvb_subgen_num_clusters(m) == mc, "%s: m′ = %zu, shadow %zu", what,
                      kvb_subgen_num_clusters(m), mc))
        broken = 1;
      for (size_t i = 0; i < mc && !broken; i++) {
        const uint64_t *Sp;
        kvb_subgen_cluster(m, i, NULL, NULL, NULL, &Sp, NULL);
        for (size_t j = 0; j < T; j++) {
          if (!prop_check(ctx, Sp[j] < upto && sh.label[Sp[j]] == i,
                          "%s: a sample of S_%zu is outside C_%zu", what, i, i)) {
            broken = 1;
            break;
          }
          obs[off[i] + idx[Sp[j]]]++;
        }
        if (!broken && i == big) {
          size_t g0 = idx[Sp[0]] * B / Cb, g1 = idx[Sp[1]] * B / Cb, gL = idx[Sp[T - 1]] * B / Cb;
          t01[g0 * B + g1]++;
          t0L[g0 * B + gL]++;
        }
      }
      kvb_method_free(m);
      gsl_rng_free(rng);
    }
    if (!broken) {
      for (size_t i = 0; i < mc; i++)
        for (size_t k = 0; k < sz[i]; k++) ex[off[i] + k] = (double)R * T / (double)sz[i];
      double stat;
      size_t df;
      double p = kvb_chisq_gof(obs, ex, cells, &stat, &df);
      prop_pvalue(ctx, p, PROP_ALPHA,
                  "%s after %zu keys: S_i uniform over C_i (%zu clusters, %u runs × %d slots, "
                  "X² = %.1f, df = %zu)", what, upto, mc, R, T, stat, df);
      prop_note(ctx, "(5) %s @%zu: uniform X² = %.1f df = %zu p = %.3g", what, upto, stat, df, p);
      double p1 = kvb_chisq_independence(t01, B, B, &stat, &df);
      prop_pvalue(ctx, p1, PROP_ALPHA, "%s after %zu keys: slot 0 ⊥ slot 1 in C_%zu (|C| = %zu in %zu "
                  "bins, X² = %.1f, df = %zu)", what, upto, big, Cb, B, stat, df);
      prop_note(ctx, "(5) %s @%zu: slot0/slot1 X² = %.1f df = %zu p = %.3g", what, upto, stat, df,
                p1);
      double p2 = kvb_chisq_independence(t0L, B, B, &stat, &df);
      prop_pvalue(ctx, p2, PROP_ALPHA, "%s after %zu keys: slot 0 ⊥ slot %d in C_%zu (X² = %.1f, "
                  "df = %zu)", what, upto, T - 1, big, stat, df);
    }
    free(obs);
    free(ex);
    free(t01);
    free(t0L);
    free(sz);
  }
  free(idx);
  free(off);
  shadow_free(&sh);
}

static void lemma2_uniform(prop_ctx *ctx) {
  static const char *const clus[] = {"n=60", "d_key=4", "d_value=2", "m=3", "delta=0.5",
                                     "key_norm=2", NULL};
  kvb_stream *s = prop_stream(ctx, 0, "clusterable", clus), *o = NULL;
  if (!s) return;
  uniform_on(ctx, s, 0.5, "clusterable m=3", 100);
  if (prop_check(ctx, kvb_stream_reorder_by_key_norm(s, 1, &o) == KVB_OK, "reorder: %s",
                 kvb_strerror_last()))
    uniform_on(ctx, o, 0.5, "same keys sorted by ‖k‖ descending", 5000000);
  kvb_stream_free(o);
  kvb_stream_free(s);
}

const prop_claim props_subgen_lemma2[] = {
    {"subgen.lemma2.invariants", "000 Lemma 2 (1)-(4)", "invariant",
     "after every step, against a shadow that stores every key and replays lines 11-21 "
     "(nearest representative within δ): m′, x_i ∈ C_i, n_i = |C_i|, ‖x_i − k′‖ ≤ δ, "
     "‖x_i − x_j‖ > δ, S_i ⊆ C_i — exactly, on clusterable and Gaussian keys in stream order, "
     "sorted by ‖k‖ both ways and clusters interleaved",
     {"subgen:cluster_no_count", "subgen:cluster_farthest"}, lemma2_invariants},
    {"subgen.lemma2.ties", "000 Lemma 2 (1)-(4), Alg. 1 line 12", "invariant",
     "the same exact checks on the ties_at_delta stream (keys at distance exactly δ from a "
     "representative, in double) in the same four orders",
     {"subgen:cluster_lt", "subgen:cluster_no_count"}, lemma2_ties},
    {"subgen.lemma2.uniform", "000 Lemma 2 (5)", "distribution",
     "S_i is t i.i.d. uniform samples of C_i: chi-square GOF of the slots' indices within C_i "
     "over independent runs, and chi-square independence of slot 0 vs slots 1 and t−1 (indices in <= 8 bins), at the "
     "middle and end of a stream and of the same keys sorted by ‖k‖; α = 1e-6 per test",
     {"subgen:cluster_prob_half", "subgen:cluster_shared_coin"}, lemma2_uniform},
    {NULL, NULL, NULL, NULL, {NULL}, NULL}};

/* subgen_lemma2.c — 000 Lemma 2 (001 Lemma 2.3): correctness of UpdateSoftmaxNormalizer.
 * After every step there is a partition C_1..C_m′ of the keys so far with
 *   (1) x_i ∈ C_i, (2) n_i = |C_i|, (3) ‖x_i − k′‖ ≤ δ for k′ ∈ C_i, (4) ‖x_i − x_j‖ > δ (i ≠ j),
 *   (5) S_i is t i.i.d. uniform samples from C_i.
 *
 * Lemma 2 asserts that SOME partition exists; it does not say which representative a key joins
 * when several are within δ. The witness partition for subgen.lemma2.* is therefore read off
 * the sketch itself: after each update exactly one thing must have changed — one counter n_i
 * went up by one (the key is put in C_i) or one cluster was opened with the key as its
 * representative (a new part {k}). A sketch whose counters do not record the new key in exactly
 * one part has no such partition (the V_PART violation). Against that witness (1)-(4) and the
 * support of (5) are checked exactly after every update: x_i is the key that opened cluster i
 * (1); n_i = |C_i| and Σ n_i = n (2); every key of C_i within δ of x_i (3); representatives
 * pairwise > δ apart (4); every sample of S_i a key of C_i (support of (5)). An implementation
 * that picks another representative within δ than the nearest (mutant cluster_farthest)
 * satisfies Lemma 2 and passes these checks (verified: it survives them).
 *
 * Which representative a key joins is 000 Alg. 1 line 12 (i* = arg min ‖x_i − k‖, = 001 line
 * 11): subgen.alg1.rule checks it separately against a SHADOW that stores every key and replays
 * 000 Alg. 1 lines 11-22 (001 lines 11-21) itself — join the nearest representative (ties: the
 * earliest, as subgen.h reads the arg min) when it is within δ (line 13), else open a cluster
 * (lines 19-21) — and requires m′ and every n_i to equal the shadow's, with the stored sizes
 * of 000 §2.2-2.3 (s slots of M filled after the first token, t samples per cluster). That
 * claim, not Lemma 2's, rejects cluster_farthest.
 *
 * Streams: random clusterable keys, Gaussian keys in d = 2 with δ large enough that many keys
 * are within δ of several representatives, and adversarial orders of them (sorted by ‖k‖,
 * clusters interleaved round robin); the ties_at_delta stream (adversarial/orders.c) puts keys
 * at distance exactly δ (in double) from a representative, where ≤ versus < matters.
 * (5) is a law over the coins for a fixed stream: R independent runs, the index within C_i of
 * every slot pooled over clusters against the uniform expected counts (chi-square GOF), and
 * slot 0 versus slots 1 and t−1 of the largest cluster, indices binned into <= 8 groups
 * (chi-square independence). Tallied after every step: the middle and the last step are
 * tested and reported on their own (α = 1e-6 each), every step's tests together as one
 * family (smallest p-value times the number of tests, Bonferroni; α = 1e-6). */
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

/* 000 Alg. 1 lines 11-22 (001 lines 11-21), on the stored keys. */
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
  return prop_subgen(ctx, rng, s->d_key, s->d_value, 1.0, delta, t, sl);
}

/* Violations by kind, with the first step each was seen at. */
enum { V_MC, V_PART, V_1, V_2, V_SUM, V_3, V_4, V_SUPPORT, V_SIZES, V_KINDS };
static const char *const v_name[V_KINDS] = {
    "m′ differs from the shadow's cluster count (000 Alg. 1 lines 12-13, 19-21)",
    "(partition) the counters do not record the new key in exactly one part",
    "(1) x_i is not the key that opened cluster i",
    "(2) n_i ≠ |C_i|",
    "(2) Σ n_i ≠ n",
    "(3) a key of C_i is farther than δ from x_i",
    "(4) two representatives within δ",
    "(5, support) a sample of S_i is not a key of C_i",
    "(sizes) a slot of M null or holding a future token after the first token"};

/* How the witness partition is formed: read off the sketch's own counters (Lemma 2) or replayed
 * with the nearest-representative rule (000 Alg. 1 line 12). */
typedef enum { W_SKETCH, W_RULE } witness_mode;

typedef struct {
  size_t count[V_KINDS];
  size_t first[V_KINDS];
} violations;

static void flag(violations *v, int kind, size_t step) {
  if (!v->count[kind]) v->first[kind] = step;
  v->count[kind]++;
}

/* The witness read off the sketch after the update of the next key (W_SKETCH): `prev` holds
 * the counters before the update (*prev_mc of them) and is refreshed. */
static void shadow_observe(shadow *sh, const kvb_method *m, uint64_t *prev, size_t *prev_mc,
                           violations *v) {
  size_t pos = sh->n++, mc = kvb_subgen_num_clusters(m), changed = 0, which = SIZE_MAX;
  int ok = 1;
  for (size_t i = 0; i < *prev_mc && i < mc; i++) {
    uint64_t c;
    kvb_subgen_cluster(m, i, NULL, &c, NULL, NULL, NULL);
    if (c != prev[i]) {
      changed++;
      which = i;
      ok &= c == prev[i] + 1;
    }
    prev[i] = c;
  }
  sh->label[pos] = SIZE_MAX;
  if (mc == *prev_mc + 1 && changed == 0) { /* a new part {k} */
    kvb_subgen_cluster(m, mc - 1, NULL, &prev[mc - 1], NULL, NULL, NULL);
    sh->label[pos] = mc - 1;
    sh->rep_pos[mc - 1] = pos;
    sh->size[mc - 1] = 1;
  } else if (mc == *prev_mc && changed == 1 && ok) { /* k joins C_which */
    sh->label[pos] = which;
    sh->size[which]++;
  } else {
    flag(v, V_PART, sh->n);
    for (size_t i = *prev_mc; i < mc; i++) { /* keep the arrays defined */
      kvb_subgen_cluster(m, i, NULL, &prev[i], NULL, NULL, NULL);
      sh->rep_pos[i] = SIZE_MAX;
      sh->size[i] = 0;
    }
  }
  sh->mc = mc;
  *prev_mc = mc;
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
    if (!in_shadow || rpos != sh->rep_pos[i] || rpos >= step ||
        memcmp(rep, s->K + rpos * dk, dk * sizeof *rep))
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

/* 000 §2.2-2.3 stored sizes: after the first token every one of the s slots of M holds a token
 * seen so far (values here are nonzero). The t samples per cluster are read by check_step. */
static void check_sizes(const kvb_method *m, size_t step, violations *v) {
  for (size_t j = 0; j < kvb_subgen_s(m); j++) {
    uint64_t pos;
    if (kvb_subgen_slot(m, j, NULL, NULL, &pos) || pos >= step) {
      flag(v, V_SIZES, step);
      return;
    }
  }
}

/* Streams s through a sketch with threshold delta, checking after every step against the
 * witness `mode` forms. */
static void invariants_on(prop_ctx *ctx, const kvb_stream *s, double delta, const char *what,
                          uint64_t sub, witness_mode mode) {
  shadow sh;
  gsl_rng *rng = prop_rng(ctx, sub);
  kvb_method *m = make_subgen(ctx, rng, s, delta, 3, 2);
  uint64_t *prev = calloc(s->n, sizeof *prev);
  size_t prev_mc = 0;
  if (!m || !prev || shadow_init(&sh, s, delta)) {
    prop_check(ctx, 0, "%s: setup failed", what);
    kvb_method_free(m);
    gsl_rng_free(rng);
    free(prev);
    return;
  }
  violations v;
  memset(&v, 0, sizeof v);
  for (size_t i = 0; i < s->n; i++) {
    kvb_method_update(m, s->K + i * s->d_key, s->d_key, s->V + i * s->d_value, s->d_value);
    if (mode == W_RULE) {
      shadow_step(&sh);
      check_sizes(m, i + 1, &v);
    } else {
      shadow_observe(&sh, m, prev, &prev_mc, &v);
    }
    check_step(m, &sh, &v);
  }
  int ok = 1;
  for (int k = 0; k < V_KINDS; k++)
    ok &= prop_check(ctx, v.count[k] == 0, "%s (δ = %g, n = %zu): %s at %zu steps, first after %zu",
                     what, delta, s->n, v_name[k], v.count[k], v.first[k]);
  if (ok)
    prop_note(ctx, "%s: %s held after all %zu steps, m′ = %zu", what,
              mode == W_RULE ? "the nearest-representative rule and sizes" : "(1)-(4)", s->n,
              sh.mc);
  shadow_free(&sh);
  kvb_method_free(m);
  gsl_rng_free(rng);
  free(prev);
}

/* The stream in its own order, sorted by ‖k‖ both ways, and clusters interleaved round robin
 * (clusters as the online rule forms them in stream order). */
static void invariants_orders(prop_ctx *ctx, const kvb_stream *s, double delta, const char *name,
                              uint64_t sub, witness_mode mode) {
  char what[96];
  snprintf(what, sizeof what, "%s, stream order", name);
  invariants_on(ctx, s, delta, what, sub, mode);
  kvb_stream *o = NULL;
  for (int desc = 0; desc < 2; desc++) {
    if (!prop_check(ctx, kvb_stream_reorder_by_key_norm(s, desc, &o) == KVB_OK, "reorder: %s",
                    kvb_strerror_last()))
      return;
    snprintf(what, sizeof what, "%s, sorted by ‖k‖ %s", name, desc ? "descending" : "ascending");
    invariants_on(ctx, o, delta, what, sub + 1 + (uint64_t)desc, mode);
    kvb_stream_free(o);
  }
  shadow sh;
  if (shadow_init(&sh, s, delta)) return;
  for (size_t i = 0; i < s->n; i++) shadow_step(&sh);
  if (prop_check(ctx, kvb_stream_interleave_clusters(s, sh.label, sh.mc, &o) == KVB_OK,
                 "interleave: %s", kvb_strerror_last())) {
    snprintf(what, sizeof what, "%s, %zu clusters interleaved", name, sh.mc);
    invariants_on(ctx, o, delta, what, sub + 3, mode);
    kvb_stream_free(o);
  }
  shadow_free(&sh);
}

static void invariants_streams(prop_ctx *ctx, witness_mode mode) {
  static const char *const clus[] = {"n=300", "d_key=4", "d_value=2", "m=6", "delta=0.5",
                                     "key_norm=2", NULL};
  static const char *const gaus[] = {"n=300", "d_key=2", "d_value=2", NULL};
  /* make check: one stream of each kind; make check-full: 8 of each (fresh substreams). */
  unsigned reps = prop_trials(ctx, 1, 8);
  for (unsigned r = 0; r < reps; r++) {
    char name[64];
    kvb_stream *a = prop_stream(ctx, 2 * r, "clusterable", clus);
    kvb_stream *b = prop_stream(ctx, 2 * r + 1, "gaussian", gaus);
    snprintf(name, sizeof name, "clusterable m=6 #%u", r);
    if (a) invariants_orders(ctx, a, 0.5, name, 1000 + 10 * r, mode);
    /* δ = 0.8 on N(0, I₂) keys: representatives crowd, so keys often have several within δ. */
    snprintf(name, sizeof name, "gaussian d=2 #%u", r);
    if (b) invariants_orders(ctx, b, 0.8, name, 5000 + 10 * r, mode);
    kvb_stream_free(a);
    kvb_stream_free(b);
  }
}

static void lemma2_invariants(prop_ctx *ctx) { invariants_streams(ctx, W_SKETCH); }

static void alg1_rule(prop_ctx *ctx) { invariants_streams(ctx, W_RULE); }

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
  invariants_orders(ctx, s, 1.0, "ties_at_delta m=5", 30, W_SKETCH);
  kvb_stream_free(s);
}

/* ---- (5): S_i uniform over C_i, slots independent ---- */

/* Index of every stream position within its shadow cluster (0 = representative). */
static void member_index(const shadow *sh, size_t upto, size_t *idx) {
  size_t *seen = calloc(sh->mc ? sh->mc : 1, sizeof *seen);
  for (size_t p = 0; p < upto; p++) idx[p] = seen[sh->label[p]]++;
  free(seen);
}

/* (5) over R runs, tallied after EVERY step k (prefix of k+1 keys). The shadow's clusters open
 * in order, so at step k the clusters 0..mc_k−1 exist with sizes sz_k(i); a slot holding the
 * member of index x in C_i counts in cell off(i) + x. The pair tables follow the largest final
 * cluster C_big with its member index binned into B <= 8 groups of the members present so far
 * (functions of independent variables are independent, and the bins keep expected counts well
 * above 5 so the table is not merged away). */
typedef struct {
  size_t n, mc, big, *off, *idx;
  double *obs;       /* n × cells */
  double *t01, *t0L; /* n × 64 */
  size_t cells, outside;
  size_t *sz;        /* n × clusters: the shadow's cluster sizes after each step */
} l2_tally;

enum { L2_T = 4, L2_B = 8 };

static size_t bin_of(size_t x, size_t size) {
  size_t B = size < L2_B ? size : L2_B;
  return x * B / size;
}

/* R runs of SubGen on s, each tallied after every step into t (see l2_tally). Returns 0, or
 * -1 when a method could not be created. */
static int tally_runs(prop_ctx *ctx, const kvb_stream *s, double delta, const shadow *sh,
                      const size_t *mck, unsigned R, uint64_t base, l2_tally *t) {
  size_t n = s->n;
  const size_t *sz = t->sz;
  for (unsigned r = 0; r < R; r++) {
    gsl_rng *rng = prop_rng(ctx, base + r);
    kvb_method *m = make_subgen(ctx, rng, s, delta, L2_T, 1);
    if (!m) {
      gsl_rng_free(rng);
      return -1;
    }
    for (size_t k = 0; k < n; k++) {
      kvb_method_update(m, s->K + k * s->d_key, s->d_key, s->V + k * s->d_value, s->d_value);
      size_t mc = kvb_subgen_num_clusters(m);
      if (mc != mck[k]) {
        t->outside++;
        continue;
      }
      for (size_t i = 0; i < mc; i++) {
        const uint64_t *Sp;
        kvb_subgen_cluster(m, i, NULL, NULL, NULL, &Sp, NULL);
        int ok = 1;
        for (size_t j = 0; j < L2_T; j++) {
          if (Sp[j] > k || sh->label[Sp[j]] != i) {
            t->outside++;
            ok = 0;
            continue;
          }
          t->obs[k * t->cells + t->off[i] + t->idx[Sp[j]]]++;
        }
        if (ok && i == t->big) {
          size_t S = sz[k * sh->mc + i];
          size_t g0 = bin_of(t->idx[Sp[0]], S), g1 = bin_of(t->idx[Sp[1]], S),
                 gL = bin_of(t->idx[Sp[L2_T - 1]], S);
          t->t01[(k * L2_B + g0) * L2_B + g1]++;
          t->t0L[(k * L2_B + g0) * L2_B + gL]++;
        }
      }
    }
    kvb_method_free(m);
    gsl_rng_free(rng);
  }
  return 0;
}

/* The Lemma 2 (5) tests on the tallies: at n/2 and n keys, and over every step with
 * Bonferroni, each family at α = 1e-6. */
static void test_tallies(prop_ctx *ctx, const char *what, const shadow *sh, const l2_tally *t,
                         const size_t *mck, unsigned R, double *ex) {
  size_t n = t->n;
  const size_t *sz = t->sz;
  static const char *const fam[3] = {"S_i uniform over C_i", "slot 0 ⊥ slot 1",
                                     "slot 0 ⊥ slot t-1"};
  double pmin[3] = {1, 1, 1};
  size_t kmin[3] = {0, 0, 0}, tests[3] = {0, 0, 0};
  for (size_t k = 0; k < n; k++) {
    for (size_t i = 0; i < sh->mc; i++)
      for (size_t x = 0; x < sh->size[i]; x++)
        ex[t->off[i] + x] = (i < mck[k] && x < sz[k * sh->mc + i])
                               ? (double)R * L2_T / (double)sz[k * sh->mc + i]
                               : 0;
    size_t Sb = sz[k * sh->mc + t->big], B = Sb < L2_B ? Sb : L2_B;
    double stat[3], pv[3];
    size_t df[3] = {0, 0, 0};
    pv[0] = kvb_chisq_gof(t->obs + k * t->cells, ex, t->cells, &stat[0], &df[0]);
    /* the tables are L2_B wide; rows/columns beyond B stay empty and are merged away */
    pv[1] = pv[2] = 1;
    if (B >= 2) {
      pv[1] = kvb_chisq_independence(t->t01 + k * L2_B * L2_B, L2_B, L2_B, &stat[1], &df[1]);
      pv[2] = kvb_chisq_independence(t->t0L + k * L2_B * L2_B, L2_B, L2_B, &stat[2], &df[2]);
    }
    for (int c = 0; c < 3; c++) {
      if (df[c] == 0) continue;
      tests[c]++;
      if (pv[c] < pmin[c]) pmin[c] = pv[c], kmin[c] = k + 1;
    }
    if (k + 1 != n && k + 1 != n / 2) continue;
    for (int c = 0; c < 3; c++) {
      prop_pvalue(ctx, pv[c], PROP_ALPHA,
                  "%s after %zu keys: %s (%zu clusters, |C_big| = %zu, %u runs × %d slots, "
                  "X² = %.1f, df = %zu)", what, k + 1, fam[c], mck[k], Sb, R, L2_T, stat[c],
                  df[c]);
      prop_note(ctx, "(5) %s @%zu: %s X² = %.1f df = %zu p = %.3g", what, k + 1, fam[c],
                stat[c], df[c], pv[c]);
    }
  }
  for (int c = 0; c < 3; c++) {
    double adj = fmin(1.0, pmin[c] * (double)tests[c]);
    prop_pvalue(ctx, adj, PROP_ALPHA,
                "%s, every step: %s (smallest p %.3g at step %zu, Bonferroni over %zu tests)",
                what, fam[c], pmin[c], kmin[c], tests[c]);
    prop_note(ctx, "(5) %s every step: %s min p %.3g at step %zu, Bonferroni p %.3g", what,
              fam[c], pmin[c], kmin[c], adj);
  }
}

static void uniform_on(prop_ctx *ctx, const kvb_stream *s, double delta, const char *what,
                       uint64_t base) {
  unsigned R = prop_trials(ctx, 3000, 20000);
  size_t n = s->n;
  shadow sh;
  prop_unit(ctx, "run (an independent substream of SubGen's coins over the fixed stream)", R,
            "[%s] a departure from uniform sampling within a cluster (χ², notes)", what);
  if (shadow_init(&sh, s, delta)) return;
  for (size_t i = 0; i < n; i++) shadow_step(&sh);
  l2_tally t;
  memset(&t, 0, sizeof t);
  t.n = n;
  t.mc = sh.mc;
  t.idx = malloc(n * sizeof *t.idx);
  t.off = calloc(sh.mc + 1, sizeof *t.off);
  member_index(&sh, n, t.idx);
  for (size_t i = 0; i < sh.mc; i++) {
    t.off[i + 1] = t.off[i] + sh.size[i];
    if (sh.size[i] > sh.size[t.big]) t.big = i;
  }
  t.cells = t.off[sh.mc];
  t.obs = calloc(n * t.cells, sizeof *t.obs);
  t.t01 = calloc(n * L2_B * L2_B, sizeof *t.t01);
  t.t0L = calloc(n * L2_B * L2_B, sizeof *t.t0L);
  size_t *sz = calloc(n * sh.mc, sizeof *sz), *mck = calloc(n, sizeof *mck);
  t.sz = sz;
  double *ex = malloc(t.cells * sizeof *ex);
  int broken = !t.idx || !t.obs || !t.t01 || !t.t0L || !sz || !mck || !ex;
  /* sizes of the shadow clusters after each step */
  for (size_t k = 0; !broken && k < n; k++) {
    if (k) memcpy(sz + k * sh.mc, sz + (k - 1) * sh.mc, sh.mc * sizeof *sz);
    sz[k * sh.mc + sh.label[k]]++;
    mck[k] = (k ? mck[k - 1] : 0) > sh.label[k] + 1 ? mck[k - 1] : sh.label[k] + 1;
  }
  if (!broken) broken = tally_runs(ctx, s, delta, &sh, mck, R, base, &t) != 0;
  if (broken) prop_check(ctx, 0, "%s: setup failed", what);
  else {
    prop_check(ctx, t.outside == 0,
               "%s: %zu reads with m′ ≠ shadow or a sample outside its cluster's keys so far",
               what, t.outside);
    test_tallies(ctx, what, &sh, &t, mck, R, ex);
  }
  free(t.idx);
  free(t.off);
  free(t.obs);
  free(t.t01);
  free(t.t0L);
  free(sz);
  free(mck);
  free(ex);
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
    {"subgen.lemma2.invariants", "000 Lemma 2 (1)-(4) = 001 Lemma 2.3", "invariant",
     "after every step, with the partition read off the sketch's counters (each key in exactly "
     "one part): x_i ∈ C_i, n_i = |C_i|, Σ n_i = n, ‖x_i − k′‖ ≤ δ, ‖x_i − x_j‖ > δ, S_i ⊆ C_i "
     "— exactly, on clusterable and Gaussian keys in stream order, sorted by ‖k‖ both ways and "
     "clusters interleaved",
     {"method:subgen:cluster_no_count", "method:subgen:cluster_never_join"}, lemma2_invariants,
     {"S-L2.0", "S-L2.1", "S-L2.2", "S-L2.3", "S-L2.4"}},
    {"subgen.lemma2.ties", "000 Lemma 2 (1)-(4), Alg. 1 line 13 (001 line 12)", "invariant",
     "the same exact checks on the ties_at_delta stream (keys at distance exactly δ from a "
     "representative, in double) in the same four orders",
     {"method:subgen:cluster_lt", "method:subgen:cluster_no_count"}, lemma2_ties, {"S-L2.3", "S-L2.4"}},
    {"subgen.alg1.rule", "000 Alg. 1 lines 11-22 (001 lines 11-21), §2.2-2.3", "invariant",
     "after every step, against a shadow that stores every key and replays the clustering "
     "(join the NEAREST representative, line 12's arg min, when within δ; else open a cluster): "
     "m′ and every n_i equal the shadow's, x_i at the shadow's position, S_i ⊆ C_i, and all s "
     "slots of M hold tokens seen so far (exact), on the same streams and orders as Lemma 2",
     {"method:subgen:cluster_farthest", "method:subgen:cluster_never_join"}, alg1_rule, {"S-ALG1.sizes"}},
    {"subgen.lemma2.uniform", "000 Lemma 2 (5) = 001 Lemma 2.3 (5)", "distribution",
     "S_i is t i.i.d. uniform samples of C_i: chi-square GOF of the slots' indices within C_i "
     "over independent runs, and chi-square independence of slot 0 vs slots 1 and t−1 (indices in "
     "<= 8 bins), at the middle and end of a stream and of the same keys sorted by ‖k‖ "
     "(α = 1e-6 per test) and after every step (Bonferroni over steps, α = 1e-6 per family)",
     {"method:subgen:cluster_prob_half", "method:subgen:cluster_shared_coin"}, lemma2_uniform, {"S-L2.5"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

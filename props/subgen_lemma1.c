/* subgen_lemma1.c — 000 Lemma 1 (001 Lemma 2.2): correctness of UpdateMatrixProduct.
 *   (1) µ = Σ_{i≤n} ‖v_i‖²                                   — invariant, every step
 *   (2) each slot M(j) is distributed ∝ ‖v_i‖², slots i.i.d.  — distribution (see below)
 *
 * (2) is a statement about the law of M over the algorithm's coins for a FIXED stream, so it
 * is tested over R independent runs (independent PCG32 substreams) of one stream:
 *   law:          the positions held by the s slots, pooled over runs (R·s draws, i.i.d. under
 *                 the lemma), against the expected counts R·s·‖v_i‖²/µ — chi-square goodness of
 *                 fit, cells merged to expected >= 5 (kvb_chisq_gof). Tokens with v = 0 have mass
 *                 zero and must never be sampled (an exact check).
 *   independence: the R×(position of slot a, position of slot b) contingency table for the
 *                 slot pairs (0,1) and (0,s-1) — chi-square independence.
 *   order:        the lemma holds for every order, so the law is checked on one token multiset
 *                 in stream order, sorted by ‖v‖ ascending and descending (the reservoir's
 *                 probabilities are the most uneven in those orders).
 * The lemma holds "at any iteration n": the tallies are taken after every step; the final step
 * is tested and reported on its own, and every step's tests together as one family (smallest
 * p-value times the number of tests, Bonferroni). Each assertion is at α = 1e-6. */
#include "prop.h"
#include "orders.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static kvb_method *make_subgen(prop_ctx *ctx, gsl_rng *rng, const kvb_stream *s, double delta,
                               int t, int sl) {
  return prop_subgen(ctx, rng, s->d_key, s->d_value, 1.0, delta, t, sl);
}

/* (1): µ equals the running Σ‖v‖² to rounding (relative 1e-12: one rounding per addition,
 * n ≤ 4096, well inside n·2⁻⁵³), after every step, on value norms spanning 2⁻²⁰..2²⁰. */
static void lemma1_mu(prop_ctx *ctx) {
  static const char *const a[] = {"n=2048", "d_key=4", "d_value=3", "m=6", "delta=0.5",
                                  "value_spread=7", NULL};
  kvb_stream *s = prop_stream(ctx, 0, "clusterable", a);
  if (!s) return;
  gsl_rng *rng = prop_rng(ctx, 1);
  kvb_method *m = make_subgen(ctx, rng, s, 0.5, 2, 3);
  long double exact = 0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; m && i < s->n; i++) {
    const double *v = s->V + i * s->d_value;
    kvb_method_update(m, s->K + i * s->d_key, s->d_key, v, s->d_value);
    for (size_t j = 0; j < s->d_value; j++) exact += (long double)v[j] * v[j];
    double mu = kvb_subgen_mu(m);
    if (fabsl((long double)mu - exact) > 1e-12L * exact) {
      if (!bad) first_bad = i;
      bad++;
    }
  }
  prop_check(ctx, bad == 0, "µ ≠ Σ‖v‖² at %zu steps (first at step %zu)", bad, first_bad);
  prop_note(ctx, "µ matched Σ‖v‖² at all %zu steps", s->n);
  kvb_method_free(m);
  gsl_rng_free(rng);
  kvb_stream_free(s);
}


/* The Lemma 1 (2) stream: n tokens whose squared value norms span 1..~60 (so ℓ2 and uniform
 * sampling differ by a factor up to ~60 per token), plus one zero value. Keys do not matter. */
#define L1_N 12
static kvb_stream *lemma1_stream(prop_ctx *ctx) {
  kvb_stream *s = NULL;
  if (kvb_stream_alloc(L1_N, 2, 2, &s)) {
    prop_check(ctx, 0, "stream alloc: %s", kvb_strerror_last());
    return NULL;
  }
  static const double norm2[L1_N] = {3, 1, 0, 20, 7, 60, 2, 13, 1, 35, 5, 9};
  for (size_t i = 0; i < L1_N; i++) {
    s->K[2 * i] = (double)i;
    s->K[2 * i + 1] = 1;
    s->Q[2 * i] = s->Q[2 * i + 1] = 0;
    /* v = sqrt(w)·(0.6, 0.8): ‖v‖² = w to rounding; the expected counts use the computed ‖v‖². */
    s->V[2 * i] = 0.6 * sqrt(norm2[i]);
    s->V[2 * i + 1] = 0.8 * sqrt(norm2[i]);
  }
  return s;
}

/* Tallies over R runs (substreams base..base+R-1), after EVERY step k (prefix of k+1 tokens):
 * cnt[k][i] = how often a slot held token i, and the pair tables (slot 0, slot 1) and
 * (slot 0, slot S−1). Exact side checks: while µ = 0 every slot is null (subgen.h's reading of
 * 000 Alg. 1 line 26's 0/0, = 001 line 25), once µ > 0 no slot is null and none holds a future token. */
typedef struct {
  size_t n;
  double *cnt, *p01, *p0L; /* n×n, n×n×n, n×n×n */
  size_t null_bad, range_bad;
} l1_tally;

static int lemma1_runs(prop_ctx *ctx, const kvb_stream *s, unsigned R, int S, uint64_t base,
                       l1_tally *t) {
  size_t n = s->n;
  t->n = n;
  t->null_bad = t->range_bad = 0;
  t->cnt = calloc(n * n, sizeof(double));
  t->p01 = calloc(n * n * n, sizeof(double));
  t->p0L = calloc(n * n * n, sizeof(double));
  if (!t->cnt || !t->p01 || !t->p0L) return -1;
  for (unsigned r = 0; r < R; r++) {
    gsl_rng *rng = prop_rng(ctx, base + r);
    kvb_method *m = make_subgen(ctx, rng, s, 0.5, 1, S);
    if (!m) {
      gsl_rng_free(rng);
      return -1;
    }
    for (size_t k = 0; k < n; k++) {
      kvb_method_update(m, s->K + k * s->d_key, s->d_key, s->V + k * s->d_value, s->d_value);
      int zero_mu = kvb_subgen_mu(m) == 0, ok = 1;
      uint64_t pos[64];
      for (int j = 0; j < S; j++) {
        kvb_subgen_slot(m, (size_t)j, NULL, NULL, &pos[j]);
        if (zero_mu) {
          t->null_bad += pos[j] != UINT64_MAX;
          ok = 0;
        } else if (pos[j] > k) {
          t->range_bad++;
          ok = 0;
        }
      }
      if (!ok) continue;
      for (int j = 0; j < S; j++) t->cnt[k * n + pos[j]]++;
      t->p01[(k * n + pos[0]) * n + pos[1]]++;
      t->p0L[(k * n + pos[0]) * n + pos[S - 1]]++;
    }
    kvb_method_free(m);
    gsl_rng_free(rng);
  }
  return 0;
}

static void l1_free(l1_tally *t) {
  free(t->cnt);
  free(t->p01);
  free(t->p0L);
}

/* The law after the last step (one assertion each, reported) and after every step (the
 * smallest p-value over all steps, Bonferroni-corrected by the number of tests: one assertion
 * at α = 1e-6 for the whole family). */
static void lemma1_law_on(prop_ctx *ctx, const kvb_stream *s, const char *order, uint64_t base,
                          int check_independence) {
  enum { S = 4 };
  unsigned R = prop_trials(ctx, 3000, 30000);
  size_t n = s->n;
  l1_tally t;
  prop_unit(ctx, "run (an independent PCG32 substream of SubGen's coins over the fixed stream)",
            R, "%s order: a departure from slots ∝ ‖v‖² or from independent slots (χ², notes)",
            order);
  if (lemma1_runs(ctx, s, R, S, base, &t)) {
    prop_check(ctx, 0, "%s order: setup failed", order);
    l1_free(&t);
    return;
  }
  prop_check(ctx, t.null_bad == 0, "%s order: %zu slot(s) non-null while µ = 0", order,
             t.null_bad);
  prop_check(ctx, t.range_bad == 0,
             "%s order: %zu slot reads null or beyond the stream while µ > 0", order, t.range_bad);
  double exp_[L1_N], w[L1_N], mu = 0;
  double pmin[3] = {1, 1, 1};
  size_t kmin[3] = {0, 0, 0}, tests[3] = {0, 0, 0};
  for (size_t k = 0; k < n; k++) {
    w[k] = kvb_dot(s->V + k * 2, s->V + k * 2, 2);
    mu += w[k];
    if (mu == 0) continue;
    unsigned zero_hits = 0;
    for (size_t i = 0; i <= k; i++) {
      exp_[i] = (double)R * S * w[i] / mu;
      if (w[i] == 0) zero_hits += (unsigned)t.cnt[k * n + i];
    }
    prop_check(ctx, zero_hits == 0, "%s order, step %zu: a zero value was sampled %u times",
               order, k + 1, zero_hits);
    double stat, pv[3];
    size_t df[3];
    pv[0] = kvb_chisq_gof(t.cnt + k * n, exp_, k + 1, &stat, &df[0]);
    pv[1] = kvb_chisq_independence(t.p01 + k * n * n, n, n, &stat, &df[1]);
    pv[2] = kvb_chisq_independence(t.p0L + k * n * n, n, n, &stat, &df[2]);
    for (int c = 0; c < (check_independence ? 3 : 1); c++) {
      if (df[c] == 0) continue;
      tests[c]++;
      if (pv[c] < pmin[c]) pmin[c] = pv[c], kmin[c] = k + 1;
    }
    if (k + 1 < n) continue;
    /* the final step, reported in full */
    pv[0] = kvb_chisq_gof(t.cnt + k * n, exp_, k + 1, &stat, &df[0]);
    prop_pvalue(ctx, pv[0], PROP_ALPHA,
                "%s order, after all %zu tokens: slots ∝ ‖v‖² (GOF, %u runs × %d slots, X² = %.1f, "
                "df = %zu)", order, n, R, S, stat, df[0]);
    prop_note(ctx, "law (%s): X² = %.1f, df = %zu, p = %.3g", order, stat, df[0], pv[0]);
    if (!check_independence) continue;
    pv[1] = kvb_chisq_independence(t.p01 + k * n * n, n, n, &stat, &df[1]);
    prop_pvalue(ctx, pv[1], PROP_ALPHA, "%s order: slot 0 ⊥ slot 1 (X² = %.1f, df = %zu)", order,
                stat, df[1]);
    prop_note(ctx, "independence slot0/slot1: X² = %.1f, df = %zu, p = %.3g", stat, df[1], pv[1]);
    pv[2] = kvb_chisq_independence(t.p0L + k * n * n, n, n, &stat, &df[2]);
    prop_pvalue(ctx, pv[2], PROP_ALPHA, "%s order: slot 0 ⊥ slot %d (X² = %.1f, df = %zu)", order,
                S - 1, stat, df[2]);
    prop_note(ctx, "independence slot0/slot%d: X² = %.1f, df = %zu, p = %.3g", S - 1, stat, df[2],
              pv[2]);
  }
  static const char *const fam[3] = {"law ∝ ‖v‖²", "slot 0 ⊥ slot 1", "slot 0 ⊥ slot S-1"};
  for (int c = 0; c < (check_independence ? 3 : 1); c++) {
    double adj = fmin(1.0, pmin[c] * (double)tests[c]);
    prop_pvalue(ctx, adj, PROP_ALPHA,
                "%s order, every step: %s (smallest p %.3g at step %zu, Bonferroni over %zu tests)",
                order, fam[c], pmin[c], kmin[c], tests[c]);
    prop_note(ctx, "every step (%s, %s): min p %.3g at step %zu, Bonferroni p %.3g", order, fam[c],
              pmin[c], kmin[c], adj);
  }
  l1_free(&t);
}

/* (2), law and independence, in stream order. */
static void lemma1_law(prop_ctx *ctx) {
  kvb_stream *s = lemma1_stream(ctx);
  if (!s) return;
  lemma1_law_on(ctx, s, "stream", 0, 1);
  kvb_stream_free(s);
}

/* (2), law on the same multiset sorted by ‖v‖ ascending and descending. */
static void lemma1_order(prop_ctx *ctx) {
  kvb_stream *s = lemma1_stream(ctx), *up = NULL, *down = NULL;
  if (!s) return;
  if (prop_check(ctx, kvb_stream_reorder_by_value_norm(s, 0, &up) == KVB_OK &&
                          kvb_stream_reorder_by_value_norm(s, 1, &down) == KVB_OK,
                 "reorder: %s", kvb_strerror_last())) {
    lemma1_law_on(ctx, up, "ascending-‖v‖", 0, 0);
    lemma1_law_on(ctx, down, "descending-‖v‖", 1000000, 0);
  }
  kvb_stream_free(up);
  kvb_stream_free(down);
  kvb_stream_free(s);
}

const prop_claim props_subgen_lemma1[] = {
    {"subgen.lemma1.mu", "000 Lemma 1 (1)", "invariant",
     "µ = Σ‖v_i‖² after every step, to rounding (relative 1e-12)",
     {"method:subgen:mu_norm"}, lemma1_mu, {"S-L1.1"}},
    {"subgen.lemma1.law", "000 Lemma 1 (2)", "distribution",
     "each slot of M is distributed ∝ ‖v_i‖² (chi-square GOF over independent runs, zero values "
     "never sampled, slots null exactly while µ = 0) and slots (0,1), (0,s-1) are independent "
     "(chi-square independence), after the last step (α = 1e-6 per test) and after every step "
     "(Bonferroni over steps, α = 1e-6 per family)",
     {"method:subgen:mp_prob_half", "method:subgen:mp_uniform", "method:subgen:mp_shared_coin"}, lemma1_law, {"S-L1.2"}},
    {"subgen.lemma1.order", "000 Lemma 1 (2)", "distribution",
     "the law ∝ ‖v_i‖² holds for the same tokens sorted by ‖v‖ ascending and descending "
     "(chi-square GOF after the last step and, Bonferroni-corrected, after every step; "
     "α = 1e-6 each)",
     {"method:subgen:mp_prob_half", "method:subgen:mp_uniform"}, lemma1_order, {"S-L1.2"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

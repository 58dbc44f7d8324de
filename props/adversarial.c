/* adversarial.c — the adversarial streams of adversarial/ wired into claims about SubGen
 * (000 Algorithm 1, Definition 1, Lemma 1, Theorem 1). Each claim says whether the attacked
 * guarantee must still hold (then a method mutant is caught) or whether the assumption is
 * violated and the claim only pins down what breaks and by how much (then a stream mutant
 * "stream:TYPE:NAME" — the attack switched off — must make the claim fail; prop_stream applies
 * it). */
#include "prop.h"
#include "walk.h"
#include "balancekv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

static kvb_method *make_subgen(prop_ctx *ctx, gsl_rng *rng, size_t dk, size_t dv, double scale,
                               double delta, int t, int s) {
  return prop_subgen(ctx, rng, dk, dv, scale, delta, t, s);
}

static void feed(kvb_method *m, const kvb_stream *s, size_t upto) {
  for (size_t i = 0; m && i < upto; i++)
    kvb_method_update(m, s->K + i * s->d_key, s->d_key, s->V + i * s->d_value, s->d_value);
}

/* ---- adv_sphere: m′ grows like n ---- */

/* The unit is the stream: prefixes of one stream share their tokens, so its 5 sizes are one
 * draw, not five (DESIGN.md, The sampling unit). Per stream, the log–log slope of m′ against
 * n over n = 128…2048 (a fresh SubGen run on each prefix); across MP_STREAMS independent
 * streams (substreams sub + 2r, sub + 2r + 1) the one-sample t test on those slopes (df
 * MP_STREAMS − 1). MP_STREAMS = 8: the per-stream slopes spread by sd ≈ 5e-4 about 0.999
 * (m′ = n but at the largest size), so t_{7, 1e-6} leaves the cell at p ~ 1e-17 (flip ~ 2e-15);
 * at 4 streams (df 3) it sat at p ~ 1e-8 with flip p 0.08. mprime_slope writes the mean slope,
 * its se over streams and df; with verbose, the
 * first stream's m′ per size. 0 on success. */
enum { MP_STREAMS = 8, MP_SIZES = 5 };
static int mprime_slope(prop_ctx *ctx, const char *mut, uint64_t sub, int verbose, double *b,
                        double *se, double *df, double *sd_out) {
  static const size_t sizes[MP_SIZES] = {128, 256, 512, 1024, 2048};
  double lx[MP_SIZES], ly[MP_SIZES], slope[MP_STREAMS];
  char assign_mut[64];
  snprintf(assign_mut, sizeof assign_mut, "mutant=%s", mut ? mut : "");
  const char *a[] = {"n=2048", "d_key=16", "d_value=4", mut ? assign_mut : NULL, NULL};
  int ok = 1;
  for (int r = 0; r < MP_STREAMS && ok; r++) {
    kvb_stream *s = prop_stream(ctx, sub + 2 * (uint64_t)r, "adv_sphere", a);
    if (!s) return -1;
    gsl_rng *rng = prop_rng(ctx, sub + 2 * (uint64_t)r + 1);
    kvb_memory mem = {0, 0};
    for (size_t j = 0; j < MP_SIZES && ok; j++) {
      kvb_method *m = make_subgen(ctx, rng, 16, 4, 1.0, 0.5, 2, 8);
      ok = m != NULL;
      feed(m, s, sizes[j]);
      size_t mc = m ? kvb_subgen_num_clusters(m) : 1;
      if (m) kvb_method_memory(m, &mem);
      lx[j] = log((double)sizes[j]);
      ly[j] = log((double)mc);
      if (verbose && r == 0)
        prop_note(ctx, "n=%zu: m′=%zu (m′/n=%.3f), memory %zu vectors (stream 1 of %d)", sizes[j],
                  mc, (double)mc / sizes[j], mem.vectors, MP_STREAMS);
      kvb_method_free(m);
    }
    double bs, ses, dfs;
    if (ok) kvb_linear_fit_se(MP_SIZES, lx, ly, &bs, &ses, &dfs);
    slope[r] = bs;
    gsl_rng_free(rng);
    kvb_stream_free(s);
  }
  if (!ok) return -1;
  double mu, sd;
  prop_mean_sd(slope, MP_STREAMS, &mu, &sd);
  *b = mu, *se = sd / sqrt((double)MP_STREAMS), *df = MP_STREAMS - 1;
  if (sd_out) *sd_out = sd;
  return 0;
}

/* One-sided test of H1 "slope > 0.9" (H0: slope <= 0.9): P[T_df >= (b − 0.9)/se]. Slopes
 * identical in every stream (se = 0) are decided by the sign. */
static double slope_above_p(double b, double se, double df, double theta) {
  if (!(se > 0)) return b > theta ? 0.0 : 1.0;
  return gsl_cdf_tdist_Q((b - theta) / se, df);
}

static void sphere_mprime(prop_ctx *ctx) {
  double b, se, df, sd;
  if (mprime_slope(ctx, NULL, 0, 1, &b, &se, &df, &sd)) return;
  double p = slope_above_p(b, se, df, 0.9);
  double det = se > 0 ? kvb_t_detectable(se, df, PROP_ALPHA, 0.9) : 0;
  prop_unit(ctx, "independent adv_sphere stream (its slope over fresh SubGen runs on its "
            "prefixes n = 128..2048)", MP_STREAMS, "a mean slope above 0.9: the one-sample t test "
            "over the streams' slopes (df %.0f) detects a slope >= %.3f with power 0.9", df, 0.9 + det);
  prop_note(ctx, "log m′ vs log n slope per stream: mean %.4f, sd %.3g over %d streams (se %.3g, "
            "df %.0f; sizes n = 128..2048): assumption violated, no guarantee; SubGen's memory is "
            "linear. One-sided t test of slope > 0.9 at alpha = 1e-6 detects a slope ≥ %.3f with "
            "power 0.9", b, sd, MP_STREAMS, se, df, 0.9 + det);
  /* The rule of a pre-registered cell: significantly above 0.9 → HOLDS; significantly below it
   * (the keys were clusterable after all) → FAILS; neither → NOT-OBSERVED. */
  prop_cell(ctx, p < PROP_ALPHA ? PROP_HOLDS : 1 - p < PROP_ALPHA ? PROP_FAILS : PROP_NOT_OBSERVED,
            "m′ growth on adv_sphere", "mean slope %.4f vs 0.9: p(above) = %.3g, p(below) = %.3g",
            b, p, 1 - p);
  prop_cell_pvalues(ctx, df, 2, (double[]){p, 1 - p}); /* the t test each way */
  /* Control: the same test on the stream with the attack off (keys at 4 fixed points, an
   * (4, 0)-clusterable stream): m′ stays at 4, slope 0, so the assertion must reject it. */
  double cb, cse, cdf;
  if (mprime_slope(ctx, "clustered", 100, 0, &cb, &cse, &cdf, NULL) == 0) {
    double cp = slope_above_p(cb, cse, cdf, 0.9);
    prop_control(ctx, "clusterable keys (4 points)", cp < PROP_ALPHA,
                 "m′ mean slope %.3f over %d streams, one-sided p = %.3g", cb, MP_STREAMS, cp);
  }
}

/* ---- adv_ties: <= in 000 Alg. 1 line 13 (001 line 12) ---- */

static void ties_le(prop_ctx *ctx) {
  const char *a[] = {"n=256", "d_key=8", "d_value=4", "delta=0.5", "bases=4", NULL};
  kvb_stream *s = prop_stream(ctx, 0, "adv_ties", a);
  if (!s) return;
  gsl_rng *rng = prop_rng(ctx, 1);
  kvb_method *m = make_subgen(ctx, rng, 8, 4, 1.0, 0.5, 2, 4);
  /* the generator's followers are at distance exactly δ: check it really is exact */
  size_t exact = 0;
  for (size_t i = 4; i < s->n; i++) {
    size_t b = 0;
    while (b < 4 && fabs(s->K[i * 8] - s->K[b * 8]) > 0) b++;
    exact += b < 4 && kvb_dist2(s->K + i * 8, s->K + b * 8, 8) == 0.5;
  }
  prop_check(ctx, exact == s->n - 4, "only %zu of %zu followers at distance exactly δ", exact,
             s->n - 4);
  feed(m, s, s->n);
  size_t mc = kvb_subgen_num_clusters(m);
  prop_check(ctx, mc == 4, "m′ = %zu, want 4 (every follower at distance exactly δ joins)", mc);
  prop_note(ctx, "252 followers at distance exactly δ: m′ = %zu (bound holds: m′ = bases)", mc);
  kvb_method_free(m);
  gsl_rng_free(rng);
  kvb_stream_free(s);
}

/* ---- adv_duplicates: τ exact ---- */

static void duplicates_tau(prop_ctx *ctx) {
  const char *a[] = {"n=512", "d_key=8", "d_value=4", "distinct=5", "r=2", NULL};
  kvb_stream *s = prop_stream(ctx, 0, "adv_duplicates", a);
  if (!s) return;
  gsl_rng *rng = prop_rng(ctx, 1);
  kvb_method *m = make_subgen(ctx, rng, 8, 4, 1.0, 1e-9, 3, 4);
  size_t bad = 0, checks = 0;
  double worst = 0;
  for (size_t i = 0; m && i < s->n; i++) {
    kvb_method_update(m, s->K + i * 8, 8, s->V + i * 4, 4);
    if (i % 16 != 15) continue;
    const double *q = s->Q + i * 8;
    double z[4], tau, shift, zex[4], lse;
    kvb_subgen_query_parts(m, q, z, &tau, &shift);
    kvb_attention_exact(i + 1, 8, 4, s->K, s->V, q, 1.0, zex, &lse);
    double rel = fabs(log(tau) + shift - lse);
    worst = fmax(worst, rel);
    bad += !(rel <= 1e-12 * (1 + fabs(lse)));
    checks++;
  }
  prop_check(ctx, bad == 0, "τ ≠ exact normalizer at %zu of %zu checkpoints (worst |Δlog| %g)",
             bad, checks, worst);
  prop_note(ctx, "duplicated keys: SubGen's τ equals Σ e^{⟨q,k⟩} to |Δlog| <= %.2g at %zu "
            "checkpoints; m′ = %zu (bound holds, zero error)", worst, checks,
            kvb_subgen_num_clusters(m));
  kvb_method_free(m);
  gsl_rng_free(rng);
  kvb_stream_free(s);
}

/* ---- adv_large_q: τ's relative error grows with r at fixed t ---- */

/* Squared relative errors of τ̂ over R sketches (t = 4, s = 2, δ = 1) on adv_large_q with query
 * norm r and stream mutant `mut` (NULL: the attack, or the stream mutant the claim runs); their
 * mean through *ms. Caller frees. */
static double *tau_sq_errors(prop_ctx *ctx, const char *mut, double r, unsigned R, uint64_t sub,
                             size_t *n_out, double *ms) {
  char assign_mut[64], assign_r[32];
  snprintf(assign_mut, sizeof assign_mut, "mutant=%s", mut ? mut : "");
  snprintf(assign_r, sizeof assign_r, "r=%g", r);
  const char *a[] = {"n=256", "d_key=4", "d_value=2", "m=2", "delta=1", assign_r,
                     mut ? assign_mut : NULL, NULL};
  kvb_stream *s = prop_stream(ctx, sub, "adv_large_q", a);
  double *sqs = s ? malloc(R * sizeof *sqs) : NULL;
  if (!sqs) {
    kvb_stream_free(s);
    return NULL;
  }
  const double *q = s->Q; /* the same query r·e_0 for every token */
  double z[2], lse, sq = 0;
  kvb_attention_exact(s->n, 4, 2, s->K, s->V, q, 1.0, z, &lse);
  gsl_rng *rng = prop_rng(ctx, 100 + sub);
  for (unsigned t = 0; t < R; t++) {
    kvb_method *m = make_subgen(ctx, rng, 4, 2, 1.0, 1.0, 4, 2);
    if (!m) {
      free(sqs);
      sqs = NULL;
      break;
    }
    feed(m, s, s->n);
    double zz[2], tau, shift;
    kvb_subgen_query_parts(m, q, zz, &tau, &shift);
    double rel = expm1(log(tau) + shift - lse); /* τ̂/τ − 1 */
    sqs[t] = rel * rel;
    sq += rel * rel;
    kvb_method_free(m);
  }
  gsl_rng_free(rng);
  *n_out = s->n;
  *ms = sq / R;
  kvb_stream_free(s);
  return sqs;
}

static void large_q_tau(prop_ctx *ctx) {
  double rs[] = {0.5, 1, 2, 4, 8};
  double lx[5], ly[5], *sq0 = NULL, *sq4 = NULL;
  unsigned R = prop_trials(ctx, 400, 2000);
  int ok = 1;
  for (size_t j = 0; j < 5 && ok; j++) {
    size_t n = 0;
    double ms = 0, *sqs = tau_sq_errors(ctx, NULL, rs[j], R, j, &n, &ms);
    ok = sqs != NULL;
    if (j == 0) sq0 = sqs;
    else if (j == 4) sq4 = sqs;
    else free(sqs);
    double rms = sqrt(ms);
    lx[j] = rs[j];
    ly[j] = log(rms + 1e-300);
    /* 000 Thm. 1: t = ε⁻² e^{2δr} log n; at ε = 0.1 (constant 1) */
    double t_thm = 100 * exp(2 * rs[j]) * log((double)n);
    if (ok)
      prop_note(ctx, "r=%g: rms τ relative error %.3g at t=4; Theorem 1 t(ε=0.1) = %.3g = %.3g·n%s",
                rs[j], rms, t_thm, t_thm / n, t_thm > n ? " (t > n)" : "");
  }
  if (ok && sq0 && sq4) {
    double b, lo, hi, a0, tst, det;
    kvb_linear_fit(5, lx, ly, 0.95, &b, &lo, &hi, &a0);
    /* one-sided Welch: H1 "mean squared error at r = 0.5 below that at r = 8" */
    double p1 = kvb_welch_less(sq0, R, sq4, R, PROP_ALPHA, 0.9, &tst, &det);
    prop_note(ctx, "d log(rms)/dr = %.3f (95%% CI [%.3f, %.3f]) with δ = 1; r=8 vs r=0.5 "
              "squared error: one-sided Welch t = %.1f over %u sketches each, alpha = 1e-6, "
              "detects a difference of mean squared error ≥ %.3g with power 0.9", b, lo, hi,
              tst, R, det);
    prop_check(ctx, p1 < PROP_ALPHA,
               "τ error at r=8 not larger than at r=0.5 (one-sided Welch p = %.3g, alpha = 1e-6)",
               p1);
  }
  free(sq0);
  free(sq4);
  /* Control: the same clusters with their δ-spread orthogonal to q (stream mutant
   * "orthogonal": every score ⟨q, k⟩ is equal inside a cluster, so the e^{2δr} factor of
   * 000 Thm. 1 is 1 at every r). τ's error must then not grow with r: the assertion rejects. */
  if (ok && !ctx->mutant) {
    size_t n;
    double m0, m4;
    double *c0 = tau_sq_errors(ctx, "orthogonal", rs[0], R, 10, &n, &m0);
    double *c4 = tau_sq_errors(ctx, "orthogonal", rs[4], R, 14, &n, &m4);
    if (c0 && c4) {
      double cp = kvb_welch_less(c0, R, c4, R, PROP_ALPHA, 0.9, NULL, NULL);
      prop_control(ctx, "scores flat inside clusters (spread ⟂ q)", cp < PROP_ALPHA,
                   "mean squared error %.3g at r=0.5 vs %.3g at r=8, one-sided p = %.3g", m0, m4,
                   cp);
    }
    free(c0);
    free(c4);
  }
}

/* ---- adv_values: Lemma 1's law under every norm profile and order ---- */

static void values_law(prop_ctx *ctx) {
  static const char *const profiles[] = {"spread", "heavy", "onehot"};
  static const char *const orders[] = {"stream", "sorted", "reversed", "interleaved"};
  enum { N = 64, S = 8 };
  unsigned R = prop_trials(ctx, 250, 2500);
  prop_unit(ctx, "run (an independent substream of SubGen's coins over the fixed stream; its "
            "slots are pooled per run)", R, "a departure of the slot law from ∝ ‖v‖² in each "
            "(profile, order) stream (χ² GOF over %d slots per run at alpha = 1e-6)", S);
  for (size_t pi = 0; pi < 3; pi++) {
    /* the same multiset of tokens in every order: generate each order from one substream */
    for (size_t oi = 0; oi < 4; oi++) {
      char ap[32], ao[32];
      snprintf(ap, sizeof ap, "profile=%s", profiles[pi]);
      snprintf(ao, sizeof ao, "order=%s", orders[oi]);
      const char *a[] = {"n=64", "d_key=4", "d_value=4", ap, ao, NULL};
      kvb_stream *s = prop_stream(ctx, pi, "adv_values", a);
      if (!s) return;
      double obs[N] = {0}, expct[N], mu = 0;
      for (size_t i = 0; i < N; i++) {
        expct[i] = 0;
        for (size_t c = 0; c < 4; c++) expct[i] += s->V[i * 4 + c] * s->V[i * 4 + c];
        mu += expct[i];
      }
      for (size_t i = 0; i < N; i++) expct[i] *= (double)R * S / mu;
      gsl_rng *rng = prop_rng(ctx, 1000 + 10 * pi + oi);
      for (unsigned t = 0; t < R; t++) {
        kvb_method *m = make_subgen(ctx, rng, 4, 4, 1.0, 1e9, 1, S);
        feed(m, s, N);
        for (size_t j = 0; m && j < S; j++) {
          const double *k, *v;
          uint64_t pos;
          kvb_subgen_slot(m, j, &k, &v, &pos);
          if (pos < N) obs[pos] += 1;
        }
        kvb_method_free(m);
      }
      gsl_rng_free(rng);
      double stat;
      size_t df;
      double p = kvb_chisq_gof(obs, expct, N, &stat, &df);
      prop_pvalue(ctx, p, PROP_ALPHA, "%s/%s: slot law ∝ ‖v‖² (chi2 %.1f, df %zu)", profiles[pi],
                  orders[oi], stat, df);
      if (oi == 0) {
        double nmin = INFINITY, nmax = 0;
        for (size_t i = 0; i < N; i++) {
          double nv = kvb_norm2(s->V + i * 4, 4);
          nmin = fmin(nmin, nv), nmax = fmax(nmax, nv);
        }
        prop_note(ctx, "%s: norms %.3g..%.3g, law holds in all 4 orders", profiles[pi], nmin,
                  nmax);
      }
      kvb_stream_free(s);
    }
  }
}

/* ---- adaptive queries ---- */

/* err(q)/(‖softmax(Kq)‖₂‖V‖_op): the ε a query realizes in 000 eq. (3). */
static double realized_eps(kvb_method *m, const kvb_stream *s, const double *q, double vop) {
  double z[8], zex[8], lse;
  kvb_method_query(m, q, s->d_key, z, s->d_value);
  kvb_attention_exact(s->n, s->d_key, s->d_value, s->K, s->V, q, 1.0, zex, &lse);
  double sn = kvb_softmax_norm2(s->n, s->d_key, s->K, q, 1.0);
  return kvb_dist2(z, zex, s->d_value) / (sn * vop);
}

/* The adversary's search on one sketch: E evaluations of realized_eps on the sphere ‖q‖ = r.
 * Faithful search: half the budget on random queries, the other half hill-climbing from the
 * best (random-restart local search that sees the sketch's answers and, knowing the data, the
 * exact answer). `minimize` (check mutant check:search_minimize) climbs downhill instead. `blind`
 * (the control) spends all E evaluations on independent random queries: a searcher that does
 * not adapt. Returns the largest (smallest when minimizing) realized ε found. */
static double search_eps(kvb_method *m, const kvb_stream *s, double vop, gsl_rng *rng,
                         unsigned E, double r, int minimize, int blind) {
  const size_t dk = s->d_key;
  double best[8] = {0}, cand[8], found = minimize ? INFINITY : 0;
  unsigned e = 0;
  for (; e < (blind ? E : E / 2); e++) {
    kvb_rand_sphere(rng, cand, dk, r);
    double v = realized_eps(m, s, cand, vop);
    if (minimize ? v < found : v > found) {
      found = v;
      memcpy(best, cand, sizeof best);
    }
  }
  for (double step = 0.3; e < E; step = step > 0.02 ? step * 0.8 : 0.3)
    for (int tries = 0; tries < 6 && e < E; tries++, e++) {
      kvb_rand_gaussian_vec(rng, cand, dk, step);
      for (size_t c = 0; c < dk; c++) cand[c] += best[c];
      double nc = kvb_norm2(cand, dk);
      for (size_t c = 0; c < dk; c++) cand[c] *= r / nc;
      double v = realized_eps(m, s, cand, vop);
      if (minimize ? v < found : v > found) {
        found = v;
        memcpy(best, cand, sizeof best);
      }
    }
  return found;
}

/* Per sketch: the adversary's best against the largest realized ε of E fixed queries drawn
 * independently of the sketch; a "win" when the adversary's is larger. Under H0 "the search
 * is no better than E fixed queries" P[win] <= 1/2 (a blind searcher with the same budget
 * wins with probability exactly 1/2 by exchangeability), so the number of wins in R sketches
 * is tested against Bin(R, 1/2), one-sided, alpha = 1e-6. The faithful search wins ~97% of
 * sketches (75-80 of 80 in 60 fresh-seed runs); R = 80 rejects H0 at >= 62 wins and detects a
 * win rate >= 0.82 with power 0.9 (both printed), so a correct search fails this check with
 * probability far below 1e-6 (P[Bin(80, 0.96) < 62] = 3e-10 is printed too) — the pass region
 * is not a rare event. */
static void adaptive_search(prop_ctx *ctx) {
  int minimize = prop_check_mutant(ctx, "search_minimize"); /* the searcher's own fault */
  unsigned R = prop_trials(ctx, 80, 320), E = 120, wins = 0, cwins = 0;
  const size_t dk = 8, dv = 4;
  double r = 2, worst_ratio = 0, sum_adapt = 0, sum_fixed = 0, worst_found = 0;
  /* 000 Thm. 1's s = ε⁻²d read with constant 1: ε(s) = √(d/s), s = 16, d = 8 */
  const double eps_s = sqrt(8.0 / 16.0);
  unsigned fixed_over = 0, adapt_over = 0;
  const char *a[] = {"n=256", "d_key=8", "d_value=4", "m=4", "delta=0.5", "r=2", NULL};
  for (unsigned t = 0; t < R; t++) {
    kvb_stream *s = prop_stream(ctx, t, "clusterable", a);
    if (!s) return;
    gsl_rng *rng = prop_rng(ctx, 1000 + t);
    kvb_method *m = make_subgen(ctx, rng, dk, dv, 1.0, 0.5, 4, 16);
    if (!m) {
      gsl_rng_free(rng);
      kvb_stream_free(s);
      return;
    }
    feed(m, s, s->n);
    double vop;
    kvb_operator_norm(s->n, dv, s->V, &vop);
    /* baseline: E fixed queries drawn independently of the sketch */
    double fixed_max = 0, q[8];
    for (unsigned e = 0; e < E; e++) {
      kvb_rand_sphere(rng, q, dk, r);
      double v = realized_eps(m, s, q, vop);
      fixed_max = fmax(fixed_max, v);
      fixed_over += v > eps_s;
    }
    double found = search_eps(m, s, vop, rng, E, r, minimize, 0);
    double blind = search_eps(m, s, vop, rng, E, r, 0, 1);
    wins += found > fixed_max;
    cwins += blind > fixed_max;
    adapt_over += found > eps_s;
    worst_found = fmax(worst_found, found);
    worst_ratio = fmax(worst_ratio, found / fixed_max);
    sum_adapt += found;
    sum_fixed += fixed_max;
    kvb_method_free(m);
    gsl_rng_free(rng);
    kvb_stream_free(s);
  }
  unsigned crit;
  double p90 = kvb_binom_detectable_rate(R, 0.5, PROP_ALPHA, 0.9, &crit);
  /* P[a search winning 96% of sketches is rejected]: P[Bin(R, 0.96) < crit] */
  double miss = crit > 0 ? 1 - kvb_binom_tail_ge(crit, 0.96, R) : 0;
  prop_note(ctx, "against ε(s) = √(d/s) = %.3f (Theorem 1, constant 1): fixed queries exceed it "
            "in %u/%u, the adaptive worst in %u/%u sketches; worst found %.3f = %.2f·ε(s)", eps_s,
            fixed_over, R * E, adapt_over, R, worst_found, worst_found / eps_s);
  prop_note(ctx, "adaptive worst beats the max of %u fixed queries in %u/%u sketches; mean "
            "realized ε adaptive %.4f vs fixed-max %.4f (x%.2f), up to x%.2f. Theorem 1 is per "
            "fixed query: exceeding is not a violation", E, wins, R, sum_adapt / R, sum_fixed / R,
            sum_adapt / sum_fixed, worst_ratio);
  prop_note(ctx, "sign test: N = %u sketches, alpha = 1e-6 one-sided against P[win] = 1/2, rejects "
            "at >= %u wins, detects a win rate >= %.3f with power 0.9; a search winning 96%% "
            "is missed with probability %.2g", R, crit, p90, miss);
  double p = kvb_binom_tail_ge(wins, 0.5, R);
  prop_check(ctx, p < PROP_ALPHA,
             "search not better than %u fixed queries: P[Bin(%u,1/2) >= %u wins] = %.3g "
             "(alpha = 1e-6)", E, R, wins, p);
  /* Control: the blind searcher (E independent random queries, no adaptation) through the same
   * sign test; it wins with probability 1/2, so the test must not call it better. */
  double cp = kvb_binom_tail_ge(cwins, 0.5, R);
  prop_control(ctx, "blind search (E random queries)", cp < PROP_ALPHA,
               "wins %u/%u, P[Bin(%u,1/2) >= %u] = %.3g", cwins, R, R, cwins, cp);
}

/* ---- adv_values on BalanceKV: buckets and erasure (003 Alg. 1 lines 5-8) ---- */

static void values_balancekv(prop_ctx *ctx) {
  const char *a[] = {"n=256", "d_key=4", "d_value=4", "profile=spread", "order=stream", NULL};
  kvb_stream *s = prop_stream(ctx, 0, "adv_values", a);
  if (!s) return;
  const double r = 1, eps = 0.5, scale = 0.5; /* scale = 1/√d, d = 4 */
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "r", r);
  kvb_params_set(&p, "t", 8);
  kvb_params_set(&p, "T", 5);
  kvb_params_set(&p, "eps", eps);
  kvb_params_set(&p, "n", 256);
  prop_apply_mutant(ctx, "balancekv", &p);
  gsl_rng *rng = prop_rng(ctx, 1);
  kvb_method_config cfg = {4, 4, scale, rng};
  kvb_method *m = NULL;
  if (kvb_method_alloc("balancekv", &cfg, &p, &m)) {
    prop_check(ctx, 0, "balancekv alloc: %s", kvb_strerror_last());
    gsl_rng_free(rng);
    kvb_stream_free(s);
    return;
  }
  double vmax = 0, th = 0;
  size_t bad_live = 0, bad_bucket = 0;
  for (size_t j = 0; j < s->n; j++) {
    const double *v = s->V + j * 4;
    double nv = kvb_norm2(v, 4);
    kvb_method_update(m, s->K + j * 4, 4, v, 4);
    vmax = fmax(vmax, nv);
    /* line 8 with n = 256 given: θ = (ε/2n)·e^{−r²/√d}·v_max */
    th = eps / (2.0 * 256) * exp(-r * r * scale) * vmax;
    /* line 5: 2^{i−1} < ‖v‖ <= 2^i, i.e. i = ⌈log2 ‖v‖⌉ (norms here are exact powers of 2
     * up to the rounding of the sphere scaling, so compare with frexp) */
    int e2;
    double mant = frexp(nv, &e2); /* nv = mant·2^e2, mant in [0.5, 1) */
    int want = mant == 0.5 ? e2 - 1 : e2;
    bad_bucket += kvb_balancekv_bucket_of(nv) != want;
    int idx;
    for (size_t b = 0; kvb_balancekv_bucket(m, b, &idx); b++)
      bad_live += !(ldexp(1.0, idx) > th);
  }
  size_t ne = 0;
  const kvb_balancekv_erasure *er = kvb_balancekv_erasures(m, &ne);
  size_t bad_log = 0;
  for (size_t k = 0; k < ne; k++) {
    double want = eps / (2.0 * er[k].n_used) * exp(-r * r * scale) * er[k].vmax;
    bad_log += !(fabs(er[k].threshold - want) <= 1e-12 * want && ldexp(1.0, er[k].bucket) <= want);
  }
  prop_check(ctx, bad_bucket == 0, "%zu tokens put in a bucket other than ⌈log2‖v‖⌉", bad_bucket);
  prop_check(ctx, bad_live == 0, "%zu (step, live bucket) pairs with 2^i <= θ (should be erased)",
             bad_live);
  prop_check(ctx, bad_log == 0, "%zu of %zu erasures not at 2^i <= (ε/2n)e^{-r²/√d}v_max", bad_log,
             ne);
  /* what the erasure costs: the norm mass of tokens at or below the final threshold bucket */
  double lost = 0, total = 0;
  size_t nlost = 0;
  for (size_t j = 0; j < s->n; j++) {
    double nv = kvb_norm2(s->V + j * 4, 4);
    total += nv;
    if (ldexp(1.0, kvb_balancekv_bucket_of(nv)) <= th) lost += nv, nlost++;
  }
  kvb_balancekv_info info;
  kvb_balancekv_get_info(m, &info);
  prop_note(ctx, "norms 2^-30..2^30: %zu live buckets, %zu erasures; %zu of %zu tokens (%.3g of "
            "Σ‖v‖) lie in erased buckets at the end (θ = %.3g)", info.buckets, ne, nlost, s->n,
            lost / total, th);
  kvb_method_free(m);
  gsl_rng_free(rng);
  kvb_stream_free(s);
}

/* ---- adv_collinear: the walk's FAIL test ---- */

/* max_i |corr_i|/(c r²) of a finished walk (003 Alg. 3 line 5), recomputed from its signs. */
static double walk_max_ratio(size_t n, size_t dim, const double *U, const int *eps, double r,
                             double c) {
  double w[64] = {0}, worst = 0;
  for (size_t i = 0; i < n; i++) {
    double corr = kvb_dot(w, U + i * dim, dim);
    worst = fmax(worst, fabs(corr) / (c * r * r));
    for (size_t j = 0; j < dim; j++) w[j] += eps[i] * U[i * dim + j];
  }
  return worst;
}

/* 003 Alg. 3's FAIL guarantee on near-collinear keys at the paper's c, with random signs (line 8
 * replaced by p = ½, FAIL test kept) through the same binomial test, and the output side. */
static void collinear_walk(prop_ctx *ctx) {
  unsigned flags = prop_walk_flags(ctx);
  const size_t n = 8192, dim = 16;
  const double delta = 1e-9, r = 1;
  double c = kvb_walk_paper_c(n, delta);
  unsigned R = prop_trials(ctx, 20, 200), fails = 0, rfails = 0, big = 0;
  prop_unit(ctx, "run (a fresh collinear key set and the walk's coins)", R,
            "a FAIL rate above δ = %g (binomial, notes)", delta);
  double worst_col = 0, worst_rs = 0;
  int *eps = malloc(n * sizeof *eps);
  for (unsigned t = 0; t < R; t++) {
    const char *a[] = {"n=8192", "d_key=16", "d_value=1", "spread=1e-3", NULL};
    kvb_stream *s = prop_stream(ctx, 2 * t, "adv_collinear", a);
    if (!s) break;
    gsl_rng *rng = prop_rng(ctx, 10000 + t);
    uint64_t f = 0;
    kvb_walk_vectors(n, dim, s->K, r, c, NULL, rng, flags, eps, &f);
    fails += f > 0;
    worst_col = fmax(worst_col, walk_max_ratio(n, dim, s->K, eps, r, c));
    size_t plus = 0;
    for (size_t i = 0; i < n; i++) plus += eps[i] > 0;
    size_t side = kvb_walk_output_sign(n, eps, flags) > 0 ? plus : n - plus;
    big += 2 * side > n;
    kvb_walk_vectors(n, dim, s->K, r, c, NULL, rng, flags | KVB_WALK_MUT_RANDOM_SIGNS, eps, &f);
    rfails += f > 0;
    worst_rs = fmax(worst_rs, walk_max_ratio(n, dim, s->K, eps, r, c));
    gsl_rng_free(rng);
    kvb_stream_free(s);
  }
  free(eps);
  prop_binomial_bound(ctx, fails, R, delta, "walks with FAIL on collinear keys (c = 30 log(n/δ))");
  prop_check(ctx, big == 0, "output side larger than n/2 in %u walks", big);
  prop_control(ctx, "random_signs", kvb_binom_tail_ge(rfails, delta, R) >= PROP_ALPHA,
               "random signs on the same keys: FAIL in %u/%u walks, max |corr|/(c r²) %.4f (walk %.4f, "
               "c = %.0f)", rfails, R, worst_rs, worst_col, c);
}

/* The walk's advantage on near-collinear keys: max_i |corr_i|/r² (003 Alg. 3 line 5) below random
 * signs' on the same keys (Welch one-sided, α = 1e-6), cells [paper c], [c = 16]. */
static void collinear_advantage(prop_ctx *ctx) {
  unsigned flags = prop_walk_flags(ctx);
  const size_t n = 8192, dim = 16;
  const double delta = 1e-9, r = 1;
  /* 100 streams in the check tier: at 60 the [paper c] cell sat at p ~ 1e-11 and flipped to
   * INCONCLUSIVE on a fresh seed with probability ~0.08 (props/README.md, Verdicts that
   * reproduce) */
  unsigned R = prop_trials(ctx, 100, 200);
  prop_unit(ctx, "run (a fresh collinear key set; walk and random signs on it)", R,
            "an advantage of 10%% of random signs' mean (each cell's note)");
  int *eps = malloc(n * sizeof *eps);
  double *mw = malloc(R * sizeof *mw), *mr = malloc(R * sizeof *mr), *m2 = malloc(R * sizeof *m2);
  static const char *const cell[2] = {"paper c", "c = 16"};
  for (int ci = 0; ci < 2; ci++) {
    double c = ci ? 16.0 : kvb_walk_paper_c(n, delta);
    unsigned fw = 0;
    for (unsigned t = 0; t < R; t++) {
      const char *a[] = {"n=8192", "d_key=16", "d_value=1", "spread=1e-3", NULL};
      kvb_stream *s = prop_stream(ctx, 2 * t, "adv_collinear", a);
      if (!s) break;
      gsl_rng *rng = prop_rng(ctx, 20000 + 1000 * ci + t);
      uint64_t f = 0;
      kvb_walk_vectors(n, dim, s->K, r, c, NULL, rng, flags, eps, &f);
      fw += f > 0;
      mw[t] = c * walk_max_ratio(n, dim, s->K, eps, r, c);
      kvb_walk_vectors(n, dim, s->K, r, c, NULL, rng, KVB_WALK_MUT_RANDOM_SIGNS, eps, &f);
      mr[t] = c * walk_max_ratio(n, dim, s->K, eps, r, c);
      kvb_walk_vectors(n, dim, s->K, r, c, NULL, rng, KVB_WALK_MUT_RANDOM_SIGNS, eps, &f);
      m2[t] = c * walk_max_ratio(n, dim, s->K, eps, r, c);
      gsl_rng_free(rng);
      kvb_stream_free(s);
    }
    double tt, det, p = kvb_welch_less(mw, R, mr, R, PROP_ALPHA, 0.9, &tt, &det);
    double sw = 0, sr = 0;
    for (unsigned t = 0; t < R; t++) sw += mw[t] / R, sr += mr[t] / R;
    prop_advantage_cell(ctx, cell[ci], p, det, 0.1 * sr, "an advantage of 10% of random signs' mean",
                        "c = %.0f: mean max|corr|/r² walk %.2f (FAIL in %u/%u) vs random signs "
                        "%.2f; unit = independent stream, N = %u each; one-sided Welch t = %.2f, "
                        "p = %.2g, alpha = 1e-6, detects an advantage >= %.3g with power 0.9",
                        c, sw, fw, R, sr, R, tt, p, det);
    prop_cell_gate(ctx, det, 0.1 * sr, (double)R - 1); /* Welch: df >= R − 1 */
    if (ci == 1) {
      p = kvb_welch_less(m2, R, mr, R, PROP_ALPHA, 0.9, &tt, &det);
      prop_control(ctx, "random_signs", p < PROP_ALPHA, "a second random-sign walk vs random signs: "
                   "t = %.2f, p = %.2g", tt, p);
    }
  }
  free(eps), free(mw), free(mr), free(m2);
}

const prop_claim props_adversarial[] = {
    /* Not a check of a paper claim: Theorem 1's memory bound is conditional on (m, δ)-
     * clusterable keys; this shows what happens when the premise fails (covers nothing). */
    {"adversarial.sphere.mprime", "000 Def. 1, Thm. 1 (memory premise)", "scaling",
     "keys uniform on a sphere violate clusterability: SubGen's m′ grows like n (per-stream "
     "log-log slope, mean over 8 streams > 0.9, one-sided t test at alpha = 1e-6; control: "
     "4-point clusterable keys, slope 0); no "
     "guarantee is promised, the suite reports m′/n",
     {"stream:adv_sphere:clustered"}, sphere_mprime, {NULL}},
    {"adversarial.ties.le", "000 Alg. 1 line 13 (001 line 12)", "invariant",
     "keys at distance exactly δ join their representative (<=): m′ = number of bases, exactly",
     {"method:subgen:cluster_lt"}, ties_le, {"S-L2.4"}},
    {"adversarial.duplicates.tau", "000 Alg. 1 lines 13-18, 30, eq. (5)", "invariant",
     "with exactly duplicated keys SubGen's τ equals the exact softmax normalizer to relative "
     "1e-12 at every checkpoint",
     {"method:subgen:tau_no_count"}, duplicates_tau, {"S-T1.eq5"}},
    /* Shows the e^{2δr} factor of Theorem 1's t is not an artefact of the proof (the error at
     * fixed t does grow with δr); Theorem 1 states sufficiency only, so no paper row is
     * verified by it (covers nothing). */
    {"adversarial.large_q.tau", "000 Thm. 1 (e^{2δr} in t)", "scaling",
     "at fixed t, τ's squared relative error is larger at ‖q‖ = 8 than at 0.5 (one-sided "
     "Welch t, alpha = 1e-6; control: the same clusters with their spread orthogonal to q); "
     "reports the log-slope and where Theorem 1's t exceeds n",
     {"stream:adv_large_q:orthogonal"}, large_q_tau, {NULL}},
    {"adversarial.values.law", "000 Lemma 1 (2)", "distribution",
     "ℓ2 reservoir law P[slot = i] = ‖v_i‖²/µ under norms 2^-30..2^30, heavy hitters, one-hot "
     "values, in stream/sorted/reversed/interleaved order (chi-square, alpha = 1e-6 each)",
     {"method:subgen:mp_prob_half", "method:subgen:mp_uniform"}, values_law, {"S-L1.2"}},
    /* Theorem 1 is per fixed query; this measures how far an adaptive adversary gets, which
     * the theorem does not speak to (covers nothing). */
    {"adversarial.adaptive.search", "000 Thm. 1 (per fixed query)", "comparison",
     "random-restart local search over ‖q‖ = r, after seeing the sketch, finds a larger "
     "realized ε than the max of the same number of fixed queries in more sketches than a "
     "blind searcher would (sign test against 1/2 over 80 sketches, alpha = 1e-6; control: a "
     "blind searcher with the same budget); reports the factor (the theorem is per fixed query, "
     "so exceeding is not a violation)",
     {"check:search_minimize"}, adaptive_search, {NULL}},
    {"adversarial.collinear.walk", "003 Alg. 3, Theorem A.1", "bound",
     "near-collinear keys: the Self-Balancing Walk with c = 30 log(n/δ), δ = 1e-9, FAILs with "
     "probability <= δ (binomial test, alpha = 1e-6), output side <= n/2 (exact); random signs "
     "through the same test",
     {"method:merge_reduce:walk_sign", "method:merge_reduce:keep_larger"}, collinear_walk, {"B-ALG2.fail", "B-TA.1"}},
    {"adversarial.collinear.advantage", "003 Alg. 3, Theorem A.1", "comparison",
     "near-collinear keys: the walk's max|corr|/r² below random signs' (Welch one-sided, alpha = "
     "1e-6), cells [paper c], [c = 16]; a second random-sign walk through the same test",
     {"method:merge_reduce:random_signs"}, collinear_advantage, {NULL},
     "On near-collinear keys, does the walk balance better than random signs? (003 Theorem A.1 "
     "only bounds the walk's discrepancy)"},
    {"adversarial.values.balancekv", "003 Alg. 1 lines 5-8", "invariant",
     "value norms 2^-30..2^30: every token goes to bucket ⌈log2‖v‖⌉, no live bucket has "
     "2^i <= (ε/2n)e^{-r²/√d}v_max after any step, every erasure is at that threshold (exact)",
     {"method:balancekv:no_erase", "method:balancekv:erase_2x"}, values_balancekv, {"B-ALG1.bucket"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

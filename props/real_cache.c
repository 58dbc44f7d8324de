/* real_cache.c (props) — the papers' empirical claims checked on real attention caches: the
 * post-RoPE queries, keys and values of SmolLM2-135M (src/model; 30 layers, 9 query heads sharing
 * 3 key/value heads, head dimension d = 64, scores scaled by 1/√d) run over the text
 * "debian-licenses" (GPL-3 then GFDL-1.3 of Debian's base-files, SHA-256 checked; README, The
 * real model), through the "model" stream (forward pass cached on disk). Every claim runs on every
 * layer and key/value head: 90 caches (layer, KV head), each with its 3 query heads — caches of
 * one text, not independent units (below).
 *
 *   real.cluster      000 Fig. 1 / §1, 001 Fig. 1: keys more clusterable than values;
 *   real.norms        001 Table 1 / 003 Table 3: ‖q‖, ‖k‖, ‖k − mean‖, ‖v‖ per layer, and
 *                     whether ‖q‖ stays bounded as the position grows;
 *   real.practical    000 Theorem 1 and 003 Theorem 3.1 at the measured norms, and the
 *                     nontriviality threshold ε* below which their bounds say more than z ≡ 0;
 *   real.bkvb.fig1    003 Fig. 1: block BalanceKV vs uniform sampling at equal memory, T = 1…4;
 *   real.bkvb.fig3    003 Fig. 3 (b), (d): block size 64 vs 256 at T = 1…3.
 *
 * Tokens: the first 512 of the text in the check tier, 2048 in the full tier (--full). All cells,
 * statistics and decision rules below are fixed before running.
 *
 * The unit (DESIGN, The sampling unit). Every check here sees ONE text. Its 90 (layer, KV head)
 * caches are not 90 independent draws of "a model's cache": they share the text, the tokens and
 * the layers below them. Until 2026-11 real.cluster and real.bkvb.* ran a sign test over the 90
 * caches as if they were independent (pseudo-replication: p-values far smaller than the
 * evidence). Now a claim about caches in general has the TEXT as its unit: per text one number
 * (the share of its caches in the paper's direction), and the claim-level test is the exact sign
 * test over texts at α = 1e-6 each way, which needs ≥ 20 texts to reject at all
 * (src/core/power.h). With N = 1 text its power is 0 at any effect, so those cells are INCONCLUSIVE,
 * with the number of texts power 0.9 would need at the stated effect. The within-text numbers
 * (how many of this text's caches go the paper's way) stay in the notes as a description of
 * this text; for real.bkvb.* the methods' coins are independent across caches given the text, so
 * the sign test over caches is valid conditional on the text and its p-value is printed as such
 * (a statement about this text, not about texts). real.norms is a statement along the positions
 * of a text and uses a standard error valid under serial dependence (EWC); real.practical is a
 * computation (no test). Without the model file (scripts/fetch-model) each claim is SKIPPED
 * (prop_skip), never passed. */
#include "prop.h"
#include "real_method_error.h"
#include "balancekv_block.h"
#include "kcenter.h"
#include "measures.h"
#include "model.h"
#include "subgen_bounds.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_eigen.h>

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define RC_LAYERS 30
#define RC_QH 9
#define RC_KVH 3
#define RC_D 64
#define RC_UNITS (RC_LAYERS * RC_KVH)
#define RC_TEXT "debian-licenses"

static size_t rc_tokens(const prop_ctx *ctx) { return ctx->full ? 2048 : 512; }

/* One layer's caches: Q[h] (n × 64) for the 9 query heads, K[g], V[g] for the 3 KV heads. */
typedef struct {
  size_t n;
  kvb_stream *s[RC_QH];
  const double *Q[RC_QH], *K[RC_KVH], *V[RC_KVH];
} rc_layer;

/* The layers, loaded once per process and token count through the "model" stream (each claim
 * and each of its mutant runs reads the same caches; loading the 270 streams takes seconds). */
static rc_layer rc_cache[RC_LAYERS];
static size_t rc_cache_n;

static void rc_drop(rc_layer *ly) {
  for (int h = 0; h < RC_QH; h++) kvb_stream_free(ly->s[h]);
  memset(ly, 0, sizeof *ly);
}

/* Releases nothing: the cache owns the layer (kept for the next claim). */
static void rc_layer_free(rc_layer *ly) { memset(ly, 0, sizeof *ly); }

/* 1 when the model is here; else the check is SKIPPED (prop_skip: never a pass) and 0. */
static int rc_have_model(prop_ctx *ctx) {
  if (kvb_model_available() == KVB_OK) return 1;
  prop_skip(ctx, "the real model is absent (%s; scripts/fetch-model)", kvb_strerror_last());
  return 0;
}

/* Layer L's caches into *ly (a shallow copy of the cached layer). 0 after a failed check. */
static int rc_load(prop_ctx *ctx, int L, rc_layer *ly) {
  memset(ly, 0, sizeof *ly);
  if (rc_cache_n != rc_tokens(ctx)) {
    for (int l = 0; l < RC_LAYERS; l++) rc_drop(&rc_cache[l]);
    rc_cache_n = rc_tokens(ctx);
  }
  rc_layer *c = &rc_cache[L];
  if (!c->n) {
    char ll[32], hh[32], nn[32];
    snprintf(ll, sizeof ll, "layer=%d", L), snprintf(nn, sizeof nn, "n=%zu", rc_tokens(ctx));
    for (int h = 0; h < RC_QH; h++) {
      snprintf(hh, sizeof hh, "head=%d", h);
      const char *as[] = {"text=" RC_TEXT, ll, hh, nn, NULL};
      c->s[h] = prop_stream(ctx, (uint64_t)(100 * L + h), "model", as);
      if (!c->s[h] || c->s[h]->d_key != RC_D || c->s[h]->d_value != RC_D ||
          c->s[h]->n != rc_tokens(ctx)) {
        prop_check(ctx, 0, "layer %d head %d: no 64-dimensional model stream of %zu tokens", L, h,
                   rc_tokens(ctx));
        rc_drop(c);
        return 0;
      }
      c->Q[h] = c->s[h]->Q;
      if (h % 3 == 0) c->K[h / 3] = c->s[h]->K, c->V[h / 3] = c->s[h]->V;
    }
    c->n = c->s[0]->n;
  }
  *ly = *c;
  return 1;
}

static double norm64(const double *x) {
  double s = 0;
  for (int a = 0; a < RC_D; a++) s += x[a] * x[a];
  return sqrt(s);
}

/* Mean and sd over all rows of per-row norms of X (n × 64), after subtracting mu when given. */
static void row_norms(const double *X, size_t n, const double *mu, double *mean, double *sd) {
  double s = 0, s2 = 0, y[RC_D];
  for (size_t i = 0; i < n; i++) {
    for (int a = 0; a < RC_D; a++) y[a] = X[i * RC_D + a] - (mu ? mu[a] : 0);
    double r = norm64(y);
    s += r, s2 += r * r;
  }
  *mean = s / (double)n;
  *sd = n > 1 ? sqrt(fmax(0, (s2 - s * s / (double)n) / (double)(n - 1))) : 0;
}

static void col_mean(const double *X, size_t n, double *mu) {
  for (int a = 0; a < RC_D; a++) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += X[i * RC_D + a];
    mu[a] = s / (double)n;
  }
}

/* The three-way sign test over units: wins = units where the paper's direction holds, losses the
 * opposite, ties dropped. +1 when P[Bin(N, ½) ≥ wins] < α, −1 when P[Bin(N, ½) ≥ losses] < α, 0
 * otherwise; *det the smallest win probability detected with power 0.9. */
static int sign_rule(unsigned wins, unsigned losses, double *p_win, double *p_loss, double *det) {
  unsigned N = wins + losses, crit;
  *p_win = N ? kvb_binom_tail_ge(wins, 0.5, N) : 1;
  *p_loss = N ? kvb_binom_tail_ge(losses, 0.5, N) : 1;
  *det = N ? kvb_binom_detectable_rate(N, 0.5, PROP_ALPHA, 0.9, &crit) : 1;
  return *p_win < PROP_ALPHA ? 1 : *p_loss < PROP_ALPHA ? -1 : 0;
}

/* The claim-level cell of a check whose unit is the text (header): with N_TEXTS texts the exact
 * sign test over texts cannot reject below 20 texts, so the cell is INCONCLUSIVE with its power
 * at the stated effect (the paper's direction on 95% of texts; the papers report their figures
 * on one or a few datasets and state no rate), and the within-text numbers are its text. */
enum { RC_TEXTS = 1 };
#define RC_TEXT_EFFECT 0.95
/* within: the within-text finding (1 the paper's direction, −1 the other, 0 neither, from the
 * sign test over the text's caches at α = 1e-6), recorded with prop_detail: not part of the
 * verdict, but a mutant that moves it is caught (the check can fail within the text). */
static void text_cell(prop_ctx *ctx, const char *cell, int within, double p_within,
                      const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void text_cell(prop_ctx *ctx, const char *cell, int within, double p_within,
                      const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  double pw = kvb_sign_power(RC_TEXTS, RC_TEXT_EFFECT, PROP_ALPHA);
  prop_cell(ctx, pw >= 0.9 ? PROP_NOT_OBSERVED : PROP_INCONCLUSIVE, cell,
            "unit = text, N = %d, power %.2g; this text: %s", RC_TEXTS, pw, buf);
  prop_detail(ctx, within > 0 ? PROP_HOLDS : within < 0 ? PROP_FAILS : PROP_NOT_OBSERVED, cell,
              "this text's caches through the sign rule at α = 1e-6 each way (a test given the "
              "text where the methods draw coins; else a description of the text)");
  prop_cell_pvalue(ctx, p_within);
}

static void text_unit(prop_ctx *ctx, const char *effect) {
  double pw = kvb_sign_power(RC_TEXTS, RC_TEXT_EFFECT, PROP_ALPHA);
  unsigned need = kvb_sign_units_needed(RC_TEXT_EFFECT, PROP_ALPHA, 0.9);
  prop_unit(ctx, "text (its caches are one cluster)", RC_TEXTS, "%s on %.0f%% of texts; the exact "
            "sign test over texts at α = 1e-6 rejects only from 20 texts; power %.2g, %u texts "
            "needed for 0.9", effect, 100 * RC_TEXT_EFFECT, pw, need);
  prop_inconclusive(ctx, pw, "one text: the (layer, head) caches of a text are not independent "
                    "draws; %u texts would be needed", need);
}

/* ---- real.cluster: 000 Fig. 1 / §1 (001 Fig. 1): keys are more clusterable than values ----
 * Normalization (the same for keys and values): subtract the mean vector of the head's n rows and
 * divide by the root mean square of the centered norms, so both sets have RMS norm 1 and the
 * statistics compare shapes, not scales (keys' norms are several times values'). Statistics per
 * unit, fixed in advance:
 *   [radius k=16]  greedy k-center covering radius with k = 16 centers (000 Fig. 1 marks k = 16
 *                  greedy centers), first center the oldest token; keys win when r_K < r_V;
 *   [m′ δ=0.5], [m′ δ=1]  clusters opened by 000 Alg. 1's online δ-rule (lines 12–13) on the
 *                  normalized rows in token order; keys win when m′_K < m′_V. δ in units of the
 *                  RMS norm: two uncorrelated rows are ≈ √2 apart, so 0.5 is tight, 1 loose.
 * Each cell: unit = text (header): INCONCLUSIVE with one text; the text's own number — keys
 * below values in how many of its 90 caches — is the cell's description (a count over one text's
 * caches, which are not independent, so no p-value is attached to it). That count through the
 * sign rule is recorded as a within-text finding (prop_detail: a description of this text, not a
 * test, and not part of the verdict), so the check mutant check:values_as_keys (key statistics
 * computed on the values: every cache ties) is still caught by moving it. */
static const double cl_delta[2] = {0.5, 1.0};

static double *normalized(const double *X, size_t n) {
  double *Y = malloc(n * RC_D * sizeof *Y), mu[RC_D], ss = 0;
  if (!Y) return NULL;
  col_mean(X, n, mu);
  for (size_t i = 0; i < n; i++)
    for (int a = 0; a < RC_D; a++) {
      Y[i * RC_D + a] = X[i * RC_D + a] - mu[a];
      ss += Y[i * RC_D + a] * Y[i * RC_D + a];
    }
  double rms = sqrt(ss / (double)n);
  for (size_t i = 0; i < n * RC_D; i++) Y[i] = rms > 0 ? Y[i] / rms : 0;
  return Y;
}

static void cluster_claim(prop_ctx *ctx) {
  if (!rc_have_model(ctx)) return;
  enum { K16 = 16 };
  unsigned win[3] = {0}, loss[3] = {0};
  char line[RC_LAYERS][96];
  int swap = prop_check_mutant(ctx, "values_as_keys");
  for (int L = 0; L < RC_LAYERS; L++) {
    rc_layer ly;
    if (!rc_load(ctx, L, &ly)) return;
    double rr[RC_KVH], mk[RC_KVH][2], mv[RC_KVH][2];
    for (int g = 0; g < RC_KVH; g++) {
      double *Kn = normalized(swap ? ly.V[g] : ly.K[g], ly.n), *Vn = normalized(ly.V[g], ly.n);
      size_t cen[K16], m[2][2];
      double rk[K16], rv[K16];
      int st = !Kn || !Vn || kvb_kcenter_greedy(ly.n, RC_D, Kn, K16, 0, cen, rk) ||
               kvb_kcenter_greedy(ly.n, RC_D, Vn, K16, 0, cen, rv);
      for (int i = 0; i < 2 && !st; i++)
        st = kvb_threshold_clusters(ly.n, RC_D, Kn, cl_delta[i], &m[0][i]) ||
             kvb_threshold_clusters(ly.n, RC_D, Vn, cl_delta[i], &m[1][i]);
      free(Kn), free(Vn);
      if (!prop_check(ctx, !st, "layer %d head %d: %s", L, g, kvb_strerror_last())) {
        rc_layer_free(&ly);
        return;
      }
      rr[g] = rk[K16 - 1] / rv[K16 - 1];
      win[0] += rk[K16 - 1] < rv[K16 - 1], loss[0] += rk[K16 - 1] > rv[K16 - 1];
      for (int i = 0; i < 2; i++) {
        mk[g][i] = (double)m[0][i], mv[g][i] = (double)m[1][i];
        win[1 + i] += m[0][i] < m[1][i], loss[1 + i] += m[0][i] > m[1][i];
      }
    }
    snprintf(line[L], sizeof line[L], "L%d r_K/r_V %.2f %.2f %.2f m′(.5) K/V %.0f/%.0f %.0f/%.0f %.0f/%.0f",
             L, rr[0], rr[1], rr[2], mk[0][0], mv[0][0], mk[1][0], mv[1][0], mk[2][0], mv[2][0]);
    rc_layer_free(&ly);
  }
  static const char *const cell[3] = {"radius k=16", "m′ δ=0.5", "m′ δ=1"};
  for (int c = 0; c < 3; c++) {
    double pwin, ploss, det;
    int within = sign_rule(win[c], loss[c], &pwin, &ploss, &det);
    text_cell(ctx, cell[c], within, within < 0 ? ploss : pwin, "keys below values in %u of %u caches (%u ties)", win[c],
              win[c] + loss[c], RC_UNITS - win[c] - loss[c]);
  }
  text_unit(ctx, "keys more clusterable than values (keys below values in most of a text's caches)");
  prop_note(ctx, "n = %zu tokens, keys and values centered and scaled to RMS norm 1; per layer "
            "(KV heads 0/1/2): %s; %s; %s; %s; %s; %s; %s; %s; %s; %s", rc_tokens(ctx), line[0],
            line[1], line[2], line[5], line[10], line[15], line[20], line[25], line[28], line[29]);
  prop_control_na(ctx, "a measurement of the model's caches, no estimator to replace by a trivial "
                  "one; with one text no cell can come out otherwise (INCONCLUSIVE by N)");
}

/* ---- real.norms: 001 Table 1 (query norms ≈ 13.6–23.8, roughly constant regardless of length)
 * and 003 Table 3 (‖q‖ ≈ 15, ‖k − mean‖ ≈ 15, ‖v‖ ≈ 3, not growing with length) ----
 * Measured per layer (notes): mean ± sd over positions and heads of ‖q‖, ‖k‖, ‖k − mean key‖
 * (003 App. B.5 shifts keys by their mean), ‖v‖. Pre-registered test, one cell per layer: y_j =
 * the mean over the 9 query heads of ‖q_j‖, positions j = 16 … n−1 (the first 16 tokens, where
 * models park attention, excluded), x_j = log₂(j + 1); least-squares slope b (growth per doubling
 * of the position). With the margin g = 0.05·ȳ (5% growth per doubling: a doubling from 4k to 8k
 * tokens may move ‖q‖ by at most 5%), one-sided t tests at α = 1e-6: b − g significantly below 0
 * → HOLDS (bounded), significantly above → FAILS (grows), neither → NOT-OBSERVED when the design
 * had power ≥ 0.9 to find a norm that does not grow (b = 0), else INCONCLUSIVE with that power.
 * The unit: the positions of ONE text, whose neighbouring norms are correlated — the ordinary
 * least-squares standard error (used here until 2026-11) treats them as independent. The
 * standard error is the equal-weighted cosine (EWC) long-run-variance one with ν =
 * ⌊0.4·T^{2/3}⌋ cosine weights and t_ν critical values (Lazarus, Lewis, Stock & Watson 2018;
 * src/core/ewc.h), valid under short-memory serial dependence along the stream. A verdict
 * is then about this text's positions (001 Table 1 and 003 Table 3 state it per prompt length
 * too); whether it generalizes over texts would need many texts. Check mutant check:q_grows
 * multiplies ‖q_j‖ by 1 + 0.2·log₂(j + 1) (a query norm that grows with position) and must move
 * the cells; its miss probability (prop_miss) is at most the smallest over the layers of the
 * probability that a cell misses a slope of 0.2·ȳ − g above the margin. */
static void norms_claim(prop_ctx *ctx) {
  if (!rc_have_model(ctx)) return;
  int grow = prop_check_mutant(ctx, "q_grows");
  double minq = INFINITY, maxq = 0, qsum = 0, ksum = 0, kcsum = 0, vsum = 0;
  double worst_det = 0, min_power = 1, min_miss = 1, ols_ratio_min = INFINITY, ols_ratio_max = 0;
  int held = 0, failed = 0, inconc = 0;
  unsigned nu = 0;
  size_t T = 0;
  for (int L = 0; L < RC_LAYERS; L++) {
    rc_layer ly;
    if (!rc_load(ctx, L, &ly)) return;
    size_t n = ly.n, j0 = 16;
    double qm = 0, qs = 0, km = 0, ks = 0, kcm = 0, kcs = 0, vm = 0, vs = 0, a, b;
    for (int h = 0; h < RC_QH; h++) {
      row_norms(ly.Q[h], n, NULL, &a, &b);
      qm += a / RC_QH, qs += b / RC_QH;
    }
    for (int g = 0; g < RC_KVH; g++) {
      double mu[RC_D];
      col_mean(ly.K[g], n, mu);
      row_norms(ly.K[g], n, NULL, &a, &b), km += a / RC_KVH, ks += b / RC_KVH;
      row_norms(ly.K[g], n, mu, &a, &b), kcm += a / RC_KVH, kcs += b / RC_KVH;
      row_norms(ly.V[g], n, NULL, &a, &b), vm += a / RC_KVH, vs += b / RC_KVH;
    }
    qsum += qm / RC_LAYERS, ksum += km / RC_LAYERS, kcsum += kcm / RC_LAYERS, vsum += vm / RC_LAYERS;
    minq = fmin(minq, qm), maxq = fmax(maxq, qm);
    T = n - j0;
    double *x = malloc(T * sizeof *x), *y = malloc(T * sizeof *y);
    if (!x || !y) {
      free(x), free(y), rc_layer_free(&ly);
      prop_check(ctx, 0, "out of memory");
      return;
    }
    for (size_t j = j0; j < n; j++) {
      double s = 0;
      for (int h = 0; h < RC_QH; h++) s += norm64(ly.Q[h] + j * RC_D) / RC_QH;
      x[j - j0] = log2((double)j + 1);
      y[j - j0] = grow ? s * (1 + 0.2 * x[j - j0]) : s;
    }
    double slope, se, ols_slope, ols_se, ols_df;
    nu = kvb_ewc_slope(x, y, T, &slope, &se);
    int st = kvb_linear_fit_se(T, x, y, &ols_slope, &ols_se, &ols_df);
    double ybar = prop_mean(y, T), g = 0.05 * ybar;
    free(x), free(y), rc_layer_free(&ly);
    if (!prop_check(ctx, nu > 0 && se > 0 && st == KVB_OK, "layer %d: slope fit failed", L)) return;
    ols_ratio_min = fmin(ols_ratio_min, se / ols_se), ols_ratio_max = fmax(ols_ratio_max, se / ols_se);
    double t = (slope - g) / se, p_below = gsl_cdf_tdist_P(t, nu), p_above = gsl_cdf_tdist_Q(t, nu);
    double det = kvb_t_detectable(se, nu, PROP_ALPHA, 0.9);
    /* power at the effect "the norm does not grow" (b = 0, g below the margin), and, for the
     * mutant, the chance to find a slope 0.2·ȳ − g above the margin (its growth) */
    double power = kvb_t_power(g / se, nu, PROP_ALPHA);
    min_miss = fmin(min_miss, 1 - kvb_t_power((0.2 * ybar / (1 + 0.2 * log2((double)n / 2)) - g) / se,
                                             nu, PROP_ALPHA));
    worst_det = fmax(worst_det, det / ybar), min_power = fmin(min_power, power);
    prop_verdict v = p_below < PROP_ALPHA ? PROP_HOLDS : p_above < PROP_ALPHA ? PROP_FAILS
                     : power >= 0.9 ? PROP_NOT_OBSERVED : PROP_INCONCLUSIVE;
    held += v == PROP_HOLDS, failed += v == PROP_FAILS, inconc += v == PROP_INCONCLUSIVE;
    char cell[16];
    snprintf(cell, sizeof cell, "L%d", L);
    prop_cell(ctx, v, cell, "q %.1f±%.1f k %.1f±%.1f k−μ %.1f±%.1f v %.2f±%.2f; ‖q‖ slope/doubling "
              "%+.3f (%+.1f%%) EWC se %.3f (OLS %.3f), t_%u = %.1f, power %.2f", qm, qs, km, ks, kcm,
              kcs, vm, vs, slope, 100 * slope / ybar, se, ols_se, nu, t, power);
  }
  if (grow) prop_miss(ctx, min_miss);
  prop_unit(ctx, "position of the one text (serial dependence: EWC standard error)", T,
            "a query norm that does not grow (slope 0) against the margin of 5%% of ‖q‖ per "
            "doubling; power %.3f (worst layer)", min_power);
  prop_note(ctx, "n = %zu tokens; mean over layers: ‖q‖ %.1f (layer means %.1f..%.1f), ‖k‖ %.1f, "
            "‖k − mean‖ %.1f, ‖v‖ %.2f (001 Table 1: 13.6–23.8 at d = 128; 003 Table 3: 15, 15, 3); "
            "slope test: %d layers bounded, %d growing beyond 5%%/doubling, %d inconclusive; "
            "one-sided t_%u (EWC, ν = ⌊0.4·T^{2/3}⌋, T = %zu positions) at α = %.0e, detects a "
            "deviation from the margin of %.2f%% of ‖q‖ per doubling with power 0.9 (worst layer); "
            "the EWC standard error is %.1f–%.1f× the OLS one that ignored the autocorrelation",
            rc_tokens(ctx), qsum, minq, maxq, ksum, kcsum, vsum, held, failed, inconc, nu, T,
            PROP_ALPHA, 100 * worst_det, ols_ratio_min, ols_ratio_max);
  prop_control_na(ctx, "a measurement of the model's queries, no estimator to replace; "
                  "check:q_grows (a norm growing with position) shows the slope test detects growth");
}

/* ---- real.practical: 000 Theorem 1 (= 001 Thm. 2.4) and 003 Theorem 3.1 at the measured norms ----
 * The model scores s = ⟨q, k⟩/√d: 000's exp(⟨q,k⟩) with scale 1/√d = 1/8, 003's exp(⟨q,k⟩/√d).
 * The nontriviality threshold ε*: z ≡ 0 errs by exactly ‖Attn‖, so 000 eq. (3) (error ≤
 * ε·‖softmax‖₂·‖V‖_op) says more than z ≡ 0 only when ε < ε*_000 = ‖Attn‖/(‖softmax‖₂‖V‖_op),
 * and 003 Thm. 3.1 (‖V‖_F) only when ε < ε*_003 = ‖Attn‖/(‖softmax‖₂‖V‖_F). Measured per unit as
 * the median over its 3 query heads × 4 positions j ∈ {n/4, n/2, 3n/4, n−1} (causal prefix 0..j);
 * asserted (exact, a second route): ε* equals the ratio_op / ratio_f that kvb_measure_errors gives
 * z ≡ 0 (to 1e-12), check mutant check:eps_star_vf (‖V‖_F in 000's threshold) breaks it.
 * The demand at ε = ε* (the largest ε at which the bound is informative):
 *   000 Thm. 1 (explicit constants, src/subgen/subgen_bounds.c): t = ⌈27ε⁻²e^{2δ·r/8}ln(400m)⌉,
 *     s = ⌈1800ε⁻²ρ⌉ with r = max‖q‖ of the unit's heads, δ = ½·RMS‖k − mean‖ (pre-registered),
 *     m = m′(δ) measured on the unit's keys, ρ = d = 64 (the theorem's s = Ω(ε⁻²d)); memory
 *     m′(1 + t) + 2s vectors against the exact cache's 2n, at the model's context n = 8192;
 *   003 Thm. 3.1: batch t = √d·e^{2r²/√d}/ε (logarithms dropped: a lower bound on the demand)
 *     with r = max(max‖q‖, max‖k − mean‖) (keys mean-shifted, 003 App. B.5); informative only
 *     when t < n = 8192 (a batch longer than the context never compresses).
 * Verdict (prop_vacuous_practical, computed from these inputs): VACUOUS-AT-PRACTICAL-PARAMETERS
 * when no unit fits for either theorem. */
/* ‖V_{0..pos[p]}‖_op and ‖V_{0..pos[p]}‖_F for increasing pos[0..np) (rows of V are 64-dim):
 * the Gram matrix accumulated row by row, its largest eigenvalue (GSL symmetric eigensolver)
 * and trace. Returns 0 on failure. */
static int gram_norms(const double *V, const size_t *pos, int np, double *op, double *fr) {
  gsl_matrix *G = gsl_matrix_calloc(RC_D, RC_D), *A = gsl_matrix_alloc(RC_D, RC_D);
  gsl_vector *ev = gsl_vector_alloc(RC_D);
  gsl_eigen_symm_workspace *w = gsl_eigen_symm_alloc(RC_D);
  int ok = G && A && ev && w;
  size_t row = 0;
  for (int p = 0; ok && p < np; p++) {
    for (; row <= pos[p]; row++)
      for (int a = 0; a < RC_D; a++)
        for (int b = 0; b <= a; b++)
          G->data[a * RC_D + b] += V[row * RC_D + a] * V[row * RC_D + b];
    double tr = 0;
    for (int a = 0; a < RC_D; a++) {
      tr += gsl_matrix_get(G, a, a);
      for (int b = 0; b <= a; b++) A->data[a * RC_D + b] = A->data[b * RC_D + a] = G->data[a * RC_D + b];
    }
    ok = gsl_eigen_symm(A, ev, w) == 0;
    op[p] = sqrt(fmax(0, gsl_vector_max(ev))), fr[p] = sqrt(tr);
  }
  gsl_matrix_free(G), gsl_matrix_free(A), gsl_vector_free(ev), gsl_eigen_symm_free(w);
  return ok;
}

static void practical_claim(prop_ctx *ctx) {
  if (!rc_have_model(ctx)) return;
  const double scale = 1.0 / 8.0, nctx = 8192;
  int vf_mut = prop_check_mutant(ctx, "eps_star_vf");
  double e000[RC_UNITS], e003[RC_UNITS], lt000[RC_UNITS], lt31[RC_UNITS], dr[RC_UNITS], mfrac[RC_UNITS];
  int fit000 = 0, fit31 = 0, bad_ratio = 0, bad_svd = 0, u = 0;
  char line[RC_LAYERS][112];
  double *attn = malloc(RC_D * sizeof *attn);
  for (int L = 0; L < RC_LAYERS; L++) {
    rc_layer ly;
    if (!rc_load(ctx, L, &ly)) {
      free(attn);
      return;
    }
    size_t n = ly.n, pos[4] = {n / 4, n / 2, 3 * n / 4, n - 1};
    for (int g = 0; g < RC_KVH; g++, u++) {
      double es0[12], es3[12], rq = 0, rk = 0, mu[RC_D], y[RC_D], kc2 = 0;
      int c = 0;
      col_mean(ly.K[g], n, mu);
      for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < RC_D; a++) y[a] = ly.K[g][i * RC_D + a] - mu[a];
        double r = norm64(y);
        rk = fmax(rk, r), kc2 += r * r;
      }
      /* ‖V_{0..j}‖_op and ‖V_{0..j}‖_F of the 4 prefixes (they do not depend on the query):
       * from the 64 × 64 Gram matrix VᵀV accumulated over the rows (its largest eigenvalue is
       * ‖V‖_op², its trace ‖V‖_F²); the SVD route of measures.c cross-checks the first prefix. */
      double vop[4], vfr[4];
      if (!gram_norms(ly.V[g], pos, 4, vop, vfr)) {
        prop_check(ctx, 0, "Gram eigenvalues failed");
        rc_layer_free(&ly), free(attn);
        return;
      }
      for (int h = 3 * g; h < 3 * g + 3; h++) {
        for (size_t i = 0; i < n; i++) rq = fmax(rq, norm64(ly.Q[h] + i * RC_D));
        for (int p = 0; p < 4; p++, c++) {
          kvb_exact_side x;
          kvb_errors ez;
          double z0[RC_D] = {0};
          int cross = h == 3 * g && p == 0;
          int st = kvb_exact_side_compute(pos[p] + 1, RC_D, RC_D, ly.K[g], ly.V[g], ly.Q[h] + pos[p] * RC_D,
                                          scale, cross ? KVB_EXACT_NORMS : KVB_EXACT_SOFTMAX, attn, &x);
          if (!st && cross)
            bad_svd += fabs(x.v_op - vop[p]) > 1e-9 * x.v_op || fabs(x.v_f - vfr[p]) > 1e-9 * x.v_f;
          x.v_op = vop[p], x.v_f = vfr[p];
          if (st || kvb_measure_errors(&x, z0, RC_D, &ez)) {
            prop_check(ctx, 0, "exact side: %s", kvb_strerror_last());
            rc_layer_free(&ly), free(attn);
            return;
          }
          es0[c] = x.attn_norm / (x.softmax_norm * (vf_mut ? x.v_f : x.v_op));
          es3[c] = x.attn_norm / (x.softmax_norm * x.v_f);
          bad_ratio += fabs(es0[c] - ez.ratio_op) > 1e-12 * ez.ratio_op ||
                       fabs(es3[c] - ez.ratio_f) > 1e-12 * ez.ratio_f;
        }
      }
      e000[u] = kvb_quantile(es0, 12, 0.5), e003[u] = kvb_quantile(es3, 12, 0.5);
      double delta = 0.5 * sqrt(kc2 / (double)n), t, s;
      size_t mp = 0;
      double *Kc = malloc(n * RC_D * sizeof *Kc);
      if (Kc) {
        for (size_t i = 0; i < n; i++)
          for (int a = 0; a < RC_D; a++) Kc[i * RC_D + a] = ly.K[g][i * RC_D + a] - mu[a];
        kvb_threshold_clusters(n, RC_D, Kc, delta, &mp);
        free(Kc);
      }
      double lt;
      if (!prop_check(ctx, mp > 0 && !kvb_subgen_required_log_t(e000[u], delta, rq, scale, (double)mp, &lt) &&
                      !kvb_subgen_required_t(e000[u], delta, rq, scale, (double)mp, &t) &&
                      !kvb_subgen_required_s(e000[u], RC_D, &s),
                      "Theorem 1 demand at layer %d head %d: %s", L, g, kvb_strerror_last())) {
        rc_layer_free(&ly), free(attn);
        return;
      }
      lt000[u] = lt / log(10.0);
      /* 000 §2.1 / §3.1 (S-PRAC.clus): sublinearity wants δ·r·scale = o(log n) and m′ ≪ n */
      dr[u] = delta * rq * scale, mfrac[u] = (double)mp / (double)n;
      /* m′ measured on n tokens; at the context n = 8192 there are at least as many clusters */
      fit000 += (double)mp * (1 + t) + 2 * s < 2 * nctx;
      double r31 = fmax(rq, rk);
      lt31[u] = (log(sqrt((double)RC_D)) + 2 * r31 * r31 / sqrt((double)RC_D) - log(e003[u])) / log(10.0);
      fit31 += lt31[u] < log10(nctx);
      if (g == 0)
        snprintf(line[L], sizeof line[L], "L%d ε* %.2f/%.2f ‖q‖≤%.0f ‖k−μ‖≤%.0f m′ %zu t 10^%.0f s %.0e; 3.1 t 10^%.0f",
                 L, e000[u], e003[u], rq, rk, mp, lt000[u], s, lt31[u]);
    }
    rc_layer_free(&ly);
  }
  free(attn);
  prop_check(ctx, bad_svd == 0, "‖V‖_op or ‖V‖_F from the Gram matrix differs from the SVD's in %d "
             "of %d prefixes (relative 1e-9)", bad_svd, RC_UNITS);
  prop_check(ctx, bad_ratio == 0, "ε* differs from z ≡ 0's ratio_op/ratio_f in %d of %d queries",
             bad_ratio, RC_UNITS * 12);
  /* The verdict must depend on the norms: the same formulas at r = 0 (no norm), ρ = 1, m = 1,
   * ε = 0.5 fit 000's memory and 003's batch at n = 8192. */
  double t0, s0;
  kvb_subgen_required_t(0.5, 1, 0, scale, 1, &t0), kvb_subgen_required_s(0.5, 1, &s0);
  double t31_0 = sqrt((double)RC_D) / 0.5;
  prop_check(ctx, 1 + t0 + 2 * s0 < 2 * nctx && t31_0 < nctx,
             "counterfactual r = 0: Theorem 1 memory %.0f, Theorem 3.1 batch %.0f do not fit", 1 + t0 + 2 * s0, t31_0);
  prop_note(ctx, "n = %zu tokens; ε*_000 (eq. (3) beats z ≡ 0 below it) median %.3f [%.3f, %.3f], "
            "ε*_003 median %.3f [%.3f, %.3f] over the 90 units; at ε = ε*: Theorem 1 fits 2n = "
            "%.0f vectors in %d/90 units (t median 10^%.1f), Theorem 3.1's batch < n in %d/90 "
            "(t median 10^%.1f); counterfactual r = 0, ρ = m = 1, ε = 0.5: t = %.0f, s = %.0f, "
            "3.1 batch %.0f", rc_tokens(ctx), kvb_quantile(e000, RC_UNITS, 0.5),
            kvb_quantile(e000, RC_UNITS, 0), kvb_quantile(e000, RC_UNITS, 1),
            kvb_quantile(e003, RC_UNITS, 0.5), kvb_quantile(e003, RC_UNITS, 0),
            kvb_quantile(e003, RC_UNITS, 1), 2 * nctx, fit000, kvb_quantile(lt000, RC_UNITS, 0.5),
            fit31, kvb_quantile(lt31, RC_UNITS, 0.5), t0, s0, t31_0);
  prop_note(ctx, "clustering at δ = ½·RMS‖k − mean‖ (000 §2.1: sublinear memory needs δ·r·scale = "
            "o(log n) and m′ ≪ n): δ·max‖q‖/8 median %.1f [%.1f, %.1f] against log n = %.1f; m′/n "
            "median %.2f [%.2f, %.2f]", kvb_quantile(dr, RC_UNITS, 0.5), kvb_quantile(dr, RC_UNITS, 0),
            kvb_quantile(dr, RC_UNITS, 1), log((double)rc_tokens(ctx)), kvb_quantile(mfrac, RC_UNITS, 0.5),
            kvb_quantile(mfrac, RC_UNITS, 0), kvb_quantile(mfrac, RC_UNITS, 1));
  prop_note(ctx, "per layer, KV head 0 (ε*_000/ε*_003, max norms, m′, Theorem 1's t and s, "
            "Theorem 3.1's batch): %s; %s; %s; %s; %s; %s", line[0], line[1], line[10], line[20],
            line[28], line[29]);
  if (fit000 == 0 && fit31 == 0)
    prop_vacuous_practical(ctx, "at the measured norms no (layer, head) fits: Theorem 1 needs more "
                           "than the exact cache's %.0f vectors and Theorem 3.1 a batch beyond the "
                           "8192-token context at the ε where their bounds beat z ≡ 0", 2 * nctx);
  prop_unit(ctx, "(layer, KV head) cache of the one text", RC_UNITS, "no effect: a computation "
            "at the measured norms (no test, no p-value), so no replication is claimed; the count "
            "of caches that fit describes this text");
  prop_control_na(ctx, "a computed practicality verdict; z ≡ 0 defines the threshold ε* itself");
}

/* ---- real.bkvb.fig1 / real.bkvb.fig3: 003 Fig. 1 and Fig. 3 (b), (d) on every layer ----
 * Per unit: the cache is the first P = n − 16 tokens (K, V of the KV head); the queries are the 3
 * query heads' q at the 16 positions after it (48 queries), each attending to the compressed
 * prefix, error ‖z − Attn‖/‖Attn‖ averaged over them (003 §4.1's relative error). Scores scaled
 * by 1/√d as the model does. Methods at equal memory (f = w = 32 first/recent tokens exact, 003
 * App. B.2; ⌊m/2^T⌋ of the m middle tokens kept): block BalanceKV (the method under test, ctx's
 * mutant applied), uniform sampling (weights m/k), and block BalanceKV with random signs (the
 * walk's p replaced by ½; τ-independent), each on its own generator substream per (unit, T, seed).
 * Temperatures: τ = 0.1 (003 §4.1's single-layer study) and τ = 1 (003's code, the LongBench runs).
 * Seeds per unit: 1 in the check tier, 3 in the full tier (errors averaged per unit). */
enum { BK_TS = 4, BK_Q = 16, BK_SEEDS_FULL = 3 };
static const double bk_tau[2] = {0.1, 1.0};

typedef struct {
  size_t P;
  double *attn;           /* [48][64] */
  kvb_exact_side xs[3 * BK_Q];
} bk_exact;

static int bk_prepare(prop_ctx *ctx, const rc_layer *ly, int g, bk_exact *e) {
  e->P = ly->n - BK_Q;
  e->attn = malloc(3 * BK_Q * RC_D * sizeof(double));
  if (!e->attn) return prop_check(ctx, 0, "out of memory");
  for (int h = 0; h < 3; h++)
    for (int j = 0; j < BK_Q; j++) {
      int i = h * BK_Q + j;
      if (kvb_exact_side_compute(e->P, RC_D, RC_D, ly->K[g], ly->V[g],
                                 ly->Q[3 * g + h] + (e->P + (size_t)j) * RC_D, 0.125, 0,
                                 e->attn + i * RC_D, &e->xs[i]))
        return prop_check(ctx, 0, "exact side: %s", kvb_strerror_last());
    }
  return 1;
}

/* Mean relative error over the 48 queries of `name` (under_test: ctx's mutant applies). */
static double bk_run(prop_ctx *ctx, const char *name, int under_test, const rc_layer *ly, int g,
                     const bk_exact *e, unsigned T, size_t b, double tau, const char *extra,
                     uint64_t sub) {
  char tt[32], bb[32], ta[32];
  snprintf(tt, sizeof tt, "T=%u", T), snprintf(bb, sizeof bb, "b=%zu", b);
  snprintf(ta, sizeof ta, "tau=%g", tau);
  int blk = strcmp(name, "balancekv_block") == 0;
  const char *as[] = {tt, "f=32", "w=32", blk ? bb : NULL, ta, extra, NULL};
  rme_cache c = {RC_D, 0.125, e->P, BK_Q, ly->K[g], ly->V[g],
                 {ly->Q[3 * g], ly->Q[3 * g + 1], ly->Q[3 * g + 2]}, e->xs, BK_Q};
  return rme_mean_error(ctx, name, under_test, as, sub, &c);
}

/* fig3 = 0: 003 Fig. 1. Cells τ ∈ {0.1, 1} × T ∈ {1..4} at b = 128: per cache, block's mean error
 * vs uniform's. fig3 = 1: 003 Fig. 3 (b), (d). Cells τ ∈ {0.1, 1} × T ∈ {1, 2, 3}: per cache,
 * block's error at b = 256 vs at b = 64 (b = 256 better is the paper's direction). b = 128 in
 * the notes.
 * Claim level: unit = text (header) — INCONCLUSIVE with one text. Within the text, each cache's
 * methods draw their own coins, so given the text the caches' outcomes are independent and the
 * sign test over the 90 caches (sign_rule, α = 1e-6 each way) is valid for THIS text: it is
 * printed in the cell, with random signs (and, for Fig. 1, z ≡ 0, error 1) through the same
 * within-text test. The former mutants (method:balancekv_block:random_signs, control:z_zero,
 * check:b256_worse) move the within-text findings (prop_detail: the sign test over the 90
 * caches given the text), which are not part of the verdict but are compared under every
 * mutant, so the check still shows it can fail. */
static void bkvb_claim(prop_ctx *ctx, int fig3) {
  if (!rc_have_model(ctx)) return;
  const size_t S = prop_trials(ctx, 1, BK_SEEDS_FULL);
  static const size_t bsz[3] = {64, 128, 256};
  const unsigned nT = fig3 ? 3 : BK_TS;
  /* per unit (mean over seeds): block [τ][b][T], random signs [b][T], uniform [T] */
  static double eb[2][3][BK_TS][RC_UNITS], er[3][BK_TS][RC_UNITS], eu[BK_TS][RC_UNITS];
  memset(eb, 0, sizeof eb), memset(er, 0, sizeof er), memset(eu, 0, sizeof eu);
  int nan_seen = 0, u = 0;
  for (int L = 0; L < RC_LAYERS; L++) {
    rc_layer ly;
    if (!rc_load(ctx, L, &ly)) return;
    for (int g = 0; g < RC_KVH; g++, u++) {
      bk_exact e;
      if (!bk_prepare(ctx, &ly, g, &e)) {
        free(e.attn), rc_layer_free(&ly);
        return;
      }
      for (size_t sd = 0; sd < S; sd++)
        for (unsigned T = 1; T <= nT; T++) {
          uint64_t sub = 100000 * (uint64_t)u + 100 * sd + T;
          for (int bi = 0; bi < 3; bi++) {
            if (fig3 ? bi == 1 : bi != 1) continue;
            for (int ti = 0; ti < 2; ti++)
              eb[ti][bi][T - 1][u] += bk_run(ctx, "balancekv_block", 1, &ly, g, &e, T, bsz[bi],
                                             bk_tau[ti], NULL, sub) / (double)S;
            er[bi][T - 1][u] += bk_run(ctx, "balancekv_block", 0, &ly, g, &e, T, bsz[bi], 1.0,
                                       "mutant=random_signs", sub) / (double)S;
          }
          if (!fig3)
            eu[T - 1][u] += bk_run(ctx, "uniform_sample", 0, &ly, g, &e, T, 0, 1.0, NULL, sub) / (double)S;
        }
      free(e.attn);
    }
    rc_layer_free(&ly);
  }
  /* check:b256_worse: the b = 256 errors read 25% high (a block size that hurts), to show the
   * rule finds a b-effect of that size; no method mutant was found that makes the b-dependence
   * significant in both tiers while the faithful one shows none (sign_flip does at 512 tokens,
   * not at 2048) */
  if (fig3 && prop_check_mutant(ctx, "b256_worse"))
    for (int ti = 0; ti < 2; ti++)
      for (unsigned T = 1; T <= nT; T++)
        for (int k = 0; k < RC_UNITS; k++) eb[ti][2][T - 1][k] *= 1.25;
  int walk_cells = 0, ctl_too = 0;
  char per_layer[RC_LAYERS * 12] = "";
  for (int ti = 0; ti < 2; ti++)
    for (unsigned T = 1; T <= nT; T++) {
      /* contender x against reference y, per unit */
      const double *xb = fig3 ? eb[ti][2][T - 1] : eb[ti][1][T - 1];
      const double *yb = fig3 ? eb[ti][0][T - 1] : eu[T - 1];
      const double *xr = fig3 ? er[2][T - 1] : er[1][T - 1];
      const double *yr = fig3 ? er[0][T - 1] : eu[T - 1];
      unsigned wb = 0, lb = 0, wr = 0, lr = 0, wz = 0, lz = 0;
      double sx = 0, sy = 0, srs = 0;
      for (int k = 0; k < RC_UNITS; k++) {
        nan_seen += !isfinite(xb[k]) + !isfinite(yb[k]) + !isfinite(xr[k]);
        wb += xb[k] < yb[k], lb += xb[k] > yb[k];
        wr += xr[k] < yr[k], lr += xr[k] > yr[k];
        wz += 1.0 < yb[k], lz += 1.0 > yb[k];
        sx += xb[k] / RC_UNITS, sy += yb[k] / RC_UNITS, srs += xr[k] / RC_UNITS;
      }
      double pw, pl, det, pwr, plr, detr, pwz, plz, detz;
      int vb = sign_rule(wb, lb, &pw, &pl, &det), vr = sign_rule(wr, lr, &pwr, &plr, &detr);
      int vz = fig3 ? 0 : sign_rule(wz, lz, &pwz, &plz, &detz);
      if (vb > 0) walk_cells++, ctl_too += vr > 0 || vz > 0;
      char cell[48];
      snprintf(cell, sizeof cell, fig3 ? "τ=%g b 64→256 1/%d" : "τ=%g 1/%d", bk_tau[ti], 1 << T);
      text_cell(ctx, cell, vb, vb < 0 ? pl : pw, "%s %.3f vs %s %.3f (mean over caches), better in %u/%u caches, "
                "sign test given the text p=%.0e/%.0e (%s); random signs %.3f better in %u/%u%s",
                fig3 ? "b=256" : "block", sx, fig3 ? "b=64" : "uniform", sy, wb, wb + lb, pw, pl,
                vb > 0 ? "this text: better" : vb < 0 ? "this text: worse" : "this text: neither",
                srs, wr, wr + lr, vr > 0 ? " (significant)" : "");
      if (!fig3 && ti == 0 && T == 2)
        for (int L = 0; L < RC_LAYERS; L++) {
          int wins = 0;
          for (int g = 0; g < RC_KVH; g++) wins += xb[3 * L + g] < yb[3 * L + g];
          size_t used = strlen(per_layer);
          snprintf(per_layer + used, sizeof per_layer - used, "%s%d", L ? "," : "", wins);
        }
    }
  prop_check(ctx, nan_seen == 0, "%d non-finite errors", nan_seen);
  if (!fig3)
    prop_note(ctx, "n = %zu tokens, cache P = n − 16, 48 queries per unit (3 heads × the 16 next "
              "positions), f = w = 32, b = 128, %zu seed(s) per cache; within-text sign test over "
              "the 90 caches at α = %.0e each way; KV heads (of 3) where block beats uniform at τ = 0.1, 1/4, by "
              "layer 0..29: %s", rc_tokens(ctx), S, PROP_ALPHA, per_layer);
  else {
    double m64 = 0, m256 = 0;
    for (int k = 0; k < RC_UNITS; k++) m64 += eb[1][0][1][k] / RC_UNITS, m256 += eb[1][2][1][k] / RC_UNITS;
    prop_note(ctx, "n = %zu tokens, cache P = n − 16, 48 queries per cache, f = w = 32, %zu seed(s) "
              "per cache; τ = 1, 1/4: mean error b = 64 %.4f, b = 256 %.4f (b = 128 is run by "
              "real.bkvb.fig1)", rc_tokens(ctx), S, m64, m256);
  }
  text_unit(ctx, fig3 ? "block BalanceKV's error lower at b = 256 than at b = 64 (in most of a "
            "text's caches)" : "block BalanceKV's error below uniform sampling's (in most of a "
            "text's caches)");
  /* the same text-level test cannot be won by random signs or z ≡ 0 either (N = 1 text), so
   * the control cannot pass; within this text it is reported */
  prop_control(ctx, "random_signs", 0,
               "through the text-level test: no cell can be won with one text; within this text "
               "random signs%s beat the reference in %d of the %d cells where the walk does",
               fig3 ? "" : " or z ≡ 0", ctl_too, walk_cells);
}

static void bkvb_fig1(prop_ctx *ctx) { bkvb_claim(ctx, 0); }
static void bkvb_fig3(prop_ctx *ctx) { bkvb_claim(ctx, 1); }

const prop_claim props_real_cache[] = {
    {"real.cluster", "000 Fig. 1, §1; 001 Fig. 1, §3.1", "comparison",
     "SmolLM2-135M caches (debian-licenses, 512 tokens; 2048 full), every layer and KV head (90 "
     "units), keys and values centered and scaled to RMS norm 1: keys more clusterable than values "
     "— cells [greedy k-center radius at k = 16], [m′(δ = 0.5)], [m′(δ = 1)]; unit = text (the "
     "caches of one text are one cluster), exact sign test over texts at α = 1e-6 each way: "
     "INCONCLUSIVE with one text, the text's share of caches in the notes",
     {"check:values_as_keys"}, cluster_claim, {"S-FIG1", "S-CG-FIG1"}},
    {"real.norms", "001 Table 1, §3.2; 003 Table 3, §4.5 (1)", "scaling",
     "per layer ‖q‖, ‖k‖, ‖k − mean‖, ‖v‖ (mean ± sd); one cell per layer: slope of the mean query "
     "norm vs log₂ position below 5% of ‖q‖ per doubling (one-sided t at α = 1e-6 with the EWC "
     "standard error, valid under serial dependence along the text: HOLDS), above (FAILS), or "
     "neither (NOT-OBSERVED with power ≥ 0.9 at a non-growing norm, else INCONCLUSIVE)",
     {"check:q_grows"}, norms_claim, {"S-CG-TAB1.qn", "B-TAB3"}},
    {"real.practical", "000 Theorem 1 (001 Thm. 2.4); 003 Theorem 3.1; 001 Table 1; 003 Table 3",
     "practicality",
     "at the measured norms, the ε* below which eq. (3) / Theorem 3.1 say more than z ≡ 0 (= z ≡ 0's "
     "ratio, exact), and the t, s, memory (Theorem 1) and batch (Theorem 3.1) demanded there "
     "against the exact cache at n = 8192 (with δ·r·scale and m′/n at δ = ½·RMS‖k − mean‖, 000 "
     "§2.1's sublinearity condition); VACUOUS-AT-PRACTICAL-PARAMETERS when no unit fits",
     {"check:eps_star_vf"}, practical_claim, {"S-PRAC.mem", "B-PRAC"}},
    {"real.bkvb.fig1", "003 Fig. 1, §4.1, App. B.1", "comparison",
     "every layer and KV head: block BalanceKV (b = 128, f = w = 32) vs uniform sampling at equal "
     "memory, relative error of the next 16 positions' queries, cells τ ∈ {0.1, 1} × T ∈ {1..4}, "
     "unit = text: INCONCLUSIVE with one text; within the text the sign test over its 90 caches "
     "(independent coins given the text, α = 1e-6 each way) with random signs and z ≡ 0 through "
     "the same test, as a statement about this text",
     {"method:balancekv_block:random_signs", "control:z_zero"}, bkvb_fig1, {"B-FIG1"}},
    {"real.bkvb.fig3", "003 Fig. 3 (b), (d), §4.1", "comparison",
     "every layer and KV head: block BalanceKV's error at b = 256 below b = 64, cells τ ∈ {0.1, 1} × "
     "T ∈ {1, 2, 3}; unit = text: INCONCLUSIVE with one text; within the text the sign test over "
     "its 90 caches (α = 1e-6 each way), random signs through the same comparison, as a "
     "statement about this text",
     {"check:b256_worse"}, bkvb_fig3, {"B-FIG3.err"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

/* test_flip.c — the predictive flip estimators of src/core/flip.h: known answers, and a
 * calibration simulation for every cell type the checks use (z tests, t tests with small df,
 * exact binomial/sign tests).
 *
 * The simulation (fixed seed, N cases per type): draw the true noncentrality from a spread,
 * observe the statistic once (its p-value is what a check sees), compute the estimate, and
 * compare with the TRUE flip probability of that case — the chance that a fresh replicate
 * lands on the other side of the critical value, computed exactly from the true noncentrality
 * (normal tail; kvb_t_power; binomial tail) — and with one simulated replicate. Two spreads:
 * "wide" (noncentrality uniform over ±6 around the critical value; θ uniform on [p0, 1] for the
 * binomial) and "near" (normal, sd 1, centred on the critical value: the hardest case, where
 * every cell sits at its threshold). Asserted, on both spreads: the estimate is calibrated or
 * conservative on the wide spread (mean estimate >= mean true flip − 4 standard errors of the
 * paired difference, a one-sided regression bound at ~3e-5; on the near spread a flat prior is
 * wrong by design and the mean is printed, not asserted: about 3/4 of the true flip), and on both
 * spreads it underestimates the true flip by more than 10× in at most 5% of the catches
 * (rejected cases) and of all cases. The mutant is the plug-in Φ(−|z_p − z_α|)
 * (kvb_plugin_miss, the estimator this replaces): on the wide spread of z and binomial cells
 * the same assertion on it must fail. The measured numbers are printed (one "note" line per type and spread).
 * Undecided cells (NOT-OBSERVED or INCONCLUSIVE by a power gate, kvb_flip_gate): the gate alone
 * (df 9, 31) and a whole t cell with both tests and its gate (N = 10, 32 units), the same
 * assertions; their mutant (printed in the "plug-in" column) is the estimate without the gate's
 * term — what such cells recorded before (nothing for the gate) — and must fail on the wide
 * spread.
 * Count tests on runs' continuous outcomes (kvb_flip_exceed: balancekv.thm31.error's arms, 8 runs
 * against a bound met in all but kc = 3) and cells made VACUOUS by either of two such controls
 * (kvb_flip_controls): the same assertions; their mutants are the estimate 0 (the cells and
 * controls recorded nothing before) and, for the count, the plug-in θ(ȳ, s) that ignores the
 * uncertainty of the runs' mean and spread. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#define ALPHA 1e-6
#define NCASE 10000

static double Phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

static void test_known(void) {
  /* at the threshold a replicate is a coin flip */
  CHECK(fabs(kvb_flip_normal(ALPHA, ALPHA) - 0.5) < 1e-12 &&
            fabs(kvb_flip_t(ALPHA, 7, ALPHA) - 0.5) < 1e-9,
        "flip.at_alpha", "%g %g", kvb_flip_normal(ALPHA, ALPHA), kvb_flip_t(ALPHA, 7, ALPHA));
  /* z_1e-6 = 4.753424 (tables); z_1e-9 = 5.997807: Φ(−1.244383/√2) */
  double want = Phi(-(5.997807 - 4.753424) / sqrt(2.0));
  CHECK(fabs(kvb_flip_normal(1e-9, ALPHA) - want) < 1e-6, "flip.normal.value", "%.8f vs %.8f",
        kvb_flip_normal(1e-9, ALPHA), want);
  /* symmetric: p = 0.5 (z = 0) flips as z = 2·4.753424 would */
  double up = Phi(-4.753424 / sqrt(2.0));
  CHECK(fabs(kvb_flip_normal(0.5, ALPHA) - up) < 1e-6, "flip.normal.not_rejected", "%.8f vs %.8f",
        kvb_flip_normal(0.5, ALPHA), up);
  /* df → ∞ is the normal case; small df: t_{5, 1e-3} = 5.893430, t_{5, 1e-6} = 24.77103 (by
   * quadrature of the regularized incomplete beta, outside this code); g with ν = 5's moments */
  CHECK(fabs(kvb_flip_t(1e-3, 1e9, ALPHA) - kvb_flip_normal(1e-3, ALPHA)) < 1e-4 &&
            kvb_flip_t(1e-3, INFINITY, ALPHA) == kvb_flip_normal(1e-3, ALPHA),
        "flip.t.large_df", "%.8f vs %.8f", kvb_flip_t(1e-3, 1e9, ALPHA), kvb_flip_normal(1e-3, ALPHA));
  double a = 5.0 / 3, cn = sqrt(2.5) * tgamma(2) / tgamma(2.5), b = a - cn * cn;
  double g1 = cn / sqrt(b) * asinh(5.893430 * sqrt(b) / (cn * sqrt(a)));
  double g2 = cn / sqrt(b) * asinh(24.77103 * sqrt(b) / (cn * sqrt(a)));
  want = Phi(-(g2 - g1) / sqrt(2.0));
  CHECK(fabs(kvb_flip_t(1e-3, 5, ALPHA) - want) < 1e-5, "flip.t.df5", "%.8f vs %.8f",
        kvb_flip_t(1e-3, 5, ALPHA), want);
  /* binomial: n = 30, p0 = ½, α = 1e-6 rejects at >= 28 (P[Bin(30, ½) >= 27] = 4526/2^30 =
   * 4.2e-6, >= 28: 466/2^30 = 4.3e-7). Small cases by hand: k = n = 1 gives θ ~ Beta(2, 1),
   * P[K_rep = 0] = 1/3; k = n = 2 gives Beta(3, 1), P[K_rep = 2] = E θ² = 3·4/(4·5) = 3/5. */
  CHECK(fabs(kvb_flip_binom(1, 1, 1) - 1.0 / 3) < 1e-12 && fabs(kvb_flip_binom(0, 1, 1) - 1.0 / 3) < 1e-12 &&
            fabs(kvb_flip_binom(2, 2, 2) - 0.4) < 1e-12,
        "flip.binom.by_hand", "%.15g %.15g %.15g", kvb_flip_binom(1, 1, 1), kvb_flip_binom(0, 1, 1),
        kvb_flip_binom(2, 2, 2));
  /* n = 30, k = 29 against the predictive integrated over θ by midpoint quadrature */
  double q = 0;
  for (int i = 0; i < 20000; i++) {
    double th = (i + 0.5) / 20000;
    q += gsl_ran_beta_pdf(th, 30, 2) * (1 - kvb_binom_tail_ge(28, th, 30)) / 20000;
  }
  CHECK(fabs(kvb_flip_binom(29, 30, 28) - q) < 1e-6, "flip.binom.quadrature", "%.10f vs %.10f",
        kvb_flip_binom(29, 30, 28), q);
  CHECK(kvb_binom_crit(30, 0.5, ALPHA) == 28, "flip.binom.crit", "%u", kvb_binom_crit(30, 0.5, ALPHA));
  CHECK(kvb_flip_binom(5, 30, 31) == 0 && isnan(kvb_flip_binom(31, 30, 28)) &&
            isnan(kvb_flip_normal(NAN, ALPHA)) && isnan(kvb_flip_t(0.1, 0, ALPHA)) &&
            kvb_flip_normal(0, ALPHA) == 0 && kvb_flip_t(1, 3, ALPHA) == 0,
        "flip.edges", "never-rejecting, k > n, NaN p, df 0, p at 0 and 1");
  /* the power gate: F(2, 2) has CDF x/(1 + x), so det = 1 against effect 2 (passing, ratio² 4)
   * flips with P[F > 4] = 1/5, and det = 2 against 1 (failing, ratio² ¼) with P[F <= ¼] = 1/5;
   * at det = effect a coin flip; a known variance (df ∞) never moves the gate */
  CHECK(fabs(kvb_flip_gate(1, 2, 2) - 0.2) < 1e-12 && fabs(kvb_flip_gate(2, 1, 2) - 0.2) < 1e-12 &&
            fabs(kvb_flip_gate(0.3, 0.3, 7) - 0.5) < 1e-12 && kvb_flip_gate(1, 2, INFINITY) == 0,
        "flip.gate.by_hand", "%.15g %.15g %.15g %g", kvb_flip_gate(1, 2, 2), kvb_flip_gate(2, 1, 2),
        kvb_flip_gate(0.3, 0.3, 7), kvb_flip_gate(1, 2, INFINITY));
  CHECK(isnan(kvb_flip_gate(0, 1, 5)) && isnan(kvb_flip_gate(1, -1, 5)) &&
            isnan(kvb_flip_gate(1, 1, 0)) && isnan(kvb_flip_gate(NAN, 1, 5)),
        "flip.gate.edges", "det 0, effect < 0, df 0, NaN det");
}

/* One simulated case: the observed outcome (rejected or not), the estimate (new and plug-in),
 * the case's true flip probability and one replicate's flip. */
typedef struct {
  double n, est_sum, plug_sum, true_sum, rep_sum, d2_sum, pd2_sum;
  double catches, under_c, plug_under_c, under, plug_under;
} tally;

static void add(tally *t, int rejected, double est, double plug, double truef, int rep_flip) {
  t->n++;
  t->est_sum += est, t->plug_sum += plug, t->true_sum += truef, t->rep_sum += rep_flip;
  t->d2_sum += (est - truef) * (est - truef), t->pd2_sum += (plug - truef) * (plug - truef);
  int u = est < truef / 10, pu = plug < truef / 10;
  t->under += u, t->plug_under += pu;
  if (rejected) t->catches++, t->under_c += u, t->plug_under_c += pu;
}

/* The assertion of the module comment on (mean estimate, its paired se, 10× fractions); the
 * mean is asserted on the wide spread only (with_mean). */
static int calibrated(double est_sum, double d2_sum, const tally *t, double under, double under_c,
                      int with_mean) {
  double md = (est_sum - t->true_sum) / t->n, sd = sqrt(fmax(0, d2_sum / t->n - md * md));
  return (!with_mean || md >= -4 * sd / sqrt(t->n)) && under / t->n <= 0.05 &&
         (t->catches == 0 || under_c / t->catches <= 0.05);
}

/* Prints the numbers and asserts the estimate; the plug-in mutant must fail the same assertion
 * where plugin_fails (z and binomial cells, wide spread; on t cells the plug-in, through the
 * heavy-tailed p → z map, overstates and passes: printed, not asserted). */
static void report(const char *type, const char *spread, const tally *t, int with_mean,
                   int plugin_fails) {
  char name[128];
  printf("note flip.%s.%s: N = %.0f cases (%.0f catches): mean estimate %.4f (plug-in %.4f), mean "
         "true flip %.4f, replicates flipped %.4f; estimate < true/10 in %.2f%% of catches, %.2f%% "
         "of cases (plug-in %.1f%%, %.1f%%)\n",
         type, spread, t->n, t->catches, t->est_sum / t->n, t->plug_sum / t->n, t->true_sum / t->n,
         t->rep_sum / t->n, 100 * t->under_c / fmax(1, t->catches), 100 * t->under / t->n,
         100 * t->plug_under_c / fmax(1, t->catches), 100 * t->plug_under / t->n);
  snprintf(name, sizeof name, "flip.sim.%s.%s", type, spread);
  CHECK(calibrated(t->est_sum, t->d2_sum, t, t->under, t->under_c, with_mean), name,
        "mean estimate %.4f vs true %.4f; under 10x in %.2f%% of catches", t->est_sum / t->n,
        t->true_sum / t->n, 100 * t->under_c / fmax(1, t->catches));
  if (!plugin_fails) return;
  snprintf(name, sizeof name, "flip.sim.%s.%s.plugin_rejected", type, spread);
  CHECK(!calibrated(t->plug_sum, t->pd2_sum, t, t->plug_under, t->plug_under_c, with_mean), name,
        "the plug-in passed: mean %.4f vs true %.4f, under 10x in %.2f%% of catches",
        t->plug_sum / t->n, t->true_sum / t->n, 100 * t->plug_under_c / fmax(1, t->catches));
}

/* The plug-in (the estimator replaced): the miss when rejected, its complement when not. */
static double plugin(double p) {
  double m = kvb_plugin_miss(p, ALPHA);
  return p < ALPHA ? m : 1 - m;
}

/* Noncentrality draws, in units of the statistic's sd s at the threshold: wide = uniform on
 * c ± 6s, near = N(c, s²). */
static double draw_nc(gsl_rng *r, double c, double s, int near) {
  return near ? c + s * gsl_ran_gaussian(r, 1) : c + s * (12 * gsl_rng_uniform(r) - 6);
}

static void sim_normal(int near) {
  gsl_rng *r = kvb_rng_alloc_substream(20261128, (uint64_t)near);
  double c = gsl_cdf_ugaussian_Qinv(ALPHA);
  tally t = {0};
  for (int i = 0; i < NCASE; i++) {
    double d = draw_nc(r, c, 1, near), z = d + gsl_ran_gaussian(r, 1), zr = d + gsl_ran_gaussian(r, 1);
    double p = gsl_cdf_ugaussian_Q(z);
    int rej = p < ALPHA, rrej = gsl_cdf_ugaussian_Q(zr) < ALPHA;
    double pw = gsl_cdf_ugaussian_P(d - c); /* P[a replicate rejects] */
    add(&t, rej, kvb_flip_normal(p, ALPHA), plugin(p), rej ? 1 - pw : pw, rej != rrej);
  }
  report("normal", near ? "near" : "wide", &t, !near, !near);
  gsl_rng_free(r);
}

/* The t test with df ν: T = (Z + λ)/√(V/ν); λ on a grid of 97 points over c ± 12s, s the
 * noncentral t's sd at λ = c (exact moments), its power computed once per grid point with
 * kvb_t_power (an independent quadrature). */
static void sim_t(double df, int near) {
  gsl_rng *r = kvb_rng_alloc_substream(20261128, 10 + (uint64_t)df * 2 + (uint64_t)near);
  double c = gsl_cdf_tdist_Qinv(ALPHA, df);
  double a = df / (df - 2), cn = sqrt(df / 2) * exp(lgamma((df - 1) / 2) - lgamma(df / 2));
  double s = sqrt(a + (a - cn * cn) * c * c), h = 0.25 * s;
  enum { G = 97 }; /* c − 12s .. c + 12s */
  double pw[G];
  for (int g = 0; g < G; g++) pw[g] = kvb_t_power(c - 48 * h + h * g, df, ALPHA);
  tally t = {0};
  for (int i = 0; i < NCASE; i++) {
    double l = draw_nc(r, c, s, near);
    int g = (int)lround((l - (c - 48 * h)) / h);
    g = g < 0 ? 0 : g >= G ? G - 1 : g;
    l = c - 48 * h + h * g;
    double T = (gsl_ran_gaussian(r, 1) + l) / sqrt(gsl_ran_chisq(r, df) / df);
    double Tr = (gsl_ran_gaussian(r, 1) + l) / sqrt(gsl_ran_chisq(r, df) / df);
    double p = gsl_cdf_tdist_Q(T, df);
    int rej = p < ALPHA, rrej = gsl_cdf_tdist_Q(Tr, df) < ALPHA;
    add(&t, rej, kvb_flip_t(p, df, ALPHA), plugin(p), rej ? 1 - pw[g] : pw[g], rej != rrej);
  }
  char type[32];
  snprintf(type, sizeof type, "t%.0f", df);
  report(type, near ? "near" : "wide", &t, !near, 0);
  gsl_rng_free(r);
}

/* The exact one-sided binomial (sign) test of n units against p0 = ½: θ uniform on [½, 1]
 * (wide) or the normal-approximation noncentrality N(c, 1) mapped back to θ (near). */
static void sim_binom(unsigned n, int near) {
  gsl_rng *r = kvb_rng_alloc_substream(20261128, 100 + n + (uint64_t)near);
  unsigned kc = kvb_binom_crit(n, 0.5, ALPHA);
  tally t = {0};
  for (int i = 0; i < NCASE; i++) {
    double th;
    if (near) {
      th = ((double)kc - 0.5) / n + gsl_ran_gaussian(r, 1) * sqrt(0.25 / n);
      th = th < 0.5 ? 0.5 : th > 1 ? 1 : th;
    } else {
      th = 0.5 + 0.5 * gsl_rng_uniform(r);
    }
    unsigned k = gsl_ran_binomial(r, th, n), kr = gsl_ran_binomial(r, th, n);
    double p = kvb_binom_tail_ge(k, 0.5, n), pw = kvb_binom_tail_ge(kc, th, n);
    int rej = k >= kc;
    add(&t, rej, kvb_flip_binom(k, n, kc), plugin(p), rej ? 1 - pw : pw, rej != (kr >= kc));
  }
  char type[32];
  snprintf(type, sizeof type, "binom%u", n);
  report(type, near ? "near" : "wide", &t, !near, !near);
  gsl_rng_free(r);
}

/* The power gate alone (kvb_flip_gate): det ∝ s, s = σ·√(χ²_ν/ν), the gate passing at s <= 1
 * (det = s against effect 1); log σ uniform over ±6 sd of log s (wide) or N(0, sd²) (near), sd
 * ≈ 1/√(2ν). The true flip from the χ² tail at the true σ. A "catch" is a passing gate (the
 * cell NOT-OBSERVED). The mutant is the estimate 0 — an undecided cell recording no flip for its
 * gate, as before — which must fail the same assertion on the wide spread. */
static void sim_gate(double df, int near) {
  gsl_rng *r = kvb_rng_alloc_substream(20261128, 300 + (uint64_t)df * 2 + (uint64_t)near);
  double sd = 1 / sqrt(2 * df);
  tally t = {0};
  for (int i = 0; i < NCASE; i++) {
    double ls = near ? sd * gsl_ran_gaussian(r, 1) : sd * (12 * gsl_rng_uniform(r) - 6);
    double sig = exp(ls);
    double so = sig * sqrt(gsl_ran_chisq(r, df) / df), sr = sig * sqrt(gsl_ran_chisq(r, df) / df);
    int pass = so <= 1, rpass = sr <= 1;
    double ppass = gsl_cdf_chisq_P(df / (sig * sig), df); /* P[s_rep <= 1] */
    add(&t, pass, kvb_flip_gate(so, 1, df), 0, pass ? 1 - ppass : ppass, pass != rpass);
  }
  char type[32];
  snprintf(type, sizeof type, "gate%.0f", df);
  report(type, near ? "near" : "wide", &t, !near, !near);
  gsl_rng_free(r);
}

/* An undecided-or-decided t cell as the checks' unit-level cells read one (balancekv_scaling.c
 * unit_exp_cell): N units ~ N(μ, σ²), mean m, se s/√N, df N − 1; HOLDS when m is significantly
 * below the edge 0, FAILS when significantly above, else NOT-OBSERVED when the design resolves
 * TOL from the edge with power 0.9 (det = kvb_t_detectable(se) <= TOL), else INCONCLUSIVE. The
 * estimate is the checks': flip_t of each one-sided test plus, for an undecided cell, the gate's
 * flip (union bound, capped at 1). The true flip — P[a replicate's outcome differs] at (μ, σ) —
 * by quadrature over the replicate's s (J χ² quantiles) of the normal probabilities of m. μ
 * uniform over ±8 se around the edge, log σ uniform over ±6 sd of log s around the gate's σ*
 * (wide), or both normal with sd 1 (near). The mutant is the same estimate without the gate
 * term (what the checks recorded before), which must fail on the wide spread. */
static void sim_cell(unsigned N, int near) {
  gsl_rng *r = kvb_rng_alloc_substream(20261128, 400 + N * 2 + (uint64_t)near);
  const double TOL = 0.25;
  double df = N - 1, tc = gsl_cdf_tdist_Qinv(ALPHA, df), dl = kvb_t_detectable(1, df, ALPHA, 0.9);
  double sstar = TOL / dl * sqrt((double)N), sd = 1 / sqrt(2 * df); /* σ at the gate */
  enum { J = 128 };
  double xq[J];
  for (int j = 0; j < J; j++) xq[j] = sqrt(gsl_cdf_chisq_Pinv((j + 0.5) / J, df) / df);
  tally t = {0};
  for (int i = 0; i < NCASE / 3; i++) {
    double u = near ? gsl_ran_gaussian(r, 1) : 8 * (2 * gsl_rng_uniform(r) - 1);
    double sig = sstar * exp(near ? sd * gsl_ran_gaussian(r, 1) : sd * (12 * gsl_rng_uniform(r) - 6));
    /* near: centred on one of the two tests' thresholds ±tc·se (a cell about to be decided) */
    double sem = sig / sqrt((double)N), side = gsl_rng_uniform(r) < 0.5 ? -1 : 1;
    double mu = sem * (u + (near ? side * tc : 0));
    int out[2];
    double pnone = 0, pc[3] = {0, 0, 0}; /* a replicate HOLDS, FAILS, NOT-OBSERVED; pnone INCONCLUSIVE */
    double est = 0, est0 = 0;
    for (int k = 0; k < 2; k++) { /* k = 0 observed, 1 replicate */
      double m = mu + sem * gsl_ran_gaussian(r, 1), se = sig * sqrt(gsl_ran_chisq(r, df) / df) / sqrt((double)N);
      double tt = m / se, p_ok = gsl_cdf_tdist_P(tt, df), p_bad = gsl_cdf_tdist_Q(tt, df);
      double det = dl * se;
      out[k] = p_ok < ALPHA ? 0 : p_bad < ALPHA ? 1 : det <= TOL ? 2 : 3;
      if (k == 0) {
        est0 = fmin(1, kvb_flip_t(p_ok, df, ALPHA) + kvb_flip_t(p_bad, df, ALPHA));
        est = out[0] >= 2 ? fmin(1, est0 + kvb_flip_gate(det, TOL, df)) : est0;
      }
    }
    for (int j = 0; j < J; j++) {
      double se = sig * xq[j] / sqrt((double)N);
      double ph = gsl_cdf_ugaussian_P((-tc * se - mu) / sem), pf = gsl_cdf_ugaussian_Q((tc * se - mu) / sem);
      double pu = fmax(0, 1 - ph - pf);
      pc[0] += ph / J, pc[1] += pf / J;
      if (dl * se <= TOL) pc[2] += pu / J;
      else pnone += pu / J;
    }
    double pobs = out[0] == 3 ? pnone : pc[out[0]];
    add(&t, out[0] == 2, est, est0, fmax(0, 1 - pobs), out[0] != out[1]);
  }
  char type[32];
  snprintf(type, sizeof type, "cell%u", N);
  report(type, near ? "near" : "wide", &t, !near, !near);
  gsl_rng_free(r);
}

/* ---- count tests on runs' continuous outcomes, and cells decided by controls ----
 * The cell type of balancekv.thm31.error: n = 8 runs, each run's outcome y (the log of its
 * largest error) against the log of a bound c = 0; the count K = #{y > c} rejects at K >= kc
 * (exact binomial at δ = 1e-3, α = 1e-6: kc = 3). y ~ N(μ, 1) (the estimator is location-scale
 * equivariant, so σ = 1 loses nothing); μ uniform on [−4, 1.5] (wide: θ = P[y > c] from 3e-5 to
 * 0.93) or N(μ*, ½²) with μ* where a replicate rejects with probability ½ (near). The true flip
 * from Bin(8, θ). The mutant is the estimate 0 — what the cell recorded before (no estimate,
 * counted 0) — which must fail; the beta-binomial of the count alone (kvb_flip_binom) is
 * printed beside it (it ignores the margin, so it is far above the truth where K = 0). */
#define NEX 400
enum { NRUN = 8 };

static double draw_mu(gsl_rng *r, double mstar, int near) {
  return near ? mstar + 0.5 * gsl_ran_gaussian(r, 1) : -4 + 5.5 * gsl_rng_uniform(r);
}

/* μ* of the near spread: P[Bin(8, Φ(μ*)) >= kc] = ½ (bisection on θ) */
static double mu_star(unsigned kc) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 60; i++) {
    double th = 0.5 * (lo + hi);
    if (kvb_binom_tail_ge(kc, th, NRUN) < 0.5) lo = th;
    else hi = th;
  }
  return gsl_cdf_ugaussian_Pinv(0.5 * (lo + hi));
}

/* One control's runs: returns K, fills the estimate, the count's beta-binomial and the plug-in
 * (θ at the observed mean and sd, no uncertainty about them: a mutant of the estimator). */
static unsigned draw_runs(gsl_rng *r, double mu, unsigned kc, double *est, double *bb, double *pl) {
  double y[NRUN], m = 0, ss = 0;
  unsigned k = 0;
  for (int i = 0; i < NRUN; i++) y[i] = mu + gsl_ran_gaussian(r, 1), k += y[i] > 0, m += y[i] / NRUN;
  for (int i = 0; i < NRUN; i++) ss += (y[i] - m) * (y[i] - m);
  *est = kvb_flip_exceed(y, NRUN, 0, kc);
  *bb = kvb_flip_binom(k, NRUN, kc);
  double pw = kvb_binom_tail_ge(kc, gsl_cdf_ugaussian_P(m / sqrt(ss / (NRUN - 1))), NRUN);
  *pl = k >= kc ? 1 - pw : pw;
  return k;
}

static unsigned draw_count(gsl_rng *r, double mu) {
  unsigned k = 0;
  for (int i = 0; i < NRUN; i++) k += mu + gsl_ran_gaussian(r, 1) > 0;
  return k;
}

static void sim_exceed(int near) {
  gsl_rng *r = kvb_rng_alloc_substream(20261128, 500 + (uint64_t)near);
  unsigned kc = kvb_binom_crit(NRUN, 1e-3, ALPHA);
  double ms = mu_star(kc), bb_sum = 0, lo_est = 0, lo_true = 0, lo_n = 0;
  tally t = {0}, tp = {0};
  for (int i = 0; i < NEX; i++) {
    double mu = draw_mu(r, ms, near), est, bb, pl;
    unsigned k = draw_runs(r, mu, kc, &est, &bb, &pl), kr = draw_count(r, mu);
    double pw = kvb_binom_tail_ge(kc, gsl_cdf_ugaussian_P(mu), NRUN);
    int rej = k >= kc;
    bb_sum += bb;
    if ((rej ? 1 - pw : pw) < 0.01) lo_est += est, lo_true += rej ? 1 - pw : pw, lo_n++;
    add(&t, rej, est, 0, rej ? 1 - pw : pw, rej != (kr >= kc));
    add(&tp, rej, est, pl, rej ? 1 - pw : pw, rej != (kr >= kc));
  }
  printf("note flip.exceed.%s: the count's beta-binomial alone: mean %.4f; where the true flip < "
         "0.01 (%.0f cases): mean estimate %.2g vs true %.2g\n", near ? "near" : "wide", bb_sum / t.n,
         lo_n, lo_est / fmax(1, lo_n), lo_true / fmax(1, lo_n));
  report("exceed8", near ? "near" : "wide", &t, !near, !near);
  /* the plug-in θ(ȳ, s) as the mutant: same estimate, asserted again beside it */
  report("exceed8_plugin", near ? "near" : "wide", &tp, !near, !near);
  gsl_rng_free(r);
}

/* A cell VACUOUS when either of two such controls passes (K < kc: it meets the bound), each with
 * its own μ and runs: the estimate kvb_flip_controls of their kvb_flip_exceed; the true flip from
 * the two true pass probabilities (independent controls). A "catch" is a VACUOUS cell. The
 * mutant: 0, the controls' flips left out of the cell's (as before). */
static void sim_vacuous(int near) {
  gsl_rng *r = kvb_rng_alloc_substream(20261128, 600 + (uint64_t)near);
  unsigned kc = kvb_binom_crit(NRUN, 1e-3, ALPHA);
  double ms = mu_star(kc);
  tally t = {0};
  for (int i = 0; i < NEX / 2; i++) {
    double mu[2], fl[2], q = 1, bb, pl;
    int pass[2], rpass = 0;
    for (int a = 0; a < 2; a++) {
      mu[a] = draw_mu(r, ms, near);
      pass[a] = draw_runs(r, mu[a], kc, &fl[a], &bb, &pl) < kc;
      rpass |= draw_count(r, mu[a]) < kc;
      q *= kvb_binom_tail_ge(kc, gsl_cdf_ugaussian_P(mu[a]), NRUN); /* P[control a fails] */
    }
    int vac = pass[0] || pass[1];
    add(&t, vac, kvb_flip_controls(2, pass, fl), 0, vac ? q : 1 - q, vac != rpass);
  }
  report("vacuous2", near ? "near" : "wide", &t, !near, !near);
  gsl_rng_free(r);
}

static void test_known_controls(void) {
  /* by hand: a passing control (0.2) beside a failing one (0.3): 0.2; none passing: 0.5; both
   * passing (0.2, 0.05): 0.05; the union capped at 1; n = 0: 0; a NaN flip: NaN */
  CHECK(kvb_flip_controls(2, (int[]){1, 0}, (double[]){0.2, 0.3}) == 0.2 &&
            fabs(kvb_flip_controls(2, (int[]){0, 0}, (double[]){0.2, 0.3}) - 0.5) < 1e-15 &&
            kvb_flip_controls(2, (int[]){1, 1}, (double[]){0.2, 0.05}) == 0.05 &&
            kvb_flip_controls(2, (int[]){0, 0}, (double[]){0.7, 0.6}) == 1 &&
            kvb_flip_controls(0, NULL, NULL) == 0 &&
            isnan(kvb_flip_controls(1, (int[]){1}, (double[]){NAN})),
        "flip.controls.by_hand", "min over passing, sum over failing");
  /* kvb_flip_exceed against a Monte Carlo of the same posterior (2·10^5 draws of (σ, μ), an
   * independent computation): y = (−1.3, −0.2, −2.1, −0.9, −1.6, −0.4, −1.1, −2.4), c = 0,
   * kc = 3, K = 0 */
  const double y[NRUN] = {-1.3, -0.2, -2.1, -0.9, -1.6, -0.4, -1.1, -2.4};
  double m = 0, ss = 0;
  for (int i = 0; i < NRUN; i++) m += y[i] / NRUN;
  for (int i = 0; i < NRUN; i++) ss += (y[i] - m) * (y[i] - m);
  gsl_rng *r = kvb_rng_alloc_substream(20261128, 700);
  double mc = 0;
  const int M = 200000;
  for (int j = 0; j < M; j++) {
    double sig = sqrt(ss / gsl_ran_chisq(r, NRUN - 1)), mu = m + sig / sqrt(NRUN) * gsl_ran_gaussian(r, 1);
    mc += kvb_binom_tail_ge(3, gsl_cdf_ugaussian_P(mu / sig), NRUN) / M;
  }
  gsl_rng_free(r);
  double f = kvb_flip_exceed(y, NRUN, 0, 3);
  CHECK(fabs(f - mc) < 0.003 + 0.02 * mc, "flip.exceed.monte_carlo", "%.5f vs Monte Carlo %.5f", f, mc);
  const double flat[3] = {1, 1, 1};
  CHECK(isnan(kvb_flip_exceed(y, 1, 0, 3)) && isnan(kvb_flip_exceed(flat, 3, 0, 1)) &&
            kvb_flip_exceed(y, NRUN, 0, 9) == 0 &&
            fabs(kvb_flip_exceed(y, NRUN, 0, 1) - kvb_flip_exceed((double[]){1.3, 0.2, 2.1, 0.9,
                                                                     1.6, 0.4, 1.1, 2.4},
                                                                 NRUN, 0, NRUN)) < 1e-9,
        "flip.exceed.edges", "n 1, s 0, never rejecting, mirror symmetry (y rejecting at >= 1 "
        "flips as −y at >= 8: P[K_rep >= 1 | y] = 1 − P[K_rep = 8 | −y])");
}

int main(void) {
  test_known();
  test_known_controls();
  sim_exceed(0);
  sim_exceed(1);
  sim_vacuous(0);
  sim_vacuous(1);
  for (int near = 0; near <= 1; near++) {
    sim_normal(near);
    sim_t(4, near);
    sim_t(9, near);
    sim_t(29, near);
    sim_binom(30, near);
    sim_binom(100, near);
    sim_gate(9, near);
    sim_gate(31, near);
    sim_cell(10, near);
    sim_cell(32, near);
  }
  UNIT_EXIT();
}

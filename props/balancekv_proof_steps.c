/* balancekv_proof_steps.c — steps of 003's proofs that hold by algebra, checked exactly on
 * explicit instances: the feature map φ of the proof of Theorem 3.3 (003 App. A.2) and the
 * deterministic ratio lemma eq. (7) of the proof of Theorem 3.1 (003 App. A.1). Neither makes a
 * hypothesis test (prop_exact); each has a check mutant — a plausible misreading of the formula —
 * that the same assertion must reject. */
#include "prop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ⟨a^{⊗i}, b^{⊗i}⟩ computed entry by entry over the d^i coordinates (not by the identity being
 * checked): the sum over every multi-index (j_1..j_i) of Π a_{j_m} · Π b_{j_m}. */
static double tensor_power_inner(const double *a, const double *b, int d, int i) {
  long total = 1;
  for (int m = 0; m < i; m++) total *= d;
  double s = 0;
  for (long idx = 0; idx < total; idx++) {
    long r = idx;
    double pa = 1, pb = 1;
    for (int m = 0; m < i; m++) {
      int j = (int)(r % d);
      r /= d;
      pa *= a[j], pb *= b[j];
    }
    s += pa * pb;
  }
  return s;
}

/* B-T3.3.phi: φ(k) = ((k/d^{1/4})^{⊗i}/√(i!))_{i≥0}, so ⟨φ(k), φ(q)⟩ = Σ_i ⟨k,q⟩^i/(√d^i·i!) =
 * exp(⟨k,q⟩/√d) and ‖φ(k)‖² = exp(‖k‖²/√d). Checked with the tensor inner products formed
 * explicitly for i ≤ 5 (d = 3), the tail past i = 5 bounded by the Lagrange remainder
 * x^6·e^{|x|}/6! with x = ⟨k,q⟩/√d, and the total compared with exp(x): |series − exp(x)| must
 * be within the remainder bound plus rounding. The check mutant check:no_factorial drops the
 * 1/√(i!) (then the series is Σ x^i, not exp). */
static void phi_identity(prop_ctx *ctx) {
  prop_control_na(ctx, "an identity checked on explicit tensors; the mutant shows it can fail");
  prop_exact(ctx);
  enum { D = 3, IMAX = 5 };
  int wrong = prop_check_mutant(ctx, "no_factorial");
  gsl_rng *r = prop_rng(ctx, 0);
  double worst = 0, worst_norm = 0;
  int bad = 0;
  for (int trial = 0; trial < 50; trial++) {
    double k[D], q[D], ks[D], qs[D];
    kvb_rand_ball(r, k, D, 0.8);
    kvb_rand_ball(r, q, D, 0.8);
    double s4 = pow((double)D, 0.25), dot = 0, kk = 0;
    for (int j = 0; j < D; j++) ks[j] = k[j] / s4, qs[j] = q[j] / s4, dot += k[j] * q[j], kk += k[j] * k[j];
    double series = 0, nseries = 0, fact = 1;
    for (int i = 0; i <= IMAX; i++) {
      if (i) fact *= i;
      double w = wrong ? 1 : 1 / fact; /* (1/√(i!))² on the inner product */
      series += w * tensor_power_inner(ks, qs, D, i);
      nseries += w * tensor_power_inner(ks, ks, D, i);
    }
    double x = dot / sqrt((double)D), xn = kk / sqrt((double)D), f6 = fact * (IMAX + 1);
    double rem = pow(fabs(x), IMAX + 1) * exp(fabs(x)) / f6, remn = pow(xn, IMAX + 1) * exp(xn) / f6;
    double e1 = fabs(series - exp(x)), e2 = fabs(nseries - exp(xn));
    bad += e1 > rem + 1e-14 || e2 > remn + 1e-14;
    worst = fmax(worst, e1 - rem);
    worst_norm = fmax(worst_norm, e2 - remn);
  }
  prop_check(ctx, bad == 0, "%d of 50 instances outside the truncation bound", bad);
  prop_note(ctx, "d = 3, ‖k‖, ‖q‖ ≤ 0.8, explicit tensors up to order 5: |Σ_{i≤5} ⟨φ_i(k), φ_i(q)⟩ − "
            "exp(⟨k,q⟩/√d)| minus its Lagrange remainder bound at most %.3g (≤ 0: within the "
            "bound; rounding allows 1e-14), %.3g for ‖φ(k)‖² vs exp(‖k‖²/√d), over 50 pairs",
            worst, worst_norm);
  gsl_rng_free(r);
}

/* B-T3.1.eq7: if ‖u − u′‖ ≤ α and 1/((1+γ)b) ≤ 1/b′ ≤ 1/((1−γ)b), then
 * ‖u/b − u′/b′‖ ≤ α/((1−γ)b) + ‖u‖·γ/((1−γ)b). A deterministic lemma: checked on instances at
 * the edge of its hypotheses (‖u − u′‖ = α exactly, 1/b′ at either end of its bracket, u′ in
 * the worst direction) and random ones; every instance must meet it (to rounding) and the
 * extreme ones must come within 1e-9 of it (the lemma is tight). The check mutant
 * check:drop_gamma_term drops the ‖u‖γ term, which the extreme instances must violate. */
static void ratio_lemma(prop_ctx *ctx) {
  prop_control_na(ctx, "a deterministic inequality; the mutant shows the assertion can fail");
  prop_exact(ctx);
  enum { S = 4 };
  int drop = prop_check_mutant(ctx, "drop_gamma_term");
  gsl_rng *r = prop_rng(ctx, 0);
  int violated = 0;
  double tightest = 0;
  for (int trial = 0; trial < 2000; trial++) {
    double u[S], d[S], up[S], alpha = 0.01 + gsl_rng_uniform(r), gamma = 0.9 * gsl_rng_uniform(r);
    double b = 0.1 + 10 * gsl_rng_uniform(r);
    kvb_rand_gaussian_vec(r, u, S, 1.0);
    int extreme = trial % 2 == 0;
    double nu = 0;
    for (int j = 0; j < S; j++) nu += u[j] * u[j];
    nu = sqrt(nu);
    if (extreme) /* u′ = u + α·u/‖u‖ and b′ = (1 − γ)b: both hypotheses at their edge, and
                    the two error terms aligned, so eq. (7) holds with equality */
      for (int j = 0; j < S; j++) d[j] = -alpha * u[j] / nu;
    else {
      kvb_rand_ball(r, d, S, alpha);
    }
    for (int j = 0; j < S; j++) up[j] = u[j] - d[j];
    double inv_bp = extreme ? 1 / ((1 - gamma) * b)
                            : 1 / ((1 + gamma) * b) + gsl_rng_uniform(r) *
                                  (1 / ((1 - gamma) * b) - 1 / ((1 + gamma) * b));
    double lhs = 0;
    for (int j = 0; j < S; j++) lhs += (u[j] / b - up[j] * inv_bp) * (u[j] / b - up[j] * inv_bp);
    lhs = sqrt(lhs);
    double rhs = alpha / ((1 - gamma) * b) + (drop ? 0 : nu * gamma / ((1 - gamma) * b));
    violated += lhs > rhs * (1 + 1e-12);
    tightest = fmax(tightest, lhs / rhs);
  }
  prop_check(ctx, violated == 0, "eq. (7) violated on %d of 2000 instances", violated);
  prop_note(ctx, "eq. (7) on 2000 instances (half at the edge of both hypotheses): largest lhs/rhs "
            "%.6f (the bound is %s)", tightest, tightest > 1 - 1e-9 ? "attained" : "not attained");
  if (!drop) prop_check(ctx, tightest > 1 - 1e-9, "the bound is never attained (largest lhs/rhs "
                        "%.6f): the extreme instances are not extreme", tightest);
  gsl_rng_free(r);
}

const prop_claim props_balancekv_proof_steps[] = {
    {"balancekv.thm33.phi", "003 App. A.2 (proof of Theorem 3.3)", "invariant",
     "⟨φ(k), φ(q)⟩ = exp(⟨k,q⟩/√d) and ‖φ(k)‖² = exp(‖k‖²/√d) with the tensors formed explicitly "
     "up to order 5 (d = 3) and the tail within its Lagrange bound, on 50 pairs",
     {"check:no_factorial"}, phi_identity, {"B-T3.3.phi"}},
    {"balancekv.thm31.eq7", "003 App. A.1 eq. (7)", "invariant",
     "the ratio lemma eq. (7) holds on 2000 instances, 1000 at the edge of both hypotheses where it "
     "is attained",
     {"check:drop_gamma_term"}, ratio_lemma, {"B-T3.1.eq7"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

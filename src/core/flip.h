/* flip.h — the chance that a one-sided test's decision (reject at level alpha or not) comes out
 * the other way on a fresh, independent replicate of the same experiment: a voting cell's flip
 * probability on a fresh seed, and a mutant's miss probability when its catch rests on a
 * rejected test (props/README.md, Verdicts).
 *
 * The estimator is the PREDICTIVE (replication) probability under a flat prior on the test's
 * noncentrality: with the statistic S ~ N(θ, 1) and θ flat, θ | S_obs ~ N(S_obs, 1) and a
 * replicate S_rep ~ N(S_obs, 2), so
 *     flip = P[S_rep on the other side of the critical value c] = Φ(−|S_obs − c|/√2).
 * The older plug-in Φ(−|S_obs − c|) (kvb_plugin_miss, power.h) takes the observed effect as the
 * true one and ignores the observed statistic's own noise: it is below a tenth of the true flip
 * in a fifth of the catches; the predictive is not (tests/test_flip.c simulates both, for every
 * cell type below, and states the numbers).
 *
 *   normal (z) tests: S = z_p = Φ⁻¹(1 − p), c = z_α.
 *   t tests (df ν): the noncentral t's spread grows with its noncentrality (Var ≈ 1 + λ²/(2ν)),
 *     so S is taken on the variance-stabilizing scale g(t) = √(2ν)·asinh(t/√(2ν)) (g'(t) =
 *     1/√(1 + t²/(2ν))), with T_obs = t_ν quantile of p and c = t_{ν, 1−α}; ν → ∞ gives the
 *     normal case.
 *   exact binomial tests (sign test, exact McNemar on the discordant pairs, a binomial rate):
 *     the exact beta-binomial predictive of K_rep ~ Bin(n, θ) under θ ~ Beta(k + 1, n − k + 1)
 *     (the uniform prior), the test rejecting at K >= kcrit.
 *
 * Invalid input (alpha outside (0, 1), NaN p, df <= 0, k > n) gives NaN. */
#ifndef KVB_FLIP_H
#define KVB_FLIP_H

/* A one-sided z test observed at p-value p: Φ(−|z_p − z_α|/√2); 0 for p <= 0 or p >= 1 (the
 * statistic is infinite), 0.5 at p = alpha. */
double kvb_flip_normal(double p, double alpha);
/* A one-sided t test with df degrees of freedom observed at p-value p (module comment); 0 for
 * p <= 0 or p >= 1, 0.5 at p = alpha. df = INFINITY is the normal case. */
double kvb_flip_t(double p, double df, double alpha);
/* The smallest k with P[Bin(n, p0) >= k] < alpha (the exact one-sided test's critical count),
 * or n + 1 when no k <= n rejects. */
unsigned kvb_binom_crit(unsigned n, double p0, double alpha);
/* An exact one-sided binomial test that observed k successes of n (rejecting at k >= kcrit):
 * P[K_rep on the other side] under the beta-binomial predictive, K_rep ~ BetaBin(n, k+1, n−k+1).
 * kcrit > n (the test can never reject): 0. */
double kvb_flip_binom(unsigned k, unsigned n, unsigned kcrit);
/* A power gate: a cell that is not decided by its test is NOT-OBSERVED when the design had power
 * >= 0.9 at the stated effect (the smallest difference it resolves with power 0.9, `det`, is at
 * most `effect`) and INCONCLUSIVE otherwise. det is proportional to a sample standard deviation
 * with df degrees of freedom (a t test's se), so a fresh replicate's det_rep/det_obs = s_rep/s_obs,
 * whose predictive law under the Jeffreys prior p(σ) ∝ 1/σ is s_rep²/s_obs² ~ F(df, df)
 * (σ² | s ~ df·s²/χ²_df, s_rep² = σ²·χ²'_df/df). The gate's flip is
 *     det <= effect: P[F(df, df) > (effect/det)²];  det > effect: P[F(df, df) <= (effect/det)²],
 * 0.5 at det = effect. df = INFINITY (a known variance: det is fixed) gives 0. Invalid input
 * (det or effect not > 0, df <= 0, NaN) gives NaN. */
double kvb_flip_gate(double det, double effect, double df);

/* A count of runs over a threshold (a bound met "in rate <= δ of the runs", tested exactly: the
 * count K = #{i : y_i > c} rejects at K >= kcrit), when the runs' outcomes y_1..y_n themselves
 * are at hand (y = the log of a run's largest error, c = the log of the bound). With K near 0
 * the count alone says little (kvb_flip_binom at 0 of 8 gives 0.08 whatever the margin); the
 * outcomes' margin to c says more. Model: y_i ~ N(μ, σ²) independent, Jeffreys prior
 * p(μ, σ) ∝ 1/σ, so σ² | y ~ (n−1)s²/χ²_{n−1} and μ | σ, y ~ N(ȳ, σ²/n); a replicate's count is
 * Bin(n, θ), θ = P[y > c] = Φ((μ − c)/σ). The flip is the posterior mean of P[Bin(n, θ) on the
 * other side of kcrit], by quadrature (σ at 128 χ² quantiles, μ at 32 normal quantiles given σ).
 * n < 2, s = 0 or a non-finite y_i (a log of 0): NaN (the caller falls back to kvb_flip_binom);
 * kcrit > n (never rejects): 0. */
double kvb_flip_exceed(const double *y, unsigned n, double c, unsigned kcrit);
/* A verdict decided by controls (DESIGN, controls): the outcome is VACUOUS when at least one of
 * n controls passes (meets the assertion the method is held to), and otherwise whatever the
 * method's own tests give. passed[i] says whether control i passed on this seed and flip[i] is
 * the flip chance of the test that decided it (one of the estimators above, or 0 for a control
 * whose outcome is fixed by design, e.g. a z ≡ 0 score that cannot exceed the bound). The chance
 * that a fresh seed changes whether the outcome is VACUOUS:
 *     some control passed: every passing control must fail: <= min over passing i of flip[i]
 *                          (the controls need not be independent: they may share the stream);
 *     none passed:         any one passing is enough: <= Σ_i flip[i] (the union bound), capped at 1.
 * A cell that the controls make VACUOUS has this as its flip; a cell they leave to the method
 * adds it to its own tests' flip (either can move it). n = 0 gives 0; a NaN flip or n < 0 NaN. */
double kvb_flip_controls(int n, const int *passed, const double *flip);

#endif

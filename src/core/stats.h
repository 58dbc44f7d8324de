/* stats.h — the statistical tests every stochastic assertion in kvbound goes through
 * (props/README.md, Verdicts). Tail probabilities come from GSL's cdf functions, except the
 * Kolmogorov–Smirnov distribution (GSL has none; computed here, see kvb_ks_pvalue).
 * Known-answer tests: tests/test_stats.c; calibration under H0: props/stats_calibration.c.
 *
 * Invalid input (a probability outside [0, 1] or NaN, k > n, fewer observations than the test
 * needs, negative or non-finite counts) gives a NaN p-value / bound (or -1 for the functions
 * returning a status), outputs untouched unless said otherwise. A NaN p-value fails every
 * `p >= alpha` comparison, so nonsense never passes silently. */
#ifndef KVB_STATS_H
#define KVB_STATS_H

#include <stddef.h>

/* P[Binomial(n, p) >= k] (k itself included): the p-value of observing k or more failures
 * when the claimed failure probability is p. A bound check fails when this is < alpha.
 * 1 for k = 0, 0 for k > n, NaN for p outside [0, 1]. */
double kvb_binom_tail_ge(unsigned k, double p, unsigned n);

/* Two-sided Clopper–Pearson interval for a rate k/n at confidence level conf (e.g. 0.95): each
 * side has (1-conf)/2, i.e. P[Bin(n, lo) >= k] = (1-conf)/2 (lo = 0 when k = 0) and
 * P[Bin(n, hi) <= k] = (1-conf)/2 (hi = 1 when k = n). n = 0 gives [0, 1]; k > n or conf
 * outside (0, 1) gives lo = hi = NaN. */
void kvb_clopper_pearson(unsigned k, unsigned n, double conf, double *lo, double *hi);

/* Chi-square goodness of fit of observed counts to expected counts (same total, to a relative
 * 1e-6; a fully specified null, no fitted parameters). Cells are merged (smallest expected
 * first, into the next smallest) until every expected count is >= 5, as the statistical policy asks (props/README.md, Verdicts).
 * Returns the p-value; *stat and *df receive the statistic and the degrees of freedom (merged
 * cells - 1) after merging (df = 0 and p = 1 when fewer than two cells remain). A positive
 * count in a cell with expected 0 is impossible under the null: p = 0, *stat = +inf.
 * NaN for negative or non-finite counts or different totals. */
double kvb_chisq_gof(const double *observed, const double *expected, size_t k, double *stat,
                     size_t *df);

/* Chi-square test of independence on an r×c table of counts (row-major). While the smallest
 * expected count (smallest row sum × smallest column sum / total) is < 5, the sparser of that
 * row and that column is dropped (not merged: under independence the kept subtable is still
 * independent, so the test stays valid and only loses power). Returns the p-value; *stat and
 * *df ((kept rows - 1)(kept columns - 1)) as above; df = 0 and p = 1 when fewer than two rows
 * or columns remain. NaN for negative or non-finite counts. */
double kvb_chisq_independence(const double *table, size_t r, size_t c, double *stat, size_t *df);

/* Least-squares fit y = a + b·x with the slope's two-sided confidence interval at level conf:
 * b ± t_{1-(1-conf)/2, n-2}·se, se² = Σ residual² / ((n-2) Σ(x - x̄)²). Returns 0; -1 (outputs
 * untouched) if n < 3, every x is equal, a value is not finite, or conf is outside (0, 1). */
int kvb_linear_fit(size_t n, const double *x, const double *y, double conf, double *slope,
                   double *slope_lo, double *slope_hi, double *intercept);

/* The same fit's slope with its standard error (from the residual scatter) and the degrees of
 * freedom n - 2, for one-sided slope tests and their power. Returns 0; -1 as above. */
int kvb_linear_fit_se(size_t n, const double *x, const double *y, double *slope, double *se,
                      double *df);

/* One-sided test that slope a (of one least-squares fit) is below slope b (of an independent
 * fit): t = (a − b)/√(se_a² + se_b²) with Welch–Satterthwaite df
 * (se_a² + se_b²)² / (se_a⁴/df_a + se_b⁴/df_b). Returns P[T ≤ t] (small: evidence that a < b);
 * *t_stat and *detectable (may be NULL) get t and the smallest true difference b − a detected
 * with probability >= power at level alpha. NaN on nonsense input (se ≤ 0, df ≤ 0). */
double kvb_slope_less(double a, double se_a, double df_a, double b, double se_b, double df_b,
                      double alpha, double power, double *t_stat, double *detectable);

/* Power of a one-sided t test with standard error se and df degrees of freedom at level alpha:
 * the smallest true effect δ (in the units of se times se) that the test "T > t_{1-alpha,df}"
 * detects with probability >= power, from the noncentral t law of T (exact for a t statistic;
 * for Welch's, exact given its df). Not the shifted-central approximation
 * (t_{1-alpha,df} + t_{power,df})·se, which overstates the power at small alpha and small df
 * (e.g. alpha = 1e-6, df = 43: 0.85 instead of 0.9). NaN for se < 0, df <= 0, alpha or power
 * outside (0, 1). */
double kvb_t_detectable(double se, double df, double alpha, double power);

/* q-quantile (0..1) of data (copied and sorted internally; data unchanged), GSL's convention:
 * with the sorted values s_0..s_{n-1} and h = q·(n-1), s_⌊h⌋ + (h - ⌊h⌋)(s_⌊h⌋+1 - s_⌊h⌋).
 * NaN for n = 0 or q outside [0, 1]. */
double kvb_quantile(const double *data, size_t n, double q);

/* Welch's t-test that mean(a) != mean(b); returns the two-sided p-value 2·P[T_ν >= |t|] with
 * t = (mean a − mean b)/√(va/na + vb/nb) (sample variances, n-1 denominators) and the
 * Welch–Satterthwaite ν = (va/na + vb/nb)² / ((va/na)²/(na-1) + (vb/nb)²/(nb-1)). With no
 * scatter at all: p = 1 if the means are equal, else 0. na, nb >= 2 (else NaN). */
double kvb_welch_t(const double *a, size_t na, const double *b, size_t nb, double *t_stat);

/* Welch's one-sided test of H0 "mean(a) >= mean(b)" against H1 "mean(a) < mean(b)" (a claimed
 * advantage: a's error below b's). Returns the p-value (small: evidence for the advantage).
 * *t_stat (may be NULL) gets (mean a − mean b)/se; *detectable (may be NULL) the smallest true
 * advantage mean(b) − mean(a) the test detects at level alpha with probability >= power
 * (kvb_t_detectable with the observed se and the conservative df min(na, nb) - 1: with the
 * Welch–Satterthwaite df the stated power is not reached, e.g. 0.84 at 10 vs 10 draws).
 * The test itself uses the Welch–Satterthwaite df ν (as kvb_welch_t). The p-value is
 * P[T_ν <= t]. With no scatter: 0 if mean a < mean b, else 1. na, nb >= 2 (else NaN). */
double kvb_welch_less(const double *a, size_t na, const double *b, size_t nb, double alpha,
                      double power, double *t_stat, double *detectable);

/* Power of the bound test above. The test rejects "failure probability <= p0" when
 * P[Bin(n, p0) >= F] < alpha; *critical receives the smallest such F (n + 1 when no F can be
 * rejected). Returns the smallest true failure probability p1 that the test detects with
 * probability >= power (P[Bin(n, p1) >= critical] >= power), found by bisection to 1e-12;
 * returns 1 when nothing below certainty is detectable (critical > n). NaN (critical = n + 1)
 * for p0 outside [0, 1], alpha outside (0, 1] or power outside (0, 1). */
double kvb_binom_detectable_rate(unsigned n, double p0, double alpha, double power,
                                 unsigned *critical);

/* One-sided exact binomial upper confidence bound: the largest p with P[Bin(n,p) <= k] >= alpha
 * (all of alpha on one side; the two-sided Clopper–Pearson hi at conf = 1 - 2·alpha). 1 for
 * k = n; NaN for k > n or alpha outside (0, 1). */
double kvb_binom_upper_bound(unsigned k, unsigned n, double alpha);

/* One-sample Kolmogorov–Smirnov test of p[0..n-1] against U(0, 1): *D (may be NULL) receives
 * D_n = sup_x |F_n(x) - x|; returns the p-value P[D_n >= D] under the null. Data unchanged.
 * NaN for n = 0 or a value outside [0, 1]. */
double kvb_ks_uniform(const double *p, size_t n, double *D);

/* P[D_n >= d] for the two-sided KS statistic of n uniforms. Exact (Durbin's matrix formula, as
 * evaluated by Marsaglia, Tsang & Wang 2003) while ⌊nd⌋ + 1 <= 200 and the tail is >= 1e-3;
 * otherwise 2·P[D+_n >= d] with the one-sided tail exact (Birnbaum–Tingey 1951), which equals
 * the two-sided tail for d > 1/2 and exceeds it by P[D+ >= d and D- >= d] (relatively of the
 * order of the squared tail) below. */
double kvb_ks_pvalue(double d, size_t n);

/* Power of the KS test above at level alpha: *critical (may be NULL) gets the d where the
 * p-value crosses alpha; returns a sup-distance Δ between the true cdf and U(0, 1) detected
 * with probability >= power: critical + √(ln(1/(1-power))/(2n)) (Hoeffding at the point of
 * largest distance; conservative). NaN for n = 0, alpha or power outside (0, 1). */
double kvb_ks_detectable(size_t n, double alpha, double power, double *critical);

#endif

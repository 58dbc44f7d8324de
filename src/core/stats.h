/* stats.h — the statistical tests every stochastic assertion in kvbound goes through
 * (DESIGN.md, Statistical policy). All tail probabilities come from GSL's cdf functions. */
#ifndef KVB_STATS_H
#define KVB_STATS_H

#include <stddef.h>

/* P[Binomial(n, p) >= k]: the p-value of observing k or more failures when the claimed
 * failure probability is p. A bound check fails when this is < alpha. */
double kvb_binom_tail_ge(unsigned k, double p, unsigned n);

/* Two-sided Clopper–Pearson interval for a rate k/n at confidence level conf (e.g. 0.95). */
void kvb_clopper_pearson(unsigned k, unsigned n, double conf, double *lo, double *hi);

/* Chi-square goodness of fit of observed counts to expected counts (same total). Cells are
 * merged (smallest expected first, into the next smallest) until every expected count is
 * >= 5, as DESIGN.md asks. Returns the p-value; *stat and *df receive the statistic and the
 * degrees of freedom after merging (df = 0 and p = 1 when fewer than two cells remain). */
double kvb_chisq_gof(const double *observed, const double *expected, size_t k, double *stat,
                     size_t *df);

/* Chi-square test of independence on an r×c table of counts (row-major), with rows and
 * columns whose expected counts are < 5 merged away. Returns the p-value. */
double kvb_chisq_independence(const double *table, size_t r, size_t c, double *stat, size_t *df);

/* Least-squares fit y = a + b·x with the slope's two-sided confidence interval at level conf
 * (Student t with n-2 degrees of freedom). Returns 0, -1 if n < 3. */
int kvb_linear_fit(size_t n, const double *x, const double *y, double conf, double *slope,
                   double *slope_lo, double *slope_hi, double *intercept);

/* The same fit's slope with its standard error (from the residual scatter) and the degrees of
 * freedom n - 2, for one-sided slope tests and their power. Returns 0, -1 if n < 3. */
int kvb_linear_fit_se(size_t n, const double *x, const double *y, double *slope, double *se,
                      double *df);

/* Power of a one-sided t test with standard error se and df degrees of freedom at level alpha:
 * the smallest true effect (in the units of se) detected with probability >= power,
 * (t_{1-alpha,df} + t_{power,df})·se. */
double kvb_t_detectable(double se, double df, double alpha, double power);

/* q-quantile (0..1) of data (copied and sorted internally; data unchanged). */
double kvb_quantile(const double *data, size_t n, double q);

/* Welch's t-test that mean(a) != mean(b); returns the two-sided p-value. */
double kvb_welch_t(const double *a, size_t na, const double *b, size_t nb, double *t_stat);

/* Welch's one-sided test of H0 "mean(a) >= mean(b)" against H1 "mean(a) < mean(b)" (a claimed
 * advantage: a's error below b's). Returns the p-value (small: evidence for the advantage).
 * *t_stat (may be NULL) gets (mean a − mean b)/se; *detectable (may be NULL) the smallest true
 * advantage mean(b) − mean(a) the test detects at level alpha with probability >= power
 * (Welch–Satterthwaite df, the observed variances). na, nb >= 2. */
double kvb_welch_less(const double *a, size_t na, const double *b, size_t nb, double alpha,
                      double power, double *t_stat, double *detectable);

/* Power of the bound test above. The test rejects "failure probability <= p0" when
 * P[Bin(n, p0) >= F] < alpha; *critical receives the smallest such F (n + 1 when no F can be
 * rejected). Returns the smallest true failure probability p1 that the test detects with
 * probability >= power (P[Bin(n, p1) >= critical] >= power), found by bisection to 1e-12;
 * returns 1 when nothing below certainty is detectable (critical > n). */
double kvb_binom_detectable_rate(unsigned n, double p0, double alpha, double power,
                                 unsigned *critical);

/* One-sided exact binomial upper confidence bound: the largest p with P[Bin(n,p) <= k] >= alpha. */
double kvb_binom_upper_bound(unsigned k, unsigned n, double alpha);

#endif

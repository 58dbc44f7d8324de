/* power.h — the power of the tests kvbound's checks run, computed BEFORE a check reads its
 * outcome (props/README.md, Verdicts: a comparison that could not detect its stated effect with power
 * >= 0.9 reads INCONCLUSIVE, not NOT-OBSERVED), and the plug-in miss probability of a mutant
 * whose test rejected. One home for what props/prop.c, props/real_cache.c and
 * props/real_model_e2e.c used to compute each on its own. Known answers: tests/test_power.c.
 *
 * The detectable effect of a t test is kvb_t_detectable (stats.h); of a binomial rate test,
 * kvb_binom_detectable_rate; of a KS test, kvb_ks_detectable. Invalid input gives NaN (or 0 for
 * the unit counts). */
#ifndef KVB_POWER_H
#define KVB_POWER_H

/* Power at `effect` of a one-sided test at level alpha whose smallest effect detected with
 * probability `design_power` is `detectable`, in the normal approximation (the test's standard
 * error is detectable/(z_alpha + z_design_power)): Φ(effect·(z_α + z_β)/detectable − z_α).
 * detectable <= 0: 1 for effect > 0, else 0. */
double kvb_normal_power_at(double detectable, double effect, double alpha, double design_power);

/* The chance that a test which rejected at p-value p < alpha would NOT have rejected on a fresh
 * draw of the same experiment, in the plug-in normal approximation (the observed effect taken
 * as the true one): Φ(z_alpha − z_p), z_x = Φ⁻¹(1 − x). 0 for p <= 0; 0.5 at p = alpha. */
double kvb_plugin_miss(double p, double alpha);

/* Power of the one-sided t test "T > t_{1−alpha, df}" when T is noncentral t with df degrees of
 * freedom and noncentrality ncp (midpoint quadrature over the chi-square law, 4000 nodes;
 * absolute error below 1e-4). 0 for df <= 0. */
double kvb_t_power(double ncp, double df, double alpha);

/* The one-sided exact sign test over N independent units at level alpha rejects when the wins k
 * satisfy P[Bin(N, ½) >= k] < alpha. Its power when each unit is a win with probability p1;
 * 0 when no k <= N rejects (N < log2(1/alpha)). */
double kvb_sign_power(unsigned N, double p1, double alpha);
/* The smallest N whose sign-test power at p1 reaches `power` (capped at 100000). */
unsigned kvb_sign_units_needed(double p1, double alpha, double power);

/* The exact one-sided McNemar test over N independent tasks (P[Bin(b + c, ½) >= b] < alpha, b
 * the tasks only the method answers, c those only the contender answers) when the method answers
 * a task with probability p1 and the contender with p2: its power maximized over the couplings
 * of the two outcomes with these marginals (p11 on a 201-point grid from max(0, p1 + p2 − 1) to
 * min(p1, p2)) — an upper bound on the power whatever the dependence between the methods. NaN
 * when memory runs out. */
double kvb_mcnemar_power(unsigned N, double p1, double p2, double alpha);
/* The smallest task count (from 20; steps of 10 above 100, capped at 2000) whose McNemar power
 * (over a 21-point grid of couplings) reaches `power`; 0 when memory runs out. */
unsigned kvb_mcnemar_tasks_needed(double p1, double p2, double alpha, double power);

#endif

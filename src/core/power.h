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

/* The same exact McNemar test when the two methods' outcomes on a task are INDEPENDENT given
 * the marginals (p10 = p1(1 − p2), p01 = p2(1 − p1)): the coupling a power gate may assume
 * without knowing the dependence (kvb_mcnemar_power maximizes over couplings and so overstates
 * the power a gate may claim: 0.987 against 0.186 here at N = 150, 0.86 vs 0.66, α = 1e-6).
 * NaN for marginals outside [0, 1] or when memory runs out. */
double kvb_mcnemar_power_indep(unsigned N, double p1, double p2, double alpha);
/* The first N (2 to 20000; steps of 1 below 1000, of N/100 above) whose independence-coupling
 * McNemar power reaches `power`; 0 when memory runs out, 20000 when none below does. */
unsigned kvb_mcnemar_units_needed_indep(double p1, double p2, double alpha, double power);

/* The one-sided paired t test over N independent units (H1: mean difference > 0) at level
 * alpha, when the differences have mean `effect` and standard deviation `sd`: its power from
 * the noncentral t law, df = N − 1, ncp = effect·√N/sd (kvb_t_power; exact for normal
 * differences, the design's approximation otherwise). 0 for N < 2; NaN for sd <= 0. */
double kvb_paired_t_power(unsigned N, double effect, double sd, double alpha);
/* The smallest N (2 to 1000000) whose paired-t power reaches `power` (bisection on the
 * monotone power); 1000000 when none below does. */
unsigned kvb_paired_t_units_needed(double effect, double sd, double alpha, double power);
/* Power of TOST (two one-sided t tests at level alpha each, margin ±margin) over N units whose
 * differences have true mean `mean` (|mean| < margin) and SD `sd`, in the normal approximation
 * (the se taken as known): Φ((margin − mean)·√N/sd − z_α) + Φ((margin + mean)·√N/sd − z_α) − 1,
 * floored at 0. */
double kvb_tost_power(unsigned N, double mean, double margin, double sd, double alpha);
/* The smallest N (2 to 1000000) whose TOST power at mean 0 reaches `power`. */
unsigned kvb_tost_units_needed(double margin, double sd, double alpha, double power);

/* The paired answer-log-likelihood effect of an accuracy gap (props/long_context.c's outcome
 * model): a method's answer log-lik equals exact attention's on a task it answers and lies `gap`
 * nats (SD `wsd`) below on one it misses; two methods with accuracies p1, p2 and independent
 * outcomes then differ per task by Δ with
 *   mean *delta = gap·(p1 − p2),
 *   var  *sd²   = gap²·[p1(1 − p2) + p2(1 − p1) − (p1 − p2)²] + wsd²·[(1 − p1) + (1 − p2)].
 * NaN in both for p outside [0, 1], gap < 0 or wsd < 0. */
void kvb_loglik_effect(double p1, double p2, double gap, double wsd, double *delta, double *sd);

#endif

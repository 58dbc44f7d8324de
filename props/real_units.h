/* real_units.h — the unit of replication in the real-model checks (DESIGN, The sampling unit):
 * power of the unit-level tests the checks of props/real_cache.c and props/real_model_e2e.c
 * run, and a standard error valid under serial dependence for statistics over the positions
 * (tokens) of one text.
 *
 * Why these: the real-model checks see ONE text (GPL-3 of Debian's base-files, or the
 * debian-licenses concatenation). The tokens of a text, the queries that share one compressed
 * cache and the (layer, head) caches of one text are not independent draws; a test that treats
 * them as such (a t test over tokens, a sign test over the 90 caches) states a p-value far
 * smaller than the evidence supports. So a claim about texts is tested with the text as its unit
 * (power from ru_sign_power: at α = 1e-6 the exact sign test needs ≥ 20 texts), and a statement
 * about the positions of this one text uses the EWC standard error below. */
#ifndef KVB_REAL_UNITS_H
#define KVB_REAL_UNITS_H

#include <stddef.h>

/* The one-sided exact sign test over N independent units at level alpha: rejects when the wins
 * k satisfy P[Bin(N, ½) ≥ k] < alpha. Its power when each unit is a win with probability p1
 * (0 when no k ≤ N rejects: N < log2(1/alpha)). */
double ru_sign_power(unsigned N, double p1, double alpha);
/* The smallest N whose sign-test power at p1 reaches `power` (capped at 100000). */
unsigned ru_sign_units_needed(double p1, double alpha, double power);

/* The exact McNemar test (one-sided: P[Bin(b + c, ½) ≥ b] < alpha, b the tasks only the method
 * answers, c those only the contender answers) over N independent tasks, when the method answers
 * a task with probability p1 and the contender with p2: its power maximized over every coupling
 * of the two outcomes with these marginals (p11 from max(0, p1 + p2 − 1) to min(p1, p2)), i.e.
 * an upper bound on the power whatever the dependence between the methods' outcomes. */
double ru_mcnemar_power(unsigned N, double p1, double p2, double alpha);
/* The smallest task count (from 20; steps of 10 above 100, capped at 2000) whose McNemar power
 * (over a 21-point grid of couplings) reaches `power`. */
unsigned ru_mcnemar_tasks_needed(double p1, double p2, double alpha, double power);

/* P[T' > t_{1−alpha, df}] for T' noncentral t with df degrees of freedom and noncentrality ncp:
 * the power of a one-sided t test (midpoint quadrature over the chi-square law, 4000 nodes). */
double ru_t_power(double ncp, double df, double alpha);

/* Equal-weighted cosine (EWC) long-run-variance t statistics (Lazarus, Lewis, Stock & Watson,
 * "HAR inference: recommendations for practice", JBES 2018): with ν cosine weights the
 * t statistic is t_ν-distributed under fixed-b asymptotics whatever the (short-memory) serial
 * dependence; ν = ru_ewc_nu(T) = max(1, ⌊0.4·T^{2/3}⌋), their recommended rule.
 *   mean:  y_1..y_T → *mean, its standard error *se;
 *   slope: least squares y = a + b·x → *b, its standard error *se.
 * Return ν (0 on bad input: T < 3 or a constant x). */
unsigned ru_ewc_nu(size_t T);
unsigned ru_ewc_mean(const double *y, size_t T, double *mean, double *se);
unsigned ru_ewc_slope(const double *x, const double *y, size_t T, double *b, double *se);

#endif

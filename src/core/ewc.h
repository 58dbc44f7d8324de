/* ewc.h — standard errors valid under serial dependence, for statistics over the positions
 * (tokens) of ONE text, whose values are not independent draws (DESIGN, The sampling unit).
 *
 * Equal-weighted cosine (EWC) long-run-variance estimates (Lazarus, Lewis, Stock & Watson,
 * "HAR inference: recommendations for practice", J. Business & Economic Statistics 2018): with ν
 * cosine weights the t statistic is t_ν-distributed under fixed-b asymptotics whatever the
 * (short-memory) serial dependence; ν = kvb_ewc_nu(T) = max(1, ⌊0.4·T^{2/3}⌋), their
 * recommended rule. Known answers and coverage under AR(1): tests/test_power.c. */
#ifndef KVB_EWC_H
#define KVB_EWC_H

#include <stddef.h>

unsigned kvb_ewc_nu(size_t T);
/* y_1..y_T → *mean and its standard error *se. Returns ν (0 for T < 3 or no memory; outputs
 * untouched then). */
unsigned kvb_ewc_mean(const double *y, size_t T, double *mean, double *se);
/* Least squares y = a + b·x → *b and its standard error *se. Returns ν (0 for T < 3, a constant
 * x or no memory; outputs untouched then). */
unsigned kvb_ewc_slope(const double *x, const double *y, size_t T, double *b, double *se);

#endif

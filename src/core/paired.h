/* paired.h — the paired per-unit comparison the papers' empirical rows are judged on (DESIGN,
 * Two families): N independent units (tasks, texts), one difference d_i = method − contender
 * per unit (answer log-likelihood in nats), summarized by its mean, SD, 95% CI and the one-sided
 * paired t test in each direction, and TOST for an equivalence ("competitive with") claim.
 * The t law is exact for normal differences; for others it is the CLT approximation, adequate at
 * the family's level (0.05/m) with tens of units, NOT at the regression battery's 1e-6, whose
 * tails it does not control (there the exact sign test decides). Known answers:
 * tests/test_paired.c. */
#ifndef KVB_PAIRED_H
#define KVB_PAIRED_H

#include <stddef.h>

typedef struct {
  size_t n;           /* units */
  double mean, sd;    /* of the differences (sd with n − 1) */
  double se, df;      /* sd/√n, n − 1 */
  double lo, hi;      /* two-sided 95% t interval of the mean */
  double t;           /* mean/se (±inf when sd = 0 and mean ≠ 0, 0 when both are 0) */
  double p_greater;   /* one-sided p of H1: mean > 0, P[T_df >= t] */
  double p_less;      /* one-sided p of H1: mean < 0, P[T_df <= t] */
} kvb_paired;

/* Summarizes d[0..n-1] into *out. Out untouched and an error status: KVB_ENULL (d or out
 * NULL), KVB_EINVAL (n < 2), KVB_EDOM (a non-finite difference). */
int kvb_paired_t(const double *d, size_t n, kvb_paired *out);

/* TOST against the margin ±margin (> 0): the larger of the two one-sided p-values, of H1: mean >
 * −margin (P[T_df >= (mean + margin)/se]) and of H1: mean < margin (P[T_df <= (mean −
 * margin)/se]); equivalence is shown at level α when it is < α. The p of the opposite claim
 * (the mean lies beyond a margin) is *p_beyond when non-NULL: the smaller of P[T_df >= (mean −
 * margin)/se] and P[T_df <= (mean + margin)/se]. NaN for margin <= 0. */
double kvb_paired_tost(const kvb_paired *s, double margin, double *p_beyond);

#endif

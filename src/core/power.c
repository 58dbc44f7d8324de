/* power.c — power of the checks' tests and the plug-in miss probability (power.h). */
#include "power.h"
#include "stats.h"
#include "gsl_quiet.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include <math.h>
#include <stdlib.h>

double kvb_normal_power_at(double detectable, double effect, double alpha, double design_power) {
  if (!(alpha > 0 && alpha < 1 && design_power > 0 && design_power < 1)) return NAN;
  if (!(detectable > 0)) return effect > 0 ? 1.0 : 0.0;
  double za = gsl_cdf_ugaussian_Qinv(alpha), zb = gsl_cdf_ugaussian_Pinv(design_power);
  return gsl_cdf_ugaussian_P(effect * (za + zb) / detectable - za);
}

double kvb_plugin_miss(double p, double alpha) {
  if (!(alpha > 0 && alpha < 1) || isnan(p)) return NAN;
  if (p <= 0) return 0;
  return gsl_cdf_ugaussian_P(gsl_cdf_ugaussian_Qinv(alpha) - gsl_cdf_ugaussian_Qinv(p));
}

/* Smallest k ≤ N with P[Bin(N, ½) ≥ k] < alpha, or N + 1 when none. */
static unsigned sign_crit(unsigned N, double alpha) {
  unsigned k = 0;
  while (k <= N && kvb_binom_tail_ge(k, 0.5, N) >= alpha) k++;
  return k;
}

double kvb_sign_power(unsigned N, double p1, double alpha) {
  unsigned k = sign_crit(N, alpha);
  return k > N ? 0.0 : kvb_binom_tail_ge(k, p1, N);
}

unsigned kvb_sign_units_needed(double p1, double alpha, double power) {
  for (unsigned N = 1; N < 100000; N++)
    if (kvb_sign_power(N, p1, alpha) >= power) return N;
  return 100000;
}

/* P[discordant-test rejects] for N tasks at one coupling (p10, p01), crit[k] for k ≤ N. */
static double mcnemar_at(unsigned N, double p10, double p01, const unsigned *crit) {
  double pd = p10 + p01, pw = 0;
  if (!(pd > 0)) return 0;
  for (unsigned k = 1; k <= N; k++)
    if (crit[k] <= k) pw += gsl_ran_binomial_pdf(k, pd, N) * kvb_binom_tail_ge(crit[k], p10 / pd, k);
  return pw;
}

static double mcnemar_max(unsigned N, double p1, double p2, const unsigned *crit, int grid) {
  double lo = fmax(0.0, p1 + p2 - 1), hi = fmin(p1, p2), best = 0;
  for (int g = 0; g <= grid; g++) {
    double p11 = lo + (hi - lo) * g / grid;
    best = fmax(best, mcnemar_at(N, p1 - p11, p2 - p11, crit));
  }
  return best;
}

/* crit[k] for k = 0..N (nondecreasing in k, so found incrementally). */
static unsigned *crit_table(unsigned N, double alpha) {
  unsigned *crit = malloc((N + 1) * sizeof *crit);
  if (!crit) return NULL;
  unsigned c = 0;
  for (unsigned k = 0; k <= N; k++) {
    while (c <= k && kvb_binom_tail_ge(c, 0.5, k) >= alpha) c++;
    crit[k] = c;
  }
  return crit;
}

double kvb_mcnemar_power(unsigned N, double p1, double p2, double alpha) {
  unsigned *crit = crit_table(N, alpha);
  if (!crit) return NAN;
  double best = mcnemar_max(N, p1, p2, crit, 200);
  free(crit);
  return best;
}

unsigned kvb_mcnemar_tasks_needed(double p1, double p2, double alpha, double power) {
  enum { NMAX = 2000 };
  unsigned *crit = crit_table(NMAX, alpha), N;
  if (!crit) return 0;
  for (N = 20; N < NMAX && mcnemar_max(N, p1, p2, crit, 20) < power; N += N < 100 ? 1 : 10) {}
  free(crit);
  return N;
}

double kvb_t_power(double ncp, double df, double alpha) {
  if (!(df > 0)) return 0.0;
  if (!(alpha > 0 && alpha < 1) || !isfinite(ncp)) return NAN;
  /* T' = (Z + ncp)/√(V/df), V ~ χ²_df. Conditioning on Z (not on V, whose inverse cdf GSL
   * cannot find at df ~ 1e5) leaves the χ² cdf, which is stable at every df:
   * P[T' > c | Z] = P[V < df·((Z + ncp)/c)²] when Z + ncp > 0 and c > 0, etc. */
  kvb_gsl_quiet_begin();
  double c = gsl_cdf_tdist_Qinv(alpha, df), s = 0;
  enum { NODES = 4000 };
  for (int i = 0; i < NODES; i++) {
    double w = gsl_cdf_ugaussian_Pinv((i + 0.5) / NODES) + ncp, pr;
    if (c == 0) pr = w > 0;
    else {
      double v = df * (w / c) * (w / c);
      if (c > 0) pr = w > 0 ? gsl_cdf_chisq_P(v, df) : 0;
      else pr = w >= 0 ? 1 : gsl_cdf_chisq_Q(v, df);
    }
    s += pr / NODES;
  }
  kvb_gsl_quiet_end();
  return s;
}


double kvb_mcnemar_power_indep(unsigned N, double p1, double p2, double alpha) {
  if (!(p1 >= 0 && p1 <= 1 && p2 >= 0 && p2 <= 1 && alpha > 0 && alpha < 1)) return NAN;
  unsigned *crit = crit_table(N, alpha);
  if (!crit) return NAN;
  double pw = mcnemar_at(N, p1 * (1 - p2), p2 * (1 - p1), crit);
  free(crit);
  return pw;
}

unsigned kvb_mcnemar_units_needed_indep(double p1, double p2, double alpha, double power) {
  /* the power is not monotone in N (the exact test's lattice): the first N that reaches it */
  enum { NMAX = 20000 };
  double p10 = p1 * (1 - p2), p01 = p2 * (1 - p1);
  unsigned *crit = crit_table(NMAX, alpha), N;
  if (!crit) return 0;
  for (N = 2; N < NMAX && mcnemar_at(N, p10, p01, crit) < power; N += N < 1000 ? 1 : N / 100) {}
  free(crit);
  return N;
}

double kvb_paired_t_power(unsigned N, double effect, double sd, double alpha) {
  if (!(sd > 0) || !isfinite(effect)) return NAN;
  if (N < 2) return 0;
  return kvb_t_power(effect * sqrt((double)N) / sd, (double)N - 1, alpha);
}

unsigned kvb_paired_t_units_needed(double effect, double sd, double alpha, double power) {
  enum { NMAX = 1000000 };
  if (!(kvb_paired_t_power(NMAX, effect, sd, alpha) >= power)) return NMAX;
  unsigned lo = 1, hi = NMAX; /* power(lo) < power <= power(hi) */
  while (hi - lo > 1) {
    unsigned mid = lo + (hi - lo) / 2;
    if (kvb_paired_t_power(mid, effect, sd, alpha) >= power) hi = mid;
    else lo = mid;
  }
  return hi;
}

double kvb_tost_power(unsigned N, double mean, double margin, double sd, double alpha) {
  if (!(sd > 0 && margin > 0 && alpha > 0 && alpha < 1) || !isfinite(mean)) return NAN;
  double r = sqrt((double)N) / sd, za = gsl_cdf_ugaussian_Qinv(alpha);
  double pw = gsl_cdf_ugaussian_P((margin - mean) * r - za) +
              gsl_cdf_ugaussian_P((margin + mean) * r - za) - 1;
  return pw > 0 ? pw : 0;
}

unsigned kvb_tost_units_needed(double margin, double sd, double alpha, double power) {
  enum { NMAX = 1000000 };
  if (!(kvb_tost_power(NMAX, 0, margin, sd, alpha) >= power)) return NMAX;
  unsigned lo = 1, hi = NMAX;
  while (hi - lo > 1) {
    unsigned mid = lo + (hi - lo) / 2;
    if (kvb_tost_power(mid, 0, margin, sd, alpha) >= power) hi = mid;
    else lo = mid;
  }
  return hi;
}

void kvb_loglik_effect(double p1, double p2, double gap, double wsd, double *delta, double *sd) {
  if (!(p1 >= 0 && p1 <= 1 && p2 >= 0 && p2 <= 1 && gap >= 0 && wsd >= 0)) {
    *delta = *sd = NAN;
    return;
  }
  double v = p1 * (1 - p2) + p2 * (1 - p1) - (p1 - p2) * (p1 - p2);
  *delta = gap * (p1 - p2);
  *sd = sqrt(gap * gap * v + wsd * wsd * ((1 - p1) + (1 - p2)));
}

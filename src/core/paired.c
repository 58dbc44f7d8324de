/* paired.c — the paired t summary and TOST (paired.h). */
#include "paired.h"
#include "kvb_error.h"
#include "gsl_quiet.h"

#include <gsl/gsl_cdf.h>

#include <math.h>

int kvb_paired_t(const double *d, size_t n, kvb_paired *out) {
  if (!d || n < 2 || !out) return KVB_ERROR(!d || !out ? KVB_ENULL : KVB_EINVAL, "paired t: need >= 2 differences, got %zu", n);
  double s = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(d[i])) return KVB_ERROR(KVB_EDOM, "paired t: difference %zu is not finite", i);
    s += d[i];
  }
  kvb_paired r;
  r.n = n, r.mean = s / (double)n, r.df = (double)n - 1;
  double ss = 0;
  for (size_t i = 0; i < n; i++) ss += (d[i] - r.mean) * (d[i] - r.mean);
  r.sd = sqrt(ss / r.df), r.se = r.sd / sqrt((double)n);
  kvb_gsl_quiet_begin();
  double q = gsl_cdf_tdist_Qinv(0.025, r.df);
  r.lo = r.mean - q * r.se, r.hi = r.mean + q * r.se;
  if (r.se > 0) {
    r.t = r.mean / r.se;
    r.p_greater = gsl_cdf_tdist_Q(r.t, r.df), r.p_less = gsl_cdf_tdist_P(r.t, r.df);
  } else { /* every difference equal */
    r.t = r.mean > 0 ? INFINITY : r.mean < 0 ? -INFINITY : 0;
    r.p_greater = r.mean > 0 ? 0 : 1, r.p_less = r.mean < 0 ? 0 : 1;
  }
  kvb_gsl_quiet_end();
  *out = r;
  return KVB_OK;
}

double kvb_paired_tost(const kvb_paired *s, double margin, double *p_beyond) {
  if (!s || !(margin > 0)) return NAN;
  double up, dn, bu, bd; /* up: H1 mean > −margin; dn: H1 mean < margin */
  if (s->se > 0) {
    kvb_gsl_quiet_begin();
    up = gsl_cdf_tdist_Q((s->mean + margin) / s->se, s->df);
    dn = gsl_cdf_tdist_P((s->mean - margin) / s->se, s->df);
    bu = gsl_cdf_tdist_Q((s->mean - margin) / s->se, s->df);
    bd = gsl_cdf_tdist_P((s->mean + margin) / s->se, s->df);
    kvb_gsl_quiet_end();
  } else {
    up = s->mean > -margin ? 0 : 1, dn = s->mean < margin ? 0 : 1;
    bu = s->mean > margin ? 0 : 1, bd = s->mean < -margin ? 0 : 1;
  }
  if (p_beyond) *p_beyond = fmin(bu, bd);
  return fmax(up, dn);
}

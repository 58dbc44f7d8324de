/* test_paired.c — known answers for src/core/paired.h. References by another route: the t law
 * with 4 degrees of freedom in closed form, P[T4 > t] = ½ − t/(2√(4 + t²))·(1 + 2/(4 + t²)),
 * and t_{0.975,4} = 2.776445 from tables. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>

static double t4_upper(double t) { return 0.5 - t / (2 * sqrt(4 + t * t)) * (1 + 2 / (4 + t * t)); }

int main(void) {
  /* d: mean 1, sd √1.25, se 0.5, t = 2, df 4 */
  const double d[5] = {0.5, 1.5, 2.5, -0.5, 1.0};
  kvb_paired s;
  int st = kvb_paired_t(d, 5, &s);
  CHECK(st == KVB_OK && s.n == 5 && fabs(s.mean - 1) < 1e-12 && fabs(s.sd - sqrt(1.25)) < 1e-12 &&
            fabs(s.se - 0.5) < 1e-12 && fabs(s.t - 2) < 1e-12 && s.df == 4,
        "paired.summary", "mean %.6g sd %.6g se %.6g t %.6g df %.0f", s.mean, s.sd, s.se, s.t, s.df);
  /* a mutant that swaps the two directions, or uses the two-sided p, fails here */
  CHECK(fabs(s.p_greater - t4_upper(2)) < 1e-9 && fabs(s.p_less - (1 - t4_upper(2))) < 1e-9,
        "paired.one_sided_p", "p(>) %.9f vs %.9f, p(<) %.9f", s.p_greater, t4_upper(2), s.p_less);
  CHECK(fabs(s.lo - (1 - 2.776445 * 0.5)) < 1e-5 && fabs(s.hi - (1 + 2.776445 * 0.5)) < 1e-5,
        "paired.ci95", "[%.6f, %.6f]", s.lo, s.hi);
  /* TOST, margin 2: up P[T4 >= 6], down P[T4 <= −2] = P[T4 >= 2]; the larger decides */
  double pb, p = kvb_paired_tost(&s, 2.0, &pb);
  CHECK(fabs(p - t4_upper(2)) < 1e-9 && fabs(pb - (1 - t4_upper(2))) < 1e-9, "paired.tost",
        "p %.9f vs %.9f; beyond %.9f", p, t4_upper(2), pb);
  /* margin 0.5: the mean 1 lies beyond it: p_beyond = P[T4 >= 1] */
  p = kvb_paired_tost(&s, 0.5, &pb);
  CHECK(p > 0.5 && fabs(pb - t4_upper(1)) < 1e-9, "paired.tost_beyond", "p %.4f, beyond %.9f vs "
        "%.9f", p, pb, t4_upper(1));
  /* all equal: sd 0 */
  const double c[3] = {2, 2, 2};
  st = kvb_paired_t(c, 3, &s);
  CHECK(st == KVB_OK && s.sd == 0 && isinf(s.t) && s.p_greater == 0 && s.p_less == 1,
        "paired.constant", "t %g p %g/%g", s.t, s.p_greater, s.p_less);
  /* bad input: a status and *out untouched */
  kvb_paired keep = s;
  const double bad[3] = {1, NAN, 2};
  CHECK(kvb_paired_t(d, 1, &s) == KVB_EINVAL && kvb_paired_t(bad, 3, &s) == KVB_EDOM &&
            kvb_paired_t(NULL, 3, &s) == KVB_ENULL && s.mean == keep.mean && s.n == keep.n,
        "paired.bad_input", "n = 1, NaN, NULL");
  CHECK(isnan(kvb_paired_tost(&s, 0, NULL)), "paired.tost_bad_margin", "margin 0");
  UNIT_EXIT();
}

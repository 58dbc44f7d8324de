/* test_gsl_handler.c — libkvbound never changes the GSL error handler of the program that links
 * it: the handler is off only while a kvbound function runs GSL (gsl_quiet.h), and a GSL error
 * inside kvbound never reaches the host's handler (and never aborts). */
#include "kvbound.h"
#include "unit.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>

static int host_calls = 0;
static void host_handler(const char *reason, const char *file, int line, int gsl_errno) {
  (void)reason, (void)file, (void)line, (void)gsl_errno;
  host_calls++;
}

int main(void) {
  gsl_set_error_handler(host_handler);
  double a[4] = {1, 2, 3, 4}, b[4] = {2, 3, 4, 6}, lo, hi, V[6] = {1, 2, 3, 4, 5, 6}, op;
  double t, p = kvb_welch_t(a, 4, b, 4, &t);
  kvb_clopper_pearson(3, 20, 0.95, &lo, &hi);
  int st = kvb_operator_norm(3, 2, V, &op);
  gsl_error_handler_t *now = gsl_set_error_handler(host_handler);
  CHECK(now == host_handler && p > 0 && p < 1 && st == KVB_OK && host_calls == 0,
        "gsl_handler.host_handler_kept", "handler %s, host called %d times",
        now == host_handler ? "kept" : "CHANGED", host_calls);
  /* The host's handler still works for the host's own GSL calls. */
  gsl_cdf_beta_Pinv(2.0, 1, 1); /* P outside [0, 1]: a GSL domain error */
  CHECK(host_calls == 1, "gsl_handler.host_handler_still_called", "host called %d times",
        host_calls);
  /* Nonsense input to kvbound's statistics is answered with NaN, not through the host. */
  host_calls = 0;
  double q = kvb_binom_tail_ge(3, 1.5, 10);
  CHECK(q != q && host_calls == 0, "gsl_handler.kvbound_errors_stay_inside",
        "p = %g, host called %d times", q, host_calls);
  UNIT_EXIT();
}

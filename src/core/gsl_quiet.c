/* gsl_quiet.c — see gsl_quiet.h. Idempotent; the handler is process-global in GSL. */
#include "gsl_quiet.h"
#include <gsl/gsl_errno.h>
void kvb_gsl_quiet(void) { gsl_set_error_handler_off(); }

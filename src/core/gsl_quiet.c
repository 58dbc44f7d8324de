/* gsl_quiet.c — see gsl_quiet.h. */
#include "gsl_quiet.h"

#include <pthread.h>
#include <gsl/gsl_errno.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned depth;                /* calls in progress, all threads */
static gsl_error_handler_t *saved;    /* the host's handler while depth > 0 */

void kvb_gsl_quiet_begin(void) {
  pthread_mutex_lock(&lock);
  if (depth++ == 0) saved = gsl_set_error_handler_off();
  pthread_mutex_unlock(&lock);
}

void kvb_gsl_quiet_end(void) {
  pthread_mutex_lock(&lock);
  if (depth > 0 && --depth == 0) gsl_set_error_handler(saved);
  pthread_mutex_unlock(&lock);
}

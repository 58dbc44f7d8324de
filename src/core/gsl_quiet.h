/* gsl_quiet.h — GSL's default error handler aborts; a library that promises never to abort
 * must switch it off before calling GSL, and check every GSL status itself. */
#ifndef KVB_GSL_QUIET_H
#define KVB_GSL_QUIET_H
void kvb_gsl_quiet(void);
#endif

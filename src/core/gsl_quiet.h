/* gsl_quiet.h — GSL's default error handler aborts, and a library that promises never to abort
 * must not let it run; but the handler is process-global, and switching it off for good would
 * silently change the GSL behaviour of the program that links us. So every libkvbound function
 * that calls GSL brackets its work with begin/end: the handler is off while any such call is in
 * progress (in any of our threads: the calls are counted under a mutex) and the caller's handler
 * is back when the last one ends. Each GSL status is checked by the caller itself. */
#ifndef KVB_GSL_QUIET_H
#define KVB_GSL_QUIET_H
void kvb_gsl_quiet_begin(void);
void kvb_gsl_quiet_end(void);
#endif

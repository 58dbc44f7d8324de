/* subgen_uniforms.h — SubGen's update fed caller-supplied uniforms instead of its generator, so a
 * second implementation (the device kernels, src/gpu/k_subgen.cl) can be checked against this
 * reference coin for coin. subgen.c is untouched: for the duration of one update the method's
 * generator is replaced by a gsl_rng whose type returns the supplied numbers in order, so the
 * coins are exactly the ones subgen.c draws, in its order (000 Alg. 1: the t cluster coins of
 * line 16 when the key joins a cluster, then the s slot coins of line 25). */
#ifndef KVB_SUBGEN_UNIFORMS_H
#define KVB_SUBGEN_UNIFORMS_H

#include <stddef.h>

#include "method.h"

/* kvb_method_update(m, k, v) with the coins u[0], u[1], ... (nu of them, each in [0, 1); t + s
 * always suffice). *used (may be NULL) receives how many were drawn: t + s when k joined a
 * cluster, s when it opened one. Errors: those of kvb_method_update, KVB_EINVAL (not a SubGen
 * method), KVB_EDOM (a uniform outside [0, 1)), KVB_ERANGE (the update drew more than nu — the
 * method's state is then already updated with the numbers it had, padded by 0). */
int kvb_subgen_update_uniforms(kvb_method *m, const double *k, const double *v, const double *u,
                               size_t nu, size_t *used);

#endif

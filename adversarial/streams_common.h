/* streams_common.h — shared parameter rows of the adversarial stream generators. A stream's
 * mutants (mutant.h: a deliberately non-adversarial variant, the attack switched off) are
 * listed in its type's `mutants` table and exist only so props/adversarial.c can prove its
 * checks can fail. */
#ifndef KVB_ADV_STREAMS_COMMON_H
#define KVB_ADV_STREAMS_COMMON_H

#include "kvb_error.h"
#include "params.h"
#include "stream.h"

#define KVB_ADV_DIMS(n_def, dk_def, dv_def)                                            \
  {"n", KVB_PARAM_INT, n_def, 1, 1e9, NULL, "stream length"},                          \
      {"d_key", KVB_PARAM_INT, dk_def, 1, 65536, NULL, "key/query dimension"},         \
      {"d_value", KVB_PARAM_INT, dv_def, 1, 65536, NULL, "value dimension"}
#define KVB_ADV_END {NULL, 0, 0, 0, 0, NULL, NULL}

#endif

/* claims.h — the one registry of claims (claims.c): every prop file contributes a
 * NULL-id-terminated array. */
#ifndef KVB_CLAIMS_H
#define KVB_CLAIMS_H
#include "prop.h"
extern const prop_claim *const prop_claim_tables[];
/* Claims whose long trial loops go through prop_gather (split by trial block over shards). */
extern const char *const prop_trial_block_claims[];
#endif

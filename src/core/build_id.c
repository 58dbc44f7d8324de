/* build_id.c — see build_id.h. The values come from the compiler's command line (Makefile:
 * KVB_BUILD_VERSION, KVB_BUILD_SOURCE_HASH); a build without them does not compile, so no
 * library can claim a cache entry with a made-up identity. */
#include "build_id.h"

#if !defined(KVB_BUILD_VERSION) || !defined(KVB_BUILD_SOURCE_HASH)
#error "build_id.c needs -DKVB_BUILD_VERSION and -DKVB_BUILD_SOURCE_HASH (the Makefile sets both)"
#endif

const char *kvb_build_version(void) { return KVB_BUILD_VERSION; }
const char *kvb_build_source_hash(void) { return KVB_BUILD_SOURCE_HASH; }

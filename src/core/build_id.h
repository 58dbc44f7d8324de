/* build_id.h — which build of kvbound this library is: its version and a hash of the sources
 * the cached model streams' bytes depend on (src/core, src/model) and the compiler flags, both
 * set by the Makefile when this file's object is compiled (a changed source changes the hash
 * and make recompiles build_id.o). The on-disk caches (src/model/
 * stream_model.c) put both in their keys, so an entry another build wrote — whose numbers may
 * differ — is never read. */
#ifndef KVB_BUILD_ID_H
#define KVB_BUILD_ID_H

/* "0.1.0": KVBOUND_VERSION of src/kvbound.h. */
const char *kvb_build_version(void);
/* SHA-256 (hex, 64 digits) over src/core/ and src/model/ *.c, *.h (`sha256sum FILES`: names
 * and contents) and the compiler and $(OPT) $(CFLAGS) (Makefile, BUILD_ID_SRC). */
const char *kvb_build_source_hash(void);

#endif

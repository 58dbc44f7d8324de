/* build_id.h — which build of kvbound this library is: its version and a hash of the library's
 * sources, both set by the Makefile when this file's object is compiled (a changed source
 * changes the hash and make recompiles build_id.o). The on-disk caches (src/model/
 * stream_model.c) put both in their keys, so an entry another build wrote — whose numbers may
 * differ — is never read. */
#ifndef KVB_BUILD_ID_H
#define KVB_BUILD_ID_H

/* "0.1.0": KVBOUND_VERSION of src/kvbound.h. */
const char *kvb_build_version(void);
/* SHA-256 (hex, 64 digits) of the library's sources and headers as the Makefile lists them
 * (`sha256sum FILES | sha256sum`: names and contents). */
const char *kvb_build_source_hash(void);

#endif

/* sha256.h — SHA-256 (FIPS 180-4 §6.2), written from the standard, for the identities kvbound
 * records and checks: a plugin file's hash in a shard's metadata (plugin.h) and a model file's
 * hash in the key of the on-disk caches (src/model/stream_model.c). No dependency: the library
 * links no crypto library. Known answers (FIPS 180-2 Appendix B: "abc", the 448-bit message,
 * one million 'a'; and the empty message) are checked by tests/test_sha256.c. */
#ifndef KVB_SHA256_H
#define KVB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus /* the CUDA backend (src/gpu/gpu_cuda.cu, C++) checks fatbins with it */
extern "C" {
#endif

typedef struct {
  uint32_t h[8];
  uint64_t nbytes;      /* message length so far */
  unsigned char buf[64]; /* the partial block */
  size_t nbuf;
} kvb_sha256_ctx;

void kvb_sha256_init(kvb_sha256_ctx *c);
void kvb_sha256_update(kvb_sha256_ctx *c, const void *p, size_t n);
/* The 32-byte digest; c is spent (init it again to reuse). */
void kvb_sha256_final(kvb_sha256_ctx *c, unsigned char out[32]);

/* One-shot: the digest of n bytes as 64 lowercase hex digits and a NUL (hex[65]). */
void kvb_sha256_hex(const void *p, size_t n, char hex[65]);
/* The digest of a regular file's bytes as hex (and its size in *size, may be NULL). KVB_OK, or
 * KVB_EIO (cannot open or read) / KVB_EINVAL (not a regular file) with a message naming path. */
int kvb_sha256_file(const char *path, char hex[65], unsigned long long *size);

#ifdef __cplusplus
}
#endif

#endif

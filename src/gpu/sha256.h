/* sha256.h — SHA-256 (FIPS 180-4) of a file, as `sha256sum` prints it. The CUDA backend checks a
 * mutant build's fatbin against the digest make recorded when it built that fatbin (gpu_cuda.cu),
 * so a file renamed or copied over another build's name is refused. */
#ifndef KVB_GPU_SHA256_H
#define KVB_GPU_SHA256_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The digest of len bytes at p as 64 lowercase hex digits and a NUL in hex[65]. */
void kvb_sha256_hex(const void *p, size_t len, char hex[65]);

/* The digest of the file at path in hex[65]: 0, or -1 when it cannot be read (hex[0] = 0). */
int kvb_sha256_file_hex(const char *path, char hex[65]);

#ifdef __cplusplus
}
#endif

#endif

/* real_text.h — the text the real model reads for the real-cache checks (src/model/README.md, The real
 * model): real English prose every Debian machine has, checked by its SHA-256.
 *
 * The corpus "debian-licenses" is /usr/share/common-licenses/GPL-3 followed by
 * /usr/share/common-licenses/GFDL-1.3 (both shipped by base-files, an Essential package, on
 * every Debian system; Debian 12: base-files 12.4), 12 839 tokens of SmolLM2's tokenizer —
 * enough for the model's 8192-token context, which GPL-3 alone (7639 tokens) is not. Each file
 * is checked against its SHA-256 before use, so every machine reads the same bytes.
 * $KVB_COMMON_LICENSES replaces the directory /usr/share/common-licenses (tests use it to show
 * that a changed file is refused). */
#ifndef KVB_REAL_TEXT_H
#define KVB_REAL_TEXT_H

#include <stddef.h>
#include <stdint.h>

#define KVB_TEXT_LICENSES "debian-licenses"
#define KVB_TEXT_GPL3 "/usr/share/common-licenses/GPL-3"
#define KVB_TEXT_GPL3_SHA256 "3972dc9744f6499f0f9b2dbf76696f2ae7ad8af9b23dde66d6af86c9dfb36986"
#define KVB_TEXT_GFDL13 "/usr/share/common-licenses/GFDL-1.3"
#define KVB_TEXT_GFDL13_SHA256 "110535522396708cea37c72a802c5e7e81391139f5f7985631c93ef242b206a4"
/* SHA-256 of the whole corpus (GPL-3 then GFDL-1.3, nothing in between). */
#define KVB_TEXT_LICENSES_SHA256 "f95f5fae934eb4ac29f9ec3005fa4c80b69357ec688cd132a9407ef78d5bac19"

/* kvb_sha256_hex (SHA-256 of len bytes as 64 lowercase hex digits) lives in src/core. */
#include "sha256.h"

/* Reads a text into a malloc'd buffer (*buf, *len; the caller frees *buf): the corpus
 * KVB_TEXT_LICENSES (each file checked against its SHA-256: KVB_ENOTFOUND when a file is
 * missing, KVB_EFORMAT on a mismatch, both with a message naming the file and its hashes), or
 * else the file at that path (KVB_EIO when it cannot be read). Nothing is allocated on error. */
int kvb_text_read(const char *name, char **buf, size_t *len);

#endif

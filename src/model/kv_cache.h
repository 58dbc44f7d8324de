/* kv_cache.h — the on-disk caches of the model streams (stream_model.c): keyed by content and
 * build, written atomically, verified before they are read.
 *
 * An entry is a directory ROOT/kv2/<32 hex digits>/ holding the forward pass's .npy files and a
 * manifest, KEY: the full key (the model file's SHA-256, the text's SHA-256, the token count,
 * OpenBLAS's thread count, the forward pass's attention, kvbound's version and the build's
 * source hash, build_id.h) and each file's size. The directory's name is the key's SHA-256, so
 * another model file of the same size, another text or another build looks elsewhere; an entry
 * is built in a temporary directory and renamed into place whole. Before reading, the manifest
 * must hold exactly this key and the files their recorded sizes: a foreign, stale, truncated
 * or half-written entry is moved aside, deleted and built again, never read. (The older layout,
 * ROOT/kv/<size>-..., keyed on the model's size, is neither read nor touched: builds of kvbound
 * before this one keep using it.)
 *
 * Hashing a 250 MB model takes seconds, so its SHA-256 is remembered in ROOT/kv2/ids/, keyed by
 * the file's real path and checked against its size, modification and change times (ns), inode
 * and device: recomputed only when one of those changed (a memo is a convenience, not a proof:
 * one forged with the file's exact stat would be believed). */
#ifndef KVB_KV_CACHE_H
#define KVB_KV_CACHE_H

#include <stddef.h>

#define KVB_KV_CACHE_SUBDIR "kv2"

/* The SHA-256 of the file at path as hex, from the memo in memo_dir (created if need be) when
 * the file's size, mtime, ctime, inode and device are those recorded, else computed and recorded
 * (atomically: temporary file + rename). A memo that cannot be written only costs the next
 * run the hashing again. KVB_OK or an error naming the file. */
int kvb_file_sha256_memo(const char *path, const char *memo_dir, char hex[65]);

/* The key text of an entry: "model NAME SHA256\ntext SHA256\ntokens N\nblas_threads T\n
 * forward TAG\nkvbound VERSION SOURCEHASH\n" into key (cap bytes). KVB_OK or KVB_EINVAL when it
 * does not fit. */
int kvb_kv_cache_key(const char *model_name, const char *model_sha256, const void *text,
                     size_t len, long tokens, int blas_threads, const char *forward, char *key,
                     size_t cap);

/* The entry's directory for key under root (root/<first 32 hex digits of SHA-256(key)>). */
void kvb_kv_cache_dir(const char *root, const char *key, char *dir, size_t cap);

/* 1 when dir holds a sealed entry for exactly this key whose files[0..n) have their recorded
 * sizes; 0 otherwise (absent, another key, a missing or resized file, a malformed manifest). */
int kvb_kv_cache_valid(const char *dir, const char *key, const char *const *files, size_t n);

/* Writes the manifest (the key and every regular file's size) into the temporary directory
 * tmp, last, so a directory without one was never finished. KVB_OK or KVB_EIO. */
int kvb_kv_cache_seal(const char *tmp, const char *key);

/* Moves the entry dir out of the way (renamed to a fresh name first, so a reader never sees it
 * half-deleted) and deletes its files. Nothing when dir does not exist. */
void kvb_kv_cache_discard(const char *dir);

#endif

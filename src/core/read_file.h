/* read_file.h — bounded reads of untrusted files. Every file kvbound reads whole (a spec, a
 * .npy dump, a text, a shard's rows) goes through these: only a regular file is read (a link
 * to /dev/zero, a FIFO or a directory would never end or never be a file), and never more
 * than a stated number of bytes, with the limit named in the error. */
#ifndef KVB_READ_FILE_H
#define KVB_READ_FILE_H

#include <stddef.h>
#include <stdio.h>

/* Limits (bytes) of the files read whole. */
#define KVB_SPEC_FILE_MAX ((size_t)1 << 20)   /* a Lua spec only declares an experiment */
#define KVB_TEXT_FILE_MAX ((size_t)256 << 20) /* a text to tokenize */
#define KVB_NPY_FILE_MAX ((size_t)8 << 30)    /* a Q/K/V dump */
#define KVB_ROWS_FILE_MAX ((size_t)16 << 30)  /* a shard's rows.tsv */

/* Opens `path` for reading ("rb") into *out if it is a regular file of at most `max` bytes;
 * `what` names the file in the error. KVB_OK, or KVB_EIO (cannot open) / KVB_EINVAL (not a
 * regular file, or larger than max) with *out NULL. */
int kvb_open_regular(const char *path, size_t max, const char *what, FILE **out);

/* Reads the whole regular file `path` of at most `max` bytes into a new NUL-terminated buffer
 * (*out, freed by the caller; *len its length without the NUL, may be NULL). KVB_OK, or a
 * status as kvb_open_regular's (KVB_ENOMEM, KVB_EIO on a read error, KVB_EINVAL if it grew past
 * max while being read). Nothing is allocated on error. */
int kvb_read_file(const char *path, size_t max, const char *what, char **out, size_t *len);

#endif

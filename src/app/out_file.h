/* out_file.h — an output's temporary file, created exclusively under an unpredictable name in
 * the directory it will be renamed into, so that nothing planted there (a symbolic link named
 * like a temporary file) can make a run write outside its output directory. */
#ifndef KVB_OUT_FILE_H
#define KVB_OUT_FILE_H

#include <stdio.h>

/* Creates DIR/.NAME.tmp.XXXXXX with mkstemp (O_CREAT|O_EXCL: never an existing file, never a
 * link), mode 0666 less the umask, and opens it for writing. path (cap bytes) gets its name.
 * Returns the stream, or NULL with errno set (ENAMETOOLONG when the name does not fit). */
FILE *kvb_out_create(char *path, size_t cap, const char *dir, const char *name);

#endif

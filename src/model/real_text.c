/* real_text.c — the verified real text of the real-cache checks (real_text.h). */
#include "real_text.h"
#include "read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvb_error.h"

/* Appends the file at path to *buf (capacity *cap, length *len). */
static int append_file(const char *path, char **buf, size_t *len, size_t *cap, int *missing) {
  /* stat, not a trial open: opening a FIFO blocks until a writer comes (read_file.c) */
  struct stat sb;
  if (stat(path, &sb) != 0) {
    *missing = errno == ENOENT;
    return KVB_ERROR(*missing ? KVB_ENOTFOUND : KVB_EIO, "cannot open the text %s (%s)", path,
                     strerror(errno));
  }
  FILE *f = NULL;
  /* a regular file of at most KVB_TEXT_FILE_MAX bytes (read_file.h) */
  int st = kvb_open_regular(path, KVB_TEXT_FILE_MAX, "text", &f);
  if (st) return st;
  size_t r;
  for (;;) {
    if (*len == *cap) {
      size_t nc = *cap ? 2 * *cap : 1 << 16;
      char *nb = realloc(*buf, nc);
      if (!nb) {
        fclose(f);
        return KVB_ERROR(KVB_ENOMEM, "out of memory reading %s", path);
      }
      *buf = nb, *cap = nc;
    }
    if ((r = fread(*buf + *len, 1, *cap - *len, f)) == 0) break;
    *len += r;
    if (*len > KVB_TEXT_FILE_MAX) { /* it grew while being read */
      fclose(f);
      return KVB_ERROR(KVB_EINVAL, "text %s: more than the limit of %zu bytes", path,
                       KVB_TEXT_FILE_MAX);
    }
  }
  int err = ferror(f);
  fclose(f);
  if (err) return KVB_ERROR(KVB_EIO, "error reading the text %s", path);
  return KVB_OK;
}

int kvb_text_read(const char *name, char **out, size_t *out_len) {
  if (!name || !out || !out_len) return KVB_ERROR(KVB_ENULL, "kvb_text_read: NULL argument");
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int missing = 0, st = KVB_OK;
  if (strcmp(name, KVB_TEXT_LICENSES) == 0) {
    static const char *const base[2] = {"GPL-3", "GFDL-1.3"};
    static const char *const sums[2] = {KVB_TEXT_GPL3_SHA256, KVB_TEXT_GFDL13_SHA256};
    const char *dir = getenv("KVB_COMMON_LICENSES");
    if (!dir || !dir[0]) dir = "/usr/share/common-licenses";
    char files[2][4200];
    for (int i = 0; i < 2; i++) snprintf(files[i], sizeof files[i], "%.4000s/%s", dir, base[i]);
    for (int i = 0; i < 2 && !st; i++) {
      size_t start = len;
      st = append_file(files[i], &buf, &len, &cap, &missing);
      if (st && missing)
        st = KVB_ERROR(KVB_ENOTFOUND, "the text '%s' needs %s, which Debian's base-files package "
                       "ships on every Debian system; it is missing here (apt-get install --reinstall "
                       "base-files)", name, files[i]);
      if (!st) {
        char hex[65];
        kvb_sha256_hex(buf + start, len - start, hex);
        if (strcmp(hex, sums[i]) != 0)
          st = KVB_ERROR(KVB_EFORMAT, "the text '%s': %s has SHA-256 %s, expected %s (another "
                         "version of the file; the real-cache checks are defined on the bytes of "
                         "Debian 12's base-files)", name, files[i], hex, sums[i]);
      }
    }
  } else {
    st = append_file(name, &buf, &len, &cap, &missing);
  }
  if (st) {
    free(buf);
    return st;
  }
  *out = buf, *out_len = len;
  return KVB_OK;
}

/* read_file.c — see read_file.h. */
#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kvb_error.h"

/* kvb_open_regular with its status in *st. */
static FILE *open_regular(const char *path, size_t max, const char *what, int *st) {
  *st = KVB_OK;
  if (!path) return *st = KVB_ERROR(KVB_ENULL, "%s: path is NULL", what), NULL;
  /* O_NONBLOCK: open(2) of a FIFO without a writer blocks forever, before any fstat could
   * refuse it; opened non-blocking, it returns at once and is refused below like a device. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return *st = KVB_ERROR(KVB_EIO, "%s %s: cannot open (%s)", what, path, strerror(errno)), NULL;
  struct stat sb;
  /* fstat of the opened file: what is read is what was checked, whatever the path now names */
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return *st = KVB_ERROR(KVB_EINVAL, "%s %s: not a regular file (a device, FIFO or directory "
                           "is never read)", what, path), NULL;
  }
  FILE *f = NULL;
  int fl = fcntl(fd, F_GETFL); /* a regular file reads as before: blocking */
  if (fl == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1 || !(f = fdopen(fd, "rb"))) {
    int e = errno;
    close(fd);
    return *st = KVB_ERROR(KVB_EIO, "%s %s: cannot open (%s)", what, path, strerror(e)), NULL;
  }
  if ((unsigned long long)sb.st_size > (unsigned long long)max) {
    fclose(f);
    return *st = KVB_ERROR(KVB_EINVAL, "%s %s: %lld bytes, more than the limit of %zu", what,
                           path, (long long)sb.st_size, max), NULL;
  }
  return f;
}

int kvb_open_regular(const char *path, size_t max, const char *what, FILE **out) {
  int st;
  *out = open_regular(path, max, what, &st);
  return st;
}

int kvb_read_file(const char *path, size_t max, const char *what, char **out, size_t *len) {
  if (!out) return KVB_ERROR(KVB_ENULL, "%s: output is NULL", what);
  *out = NULL;
  int st;
  FILE *f = open_regular(path, max, what, &st);
  if (!f) return st;
  struct stat sb;
  size_t cap = fstat(fileno(f), &sb) == 0 && sb.st_size > 0 ? (size_t)sb.st_size + 1 : 4096, n = 0;
  char *b = malloc(cap);
  st = b ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "%s %s: out of memory", what, path);
  while (!st) {
    size_t r = fread(b + n, 1, cap - 1 - n, f);
    n += r;
    if (n + 1 < cap) { /* a short read: the end, or an error */
      if (ferror(f)) st = KVB_ERROR(KVB_EIO, "%s %s: read error", what, path);
      break;
    }
    int c = fgetc(f); /* the buffer is full: is there more (the file grew while being read)? */
    if (c == EOF) {
      if (ferror(f)) st = KVB_ERROR(KVB_EIO, "%s %s: read error", what, path);
      break;
    }
    size_t nc = cap * 2 > max + 1 ? max + 1 : cap * 2;
    char *nb = n >= max ? NULL : realloc(b, nc);
    if (!nb) {
      st = n >= max ? KVB_ERROR(KVB_EINVAL, "%s %s: more than the limit of %zu bytes", what, path, max)
                    : KVB_ERROR(KVB_ENOMEM, "%s %s: out of memory", what, path);
      break;
    }
    b = nb, cap = nc;
    b[n++] = (char)c;
  }
  fclose(f);
  if (st) {
    free(b);
    return st;
  }
  b[n] = '\0';
  *out = b;
  if (len) *len = n;
  return KVB_OK;
}

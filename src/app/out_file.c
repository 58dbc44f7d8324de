/* out_file.c — see out_file.h. */
#include "out_file.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *kvb_out_create(char *path, size_t cap, const char *dir, const char *name) {
  int n = snprintf(path, cap, "%s/.%s.tmp.XXXXXX", dir, name);
  if (n < 0 || (size_t)n >= cap) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  /* mkstemp's 0600 would hide results from other users; the umask decides, as for fopen */
  mode_t m = umask(0);
  umask(m);
  FILE *f = fchmod(fd, 0666 & ~m) == 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    int e = errno;
    close(fd);
    unlink(path);
    errno = e;
  }
  return f;
}

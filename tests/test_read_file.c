/* test_read_file.c — bounded reads of untrusted files (src/core/read_file.h): exactly max bytes
 * are read, max + 1 are refused with the limit named, a device, a directory or a FIFO is never
 * read (a FIFO without a writer used to block the open forever: checked in a child with a
 * 10 s alarm), a missing file is KVB_EIO, and nothing is allocated on an error. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kvbound.h"
#include "read_file.h"
#include "unit.h"

/* Runs both readers on the FIFO at path in a child that an alarm kills after 10 s; "hung", or
 * the child's verdict. */
static const char *fifo_verdict(const char *path) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    char *b = (char *)1;
    FILE *g = (FILE *)1;
    int s1 = kvb_read_file(path, 1 << 20, "test", &b, NULL);
    int ok1 = s1 == KVB_EINVAL && b == NULL && strstr(kvb_strerror_last(), "not a regular file");
    int s2 = kvb_open_regular(path, 1 << 20, "test", &g);
    _exit(ok1 && s2 == KVB_EINVAL && g == NULL ? 0 : 1);
  }
  int ws = 0;
  if (pid < 0 || waitpid(pid, &ws, 0) != pid) return "fork failed";
  if (WIFSIGNALED(ws)) return WTERMSIG(ws) == SIGALRM ? "hung (killed after 10 s)" : "crashed";
  return WEXITSTATUS(ws) == 0 ? "refused" : "wrong status or message";
}

int main(void) {
  char dir[] = "/tmp/kvb-read-XXXXXX", path[128];
  if (!mkdtemp(dir)) return 1;
  snprintf(path, sizeof path, "%s/ten", dir);
  FILE *f = fopen(path, "w");
  fputs("0123456789", f);
  fclose(f);
  char *b = (char *)1;
  size_t n = 0;
  int st = kvb_read_file(path, 10, "test", &b, &n);
  CHECK(st == KVB_OK && b && n == 10 && strcmp(b, "0123456789") == 0,
        "read_file: a file of exactly max bytes is read whole and NUL-terminated", "st %d n %zu", st, n);
  free(b);
  b = (char *)1;
  st = kvb_read_file(path, 9, "test", &b, &n);
  CHECK(st == KVB_EINVAL && b == NULL && strstr(kvb_strerror_last(), "more than the limit of 9"),
        "read_file: one byte over max is refused, naming the limit", "st %d: %s", st, kvb_strerror_last());
  st = kvb_read_file("/dev/zero", 1 << 20, "test", &b, &n);
  CHECK(st == KVB_EINVAL && b == NULL && strstr(kvb_strerror_last(), "not a regular file"),
        "read_file: a device (/dev/zero) is never read", "st %d: %s", st, kvb_strerror_last());
  st = kvb_read_file(dir, 1 << 20, "test", &b, &n);
  CHECK(st == KVB_EINVAL && b == NULL, "read_file: a directory is refused", "st %d", st);
  snprintf(path, sizeof path, "%s/absent", dir);
  st = kvb_read_file(path, 1 << 20, "test", &b, &n);
  CHECK(st == KVB_EIO && b == NULL && strstr(kvb_strerror_last(), "cannot open"),
        "read_file: a missing file is KVB_EIO", "st %d: %s", st, kvb_strerror_last());
  FILE *g = (FILE *)1;
  st = kvb_open_regular("/dev/null", 1 << 20, "test", &g);
  CHECK(st == KVB_EINVAL && g == NULL, "open_regular: /dev/null is not a regular file", "st %d", st);
  snprintf(path, sizeof path, "%s/fifo", dir);
  if (mkfifo(path, 0600) == 0) {
    const char *v = fifo_verdict(path);
    CHECK(!strcmp(v, "refused"), "read_file: a FIFO without a writer is refused at once, never waited on",
          "%s", v);
    unlink(path);
  } else {
    printf("SKIP read_file: a FIFO: mkfifo failed\n");
  }
  snprintf(path, sizeof path, "%s/ten", dir);
  unlink(path);
  rmdir(dir);
  UNIT_EXIT();
}

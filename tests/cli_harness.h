/* cli_harness.h — what the tests of the kvbound command share: the command's path (next to the
 * test binary's directory: B/tests/test_x → B/kvbound), a private temporary directory, running
 * a shell command with its output captured, and small file helpers. */
#ifndef KVB_CLI_HARNESS_H
#define KVB_CLI_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

static char kvbound[512], tmp[64];

/* Runs cmd with stderr folded into stdout; its output in out; returns the exit status. */
static int sh(const char *cmd, char *out, size_t cap) {
  char full[4096];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  size_t n = fread(out, 1, cap - 1, p);
  out[n] = '\0';
  int ws = pclose(p);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* The whole file, NUL-terminated (caller frees), or NULL. */
static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (b) {
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
  }
  fclose(f);
  return b;
}

/* Sets kvbound from argv0 and makes tmp from `pattern` ("/tmp/kvb-x-XXXXXX"); 0 when both
 * work, else a FAIL line (tag names the test file) and -1. */
static int cli_harness_init(const char *argv0, const char *pattern, const char *tag) {
  snprintf(kvbound, sizeof kvbound, "%s", argv0);
  char *sl = strrchr(kvbound, '/');
  if (sl) *sl = '\0';
  sl = strrchr(kvbound, '/');
  if (sl)
    strcpy(sl + 1, "kvbound");
  else
    snprintf(kvbound, sizeof kvbound, "../kvbound");
  snprintf(tmp, sizeof tmp, "%s", pattern);
  if (!mkdtemp(tmp)) {
    printf("FAIL %s: temp dir: mkdtemp failed\n", tag);
    return -1;
  }
  if (access(kvbound, X_OK) != 0) {
    printf("FAIL %s: kvbound binary present: %s not executable\n", tag, kvbound);
    return -1;
  }
  return 0;
}

#endif

/* golden_file.h — what the model tests that compare with committed golden files (test_model.c:
 * SmolLM2, test_model_gemma3.c: Gemma 3; files under tests/golden/) share: a SKIP line, reading
 * a whole file, and one hex digit. */
#ifndef KVB_TESTS_GOLDEN_FILE_H
#define KVB_TESTS_GOLDEN_FILE_H

#include <stdio.h>
#include <stdlib.h>

static void skip(const char *name, const char *why) {
  printf("SKIP %s: %s\n", name, why);
  fflush(stdout);
}

/* The whole file, NUL-terminated (its length in *len); NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
  char *b = n < 0 || fseek(f, 0, SEEK_SET) ? NULL : malloc((size_t)n + 1);
  if (b) {
    *len = fread(b, 1, (size_t)n, f);
    b[*len] = '\0';
  }
  fclose(f);
  return b;
}

static int hexval(int c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }

#endif

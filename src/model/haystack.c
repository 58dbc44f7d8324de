/* haystack.c — the license texts of the long-context tasks, checked and split into tokenized
 * sentences (haystack.h). */
#include "haystack.h"
#include "read_file.h"
#include "real_text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kvb_error.h"

/* SHA-256 of Debian 12's base-files 12.4 copies (sha256sum, 2026-11). */
const kvb_haystack_text kvb_haystack_texts[] = {
    {"GPL-2", "base-files", "8177f97513213526df2cf6184d8ff986c675afb514d4e68a404010521b880643"},
    {"GPL-3", "base-files", KVB_TEXT_GPL3_SHA256},
    {"LGPL-2.1", "base-files", "dc626520dcd53a22f727af3ee42c770e56c97a64fe3adb063799d8ab032fe551"},
    {"Apache-2.0", "base-files", "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"},
    {"MPL-2.0", "base-files", "fab3dd6bdab226f1c08630b1dd917e11fcb4ec5e1e020e2c16f83a0a13863e85"},
    {"GFDL-1.3", "base-files", KVB_TEXT_GFDL13_SHA256},
    {"Artistic", "base-files", "b7fd9b73ea99602016a326e0b62e6646060d18febdd065ceca8bb482208c3d88"},
};
const size_t kvb_haystack_n_texts = sizeof kvb_haystack_texts / sizeof *kvb_haystack_texts;

int kvb_haystack_read(size_t i, char **buf, size_t *len) {
  if (!buf || !len) return KVB_ERROR(KVB_ENULL, "kvb_haystack_read: NULL argument");
  *buf = NULL, *len = 0;
  if (i >= kvb_haystack_n_texts)
    return KVB_ERROR(KVB_EINVAL, "haystack text %zu: there are %zu", i, kvb_haystack_n_texts);
  const kvb_haystack_text *t = &kvb_haystack_texts[i];
  const char *dir = getenv("KVB_COMMON_LICENSES");
  if (!dir || !dir[0]) dir = "/usr/share/common-licenses";
  char path[4200];
  snprintf(path, sizeof path, "%.4000s/%s", dir, t->name);
  if (access(path, F_OK) != 0)
    return KVB_ERROR(KVB_ENOTFOUND, "the task haystack needs %s, which Debian's %s package ships "
                     "on every Debian system; it is missing here (apt-get install --reinstall %s)",
                     path, t->package, t->package);
  char *b = NULL;
  size_t n = 0;
  int st = kvb_read_file(path, KVB_TEXT_FILE_MAX, "haystack text", &b, &n);
  if (st) return st;
  char hex[65];
  kvb_sha256_hex(b, n, hex);
  if (strcmp(hex, t->sha256) != 0) {
    free(b);
    return KVB_ERROR(KVB_EFORMAT, "the task haystack text %s (package %s) has SHA-256 %s, expected "
                     "%s (another version of the file; the tasks are defined on the bytes of "
                     "Debian 12's base-files)", path, t->package, hex, t->sha256);
  }
  *buf = b, *len = n;
  return KVB_OK;
}

static int is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f'; }

/* Sentence starts: after [.?!:] followed by white space, and at a line break that begins a
 * blank line; the white space belongs to the sentence it precedes. */
static size_t split(const char *b, size_t n, size_t *start) {
  size_t k = 0;
  if (n) start[k++] = 0;
  for (size_t i = 1; i < n; i++) {
    int cut = 0;
    if (is_space(b[i]) && strchr(".?!:", b[i - 1])) cut = 1;
    if (b[i] == '\n' && b[i - 1] != '\n') { /* a line break followed by a blank line */
      size_t j = i + 1;
      while (j < n && (b[j] == ' ' || b[j] == '\t')) j++;
      if (j < n && b[j] == '\n') cut = 1;
    }
    if (cut && start[k - 1] != i) start[k++] = i;
  }
  return k;
}

int kvb_haystack_load(const kvb_lm *lm, size_t i, kvb_haystack *out) {
  if (!lm || !out) return KVB_ERROR(KVB_ENULL, "kvb_haystack_load: NULL argument");
  memset(out, 0, sizeof *out);
  char *b = NULL;
  size_t n = 0;
  int st = kvb_haystack_read(i, &b, &n);
  if (st) return st;
  size_t *start = malloc((n + 1) * sizeof *start), cap = n + 64, used = 0;
  size_t *off = malloc((n + 2) * sizeof *off);
  int32_t *ids = malloc(cap * sizeof *ids);
  if (!start || !off || !ids) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  size_t ns = st ? 0 : split(b, n, start);
  if (!st) start[ns] = n;
  for (size_t s = 0; s < ns && !st; s++) {
    int32_t *t = NULL;
    size_t nt = 0;
    st = kvb_lm_encode(lm, b + start[s], start[s + 1] - start[s], &t, &nt);
    if (!st && used + nt > cap) { /* more tokens than bytes cannot happen; guard anyway */
      int32_t *g = realloc(ids, (used + nt) * 2 * sizeof *ids);
      if (!g) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
      else ids = g, cap = (used + nt) * 2;
    }
    if (!st) {
      off[s] = used;
      memcpy(ids + used, t, nt * sizeof *t);
      used += nt;
    }
    free(t);
  }
  free(start);
  if (st) {
    free(off), free(ids), free(b);
    return st;
  }
  off[ns] = used;
  out->text = &kvb_haystack_texts[i];
  out->n_sent = ns, out->off = off, out->ids = ids, out->bytes = b, out->len = n;
  return KVB_OK;
}

void kvb_haystack_free(kvb_haystack *h) {
  if (!h) return;
  free(h->off), free(h->ids), free(h->bytes);
  memset(h, 0, sizeof *h);
}

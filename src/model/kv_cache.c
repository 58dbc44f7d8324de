/* kv_cache.c — see kv_cache.h. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "kv_cache.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_id.h"
#include "kvb_error.h"
#include "read_file.h"
#include "sha256.h"

#define MANIFEST "KEY"
#define MANIFEST_HEAD "kvbound kv cache 2\n"
#define MANIFEST_MAX ((size_t)64 << 10)

/* The memo's text for a file's stat: what must be unchanged for the recorded hash to hold. */
static void stat_line(const struct stat *sb, char *buf, size_t cap) {
  /* ctime too: no program can set it, so even a same-size rewrite that restores the mtime
   * (touch -d) is seen */
  snprintf(buf, cap, "size %lld mtime %lld.%09ld ctime %lld.%09ld inode %llu device %llu\n",
           (long long)sb->st_size, (long long)sb->st_mtim.tv_sec, (long)sb->st_mtim.tv_nsec,
           (long long)sb->st_ctim.tv_sec, (long)sb->st_ctim.tv_nsec,
           (unsigned long long)sb->st_ino, (unsigned long long)sb->st_dev);
}

static int write_atomically(const char *dir, const char *path, const char *text) {
  char tmp[PATH_MAX + 32];
  snprintf(tmp, sizeof tmp, "%s/.tmpXXXXXX", dir);
  int fd = mkstemp(tmp);
  if (fd < 0) return KVB_EIO;
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(tmp);
    return KVB_EIO;
  }
  int bad = fputs(text, f) < 0;
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    return KVB_EIO;
  }
  return KVB_OK;
}

int kvb_file_sha256_memo(const char *path, const char *memo_dir, char hex[65]) {
  if (!path || !memo_dir || !hex) return KVB_ERROR(KVB_ENULL, "file hash: NULL argument");
  char real[PATH_MAX];
  struct stat sb;
  if (!realpath(path, real) || stat(real, &sb) != 0)
    return KVB_ERROR(KVB_EIO, "%s: cannot stat (%s)", path, strerror(errno));
  char id[65], memo[PATH_MAX + 96], want[256];
  kvb_sha256_hex(real, strlen(real), id);
  snprintf(memo, sizeof memo, "%s/%.16s.sha256", memo_dir, id);
  stat_line(&sb, want, sizeof want);
  /* the memo: "kvbound file sha256 1\n", the path, the stat line, "sha256 HEX\n" */
  char *old = NULL;
  size_t len = 0;
  if (kvb_read_file(memo, 8192, "hash memo", &old, &len) == KVB_OK) {
    char head[PATH_MAX + 400];
    snprintf(head, sizeof head, "kvbound file sha256 1\npath %s\n%ssha256 ", real, want);
    size_t hl = strlen(head);
    int ok = len == hl + 65 && strncmp(old, head, hl) == 0 && old[hl + 64] == '\n';
    for (size_t i = 0; ok && i < 64; i++) {
      char c = old[hl + i];
      ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    }
    if (ok) {
      memcpy(hex, old + hl, 64);
      hex[64] = '\0';
      free(old);
      return KVB_OK;
    }
    free(old);
  }
  kvb_error_clear();
  int st = kvb_sha256_file(real, hex, NULL);
  if (st) return st;
  /* recorded only if the file did not change while it was read */
  struct stat after;
  char now[256];
  if (stat(real, &after) == 0) {
    stat_line(&after, now, sizeof now);
    if (strcmp(now, want) == 0 && (mkdir(memo_dir, 0777) == 0 || errno == EEXIST)) {
      char text[PATH_MAX + 512];
      snprintf(text, sizeof text, "kvbound file sha256 1\npath %s\n%ssha256 %s\n", real, want, hex);
      write_atomically(memo_dir, memo, text); /* a failure costs only the next run's hashing */
    }
  }
  return KVB_OK;
}

int kvb_kv_cache_key(const char *model_name, const char *model_sha256, const void *text,
                     size_t len, long tokens, int blas_threads, const char *forward, char *key,
                     size_t cap) {
  char th[65];
  kvb_sha256_hex(text, len, th);
  int k = snprintf(key, cap, "model %s %s\ntext %s\ntokens %ld\nblas_threads %d\nforward %s\n"
                   "kvbound %s %s\n", model_name, model_sha256, th, tokens, blas_threads, forward,
                   kvb_build_version(), kvb_build_source_hash());
  if (k < 0 || (size_t)k >= cap) return KVB_ERROR(KVB_EINVAL, "model stream: cache key too long");
  return KVB_OK;
}

void kvb_kv_cache_dir(const char *root, const char *key, char *dir, size_t cap) {
  char h[65];
  kvb_sha256_hex(key, strlen(key), h);
  snprintf(dir, cap, "%s/%.32s", root, h);
}

int kvb_kv_cache_valid(const char *dir, const char *key, const char *const *files, size_t n) {
  char path[PATH_MAX + 64];
  snprintf(path, sizeof path, "%s/%s", dir, MANIFEST);
  char *m = NULL;
  size_t len = 0;
  if (kvb_read_file(path, MANIFEST_MAX, "cache manifest", &m, &len) != KVB_OK) {
    kvb_error_clear();
    return 0;
  }
  size_t hl = strlen(MANIFEST_HEAD), kl = strlen(key);
  int ok = len > hl + kl && memcmp(m, MANIFEST_HEAD, hl) == 0 && memcmp(m + hl, key, kl) == 0 &&
           strncmp(m + hl + kl, "end key\n", 8) == 0;
  for (size_t i = 0; ok && i < n; i++) {
    /* "file NAME SIZE\n" after the key, and the file that size now */
    const char *base = strrchr(files[i], '/');
    base = base ? base + 1 : files[i];
    char pat[512];
    snprintf(pat, sizeof pat, "\nfile %s ", base);
    const char *at = strstr(m + hl + kl, pat);
    char *end;
    unsigned long long want = at ? strtoull(at + strlen(pat), &end, 10) : 0;
    struct stat sb;
    ok = at && *end == '\n' && stat(files[i], &sb) == 0 && S_ISREG(sb.st_mode) &&
         (unsigned long long)sb.st_size == want;
  }
  free(m);
  return ok;
}

int kvb_kv_cache_seal(const char *tmp, const char *key) {
  DIR *d = opendir(tmp);
  if (!d) return KVB_ERROR(KVB_EIO, "model stream: cannot list %s (%s)", tmp, strerror(errno));
  size_t cap = strlen(MANIFEST_HEAD) + strlen(key) + 16, o = 0;
  char *text = malloc(cap);
  int st = text ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "model stream: out of memory");
  if (text) o = (size_t)snprintf(text, cap, "%s%send key\n", MANIFEST_HEAD, key);
  struct dirent *e;
  while (!st && (e = readdir(d))) {
    char p[PATH_MAX + 300];
    struct stat sb;
    snprintf(p, sizeof p, "%s/%s", tmp, e->d_name);
    if (e->d_name[0] == '.' || stat(p, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    size_t need = o + strlen(e->d_name) + 40;
    if (need > cap) {
      char *g = realloc(text, 2 * need);
      if (!g) {
        st = KVB_ERROR(KVB_ENOMEM, "model stream: out of memory");
        break;
      }
      text = g, cap = 2 * need;
    }
    o += (size_t)snprintf(text + o, cap - o, "file %s %lld\n", e->d_name, (long long)sb.st_size);
  }
  closedir(d);
  if (!st) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", tmp, MANIFEST);
    if (write_atomically(tmp, path, text))
      st = KVB_ERROR(KVB_EIO, "model stream: cannot write %s", path);
  }
  free(text);
  return st;
}

void kvb_kv_cache_discard(const char *dir) {
  struct stat sb;
  if (lstat(dir, &sb) != 0) return;
  char aside[PATH_MAX + 32];
  snprintf(aside, sizeof aside, "%s.staleXXXXXX", dir);
  /* an empty directory of a fresh name, replaced by the entry (rename over an empty directory) */
  if (!S_ISDIR(sb.st_mode)) {
    unlink(dir);
    return;
  }
  if (!mkdtemp(aside) || rename(dir, aside) != 0) {
    rmdir(aside);
    return; /* another process moved it first */
  }
  DIR *d = opendir(aside);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char p[PATH_MAX + 300];
    snprintf(p, sizeof p, "%s/%s", aside, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(aside);
}

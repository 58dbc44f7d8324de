/* runner_stage.c — the output directory: preparing and locking it, and staging output files
 * that are committed together (runner_stage.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "runner_stage.h"
#include "runner.h"

#include "out_file.h"
#include "read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *runner_stage_open(runner_staged *sg, const char *dir, const char *name) {
  if (sg->n == KVB_RUN_OUTPUTS) return NULL;
  snprintf(sg->final[sg->n], sizeof sg->final[0], "%s/%s", dir, name);
  FILE *f = kvb_out_create(sg->tmp[sg->n], sizeof sg->tmp[0], dir, name);
  if (f) sg->n++;
  else KVB_ERROR(KVB_EIO, "%s/.%s.tmp.*: cannot create (%s)", dir, name, strerror(errno));
  return f;
}

/* Flushes to disk and closes; a write error (disk full) is reported, not hidden. */
int runner_stage_close(FILE *f, const char *what) {
  int bad = fflush(f) != 0;
  bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
  bad |= fclose(f) != 0;
  return bad ? KVB_ERROR(KVB_EIO, "%s: write error (%s)", what, strerror(errno)) : KVB_OK;
}

void runner_stage_discard(runner_staged *sg) {
  for (size_t i = 0; i < sg->n; i++) unlink(sg->tmp[i]);
  sg->n = 0;
}

/* Removes the outputs of the run that DIR held before (its plot files, listed in its
 * plots.tsv, would otherwise sit beside the new results), meta.json first so that the
 * directory never claims a run that is half replaced. */
static void clear_previous(const char *dir) {
  char path[3400], line[2048];
  snprintf(path, sizeof path, "%s/meta.json", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/plots.tsv", dir);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = '\0';
    int ok = line[0] != '\0' && line[0] != '.';
    for (const char *c = line; *c; c++) ok &= strchr("/\\", *c) == NULL;
    static const char *const ext[] = {"png", "svg", "dat", "gp"};
    for (int x = 0; ok && x < 4; x++) {
      snprintf(path, sizeof path, "%s/%s.%s", dir, line, ext[x]);
      unlink(path);
    }
  }
  if (f) fclose(f);
}

/* Renames every staged file into place, the last one staged (meta.json) last. */
int runner_stage_commit(runner_staged *sg, const char *dir) {
  clear_previous(dir);
  for (size_t i = 0; i < sg->n; i++)
    if (rename(sg->tmp[i], sg->final[i]) != 0) {
      int err = errno;
      for (size_t k = i; k < sg->n; k++) unlink(sg->tmp[k]);
      return KVB_ERROR(KVB_EIO, "%s: cannot rename into place (%s)", sg->final[i], strerror(err));
    }
  sg->n = 0;
  return KVB_OK;
}

int runner_mkdir_p(const char *dir) {
  char buf[1024];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
    return KVB_ERROR(KVB_EINVAL, "output directory name too long");
  for (char *c = buf + 1; *c; c++) {
    if (*c != '/') continue;
    *c = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return KVB_ERROR(KVB_EIO, "%s: cannot create directory (%s)", buf, strerror(errno));
    *c = '/';
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST)
    return KVB_ERROR(KVB_EIO, "%s: cannot create directory (%s)", buf, strerror(errno));
  return KVB_OK;
}

/* Reads string field `key` of a meta.json or shard.json (runner_output.c escapes) into buf. */
int runner_meta_field(const char *json, const char *key, char *buf, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": \"", key);
  const char *p = strstr(json, pat);
  if (!p || cap == 0) return -1;
  p += strlen(pat);
  size_t n = 0;
  for (; *p && *p != '"' && n + 1 < cap; p++) {
    if (*p == '\\' && p[1]) p++;
    buf[n++] = *p;
  }
  buf[n] = '\0';
  return 0;
}

/* A small metadata file (meta.json, shard.json, FAILED) whole, or NULL when it is absent, not
 * a regular file or larger than max (read_file.h). */
char *runner_slurp_small(const char *path, size_t max) {
  char *b = NULL;
  return kvb_read_file(path, max, "metadata", &b, NULL) ? NULL : b;
}

/* A directory path every buffer of the runner holds with its file names. */
int runner_dir_fits(const char *what, const char *dir) {
  size_t n = strlen(dir);
  return n > KVB_RUN_DIR_MAX ? KVB_ERROR(KVB_EINVAL, "%s: the path is %zu bytes long; the limit is "
                                         "%d", what, n, KVB_RUN_DIR_MAX)
                             : KVB_OK;
}

/* One writer per output directory: an advisory lock (flock) on the directory itself, taken
 * when the directory is prepared and held until the process ends or prepares another, so a
 * second run, shard or merge into the same directory stops with a clear error before any
 * trial instead of replacing the first one's results or plots as both finish. */
static int out_lock_fd = -1;

static int lock_out_dir(const char *dir) {
  if (out_lock_fd >= 0) close(out_lock_fd), out_lock_fd = -1;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return KVB_ERROR(KVB_EIO, "--out %s: cannot open (%s)", dir, strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    return err == EWOULDBLOCK
               ? KVB_ERROR(KVB_ESTATE, "--out %s is being written by another kvbound run, shard "
                           "or merge; wait for it to end or choose another --out", dir)
               : KVB_ERROR(KVB_EIO, "--out %s: cannot lock (%s)", dir, strerror(err));
  }
  out_lock_fd = fd;
  return KVB_OK;
}

int kvb_experiment_prepare_out(const kvb_experiment *e, const char *dir, int force) {
  if (!e || !dir) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  if (runner_dir_fits("--out", dir)) return KVB_EINVAL;
  struct stat sb;
  if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
    return KVB_ERROR(KVB_EINVAL, "--out %s is a file, not a directory", dir);
  int st = runner_mkdir_p(dir);
  if (st) return st;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return KVB_ERROR(KVB_EINVAL, "--out %s is not a directory", dir);
  if (access(dir, W_OK | X_OK) != 0)
    return KVB_ERROR(KVB_EIO, "--out %s is not writable (%s)", dir, strerror(errno));
  if ((st = lock_out_dir(dir)) != KVB_OK) return st;
  char path[1200];
  snprintf(path, sizeof path, "%s/meta.json", dir);
  char *meta = runner_slurp_small(path, 1 << 20);
  if (!meta) return KVB_OK; /* empty, new, or holding no complete run */
  /* The same spec = the same name and the same spec file; its new results replace the old. */
  char name[KVB_LABEL_MAX + 16] = "", old_real[4096] = "", real[4096];
  runner_meta_field(meta, "name", name, sizeof name);
  if (runner_meta_field(meta, "spec_realpath", old_real, sizeof old_real) != 0)
    runner_meta_field(meta, "spec_path", old_real, sizeof old_real);
  free(meta);
  const char *cur = realpath(e->spec_path, real) ? real : e->spec_path;
  int same = strcmp(name, e->name) == 0 && (!old_real[0] || strcmp(old_real, cur) == 0);
  if (!same && !force)
    return KVB_ERROR(KVB_EINVAL, "--out %s holds the results of another spec ('%s', %s); choose "
                     "another --out, or add --force to replace them (their plots are removed)",
                     dir, name, old_real[0] ? old_real : "unknown file");
  return KVB_OK;
}

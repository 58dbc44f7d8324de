/* runner_shard.c — shards and their merge (runner.h): a shard's rows.tsv and the digest its
 * shard.json commits to, the FAILED marker, and the merge that checks and joins the shards. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "runner_run.h"
#include "runner_output.h"
#include "runner_stage.h"
#include "runner_units.h"

#include "lua_spec.h"
#include "out_file.h"
#include "plugin.h"
#include "read_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

size_t kvb_shard_units(size_t units, size_t shard, size_t nshards) {
  return nshards == 0 || shard >= units ? 0 : (units - 1 - shard) / nshards + 1;
}

/* A row's message in rows.tsv: "-" for none, else "=" and the text with \ tab and line breaks
 * escaped, so that the merge restores it byte for byte. */
static void tsv_msg(FILE *f, const char *m) {
  if (!m) {
    fputc('-', f);
    return;
  }
  fputc('=', f);
  for (; *m; m++) {
    if (*m == '\\') fputs("\\\\", f);
    else if (*m == '\t') fputs("\\t", f);
    else if (*m == '\n') fputs("\\n", f);
    else if (*m == '\r') fputs("\\r", f);
    else fputc(*m, f);
  }
}

/* rows.tsv: every row of the shard's units, exactly: the measures as C99 hexadecimal floats
 * (%a), which strtod reads back to the same double. */
#define KVB_SHARD_ROWS_HEADER "# kvbound shard rows 1: unit stream method j status 25 x %a msg"
/* The digest a shard's shard.json commits to: FNV-1a 64 over the run's identity (spec hash,
 * seed, shard, shard count, units) and then every byte of rows.tsv. The merge recomputes it,
 * so edited, truncated, duplicated or borrowed rows (another seed's, another spec's) and a
 * forged identity field are refused. It guards against corruption and mix-ups, not against
 * someone who rewrites rows and digest together (README, shards and merge). */
static uint64_t digest_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
  return h;
}

static uint64_t digest_init(const char *spec_hash, unsigned long long seed, unsigned long long shard,
                            unsigned long long nshards, unsigned long long units) {
  char id[256];
  int n = snprintf(id, sizeof id, "kvbound shard rows v1\n%s\n%llu\n%llu\n%llu\n%llu\n",
                   spec_hash, seed, shard, nshards, units);
  return digest_bytes(1469598103934665603ULL, id, (size_t)n);
}

/* The digest of the file at path after h (rows.tsv as staged). */
static int digest_file(const char *path, uint64_t *h) {
  FILE *f = fopen(path, "rb");
  if (!f) return KVB_ERROR(KVB_EIO, "%s: cannot read back (%s)", path, strerror(errno));
  unsigned char buf[1 << 16];
  size_t r;
  while ((r = fread(buf, 1, sizeof buf, f)) > 0) *h = digest_bytes(*h, buf, r);
  int bad = ferror(f);
  fclose(f);
  return bad ? KVB_ERROR(KVB_EIO, "%s: read error", path) : KVB_OK;
}

static int write_shard_rows(FILE *f, const unit_result *res, size_t units) {
  fprintf(f, "%s\n", KVB_SHARD_ROWS_HEADER);
  for (size_t u = 0; u < units; u++)
    for (size_t i = 0; i < res[u].nrows; i++) {
      const row *w = &res[u].rows[i];
      fprintf(f, "%zu\t%zu\t%zu\t%zu\t%d", u, w->stream, w->method, w->j, w->status);
      for (size_t c = 0; c < KVB_RUN_NCOLS; c++) {
        if (isnan(w->v[c])) fputs("\tnan", f);
        else fprintf(f, "\t%a", w->v[c]);
      }
      fputc('\t', f);
      tsv_msg(f, w->status ? w->msg : NULL);
      fputc('\n', f);
    }
  return runner_stage_close(f, "rows.tsv");
}

/* The identities of the plugins the spec's methods come from (plugin.h, kvb_plugin_identity):
 * "I:SHA256:SIZE:ABI" per method I from a plugin, comma-separated ("" when every method is
 * kvbound's own). shard.json records it; the merge requires it equal across the shards and
 * equal to the merging process's own (the plugins of its --plugin), so shards computed with two
 * different files that register one name, or merged with a third, are refused. */
static void plugin_identities(const kvb_experiment *e, char *buf, size_t cap, int paths) {
  size_t o = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < e->nmethods; i++) {
    const kvb_method_type *t = kvb_method_lookup(e->methods[i].type);
    kvb_plugin_identity id;
    if (t && kvb_plugin_identity_of(t, &id) == KVB_OK) {
      if (paths) runner_app(buf, cap, &o, "%s%zu:%s", o ? "," : "", i, id.path);
      else runner_app(buf, cap, &o, "%s%zu:%s:%llu:%u", o ? "," : "", i, id.sha256, id.size,
                      (unsigned)id.abi_version);
    }
  }
}

static int write_shard_meta(const kvb_experiment *e, FILE *f, size_t shard, size_t nshards,
                            size_t units, size_t count, size_t rows, size_t failed, int jobs,
                            double wall, uint64_t digest) {
  runner_json_spec(f, e, NULL);
  char ids[4096];
  plugin_identities(e, ids, sizeof ids, 0);
  fprintf(f, ",\n  \"plugin_identities\": \"%s\",\n  \"plugin_paths\": ", ids);
  plugin_identities(e, ids, sizeof ids, 1); /* where they were (a message's hint; not compared) */
  fputc('"', f);
  for (const char *c = ids; *c; c++) {
    if (*c == '"' || *c == '\\') fputc('\\', f);
    fputc((unsigned char)*c < 0x20 ? '?' : *c, f);
  }
  fputc('"', f);
  fprintf(f, ",\n  \"seed\": \"%llu\",\n  \"shard\": \"%zu\",\n"
             "  \"nshards\": \"%zu\",\n  \"assignment\": \"unit u = point*trials + trial runs in "
             "shard u mod nshards\",\n  \"units_total\": \"%zu\",\n  \"units\": \"%zu\",\n"
             "  \"rows\": \"%zu\",\n  \"failed_rows\": \"%zu\",\n  \"jobs\": \"%d\",\n"
             "  \"wall_seconds\": \"%.3f\",\n  \"rows_digest\": \"%016llx\"\n}\n",
          (unsigned long long)e->seed, shard, nshards, units, count, rows, failed, jobs, wall,
          (unsigned long long)digest);
  return runner_stage_close(f, "shard.json");
}

/* The failure marker of a shard: DIR/FAILED says which shard and why; the merge reports it. */
static void shard_mark_failed(const char *dir, size_t shard, size_t nshards, const char *why) {
  char path[1200], tmp[1200];
  snprintf(path, sizeof path, "%s/FAILED", dir);
  FILE *f = kvb_out_create(tmp, sizeof tmp, dir, "FAILED");
  if (!f) return;
  fprintf(f, "shard %zu/%zu failed: %s\n", shard, nshards, why);
  if (fclose(f) != 0 || rename(tmp, path) != 0) unlink(tmp);
}

int kvb_experiment_prepare_shard_out(const kvb_experiment *e, const char *dir, size_t shard,
                                     size_t nshards, int force) {
  if (!e || !dir) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  int st = kvb_experiment_prepare_out(e, dir, force); /* the same checks; meta.json's spec */
  if (st) return st;
  char path[1200];
  snprintf(path, sizeof path, "%s/shard.json", dir);
  char *meta = runner_slurp_small(path, 1 << 20);
  if (!meta) return KVB_OK;
  char name[KVB_LABEL_MAX + 16] = "", old_real[4096] = "", real[4096], sh[32] = "", nsh[32] = "";
  runner_meta_field(meta, "name", name, sizeof name);
  runner_meta_field(meta, "spec_realpath", old_real, sizeof old_real);
  runner_meta_field(meta, "shard", sh, sizeof sh);
  runner_meta_field(meta, "nshards", nsh, sizeof nsh);
  free(meta);
  const char *cur = realpath(e->spec_path, real) ? real : e->spec_path;
  char want[64];
  snprintf(want, sizeof want, "%zu/%zu", shard, nshards);
  char have[80];
  snprintf(have, sizeof have, "%s/%s", sh, nsh);
  if (!force && (strcmp(name, e->name) || strcmp(old_real, cur) || strcmp(have, want)))
    return KVB_ERROR(KVB_EINVAL, "--out %s holds shard %s of another run ('%s', %s), not shard "
                     "%s of this spec; choose another --out, or add --force to replace it",
                     dir, have, name, old_real, want);
  return KVB_OK;
}

int kvb_experiment_run_shard(const kvb_experiment *e, const char *dir, size_t shard,
                             size_t nshards, int jobs, int progress, kvb_run_report *rep) {
  if (!e || !dir || !rep) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  memset(rep, 0, sizeof *rep);
  if (nshards < 1 || shard >= nshards)
    return KVB_ERROR(KVB_EINVAL, "shard %zu/%zu: need 0 <= I < N", shard, nshards);
  if (e->tasks.on) return KVB_ERROR(KVB_EINVAL, "a tasks{} spec runs whole (no --shard)");
  size_t units = 0;
  int st = runner_prepare(e, dir, &jobs, &units);
  if (st) return st;
  /* the previous shard's completion mark and failure marker go first: while this runs, the
   * directory claims no complete shard */
  char path[1200];
  snprintf(path, sizeof path, "%s/shard.json", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/FAILED", dir);
  unlink(path);
  size_t count = kvb_shard_units(units, shard, nshards);
  unit_result *res = calloc(units ? units : 1, sizeof *res);
  if (!res) {
    st = KVB_ERROR(KVB_ENOMEM, "run: out of memory for %zu trials", units);
    shard_mark_failed(dir, shard, nshards, kvb_strerror_last());
    return st;
  }
  double wall = runner_pool(e, res, shard, nshards, count, jobs, progress);
  kvb_run_report r;
  st = runner_tally(e, res, shard, nshards, units, &r);
  if (!st) {
    runner_staged sg = {.n = 0};
    FILE *f;
    st = (f = runner_stage_open(&sg, dir, "results.csv")) ? runner_write_csv(e, f, res, units)
                                                          : KVB_EIO;
    if (!st)
      st = (f = runner_stage_open(&sg, dir, "rows.tsv")) ? write_shard_rows(f, res, units)
                                                         : KVB_EIO;
    char hash[32];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)runner_text_hash(e->spec_text));
    uint64_t digest = digest_init(hash, (unsigned long long)e->seed, shard, nshards, units);
    if (!st) st = digest_file(sg.tmp[sg.n - 1], &digest); /* rows.tsv as it was written */
    if (!st) /* last: its presence marks a complete shard */
      st = (f = runner_stage_open(&sg, dir, "shard.json"))
               ? write_shard_meta(e, f, shard, nshards, units, count, r.rows, r.failed_rows, jobs,
                                  wall, digest)
               : KVB_EIO;
    if (!st) st = runner_stage_commit(&sg, dir);
    else runner_stage_discard(&sg);
  }
  if (st) {
    shard_mark_failed(dir, shard, nshards, kvb_strerror_last());
  } else {
    *rep = r;
  }
  runner_free_results(res, units);
  return st;
}

/* One shard directory as the merge reads it. */
typedef struct {
  const char *dir;
  char version[32], name[KVB_LABEL_MAX + 16], spec_path[512], spec_real[4096], hash[32];
  char plugins[4096]; /* plugin_identities; "-" when shard.json has none (an older kvbound) */
  char digest[32];
  unsigned long long seed, shard, nshards, units_total, units, rows, failed, jobs;
  double wall;
} shard_info;

static int meta_ull(const char *json, const char *key, unsigned long long *v) {
  char buf[64], *end;
  if (runner_meta_field(json, key, buf, sizeof buf) || !buf[0]) return -1;
  *v = strtoull(buf, &end, 10);
  return *end ? -1 : 0;
}

/* Reads DIR/shard.json; a directory without it is a failed (DIR/FAILED) or unfinished shard. */
static int read_shard_info(const char *dir, shard_info *si) {
  char path[1200];
  memset(si, 0, sizeof *si);
  si->dir = dir;
  snprintf(path, sizeof path, "%s/shard.json", dir);
  char *m = NULL;
  /* KVB_EINVAL: it is there but not readable as a file (a link to /dev/zero, a FIFO, a
   * directory, over 1 MiB): say so rather than call it missing */
  int rst = kvb_read_file(path, 1 << 20, "shard description", &m, NULL);
  if (rst == KVB_EINVAL) return rst;
  if (!m) {
    snprintf(path, sizeof path, "%s/FAILED", dir);
    char *why = runner_slurp_small(path, 4096);
    if (why) {
      size_t n = strlen(why);
      while (n && (why[n - 1] == '\n' || why[n - 1] == '\r')) why[--n] = '\0';
      int st = KVB_ERROR(KVB_EINVAL, "%s: %s (re-run only this shard, with the same --shard and "
                         "--out, then merge again)", dir, why);
      free(why);
      return st;
    }
    return KVB_ERROR(KVB_EINVAL, "%s holds no complete shard (no shard.json: not a shard "
                     "directory, or its `kvbound run --shard` was interrupted or is still "
                     "running)", dir);
  }
  char buf[64];
  int bad = runner_meta_field(m, "kvbound_version", si->version, sizeof si->version) |
            runner_meta_field(m, "name", si->name, sizeof si->name) |
            runner_meta_field(m, "spec_path", si->spec_path, sizeof si->spec_path) |
            runner_meta_field(m, "spec_realpath", si->spec_real, sizeof si->spec_real) |
            runner_meta_field(m, "spec_hash", si->hash, sizeof si->hash) |
            meta_ull(m, "seed", &si->seed) | meta_ull(m, "shard", &si->shard) |
            meta_ull(m, "nshards", &si->nshards) | meta_ull(m, "units_total", &si->units_total) |
            meta_ull(m, "units", &si->units) | meta_ull(m, "rows", &si->rows) |
            meta_ull(m, "failed_rows", &si->failed) | meta_ull(m, "jobs", &si->jobs) |
            runner_meta_field(m, "wall_seconds", buf, sizeof buf) |
            runner_meta_field(m, "rows_digest", si->digest, sizeof si->digest);
  if (runner_meta_field(m, "plugin_identities", si->plugins, sizeof si->plugins))
    snprintf(si->plugins, sizeof si->plugins, "-");
  free(m);
  if (bad || si->nshards == 0 || si->shard >= si->nshards)
    return KVB_ERROR(KVB_EFORMAT, "%s/shard.json: not a kvbound shard description", dir);
  si->wall = strtod(buf, NULL);
  return KVB_OK;
}

/* Reads DIR/rows.tsv of shard si into res (indexed by unit). */
static int read_shard_rows(const shard_info *si, const kvb_experiment *e, unit_result *res,
                           size_t units) {
  char path[1200];
  snprintf(path, sizeof path, "%s/rows.tsv", si->dir);
  FILE *f;
  int ost = kvb_open_regular(path, KVB_ROWS_FILE_MAX, "shard rows", &f);
  if (ost) return ost;
  /* a row is a few hundred bytes (its message is at most a few KiB): a longer line is refused
   * before it is held in memory */
  enum { ROW_LINE_MAX = 1 << 16 };
  size_t cap = ROW_LINE_MAX + 2, lineno = 0, nrows = 0;
  char *line = malloc(cap);
  size_t *rcap = NULL; /* allocated rows per unit of this shard, by k = (u - shard) / nshards */
  ssize_t len;
  int st = KVB_OK;
  size_t count = kvb_shard_units(units, (size_t)si->shard, (size_t)si->nshards);
  rcap = calloc(count ? count : 1, sizeof *rcap);
  if (!rcap || !line) st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
  uint64_t digest = digest_init(si->hash, si->seed, si->shard, si->nshards, si->units_total);
  while (!st && fgets(line, (int)cap, f) && (len = (ssize_t)strlen(line)) > 0) {
    lineno++;
    digest = digest_bytes(digest, line, (size_t)len);
    if (line[len - 1] == '\n') line[--len] = '\0';
    else if (!feof(f)) {
      st = KVB_ERROR(KVB_EFORMAT, "%s:%zu: a line longer than %d bytes (not a row)", path, lineno,
                     ROW_LINE_MAX);
      break;
    }
    if (lineno == 1) {
      if (strcmp(line, KVB_SHARD_ROWS_HEADER))
        st = KVB_ERROR(KVB_EFORMAT, "%s: not a kvbound shard rows file", path);
      continue;
    }
    char *p = line, *end;
    unsigned long long f5[5];
    for (int i = 0; i < 5 && !st; i++) {
      f5[i] = strtoull(p, &end, 10);
      if (end == p || *end != '\t') st = KVB_EFORMAT;
      p = end + 1;
    }
    double v[KVB_RUN_NCOLS];
    for (size_t c = 0; c < KVB_RUN_NCOLS && !st; c++) {
      v[c] = strtod(p, &end);
      if (end == p || *end != '\t') st = KVB_EFORMAT;
      p = end + 1;
    }
    size_t u = (size_t)f5[0];
    if (!st && (u >= units || u % si->nshards != si->shard || f5[1] >= e->nstreams ||
                f5[2] >= e->nmethods || (*p != '-' && *p != '=')))
      st = KVB_EFORMAT;
    if (st) {
      st = KVB_ERROR(KVB_EFORMAT, "%s:%zu: malformed row (or a unit outside shard %llu/%llu)",
                     path, lineno, si->shard, si->nshards);
      break;
    }
    size_t k = (u - (size_t)si->shard) / (size_t)si->nshards;
    unit_result *r = &res[u];
    if (r->nrows == rcap[k]) {
      size_t nc = rcap[k] ? 2 * rcap[k] : 8;
      row *nr = realloc(r->rows, nc * sizeof *nr);
      if (!nr) {
        st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
        break;
      }
      r->rows = nr;
      rcap[k] = nc;
    }
    row *w = &r->rows[r->nrows++];
    w->stream = (size_t)f5[1];
    w->method = (size_t)f5[2];
    w->j = (size_t)f5[3];
    w->status = (int)f5[4];
    memcpy(w->v, v, sizeof v);
    w->msg = NULL;
    if (*p == '=') {
      char *m = malloc(strlen(p));
      if (!m) {
        st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
        break;
      }
      size_t o = 0;
      for (const char *c = p + 1; *c; c++) {
        if (*c == '\\' && c[1]) {
          c++;
          m[o++] = *c == 't' ? '\t' : *c == 'n' ? '\n' : *c == 'r' ? '\r' : *c;
        } else {
          m[o++] = *c;
        }
      }
      m[o] = '\0';
      w->msg = m;
    }
    nrows++;
  }
  free(line);
  free(rcap);
  if (!st && ferror(f)) st = KVB_ERROR(KVB_EIO, "%s: read error", path);
  fclose(f);
  if (!st && nrows != si->rows)
    st = KVB_ERROR(KVB_EFORMAT, "%s: %zu rows, but shard.json says %llu (a truncated or "
                   "replaced file)", path, nrows, si->rows);
  char got[32];
  snprintf(got, sizeof got, "%016llx", (unsigned long long)digest);
  if (!st && strcmp(got, si->digest) != 0)
    st = KVB_ERROR(KVB_EFORMAT, "%s does not match the digest its shard.json commits to (%s, "
                   "recomputed %s): edited, duplicated or borrowed rows, or a changed seed, spec "
                   "or shard field; re-run this shard", path, si->digest, got);
  for (size_t u = (size_t)si->shard; !st && u < units; u += (size_t)si->nshards)
    if (res[u].nrows == 0)
      st = KVB_ERROR(KVB_EFORMAT, "%s: no row of unit %zu, which shard %llu/%llu runs", path, u,
                     si->shard, si->nshards);
  return st;
}

/* The merging process's plugins (its own --plugin; a merge loads no code a shard names) against
 * the shards' recorded identities: non-zero, with a message saying which file to pass, when a
 * method comes from another file (or from none) than the shards ran. */
static int plugin_mismatch(const kvb_experiment *e, const char *recorded) {
  char have[4096];
  plugin_identities(e, have, sizeof have, 0);
  if (strcmp(recorded, "-") == 0) /* shards of a kvbound that recorded no identity */
    return have[0] ? KVB_ERROR(KVB_EINVAL, "the shards record no plugin identity (an older "
                               "kvbound), and the spec's methods come from plugins here: run the "
                               "shards again") : KVB_OK;
  if (strcmp(have, recorded) == 0) return KVB_OK;
  return KVB_ERROR(KVB_EINVAL, "the shards ran their plugin methods from files with the "
                   "identities [%s] (method:SHA-256:bytes:ABI), this process has [%s]: a merge "
                   "loads no code a shard names; pass --plugin PATH of the very files the shards "
                   "ran (shard.json's plugin_paths names them)", recorded, have);
}

int kvb_experiment_merge(const char *const *dirs, size_t ndirs, const char *out, int force,
                         int allow_time, kvb_run_report *rep) {
  if (!dirs || !out || !rep) return KVB_ERROR(KVB_ENULL, "merge: NULL argument");
  memset(rep, 0, sizeof *rep);
  if (ndirs == 0) return KVB_ERROR(KVB_EINVAL, "merge: no shard directory given");
  if (runner_dir_fits("merge --out", out)) return KVB_EINVAL;
  for (size_t i = 0; i < ndirs; i++)
    if (runner_dir_fits("merge: shard directory", dirs[i])) return KVB_EINVAL;
  shard_info *si = calloc(ndirs, sizeof *si);
  if (!si) return KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
  int st = KVB_OK;
  for (size_t i = 0; i < ndirs && !st; i++) st = read_shard_info(dirs[i], &si[i]);
  /* one run: the same version, spec (name, file, text) and seed, split the same way */
  for (size_t i = 1; i < ndirs && !st; i++) {
    const shard_info *a = &si[0], *b = &si[i];
    const char *what = strcmp(a->version, b->version) ? "kvbound version"
                       : strcmp(a->hash, b->hash) || strcmp(a->name, b->name) ||
                               strcmp(a->spec_path, b->spec_path) ? "spec"
                       : a->seed != b->seed ? "seed"
                       : a->nshards != b->nshards ? "number of shards"
                       : strcmp(a->plugins, b->plugins) ? "plugin identity (SHA-256)" : NULL;
    if (what)
      st = KVB_ERROR(KVB_EINVAL, "%s and %s are shards of different runs (another %s: "
                     "version %s/%s, spec '%s' %s hash %s / '%s' %s hash %s, seed %llu/%llu, "
                     "shard %llu/%llu vs %llu/%llu)", a->dir, b->dir, what, a->version, b->version,
                     a->name, a->spec_path, a->hash, b->name, b->spec_path, b->hash, a->seed,
                     b->seed, a->shard, a->nshards, b->shard, b->nshards);
  }
  size_t n = st ? 0 : (size_t)si[0].nshards;
  const shard_info **by = st ? NULL : calloc(n, sizeof *by);
  if (!st && !by) st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
  for (size_t i = 0; i < ndirs && !st; i++) {
    size_t k = (size_t)si[i].shard;
    if (by[k])
      st = KVB_ERROR(KVB_EINVAL, "shard %zu/%zu given twice: %s and %s", k, n, by[k]->dir,
                     si[i].dir);
    by[k] = &si[i];
  }
  if (!st) { /* name every missing shard */
    char miss[1024] = "";
    size_t o = 0, nmiss = 0;
    for (size_t k = 0; k < n; k++)
      if (!by[k]) {
        nmiss++;
        runner_app(miss, sizeof miss, &o, "%s%zu/%zu", nmiss > 1 ? ", " : "", k, n);
      }
    if (nmiss)
      st = KVB_ERROR(KVB_EINVAL, "missing shard%s %s: no directory given holds %s (run `kvbound "
                     "run SPEC --shard I/N` for each, or pass its directory)", nmiss > 1 ? "s" : "",
                     miss, nmiss > 1 ? "them" : "it");
  }
  kvb_experiment e;
  kvb_experiment_init(&e);
  int have_e = 0;
  if (!st) { /* the experiment, from the spec file the shards ran, unchanged since */
    static char err[8192];
    const shard_info *a = &si[0];
    int lst = kvb_spec_load(a->spec_real[0] ? a->spec_real : a->spec_path, &e, err, sizeof err);
    if (lst && a->spec_real[0]) lst = kvb_spec_load(a->spec_path, &e, err, sizeof err);
    if (lst) {
      st = KVB_ERROR(KVB_EINVAL, "the shards' spec %s cannot be loaded here: %s", a->spec_path, err);
    } else {
      have_e = 1;
      char h[32];
      snprintf(h, sizeof h, "%016llx", (unsigned long long)runner_text_hash(e.spec_text));
      snprintf(e.spec_path, sizeof e.spec_path, "%s", a->spec_path); /* as the shards ran it */
      e.seed = a->seed;
      size_t units = 0;
      if (strcmp(h, a->hash))
        st = KVB_ERROR(KVB_EINVAL, "the spec %s changed since the shards ran (hash %s, the "
                       "shards' %s): merge with the spec they ran, or run them again", a->spec_path,
                       h, a->hash);
      else if (strcmp(a->version, KVBOUND_VERSION))
        st = KVB_ERROR(KVB_EINVAL, "the shards were run by kvbound %s, this is %s", a->version,
                       KVBOUND_VERSION);
      else if (plugin_mismatch(&e, a->plugins))
        st = KVB_EINVAL;
      else if (kvb_experiment_units(&e, NULL, &units) || units != a->units_total)
        st = KVB_ERROR(KVB_EFORMAT, "the spec has %zu trials, the shards %llu", units,
                       a->units_total);
      else if ((e.measures & KVB_MEASURE_TIME) && !allow_time)
        st = KVB_ERROR(KVB_EINVAL, "the spec measures time (update_s, query_s: wall clock, not "
                       "reproducible), so no merge equals a single run byte for byte; add "
                       "--allow-time to merge it anyway");
    }
  }
  size_t units = st ? 0 : (size_t)si[0].units_total;
  unit_result *res = NULL;
  if (!st) {
    res = calloc(units ? units : 1, sizeof *res);
    if (!res) st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory for %zu trials", units);
  }
  for (size_t k = 0; k < n && !st; k++) st = read_shard_rows(by[k], &e, res, units);
  if (!st) st = kvb_experiment_prepare_out(&e, out, force);
  if (!st) {
    unsigned long long jobs = 0;
    double wall = 0;
    for (size_t k = 0; k < n; k++) {
      wall += by[k]->wall; /* the trials' own time, summed over the machines */
      jobs = by[k]->jobs > jobs ? by[k]->jobs : jobs;
    }
    kvb_run_report r;
    st = runner_tally(&e, res, 0, 1, units, &r); /* merged units carry no whole-unit failure */
    if (!st)
      st = runner_write_outputs(&e, out, res, units, (int)jobs, r.rows, r.failed_rows, wall,
                                si[0].spec_real[0] ? si[0].spec_real : NULL);
    if (!st) *rep = r;
  }
  if (res) runner_free_results(res, units);
  if (have_e) kvb_experiment_free(&e);
  free(by);
  free(si);
  return st;
}

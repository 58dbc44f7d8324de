/* test_shards.c — `kvbound run SPEC --shard I/N` and `kvbound merge`: the shards of a sweep,
 * merged in any order, give the single run's outputs byte for byte (results.csv,
 * quantiles.csv, summary.txt, summary.md, plots.tsv; meta.json but for its execution fields
 * jobs, wall_seconds, finished_utc and machine) for N = 1, 2, 3 (uneven), 7 and 16 (more shards
 * than the 10 trials: empty shards); the merge refuses a missing shard (naming it), a
 * duplicated one, shards of another seed, a failed shard (its FAILED marker), a spec edited
 * since, and a spec measuring time (unless --allow-time); a failed shard re-run alone merges
 * to the same bytes; failed rows keep their messages exactly; bad --shard values are refused
 * before anything runs. */
#include "cli_harness.h"
#include "npy.h"

#include <stdarg.h>

static char out[1 << 16];

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...) {
  char cmd[3000];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  return sh(cmd, out, sizeof out);
}

/* 1 when DIR_A/NAME and DIR_B/NAME exist and hold the same bytes. */
static int same_file(const char *a, const char *b, const char *name) {
  char pa[600], pb[600];
  snprintf(pa, sizeof pa, "%s/%s", a, name);
  snprintf(pb, sizeof pb, "%s/%s", b, name);
  char *x = read_file(pa), *y = read_file(pb);
  int same = x && y && strcmp(x, y) == 0;
  free(x);
  free(y);
  return same;
}

/* meta.json without its execution fields (runner.h, kvb_experiment_merge). */
static char *meta_results(const char *dir) {
  char p[600];
  snprintf(p, sizeof p, "%s/meta.json", dir);
  char *m = read_file(p);
  if (!m) return NULL;
  char *o = m, *line = m;
  while (*line) {
    char *nl = strchr(line, '\n');
    size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);
    int exec = 0;
    static const char *const skip[] = {"\"jobs\":", "\"wall_seconds\":", "\"finished_utc\":",
                                       "\"machine\":"};
    for (int k = 0; k < 4; k++) exec |= strncmp(line + 2, skip[k], strlen(skip[k])) == 0;
    if (!exec) {
      memmove(o, line, len);
      o += len;
    }
    line += len;
  }
  *o = '\0';
  return m;
}

static int same_outputs(const char *a, const char *b, char *why, size_t cap) {
  static const char *const files[] = {"results.csv", "quantiles.csv", "summary.txt",
                                      "summary.md", "plots.tsv"};
  for (int k = 0; k < 5; k++)
    if (!same_file(a, b, files[k])) {
      snprintf(why, cap, "%s differs between %s and %s", files[k], a, b);
      return 0;
    }
  char *x = meta_results(a), *y = meta_results(b);
  int same = x && y && strcmp(x, y) == 0;
  free(x);
  free(y);
  if (!same) snprintf(why, cap, "meta.json (execution fields left out) differs: %s, %s", a, b);
  return same;
}

/* 2 sweep points x 5 trials, two methods (one with its own coins), three query points. */
static const char *spec_text =
    "name \"shards\"\n"
    "stream \"clusterable\" { n = 64, d_key = 4, d_value = 4, m = 4, delta = 0.5, r = 1, key_norm = 2 }\n"
    "method \"subgen\" { delta = 0.5, t = 8 }\n"
    "method \"uniform_sample\" { f = 4, w = 4, T = 2 }\n"
    "sweep \"s\" { 4, 16 }\n"
    "trials(5)\n"
    "queries { every = 24 }\n"
    "failure { column = \"ratio_op\", above = 1 }\n"
    "plot { name = \"p\", x = \"s\", y = \"ratio_op\", logx = true }\n";

/* Runs every shard of N into tmp/nN/I (N > 0) and merges them in a shuffled order. */
static int shard_and_merge(const char *spec, size_t n, unsigned seed, char *merged, size_t cap) {
  char dirs[4096] = "";
  size_t perm[64];
  for (size_t i = 0; i < n; i++) perm[i] = i;
  unsigned x = seed * 2654435761u + 1;
  for (size_t i = n; i > 1; i--) { /* Fisher-Yates with a fixed LCG: a fixed shuffled order */
    x = x * 1664525u + 1013904223u;
    size_t k = (x >> 8) % i, t = perm[i - 1];
    perm[i - 1] = perm[k];
    perm[k] = t;
  }
  for (size_t i = 0; i < n; i++) {
    if (run("%s run %s --shard %zu/%zu --out %s/n%zu/%zu --jobs %d --seed 7", kvbound, spec, i, n,
            tmp, n, i, (int)(i % 2) + 1))
      return -1;
  }
  size_t o = 0;
  for (size_t i = 0; i < n; i++)
    o += (size_t)snprintf(dirs + o, sizeof dirs - o, " %s/n%zu/%zu", tmp, n, perm[i]);
  snprintf(merged, cap, "%s/merged%zu", tmp, n);
  return run("%s merge%s --out %s", kvbound, dirs, merged);
}

static void byte_identical(const char *spec, const char *single) {
  static const size_t ns[] = {1, 2, 3, 7, 16};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    char merged[600], why[1400] = "", name[96];
    int rc = shard_and_merge(spec, ns[k], (unsigned)ns[k], merged, sizeof merged);
    int same = rc == 0 && same_outputs(single, merged, why, sizeof why);
    snprintf(name, sizeof name, "shards.merge_byte_identical.N%zu", ns[k]);
    CHECK(same, name, "rc %d: %s %.300s", rc, why, out);
  }
  /* the shards of N = 3 hold 4, 3 and 3 of the 10 trials (unit u in shard u mod 3) */
  char p[600];
  snprintf(p, sizeof p, "%s/n3/0/shard.json", tmp);
  char *m = read_file(p);
  CHECK(m && strstr(m, "\"units\": \"4\"") && strstr(m, "\"units_total\": \"10\"") &&
            strstr(m, "\"seed\": \"7\"") && strstr(m, "\"shard\": \"0\"") &&
            strstr(m, "\"nshards\": \"3\"") && strstr(m, "\"spec_hash\": \""),
        "shards.shard_json_records_run", "%.400s", m ? m : "(none)");
  free(m);
  snprintf(p, sizeof p, "%s/n3/1/results.csv", tmp);
  m = read_file(p);
  /* its own rows: units 1, 4, 7 only (the unit is results.csv's first column) */
  int own = m != NULL;
  for (char *l = m ? strchr(m, '\n') : NULL; l && l[1]; l = strchr(l + 1, '\n'))
    own &= atoi(l + 1) % 3 == 1;
  CHECK(own && strstr(m, "\n1,") && strstr(m, "\n4,") && strstr(m, "\n7,"),
        "shards.shard_holds_its_units", "%.300s", m ? m : "(none)");
  free(m);
  /* the merged directory is a run: kvbound plot works on it (when gnuplot is installed) */
  if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
    int rc = run("%s plot %s/merged3", kvbound, tmp);
    CHECK(rc == 0, "shards.merged_plots", "rc %d: %.300s", rc, out);
  }
}

static void refusals(const char *spec) {
  int rc = run("%s merge %s/n3/0 %s/n3/2 --out %s/bad", kvbound, tmp, tmp, tmp);
  CHECK(rc == 1 && strstr(out, "missing shard 1/3"), "shards.missing_shard_named", "rc %d: %.300s",
        rc, out);
  rc = run("%s merge %s/n7/0 %s/n7/2 %s/n7/3 %s/n7/4 %s/n7/6 --out %s/bad", kvbound, tmp, tmp,
           tmp, tmp, tmp, tmp);
  CHECK(rc == 1 && strstr(out, "missing shards 1/7, 5/7"), "shards.missing_shards_all_named",
        "rc %d: %.300s", rc, out);
  rc = run("%s merge %s/n3/0 %s/n3/1 %s/n3/1 %s/n3/2 --out %s/bad", kvbound, tmp, tmp, tmp, tmp,
           tmp);
  CHECK(rc == 1 && strstr(out, "shard 1/3 given twice"), "shards.duplicate_refused",
        "rc %d: %.300s", rc, out);
  rc = run("%s run %s --shard 1/3 --seed 8 --out %s/seed8", kvbound, spec, tmp);
  int rc2 = run("%s merge %s/n3/0 %s/seed8 %s/n3/2 --out %s/bad", kvbound, tmp, tmp, tmp, tmp);
  CHECK(rc == 0 && rc2 == 1 && strstr(out, "different runs") && strstr(out, "seed 7/8"),
        "shards.other_seed_refused", "rc %d %d: %.300s", rc, rc2, out);
  rc = run("%s merge %s/n2/0 %s/n3/1 --out %s/bad", kvbound, tmp, tmp, tmp);
  CHECK(rc == 1 && strstr(out, "different runs"), "shards.other_split_refused", "rc %d: %.300s",
        rc, out);
  char p[600];
  snprintf(p, sizeof p, "%s/bad/meta.json", tmp);
  CHECK(access(p, F_OK) != 0, "shards.refused_merge_writes_nothing", "%s exists", p);
  static const char *const bad[] = {"3/3", "1/0", "-1/3", "a/3", "1", "1/", "/3", "0/1000001"};
  int all = 1;
  for (int k = 0; k < 8; k++) {
    rc = run("%s run %s --shard %s --out %s/badshard", kvbound, spec, bad[k], tmp);
    all &= rc == 2 && strstr(out, "--shard needs I/N") != NULL;
  }
  snprintf(p, sizeof p, "%s/badshard", tmp);
  CHECK(all && access(p, F_OK) != 0, "shards.bad_shard_refused", "%.300s", out);
  rc = run("%s merge --out %s/bad", kvbound, tmp);
  CHECK(rc == 2 && strstr(out, "no shard directory"), "shards.merge_usage", "rc %d: %.200s", rc, out);
  /* a spec edited after its shards ran is refused (its hash differs) */
  char spec2[600];
  snprintf(spec2, sizeof spec2, "%s/edited.lua", tmp);
  char *t = read_file(spec);
  write_file(spec2, t);
  rc = run("%s run %s --shard 0/1 --out %s/ed0 --seed 7", kvbound, spec2, tmp);
  FILE *f = fopen(spec2, "a");
  if (f) fputs("-- edited\n", f), fclose(f);
  rc2 = run("%s merge %s/ed0 --out %s/bad", kvbound, tmp, tmp);
  CHECK(rc == 0 && rc2 == 1 && strstr(out, "changed since the shards ran"),
        "shards.edited_spec_refused", "rc %d %d: %.300s", rc, rc2, out);
  /* a spec measuring time: refused, unless --allow-time */
  char spec3[600], t3[4096];
  snprintf(spec3, sizeof spec3, "%s/timed.lua", tmp);
  snprintf(t3, sizeof t3, "%smeasures { \"error\", \"bound\", \"time\" }\n", t);
  write_file(spec3, t3);
  free(t);
  rc = run("%s run %s --shard 0/1 --out %s/tm0", kvbound, spec3, tmp);
  rc2 = run("%s merge %s/tm0 --out %s/tm", kvbound, tmp, tmp);
  int refused = rc2 == 1 && strstr(out, "measures time") != NULL;
  int rc3 = run("%s merge %s/tm0 --out %s/tm --allow-time", kvbound, tmp, tmp);
  CHECK(rc == 0 && refused && rc3 == 0, "shards.time_measure_refused_unless_allowed",
        "rc %d %d %d: %.300s", rc, rc2, rc3, out);
  /* a shard.json that is a link to /dev/zero is reported as what it is, not as missing */
  char sj[700];
  rc = run("%s run %s --shard 0/1 --out %s/zero0 --seed 7", kvbound, spec, tmp);
  snprintf(sj, sizeof sj, "%s/zero0/shard.json", tmp);
  int linked = unlink(sj) == 0 && symlink("/dev/zero", sj) == 0;
  rc2 = run("%s merge %s/zero0 --out %s/bad", kvbound, tmp, tmp);
  CHECK(rc == 0 && linked && rc2 == 1 && strstr(out, "not a regular file") &&
            !strstr(out, "no shard.json"),
        "shards.shard_json_device_named", "rc %d %d, linked %d: %.300s", rc, rc2, linked, out);
}

/* A shard that fails (its node lacks the data) leaves FAILED, which the merge reports; re-run
 * alone once the data is back, the merge gives the single run's bytes. An interrupted shard
 * (no shard.json) is reported too, and re-running it gives the same bytes. */
static void failed_shard(void) {
  enum { N = 40, D = 4 };
  double q[N * D], k[N * D], v[N * D];
  unsigned x = 12345;
  for (int i = 0; i < N * D; i++) {
    x = x * 1664525u + 1013904223u;
    q[i] = (double)(x >> 8) / 16777216.0 - 0.5;
    x = x * 1664525u + 1013904223u;
    k[i] = (double)(x >> 8) / 16777216.0 - 0.5;
    x = x * 1664525u + 1013904223u;
    v[i] = (double)(x >> 8) / 16777216.0 - 0.5;
  }
  char pq[300], pk[300], pv[300], hidden[300], spec[300], text[2048];
  snprintf(pq, sizeof pq, "%s/q.npy", tmp);
  snprintf(pk, sizeof pk, "%s/k.npy", tmp);
  snprintf(pv, sizeof pv, "%s/v.npy", tmp);
  snprintf(hidden, sizeof hidden, "%s/v.npy.away", tmp);
  size_t shape[2] = {N, D};
  int wst = kvb_npy_write(pq, q, 2, shape, "<f8", 1) | kvb_npy_write(pk, k, 2, shape, "<f8", 1) |
            kvb_npy_write(pv, v, 2, shape, "<f8", 1);
  snprintf(spec, sizeof spec, "%s/npy.lua", tmp);
  snprintf(text, sizeof text,
           "name \"shards_npy\"\n"
           "stream \"npy\" { q = \"%s\", k = \"%s\", v = \"%s\" }\n"
           "method \"uniform_sample\" { f = 2, w = 2 }\n"
           "sweep \"T\" { 1, 2 }\n"
           "trials(5)\n"
           "queries { every = 20 }\n",
           pq, pk, pv);
  write_file(spec, text);
  int rc = run("%s run %s --out %s/npy_single --jobs 2", kvbound, spec, tmp);
  int rs = rc | run("%s run %s --shard 0/3 --out %s/npy0", kvbound, spec, tmp) |
           run("%s run %s --shard 2/3 --out %s/npy2", kvbound, spec, tmp);
  rename(pv, hidden); /* shard 1's node lacks the values */
  int rf = run("%s run %s --shard 1/3 --out %s/npy1", kvbound, spec, tmp);
  char p[600];
  snprintf(p, sizeof p, "%s/npy1/FAILED", tmp);
  char *marker = read_file(p);
  CHECK(wst == 0 && rs == 0 && rf == 1 && marker && strstr(marker, "shard 1/3 failed"),
        "shards.failed_shard_leaves_marker", "rc %d %d %d: %.300s | %.200s", wst, rs, rf, out,
        marker ? marker : "(no marker)");
  free(marker);
  rc = run("%s merge %s/npy0 %s/npy1 %s/npy2 --out %s/npy_merged", kvbound, tmp, tmp, tmp, tmp);
  CHECK(rc == 1 && strstr(out, "shard 1/3 failed") && strstr(out, "npy1") &&
            strstr(out, "re-run only this shard"),
        "shards.merge_reports_failed_shard", "rc %d: %.300s", rc, out);
  rename(hidden, pv);
  rf = run("%s run %s --shard 1/3 --out %s/npy1", kvbound, spec, tmp);
  rc = run("%s merge %s/npy2 %s/npy1 %s/npy0 --out %s/npy_merged", kvbound, tmp, tmp, tmp, tmp);
  char why[1400] = "", merged[600];
  snprintf(merged, sizeof merged, "%s/npy_merged", tmp);
  char single[600];
  snprintf(single, sizeof single, "%s/npy_single", tmp);
  snprintf(p, sizeof p, "%s/npy1/FAILED", tmp);
  CHECK(rf == 0 && rc == 0 && access(p, F_OK) != 0 && same_outputs(single, merged, why, sizeof why),
        "shards.rerun_failed_shard_same_bytes", "rc %d %d: %s %.300s", rf, rc, why, out);
  /* an interrupted shard: no shard.json (as when its job was killed), no marker */
  snprintf(p, sizeof p, "%s/npy2/shard.json", tmp);
  unlink(p);
  rc = run("%s merge %s/npy0 %s/npy1 %s/npy2 --out %s/npy_merged", kvbound, tmp, tmp, tmp, tmp);
  CHECK(rc == 1 && strstr(out, "npy2 holds no complete shard"),
        "shards.merge_reports_unfinished_shard", "rc %d: %.300s", rc, out);
  rf = run("%s run %s --shard 2/3 --out %s/npy2", kvbound, spec, tmp);
  rc = run("%s merge %s/npy0 %s/npy1 %s/npy2 --out %s/npy_merged", kvbound, tmp, tmp, tmp, tmp);
  CHECK(rf == 0 && rc == 0 && same_outputs(single, merged, why, sizeof why),
        "shards.rerun_unfinished_shard_same_bytes", "rc %d %d: %s %.300s", rf, rc, why, out);
}

/* Rows that fail (balancekv fed keys longer than its r) keep their status and message: the
 * merge restores them exactly (the error column, the summary's failure lines) and exits 1 like
 * the run. */
static void failed_rows(void) {
  char spec[300], single[300], merged[300], why[1400] = "";
  snprintf(spec, sizeof spec, "%s/bkv.lua", tmp);
  write_file(spec, "name \"shards_bkv\"\n"
                   "stream \"gaussian\" { n = 64, d_key = 4, d_value = 4, key_sigma = 10 }\n"
                   "method \"balancekv\" { r = 1, t = 8, T = 2, eps = 0.5, n = 64 }\n"
                   "method \"exact\" {}\nqueries { every = 32 }\ntrials(3)\n");
  snprintf(single, sizeof single, "%s/bkv_single", tmp);
  snprintf(merged, sizeof merged, "%s/bkv_merged", tmp);
  int rc = run("%s run %s --out %s", kvbound, spec, single);
  int r0 = run("%s run %s --shard 0/2 --out %s/bkv0", kvbound, spec, tmp);
  int r1 = run("%s run %s --shard 1/2 --out %s/bkv1", kvbound, spec, tmp);
  int rm = run("%s merge %s/bkv1 %s/bkv0 --out %s", kvbound, tmp, tmp, merged);
  char p[600];
  snprintf(p, sizeof p, "%s/results.csv", merged);
  char *m = read_file(p);
  CHECK(rc == 1 && r0 == 1 && r1 == 1 && rm == 1 && strstr(out, "rows failed") && m &&
            strstr(m, "update of token 1 failed") && same_outputs(single, merged, why, sizeof why),
        "shards.failed_rows_merged_exactly", "rc %d %d %d %d: %s %.300s", rc, r0, r1, rm, why, out);
  free(m);
}

int main(int argc, char **argv) {
  (void)argc;
  if (cli_harness_init(argv[0], "/tmp/kvb-shards-XXXXXX", "shards")) return 1;
  char spec[300], single[300];
  snprintf(spec, sizeof spec, "%s/spec.lua", tmp);
  write_file(spec, spec_text);
  snprintf(single, sizeof single, "%s/single", tmp);
  int rc = run("%s run %s --out %s --jobs 2 --seed 7", kvbound, spec, single);
  CHECK(rc == 0, "shards.single_run", "rc %d: %.300s", rc, out);
  /* two single runs agree on meta.json too (its parameters are sorted, not in Lua's order) */
  rc = run("%s run %s --out %s/single_again --jobs 1 --seed 7", kvbound, spec, tmp);
  char again[300], why[1400] = "";
  snprintf(again, sizeof again, "%s/single_again", tmp);
  CHECK(rc == 0 && same_outputs(single, again, why, sizeof why), "shards.single_runs_agree",
        "rc %d: %s", rc, why);
  byte_identical(spec, single);
  refusals(spec);
  failed_shard();
  failed_rows();
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  if (system(cmd) != 0) printf("note: could not remove %s\n", tmp);
  UNIT_EXIT();
}

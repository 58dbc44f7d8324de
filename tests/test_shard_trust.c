/* test_shard_trust.c — a results directory runs no code (src/README.md, "Your own method"; plugin.h):
 * `kvb-props --merge` loads no plugin a shard's meta.txt names. A planted plugin line — by path
 * (the old format) or by identity — executes nothing: the planted library's constructor would
 * create a marker file (tests/plugins/marker.c), and after the merge the marker does not exist.
 * Shards run with two different files that register the same method name are refused; a merge
 * that needs the method loads only a --plugin of its own command line whose SHA-256 matches the
 * recorded one, and says what to pass otherwise. The battery runs are method.contract without
 * mutants (well under a second each). `kvbound merge` likewise: shard.json records the
 * identities of the plugins the spec's methods come from, and shards of two files, or a merge
 * with a third, are refused. */
#include "cli_harness.h"
#include "sha256.h"

#include <libgen.h>

static char props[600], plugdir[600], marker[128];

static int run(const char *args, char *out, size_t cap) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "KVB_TEST_MARKER=%s %s %s", marker, props, args);
  return sh(cmd, out, cap);
}

/* Two shards of the method battery in DIR0/DIR1 with plugin file so0 for shard 0, so1 for 1. */
static int shards(const char *d0, const char *so0, const char *d1, const char *so1, char *out,
                  size_t cap) {
  char args[2048];
  int rc = 0;
  const char *d[2] = {d0, d1}, *so[2] = {so0, so1};
  for (int k = 0; k < 2; k++) {
    snprintf(args, sizeof args, "--plugin %s --method strided_sample,stride=4 --only "
             "method.contract --no-mutants --shard %d/2 --out %s/%s", so[k], k, tmp, d[k]);
    rc |= run(args, out, cap);
  }
  return rc;
}

static void append(const char *dir, const char *line) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s/meta.txt", tmp, dir);
  FILE *f = fopen(path, "a");
  if (f) {
    fputs(line, f);
    fclose(f);
  }
}

int main(int argc, char **argv) {
  (void)argc;
  if (cli_harness_init(argv[0], "/tmp/kvb-trust-XXXXXX", "props_trust")) return 1;
  char self[512];
  snprintf(self, sizeof self, "%s", kvbound);
  snprintf(props, sizeof props, "%s/kvb-props", dirname(self));
  snprintf(plugdir, sizeof plugdir, "%s/plugins", self);
  snprintf(marker, sizeof marker, "%s/MARKER", tmp);
  char so[700], mk[700], copy[700], out[16384], args[4096], line[1200], hex[65];
  snprintf(so, sizeof so, "%s/strided_sample.so", plugdir);
  snprintf(mk, sizeof mk, "%s/marker.so", plugdir);
  /* a second file registering the same name: the same library with one byte appended */
  snprintf(copy, sizeof copy, "%s/strided_copy.so", tmp);
  snprintf(args, sizeof args, "cp %s %s && printf x >> %s", so, copy, copy);
  sh(args, out, sizeof out);

  /* the marker plugin does run when loaded: the test can see a load */
  snprintf(args, sizeof args, "--plugin %s --list", mk);
  run(args, out, sizeof out);
  CHECK(access(marker, F_OK) == 0, "props_trust: loading marker.so creates the marker (control)",
        "no marker after --plugin %s", mk);
  unlink(marker);

  /* ---- a planted plugin line executes nothing ---- */
  int rc = shards("a0", so, "a1", so, out, sizeof out);
  CHECK(rc == 0, "props_trust: two shards with the plugin run", "rc %d: %s", rc, out);
  snprintf(args, sizeof args, "%s/a0/meta.txt", tmp);
  char *meta = read_file(args);
  CHECK(meta && kvb_sha256_file(so, hex, NULL) == 0 && strstr(meta, "plugin-id ") &&
            strstr(meta, hex) && strstr(meta, "method-plugin ") && !strstr(meta, "\nplugin /"),
        "props_trust: a shard records the plugin's SHA-256, size, ABI version and path",
        "%s", meta ? meta : "(no meta.txt)");
  free(meta);
  /* by identity (its true hash, in both shards alike): data, never loaded */
  unsigned long long size = 0;
  kvb_sha256_file(mk, hex, &size);
  snprintf(line, sizeof line, "plugin-id %s %llu 1 %s\n", hex, size, mk);
  snprintf(args, sizeof args, "cp -r %s/a0 %s/b0 && cp -r %s/a1 %s/b1", tmp, tmp, tmp, tmp);
  sh(args, out, sizeof out);
  append("b0", line);
  append("b1", line);
  snprintf(args, sizeof args, "--plugin %s --merge %s/b0 %s/b1", so, tmp, tmp);
  rc = run(args, out, sizeof out);
  CHECK(rc == 0 && access(marker, F_OK) != 0,
        "props_trust: a planted plugin-id line is not loaded (no marker; the merge runs)",
        "rc %d, marker %s: %s", rc, access(marker, F_OK) == 0 ? "EXISTS" : "absent", out);
  unlink(marker);
  /* by path (the old format): refused, and not loaded */
  snprintf(line, sizeof line, "plugin %s\n", mk);
  snprintf(args, sizeof args, "cp -r %s/a0 %s/c0 && cp -r %s/a1 %s/c1", tmp, tmp, tmp, tmp);
  sh(args, out, sizeof out);
  append("c0", line);
  append("c1", line);
  snprintf(args, sizeof args, "--plugin %s --merge %s/c0 %s/c1", so, tmp, tmp);
  rc = run(args, out, sizeof out);
  CHECK(rc == 2 && access(marker, F_OK) != 0 && strstr(out, "by path only"),
        "props_trust: a planted \"plugin PATH\" line is refused and not loaded (no marker)",
        "rc %d, marker %s: %s", rc, access(marker, F_OK) == 0 ? "EXISTS" : "absent", out);
  unlink(marker);

  /* ---- the merge needs the method: only a matching --plugin of its own ---- */
  snprintf(args, sizeof args, "--merge %s/a0 %s/a1", tmp, tmp);
  rc = run(args, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "loads no code a shard directory names") &&
            strstr(out, "strided_sample.so") && strstr(out, "<- the method's"),
        "props_trust: without --plugin the merge names the file and SHA-256 to pass", "rc %d: %s",
        rc, out);
  snprintf(args, sizeof args, "--plugin %s --merge %s/a0 %s/a1", so, tmp, tmp);
  rc = run(args, out, sizeof out);
  CHECK(rc == 0 && strstr(out, "method.contract.determinism"),
        "props_trust: a --plugin whose SHA-256 matches is accepted", "rc %d: %s", rc, out);
  snprintf(args, sizeof args, "--plugin %s --merge %s/a0 %s/a1", copy, tmp, tmp);
  rc = run(args, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "is not a plugin the shards ran with"),
        "props_trust: a --plugin with another SHA-256 (same method name) is refused", "rc %d: %s",
        rc, out);

  /* ---- shards of two different plugin files registering one name ---- */
  rc = shards("d0", so, "d1", copy, out, sizeof out);
  snprintf(args, sizeof args, "--plugin %s --merge %s/d0 %s/d1", so, tmp, tmp);
  int rc2 = run(args, out, sizeof out);
  CHECK(rc == 0 && rc2 == 2 && strstr(out, "not shards of one sweep") &&
            strstr(out, "plugin identities"),
        "props_trust: shards whose plugin identities differ are refused", "rc %d %d: %s", rc, rc2,
        out);

  /* ---- kvbound run --shard / kvbound merge ---- */
  char spec[256];
  snprintf(spec, sizeof spec, "%s/p.lua", tmp);
  write_file(spec, "name \"p\"\n"
                   "stream \"gaussian\" { n = 64, d_key = 4, d_value = 2 }\n"
                   "method \"strided_sample\" { stride = 4 }\n"
                   "trials(2)\n");
  const char *sos[2][2] = {{so, so}, {so, copy}};
  for (int v = 0; v < 2; v++)
    for (int k = 0; k < 2; k++) {
      snprintf(args, sizeof args, "%s run %s --plugin %s --shard %d/2 --out %s/r%d%d --jobs 1",
               kvbound, spec, sos[v][k], k, tmp, v, k);
      rc |= sh(args, out, sizeof out);
    }
  snprintf(args, sizeof args, "%s/r00/shard.json", tmp);
  meta = read_file(args);
  kvb_sha256_file(so, hex, NULL);
  CHECK(rc == 0 && meta && strstr(meta, "\"plugin_identities\": \"0:") && strstr(meta, hex),
        "shard_trust: kvbound's shard.json records the plugin's SHA-256", "rc %d: %s", rc,
        meta ? meta : out);
  free(meta);
  snprintf(args, sizeof args, "%s merge %s/r10 %s/r11 --plugin %s --out %s/m1", kvbound, tmp, tmp,
           so, tmp);
  rc = sh(args, out, sizeof out);
  CHECK(rc != 0 && strstr(out, "plugin identity"),
        "shard_trust: kvbound merge refuses shards of two plugin files with one method name",
        "rc %d: %s", rc, out);
  snprintf(args, sizeof args, "%s merge %s/r00 %s/r01 --plugin %s --out %s/m2", kvbound, tmp, tmp,
           copy, tmp);
  rc = sh(args, out, sizeof out);
  CHECK(rc != 0 && strstr(out, "loads no code a shard names") && strstr(out, "--plugin PATH"),
        "shard_trust: kvbound merge refuses a --plugin other than the shards' file", "rc %d: %s",
        rc, out);
  snprintf(args, sizeof args, "%s merge %s/r00 %s/r01 --plugin %s --out %s/m3", kvbound, tmp, tmp,
           so, tmp);
  rc = sh(args, out, sizeof out);
  CHECK(rc == 0, "shard_trust: kvbound merge accepts the shards' own plugin file", "rc %d: %s", rc,
        out);

  snprintf(args, sizeof args, "rm -rf %s", tmp);
  sh(args, out, sizeof out);
  UNIT_EXIT();
}

/* test_real_text.c — the real-cache text and `kvbound dump-kv` (src/model/README.md, The real model):
 *   SHA-256 against FIPS 180-4's examples and lengths around the padding boundary (against an
 *   independent bytewise route: the hash of a file written by the shell's sha256sum when present);
 *   "debian-licenses" reads GPL-3 then GFDL-1.3 with the documented hashes, and a changed or
 *   missing file (through $KVB_COMMON_LICENSES) is a clear error with nothing returned;
 *   `kvbound dump-kv`: --help, usage errors (exit 2), a missing text (exit 1), and with the model
 *   a 4-token dump whose files have the documented shapes (SKIP without the model). */
#include <sys/stat.h>

#include "cli_harness.h"
#include "kvb_error.h"
#include "model.h"
#include "npy.h"
#include "real_text.h"

static void skip(const char *name, const char *why) {
  printf("SKIP %s: %s\n", name, why);
  fflush(stdout);
}

static void test_sha(void) {
  char h[65];
  kvb_sha256_hex("", 0, h);
  CHECK(!strcmp(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), "sha256.empty", "%s", h);
  kvb_sha256_hex("abc", 3, h);
  CHECK(!strcmp(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "sha256.abc", "%s", h);
  const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 448 bits */
  kvb_sha256_hex(m2, strlen(m2), h);
  CHECK(!strcmp(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"), "sha256.two_blocks", "%s", h);
  /* one million 'a' (FIPS 180-4 example 3) */
  char *a = malloc(1000000);
  if (a) {
    memset(a, 'a', 1000000);
    kvb_sha256_hex(a, 1000000, h);
    CHECK(!strcmp(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"), "sha256.million_a", "%s", h);
    free(a);
  }
  /* lengths 55, 56, 63, 64, 65 (the padding's one- and two-block cases) against sha256sum */
  char out[256];
  if (sh("command -v sha256sum", out, sizeof out) != 0) {
    skip("sha256.padding_lengths", "sha256sum not found");
    return;
  }
  int bad = 0;
  static const size_t lens[] = {55, 56, 63, 64, 65, 119, 120};
  for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
    char buf[128], path[128], cmd[256];
    for (size_t j = 0; j < lens[i]; j++) buf[j] = (char)('A' + (j * 7 + i) % 26);
    snprintf(path, sizeof path, "%s/len%zu", tmp, lens[i]);
    FILE *f = fopen(path, "wb");
    if (!f) continue;
    fwrite(buf, 1, lens[i], f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "sha256sum %s", path);
    sh(cmd, out, sizeof out);
    kvb_sha256_hex(buf, lens[i], h);
    bad += strncmp(out, h, 64) != 0;
  }
  CHECK(bad == 0, "sha256.padding_lengths", "%d of 7 lengths differ from sha256sum", bad);
}

static void test_text(void) {
  char *buf = NULL, h[65];
  size_t len = 0;
  if (access(KVB_TEXT_GPL3, R_OK) != 0 || access(KVB_TEXT_GFDL13, R_OK) != 0) {
    skip("text.licenses", "/usr/share/common-licenses/GPL-3 or GFDL-1.3 missing (base-files)");
  } else {
    int st = kvb_text_read(KVB_TEXT_LICENSES, &buf, &len);
    if (!st) kvb_sha256_hex(buf, len, h);
    CHECK(!st && len == 58104 && !strcmp(h, KVB_TEXT_LICENSES_SHA256), "text.licenses",
          "status %d, %zu bytes: %s", st, len, st ? kvb_strerror_last() : h);
    free(buf), buf = NULL;
    /* a copy with one byte changed in GFDL-1.3 is refused and names the file */
    char cmd[512], out[512];
    snprintf(cmd, sizeof cmd, "cp %s %s/GPL-3 && sed 's/Free Documentation/Free  Documentation/' %s > %s/GFDL-1.3",
             KVB_TEXT_GPL3, tmp, KVB_TEXT_GFDL13, tmp);
    sh(cmd, out, sizeof out);
    setenv("KVB_COMMON_LICENSES", tmp, 1);
    st = kvb_text_read(KVB_TEXT_LICENSES, &buf, &len);
    CHECK(st == KVB_EFORMAT && !buf && strstr(kvb_strerror_last(), "GFDL-1.3") &&
              strstr(kvb_strerror_last(), KVB_TEXT_GFDL13_SHA256),
          "text.licenses_changed_refused", "status %d: %s", st, kvb_strerror_last());
    snprintf(cmd, sizeof cmd, "rm -f %s/GFDL-1.3", tmp);
    sh(cmd, out, sizeof out);
    st = kvb_text_read(KVB_TEXT_LICENSES, &buf, &len);
    CHECK(st == KVB_ENOTFOUND && !buf && strstr(kvb_strerror_last(), "base-files"),
          "text.licenses_missing_refused", "status %d: %s", st, kvb_strerror_last());
    unsetenv("KVB_COMMON_LICENSES");
  }
  char path[128];
  snprintf(path, sizeof path, "%s/plain.txt", tmp);
  write_file(path, "Hello, world.\n");
  int st = kvb_text_read(path, &buf, &len);
  CHECK(!st && len == 14 && !memcmp(buf, "Hello, world.\n", 14), "text.file", "status %d", st);
  free(buf), buf = NULL;
  snprintf(path, sizeof path, "%s/absent.txt", tmp);
  st = kvb_text_read(path, &buf, &len);
  CHECK(st && !buf, "text.file_missing", "status %d", st);
}

static void test_dump_cli(void) {
  char cmd[1024], out[4096];
  snprintf(cmd, sizeof cmd, "%s dump-kv --help", kvbound);
  int rc = sh(cmd, out, sizeof out);
  CHECK(rc == 0 && strstr(out, "--tokens") && strstr(out, "debian-licenses"), "dump_kv.help", "rc %d: %s", rc, out);
  static const char *const bad[] = {"", "--text x", "--out d", "--text x --out d --tokens 0",
                                    "--text x --out d --tokens 9000", "--text x --out d --tokens 5q",
                                    "--text x --out d --bogus 1", "--text"};
  int wrong = 0;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(cmd, sizeof cmd, "%s dump-kv %s", kvbound, bad[i]);
    rc = sh(cmd, out, sizeof out);
    if (rc != 2 || !strstr(out, "dump-kv")) {
      wrong++;
      printf("    '%s': rc %d: %s\n", bad[i], rc, out);
    }
  }
  CHECK(wrong == 0, "dump_kv.usage_errors", "%d usage errors not refused with exit 2", wrong);
  snprintf(cmd, sizeof cmd, "%s dump-kv --text %s/absent.txt --out %s/d0", kvbound, tmp, tmp);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 1 && strstr(out, "absent.txt"), "dump_kv.missing_text", "rc %d: %s", rc, out);
  /* a FIFO as --text: refused at once (opening one without a writer used to block forever;
   * timeout's 124 is that hang) */
  char fifo[160];
  snprintf(fifo, sizeof fifo, "%s/fifo.txt", tmp);
  if (mkfifo(fifo, 0600) == 0) {
    snprintf(cmd, sizeof cmd, "timeout 20 %s dump-kv --text %s --tokens 4 --out %s/d1", kvbound, fifo, tmp);
    rc = sh(cmd, out, sizeof out);
    CHECK(rc == 1 && strstr(out, "not a regular file"), "dump_kv.fifo_text_refused",
          "rc %d (124: it hung): %s", rc, out);
    unlink(fifo);
  }
  if (kvb_model_available() != KVB_OK) {
    skip("dump_kv.shapes", kvb_strerror_last());
    return;
  }
  snprintf(cmd, sizeof cmd, "%s dump-kv --text debian-licenses --tokens 4 --out %s/d", kvbound, tmp);
  rc = sh(cmd, out, sizeof out);
  int ok = rc == 0;
  for (int l = 0; ok && l < 30; l += 29) {
    static const char q[3] = {'q', 'k', 'v'};
    for (int i = 0; i < 3 && ok; i++) {
      char p[256];
      snprintf(p, sizeof p, "%s/d/layer%02d_%c.npy", tmp, l, q[i]);
      kvb_npy_array a;
      memset(&a, 0, sizeof a);
      ok = !kvb_npy_read(p, &a) && a.ndim == 3 && a.shape[0] == (i ? 3u : 9u) && a.shape[1] == 4 &&
           a.shape[2] == 64;
      kvb_npy_free(&a);
    }
  }
  char tp[256];
  snprintf(tp, sizeof tp, "%s/d/tokens.txt", tmp);
  char *tok = read_file(tp);
  int lines = 0;
  for (char *c = tok; c && *c; c++) lines += *c == '\n';
  free(tok);
  CHECK(ok && lines == 4, "dump_kv.shapes", "rc %d, %d token lines: %s", rc, lines, out);
  /* an existing file as --out is refused */
  snprintf(cmd, sizeof cmd, "%s dump-kv --text debian-licenses --tokens 4 --out %s", kvbound, tp);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 1 && strstr(out, "not a directory"), "dump_kv.out_is_file", "rc %d: %s", rc, out);
}

int main(int argc, char **argv) {
  (void)argc;
  if (cli_harness_init(argv[0], "/tmp/kvb-realtext-XXXXXX", "test_real_text")) return 1;
  test_sha();
  test_text();
  test_dump_cli();
  char cmd[128], out[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  sh(cmd, out, sizeof out);
  UNIT_EXIT();
}

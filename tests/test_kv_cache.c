/* test_kv_cache.c — the model streams' disk cache is keyed by content and build and verified
 * before it is read (src/model/kv_cache.h): the model file's SHA-256 memo follows the file (a
 * same-size rewrite is hashed again), the key changes with the model's bytes, the text, the
 * token count; a sealed entry is valid only for its own key with its files at their recorded
 * sizes; and, with the real model present, a planted stale entry (another build's key, another
 * layer's bytes of the same size), a truncated file and a corrupt .npy header are each ignored
 * and rebuilt: the stream equals the first one's bytes every time. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_id.h"
#include "kv_cache.h"
#include "kvb_error.h"
#include "model.h"
#include "params.h"
#include "pcg32.h"
#include "sha256.h"
#include "stream.h"
#include "unit.h"

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) fputs(text, f), fclose(f);
}

static char tmp[64];

static void test_memo(void) {
  char file[128], memo[128], h1[65], h2[65], h3[65], want[65];
  snprintf(file, sizeof file, "%s/model.bin", tmp);
  snprintf(memo, sizeof memo, "%s/ids", tmp);
  put(file, "the first model's bytes");
  int st = kvb_file_sha256_memo(file, memo, h1);
  kvb_sha256_file(file, want, NULL);
  st |= kvb_file_sha256_memo(file, memo, h2); /* from the memo */
  CHECK(st == 0 && strcmp(h1, want) == 0 && strcmp(h2, want) == 0,
        "kv_cache: the memo gives the file's SHA-256", "%s %s %s", h1, h2, want);
  /* the same size, other bytes, the mtime put back: still hashed again (ctime moved) */
  struct stat sb;
  stat(file, &sb);
  nanosleep(&(struct timespec){0, 20000000}, NULL);
  put(file, "the other model's bytes");
  struct timespec ts[2] = {sb.st_atim, sb.st_mtim};
  utimensat(AT_FDCWD, file, ts, 0);
  st = kvb_file_sha256_memo(file, memo, h3);
  kvb_sha256_file(file, want, NULL);
  CHECK(st == 0 && strcmp(h3, want) == 0 && strcmp(h3, h1) != 0,
        "kv_cache: a same-size rewrite with the old mtime is hashed again", "%s vs %s", h3, want);
}

static void test_key(void) {
  char k[6][1024];
  const char *a = "aaaa...", *b = "bbbb...";
  int st = kvb_kv_cache_key("smollm2", a, "text", 4, 0, 1, "a2", k[0], sizeof k[0]);
  st |= kvb_kv_cache_key("smollm2", b, "text", 4, 0, 1, "a2", k[1], sizeof k[1]);
  st |= kvb_kv_cache_key("smollm2", a, "texT", 4, 0, 1, "a2", k[2], sizeof k[2]);
  st |= kvb_kv_cache_key("smollm2", a, "text", 4, 16, 1, "a2", k[3], sizeof k[3]);
  st |= kvb_kv_cache_key("smollm2", a, "text", 4, 0, 2, "a2", k[4], sizeof k[4]);
  st |= kvb_kv_cache_key("gemma3", a, "text", 4, 0, 1, "a2", k[5], sizeof k[5]);
  int distinct = 1;
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < i; j++) distinct &= strcmp(k[i], k[j]) != 0;
  char dir0[256], dir1[256];
  kvb_kv_cache_dir("/r", k[0], dir0, sizeof dir0);
  kvb_kv_cache_dir("/r", k[1], dir1, sizeof dir1);
  CHECK(st == 0 && distinct && strstr(k[0], kvb_build_source_hash()) &&
            strstr(k[0], kvb_build_version()) && strlen(kvb_build_source_hash()) == 64 &&
            strcmp(dir0, dir1) != 0,
        "kv_cache: the key names the model's hash, text, tokens, BLAS threads, model, version and "
        "source hash", "st %d distinct %d: %s", st, distinct, k[0]);
}

static void test_entry(void) {
  char dir[128], f[3][160], key[256], other[256];
  snprintf(dir, sizeof dir, "%s/entry", tmp);
  mkdir(dir, 0777);
  const char *files[3] = {f[0], f[1], f[2]};
  for (int i = 0; i < 3; i++) {
    snprintf(f[i], sizeof f[i], "%s/layer00_%c.npy", dir, "qkv"[i]);
    put(f[i], i == 0 ? "0123456789" : "abcdef");
  }
  snprintf(key, sizeof key, "model smollm2 X\ntext Y\n");
  snprintf(other, sizeof other, "model smollm2 Z\ntext Y\n");
  int st = kvb_kv_cache_seal(dir, key);
  CHECK(st == 0 && kvb_kv_cache_valid(dir, key, files, 3), "kv_cache: a sealed entry is valid",
        "st %d", st);
  CHECK(!kvb_kv_cache_valid(dir, other, files, 3), "kv_cache: an entry of another key is not",
        "valid");
  put(f[1], "abc");
  CHECK(!kvb_kv_cache_valid(dir, key, files, 3), "kv_cache: a truncated file invalidates it",
        "valid");
  put(f[1], "abcdef");
  char m[200];
  snprintf(m, sizeof m, "%s/KEY", dir);
  put(m, "kvbound kv cache 2\nmodel smollm2 X\n");
  CHECK(!kvb_kv_cache_valid(dir, key, files, 3), "kv_cache: a cut manifest invalidates it",
        "valid");
  unlink(m);
  CHECK(!kvb_kv_cache_valid(dir, key, files, 3), "kv_cache: no manifest (unfinished): not valid",
        "valid");
  kvb_kv_cache_discard(dir);
  CHECK(access(dir, F_OK) != 0, "kv_cache: discard removes the entry", "still there");
}

/* The real-model part: a stream of layer 7, head 4 of a fresh text, read again after each
 * damage to its entry. */
extern const kvb_stream_type kvb_stream_model;
static double *gen(const char *text, int *st, size_t *n, char *why, size_t cap) {
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set_str(&p, "text", text);
  kvb_params_set(&p, "layer", 7);
  kvb_params_set(&p, "head", 4);
  kvb_stream *s = NULL;
  gsl_rng *rng = kvb_rng_alloc_substream(1, 0);
  *st = kvb_stream_generate_type(&kvb_stream_model, &p, rng, &s);
  gsl_rng_free(rng);
  snprintf(why, cap, "%s", *st ? kvb_strerror_last() : "");
  double *out = NULL;
  *n = s ? s->n : 0;
  if (!*st && s) {
    out = malloc(3 * s->n * 64 * sizeof *out);
    memcpy(out, s->Q, s->n * 64 * sizeof *out);
    memcpy(out + s->n * 64, s->K, s->n * 64 * sizeof *out);
    memcpy(out + 2 * s->n * 64, s->V, s->n * 64 * sizeof *out);
  }
  kvb_stream_free(s);
  return out;
}

static int same(const double *a, const double *b, size_t n) {
  return a && b && memcmp(a, b, 3 * n * 64 * sizeof *a) == 0;
}

static void copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[4096];
  size_t r;
  while (a && b && (r = fread(buf, 1, sizeof buf, a)) > 0) fwrite(buf, 1, r, b);
  if (a) fclose(a);
  if (b) fclose(b);
}

static void test_real(void) {
  if (kvb_model_available()) {
    printf("SKIP kv_cache: the real-model entry checks (no SmolLM2 model)\n");
    kvb_error_clear();
    return;
  }
  char text[128], why[512];
  snprintf(text, sizeof text, "%s/text.txt", tmp);
  char words[256];
  snprintf(words, sizeof words, "A fresh text for the cache test %s, short on purpose.", tmp + 5);
  put(text, words);
  int st;
  size_t n0, n;
  double *d0 = gen(text, &st, &n0, why, sizeof why);
  CHECK(d0 != NULL, "kv_cache: the model stream is built", "%s", why);
  if (!d0) return;
  /* find its entry: the manifest naming this text's SHA-256 */
  char mpath[4096], root[4200], th[65], entry[4400] = "";
  kvb_model_default_path(mpath, sizeof mpath);
  *strrchr(mpath, '/') = 0;
  snprintf(root, sizeof root, "%s/%s", mpath, KVB_KV_CACHE_SUBDIR);
  kvb_sha256_hex(words, strlen(words), th);
  char cmd[20000], out[4400];
  snprintf(cmd, sizeof cmd, "grep -l 'text %s' %s/*/KEY 2>/dev/null | head -1", th, root);
  FILE *pp = popen(cmd, "r");
  if (pp && fgets(out, sizeof out, pp)) {
    out[strcspn(out, "\n")] = 0;
    snprintf(entry, sizeof entry, "%.*s", (int)(strlen(out) - 4), out); /* drop "/KEY" */
  }
  if (pp) pclose(pp);
  CHECK(entry[0], "kv_cache: the entry's manifest names the text's SHA-256", "none in %s", root);
  if (!entry[0]) return free(d0);
  char q7[4500], q8[4500], k7[4500], v7[4500], key[4500];
  snprintf(q7, sizeof q7, "%s/layer07_q.npy", entry);
  snprintf(q8, sizeof q8, "%s/layer08_q.npy", entry);
  snprintf(k7, sizeof k7, "%s/layer07_k.npy", entry);
  snprintf(v7, sizeof v7, "%s/layer07_v.npy", entry);
  snprintf(key, sizeof key, "%s/KEY", entry);

  /* a stale entry: another build's key (its source hash changed) and another layer's bytes of
   * the same size in layer07_q.npy */
  copy_file(q8, q7);
  snprintf(cmd, sizeof cmd, "sed -i 's/^kvbound \\([0-9.]*\\) [0-9a-f]\\{64\\}$/kvbound \\1 %064d/' %s "
           "&& grep -q '^kvbound [0-9.]* 0\\{64\\}$' %s", 0, key, key);
  int rc = system(cmd);
  double *d1 = gen(text, &st, &n, why, sizeof why);
  CHECK(rc == 0 && same(d0, d1, n0) && n == n0,
        "kv_cache: a planted stale entry (another build's key, same-size other bytes) is rebuilt, "
        "not read", "rc %d st %d: %s", rc, st, why);
  /* a truncated file under a valid manifest */
  truncate(k7, 100);
  double *d2 = gen(text, &st, &n, why, sizeof why);
  CHECK(same(d0, d2, n0), "kv_cache: a truncated entry is rebuilt", "st %d: %s", st, why);
  /* a corrupt .npy header of the recorded size */
  FILE *f = fopen(v7, "r+b");
  if (f) fputs("XXXXXX", f), fclose(f);
  double *d3 = gen(text, &st, &n, why, sizeof why);
  CHECK(same(d0, d3, n0), "kv_cache: a corrupt .npy header is rebuilt", "st %d: %s", st, why);
  kvb_kv_cache_discard(entry);
  free(d0), free(d1), free(d2), free(d3);
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/kvb-kvcache-XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  test_memo();
  test_key();
  test_entry();
  test_real();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  if (system(cmd)) return 1;
  UNIT_EXIT();
}

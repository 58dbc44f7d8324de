/* test_model_gguf.c — the GGUF reader on hand-made files (a valid one with every metadata type,
 * then each malformation gguf.h promises to reject: every truncation, bad magic, another
 * version, absurd counts, lengths, dimensions and offsets, unknown types, misalignment,
 * duplicates, and random byte corruption), and dequantization of hand-built Q4_0, Q4_1, Q8_0,
 * F16 and F32 blocks against values computed by hand. Needs no model file. */
#include "gguf.h"
#include "kvb_error.h"
#include "model.h"
#include "pcg32.h"
#include "unit.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gguf_write.h"
static unsigned char *find(unsigned char *h, size_t n, const char *needle, size_t k) {
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(h + i, needle, k) == 0) return h + i;
  return NULL;
}
static void patch64(unsigned char *b, size_t at, uint64_t v) { for (int i = 0; i < 8; i++) b[at + i] = (unsigned char)(v >> 8 * i); }
static void patch32(unsigned char *b, size_t at, uint32_t v) { for (int i = 0; i < 4; i++) b[at + i] = (unsigned char)(v >> 8 * i); }

/* Offsets of fields the malformation tests patch. */
typedef struct {
  size_t version, n_tensors, n_kv, key0_len, type0, arr_count, arr_type, bool_val, align_val;
  size_t t0_ndim, t0_dim0, t0_type, t0_off, t1_off, t1_dim0, data;
} offs;

/* A valid file: 8 metadata entries of every kind, tensors "a" (F32 [4]) and "b" (Q8_0 [32, 2]). */
static unsigned char *valid(size_t *len, offs *o) {
  wbuf w = {0};
  put(&w, "GGUF", 4);
  o->version = w.n; u32(&w, 3);
  o->n_tensors = w.n; u64(&w, 2);
  o->n_kv = w.n; u64(&w, 8);
  o->key0_len = w.n; str(&w, "general.architecture"); o->type0 = w.n; u32(&w, KVB_GGUF_STRING); str(&w, "llama");
  str(&w, "n.u32"); u32(&w, KVB_GGUF_UINT32); u32(&w, 576);
  str(&w, "n.i8"); u32(&w, KVB_GGUF_INT8); put(&w, "\xfe", 1);
  str(&w, "n.f32"); u32(&w, KVB_GGUF_FLOAT32); f32(&w, 1e-5f);
  str(&w, "n.bool"); u32(&w, KVB_GGUF_BOOL); o->bool_val = w.n; put(&w, "\x01", 1);
  str(&w, "a.str"); u32(&w, KVB_GGUF_ARRAY); o->arr_type = w.n; u32(&w, KVB_GGUF_STRING);
  o->arr_count = w.n; u64(&w, 3); str(&w, "x"); str(&w, ""); str(&w, "\xc4\xa0the");
  str(&w, "a.nested"); u32(&w, KVB_GGUF_ARRAY); u32(&w, KVB_GGUF_ARRAY); u64(&w, 2);
  u32(&w, KVB_GGUF_INT16); u64(&w, 1); put(&w, "\x05\x00", 2);
  u32(&w, KVB_GGUF_STRING); u64(&w, 1); str(&w, "y");
  str(&w, "general.alignment"); u32(&w, KVB_GGUF_UINT32); o->align_val = w.n; u32(&w, 32);
  str(&w, "a"); o->t0_ndim = w.n; u32(&w, 1); o->t0_dim0 = w.n; u64(&w, 4); o->t0_type = w.n; u32(&w, KVB_GGML_F32); o->t0_off = w.n; u64(&w, 0);
  str(&w, "b"); u32(&w, 2); o->t1_dim0 = w.n; u64(&w, 32); u64(&w, 2); u32(&w, KVB_GGML_Q8_0); o->t1_off = w.n; u64(&w, 32);
  while (w.n % 32) put(&w, "\0", 1);
  o->data = w.n;
  f32(&w, 1); f32(&w, -2); f32(&w, 0.5f); f32(&w, 3);
  while (w.n % 32) put(&w, "\0", 1);
  for (int blk = 0; blk < 2; blk++) {
    put(&w, "\x00\x3c", 2); /* fp16 1.0 */
    for (int j = 0; j < 32; j++) { signed char q = (signed char)(j - 16 + blk); put(&w, &q, 1); }
  }
  *len = w.n;
  return w.b;
}

/* A malformed image must be refused with KVB_EFORMAT, a message, and a zeroed output. */
static int rejected(const unsigned char *b, size_t len, const char *want) {
  kvb_gguf g;
  kvb_error_clear();
  int st = kvb_gguf_parse(b, len, &g);
  const char *msg = kvb_strerror_last();
  int ok = st == KVB_EFORMAT && msg[0] && g.kv == NULL && g.tensors == NULL;
  if (ok && want && !strstr(msg, want)) ok = 0;
  if (!ok) printf("  (status %d, message \"%s\", wanted \"%s\")\n", st, msg, want ? want : "");
  if (st == KVB_OK) kvb_gguf_free(&g);
  return ok;
}

static void test_valid(void) {
  size_t len;
  offs o;
  unsigned char *b = valid(&len, &o);
  kvb_gguf g;
  int st = kvb_gguf_parse(b, len, &g);
  CHECK(st == KVB_OK, "gguf.valid_parses", "status %d: %s", st, kvb_strerror_last());
  if (st) { free(b); return; }
  const char *s = NULL;
  uint64_t u = 0;
  double f = 0;
  const kvb_gguf_kv *kv;
  CHECK(kvb_gguf_get_str(&g, "general.architecture", &s) == KVB_OK && strcmp(s, "llama") == 0 &&
            kvb_gguf_get_uint(&g, "n.u32", &u) == KVB_OK && u == 576 &&
            kvb_gguf_get_float(&g, "n.f32", &f) == KVB_OK && f == (double)1e-5f,
        "gguf.scalars", "str %s u %llu f %g", s ? s : "(null)", (unsigned long long)u, f);
  kv = kvb_gguf_find(&g, "n.i8");
  CHECK(kv && kv->num.i == -2 && kvb_gguf_get_uint(&g, "n.i8", &u) == KVB_EFORMAT,
        "gguf.signed_int8_and_negative_refused_as_uint", "i8 %lld", kv ? (long long)kv->num.i : 0);
  kv = kvb_gguf_find(&g, "n.bool");
  CHECK(kv && kv->type == KVB_GGUF_BOOL && kv->num.u == 1, "gguf.bool", "bool wrong");
  kv = kvb_gguf_find(&g, "a.str");
  CHECK(kv && kv->arr_type == KVB_GGUF_STRING && kv->arr_n == 3 && strcmp(kv->arr_str[0], "x") == 0 &&
            kv->arr_str_len[1] == 0 && strcmp(kv->arr_str[2], "\xc4\xa0the") == 0,
        "gguf.string_array", "string array wrong");
  kv = kvb_gguf_find(&g, "a.nested");
  CHECK(kv && kv->arr_type == KVB_GGUF_ARRAY && kv->arr_n == 2, "gguf.nested_array_checked",
        "nested array wrong");
  CHECK(kvb_gguf_get_uint(&g, "absent", &u) == KVB_ENOTFOUND &&
            kvb_gguf_get_str(&g, "n.u32", &s) == KVB_EFORMAT,
        "gguf.lookup_errors", "absent key or wrong type not refused");
  const kvb_gguf_tensor *a = kvb_gguf_tensor_find(&g, "a"), *t = kvb_gguf_tensor_find(&g, "b");
  CHECK(a && t && g.alignment == 32 && g.data_offset == o.data && a->data == b + o.data &&
            t->data == b + o.data + 32 && t->n_elements == 64 && t->n_bytes == 68 && t->ne[1] == 2,
        "gguf.tensor_table", "tensor table wrong");
  float out[64];
  int dq = t ? kvb_gguf_dequant(t->type, t->data, t->n_elements, out) : -1;
  CHECK(dq == KVB_OK && out[0] == -16 && out[31] == 15 && out[32] == -15 && out[63] == 16,
        "gguf.tensor_dequant_q8_0", "status %d out %g %g %g %g", dq, out[0], out[31], out[32], out[63]);
  kvb_gguf_free(&g);
  kvb_gguf_free(&g); /* twice is harmless */

  /* Every truncation is an error with a message. */
  int bad = 0;
  for (size_t n = 0; n < len; n++) bad += !rejected(b, n, NULL);
  CHECK(bad == 0, "gguf.every_truncation_rejected", "%d of %zu truncations not rejected", bad, len);

  struct { const char *name; size_t at; int width; uint64_t v; const char *want; } m[] = {
      {"gguf.bad_magic", 0, 4, 0x47475546, "magic"}, /* the bytes "FUGG" */
      {"gguf.version_2", o.version, 4, 2, "version 2"},
      {"gguf.version_4", o.version, 4, 4, "version 4"},
      {"gguf.absurd_tensor_count", o.n_tensors, 8, (uint64_t)1 << 62, "tensor count"},
      {"gguf.absurd_kv_count", o.n_kv, 8, UINT64_MAX, "metadata count"},
      {"gguf.kv_count_too_high", o.n_kv, 8, 9, NULL},
      {"gguf.absurd_key_length", o.key0_len, 8, (uint64_t)1 << 40, "truncated"},
      {"gguf.unknown_value_type", o.type0, 4, 13, "unknown value type"},
      {"gguf.absurd_array_count", o.arr_count, 8, (uint64_t)1 << 61, "exceeds"},
      {"gguf.unknown_array_type", o.arr_type, 4, 77, "unknown array element type"},
      {"gguf.bool_not_0_1", o.bool_val, 1, 2, "bool"},
      {"gguf.alignment_not_power_of_two", o.align_val, 4, 24, "alignment"},
      {"gguf.alignment_zero", o.align_val, 4, 0, "alignment"},
      {"gguf.ndim_zero", o.t0_ndim, 4, 0, "dimensions"},
      {"gguf.ndim_five", o.t0_ndim, 4, 5, "dimensions"},
      {"gguf.dim_zero", o.t0_dim0, 8, 0, "dimension 0"},
      {"gguf.dim_absurd", o.t0_dim0, 8, UINT64_MAX, "dimension 0"},
      {"gguf.dim_past_end", o.t0_dim0, 8, 1000, "past the end"},
      {"gguf.unknown_tensor_type", o.t0_type, 4, 99, "unknown ggml type"},
      {"gguf.misaligned_offset", o.t0_off, 8, 4, "not aligned"},
      {"gguf.offset_past_end", o.t1_off, 8, 64 * 32, "past the end"},
      {"gguf.offset_absurd", o.t1_off, 8, UINT64_MAX - 31, "past the end"},
      {"gguf.row_not_whole_blocks", o.t1_dim0, 8, 16, "multiple of the Q8_0 block"},
  };
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    unsigned char *c = malloc(len);
    memcpy(c, b, len);
    if (m[i].width == 8) patch64(c, m[i].at, m[i].v);
    else if (m[i].width == 4) patch32(c, m[i].at, (uint32_t)m[i].v);
    else c[m[i].at] = (unsigned char)m[i].v;
    CHECK(rejected(c, len, m[i].want), m[i].name, "not rejected as promised");
    free(c);
  }
  { /* duplicate key: rename "n.u32" to "n.i8"'s twin by renaming the second entry's key */
    unsigned char *c = malloc(len);
    memcpy(c, b, len);
    unsigned char *p = find(c, len, "n.u32", 5);
    memcpy(p, "n.f32", 5);
    CHECK(rejected(c, len, "twice"), "gguf.duplicate_key", "not rejected");
    p = find(c, len, "n.f32", 5);
    memcpy(p, "n.u32", 5);
    p = find(c + o.t0_ndim, len - o.t0_ndim, "\x01\x00\x00\x00\x00\x00\x00\x00" "b", 9);
    if (p) p[8] = 'a';
    CHECK(p && rejected(c, len, "twice"), "gguf.duplicate_tensor", "not rejected");
    free(c);
  }
  { /* random corruption: 3 random bytes at a time, 3000 times; each parse succeeds or is
     * refused with a message (ASan/valgrind see out-of-bounds reads). */
    kvb_pcg32 r;
    kvb_pcg32_seed(&r, 12, 0);
    int fails = 0, ok = 0;
    unsigned char *c = malloc(len);
    for (int it = 0; it < 3000; it++) {
      memcpy(c, b, len);
      for (int j = 0; j < 3; j++) c[kvb_pcg32_bounded(&r, (uint32_t)len)] = (unsigned char)kvb_pcg32_next(&r);
      kvb_gguf h;
      kvb_error_clear();
      int s2 = kvb_gguf_parse(c, len, &h);
      if (s2 == KVB_OK) { ok++; kvb_gguf_free(&h); }
      else if (s2 != KVB_EFORMAT || !kvb_strerror_last()[0] || h.kv) fails++;
    }
    free(c);
    CHECK(fails == 0, "gguf.random_corruption_ok_or_clear_error", "%d bad outcomes (%d parsed)", fails, ok);
  }
  free(b);
  kvb_gguf g2;
  CHECK(kvb_gguf_read("/nonexistent/x.gguf", &g2) == KVB_EIO && strstr(kvb_strerror_last(), "/nonexistent"),
        "gguf.missing_file_eio", "%s", kvb_strerror_last());
}

static uint16_t half_bits(float f) { /* exact for the values used below (small dyadics) */
  if (f == 0) return 0;
  int e;
  float m = frexpf(fabsf(f), &e); /* f = m·2^e, m in [0.5, 1) */
  uint16_t bits = (uint16_t)(((e + 14) << 10) | ((int)(m * 2048) - 1024));
  return f < 0 ? (uint16_t)(bits | 0x8000) : bits;
}

static void test_dequant(void) {
  CHECK(kvb_half_to_float(0x3c00) == 1.0f && kvb_half_to_float(0xc000) == -2.0f &&
            kvb_half_to_float(0x0001) == ldexpf(1, -24) && kvb_half_to_float(0x7bff) == 65504.0f &&
            isinf(kvb_half_to_float(0x7c00)) && isnan(kvb_half_to_float(0x7e00)) &&
            half_bits(0.25f) == 0x3400 && half_bits(-1.5f) == 0xbe00,
        "dequant.half", "fp16 conversion wrong");
  /* Q4_1: d = 0.25, m = -1.5; byte j = (j) | (15 - j) << 4: element j = 0.25·j − 1.5,
   * element j + 16 = 0.25·(15 − j) − 1.5. */
  unsigned char q41[2 * 20];
  for (int blk = 0; blk < 2; blk++) {
    unsigned char *p = q41 + 20 * blk;
    uint16_t d = half_bits(0.25f), m = half_bits(blk ? 2.0f : -1.5f);
    p[0] = (unsigned char)d; p[1] = (unsigned char)(d >> 8);
    p[2] = (unsigned char)m; p[3] = (unsigned char)(m >> 8);
    for (int j = 0; j < 16; j++) p[4 + j] = (unsigned char)(j | (15 - j) << 4);
  }
  float out[64];
  int st = kvb_gguf_dequant(KVB_GGML_Q4_1, q41, 64, out), bad = 0;
  for (int blk = 0; blk < 2; blk++)
    for (int j = 0; j < 16; j++) {
      float mm = blk ? 2.0f : -1.5f;
      bad += out[32 * blk + j] != 0.25f * (float)j + mm;
      bad += out[32 * blk + j + 16] != 0.25f * (float)(15 - j) + mm;
    }
  CHECK(st == KVB_OK && bad == 0, "dequant.q4_1_blocks", "status %d, %d wrong (e.g. %g %g)", st, bad, out[0], out[16]);
  /* Q4_0: d = -0.5, nibble q -> -0.5·(q − 8) */
  unsigned char q40[18];
  uint16_t d0 = half_bits(-0.5f);
  q40[0] = (unsigned char)d0; q40[1] = (unsigned char)(d0 >> 8);
  for (int j = 0; j < 16; j++) q40[2 + j] = (unsigned char)(j | (15 - j) << 4);
  st = kvb_gguf_dequant(KVB_GGML_Q4_0, q40, 32, out);
  bad = 0;
  for (int j = 0; j < 16; j++) bad += out[j] != -0.5f * (float)(j - 8) || out[j + 16] != -0.5f * (float)(7 - j);
  CHECK(st == KVB_OK && bad == 0, "dequant.q4_0_block", "status %d, %d wrong", st, bad);
  /* Q8_0: d = 0.125, q = j − 100 (int8) */
  unsigned char q80[34];
  uint16_t d8 = half_bits(0.125f);
  q80[0] = (unsigned char)d8; q80[1] = (unsigned char)(d8 >> 8);
  for (int j = 0; j < 32; j++) q80[2 + j] = (unsigned char)(signed char)(j * 7 - 100);
  st = kvb_gguf_dequant(KVB_GGML_Q8_0, q80, 32, out);
  bad = 0;
  for (int j = 0; j < 32; j++) bad += out[j] != 0.125f * (float)(j * 7 - 100);
  CHECK(st == KVB_OK && bad == 0, "dequant.q8_0_block", "status %d, %d wrong", st, bad);
  float src[3] = {1.5f, -0.0f, 3e38f};
  st = kvb_gguf_dequant(KVB_GGML_F32, src, 3, out);
  CHECK(st == KVB_OK && memcmp(src, out, sizeof src) == 0, "dequant.f32_copy", "F32 not copied");
  CHECK(kvb_gguf_dequant(KVB_GGML_Q8_0, q80, 31, out) == KVB_EINVAL &&
            kvb_gguf_dequant(KVB_GGML_Q5_1, q80, 32, out) == KVB_EINVAL &&
            kvb_gguf_dequant(1234, q80, 32, out) != KVB_OK,
        "dequant.refuses_partial_blocks_and_unsupported_types", "not refused");
}

/* The model loader's errors need no model: a missing file names scripts/fetch-model, a GGUF
 * that is not a complete llama model is refused with a message. */
static void test_model_errors(void) {
  setenv("KVB_MODEL", "/nonexistent/model.gguf", 1);
  int st = kvb_model_available();
  CHECK(st == KVB_ENOTFOUND && strstr(kvb_strerror_last(), "scripts/fetch-model"),
        "model.missing_file_says_how_to_fetch", "status %d: %s", st, kvb_strerror_last());
  size_t len;
  offs o;
  unsigned char *b = valid(&len, &o);
  char path[] = "/tmp/kvb_test_model_XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (f) {
    fwrite(b, 1, len, f);
    fclose(f);
  }
  kvb_model m;
  st = kvb_model_load(path, &m);
  CHECK(f && st == KVB_EFORMAT && kvb_strerror_last()[0] && m.weights == NULL,
        "model.incomplete_gguf_refused", "status %d: %s", st, kvb_strerror_last());
  remove(path);
  free(b);
  unsetenv("KVB_MODEL");
}

/* A FIFO given as the model file is refused at once (fopen of one without a writer blocked
 * forever): read in a child that a 10 s alarm kills. */
static void test_fifo_refused(void) {
  char path[] = "/tmp/kvb-gguf-fifo-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return;
  close(fd);
  unlink(path);
  if (mkfifo(path, 0600) != 0) {
    printf("SKIP gguf.fifo_refused: mkfifo failed\n");
    return;
  }
  pid_t pid = fork();
  if (pid == 0) {
    alarm(10);
    kvb_gguf g;
    int st = kvb_gguf_read(path, &g);
    _exit(st == KVB_EINVAL && strstr(kvb_strerror_last(), "not a regular file") ? 0 : 1);
  }
  int ws = 0;
  int got = pid > 0 && waitpid(pid, &ws, 0) == pid;
  CHECK(got && WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "gguf.fifo_refused",
        "%s", !got ? "fork failed" : WIFSIGNALED(ws) ? "hung (killed after 10 s)" : "wrong status or message");
  unlink(path);
}

int main(void) {
  test_fifo_refused();
  test_model_errors();
  test_valid();
  test_dequant();
  UNIT_EXIT();
}

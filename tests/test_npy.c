/* test_npy.c — the .npy reader/writer and the "npy" stream: round trips through every format
 * version and dtype, exact float16 widening, and every malformed case npy.h promises to reject
 * with KVB_EFORMAT and a message naming the fault. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A v1/v2 image from a header text (padded with spaces to a multiple of 64, ended by '\n')
 * followed by nbytes of data. */
static unsigned char *image(int major, int minor, const char *hdr, const void *data, size_t nbytes,
                            size_t *len) {
  size_t pre = major == 1 ? 10 : 12;
  size_t total = (pre + strlen(hdr) + 1 + 63) / 64 * 64, hl = total - pre;
  unsigned char *b = malloc(total + nbytes + 1);
  memcpy(b, "\x93NUMPY", 6);
  b[6] = (unsigned char)major;
  b[7] = (unsigned char)minor;
  b[8] = (unsigned char)(hl & 0xff);
  b[9] = (unsigned char)(hl >> 8);
  if (pre == 12) b[10] = b[11] = 0;
  memset(b + pre, ' ', hl);
  memcpy(b + pre, hdr, strlen(hdr));
  b[total - 1] = '\n';
  if (nbytes) memcpy(b + total, data, nbytes);
  *len = total + nbytes;
  return b;
}

static void expect_bad(const unsigned char *b, size_t len, const char *name, const char *needle) {
  kvb_npy_array a;
  int st = kvb_npy_parse(b, len, &a);
  const char *msg = kvb_strerror_last();
  char label[128];
  snprintf(label, sizeof label, "npy rejects %s", name);
  CHECK(st == KVB_EFORMAT && strstr(msg, needle) && a.data == NULL, label,
        "status %s, message '%s' (wanted KVB_EFORMAT mentioning '%s')", kvb_status_name(st), msg,
        needle);
  if (st == KVB_OK) kvb_npy_free(&a);
}

static void bad_hdr(const char *hdr, size_t nbytes, const char *name, const char *needle) {
  double zeros[64] = {0};
  size_t len;
  unsigned char *b = image(1, 0, hdr, zeros, nbytes, &len);
  expect_bad(b, len, name, needle);
  free(b);
}

static void round_trips(void) {
  double d[60];
  for (int i = 0; i < 60; i++) d[i] = ldexp((double)(i * 37 % 61) - 30.0, (i % 7) - 3) + 1e-9 * i;
  size_t s2[2] = {6, 10}, s3[3] = {3, 4, 5};
  for (int ver = 1; ver <= 3; ver++) {
    for (int nd = 2; nd <= 3; nd++) {
      unsigned char *b;
      size_t len;
      int st = kvb_npy_serialize(d, (size_t)nd, nd == 2 ? s2 : s3, "<f8", ver, &b, &len);
      kvb_npy_array a;
      int st2 = st ? st : kvb_npy_parse(b, len, &a);
      int ok = st == 0 && st2 == 0 && a.ndim == (size_t)nd && a.count == 60 && a.version == ver &&
               a.itemsize == 8 && memcmp(a.data, d, sizeof d) == 0 && ((len - sizeof d) % 64) == 0;
      for (int i = 0; ok && i < nd; i++) ok = a.shape[i] == (nd == 2 ? s2 : s3)[i];
      char label[64];
      snprintf(label, sizeof label, "npy <f8 v%d.0 %d-d round trip is bit-exact", ver, nd);
      CHECK(ok, label, "status %d/%d: %s", st, st2, kvb_strerror_last());
      if (!st2 && !st) kvb_npy_free(&a);
      if (!st) free(b);
    }
  }
  /* <f4: values representable in float come back exactly. */
  double f[6] = {1.5, -0.25, 3e9, 1.0 / 1024, 0, -7};
  size_t s1[1] = {6};
  unsigned char *b;
  size_t len;
  kvb_npy_array a;
  int st = kvb_npy_serialize(f, 1, s1, "<f4", 2, &b, &len);
  int st2 = st ? st : kvb_npy_parse(b, len, &a);
  CHECK(!st && !st2 && a.itemsize == 4 && a.count == 6 && memcmp(a.data, f, sizeof f) == 0,
        "npy <f4 round trip of float-representable values is exact", "%s", kvb_strerror_last());
  if (!st2) kvb_npy_free(&a);
  if (!st) free(b);
  /* ...and a double is rounded to the nearest float. */
  double g = 0.1;
  st = kvb_npy_serialize(&g, 1, (size_t[]){1}, "<f4", 1, &b, &len);
  st2 = st ? st : kvb_npy_parse(b, len, &a);
  CHECK(!st && !st2 && a.data[0] == (double)0.1f, "npy <f4 writes the nearest float", "got %.17g",
        st2 ? NAN : a.data[0]);
  if (!st2) kvb_npy_free(&a);
  if (!st) free(b);
  /* Writer refuses what it cannot represent. */
  double bad[2] = {1, NAN};
  CHECK(kvb_npy_serialize(bad, 1, (size_t[]){2}, "<f8", 1, &b, &len) == KVB_EDOM,
        "npy writer rejects NaN", "%s", kvb_strerror_last());
  double big = 1e300;
  CHECK(kvb_npy_serialize(&big, 1, (size_t[]){1}, "<f4", 1, &b, &len) == KVB_EDOM,
        "npy writer rejects a value beyond float range as <f4", "%s", kvb_strerror_last());
  CHECK(kvb_npy_serialize(f, 0, s1, "<f8", 1, &b, &len) == KVB_EINVAL &&
            kvb_npy_serialize(f, 1, s1, "<i4", 1, &b, &len) == KVB_EINVAL &&
            kvb_npy_serialize(f, 1, s1, "<f8", 4, &b, &len) == KVB_EINVAL,
        "npy writer rejects ndim 0, dtype <i4, version 4", "%s", kvb_strerror_last());
}

static void halves(void) {
  /* bit pattern -> exact value */
  const unsigned pat[] = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x8000, 0x3555, 0x0000};
  const double val[] = {1.0, -2.0, 65504.0, ldexp(1, -24), ldexp(1023, -24), ldexp(1, -14),
                        -0.0, ldexp(1365, -12), 0.0};
  int ok = 1;
  for (size_t i = 0; i < sizeof pat / sizeof pat[0]; i++) {
    double h = kvb_half_to_double(pat[i]);
    if (h != val[i] || signbit(h) != signbit(val[i])) {
      ok = 0;
      printf("# half 0x%04x -> %.17g, want %.17g\n", pat[i], h, val[i]);
    }
  }
  CHECK(ok, "npy float16 widening is exact (normals, subnormals, signed zero, max)", "see above");
  CHECK(isinf(kvb_half_to_double(0x7c00)) && isnan(kvb_half_to_double(0x7e00)),
        "npy float16 0x7c00 is Inf and 0x7e00 is NaN", "wrong specials");
  unsigned char d[8] = {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00};
  size_t len;
  unsigned char *b = image(1, 0, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }",
                           d, 8, &len);
  kvb_npy_array a;
  int st = kvb_npy_parse(b, len, &a);
  CHECK(!st && a.count == 4 && a.itemsize == 2 && a.data[0] == 1 && a.data[1] == -2 &&
            a.data[2] == 65504 && a.data[3] == ldexp(1, -24),
        "npy reads a <f2 [2, 2] file exactly", "%s", kvb_strerror_last());
  if (!st) kvb_npy_free(&a);
  free(b);
  /* keys in another order, double quotes, no trailing comma: still the dict numpy means */
  double one[3] = {1, 2, 3};
  b = image(1, 0, "{\"shape\": (3,), \"fortran_order\": False, \"descr\": \"<f8\"}", one, 24, &len);
  st = kvb_npy_parse(b, len, &a);
  CHECK(!st && a.ndim == 1 && a.shape[0] == 3 && a.data[2] == 3,
        "npy accepts keys in any order with either quote", "%s", kvb_strerror_last());
  if (!st) kvb_npy_free(&a);
  free(b);
}

static void malformed(void) {
  const char *good = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  size_t len;
  double six[6] = {1, 2, 3, 4, 5, 6};
  unsigned char *b = image(1, 0, good, six, sizeof six, &len);
  expect_bad(b, 0, "an empty file", "bad magic");
  expect_bad(b, 7, "a 7-byte file", "bad magic");
  expect_bad(b, 9, "a file cut inside the header length", "header truncated");
  expect_bad(b, 40, "a file cut inside the header", "header truncated");
  expect_bad(b, len - 1, "a file one data byte short", "shape/data size mismatch");
  b[1] = 'X';
  expect_bad(b, len, "bad magic", "bad magic");
  b[1] = 'N';
  b[6] = 4;
  expect_bad(b, len, "format version 4.0", "version 4.0");
  b[6] = 1;
  b[7] = 1;
  expect_bad(b, len, "format version 1.1", "version 1.1");
  free(b);
  unsigned char *c = image(1, 0, good, six, sizeof six, &len);
  unsigned char *longer = malloc(len + 8);
  memcpy(longer, c, len);
  memset(longer + len, 0, 8);
  expect_bad(longer, len + 8, "trailing bytes after the data", "shape/data size mismatch");
  free(longer);
  free(c);
  c = image(2, 0, good, six, sizeof six, &len);
  c[11] = 0x7f; /* v2 header length near 2^31 */
  expect_bad(c, len, "a v2.0 header length beyond the file", "header truncated");
  free(c);
  bad_hdr("{'descr': '>f8', 'fortran_order': False, 'shape': (2, 3), }", 48, "big-endian >f8",
          "big-endian");
  bad_hdr("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", 24, "dtype <i4",
          "unsupported dtype");
  bad_hdr("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", 16, "dtype <c16",
          "unsupported dtype");
  bad_hdr("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", 8,
          "a structured dtype", "structured");
  bad_hdr("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", 48, "fortran_order True",
          "fortran_order is True");
  bad_hdr("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (2, 3), }", 48,
          "fortran_order Maybe", "neither True nor False");
  bad_hdr("{'descr': '<f8', 'shape': (2, 3), }", 48, "a missing fortran_order", "missing");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, }", 48, "a missing shape", "'shape' is missing");
  bad_hdr("{'fortran_order': False, 'shape': (2, 3), }", 48, "a missing descr", "'descr' is missing");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}", 48,
          "an unknown key", "unexpected key 'extra'");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 40,
          "shape (2, 3) with 5 elements of data", "shape/data size mismatch");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", 48,
          "a shape whose product overflows", "shape/data size mismatch");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 8,
          "a shape entry beyond 64 bits", "overflows");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1), }", 8, "4 dimensions",
          "more than 3 dimensions");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8, "a scalar shape ()",
          "scalar");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (2, -3), }", 48, "a negative dim",
          "non-negative integers");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': [2, 3], }", 48, "a list shape",
          "not a tuple");
  bad_hdr("['descr', '<f8']", 8, "a header that is not a dict", "does not start with '{'");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), } junk", 8,
          "text after the dict", "after the closing");
  bad_hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (1,)", 8, "an unterminated dict",
          "expected ',' or '}'");
  bad_hdr("{'descr: '<f8'}", 8, "an unterminated key", "expected");
  double nan1[1] = {NAN};
  b = image(1, 0, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", nan1, 8, &len);
  expect_bad(b, len, "a NaN element", "not finite");
  free(b);
  kvb_npy_array a;
  int st = kvb_npy_read("/nonexistent/kvbound/x.npy", &a);
  CHECK(st == KVB_EIO && strstr(kvb_strerror_last(), "/nonexistent/kvbound/x.npy"),
        "npy read of a missing file is KVB_EIO naming the path", "%s", kvb_strerror_last());
  CHECK(kvb_npy_parse(NULL, 5, &a) == KVB_ENULL && kvb_npy_parse((const unsigned char *)six, 5, NULL) == KVB_ENULL,
        "npy parse rejects NULL", "%s", kvb_strerror_last());
}

static void stream_from_files(void) {
  char dir[] = "/tmp/kvb-npy-XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(0, "npy stream temp dir", "mkdtemp failed");
    return;
  }
  char pq[64], pk[64], pv[64], pv2[64];
  snprintf(pq, sizeof pq, "%s/q.npy", dir);
  snprintf(pk, sizeof pk, "%s/k.npy", dir);
  snprintf(pv, sizeof pv, "%s/v.npy", dir);
  snprintf(pv2, sizeof pv2, "%s/v2.npy", dir);
  /* [heads=2, n=5, d=3] queries and keys; [2, 5, 4] values. */
  double Q[30], K[30], V[40];
  for (int i = 0; i < 30; i++) {
    Q[i] = 0.1 * i;
    K[i] = -0.2 * i;
  }
  for (int i = 0; i < 40; i++) V[i] = i;
  int w = kvb_npy_write(pq, Q, 3, (size_t[]){2, 5, 3}, "<f8", 1) |
          kvb_npy_write(pk, K, 3, (size_t[]){2, 5, 3}, "<f8", 2) |
          kvb_npy_write(pv, V, 3, (size_t[]){2, 5, 4}, "<f8", 3) |
          kvb_npy_write(pv2, V, 2, (size_t[]){4, 4}, "<f8", 1);
  CHECK(w == 0, "npy stream fixtures written", "%s", kvb_strerror_last());
  gsl_rng *rng = kvb_rng_alloc_substream(1, 0);
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set_str(&p, "q", pq);
  kvb_params_set_str(&p, "k", pk);
  kvb_params_set_str(&p, "v", pv);
  kvb_params_set(&p, "head", 1);
  kvb_stream *s = NULL;
  int st = kvb_stream_generate("npy", &p, rng, &s);
  CHECK(!st && s->n == 5 && s->d_key == 3 && s->d_value == 4 && s->Q[0] == Q[15] &&
            s->K[14] == K[29] && s->V[0] == V[20] && s->V[19] == V[39] && isnan(s->m),
        "npy stream loads head 1 of [heads, n, d] files", "%s", kvb_strerror_last());
  if (s) {
    double r = 0;
    for (size_t i = 0; i < 5; i++) r = fmax(r, kvb_norm2(s->Q + 3 * i, 3));
    CHECK(s->r == r, "npy stream records the largest query norm as r", "%g vs %g", s->r, r);
  }
  kvb_stream_free(s);
  s = NULL;
  kvb_params_set(&p, "n", 2);
  st = kvb_stream_generate("npy", &p, rng, &s);
  CHECK(!st && s->n == 2 && s->V[7] == V[27], "npy stream n=2 keeps the first two tokens", "%s",
        kvb_strerror_last());
  kvb_stream_free(s);
  s = NULL;
  kvb_params_set(&p, "n", 6);
  st = kvb_stream_generate("npy", &p, rng, &s);
  CHECK(st == KVB_EINVAL && !s, "npy stream rejects n beyond the files", "%s", kvb_strerror_last());
  kvb_params_set(&p, "n", 5);
  kvb_params_set(&p, "head", 2);
  st = kvb_stream_generate("npy", &p, rng, &s);
  CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "2 heads"),
        "npy stream rejects a head index out of range", "%s", kvb_strerror_last());
  kvb_params_set(&p, "head", 0);
  kvb_params_set(&p, "d_key", 4);
  st = kvb_stream_generate("npy", &p, rng, &s);
  CHECK(st == KVB_EDIM, "npy stream rejects a d_key that disagrees with the files", "%s",
        kvb_strerror_last());
  kvb_params_init(&p);
  kvb_params_set_str(&p, "q", pq);
  kvb_params_set_str(&p, "k", pk);
  kvb_params_set_str(&p, "v", pv2);
  kvb_params_set(&p, "head", 1);
  st = kvb_stream_generate("npy", &p, rng, &s);
  CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "2-d"),
        "npy stream: a 2-d value file with head 1 is an error", "%s", kvb_strerror_last());
  kvb_params_init(&p);
  kvb_params_set_str(&p, "q", pq);
  kvb_params_set_str(&p, "k", pk);
  st = kvb_stream_generate("npy", &p, rng, &s);
  CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "'v'"),
        "npy stream names a missing path parameter", "%s", kvb_strerror_last());
  kvb_params_set_str(&p, "v", "/nonexistent/v.npy");
  st = kvb_stream_generate("npy", &p, rng, &s);
  CHECK(st == KVB_EIO, "npy stream passes on an unreadable file as KVB_EIO", "%s",
        kvb_strerror_last());
  /* exact attention on the loaded stream equals attention on the arrays themselves */
  kvb_params_init(&p);
  kvb_params_set_str(&p, "q", pq);
  kvb_params_set_str(&p, "k", pk);
  kvb_params_set_str(&p, "v", pv);
  st = kvb_stream_generate("npy", &p, rng, &s);
  if (!st) {
    double z1[4], z2[4];
    kvb_attention_exact(5, 3, 4, s->K, s->V, s->Q + 6, 1.0, z1, NULL);
    kvb_attention_exact(5, 3, 4, K, V, Q + 6, 1.0, z2, NULL);
    CHECK(memcmp(z1, z2, sizeof z1) == 0, "npy stream head 0 feeds attention the file's rows",
          "differs");
    kvb_stream_free(s);
  } else {
    CHECK(0, "npy stream head 0 loads", "%s", kvb_strerror_last());
  }
  gsl_rng_free(rng);
  unlink(pq);
  unlink(pk);
  unlink(pv);
  unlink(pv2);
  rmdir(dir);
}

int main(void) {
  round_trips();
  halves();
  malformed();
  stream_from_files();
  UNIT_EXIT();
}

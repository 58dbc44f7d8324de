/* real_text.c — SHA-256 and the verified real text of the real-cache checks (real_text.h). */
#include "real_text.h"
#include "read_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvb_error.h"

/* ---- SHA-256, FIPS 180-4 §6.2 (written from the standard's description) ---- */
static const uint32_t sha_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha_block(uint32_t h[8], const unsigned char *p) {
  uint32_t w[64];
  for (int t = 0; t < 16; t++)
    w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 |
           (uint32_t)p[4 * t + 3];
  for (int t = 16; t < 64; t++) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int t = 0; t < 64; t++) {
    uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + sha_k[t] + w[t];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

void kvb_sha256_hex(const void *data, size_t len, char hex[65]) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const unsigned char *p = data;
  size_t full = len / 64 * 64;
  for (size_t i = 0; i < full; i += 64) sha_block(h, p + i);
  /* padding: 0x80, zeros, the bit length as a 64-bit big-endian integer */
  unsigned char tail[128] = {0};
  size_t r = len - full, tl = r < 56 ? 64 : 128;
  memcpy(tail, p + full, r);
  tail[r] = 0x80;
  uint64_t bits = (uint64_t)len * 8;
  for (int i = 0; i < 8; i++) tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
  for (size_t i = 0; i < tl; i += 64) sha_block(h, tail + i);
  for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", (unsigned)h[i]);
}

/* Appends the file at path to *buf (capacity *cap, length *len). */
static int append_file(const char *path, char **buf, size_t *len, size_t *cap, int *missing) {
  /* stat, not a trial open: opening a FIFO blocks until a writer comes (read_file.c) */
  struct stat sb;
  if (stat(path, &sb) != 0) {
    *missing = errno == ENOENT;
    return KVB_ERROR(*missing ? KVB_ENOTFOUND : KVB_EIO, "cannot open the text %s (%s)", path,
                     strerror(errno));
  }
  FILE *f = NULL;
  /* a regular file of at most KVB_TEXT_FILE_MAX bytes (read_file.h) */
  int st = kvb_open_regular(path, KVB_TEXT_FILE_MAX, "text", &f);
  if (st) return st;
  size_t r;
  for (;;) {
    if (*len == *cap) {
      size_t nc = *cap ? 2 * *cap : 1 << 16;
      char *nb = realloc(*buf, nc);
      if (!nb) {
        fclose(f);
        return KVB_ERROR(KVB_ENOMEM, "out of memory reading %s", path);
      }
      *buf = nb, *cap = nc;
    }
    if ((r = fread(*buf + *len, 1, *cap - *len, f)) == 0) break;
    *len += r;
    if (*len > KVB_TEXT_FILE_MAX) { /* it grew while being read */
      fclose(f);
      return KVB_ERROR(KVB_EINVAL, "text %s: more than the limit of %zu bytes", path,
                       KVB_TEXT_FILE_MAX);
    }
  }
  int err = ferror(f);
  fclose(f);
  if (err) return KVB_ERROR(KVB_EIO, "error reading the text %s", path);
  return KVB_OK;
}

int kvb_text_read(const char *name, char **out, size_t *out_len) {
  if (!name || !out || !out_len) return KVB_ERROR(KVB_ENULL, "kvb_text_read: NULL argument");
  char *buf = NULL;
  size_t len = 0, cap = 0;
  int missing = 0, st = KVB_OK;
  if (strcmp(name, KVB_TEXT_LICENSES) == 0) {
    static const char *const base[2] = {"GPL-3", "GFDL-1.3"};
    static const char *const sums[2] = {KVB_TEXT_GPL3_SHA256, KVB_TEXT_GFDL13_SHA256};
    const char *dir = getenv("KVB_COMMON_LICENSES");
    if (!dir || !dir[0]) dir = "/usr/share/common-licenses";
    char files[2][4200];
    for (int i = 0; i < 2; i++) snprintf(files[i], sizeof files[i], "%.4000s/%s", dir, base[i]);
    for (int i = 0; i < 2 && !st; i++) {
      size_t start = len;
      st = append_file(files[i], &buf, &len, &cap, &missing);
      if (st && missing)
        st = KVB_ERROR(KVB_ENOTFOUND, "the text '%s' needs %s, which Debian's base-files package "
                       "ships on every Debian system; it is missing here (apt-get install --reinstall "
                       "base-files)", name, files[i]);
      if (!st) {
        char hex[65];
        kvb_sha256_hex(buf + start, len - start, hex);
        if (strcmp(hex, sums[i]) != 0)
          st = KVB_ERROR(KVB_EFORMAT, "the text '%s': %s has SHA-256 %s, expected %s (another "
                         "version of the file; the real-cache checks are defined on the bytes of "
                         "Debian 12's base-files)", name, files[i], hex, sums[i]);
      }
    }
  } else {
    st = append_file(name, &buf, &len, &cap, &missing);
  }
  if (st) {
    free(buf);
    return st;
  }
  *out = buf, *out_len = len;
  return KVB_OK;
}

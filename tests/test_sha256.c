/* test_sha256.c — SHA-256 (src/core/sha256.c) against the known answers of FIPS 180-2
 * Appendix B (B.1 "abc", B.2 the 448-bit message, B.3 one million 'a') and the empty message's
 * well-known digest; every split of a message into update() calls gives the same digest; a file
 * hashes to its bytes' digest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"
#include "unit.h"

int main(void) {
  char hex[65];
  kvb_sha256_hex("abc", 3, hex);
  CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
        "sha256: FIPS 180-2 B.1 \"abc\"", "got %s", hex);
  kvb_sha256_hex("", 0, hex);
  CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0,
        "sha256: the empty message", "got %s", hex);
  const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  kvb_sha256_hex(m448, strlen(m448), hex);
  CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0,
        "sha256: FIPS 180-2 B.2 the 448-bit message", "got %s", hex);
  /* B.3 in pieces of 997 bytes (not a multiple of the block), through the streaming interface */
  char *a = malloc(1000000);
  memset(a, 'a', 1000000);
  kvb_sha256_ctx c;
  unsigned char d[32];
  kvb_sha256_init(&c);
  for (size_t o = 0; o < 1000000; o += 997)
    kvb_sha256_update(&c, a + o, 1000000 - o < 997 ? 1000000 - o : 997);
  kvb_sha256_final(&c, d);
  char h2[65];
  for (int i = 0; i < 32; i++) snprintf(h2 + 2 * i, 3, "%02x", d[i]);
  CHECK(strcmp(h2, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
        "sha256: FIPS 180-2 B.3 one million 'a' (997-byte updates)", "got %s", h2);
  /* the padding's edge lengths (55, 56, 63, 64, 65 bytes): one-shot equals byte-at-a-time */
  int same = 1;
  for (size_t n = 50; n <= 130; n++) {
    char one[65], two[65];
    kvb_sha256_hex(a, n, one);
    kvb_sha256_init(&c);
    for (size_t i = 0; i < n; i++) kvb_sha256_update(&c, a + i, 1);
    kvb_sha256_final(&c, d);
    for (int i = 0; i < 32; i++) snprintf(two + 2 * i, 3, "%02x", d[i]);
    same &= strcmp(one, two) == 0;
  }
  CHECK(same, "sha256: one-shot equals byte-at-a-time for 50..130 bytes", "differ");
  char path[] = "/tmp/kvb_sha256_XXXXXX";
  int fd = mkstemp(path);
  int wrote = fd >= 0 && write(fd, a, 1000000) == 1000000;
  if (fd >= 0) close(fd);
  unsigned long long size = 0;
  int st = wrote ? kvb_sha256_file(path, hex, &size) : -1;
  CHECK(st == 0 && size == 1000000 && strcmp(hex, h2) == 0, "sha256: a file hashes to its bytes",
        "st %d size %llu %s", st, size, hex);
  unlink(path);
  st = kvb_sha256_file("/tmp", hex, NULL);
  CHECK(st != 0, "sha256: a directory is refused, not hashed", "st %d", st);
  free(a);
  UNIT_EXIT();
}

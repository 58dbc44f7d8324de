/* test_vexpf.c — the vector expf (src/core/vexpf.h) returns the C library's bits:
 *   - at every SIMD level (the CPU's best, then capped at AVX2 and at generic by $KVBOUND_SIMD):
 *     2^22 consecutive bit patterns around ±1 and a stride through all 2^32;
 *   - the library's special inputs (NaN, ±Inf, overflow, underflow to subnormal and to 0);
 *   - kvb_vexpf_krow = expf(ks·g − β)·(gv + c₀) operation by operation, for every length 0…40
 *     (vector bodies, AVX2 groups, masked AVX-512 tails, scalar tails);
 *   - the bit comparison can fail: the same row computed as expf(x)·gv + expf(x)·c₀ differs. */
#include "vexpf.h"
#include "simd.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

int main(void) {
  static const char *caps[] = {NULL, "avx2", "generic"};
  for (int c = 0; c < 3; c++) {
    if (caps[c]) setenv("KVBOUND_SIMD", caps[c], 1);
    int lvl = kvb_vexpf_level();
    char name[160];
    size_t a = kvb_vexpf_check(0x3f800000u - (1u << 21), 1u << 22, 1);
    size_t b = kvb_vexpf_check(0xbf800000u - (1u << 21), 1u << 22, 1);
    size_t s = kvb_vexpf_check(12345, 1u << 20, 4093);
    snprintf(name, sizeof name, "vexpf [%s, level %d]: = the C library's expf on 9.4M inputs",
             caps[c] ? caps[c] : "best", lvl);
    if (a == (size_t)-1) printf("# %s: no vector path at this level (the library's expf)\n", name);
    else CHECK(a == 0 && b == 0 && s == 0, name, "differ: %zu %zu %zu", a, b, s);

    float sp[] = {NAN, INFINITY, -INFINITY, 88.7f, 89.0f, -87.0f, -100.0f, -104.0f, -150.0f,
                  0.0f, -0.0f, 1e-30f, 3.0e38f, -3.0e38f, 0x1p-149f, 87.99f, -88.0f};
    size_t nsp = sizeof sp / sizeof *sp;
    float y[32];
    memcpy(y, sp, sizeof sp);
    kvb_vexpf_inplace(y, nsp, lvl);
    int bad = 0;
    for (size_t i = 0; i < nsp; i++) bad += !same_bits(y[i], expf(sp[i]));
    snprintf(name, sizeof name, "vexpf [%s]: special inputs (NaN, ±Inf, overflow, underflow)",
             caps[c] ? caps[c] : "best");
    CHECK(bad == 0, name, "%d differ", bad);

    int badrow = 0, differs = 0;
    for (size_t n = 0; n <= 40; n++) {
      float g[40], gv[40], ref[40], alt[40];
      for (size_t i = 0; i < n; i++) {
        g[i] = (float)((double)((i * 7919 + n * 104729) % 2001) / 100.0 - 10.0);
        gv[i] = (float)((double)((i * 31 + n) % 97) / 13.0 - 3.0);
      }
      const float ks = 0.088388f, beta = 0.25f, c0 = 0.025f;
      for (size_t i = 0; i < n; i++) {
        float x = ks * g[i] - beta, e = expf(x);
        ref[i] = e * (gv[i] + c0);
        alt[i] = e * gv[i] + e * c0;
      }
      kvb_vexpf_krow(g, gv, ks, beta, c0, n, lvl);
      for (size_t i = 0; i < n; i++) badrow += !same_bits(g[i], ref[i]), differs += !same_bits(alt[i], ref[i]);
    }
    snprintf(name, sizeof name, "vexpf [%s]: krow = expf(ks·g − β)·(gv + c0) bit for bit, n = 0..40",
             caps[c] ? caps[c] : "best");
    CHECK(badrow == 0, name, "%d entries differ", badrow);
    if (c == 0)
      CHECK(differs > 0, "vexpf: a reassociated row (e·gv + e·c0) differs (the comparison can fail)",
            "no entry differs");
    unsetenv("KVBOUND_SIMD");
  }
  UNIT_EXIT();
}

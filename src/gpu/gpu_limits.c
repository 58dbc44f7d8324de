/* gpu_limits.c — the 32-bit limits of the kernels (gpu_limits.h says which quantities). */
#include "gpu_limits.h"

#include <limits.h>
#include <stdint.h>

/* a·b without wrapping, saturated at SIZE_MAX */
static size_t mul(size_t a, size_t b) { return a && b > SIZE_MAX / a ? SIZE_MAX : a * b; }
static size_t mul3(size_t a, size_t b, size_t c) { return mul(mul(a, b), c); }
static size_t mx(size_t a, size_t b) { return a > b ? a : b; }
static int fits_int(size_t x) { return x <= (size_t)INT_MAX; }
/* a buffer of x floats (4 bytes) is addressable */
static int fits_bytes(size_t x) { return x < SIZE_MAX / 8; }

int kvb_gpu_fits_attention(size_t H, size_t n, size_t dk, size_t dv, size_t nq, size_t chunk) {
  if (!chunk) return 0;
  size_t nsplit = n / chunk + (n % chunk != 0), groups = mul3(nsplit, H, nq);
  /* int arguments n, H, nsplit; the group id g = s + nsplit·(h + H·qi) and hq = h + H·qi */
  return fits_int(n) && fits_int(H) && fits_int(groups) && fits_bytes(mul3(H, n, mx(dk, dv))) &&
         fits_bytes(mul3(nq, H, mx(dk, dv))) && fits_bytes(mul(groups, dv + 2));
}

int kvb_gpu_fits_gather(size_t H, size_t n, size_t dk, size_t dv, size_t kk) {
  /* group r = h·kk + j; positions (int) < n */
  return fits_int(n) && fits_int(kk) && fits_int(mul(H, kk)) && fits_bytes(mul3(H, n, mx(dk, dv)));
}

int kvb_gpu_fits_wquery(size_t H, size_t n, size_t dk, size_t dv, size_t kk, size_t nq) {
  /* group g = h + H·qi; idx[] entries (int) < n */
  return fits_int(n) && fits_int(kk) && fits_int(H) && fits_int(mul(H, nq)) &&
         fits_bytes(mul3(H, n, mx(dk, dv))) && fits_bytes(mul(H, kk)) && fits_bytes(mul3(nq, H, mx(dk, dv)));
}

int kvb_gpu_fits_bkvb(size_t H, size_t n, size_t d, size_t dv, size_t b) {
  if (!b) return 0;
  size_t nblk = n / b + (n % b != 0);
  /* group g = h·nblk + blk; cur[] entries (int) < n; m <= n */
  return fits_int(n) && fits_int(mul(H, nblk)) && fits_bytes(mul3(H, n, mx(d, dv))) && fits_bytes(mul(2 * H, n));
}

int kvb_gpu_fits_subgen(size_t H, size_t dk, size_t dv, size_t t, size_t s, size_t cap, size_t n_after,
                        size_t nt, size_t nq) {
  /* int: stream positions (< n_after), h·cap + i, m′·t <= cap·t, h·s + i (slot index), group
   * ids H (update) and H·nq (query), the uniforms' row length t + s */
  return fits_int(n_after) && fits_int(nt) && fits_int(mul(H, cap)) && fits_int(mul(cap, t)) &&
         fits_int(mul(H, s)) && fits_int(mul(H, nq)) && fits_int(t + s) &&
         fits_bytes(mul3(H, cap, mul(t, mx(dk, dv)))) && fits_bytes(mul3(H, nt, t + s + dk + dv)) &&
         fits_bytes(mul3(H, s, mx(dk, dv))) && fits_bytes(mul3(nq, H, mx(dk, dv)));
}

int kvb_gpu_fits_kvcache(size_t Hkv, size_t cap, size_t dk, size_t dv) {
  /* int: ld = cap (restride, coop, gram walk, halving, qlist; cur[] entries are rows < cap), the
   * head count Hkv (an argument) */
  return fits_int(cap) && fits_int(Hkv) && fits_bytes(mul3(Hkv, cap, mx(dk, dv)));
}

int kvb_gpu_fits_coop(size_t Hkv, size_t H, size_t n, size_t ld, size_t dk, size_t dv, size_t nq, size_t chunk) {
  if (!chunk || !Hkv || H % Hkv || n > ld) return 0;
  size_t G = H / Hkv, npack = (G + 3) / 4, nsplit = n / chunk + (n % chunk != 0);
  size_t groups = mul(mul3(nsplit, npack, Hkv), nq), parts = mul3(nsplit, H, nq);
  return fits_int(n) && fits_int(ld) && fits_int(H) && fits_int(groups) && fits_int(mul(H, nq)) && fits_int(parts) &&
         fits_bytes(mul3(Hkv, ld, mx(dk, dv))) && fits_bytes(mul3(nq, H, mx(dk, dv))) && fits_bytes(mul(parts, dv + 2));
}

int kvb_gpu_fits_subgen_batch(size_t H, size_t chunk) { return fits_int(mul(H, chunk / 16 + 1)); }

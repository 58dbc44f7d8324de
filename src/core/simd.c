/* simd.c — the instruction-set level of the hand-vectorized kernels (see simd.h). */
#include "simd.h"

#include <stdlib.h>
#include <string.h>

int kvb_simd_level(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  int lvl = KVB_SIMD_GENERIC;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    lvl = KVB_SIMD_AVX2;
    if (__builtin_cpu_supports("avx512f")) lvl = KVB_SIMD_AVX512;
  }
  const char *e = getenv("KVBOUND_SIMD");
  if (e && !strcmp(e, "generic")) lvl = KVB_SIMD_GENERIC;
  else if (e && !strcmp(e, "avx2") && lvl > KVB_SIMD_AVX2) lvl = KVB_SIMD_AVX2;
  return lvl;
#else
  return KVB_SIMD_GENERIC;
#endif
}

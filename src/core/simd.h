/* simd.h — which vector instruction set the library's hand-vectorized kernels use.
 *
 * Every kernel that has more than one vector version defines its arithmetic per output element
 * (the operations and their order), so all its versions give the same bits; the level only
 * changes speed. $KVBOUND_SIMD lowers it for tests and comparisons: "generic" (portable C, no
 * target instructions), "avx2" (AVX2 + FMA at most); unset or anything else: the best the CPU
 * has. Read at every call (getenv), so a test may change it between calls. */
#ifndef KVB_SIMD_H
#define KVB_SIMD_H

enum { KVB_SIMD_GENERIC = 0, KVB_SIMD_AVX2 = 1, KVB_SIMD_AVX512 = 2 };

/* The level to use now: the CPU's (x86-64: AVX2 needs AVX2 + FMA; AVX-512 needs AVX-512F as
 * well), capped by $KVBOUND_SIMD. Always KVB_SIMD_GENERIC off x86-64. */
int kvb_simd_level(void);

#endif

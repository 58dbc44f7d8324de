/* block_gram_kernels.h — the Gram kernels of block_gram.c, written once for float and double
 * (not a public header: included by block_gram.c with R, SFX, FMA1, VS (ps or pd), V512, V256,
 * L512 and L256 defined; it undefines them at the end).
 * Every version computes each entry G_ij, i < j, as the fma chain a = 0 … k−1 from 0 (see
 * block_gram.h); they differ only in how many entries run side by side. */

/* Portable: row i, then a, then j — entry (i, j)'s chain still runs a = 0, 1, … in order
 * (fma(x_j, x_i, acc) = fma(x_i, x_j, acc): the product is exact before the one rounding). */
static void SFX(gram_generic)(size_t len, size_t k, const R *P, size_t ld, R *G, size_t ldg,
                              const kvb_gram_pf *pf) {
  bkg_pf_walk w = bkg_pf_start(pf);
  for (size_t i = 0; i + 1 < len; i++) {
    R *g = G + i * ldg;
    bkg_pf_to(&w, bkg_upper_done(i, len));
    for (size_t j = i + 1; j < len; j++) g[j] = 0;
    for (size_t a = 0; a < k; a++) {
      const R *p = P + a * ld;
      R pi = p[i];
      for (size_t j = i + 1; j < len; j++) g[j] = FMA1(p[j], pi, g[j]);
    }
  }
  bkg_pf_to(&w, 1.0);
}

#ifdef BKG_X86
#define BKG_CAT2(a, b) a##b
#define BKG_CAT(a, b) BKG_CAT2(a, b)
#define LD512 BKG_CAT(_mm512_loadu_, VS)
#define ST512 BKG_CAT(_mm512_storeu_, VS)
#define BC512 BKG_CAT(_mm512_set1_, VS)
#define FM512 BKG_CAT(_mm512_fmadd_, VS)
#define ZR512 BKG_CAT(_mm512_setzero_, VS)
#define LD256 BKG_CAT(_mm256_loadu_, VS)
#define ST256 BKG_CAT(_mm256_storeu_, VS)
#define BC256 BKG_CAT(_mm256_set1_, VS)
#define FM256 BKG_CAT(_mm256_fmadd_, VS)
#define ZR256 BKG_CAT(_mm256_setzero_, VS)

/* Rows i0 … i0+7 (broadcast from row a of P) × NV vectors of columns from j0; 8·NV accumulators.
 * The fma(column value, row value, acc) is the scalar chain's fma(x_j, x_i, acc) lane by lane. */
#define BKG_TILE(NAME, ATTR, V, LD, ST, BC, FM, ZR, L, NV)                                      \
  ATTR static inline void NAME(size_t k, const R *P, size_t ld, size_t i0, size_t j0, R *G,     \
                               size_t ldg, bkg_pf_walk *w) {                                    \
    V c[8][NV];                                                                                 \
    _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++)                                         \
      _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) c[r][v] = ZR();                      \
    for (size_t a = 0; a < k; a++) {                                                            \
      const R *p = P + a * ld;                                                                  \
      bkg_pf_tick(w);                                                                           \
      V x[NV];                                                                                  \
      _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) x[v] = LD(p + j0 + (size_t)v * L);   \
      _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++) {                                     \
        V y = BC(p[i0 + r]);                                                                    \
        _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) c[r][v] = FM(x[v], y, c[r][v]);    \
      }                                                                                         \
    }                                                                                           \
    _Pragma("GCC unroll 8") for (int r = 0; r < 8; r++)                                         \
      _Pragma("GCC unroll 2") for (int v = 0; v < NV; v++) ST(G + (i0 + r) * ldg + j0 + (size_t)v * L, c[r][v]);        \
  }

BKG_TILE(SFX(tile512x2), BKG_T512, V512, LD512, ST512, BC512, FM512, ZR512, L512, 2)
BKG_TILE(SFX(tile512x1), BKG_T512, V512, LD512, ST512, BC512, FM512, ZR512, L512, 1)
BKG_TILE(SFX(tile256x1), BKG_T256, V256, LD256, ST256, BC256, FM256, ZR256, L256, 1)
BKG_TILE(SFX(tile256x1e), BKG_T512, V256, LD256, ST256, BC256, FM256, ZR256, L256, 1)

/* Row blocks of 8; row i needs columns j > i, so block i0 needs j from i0 + 1 to len − 1. The
 * columns start at i0 in the narrowest tiles until j is a multiple of the widest, and the last
 * ones go in the narrowest tile that covers them (a 256-bit vector does the same flops per
 * cycle as a 512-bit one on CPUs that split 512-bit operations): only about the 8×8 square on
 * the diagonal is computed for nothing. Every tile at j reads columns below the multiple of its
 * width above j, in bounds of ld = kvb_gram_ld(len). */
BKG_T512 static void SFX(gram_avx512)(size_t len, size_t k, const R *P, size_t ld, R *G,
                                      size_t ldg, const kvb_gram_pf *pf) {
  bkg_pf_walk w = bkg_pf_start(pf);
  bkg_pf_pace(&w, bkg_tile_steps(len, k, 2 * L512));
  for (size_t i0 = 0; i0 + 1 < len; i0 += 8) {
    size_t j = i0; /* a multiple of 8 = L256 (float) or L512 (double) */
    if (j % L512 && j < len) SFX(tile256x1e)(k, P, ld, i0, j, G, ldg, &w), j += L256;
    if (j % (2 * L512) && j < len) SFX(tile512x1)(k, P, ld, i0, j, G, ldg, &w), j += L512;
    for (; j < len && len - j > L512; j += 2 * L512) SFX(tile512x2)(k, P, ld, i0, j, G, ldg, &w);
    if (j < len && len - j > L256) SFX(tile512x1)(k, P, ld, i0, j, G, ldg, &w), j += L512;
    if (j < len) SFX(tile256x1e)(k, P, ld, i0, j, G, ldg, &w);
  }
  bkg_pf_to(&w, 1.0);
}
BKG_T256 static void SFX(gram_avx2)(size_t len, size_t k, const R *P, size_t ld, R *G,
                                    size_t ldg, const kvb_gram_pf *pf) {
  bkg_pf_walk w = bkg_pf_start(pf);
  bkg_pf_pace(&w, bkg_tile_steps(len, k, L256));
  for (size_t i0 = 0; i0 + 1 < len; i0 += 8) {
    for (size_t j = i0; j < len; j += L256) SFX(tile256x1)(k, P, ld, i0, j, G, ldg, &w);
  }
  bkg_pf_to(&w, 1.0);
}
#endif

void SFX(kvb_gram_upper)(size_t len, size_t k, const R *P, size_t ld, R *G, size_t ldg,
                        const kvb_gram_pf *pf) {
#ifdef BKG_X86
  int lvl = kvb_simd_level();
  if (lvl >= KVB_SIMD_AVX512) {
    SFX(gram_avx512)(len, k, P, ld, G, ldg, pf);
    return;
  }
  if (lvl >= KVB_SIMD_AVX2) {
    SFX(gram_avx2)(len, k, P, ld, G, ldg, pf);
    return;
  }
#endif
  SFX(gram_generic)(len, k, P, ld, G, ldg, pf);
}

/* Packing, portable: column i of P is token i's vector after its one operation; the sums run
 * over the tokens in order. */
static void SFX(pack_generic)(size_t i0, size_t len, size_t k, const R *const *rows,
                              const R *mul, R *sum, R *P, size_t ld) {
  for (size_t i = i0; i < len; i++) {
    const R *x = rows[i];
    if (sum)
      for (size_t a = 0; a < k; a++) sum[a] += x[a];
    if (mul)
      for (size_t a = 0; a < k; a++) P[a * ld + i] = mul[i] * x[a];
    else
      for (size_t a = 0; a < k; a++) P[a * ld + i] = x[a];
  }
}

#ifdef BKG_X86
#undef LD512
#undef ST512
#undef BC512
#undef FM512
#undef ZR512
#undef LD256
#undef ST256
#undef BC256
#undef FM256
#undef ZR256
#undef BKG_TILE
#endif
#undef R
#undef SFX
#undef FMA1
#undef VS
#undef V512
#undef V256
#undef L512
#undef L256

/* k_attention.cl — exact decode attention, split-K ("flash-decoding"), and the gather of
 * uniform sampling's compression. Written once against k_prelude.cl.
 *
 * Decode attention for nq queries × H heads over a cache of n tokens per head:
 *   z = Σ_i w_i e^{s_i} v_i / Σ_i w_i e^{s_i},   s_i = scale·⟨q, k_i⟩,
 * w_i = 1 (exact attention) or a per-token weight passed as log w_i (uniform sampling's m/k).
 * Pass 1 (kvb_attn_split): one work-group per (split, head, query); a split is `chunk`
 * consecutive tokens (the last one shorter when chunk ∤ n). It writes the split's running max
 * M_s = max s_i, L_s = Σ e^{s_i − M_s} and O_s = Σ e^{s_i − M_s} v_i (unnormalized).
 * Pass 2 (kvb_attn_combine): the log-sum-exp combine, M = max_s M_s,
 *   z = Σ_s e^{M_s − M} O_s / Σ_s e^{M_s − M} L_s.
 * Every intermediate is float32; K/V are float32 or binary16 (read as float32).
 *
 * Mutant defines (deliberately wrong, for kvb-gpucheck's mutant runs only):
 *   KVB_MUT_NO_RESCALE    combine without the e^{M_s − M} factors
 *   KVB_MUT_NO_BARRIER    no barrier between writing the probabilities to local memory and
 *                         reading them all
 *   KVB_MUT_DROP_PARTIAL  a split shorter than `chunk` (the last, partial one) is dropped
 *   KVB_MUT_SCALE_5E4     scores scaled 0.05% too high (kvb-gpucheck's tolerances must see it)
 * Offsets into Q, K, V, logw and the partials are kvb_idx (64-bit): g·dv reaches 2^31 at, e.g.,
 * H = 8, n = 2^18, d = 256, 256 queries, chunk 64 (tests/test_gpu_index64.c runs that shape). */

KVB_DEVICE float kvb_load_kv(KVB_GLOBAL const float *pf, KVB_GLOBAL const kvb_half *ph, int is_half,
                             kvb_idx i) {
  return is_half ? KVB_LOAD_HALF(ph, i) : pf[i];
}

/* Group g = s + nsplit·(h + H·qi). Q: nq×H×dk; K: H×n×dk; V: H×n×dv; logw: H×n (has_w);
 * Mo, Lo: one per group; Oo: dv per group. Kf/Kh (Vf/Vh): the same buffer seen as float or half,
 * `is_half` says which one is read. */
KVB_KERNEL kvb_attn_split(int n, int dk, int dv, int H, int chunk, int nsplit, float scale,
                          int is_half, int has_w, KVB_GLOBAL const float *Q,
                          KVB_GLOBAL const float *Kf, KVB_GLOBAL const kvb_half *Kh,
                          KVB_GLOBAL const float *Vf, KVB_GLOBAL const kvb_half *Vh,
                          KVB_GLOBAL const float *logw, KVB_GLOBAL float *Mo,
                          KVB_GLOBAL float *Lo, KVB_GLOBAL float *Oo) {
  KVB_SHARED float qs[KVB_DMAX];
  KVB_SHARED float p[KVB_CHUNK_MAX];
  KVB_SHARED float red[KVB_WG];
  int g = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int s = g % nsplit, hq = g / nsplit, h = hq % H;
  int start = s * chunk;
  int len = n - start < chunk ? n - start : chunk;
#ifdef KVB_MUT_DROP_PARTIAL
  if (len < chunk) len = 0;
#endif
#ifdef KVB_MUT_SCALE_5E4
  scale *= 1.0005f;
#endif
  kvb_idx row0 = (kvb_idx)h * n + start; /* the split's first token row of head h */
  for (int a = lid; a < dk; a += wg) qs[a] = Q[(kvb_idx)hq * dk + a]; /* hq = h + H·qi: row of Q */
  KVB_BARRIER();
  /* scores, each work-item its own tokens t ≡ lid (mod wg) */
  float mloc = KVB_NEG_INF;
  for (int t = lid; t < len; t += wg) {
    kvb_idx base = (row0 + t) * dk;
    float acc = 0.0f;
    for (int a = 0; a < dk; a++) acc += qs[a] * kvb_load_kv(Kf, Kh, is_half, base + a);
    float sc = scale * acc + (has_w ? logw[row0 + t] : 0.0f);
    p[t] = sc;
    mloc = KVB_FMAX(mloc, sc);
  }
  red[lid] = mloc;
  KVB_BARRIER();
  for (int off = wg / 2; off > 0; off >>= 1) { /* tree max */
    if (lid < off) red[lid] = KVB_FMAX(red[lid], red[lid + off]);
    KVB_BARRIER();
  }
  float m = red[0];
  for (int t = lid; t < len; t += wg) p[t] = KVB_EXP(p[t] - m);
#ifndef KVB_MUT_NO_BARRIER
  KVB_BARRIER(); /* every p[t] written before any work-item reads them all */
#endif
  float l = 0.0f;
  for (int t = 0; t < len; t++) l += p[t];
  for (int a = lid; a < dv; a += wg) {
    float acc = 0.0f;
    for (int t = 0; t < len; t++) acc += p[t] * kvb_load_kv(Vf, Vh, is_half, (row0 + t) * dv + a);
    Oo[(kvb_idx)g * dv + a] = acc;
  }
  if (lid == 0) {
    Mo[g] = len > 0 ? m : KVB_NEG_INF;
    Lo[g] = l;
  }
}

/* Group hq = h + H·qi; Z: nq×H×dv. */
KVB_KERNEL kvb_attn_combine(int dv, int nsplit, KVB_GLOBAL const float *Mo,
                            KVB_GLOBAL const float *Lo, KVB_GLOBAL const float *Oo,
                            KVB_GLOBAL float *Z) {
  int hq = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  float M = KVB_NEG_INF;
  kvb_idx g0 = (kvb_idx)hq * nsplit; /* this (head, query)'s first split */
  for (int s = 0; s < nsplit; s++) M = KVB_FMAX(M, Mo[g0 + s]);
  for (int a = lid; a < dv; a += wg) {
    float L = 0.0f, acc = 0.0f;
    for (int s = 0; s < nsplit; s++) {
      kvb_idx g = g0 + s;
#ifdef KVB_MUT_NO_RESCALE
      float f = 1.0f;
#else
      float f = KVB_EXP(Mo[g] - M); /* a split with no tokens has M_s = −∞: f = 0 */
#endif
      L += f * Lo[g];
      acc += f * Oo[g * dv + a];
    }
    Z[(kvb_idx)hq * dv + a] = acc / L;
  }
}

/* Uniform sampling's compression: the kept rows of every head gathered into a compact cache.
 * Group r = h·kk + j copies row pos[h·kk + j] of head h (K: H×n×dk, V: H×n×dv) to row j of
 * Kc: H×kk×dk, Vc: H×kk×dv. Positions come from the caller (the sampler is the CPU's). */
KVB_KERNEL kvb_usample_gather(int n, int dk, int dv, int kk, KVB_GLOBAL const int *pos,
                              KVB_GLOBAL const float *K, KVB_GLOBAL const float *V,
                              KVB_GLOBAL float *Kc, KVB_GLOBAL float *Vc) {
  int r = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int h = r / kk;
  kvb_idx src = (kvb_idx)h * n + pos[r];
  for (int a = lid; a < dk; a += wg) Kc[(kvb_idx)r * dk + a] = K[src * dk + a];
  for (int a = lid; a < dv; a += wg) Vc[(kvb_idx)r * dv + a] = V[src * dv + a];
}

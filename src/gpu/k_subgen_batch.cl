/* k_subgen_batch.cl — SubGen's update (000 Algorithm 1) batched over a chunk of tokens where the
 * algorithm allows it, written once against k_prelude.cl; the same state changes as
 * k_subgen.cl's kvb_subgen_update, bit for bit (kvb-gpucheck's resident_subgen case compares).
 *
 * What is parallel over the tokens of a chunk:
 *   - line 12 against the clusters that existed before the chunk: a representative never moves
 *     once made (lines 19-20), so every token's nearest old representative (and its squared
 *     distance) can be found at once — kvb_subgen_prep, 16 tokens × 64 work-items per group, the
 *     representatives read as broadcasts;
 *   - ‖v‖² of every token (line 26's numerator): kvb_subgen_prep too.
 * What must stay sequential, and why:
 *   - whether a token joins or opens a cluster depends on the clusters opened by earlier tokens
 *     of the same chunk (line 12's set grows at line 19): kvb_subgen_update_b walks the chunk in
 *     order, comparing each token only with the representatives opened inside the chunk and
 *     merging with the precomputed old best (an old index is lower, so a tie goes to it, as the
 *     full arg min does);
 *   - µ (line 6) is a running float sum whose rounding depends on the order, and line 26's slot
 *     probability reads it: one add per token, kept in a register by work-item 0;
 *   - n_i (line 14) and the sample coins p = 1/n_i (line 17): an integer prefix count per cluster
 *     would do, but the chain above decides the cluster first;
 * so the host feeds a long prefill in chunks (gpu_resident.c): after the first chunks nearly every
 * token finds its cluster among the old ones and its sequential step is a few barriers and local
 * operations instead of m′·dk dependent FMAs and a DRAM round trip.
 *
 * Buffers as k_subgen.cl; pre_d/pre_i/pre_v: H×nt (row h·nt + step).
 *
 * Mutant define KVB_MUT_SGP_TIE_LATER: kvb_subgen_prep's scan keeps the later of two old
 * representatives at equal distance (<= for <), so a tie inside one work-item's scan (i and i + 4)
 * goes to the higher index, against line 12's arg min (kvb-gpucheck's tiny_sgbatch head 2: eight
 * representatives at ±4·e_j, tokens at the origin equidistant from all of them).
 *
 * Barrier races, for a race detector (Oclgrind: scripts/oclgrind-check; PoCL cannot see them):
 * KVB_MUT_SGP_NO_LOAD_BARRIER (kvb_subgen_prep reads the chunk's keys before every work-item has
 * staged its part), KVB_MUT_SGB_NO_T0_BARRIER (kvb_subgen_update_b's items read work-item 0's
 * decision — join, cluster, coins — before it is written). */
#define SG_PT 16 /* tokens per kvb_subgen_prep group */

KVB_KERNEL kvb_subgen_prep(int nt, int dk, int dv, int cap, int ntb, KVB_GLOBAL const float *K,
                           KVB_GLOBAL const float *V, KVB_GLOBAL const float *rep,
                           KVB_GLOBAL const int *mc, KVB_GLOBAL float *pre_d, KVB_GLOBAL int *pre_i,
                           KVB_GLOBAL float *pre_v) {
  KVB_SHARED float kt[SG_PT * (KVB_DMAX + 1)];
  KVB_SHARED float rd[KVB_WG];
  KVB_SHARED int ri[KVB_WG];
  int g = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int h = g / ntb, t0 = (g - h * ntb) * SG_PT, m = mc[h];
  int nr = nt - t0 < SG_PT ? nt - t0 : SG_PT;
  for (int e = lid; e < nr * dk; e += wg) { /* the chunk's keys, row-major and contiguous */
    int r = e / dk;
    kt[r * (dk + 1) + (e - r * dk)] = K[((kvb_idx)h * nt + t0) * dk + e];
  }
#ifndef KVB_MUT_SGP_NO_LOAD_BARRIER
  KVB_BARRIER();
#endif
  int sub = lid / SG_PT, tt = lid - sub * SG_PT, nsub = wg / SG_PT; /* no div/rem pair: k_decode_coop.cl */
  float bd = -KVB_NEG_INF;
  int bi = 0x7fffffff;
  if (tt < nr)
    for (int i = sub; i < m; i += nsub) { /* line 12, old representatives i ≡ sub, in order */
      KVB_GLOBAL const float *x = rep + ((kvb_idx)h * cap + i) * dk;
      float d2 = 0.0f;
      for (int a = 0; a < dk; a++) {
        float df = x[a] - kt[tt * (dk + 1) + a];
        d2 += df * df;
      }
#ifdef KVB_MUT_SGP_TIE_LATER
      if (d2 <= bd) bd = d2, bi = i;
#else
      if (d2 < bd) bd = d2, bi = i; /* strict: the earliest of equal distances */
#endif
    }
  rd[lid] = bd, ri[lid] = bi;
  KVB_BARRIER();
  if (sub == 0 && tt < nr) {
    for (int k = 1; k < nsub; k++) { /* ties to the lower index, as the tree arg min */
      float od = rd[k * SG_PT + tt];
      int oi = ri[k * SG_PT + tt];
      if (od < bd || (od == bd && oi < bi)) bd = od, bi = oi;
    }
    kvb_idx row = (kvb_idx)h * nt + t0 + tt;
    KVB_GLOBAL const float *v = V + row * dv;
    float v2 = 0.0f;
    for (int a = 0; a < dv; a++) v2 += v[a] * v[a];
    pre_d[row] = bd, pre_i[row] = bi, pre_v[row] = v2;
  }
}

/* kvb_subgen_update with line 12 split (old representatives from kvb_subgen_prep, the chunk's own
 * ones here), ‖v‖² precomputed, µ in a register and the next token's key loaded while the current
 * one is processed. Mutant define KVB_MUT_SGB_TIE_NEW: a tie between the old best and a new
 * representative goes to the new one (the full arg min gives it to the lower, old, index). */
KVB_KERNEL kvb_subgen_update_b(int nt, int dk, int dv, int t, int s, int cap, int n0, float delta2,
                               KVB_GLOBAL const float *K, KVB_GLOBAL const float *V,
                               KVB_GLOBAL const float *u, KVB_GLOBAL const float *pre_d,
                               KVB_GLOBAL const int *pre_i, KVB_GLOBAL const float *pre_v,
                               KVB_GLOBAL int *mc, KVB_GLOBAL float *rep, KVB_GLOBAL int *rep_pos,
                               KVB_GLOBAL int *cnt, KVB_GLOBAL float *S, KVB_GLOBAL int *S_pos,
                               KVB_GLOBAL float *mu, KVB_GLOBAL float *Mk, KVB_GLOBAL float *Mv,
                               KVB_GLOBAL int *M_pos) {
  KVB_SHARED float kq2[2 * KVB_DMAX];
  KVB_SHARED float rd[KVB_WG];
  KVB_SHARED int ri[KVB_WG];
  KVB_SHARED int sh_m, sh_join, sh_best;
  KVB_SHARED float sh_pj, sh_pm;
  int h = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int m_old = mc[h];
  float muh = 0.0f;
  if (lid == 0) sh_m = m_old, muh = mu[h];
  for (int a = lid; a < dk; a += wg) kq2[a] = K[(kvb_idx)h * nt * dk + a];
  KVB_BARRIER();
  for (int step = 0; step < nt; step++) {
    kvb_idx row = (kvb_idx)h * nt + step;
    int pos = n0 + step;
    KVB_LOCAL float *kq = kq2 + (step & 1) * KVB_DMAX;
    if (step + 1 < nt) /* the next key, into the other buffer (last read before the previous barrier) */
      for (int a = lid; a < dk; a += wg) kq2[((step + 1) & 1) * KVB_DMAX + a] = K[(row + 1) * dk + a];
    KVB_GLOBAL const float *v = V + row * dv;
    KVB_GLOBAL const float *us = u + row * (t + s);
    int m = sh_m;
    float bd = -KVB_NEG_INF;
    int bi = 0x7fffffff;
    for (int i = m_old + lid; i < m; i += wg) { /* line 12 over the chunk's own representatives */
      KVB_GLOBAL const float *x = rep + ((kvb_idx)h * cap + i) * dk;
      float d2 = 0.0f;
      for (int a = 0; a < dk; a++) {
        float df = x[a] - kq[a];
        d2 += df * df;
      }
      if (d2 < bd) bd = d2, bi = i;
    }
    rd[lid] = bd;
    ri[lid] = bi;
    KVB_BARRIER();
    for (int off = wg / 2; off > 0; off >>= 1) {
      if (lid < off) {
        float od = rd[lid + off];
        int oi = ri[lid + off];
        if (od < rd[lid] || (od == rd[lid] && oi < ri[lid])) rd[lid] = od, ri[lid] = oi;
      }
      KVB_BARRIER();
    }
    if (lid == 0) {
      float pd = pre_d[row], d0 = rd[0];
      int pi = pre_i[row], i0 = ri[0];
#ifdef KVB_MUT_SGB_TIE_NEW
      if (pd < d0) d0 = pd, i0 = pi;
#else
      if (pd < d0 || (pd == d0 && pi < i0)) d0 = pd, i0 = pi;
#endif
      int join = m > 0 && d0 <= delta2; /* line 13 */
      int b = join ? i0 : m;
      float v2 = pre_v[row], den = muh + v2;
      sh_pm = den > 0.0f ? v2 / den : 0.0f; /* line 26 with the µ before line 6 */
      sh_pj = 1.0f;
      if (join) {
        int c = cnt[(kvb_idx)h * cap + b] + 1; /* line 14 */
        cnt[(kvb_idx)h * cap + b] = c;
        sh_pj = 1.0f / (float)c; /* line 17 */
      } else { /* lines 19-20 */
        sh_m = m + 1;
        cnt[(kvb_idx)h * cap + b] = 1;
        rep_pos[(kvb_idx)h * cap + b] = pos;
      }
      muh = muh + v2; /* line 6 */
      sh_join = join, sh_best = b;
    }
#ifndef KVB_MUT_SGB_NO_T0_BARRIER
    KVB_BARRIER();
#endif
    int join = sh_join, b = sh_best;
    float pj = sh_pj, pm = sh_pm;
    if (!join)
      for (int a = lid; a < dk; a += wg) rep[((kvb_idx)h * cap + b) * dk + a] = kq[a];
    for (int j = lid; j < t; j += wg)
      if (!join || us[j] < pj) {
        for (int a = 0; a < dk; a++) S[(((kvb_idx)h * cap + b) * t + j) * dk + a] = kq[a];
        S_pos[((kvb_idx)h * cap + b) * t + j] = pos;
      }
    int off = join ? t : 0;
    for (int i = lid; i < s; i += wg)
      if (us[off + i] < pm) {
        for (int a = 0; a < dk; a++) Mk[((kvb_idx)h * s + i) * dk + a] = kq[a];
        for (int a = 0; a < dv; a++) Mv[((kvb_idx)h * s + i) * dv + a] = v[a];
        M_pos[(kvb_idx)h * s + i] = pos;
      }
    KVB_BARRIER_GLOBAL(); /* the next token reads the representatives written above */
  }
  if (lid == 0) mc[h] = sh_m, mu[h] = muh;
}

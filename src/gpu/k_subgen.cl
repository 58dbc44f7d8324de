/* k_subgen.cl — SubGen (000 Algorithm 1; subgen.h) on a device, written once against k_prelude.cl:
 * a batched update of H independent heads and the query estimator over their stored state.
 *
 * State of head h (float32 / int; gpu_ops.h kvb_gpu_subgen describes the host mirror):
 *   mc[h]                       m′, the number of clusters (<= cap)
 *   rep[(h·cap + i)·dk ..]      representative x_i;  rep_pos[h·cap + i] its stream position
 *   cnt[h·cap + i]              n_i
 *   S[((h·cap + i)·t + j)·dk ..] sample j of cluster i;  S_pos[(h·cap + i)·t + j] its position
 *   mu[h]                       µ = Σ ‖v‖²
 *   Mk[(h·s + i)·dk ..], Mv[(h·s + i)·dv ..]   slot i of M;  M_pos[h·s + i] (−1: null)
 *
 * kvb_subgen_update: one work-group per head; the stream is sequential, so the group walks its nt
 * new tokens in order (rows h·nt + step of K: H×nt×dk, V: H×nt×dv; position n0 + step). Per token:
 *   line 12  ‖x_i − k‖² for every representative in parallel (work-item lid takes i ≡ lid), then a
 *            tree arg min, ties to the lowest index (the CPU's earliest representative);
 *   line 13  join iff m′ > 0 and ‖x_i* − k‖² <= δ² (δ² rounded to float by the host);
 *   line 14  n_i* += 1;  line 17 p = 1/n_i* (after the increment);
 *   line 26  p = ‖v‖²/(µ + ‖v‖²) (0 when both are 0, as subgen.h reads 0/0);  line 6 µ += ‖v‖².
 * Coins come from the caller: token row r has t + s uniforms u[r·(t+s) ..], consumed in the CPU's
 * draw order (subgen.c): when the token joins, the t cluster coins are u[0..t) and the s slot
 * coins u[t..t+s); when it opens a cluster (no cluster coin is drawn) the slot coins are u[0..s).
 * kvb_subgen_update_uniforms (subgen_uniforms.h) feeds the CPU reference the same numbers.
 *
 * kvb_subgen_query: one work-group per (head, query), g = h + H·qi; lines 29-31 in log-sum-exp form:
 *   z = Σ_{slots} e^{s_i + ln(µ/(s‖v_i‖²))} v_i / Σ_{clusters} Σ_{j<t} e^{s_ij + ln(n_i/t)},
 * shifted by the max M over both sets of exponents (the common factor cancels in the ratio).
 *
 * Mutant defines: KVB_MUT_SG_OLD_COUNT (line 17 uses n_i before line 14's increment: p = 1/(n_i − 1)),
 * KVB_MUT_SG_NO_COUNT (line 30 without the n_i weight: ln(1/t)), KVB_MUT_SG_CLUSTER_LT (line 13 with
 * < instead of <=: a key at distance exactly δ opens a cluster), KVB_MUT_SCALE_5E4 (the query's
 * scores 0.05% too high), and two races PoCL cannot see (Oclgrind finds them, scripts/oclgrind-check):
 * KVB_MUT_SG_NO_T0_BARRIER (no barrier after work-item 0's section of the update: the others read
 * sh_join/sh_best of the previous token) and KVB_MUT_SGQ_NO_CHUNK_BARRIER (the query's next chunk of
 * slots rewrites p while it is read). Offsets are kvb_idx (64-bit). */

KVB_KERNEL kvb_subgen_update(int nt, int dk, int dv, int t, int s, int cap, int n0, float delta2,
                             KVB_GLOBAL const float *K, KVB_GLOBAL const float *V,
                             KVB_GLOBAL const float *u, KVB_GLOBAL int *mc, KVB_GLOBAL float *rep,
                             KVB_GLOBAL int *rep_pos, KVB_GLOBAL int *cnt, KVB_GLOBAL float *S,
                             KVB_GLOBAL int *S_pos, KVB_GLOBAL float *mu, KVB_GLOBAL float *Mk,
                             KVB_GLOBAL float *Mv, KVB_GLOBAL int *M_pos) {
  KVB_SHARED float kq[KVB_DMAX];
  KVB_SHARED float rd[KVB_WG];
  KVB_SHARED int ri[KVB_WG];
  KVB_SHARED int sh_m, sh_join, sh_best;
  KVB_SHARED float sh_pj, sh_pm;
  int h = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  if (lid == 0) sh_m = mc[h];
  for (int step = 0; step < nt; step++) {
    int pos = n0 + step;
    kvb_idx row = (kvb_idx)h * nt + step;
    KVB_GLOBAL const float *k = K + row * dk;
    KVB_GLOBAL const float *v = V + row * dv;
    KVB_GLOBAL const float *us = u + row * (t + s);
    for (int a = lid; a < dk; a += wg) kq[a] = k[a];
    KVB_BARRIER();
    int m = sh_m;
    float bd = -KVB_NEG_INF;
    int bi = 0x7fffffff;
    for (int i = lid; i < m; i += wg) { /* line 12, each item its representatives, in order */
      KVB_GLOBAL const float *x = rep + ((kvb_idx)h * cap + i) * dk;
      float d2 = 0.0f;
      for (int a = 0; a < dk; a++) {
        float df = x[a] - kq[a];
        d2 += df * df;
      }
      if (d2 < bd) bd = d2, bi = i; /* strict: the earliest of equal distances */
    }
    rd[lid] = bd;
    ri[lid] = bi;
    KVB_BARRIER();
    for (int off = wg / 2; off > 0; off >>= 1) { /* tree arg min, ties to the lower index */
      if (lid < off) {
        float od = rd[lid + off];
        int oi = ri[lid + off];
        if (od < rd[lid] || (od == rd[lid] && oi < ri[lid])) rd[lid] = od, ri[lid] = oi;
      }
      KVB_BARRIER();
    }
    if (lid == 0) {
#ifdef KVB_MUT_SG_CLUSTER_LT
      int join = m > 0 && rd[0] < delta2;
#else
      int join = m > 0 && rd[0] <= delta2; /* line 13 */
#endif
      int b = join ? ri[0] : m;
      float v2 = 0.0f;
      for (int a = 0; a < dv; a++) v2 += v[a] * v[a];
      float muh = mu[h], den = muh + v2;
      sh_pm = den > 0.0f ? v2 / den : 0.0f; /* line 26 with the µ before line 6 */
      sh_pj = 1.0f;
      if (join) {
        int c = cnt[h * cap + b] + 1; /* line 14 */
        cnt[h * cap + b] = c;
#ifdef KVB_MUT_SG_OLD_COUNT
        sh_pj = 1.0f / (float)(c - 1);
#else
        sh_pj = 1.0f / (float)c; /* line 17 */
#endif
      } else { /* lines 19-20: a new cluster (k, [k, ..., k], 1) */
        sh_m = m + 1;
        cnt[h * cap + b] = 1;
        rep_pos[h * cap + b] = pos;
      }
      mu[h] = muh + v2; /* line 6 */
      sh_join = join, sh_best = b;
    }
#ifndef KVB_MUT_SG_NO_T0_BARRIER
    KVB_BARRIER(); /* work-item 0's decisions published */
#endif
    int join = sh_join, b = sh_best;
    float pj = sh_pj, pm = sh_pm;
    kvb_idx hb = (kvb_idx)h * cap + b;
    if (!join)
      for (int a = lid; a < dk; a += wg) rep[hb * dk + a] = kq[a];
    for (int j = lid; j < t; j += wg) /* lines 15-17 (join) or line 20 (all t slots) */
      if (!join || us[j] < pj) {
        for (int a = 0; a < dk; a++) S[(hb * t + j) * dk + a] = kq[a];
        S_pos[hb * t + j] = pos;
      }
    int off = join ? t : 0;
    for (int i = lid; i < s; i += wg) /* lines 25-26 */
      if (us[off + i] < pm) {
        kvb_idx hs = (kvb_idx)h * s + i;
        for (int a = 0; a < dk; a++) Mk[hs * dk + a] = kq[a];
        for (int a = 0; a < dv; a++) Mv[hs * dv + a] = v[a];
        M_pos[hs] = pos;
      }
    KVB_BARRIER_GLOBAL(); /* the next token reads the representatives written above */
  }
  if (lid == 0) mc[h] = sh_m;
}

/* log-weight of slot i (line 29: µ/(s‖v_i‖²)) and of cluster i's samples (line 30: n_i/t) */
KVB_DEVICE float kvb_sg_slot_lw(float lmu, int s, KVB_GLOBAL const float *v, int dv) {
  float vv = 0.0f;
  for (int a = 0; a < dv; a++) vv += v[a] * v[a];
  return lmu - KVB_LOG((float)s * vv);
}
KVB_DEVICE float kvb_sg_count_lw(int c, int t) {
#ifdef KVB_MUT_SG_NO_COUNT
  c = 1;
#endif
  return KVB_LOG((float)c / (float)t);
}

KVB_KERNEL kvb_subgen_query(int dk, int dv, int t, int s, int cap, int H, float scale,
                            KVB_GLOBAL const float *Q, KVB_GLOBAL const int *mc,
                            KVB_GLOBAL const int *cnt, KVB_GLOBAL const float *S,
                            KVB_GLOBAL const float *mu, KVB_GLOBAL const float *Mk,
                            KVB_GLOBAL const float *Mv, KVB_GLOBAL const int *M_pos,
                            KVB_GLOBAL float *Z) {
  KVB_SHARED float qs[KVB_DMAX];
  KVB_SHARED float p[KVB_CHUNK_MAX];
  KVB_SHARED float red[KVB_WG];
  int g = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int h = g % H, m = mc[h], ns = m * t;
#ifdef KVB_MUT_SCALE_5E4
  scale *= 1.0005f;
#endif
  kvb_idx hs = (kvb_idx)h * s, hc = (kvb_idx)h * cap, hct = hc * t;
  KVB_GLOBAL float *z = Z + (kvb_idx)g * dv;
  float lmu = KVB_LOG(mu[h]); /* −∞ only while every value was 0: then every slot is null */
  for (int a = lid; a < dk; a += wg) qs[a] = Q[(kvb_idx)g * dk + a];
  for (int a = lid; a < dv; a += wg) z[a] = 0.0f;
  KVB_BARRIER();
  float mloc = KVB_NEG_INF;
  for (int i = lid; i < s; i += wg)
    if (M_pos[hs + i] >= 0)
      mloc = KVB_FMAX(mloc, scale * kvb_dot_lg(qs, Mk + (hs + i) * dk, dk) +
                                kvb_sg_slot_lw(lmu, s, Mv + (hs + i) * dv, dv));
  for (int e = lid; e < ns; e += wg)
    mloc = KVB_FMAX(mloc, scale * kvb_dot_lg(qs, S + (hct + e) * dk, dk) +
                              kvb_sg_count_lw(cnt[hc + e / t], t));
  red[lid] = mloc;
  KVB_BARRIER();
  for (int off = wg / 2; off > 0; off >>= 1) { /* tree max */
    if (lid < off) red[lid] = KVB_FMAX(red[lid], red[lid + off]);
    KVB_BARRIER();
  }
  float M = red[0];
  float tau = 0.0f; /* line 30, this item's samples */
  for (int e = lid; e < ns; e += wg)
    tau += KVB_EXP(scale * kvb_dot_lg(qs, S + (hct + e) * dk, dk) +
                   kvb_sg_count_lw(cnt[hc + e / t], t) - M);
  for (int c = 0; c < s; c += KVB_CHUNK_MAX) { /* line 29, chunk by chunk of slots */
    int len = s - c < KVB_CHUNK_MAX ? s - c : KVB_CHUNK_MAX;
    for (int j = lid; j < len; j += wg) {
      int i = c + j;
      p[j] = M_pos[hs + i] < 0 ? 0.0f
                               : KVB_EXP(scale * kvb_dot_lg(qs, Mk + (hs + i) * dk, dk) +
                                         kvb_sg_slot_lw(lmu, s, Mv + (hs + i) * dv, dv) - M);
    }
    KVB_BARRIER(); /* every p[j] written (and red[0] read) before anyone reads p or writes red */
    for (int a = lid; a < dv; a += wg) {
      float acc = z[a];
      for (int j = 0; j < len; j++) acc += p[j] * Mv[(hs + c + j) * dv + a];
      z[a] = acc;
    }
#ifndef KVB_MUT_SGQ_NO_CHUNK_BARRIER
    KVB_BARRIER(); /* p is rewritten by the next chunk */
#endif
  }
  red[lid] = tau;
  KVB_BARRIER();
  for (int off = wg / 2; off > 0; off >>= 1) { /* tree sum */
    if (lid < off) red[lid] += red[lid + off];
    KVB_BARRIER();
  }
  float T = red[0];
  for (int a = lid; a < dv; a += wg) z[a] = z[a] / T; /* line 31 */
}

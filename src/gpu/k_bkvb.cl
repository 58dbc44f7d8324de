/* k_bkvb.cl — block-parallel BalanceKV (balancekv_block.h; 003 App. B, the authors'
 * src/balanced_walk.py), written once against k_prelude.cl: one round of compression, and the
 * weighted query kvb_wquery at the end of the file (its helper kvb_dot_lg is shared with
 * k_subgen.cl, which make concatenates after this file). The host runs T rounds:
 * kvb_bkvb_walk then kvb_bkvb_halving (not named kvb_bkvb_halve: a CUDA kernel is also a host
 * symbol, and that name is the CPU function's).
 *
 * kvb_bkvb_walk: one work-group per (head, block). Head h's current sequence has m tokens
 * (cur[h·n + p] = original token index, cw[h·n + p] = its weight, a power of two, exact in float);
 * block blk covers positions [blk·b, min(m, (blk+1)·b)). The group centers the block's keys by the
 * mean of its real tokens, then walks: s_0 = +1 and for j >= 1
 *   s_j = +1  iff  u_j < p_j = ½ − γ·Σ_{i<j} K_ij s_i,
 *   K_ij = exp(ks·⟨k̃_i, k̃_j⟩ − β)·(w_i w_j ⟨v_i, v_j⟩ + c0),  ks = τ/√d.
 * The sums are pushed: once s_j is known every work-item adds K_ji·s_j to the running sums acc[i]
 * (local memory) of its positions i > j, so acc[j] is added in the order i = 0..j−1 as on the CPU.
 * S (H×m) receives the signs, P (H×m) every p_j (for the tie analysis of kvb-gpucheck).
 *
 * kvb_bkvb_halving: one work-group per head, work-item 0 applies balanced_walk.py's halving rule
 * (kvb_bkvb_halve in balancekv_block.c) and writes the survivors' indices and weights.
 *
 * Mutant defines: KVB_MUT_WALK_SIGN_FLIP (p_j = ½ + γ·Σ K s: the walk pushes towards the sum);
 * KVB_MUT_SCALE_5E4 (the key scale τ/√d 0.05% too high: every p_j moves beyond its float32 bound);
 * KVB_MUT_WALK_NO_SJ_BARRIER (no barrier after work-item 0 publishes s_j: the others may read the
 * previous sign; a race PoCL cannot see, found by Oclgrind in scripts/oclgrind-check).
 * Row offsets are kvb_idx (64-bit), as everywhere a product of shape parameters is an offset. */

KVB_KERNEL kvb_bkvb_walk(int n, int d, int dv, int m, int b, int nblk, float ks, float beta,
                         float c0, float gamma, KVB_GLOBAL const float *K,
                         KVB_GLOBAL const float *V, KVB_GLOBAL const int *cur,
                         KVB_GLOBAL const float *cw, KVB_GLOBAL const float *u,
                         KVB_GLOBAL int *S, KVB_GLOBAL float *P) {
  KVB_SHARED float mean[KVB_DMAX];
  KVB_SHARED float acc[KVB_BMAX];
  KVB_SHARED float sj;
  int g = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int h = g / nblk, blk = g % nblk, start = blk * b;
  int len = m - start < b ? m - start : b;
#ifdef KVB_MUT_SCALE_5E4
  ks *= 1.0005f;
#endif
  kvb_idx hn = (kvb_idx)h * n, hm = (kvb_idx)h * m;
  KVB_GLOBAL const int *cu = cur + hn + start;
  KVB_GLOBAL const float *w = cw + hn + start;
  for (int a = lid; a < d; a += wg) { /* block mean of the real tokens */
    float sum = 0.0f;
    for (int i = 0; i < len; i++) sum += K[(hn + cu[i]) * d + a];
    mean[a] = sum / (float)len;
  }
  for (int i = lid; i < len; i += wg) acc[i] = 0.0f;
  if (lid == 0) {
    sj = 1.0f; /* s_0 = +1 */
    S[hm + start] = 1;
    P[hm + start] = 0.5f;
  }
  KVB_BARRIER();
  for (int j = 0; j + 1 < len; j++) {
    kvb_idx kj = (hn + cu[j]) * d, vj = (hn + cu[j]) * dv;
    for (int i = j + 1 + lid; i < len; i += wg) { /* row j of the kernel, pushed to i > j */
      kvb_idx ki = (hn + cu[i]) * d, vi = (hn + cu[i]) * dv;
      float kd = 0.0f, vd = 0.0f;
      for (int a = 0; a < d; a++) kd += (K[ki + a] - mean[a]) * (K[kj + a] - mean[a]);
      for (int a = 0; a < dv; a++) vd += (w[i] * V[vi + a]) * (w[j] * V[vj + a]);
      acc[i] += KVB_EXP(ks * kd - beta) * (vd + c0) * sj;
    }
    KVB_BARRIER();
    if (lid == 0) {
#ifdef KVB_MUT_WALK_SIGN_FLIP
      float p = 0.5f + gamma * acc[j + 1];
#else
      float p = 0.5f - gamma * acc[j + 1];
#endif
      float s = u[hm + start + j + 1] < p ? 1.0f : -1.0f; /* NaN p: −1, as on the CPU */
      S[hm + start + j + 1] = (int)s;
      P[hm + start + j + 1] = p;
      sj = s;
    }
#ifndef KVB_MUT_WALK_NO_SJ_BARRIER
    KVB_BARRIER(); /* s_j published before anyone pushes row j + 1 with it */
#endif
  }
}

/* Halving of head h's m signs; survivors into ncur/ncw (H×n, first ⌊m/2⌋ used). */
KVB_KERNEL kvb_bkvb_halving(int n, int m, KVB_GLOBAL const int *S, KVB_GLOBAL const int *cur,
                          KVB_GLOBAL const float *cw, KVB_GLOBAL int *ncur,
                          KVB_GLOBAL float *ncw) {
  int h = KVB_GROUP_ID();
  if (KVB_LOCAL_ID() != 0) return;
  KVB_GLOBAL const int *s = S + (kvb_idx)h * m;
  kvb_idx hn = (kvb_idx)h * n;
  int hm = m / 2, cp = 0, cm = 0, np = 0, nm = 0, fp = 0, fm = 0;
  for (int p = 0; p < m; p++) { /* first position where each sign's count reaches m/2 */
    if (s[p] > 0) {
      if (++np == hm && !fp) cp = p, fp = 1;
    } else {
      if (++nm == hm && !fm) cm = p, fm = 1;
    }
  }
  int c = cp > cm ? cp : cm, sc = s[c], k = 0;
  for (int p = 0; p <= c && k < hm; p++) /* ×2: positions <= c with the sign opposite s[c] */
    if (s[p] != sc) ncur[hn + k] = cur[hn + p], ncw[hn + k] = 2.0f * cw[hn + p], k++;
  for (int p = c + 1; p < m && k < hm; p++) /* ×1: positions after c */
    ncur[hn + k] = cur[hn + p], ncw[hn + k] = cw[hn + p], k++;
}

/* kvb_wquery — the weighted query of block BalanceKV (balancekv_block.h: first/recent tokens with
 * weight 1, the kept middle tokens with their weights) in log-sum-exp form, for nq queries × H
 * heads over an index list: head h has kk entries, entry j reads token row idx[h·kk + j] of head h
 * (K: H×n×dk, V: H×n×dv) with log-weights ln (numerator) and ld (denominator), both H×kk:
 *   z = Σ_j e^{s_j + ln_j} v_j / Σ_j e^{s_j + ld_j},   s_j = scale·⟨q, k_{idx_j}⟩.
 * (ld_j = T·ln 2 for the kept tokens is 003's "paper" denominator, ld = ln the "consistent" one.)
 * One work-group per (head, query), g = h + H·qi (Q: nq×H×dk, Z: nq×H×dv).
 * Pass 1: M = max_j (s_j + max(ln_j, ld_j)) by a tree max. Pass 2: den = Σ_j e^{s_j + ld_j − M}
 * (per-item partials, then a tree sum) and, chunk by chunk of KVB_CHUNK_MAX entries, the terms
 * e^{s_j + ln_j − M} in local memory, from which each work-item accumulates its output
 * coordinates. Every exponent is <= 0 after the shift, so nothing overflows.
 * Mutant defines: KVB_MUT_WQ_NO_MAX: M = 0 (no rescaling by the max; overflows on large scores);
 * KVB_MUT_SCALE_5E4: scores 0.05% too high; KVB_MUT_WQ_NO_CHUNK_BARRIER: no barrier before the next
 * chunk rewrites p (a race found by Oclgrind only). Offsets are kvb_idx (64-bit). */
/* ⟨q, x⟩ for q in local memory, x in global memory, summed in order a = 0..d−1. */
KVB_DEVICE float kvb_dot_lg(KVB_LOCAL const float *q, KVB_GLOBAL const float *x, int d) {
  float acc = 0.0f;
  for (int a = 0; a < d; a++) acc += q[a] * x[a];
  return acc;
}

KVB_KERNEL kvb_wquery(int n, int dk, int dv, int H, int kk, float scale, KVB_GLOBAL const int *idx,
                      KVB_GLOBAL const float *ln, KVB_GLOBAL const float *ld,
                      KVB_GLOBAL const float *Q, KVB_GLOBAL const float *K,
                      KVB_GLOBAL const float *V, KVB_GLOBAL float *Z) {
  KVB_SHARED float qs[KVB_DMAX];
  KVB_SHARED float p[KVB_CHUNK_MAX];
  KVB_SHARED float red[KVB_WG];
  int g = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int h = g % H;
#ifdef KVB_MUT_SCALE_5E4
  scale *= 1.0005f;
#endif
  kvb_idx hn = (kvb_idx)h * n, hk = (kvb_idx)h * kk;
  KVB_GLOBAL const int *ix = idx + hk;
  KVB_GLOBAL float *z = Z + (kvb_idx)g * dv;
  for (int a = lid; a < dk; a += wg) qs[a] = Q[(kvb_idx)g * dk + a];
  for (int a = lid; a < dv; a += wg) z[a] = 0.0f;
  KVB_BARRIER();
  float mloc = KVB_NEG_INF;
  for (int j = lid; j < kk; j += wg) {
    float sc = scale * kvb_dot_lg(qs, K + (hn + ix[j]) * dk, dk);
    mloc = KVB_FMAX(mloc, sc + KVB_FMAX(ln[hk + j], ld[hk + j]));
  }
  red[lid] = mloc;
  KVB_BARRIER();
  for (int off = wg / 2; off > 0; off >>= 1) { /* tree max */
    if (lid < off) red[lid] = KVB_FMAX(red[lid], red[lid + off]);
    KVB_BARRIER();
  }
#ifdef KVB_MUT_WQ_NO_MAX
  float M = 0.0f;
#else
  float M = red[0];
#endif
  float dloc = 0.0f;
  for (int c = 0; c < kk; c += KVB_CHUNK_MAX) {
    int len = kk - c < KVB_CHUNK_MAX ? kk - c : KVB_CHUNK_MAX;
    for (int j = lid; j < len; j += wg) {
      float sc = scale * kvb_dot_lg(qs, K + (hn + ix[c + j]) * dk, dk);
      p[j] = KVB_EXP(sc + ln[hk + c + j] - M);
      dloc += KVB_EXP(sc + ld[hk + c + j] - M);
    }
    KVB_BARRIER(); /* every p[j] written (and red[0] read) before anyone reads p or writes red */
    for (int a = lid; a < dv; a += wg) {
      float acc = z[a];
      for (int j = 0; j < len; j++) acc += p[j] * V[(hn + ix[c + j]) * dv + a];
      z[a] = acc;
    }
#ifndef KVB_MUT_WQ_NO_CHUNK_BARRIER
    KVB_BARRIER(); /* p is rewritten by the next chunk */
#endif
  }
  red[lid] = dloc;
  KVB_BARRIER();
  for (int off = wg / 2; off > 0; off >>= 1) { /* tree sum */
    if (lid < off) red[lid] += red[lid + off];
    KVB_BARRIER();
  }
  float D = red[0];
  for (int a = lid; a < dv; a += wg) z[a] = z[a] / D;
}

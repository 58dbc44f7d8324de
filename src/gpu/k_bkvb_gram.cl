/* k_bkvb_gram.cl — block BalanceKV's round shaped for the hardware (roofline.h), written
 * once against k_prelude.cl: the same walk and halving as k_bkvb.cl's kvb_bkvb_walk and
 * kvb_bkvb_halving (same arguments, same outputs bit for bit), organised so that
 *   - the kernel matrix K_ij = exp(ks·⟨k̃_i, k̃_j⟩ − β)·(w_i w_j ⟨v_i, v_j⟩ + c0) is computed once
 *     per entry, in tiles of GT_J rows × the block's columns held in local memory, as a small
 *     matrix product: centered keys (then weighted values) staged in local memory GT_A
 *     coordinates at a time, each work-item a 4×4 register tile (8 local loads per 16 FMAs),
 *     instead of every step re-reading both rows from global memory for every pair;
 *   - the walk's steps then read their row of K from local memory; the block's uniforms are
 *     staged in local memory too, so a step's chain has no global access (two barriers and a
 *     few local operations);
 *   - the halving runs on 64 work-items per head with integer prefix counts instead of one.
 * What stays sequential, and why: the walk's sign s_j depends on Σ_{i<j} K_ij s_i, i.e. on every
 * earlier sign of the block (003 App. B, Alg. 2's self-balancing walk): the j loop is a chain of
 * block-length steps. Only the K_ij (sign-free) and each step's pushes to the later positions are
 * parallel. The halving's survivors depend on the first position where a sign count reaches m/2:
 * a prefix count, parallel in log steps.
 *
 * Bit for bit the old kernel's numbers: each ⟨k̃_i, k̃_j⟩ and w_i w_j⟨v_i, v_j⟩ is summed over
 * a = 0..d−1 in order (chunk after chunk, element after element) from the same float products
 * ((k_ia − mean_a)·(k_ja − mean_a), (w_i v_ia)·(w_j v_ja)), K_ij = EXP(ks·kd − β)·(vd + c0) is the
 * same expression, acc_i receives the pushes in the order j = 0..i−1, and p_j, s_j are the same
 * operations (kvb-gpucheck test --kernel bkvb_gram compares S, P, indices and weights).
 *
 * Mutant defines: KVB_MUT_GRAM_SKIP_CHUNK (the last coordinate chunk of the keys left out of
 * ⟨k̃_i, k̃_j⟩), KVB_MUT_HALVE_PAR_OFF (a survivor's slot off by one at a segment boundary).
 * Barrier races, for a race detector (Oclgrind: scripts/oclgrind-check; PoCL runs a group's items
 * one after another and cannot see them): KVB_MUT_GRAM_NO_STAGE_BARRIER (the next coordinate
 * chunk staged while the products still read the last one), KVB_MUT_GRAM_NO_TILE_BARRIER (the
 * walk reads the Gram tile before every work-item has written its part),
 * KVB_MUT_HALVE_NO_PREFIX_BARRIER (the items read their prefix counts while item 0 computes them). */
#define GT_J 16 /* Gram rows per tile (4 row groups of 4) */
#define GT_I 64 /* Gram columns per pass (16 column lanes × 4, interleaved by 16) */
#define GT_A 16 /* coordinates staged per chunk */

/* Vector loads each work-item has in flight in kvb_gram_stage: one 16-byte load for the tile's
 * row group (GT_J rows × GT_A coordinates = KVB_WG vectors) and GT_I / GT_J for the column pass
 * (GT_I rows), all issued before the first store to local memory. roofline.c reads this line of
 * the embedded kernel text, scripts/ptx-mlp-check counts them in nvcc's PTX. */
#define KVB_GRAM_MLP 5

/* Stages coordinates [a0, a0 + alen) of the block positions j0 + r (r < GT_J, into sj_) and i0 + r
 * (r < GT_I, into si_), row stride GT_A + 1: centered keys (vals = 0) or weighted values w_p·v
 * (vals = 1); zeros past the block's end or past alen. Work-item lid loads coordinates
 * a0 + 4·(lid mod 4) .. + 3 of row lid / 4 of each of the KVB_GRAM_MLP row groups with one vector
 * load each, every address from local memory (the rows' cache indices cus, staged once per
 * block): no load waits for another, and four consecutive work-items read one 64-byte segment
 * of a row. The same float operations as before on the same values (x − mean_a, w_p·x), so the
 * Gram entries stay bit for bit those of k_bkvb.cl. w_, a0 and alen are multiples of 4 (d and
 * dv of the device cache are, gpu_resident.c), so a vector is all in or all out. */
/* Row group k's store: x − mean_a (keys) or w_p·x (values), zeros outside. */
KVB_DEVICE void kvb_gram_put(KVB_LOCAL float *sj_, KVB_LOCAL float *si_, int k, int j0, int i0, int len, int a0, int alen,
                             int vals, KVB_LOCAL const float *ws, KVB_LOCAL const float *mean, int lid, kvb_float4 x) {
  int rr = lid >> 2, a = 4 * (lid & 3), p = k ? i0 + rr + GT_J * (k - 1) : j0 + rr;
  KVB_LOCAL float *o = k ? si_ + (rr + GT_J * (k - 1)) * (GT_A + 1) + a : sj_ + rr * (GT_A + 1) + a;
  if (p < len && a < alen) {
    if (vals) {
      float wp = ws[p];
      o[0] = wp * x.x, o[1] = wp * x.y, o[2] = wp * x.z, o[3] = wp * x.w;
    } else {
      o[0] = x.x - mean[a0 + a], o[1] = x.y - mean[a0 + a + 1];
      o[2] = x.z - mean[a0 + a + 2], o[3] = x.w - mean[a0 + a + 3];
    }
  } else
    o[0] = o[1] = o[2] = o[3] = 0.0f;
}

/* Stages coordinates [a0, a0 + alen) of the block positions j0 + r (r < GT_J, into sj_) and i0 + r
 * (r < GT_I, into si_), row stride GT_A + 1: centered keys (vals = 0) or weighted values w_p·v
 * (vals = 1); zeros past the block's end or past alen. Work-item lid loads coordinates
 * a0 + 4·(lid mod 4) .. + 3 of row lid / 4 of each of the KVB_GRAM_MLP row groups with one vector
 * load each, every address from local memory (the rows' cache indices cus, staged once per
 * block): no load waits for another, and four consecutive work-items read one 64-byte segment
 * of a row. The same float operations as before on the same values (x − mean_a, w_p·x), so the
 * Gram entries stay bit for bit those of k_bkvb.cl. w_, a0 and alen are multiples of 4 (d and
 * dv of the device cache are, gpu_resident.c), so a vector is all in or all out.
 * KVB_PERFMUT_GRAM_ONE_LOAD (a performance mutant, same numbers: only scripts/ptx-mlp-check can
 * reject it, and must) stores each vector right after its load. */
KVB_DEVICE void kvb_gram_stage(KVB_LOCAL float *sj_, KVB_LOCAL float *si_, int j0, int i0, int len, int a0, int alen,
                               int vals, int w_, kvb_idx hrow, KVB_LOCAL const int *cus, KVB_GLOBAL const float *X,
                               KVB_LOCAL const float *ws, KVB_LOCAL const float *mean, int lid) {
  int rr = lid >> 2, a = 4 * (lid & 3);
  kvb_float4 x[KVB_GRAM_MLP];
  KVB_UNROLL
  for (int k = 0; k < KVB_GRAM_MLP; k++) { /* every load issued before any store */
    int p = k ? i0 + rr + GT_J * (k - 1) : j0 + rr;
    if (p < len && a < alen) x[k] = KVB_LOAD_F4(X, ((hrow + cus[p]) * w_ + a0 + a) / 4);
    else x[k].x = x[k].y = x[k].z = x[k].w = 0.0f; /* defined, though kvb_gram_put stores zeros there */
#ifdef KVB_PERFMUT_GRAM_ONE_LOAD
    kvb_gram_put(sj_, si_, k, j0, i0, len, a0, alen, vals, ws, mean, lid, x[k]);
#endif
  }
#ifndef KVB_PERFMUT_GRAM_ONE_LOAD
  KVB_UNROLL
  for (int k = 0; k < KVB_GRAM_MLP; k++) kvb_gram_put(sj_, si_, k, j0, i0, len, a0, alen, vals, ws, mean, lid, x[k]);
#endif
}

KVB_KERNEL kvb_bkvb_gram_walk(int n, int d, int dv, int m, int b, int nblk, float ks, float beta, float c0,
                              float gamma, KVB_GLOBAL const float *K, KVB_GLOBAL const float *V,
                              KVB_GLOBAL const int *cur, KVB_GLOBAL const float *cw,
                              KVB_GLOBAL const float *u, KVB_GLOBAL int *S, KVB_GLOBAL float *P) {
  KVB_SHARED float mean[KVB_DMAX];
  KVB_SHARED float acc[KVB_BMAX];
  KVB_SHARED float us[KVB_BMAX];
  KVB_SHARED int cus[KVB_BMAX];
  KVB_SHARED float ws[KVB_BMAX];
  KVB_SHARED float gt[GT_J * KVB_BMAX];
  KVB_SHARED float sj_[GT_J * (GT_A + 1)];
  KVB_SHARED float si_[GT_I * (GT_A + 1)];
  KVB_SHARED float sj;
  int g = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int h = g / nblk, blk = g - h * nblk, start = blk * b; /* no div/rem pair: see k_decode_coop.cl */
  int len = m - start < b ? m - start : b;
  kvb_idx hrow = (kvb_idx)h * n;
  KVB_GLOBAL const int *cu = cur + hrow + start;
  KVB_GLOBAL const float *w = cw + hrow + start;
  /* the block's cache rows and weights, read once: every later load's address comes from here */
  for (int i = lid; i < len; i += wg) cus[i] = cu[i], ws[i] = w[i];
  KVB_BARRIER();
  for (int a = lid; a < d; a += wg) { /* block mean of the real tokens (as kvb_bkvb_walk) */
    float sum = 0.0f;
    for (int i = 0; i < len; i++) sum += K[(hrow + cus[i]) * d + a];
    mean[a] = sum / (float)len;
  }
  for (int i = lid; i < len; i += wg) acc[i] = 0.0f, us[i] = u[(kvb_idx)h * m + start + i];
  if (lid == 0) {
    sj = 1.0f; /* s_0 = +1 */
    S[(kvb_idx)h * m + start] = 1;
    P[(kvb_idx)h * m + start] = 0.5f;
  }
  KVB_BARRIER();
  int r0 = lid / 16, c0l = lid - 16 * r0; /* this item's rows r0 + 4x, columns c0l + 16y of a pass */
  for (int j0 = 0; j0 + 1 < len; j0 += GT_J) {
    int nj = len - j0 < GT_J ? len - j0 : GT_J;
    /* the Gram tile: rows j0..j0+nj−1, columns i0.. of the block, in passes of GT_I columns */
    for (int i0 = j0; i0 < len; i0 += GT_I) {
      int ni = len - i0 < GT_I ? len - i0 : GT_I;
      float kd[16], vd[16];
      for (int e = 0; e < 16; e++) kd[e] = 0.0f, vd[e] = 0.0f;
      for (int pass = 0; pass < 2; pass++) {
        int dim = pass ? dv : d;
#ifdef KVB_MUT_GRAM_SKIP_CHUNK
        if (!pass && dim > GT_A) dim -= GT_A;
#endif
        for (int a0 = 0; a0 < dim; a0 += GT_A) {
          int alen = dim - a0 < GT_A ? dim - a0 : GT_A;
          kvb_gram_stage(sj_, si_, j0, i0, len, a0, alen, pass, pass ? dv : d, hrow, cus, pass ? V : K, ws, mean, lid);
          KVB_BARRIER();
          for (int a = 0; a < alen; a++) {
            float xj[4], xi[4];
            for (int x = 0; x < 4; x++) xj[x] = sj_[(r0 + 4 * x) * (GT_A + 1) + a];
            for (int y = 0; y < 4; y++) xi[y] = si_[(c0l + 16 * y) * (GT_A + 1) + a];
            if (pass)
              for (int x = 0; x < 4; x++)
                for (int y = 0; y < 4; y++) vd[4 * x + y] += xi[y] * xj[x];
            else
              for (int x = 0; x < 4; x++)
                for (int y = 0; y < 4; y++) kd[4 * x + y] += xi[y] * xj[x];
          }
#ifndef KVB_MUT_GRAM_NO_STAGE_BARRIER
          KVB_BARRIER(); /* the staging is rewritten by the next chunk */
#endif
        }
      }
      for (int x = 0; x < 4; x++)
        for (int y = 0; y < 4; y++) {
          int jj = r0 + 4 * x, i = i0 + c0l + 16 * y;
          if (jj < nj && c0l + 16 * y < ni) gt[jj * KVB_BMAX + i] = KVB_EXP(ks * kd[4 * x + y] - beta) * (vd[4 * x + y] + c0);
        }
    }
#ifndef KVB_MUT_GRAM_NO_TILE_BARRIER
    KVB_BARRIER(); /* every entry of the tile written before the steps read it */
#endif
    /* the walk's steps of this tile's rows, from local memory */
    for (int jj = 0; jj < nj && j0 + jj + 1 < len; jj++) {
      int j = j0 + jj;
      for (int i = j + 1 + lid; i < len; i += wg) acc[i] += gt[jj * KVB_BMAX + i] * sj;
      KVB_BARRIER();
      if (lid == 0) {
        float p = 0.5f - gamma * acc[j + 1];
        float s = us[j + 1] < p ? 1.0f : -1.0f; /* NaN p: −1, as on the CPU */
        S[(kvb_idx)h * m + start + j + 1] = (int)s;
        P[(kvb_idx)h * m + start + j + 1] = p;
        sj = s;
      }
      KVB_BARRIER();
    }
  }
}

/* kvb_bkvb_halving's rule (k_bkvb.cl) on 64 work-items per head: item L owns positions
 * [L·seg, (L+1)·seg). Counts per segment, an exclusive prefix over the items (item 0, 64
 * additions), then each item finds in its segment the first position where the + count (− count)
 * reaches m/2 and, once c is known, writes its survivors at their prefix-counted slots. */
KVB_KERNEL kvb_bkvb_halving_par(int n, int m, KVB_GLOBAL const int *S, KVB_GLOBAL const int *cur,
                                KVB_GLOBAL const float *cw, KVB_GLOBAL int *ncur, KVB_GLOBAL float *ncw) {
  KVB_SHARED int cnt[KVB_WG + 1];
  KVB_SHARED int firstp, firstm;
  int h = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  KVB_GLOBAL const int *s = S + (kvb_idx)h * m;
  kvb_idx hn = (kvb_idx)h * n;
  int hm = m / 2, seg = (m + wg - 1) / wg, lo = lid * seg, hi = lo + seg < m ? lo + seg : m;
  int np = 0;
  for (int p = lo; p < hi; p++) np += s[p] > 0;
  cnt[lid + 1] = np;
  if (lid == 0) firstp = m, firstm = m;
  KVB_BARRIER();
  if (lid == 0) {
    cnt[0] = 0;
    for (int L = 1; L <= wg; L++) cnt[L] += cnt[L - 1];
  }
#ifndef KVB_MUT_HALVE_NO_PREFIX_BARRIER
  KVB_BARRIER(); /* the prefix counts complete before any item reads its own */
#endif
  int cp = cnt[lid], cmn = lo - cnt[lid]; /* + and − counts before this segment */
  for (int p = lo; p < hi; p++) {
    if (s[p] > 0) {
      if (++cp == hm) firstp = p; /* one item only: the count passes hm once */
    } else {
      if (++cmn == hm) firstm = p;
    }
  }
  KVB_BARRIER();
  int fp = firstp < m ? firstp : 0, fm = firstm < m ? firstm : 0; /* never reached: 0, as k_bkvb.cl */
  int c = fp > fm ? fp : fm, sc = s[c];
  /* survivors: positions <= c with the sign opposite s[c] (×2), then positions after c (×1) */
  int no = 0;
  for (int p = lo; p < hi && p <= c; p++) no += s[p] != sc;
  KVB_BARRIER(); /* everyone has read cnt before it is reused */
  cnt[lid + 1] = no;
  KVB_BARRIER();
  if (lid == 0) {
    cnt[0] = 0;
    for (int L = 1; L <= wg; L++) cnt[L] += cnt[L - 1];
  }
  KVB_BARRIER();
  int k = cnt[lid], kopp = cnt[wg];
#ifdef KVB_MUT_HALVE_PAR_OFF
  if (lid > 0) k += 1;
#endif
  for (int p = lo; p < hi; p++) {
    if (p <= c) {
      if (s[p] != sc) {
        if (k < hm) ncur[hn + k] = cur[hn + p], ncw[hn + k] = 2.0f * cw[hn + p];
        k++;
      }
    } else {
      int kk = kopp + (p - c - 1);
      if (kk < hm) ncur[hn + kk] = cur[hn + p], ncw[hn + kk] = cw[hn + p];
    }
  }
}

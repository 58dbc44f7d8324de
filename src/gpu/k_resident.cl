/* k_resident.cl — device-side bookkeeping of device-resident state (gpu_resident.h), written once
 * against k_prelude.cl: copies between strided row arrays (appending new tokens to a KV cache,
 * growing an array's capacity), fills, and block BalanceKV's index lists built where they live.
 * All are grid-stride loops over 32-bit words (floats and ints alike: a copy moves bits). The loop
 * counters and every offset are kvb_idx (64-bit): a cache of Hkv·cap·d words passes 2^31 at, e.g.,
 * 8 KV heads × 2^20 tokens × d = 256; the int arguments are bounded by gpu_limits.h. */

/* dst[(h·ld_dst + off_dst)·w + e] = src[(h·ld_src + off_src)·w + e] for h < H, e < rows·w.
 * Mutant define KVB_MUT_APPEND_DROP_LAST: each head's last row is not copied (an append or a
 * growth off by one; it stays in bounds, so on PoCL it cannot corrupt host memory). */
KVB_KERNEL kvb_restride(int H, int rows, int w, int ld_src, int off_src, int ld_dst, int off_dst,
                        KVB_GLOBAL const int *src, KVB_GLOBAL int *dst) {
  kvb_idx per = (kvb_idx)rows * w, total = per * H, gsz = (kvb_idx)KVB_LOCAL_SIZE() * KVB_NUM_GROUPS();
  for (kvb_idx i = (kvb_idx)KVB_GROUP_ID() * KVB_LOCAL_SIZE() + KVB_LOCAL_ID(); i < total; i += gsz) {
    kvb_idx h = i / per, e = i - h * per;
#ifdef KVB_MUT_APPEND_DROP_LAST
    if (e >= per - w) continue;
#endif
    dst[(h * ld_dst + off_dst) * w + e] = src[(h * ld_src + off_src) * w + e];
  }
}

/* dst[i] = v for i < H·rows·w (the count as three int factors: it passes 2^31 for a big cache). */
KVB_KERNEL kvb_fill_i32(int H, int rows, int w, int v, KVB_GLOBAL int *dst) {
  kvb_idx count = (kvb_idx)H * rows * w, gsz = (kvb_idx)KVB_LOCAL_SIZE() * KVB_NUM_GROUPS();
  for (kvb_idx i = (kvb_idx)KVB_GROUP_ID() * KVB_LOCAL_SIZE() + KVB_LOCAL_ID(); i < count; i += gsz) dst[i] = v;
}

/* Block BalanceKV's first sequence of head h (< H): cur[h·ld + i] = off + i (a row of the
 * cache), cw = 1, for i < m. */
KVB_KERNEL kvb_bkvb_init(int H, int ld, int m, int off, KVB_GLOBAL int *cur, KVB_GLOBAL float *cw) {
  kvb_idx total = (kvb_idx)H * m, gsz = (kvb_idx)KVB_LOCAL_SIZE() * KVB_NUM_GROUPS();
  for (kvb_idx i = (kvb_idx)KVB_GROUP_ID() * KVB_LOCAL_SIZE() + KVB_LOCAL_ID(); i < total; i += gsz) {
    kvb_idx h = i / m;
    int k = (int)(i - h * m);
    cur[h * ld + k] = off + k;
    cw[h * ld + k] = 1.0f;
  }
}

/* The weighted query's entry list of head h (kk = f + nr + kept entries, gpu_methods.c's order):
 * the first f rows and the nr recent rows [f + mid, f + mid + nr) with log-weights 0, then the
 * kept rows cur[h·ld + k] with ln = lntab[e] for their weight 2^e (lntab[e] = ln 2^e rounded to
 * float by the host, as the host rounds log(w)) and ld = ln (consistent) or lT (the paper's 2^T). */
KVB_KERNEL kvb_bkvb_qlist(int H, int f, int mid, int nr, int kept, int ldc, int consistent, float lT,
                          KVB_GLOBAL const int *cur, KVB_GLOBAL const float *cw,
                          KVB_GLOBAL const float *lntab, KVB_GLOBAL int *idx,
                          KVB_GLOBAL float *ln, KVB_GLOBAL float *ld) {
  int kk = f + nr + kept;
  kvb_idx total = (kvb_idx)H * kk, gsz = (kvb_idx)KVB_LOCAL_SIZE() * KVB_NUM_GROUPS();
  for (kvb_idx i = (kvb_idx)KVB_GROUP_ID() * KVB_LOCAL_SIZE() + KVB_LOCAL_ID(); i < total; i += gsz) {
    kvb_idx h = i / kk;
    int j = (int)(i - h * kk);
    if (j < f + nr) {
      idx[i] = j < f ? j : mid + j;
      ln[i] = 0.0f, ld[i] = 0.0f;
    } else {
      int k = j - f - nr, e = 0;
      float x = cw[h * ldc + k];
      while (x > 1.5f) x *= 0.5f, e++; /* cw = 2^e exactly (the halving doubles) */
      idx[i] = cur[h * ldc + k];
      ln[i] = lntab[e];
      ld[i] = consistent ? lntab[e] : lT;
    }
  }
}

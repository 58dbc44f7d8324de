/* k_decode_coop.cl — decode attention shaped for the hardware (roofline.h): the split
 * pass of k_attention.cl's split-K decode, computing the same numbers in the same order, but
 *   - cooperative row loads: the group loads a tile of consecutive token rows of K (then of V)
 *     with 16-byte vector loads (KVB_LOAD_F4 / KVB_LOAD_H4: 4 floats or 4 halves per lane; the
 *     rows of a split are contiguous, so consecutive lanes read consecutive 16-byte words) into a
 *     local tile padded to dk + 1 floats per row (lane r then reads row r without bank conflicts;
 *     KVB_COOP_TILE floats keep the group's local memory at 25 KB, under the 32 KB many OpenCL
 *     devices and Oclgrind offer, and let 9 groups share an H100 SM),
 *     instead of each lane walking its own row from global memory (32 lines per warp load);
 *   - GQA packing: one group serves up to KVB_COOP_GMAX query heads of one KV head (query head
 *     h reads KV head h / G, G = H / Hkv), so each K/V row crosses HBM once for all of them, and
 *     each key element read from the tile serves all of them (work-item r: row r, every query);
 *   - binary16 K/V widened to float on load, float accumulation throughout;
 *   - a row stride `ld` >= n per KV head, so it reads a device-resident cache with spare
 *     capacity (gpu_resident.h) without repacking.
 * Same numbers as kvb_attn_split: each score is scale·Σ_a q_a k_a summed in order a = 0..dk−1,
 * the max is a max (order-free), p_t = e^{s_t − m}, l = Σ_t p_t in order t, and O_a = Σ_t p_t v_ta
 * in order t (tile after tile, row after row): on the same device the partials are bit for bit
 * those of kvb_attn_split on the K/V rows of each query head (kvb-gpucheck test checks it), and
 * kvb_attn_combine finishes both.
 *
 * Group g = s + nsplit·(pk + npack·(hk + Hkv·qi)): split s, pack pk of the KV head's query heads
 * (heads hk·G + pk·GMAX + i, i < min(GMAX, G − pk·GMAX)), KV head hk, query qi. Q: nq×H×dk;
 * K: Hkv×ld×dk, V: Hkv×ld×dv (rows [0, n) used); logw: Hkv×ld (has_w); Mo, Lo: (s, h, qi) at
 * s + nsplit·(h + H·qi) as kvb_attn_split writes them, Oo: dv per such entry. dk, dv multiples of 4.
 *
 * Mutant define KVB_MUT_COOP_NO_TILE_BARRIER — no barrier between one tile's reads and the next
 * tile's loads: a race for a race detector. PoCL cannot show it (it puts an implicit barrier at
 * the latch of a loop that contains one), so kvb-gpucheck's PoCL mutant runs leave it out;
 * scripts/oclgrind-check runs it on the tiny_coop case (two K and two V tiles in a split) and
 * Oclgrind must report the race. */
#define KVB_COOP_TILE 4128 /* floats of the local tile: 32 rows at d = 128, 16 at d = 256 (16.5 KB) */
#define KVB_COOP_GMAX 4

/* Vector loads each lane has in flight in kvb_coop_load: the loop issues KVB_COOP_MLP loads (one
 * per vector lid + k·wg, k < KVB_COOP_MLP) before the first of their stores to the tile, so a lane
 * waits one DRAM latency per KVB_COOP_MLP vectors, not per vector (Little's law: 64 lanes × 9
 * groups × 4 × 16 B = 36 KB in flight per H100 SM at float32, 18 KB at float16, against the
 * 10.5–14.9 KB that stream HBM at its peak; one load per lane gives 9.2 / 4.6 KB). roofline.c
 * reads this line of the embedded kernel text for its in-flight estimate, and
 * scripts/ptx-mlp-check counts the loads nvcc issues before the first store in the compiled PTX
 * (it must find at least this many; built with -DKVB_COOP_MLP=1 it must see one and fail). */
#ifndef KVB_COOP_MLP
#define KVB_COOP_MLP 4
#endif

/* Loads rows [0, rows) starting at element `base` (a multiple of 4) of a w-wide row-major array
 * into tile (row stride w + 1). w is a multiple of 4, so a vector never straddles two rows: vector
 * v holds elements 4v..4v+3 of row r = ⌊4v / w⌋, stored at tile[4v + r] (r·(w + 1) + 4v − r·w).
 * Lane lid takes v = lid + j·wg; its row is advanced by wg vectors per step (dr rows and dc
 * vectors, computed once), so the loop has no integer division. The two loops differ only in the
 * load: not one load behind `is_half ? :`, which a compiler may turn into both loads and a select,
 * reading the float view of a half buffer twice as far (out of bounds). */
#define KVB_COOP_LOAD_LOOP(LOAD, X)                                                              \
  for (int v0 = lid; v0 < nvec; v0 += KVB_COOP_MLP * wg) {                                        \
    kvb_float4 x[KVB_COOP_MLP];                                                                   \
    KVB_UNROLL                                                                                    \
    for (int k = 0; k < KVB_COOP_MLP; k++) /* every load issued before any store */               \
      if (v0 + k * wg < nvec) x[k] = LOAD(X, base / 4 + v0 + k * wg);                             \
    KVB_UNROLL                                                                                    \
    for (int k = 0; k < KVB_COOP_MLP; k++) {                                                      \
      if (v0 + k * wg < nvec) {                                                                   \
        KVB_LOCAL float *o = tile + 4 * (v0 + k * wg) + r;                                        \
        o[0] = x[k].x, o[1] = x[k].y, o[2] = x[k].z, o[3] = x[k].w;                               \
      }                                                                                           \
      r += dr, c += dc;                                                                           \
      if (c >= w4) r += 1, c -= w4;                                                               \
    }                                                                                             \
  }
KVB_DEVICE void kvb_coop_load(KVB_LOCAL float *tile, KVB_GLOBAL const float *xf, KVB_GLOBAL const kvb_half *xh,
                              int is_half, kvb_idx base, int rows, int w, int lid, int wg) {
  int w4 = w / 4, nvec = rows * w4;
  int r = lid / w4, c = lid - r * w4, dr = wg / w4, dc = wg - dr * w4;
  if (is_half)
    KVB_COOP_LOAD_LOOP(KVB_LOAD_H4, xh)
  else
    KVB_COOP_LOAD_LOOP(KVB_LOAD_F4, xf)
}

KVB_KERNEL kvb_attn_coop(int n, int ld, int dk, int dv, int H, int G, int chunk, int nsplit, float scale,
                         int is_half, int has_w, KVB_GLOBAL const float *Q, KVB_GLOBAL const float *Kf,
                         KVB_GLOBAL const kvb_half *Kh, KVB_GLOBAL const float *Vf,
                         KVB_GLOBAL const kvb_half *Vh, KVB_GLOBAL const float *logw,
                         KVB_GLOBAL float *Mo, KVB_GLOBAL float *Lo, KVB_GLOBAL float *Oo) {
  KVB_SHARED float tile[KVB_COOP_TILE];
  KVB_SHARED float qs[KVB_COOP_GMAX * KVB_DMAX];
  KVB_SHARED float p[KVB_COOP_GMAX * KVB_CHUNK_MAX];
  KVB_SHARED float red[KVB_WG];
  KVB_SHARED float msh[KVB_COOP_GMAX];
  int g = KVB_GROUP_ID(), lid = KVB_LOCAL_ID(), wg = KVB_LOCAL_SIZE();
  int npack = (G + KVB_COOP_GMAX - 1) / KVB_COOP_GMAX, Hkv = H / G;
  /* quotients and remainders spelled out (x − (x/y)·y): a div/rem pair of the same operands
   * becomes an LLVM `freeze` that Oclgrind's uninitialized-value checker cannot execute */
  int rest = g / nsplit, s = g - rest * nsplit, r2 = rest / npack, pk = rest - r2 * npack;
  int qi = r2 / Hkv, hk = r2 - qi * Hkv;
  int h0 = hk * G + pk * KVB_COOP_GMAX;
  int gn = G - pk * KVB_COOP_GMAX < KVB_COOP_GMAX ? G - pk * KVB_COOP_GMAX : KVB_COOP_GMAX;
  int start = s * chunk;
  int len = n - start < chunk ? n - start : chunk;
  for (int e = lid; e < gn * dk; e += wg) {
    int qg = e / dk;
    qs[e] = Q[((kvb_idx)(h0 + qg) + (kvb_idx)H * qi) * dk + (e - qg * dk)];
  }
  /* scores, a tile of rk rows at a time; work-item r takes row r for every query of the pack,
   * so each key element read from the tile serves gn FMAs */
  int rk = KVB_COOP_TILE / (dk + 1) < wg ? KVB_COOP_TILE / (dk + 1) : wg;
  int rv = KVB_COOP_TILE / (dv + 1) < wg ? KVB_COOP_TILE / (dv + 1) : wg;
  for (int t0 = 0; t0 < len; t0 += rk) {
    int rows = len - t0 < rk ? len - t0 : rk;
    kvb_coop_load(tile, Kf, Kh, is_half, ((kvb_idx)hk * ld + start + t0) * dk, rows, dk, lid, wg);
    KVB_BARRIER();
    for (int r = lid; r < rows; r += wg) {
      float acc[KVB_COOP_GMAX];
      KVB_UNROLL
      for (int qg = 0; qg < KVB_COOP_GMAX; qg++) acc[qg] = 0.0f;
      for (int a = 0; a < dk; a++) {
        float kx = tile[r * (dk + 1) + a];
        KVB_UNROLL
        for (int qg = 0; qg < KVB_COOP_GMAX; qg++)
          if (qg < gn) acc[qg] += qs[qg * dk + a] * kx;
      }
      float lw = has_w ? logw[(kvb_idx)hk * ld + start + t0 + r] : 0.0f;
      KVB_UNROLL
      for (int qg = 0; qg < KVB_COOP_GMAX; qg++)
        if (qg < gn) p[qg * KVB_CHUNK_MAX + t0 + r] = scale * acc[qg] + lw;
    }
#ifndef KVB_MUT_COOP_NO_TILE_BARRIER
    KVB_BARRIER(); /* the tile is read before the next one overwrites it */
#endif
  }
  /* per query: the tree max (kept in local memory by work-item 0: a register array indexed by
   * this loop's variable would live in local memory), then the exponentials */
  float lq[KVB_COOP_GMAX];
  for (int qg = 0; qg < gn; qg++) {
    float mloc = KVB_NEG_INF;
    for (int t = lid; t < len; t += wg) mloc = KVB_FMAX(mloc, p[qg * KVB_CHUNK_MAX + t]);
    red[lid] = mloc;
    KVB_BARRIER();
    for (int off = wg / 2; off > 0; off >>= 1) {
      if (lid < off) red[lid] = KVB_FMAX(red[lid], red[lid + off]);
      KVB_BARRIER();
    }
    float mx = red[0];
    if (lid == 0) msh[qg] = mx;
    KVB_BARRIER(); /* red[0] read by all before the next query's partials overwrite it */
    for (int t = lid; t < len; t += wg) p[qg * KVB_CHUNK_MAX + t] = KVB_EXP(p[qg * KVB_CHUNK_MAX + t] - mx);
  }
  KVB_BARRIER(); /* every p written before any work-item reads them all */
  KVB_UNROLL
  for (int qg = 0; qg < KVB_COOP_GMAX; qg++) {
    float l = 0.0f;
    if (qg < gn)
      for (int t = 0; t < len; t++) l += p[qg * KVB_CHUNK_MAX + t];
    lq[qg] = l;
  }
  /* values: lane a (a ≡ lid mod wg) accumulates coordinate a of each query over t in order; the
   * accumulators are registers (every index a constant once the loops over the pack and over
   * the KVB_DMAX / KVB_WG coordinates per lane are unrolled: no local-memory stack frame, which
   * ptxas's report checks in scripts/cuda-compile-check). wg = KVB_WG (gpu_ops.c launches it so). */
  float oacc[KVB_COOP_GMAX * (KVB_DMAX / KVB_WG)];
  KVB_UNROLL
  for (int i = 0; i < KVB_COOP_GMAX * (KVB_DMAX / KVB_WG); i++) oacc[i] = 0.0f;
  for (int t0 = 0; t0 < len; t0 += rv) {
    int rows = len - t0 < rv ? len - t0 : rv;
    kvb_coop_load(tile, Vf, Vh, is_half, ((kvb_idx)hk * ld + start + t0) * dv, rows, dv, lid, wg);
    KVB_BARRIER();
    KVB_UNROLL
    for (int ai = 0; ai < KVB_DMAX / KVB_WG; ai++) { /* each value element read once for all queries */
      int a = ai * wg + lid;
      if (a < dv)
        for (int r = 0; r < rows; r++) {
          float vx = tile[r * (dv + 1) + a];
          KVB_UNROLL
          for (int qg = 0; qg < KVB_COOP_GMAX; qg++)
            if (qg < gn) oacc[qg * (KVB_DMAX / KVB_WG) + ai] += p[qg * KVB_CHUNK_MAX + t0 + r] * vx;
        }
    }
    KVB_BARRIER();
  }
  KVB_UNROLL
  for (int qg = 0; qg < KVB_COOP_GMAX; qg++) {
    if (qg >= gn) continue;
    kvb_idx go = s + (kvb_idx)nsplit * ((h0 + qg) + (kvb_idx)H * qi);
    KVB_UNROLL
    for (int ai = 0; ai < KVB_DMAX / KVB_WG; ai++)
      if (ai * wg + lid < dv) Oo[go * dv + ai * wg + lid] = oacc[qg * (KVB_DMAX / KVB_WG) + ai];
    if (lid == 0) {
      Mo[go] = len > 0 ? msh[qg] : KVB_NEG_INF;
      Lo[go] = lq[qg];
    }
  }
}

/* roofline.c — the performance model of roofline.h and each kernel's counts. Every count below is
 * read off the kernel's code (named in each function's comment); when the code changes, its
 * model must change with it. */
#include "roofline.h"
#include "gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The value N of the line "#define NAME N" of the embedded kernel text (gpu.h), 0 when there is
 * none: the loads in flight per lane are the kernels' own constants (KVB_COOP_MLP in
 * k_decode_coop.cl, KVB_GRAM_MLP in k_bkvb_gram.cl), the sizes of the arrays their load loops
 * fill before the first store, so the model follows the code, and scripts/ptx-mlp-check checks
 * the compiled code issues that many. */
double kvb_roof_kernel_define(const char *name) {
  const char *src = kvb_gpu_kernel_source();
  size_t n = strlen(name);
  for (const char *q = src; (q = strstr(q, "#define ")) != NULL; q += 8)
    if (!strncmp(q + 8, name, n) && (q[8 + n] == ' ' || q[8 + n] == '\t')) return strtod(q + 8 + n, NULL);
  return 0;
}

/* Vendor figures (HBM peak, FP32 non-tensor peak, SMs, boost clock, local memory per SM) and
 * latencies from published microbenchmarks of these parts (dependent FMA 4 cycles; a 64-item
 * barrier ~24 cycles; L2 hit ~260 cycles on Hopper, ~200 on Ampere; HBM ~1000 cycles at boost).
 * bw_eff 0.90: what a streaming copy typically reaches of the vendor peak on HBM parts — an
 * assumption, replaced by a measured copy when perf runs on the device itself. l2_bw: the L2 read
 * bandwidth microbenchmarks report (H100 ~5.5 TB/s, A100 ~4 TB/s; an assumption). The in-flight
 * estimate's DRAM latency: 700–1000 cycles at 1.7 GHz on Hopper (412–588 ns; microbenchmarks
 * report ~480–600 ns under load), the same cycles at the A100's 1.41 GHz. */
const kvb_roof_device kvb_roof_devices[] = {
    {"H100 SXM", 3.35e12, 0.90, 66.9e12, 132, 1.98e9, 228 * 1024.0, 4, 24, 260, 1000, 2.5e-6, 5.5e12, 700, 1000, 1.7e9},
    {"H200 SXM", 4.80e12, 0.90, 66.9e12, 132, 1.98e9, 228 * 1024.0, 4, 24, 260, 1000, 2.5e-6, 5.5e12, 700, 1000, 1.7e9},
    {"A100 SXM 80GB", 2.039e12, 0.90, 19.5e12, 108, 1.41e9, 164 * 1024.0, 4, 24, 200, 700, 2.5e-6, 4.0e12, 700, 1000, 1.41e9},
    {NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};

const kvb_roof_device *kvb_roof_device_find(const char *name) {
  for (const kvb_roof_device *d = kvb_roof_devices; name && d->name; d++)
    if (strstr(d->name, name)) return d;
  return NULL;
}

int kvb_roof_phase_begin(kvb_roof_kernel *k, const kvb_roof_device *d, const char *what, double groups,
                         double lanes, double shm_group) {
  if (k->nph >= KVB_ROOF_MAXPH) return KVB_ROOF_MAXPH - 1;
  kvb_roof_phase *p = &k->ph[k->nph];
  memset(p, 0, sizeof *p);
  p->what = what;
  p->groups = groups;
  p->lanes = lanes;
  double warps = ceil(lanes / 32), r = fmin(32, floor(64 / warps)); /* 32 groups, 64 warps per SM */
  if (shm_group > 0) r = fmin(r, floor(d->shm_per_sm / shm_group));
  p->resident = r < 1 ? 1 : r;
  return k->nph++;
}

void kvb_roof_stream_mlp(kvb_roof_kernel *k, int p, double bytes, kvb_roof_access acc, double lane_bytes, int from_dram,
                         double mlp, double dep) {
  kvb_roof_phase *ph = &k->ph[p];
  if (from_dram) ph->dram += bytes, ph->rounds_dram += bytes * dep / (mlp * lane_bytes);
  else ph->l2 += bytes, ph->rounds_l2 += bytes * dep / (mlp * lane_bytes);
  double per_wave = acc == KVB_ACC_COALESCED ? fmin(128, 32 * lane_bytes) : lane_bytes;
  ph->wave += bytes / per_wave;
}
void kvb_roof_stream(kvb_roof_kernel *k, int p, double bytes, kvb_roof_access acc, double lane_bytes, int from_dram) {
  /* 4 loads in flight: nvcc unrolls a loop of independent loads with no store between them by 4
   * (kvb_attn_split's row loop in PTX: four ld.global per iteration); a loop that stores each
   * element it loads says so with kvb_roof_stream_mlp */
  kvb_roof_stream_mlp(k, p, bytes, acc, lane_bytes, from_dram, 4, 1);
}
void kvb_roof_shm(kvb_roof_kernel *k, int p, double bytes) { k->ph[p].shm += bytes; }
void kvb_roof_flops(kvb_roof_kernel *k, int p, double flops, double lane_util) {
  kvb_roof_phase *ph = &k->ph[p];
  /* keep Σ flops/util exact: the phase's util is the flop-weighted harmonic mean */
  double t = (ph->lane_util > 0 ? ph->flops / ph->lane_util : 0) + flops / lane_util;
  ph->flops += flops;
  ph->lane_util = ph->flops > 0 ? ph->flops / t : 1;
}
void kvb_roof_serial(kvb_roof_kernel *k, int p, double cycles) { k->ph[p].serial += cycles; }

kvb_roof_result kvb_roof_predict(const kvb_roof_kernel *k, const kvb_roof_device *d, double bw_measured) {
  kvb_roof_result r;
  memset(&r, 0, sizeof r);
  double bw = bw_measured > 0 ? bw_measured : d->bw * d->bw_eff, peak_bw = bw_measured > 0 ? bw_measured : d->bw;
  double lanes_rate = d->sms * d->clk; /* wavefronts/s; local memory: 128 B per cycle per SM */
  for (int i = 0; i < k->nph; i++) {
    const kvb_roof_phase *p = &k->ph[i];
    double active = fmin(1, p->groups / d->sms);
    double td = p->dram / bw, tl = p->wave / lanes_rate, ts = p->shm / (128 * lanes_rate), t2 = p->l2 / d->l2_bw;
    double tf = p->flops > 0 ? p->flops / (d->peak * (p->lane_util > 0 ? p->lane_util : 1)) : 0;
    double m = fmax(fmax(fmax(td, tl), fmax(ts, tf)), t2), tput = m / (active > 0 ? active : 1);
    double tc = p->serial / d->clk * ceil(p->groups / (p->resident * d->sms));
    r.t_ph[i] = fmax(tput, tc);
    r.bound[i] = tc >= tput ? 'C' : m == td ? 'D' : m == tl ? 'L' : m == ts ? 'S' : m == t2 ? '2' : 'F';
    r.t_pred += r.t_ph[i];
    /* the in-flight limit: lanes of the resident groups of the SMs in use, each with its loads
     * in flight for one latency */
    double res = fmin(p->resident, ceil(p->groups / d->sms)), sms = fmin(d->sms, p->groups);
    double lanes_if = p->lanes * res * sms;
    for (int l = 0; l < 2; l++) {
      double lat_s = (l ? d->lat_hi : d->lat_lo) / d->clk_lat, lat2_s = d->lat_l2 / d->clk;
      double tlat = lanes_if > 0 ? (p->rounds_dram * lat_s + p->rounds_l2 * lat2_s) / lanes_if : 0;
      r.t_if[l] += fmax(r.t_ph[i], tlat);
    }
  }
  r.t_pred += k->launches * d->launch_s;
  double tb = k->useful_bytes / peak_bw, tfl = k->flops / d->peak;
  r.t_roof = fmax(tb, tfl);
  r.memory_bound = tb >= tfl;
  r.frac_bw = tb / r.t_pred, r.frac_peak = tfl / r.t_pred, r.frac_roof = r.t_roof / r.t_pred;
  for (int l = 0; l < 2; l++) {
    r.t_if[l] += k->launches * d->launch_s;
    r.frac_bw_if[l] = tb / r.t_if[l], r.frac_peak_if[l] = tfl / r.t_if[l];
  }
  return r;
}

/* ---- decode attention ---- */
/* coop = 0, k_attention.cl kvb_attn_split + kvb_attn_combine: one group of 64 per (split, head,
 * query); K pass: lane t walks token row t (ROW_PER_LANE), q from local (broadcast); the exp; l
 * and the V pass: lane a accumulates coordinate a over the split's tokens (COALESCED scalar);
 * partials out, the combine reads them. Each query head reads its own K/V (no GQA sharing: with
 * Hkv < H the caller replicates them, so DRAM bytes are per query head).
 * coop = 1, k_decode_coop.cl kvb_attn_coop: one group of 64 per (split, KV head, query) serving
 * the G = H/Hkv query heads of that KV head; K and V come in tiles of min(64, 4128/(d + 1)) rows,
 * loaded with 4-element vector loads (COALESCED, 16 B f32 / 8 B f16 lanes), KVB_COOP_MLP in flight
 * per lane (issued before their stores to the tile), into a padded local tile; work-item r reads row r once per coordinate for all G queries (the query a broadcast per
 * query), the V pass reads the tile column by column; the same combine. Resident groups come from
 * local memory alone (25 KB: 9 per H100 SM); the registers the four loads in flight cost (ptxas:
 * 105 on sm_90, 96 on sm_80, up from 56 / 61) still allow 9 groups of 64 on an H100 SM (64K
 * registers, allocated per warp in 8-register steps), so they do not bind. */
#define COOP_TILE 4128.0
void kvb_roof_decode(kvb_roof_kernel *k, double H, double Hkv, double n, double dk, double dv, double nq,
                     double es, double chunk, int coop, const kvb_roof_device *d) {
  memset(k, 0, sizeof *k);
  double G = H / Hkv, nsplit = ceil(n / chunk), len = fmin(chunk, n);
  k->useful_bytes = Hkv * n * (dk + dv) * es + nq * H * (dk + dv) * 4;
  k->flops = nq * H * n * (2 * dk + 2 * dv + 4);
  k->launches = 2;
  double part = nq * H * nsplit * (dv + 2) * 4; /* M, L, O partials */
  if (!coop) {
    double groups = nsplit * H * nq, shm = (KVB_GPU_DMAX + KVB_GPU_CHUNK_MAX + KVB_GPU_WG) * 4.0;
    int p = kvb_roof_phase_begin(k, d, "K pass (a token row per lane)", groups, 64, shm);
    kvb_roof_stream(k, p, nq * H * n * dk * es, KVB_ACC_ROW_PER_LANE, es, 1);
    kvb_roof_stream(k, p, groups * dk * 4, KVB_ACC_COALESCED, 4, 0);
    kvb_roof_flops(k, p, nq * H * n * (2 * dk + 2), fmin(1, len / 64));
    kvb_roof_shm(k, p, nq * H * n * dk * 4); /* q[a] broadcast: one 128-B wavefront per warp per a */
    kvb_roof_serial(k, p, ceil(len / 64) * (d->lat_dram + dk * d->lat_fma) + 6 * d->lat_barrier);
    p = kvb_roof_phase_begin(k, d, "exp, sum, V pass (coalesced scalar)", groups, 64, shm);
    kvb_roof_stream(k, p, nq * H * n * dv * es, KVB_ACC_COALESCED, es, 1);
    kvb_roof_stream(k, p, part, KVB_ACC_COALESCED, 4, 1);
    kvb_roof_flops(k, p, nq * H * n * (2 * dv + 2), fmin(1, dv / 64));
    kvb_roof_shm(k, p, groups * 2 * len * (1 + ceil(dv / 64)) * 128); /* p[t] broadcasts */
    kvb_roof_serial(k, p, len * ceil(dv / 64) * d->lat_fma + d->lat_l2);
  } else {
    double groups = nsplit * Hkv * nq;
    double gmax = 4; /* KVB_COOP_GMAX */
    double shm = (COOP_TILE + gmax * KVB_GPU_DMAX + gmax * KVB_GPU_CHUNK_MAX + KVB_GPU_WG) * 4;
    double rk = fmin(64, floor(COOP_TILE / (dk + 1))), rv = fmin(64, floor(COOP_TILE / (dv + 1)));
    double tiles = ceil(len / rk), vtiles = ceil(len / rv);
    double mlp = kvb_roof_kernel_define("KVB_COOP_MLP");
    if (mlp < 1) mlp = 1;
    int p = kvb_roof_phase_begin(k, d, "K tiles (vector loads, G queries per row)", groups, 64, shm);
    kvb_roof_stream_mlp(k, p, nq * Hkv * n * dk * es, KVB_ACC_COALESCED, 4 * es, 1, mlp, 1);
    kvb_roof_stream(k, p, nq * H * nsplit * dk * 4, KVB_ACC_COALESCED, 4, 0);
    kvb_roof_flops(k, p, nq * H * n * (2 * dk + 2), fmin(1, fmin(rk, len) / 64));
    /* tile store + each lane's row read (once for all G queries) + G query broadcasts, 4-byte floats */
    kvb_roof_shm(k, p, nq * Hkv * n * dk * 4 * (2 + G));
    kvb_roof_serial(k, p, tiles * (d->lat_dram + 2 * d->lat_barrier + dk * fmax(d->lat_fma, fmin(G, gmax))));
    p = kvb_roof_phase_begin(k, d, "exp, sum, V tiles (vector loads)", groups, 64, shm);
    kvb_roof_stream_mlp(k, p, nq * Hkv * n * dv * es, KVB_ACC_COALESCED, 4 * es, 1, mlp, 1);
    kvb_roof_stream(k, p, part, KVB_ACC_COALESCED, 4, 1);
    kvb_roof_flops(k, p, nq * H * n * (2 * dv + 2), fmin(1, dv / 64));
    /* tile store, each element read once (lane a, row r), and per query the p_t broadcast (one
     * wavefront per warp per row: 4 B per element) */
    kvb_roof_shm(k, p, nq * Hkv * n * dv * 4 * (2 + G));
    kvb_roof_serial(k, p, vtiles * (d->lat_dram + 2 * d->lat_barrier + rv * fmin(G, gmax) * ceil(dv / 64) * d->lat_fma));
  }
  int p = kvb_roof_phase_begin(k, d, "combine", H * nq, 64, 0);
  kvb_roof_stream(k, p, part, KVB_ACC_COALESCED, 4, 0);
  kvb_roof_stream(k, p, nq * H * dv * 4, KVB_ACC_COALESCED, 4, 1);
  kvb_roof_flops(k, p, nq * H * nsplit * (3 * dv + 20), fmin(1, dv / 64));
  kvb_roof_serial(k, p, nsplit * (2 * d->lat_fma + 20) * ceil(dv / 64));
}

/* ---- SubGen ---- */
/* k_subgen.cl kvb_subgen_query: one group per (head, query). Pass 1 (the max): lane e takes slots
 * and samples e ≡ lid, each a dot product from global memory (ROW_PER_LANE) and, per slot, ‖v‖²
 * (ROW_PER_LANE over Mv). Pass 2: the samples again (τ), the slots again in chunks of 256 (p), then
 * the value pass over Mv (COALESCED) with Z read-modify-written per chunk. The state is read from
 * HBM once per head; the other queries' re-reads are counted as cache hits. */
void kvb_roof_subgen_query(kvb_roof_kernel *k, double H, double nq, double dk, double dv, double mc, double t,
                           double s, const kvb_roof_device *d) {
  memset(k, 0, sizeof *k);
  double ns = mc * t, terms = s + ns, groups = H * nq;
  double shm = (KVB_GPU_DMAX + KVB_GPU_CHUNK_MAX + KVB_GPU_WG) * 4.0;
  double state = ns * dk * 4 + mc * 4 + s * (dk + dv + 1) * 4;
  k->useful_bytes = H * state + nq * H * (dk + dv) * 4;
  k->flops = nq * H * (terms * (2 * dk + 4) + s * 2 * dv);
  k->launches = 1;
  double util = fmin(1, terms / 64), chain = ceil(terms / 64) * (d->lat_l2 + dk * d->lat_fma) + ceil(s / 64) * dv * d->lat_fma;
  for (int pass = 0; pass < 2; pass++) {
    int p = kvb_roof_phase_begin(k, d, pass ? "pass 2: sums, slot values" : "pass 1: max over slots and samples", groups, 64, shm);
    kvb_roof_stream(k, p, H * (ns * dk + s * dk + s * dv) * 4, KVB_ACC_ROW_PER_LANE, 4, pass == 0);
    kvb_roof_stream(k, p, (nq - 1 + pass) * H * (ns * dk + s * dk + s * dv) * 4, KVB_ACC_ROW_PER_LANE, 4, 0);
    kvb_roof_stream(k, p, nq * H * (ns + s) * 4, KVB_ACC_COALESCED, 4, pass == 0);
    kvb_roof_flops(k, p, nq * H * (terms * (2 * dk + 4) + s * 2 * dv), util);
    kvb_roof_serial(k, p, chain + 6 * d->lat_barrier);
    if (pass) {
      kvb_roof_stream(k, p, nq * H * s * dv * 4 + 2 * nq * H * ceil(s / 256) * dv * 4, KVB_ACC_COALESCED, 4, 0);
      kvb_roof_flops(k, p, nq * H * s * 2 * dv, fmin(1, dv / 64));
      kvb_roof_shm(k, p, groups * 2 * s * ceil(dv / 64) * 128);
      kvb_roof_serial(k, p, s * ceil(dv / 64) * d->lat_fma);
    }
  }
}

/* k_subgen.cl kvb_subgen_update: one group per head walks its nt tokens in order. Per token: the
 * key into local memory (a DRAM round trip before the barrier), lane i the distances to
 * representatives i ≡ lid (ROW_PER_LANE over rep, cache-resident), a 6-level tree arg min, a
 * thread-0 section (‖v‖² over dv: ONE_LANE; the read-modify-write of µ and n_i: two dependent L2
 * round trips), then the sample and slot copies; 4 barriers. The critical path is the token chain. */
void kvb_roof_subgen_update(kvb_roof_kernel *k, double H, double nt, double dk, double dv, double mc, double t,
                            double s, const kvb_roof_device *d) {
  memset(k, 0, sizeof *k);
  k->useful_bytes = H * nt * (dk + dv + t + s) * 4 + H * (mc * (t + 1) * dk * 4 + s * (dk + dv) * 4);
  k->flops = H * nt * (3 * mc * dk + 2 * dv + 4);
  k->launches = 1;
  int p = kvb_roof_phase_begin(k, d, "token loop (one group per head)", H, 64, 0);
  kvb_roof_stream(k, p, H * nt * (dk + t + s) * 4, KVB_ACC_COALESCED, 4, 1);
  kvb_roof_stream(k, p, H * nt * dv * 4, KVB_ACC_ONE_LANE, 4, 1);
  kvb_roof_stream(k, p, H * nt * mc * dk * 4, KVB_ACC_ROW_PER_LANE, 4, 0);
  kvb_roof_flops(k, p, H * nt * 3 * mc * dk, fmin(1, mc / 64));
  kvb_roof_flops(k, p, H * nt * (2 * dv + 4), 1.0 / 32);
  double step = d->lat_dram /* the key row from HBM */ + ceil(mc / 64) * dk * d->lat_fma + 6 * (d->lat_barrier + d->lat_fma) +
                dv * d->lat_fma + 2 * d->lat_l2 + 4 * d->lat_barrier + (dk + dv);
  kvb_roof_serial(k, p, nt * step);
}

void kvb_roof_subgen_update_b(kvb_roof_kernel *k, double H, double nt, double dk, double dv, double mc, double t,
                              double s, double chunk, const kvb_roof_device *d) {
  memset(k, 0, sizeof *k);
  k->useful_bytes = H * nt * (dk + dv + t + s) * 4 + H * (mc * (t + 1) * dk * 4 + s * (dk + dv) * 4);
  k->flops = H * nt * (3 * mc * dk + 2 * dv + 4);
  double chunks = ceil(nt / chunk);
  k->launches = 5 * chunks; /* 3 repacks, prep, update per chunk */
  int p = kvb_roof_phase_begin(k, d, "repack the chunk (device copies)", H * chunk / 64, 64, 0);
  kvb_roof_stream(k, p, 2 * H * nt * (dk + dv + t + s) * 4, KVB_ACC_COALESCED, 4, 1);
  /* prep: lanes = 16 tokens × 4 representative subsets; a warp's load instruction reads two
   * representatives' element a (two lines: 2 wavefronts per 32 FMAs), each lane its token's
   * element from the padded local tile (1 wavefront per instruction) */
  p = kvb_roof_phase_begin(k, d, "prep: old representatives, 16 tokens per group", H * nt / 16, 64,
                           (16 * (KVB_GPU_DMAX + 1) + 2 * 64) * 4.0);
  kvb_roof_stream(k, p, H * nt * dk * 4, KVB_ACC_COALESCED, 4, 0);
  kvb_roof_stream(k, p, H * nt * dv * 4, KVB_ACC_ROW_PER_LANE, 4, 0);
  k->ph[p].wave += H * nt * mc * dk / 16;
  kvb_roof_shm(k, p, H * nt * mc * dk * 4);
  kvb_roof_flops(k, p, H * nt * 3 * mc * dk, 1);
  kvb_roof_serial(k, p, ceil(mc / 4) * dk * d->lat_fma + d->lat_l2);
  p = kvb_roof_phase_begin(k, d, "update: the token chain (one group per head)", H, 64, 0);
  kvb_roof_stream(k, p, H * nt * (dk + t + s + 3) * 4, KVB_ACC_COALESCED, 4, 0);
  kvb_roof_flops(k, p, H * nt * 8, 1.0 / 32);
  /* per token: the tree arg min, one L2 round trip (n_i's read-modify-write), 4 barriers, the
   * sample and slot copies issued */
  kvb_roof_serial(k, p, nt * (6 * (d->lat_barrier + d->lat_fma) + d->lat_l2 + 4 * d->lat_barrier + (dk + dv)));
}

/* ---- block BalanceKV ---- */
/* gram = 0: k_bkvb.cl kvb_bkvb_walk, one group per (head, block): the block mean (COALESCED),
 * then for each step j every lane i > j recomputes K_ij from global memory — its own rows k_i, v_i
 * (ROW_PER_LANE, cache-resident after the first read) and row j (a broadcast) — then two barriers
 * around thread 0's coin; kvb_bkvb_halving: one lane per head scans the m signs twice (ONE_LANE).
 * gram = 1: k_bkvb_gram.cl, one group per (head, block): the same mean; then Gram tiles of
 * GRAM_TJ rows × 64-column passes: centered keys and weighted values staged in local memory in
 * chunks of GRAM_A coordinates, each lane a 4×4 register tile (8 local loads per 16 FMAs: 2 B of
 * local memory per FMA), the tile exp'd into local memory once; the walk's steps read it (2 barriers, the uniforms
 * staged in local memory, no global access on the chain); the halving by 64 lanes per head with
 * integer prefix counts (kvb_bkvb_halving_par). */
#define GRAM_TJ 16.0
#define GRAM_TI 64.0
#define GRAM_A 16.0
void kvb_roof_bkvb_round(kvb_roof_kernel *k, double H, double m, double d, double dv, double b, int gram,
                         const kvb_roof_device *dev) {
  memset(k, 0, sizeof *k);
  double nblk = ceil(m / b), groups = H * nblk, pairs = H * nblk * b * (b - 1) / 2;
  k->useful_bytes = H * m * (d + dv) * 4 + H * m * (4 + 4 + 4 + 4 + 4) + H * (m / 2) * 8;
  k->flops = pairs * (2 * d + 2 * dv + 8); /* the centered dot, the value dot, exp and products */
  k->launches = 2;
  /* lane utilisation of the row-j pushes: Σ_j (b−1−j) over Σ_j 64·⌈(b−1−j)/64⌉ */
  double busy = 0, slots = 0, chain = 0;
  for (double j = 0; j + 1 < b; j++) busy += b - 1 - j, slots += 64 * ceil((b - 1 - j) / 64), chain += ceil((b - 1 - j) / 64);
  double util = slots > 0 ? busy / slots : 1;
  if (!gram) {
    double shm = (KVB_GPU_DMAX + KVB_GPU_BMAX + 1) * 4.0;
    int p = kvb_roof_phase_begin(k, dev, "block mean", groups, 64, shm);
    kvb_roof_stream(k, p, H * m * d * 4, KVB_ACC_COALESCED, 4, 1);
    kvb_roof_serial(k, p, b * (dev->lat_l2 + dev->lat_fma));
    p = kvb_roof_phase_begin(k, dev, "walk: K_ij from global memory per step", groups, 64, shm);
    kvb_roof_stream(k, p, H * m * dv * 4, KVB_ACC_ROW_PER_LANE, 4, 1);
    kvb_roof_stream(k, p, pairs * (d + dv) * 4, KVB_ACC_ROW_PER_LANE, 4, 0);
    kvb_roof_stream(k, p, pairs * (d + dv) * 4 / 32, KVB_ACC_ONE_LANE, 4, 0); /* row j: a broadcast per warp */
    kvb_roof_flops(k, p, pairs * (4 * d + 3 * dv + 8), util);
    kvb_roof_serial(k, p, chain * (d + dv) * dev->lat_fma + (b - 1) * (2 * dev->lat_barrier + dev->lat_l2 + 40));
    p = kvb_roof_phase_begin(k, dev, "halving: one lane per head", H, 1, 0);
    kvb_roof_stream(k, p, H * m * 4 * 2, KVB_ACC_ONE_LANE, 4, 1);
    kvb_roof_stream(k, p, H * m * 12, KVB_ACC_ONE_LANE, 4, 1);
    kvb_roof_serial(k, p, 2 * m * 2 * dev->lat_fma);
  } else {
    double tj = GRAM_TJ, ntile = ceil(b / tj);
    /* mean, acc, us, the staged cache rows and weights, the Gram tile, the two staging tiles */
    double shm = (KVB_GPU_DMAX + 4 * KVB_GPU_BMAX + tj * KVB_GPU_BMAX + (tj + 64) * (GRAM_A + 1)) * 4.0;
    /* pairs computed: each tile of tj rows runs over the columns from its first row on */
    double comp = 0;
    for (double t0 = 0; t0 < b; t0 += tj) comp += fmin(tj, b - t0) * (b - t0);
    comp *= H * nblk;
    int p = kvb_roof_phase_begin(k, dev, "block mean", groups, 64, shm);
    kvb_roof_stream(k, p, H * m * d * 4, KVB_ACC_COALESCED, 4, 1);
    kvb_roof_serial(k, p, b * (dev->lat_l2 + dev->lat_fma) / 4);
    p = kvb_roof_phase_begin(k, dev, "Gram tiles in local memory (4x4 per lane)", groups, 64, shm);
    /* kvb_gram_stage: per row tile j0 (while j0 + 1 < b) and column pass i0 = j0, j0 + 64, ...,
     * the tile's rows and the pass's columns, every coordinate chunk: rows staged per block,
     * counted as the loops run them; the values' first reading comes from HBM, every other staged
     * byte is a re-read (L2). 16-byte vector loads at addresses from local memory (no dependent
     * load), KVB_GRAM_MLP in flight per lane. */
    double staged = 0;
    for (double j0 = 0; j0 + 1 < b; j0 += tj)
      for (double i0 = j0; i0 < b; i0 += GRAM_TI) staged += fmin(tj, b - j0) + fmin(GRAM_TI, b - i0);
    double gmlp = kvb_roof_kernel_define("KVB_GRAM_MLP");
    if (gmlp < 1) gmlp = 1;
    kvb_roof_stream_mlp(k, p, H * m * dv * 4, KVB_ACC_COALESCED, 16, 1, gmlp, 1);
    kvb_roof_stream_mlp(k, p, fmax(0, staged * groups * (d + dv) * 4 - H * m * dv * 4), KVB_ACC_COALESCED, 16, 0, gmlp, 1);
    kvb_roof_shm(k, p, comp * (d + dv) * 2 + staged * groups * (d + dv) * 4 + comp * 4 * 2);
    kvb_roof_flops(k, p, comp * (2 * d + 2 * dv + 8), 1);
    /* per chunk: staging (an L2 round trip), 2 barriers, GRAM_A steps of 8 loads + 16 FMAs issued */
    kvb_roof_serial(k, p, ntile * ceil(b / 64) * (ceil(d / GRAM_A) + ceil(dv / GRAM_A)) *
                              (2 * dev->lat_barrier + dev->lat_l2 + GRAM_A * 24));
    p = kvb_roof_phase_begin(k, dev, "walk from the Gram tile", groups, 64, shm);
    kvb_roof_shm(k, p, pairs * 4 * 2 + groups * b * 2 * 128);
    kvb_roof_flops(k, p, pairs * 2, util);
    kvb_roof_serial(k, p, (b - 1) * (2 * dev->lat_barrier + 40) + chain * 2 * dev->lat_fma);
    p = kvb_roof_phase_begin(k, dev, "halving: 64 lanes per head, prefix counts", H, 64, 0);
    kvb_roof_stream(k, p, H * m * 4 + H * m * 12, KVB_ACC_COALESCED, 4, 1);
    kvb_roof_serial(k, p, 2 * ceil(m / 64) * 2 * dev->lat_fma + 3 * 6 * dev->lat_barrier + dev->lat_l2);
  }
}

/* k_bkvb.cl kvb_wquery: one group per (head, query); pass 1 the max (keys through idx,
 * ROW_PER_LANE), pass 2 the keys again (cache), the terms in chunks of 256 and the value pass
 * (COALESCED) with Z read-modify-written per chunk. */
void kvb_roof_wquery(kvb_roof_kernel *k, double H, double nq, double dk, double dv, double kk,
                     const kvb_roof_device *d) {
  memset(k, 0, sizeof *k);
  double groups = H * nq, shm = (KVB_GPU_DMAX + KVB_GPU_CHUNK_MAX + KVB_GPU_WG) * 4.0, nch = ceil(kk / 256);
  k->useful_bytes = H * kk * ((dk + dv) * 4 + 12) + nq * H * (dk + dv) * 4;
  k->flops = nq * H * kk * (2 * dk + 2 * dv + 8);
  k->launches = 1;
  int p = kvb_roof_phase_begin(k, d, "pass 1: max", groups, 64, shm);
  kvb_roof_stream(k, p, H * kk * dk * 4, KVB_ACC_ROW_PER_LANE, 4, 1);
  kvb_roof_stream(k, p, (nq - 1) * H * kk * dk * 4, KVB_ACC_ROW_PER_LANE, 4, 0);
  kvb_roof_stream(k, p, nq * H * kk * 12, KVB_ACC_COALESCED, 4, 1);
  kvb_roof_flops(k, p, nq * H * kk * (2 * dk + 2), fmin(1, kk / 64));
  kvb_roof_serial(k, p, ceil(kk / 64) * (d->lat_l2 + dk * d->lat_fma));
  p = kvb_roof_phase_begin(k, d, "pass 2: terms and values", groups, 64, shm);
  kvb_roof_stream(k, p, nq * H * kk * dk * 4, KVB_ACC_ROW_PER_LANE, 4, 0);
  kvb_roof_stream(k, p, H * kk * dv * 4, KVB_ACC_COALESCED, 4, 1);
  kvb_roof_stream(k, p, (nq - 1) * H * kk * dv * 4 + 2 * nq * H * nch * dv * 4, KVB_ACC_COALESCED, 4, 0);
  kvb_roof_flops(k, p, nq * H * kk * (2 * dk + 2 * dv + 6), fmin(1, kk / 64));
  kvb_roof_shm(k, p, groups * 2 * kk * ceil(dv / 64) * 128);
  kvb_roof_serial(k, p, ceil(kk / 64) * (d->lat_l2 + dk * d->lat_fma) + kk * ceil(dv / 64) * d->lat_fma);
}

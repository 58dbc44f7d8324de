/* roofline.h — a documented, deliberately simple performance model of kvbound's device kernels
 * (kvb-gpucheck perf). It predicts a kernel's time on a GPU from counts taken from the kernel's
 * shape, never from a measurement, so it can be printed on a machine without a GPU and compared
 * with a GPU run where one exists.
 *
 * The roofline. A call moves `useful_bytes` (each input read once, each output written once: the
 * least any kernel computing the same thing must move) and does `flops` floating-point operations.
 * Its roofline time is max(useful_bytes / BW, flops / PEAK) for the device's HBM bandwidth BW and
 * FP32 (non-tensor) peak PEAK.
 *
 * The prediction. A kernel is a sequence of phases separated by work-group barriers (a work-group
 * does not start its V pass before its K pass ends). Phase p has
 *   dram    bytes moved to/from HBM as the kernel is written (re-reads included),
 *   wave    L1 "wavefronts": the L1 serves one 128-byte line per cycle per SM, so a warp load
 *           instruction costs one wavefront per distinct line it touches (the access classes below),
 *   shm     bytes read or written in local (shared) memory, 128 bytes per cycle per SM,
 *   flops   with `lane_util`, the fraction of a warp's lanes doing them,
 * and a critical path `serial` (cycles of one work-group's chain of dependent steps: SubGen's
 * tokens, BalanceKV's walk, a one-lane loop), with `groups` work-groups of which `resident` fit
 * on an SM at once (local memory, 64 warps, 32 groups). It takes
 *   T_p = max( max(dram/(BW·e), wave/(SMs·f), shm/(128·SMs·f), flops/(PEAK·lane_util)) / active,
 *              serial/f · ⌈groups / (resident·SMs)⌉ ),
 * active = min(1, groups/SMs) (an SM with no work-group contributes nothing: a launch of 32 groups
 * uses 32 of 132 SMs' load/store and FP32 units and, as a simplification, their share of HBM),
 * e = the fraction of the vendor's HBM peak a streaming copy reaches (the device table; replaced
 * by 1 when BW is a measured copy). Phases add (the pessimistic choice: groups in different phases
 * could overlap; the model ignores that):
 *   T_pred = Σ_p T_p + launches · launch_s.
 * Fractions: of HBM bandwidth (useful_bytes/BW)/T_pred, of FP32 peak (flops/PEAK)/T_pred, of the
 * roofline (its time)/T_pred.
 *
 * Access classes (bytes per wavefront, for a lane access of `lane_bytes`):
 *   COALESCED      consecutive lanes read consecutive elements: min(128, 32·lane_bytes) bytes per
 *                  wavefront (f32 scalar 128 B, f16 scalar 64 B, float4 128 B with 4× fewer
 *                  instructions);
 *   ROW_PER_LANE   each lane walks its own row (lanes 512 B apart at d = 128): every lane's element
 *                  is its own line, lane_bytes per wavefront (the L1 may hold the line for the
 *                  next element: DRAM traffic is not multiplied, the L1's throughput is);
 *   ONE_LANE       a single lane's loop (thread-0 sections): lane_bytes per wavefront, and its
 *                  flops use 1/32 of the lanes (lane_util).
 * Re-reads. Bytes a kernel reads again in the same call (another query's pass over the same
 * state, a tile restaged for every row tile) do not cross HBM again, but they are not free: they
 * cost wavefronts and L2 bandwidth (l2_bw, the device table; an assumption from published
 * microbenchmarks), a term of T_p beside the others.
 *
 * The in-flight limit (Little's law). A stream of DRAM bytes moves at most at
 *   (bytes in flight) / latency,
 * and the bytes in flight are what the resident work-groups' lanes have issued and not yet
 * received: lanes · resident · active SMs · (loads in flight per lane · bytes per load) / dep,
 * dep = 2 for a gather whose address is itself a global load (the second load waits for the
 * first). The estimate replaces each phase's HBM term by
 *   max(dram / (BW·e·active), Σ_streams bytes·dep / (in-flight bytes per lane · lanes · resident ·
 *       min(SMs, groups)) · lat / clk_lat)
 * (and the same with the L2 latency for re-reads), at two DRAM latencies, lat_lo and lat_hi cycles
 * of clk_lat (H100: 700 and 1000 cycles at 1.7 GHz, i.e. 412–588 ns: an H100 SXM, 132 SMs, needs
 * 3.35 TB/s / 132 × 412–588 ns ≈ 10.5–14.9 KB in flight per SM to stream HBM at its peak). It
 * assumes every resident group keeps its loads in flight (the others' compute hides under them);
 * the loads in flight per lane are the kernel's own constant where its load loop is shaped for it
 * (KVB_COOP_MLP, KVB_GRAM_MLP: the loads issued before the first store, read from the embedded
 * kernel text and checked against nvcc's PTX by scripts/ptx-mlp-check), else read off the code.
 *
 * What the model leaves out: cache capacity (row-per-lane lines evicted before their next element
 * would make DRAM traffic worse; re-reads are charged at L2 bandwidth even where the resident
 * groups' data exceed the L2: a BalanceKV round's restaged blocks, ≈ 300 MB at H = 32, b = 256,
 * d = 128 on an H100 against its 50 MB), instruction issue limits beyond the L1, bank conflicts (the new
 * kernels pad their local tiles), clock throttling, and overlap between phases. */
#ifndef KVB_ROOFLINE_H
#define KVB_ROOFLINE_H

#include <stddef.h>

typedef struct {
  const char *name;
  double bw;          /* HBM bytes/s (vendor peak, or a measured copy) */
  double bw_eff;      /* e: fraction of bw a streaming copy reaches */
  double peak;        /* FP32 non-tensor FLOP/s (= SMs · FP32 lanes · 2 · clk) */
  int sms;            /* streaming multiprocessors */
  double clk;         /* boost clock, Hz */
  double shm_per_sm;  /* local memory per SM, bytes */
  double lat_fma;     /* cycles: a dependent FMA */
  double lat_barrier; /* cycles: a work-group barrier (2 warps) */
  double lat_l2;      /* cycles: a dependent global load that hits L2 */
  double lat_dram;    /* cycles: one that goes to HBM */
  double launch_s;    /* seconds per kernel launch, back to back */
  double l2_bw;       /* L2 bytes/s that re-reads are charged at */
  double lat_lo, lat_hi; /* cycles of clk_lat: the DRAM latency range of the in-flight estimate */
  double clk_lat;     /* Hz: the clock those latencies are counted in */
} kvb_roof_device;

/* The device table (H100 SXM, H200 SXM, A100 SXM 80 GB), ended by an entry with name NULL. */
extern const kvb_roof_device kvb_roof_devices[];
/* The entry whose name contains `name`, or NULL. */
const kvb_roof_device *kvb_roof_device_find(const char *name);

typedef enum { KVB_ACC_COALESCED = 0, KVB_ACC_ROW_PER_LANE = 1, KVB_ACC_ONE_LANE = 2 } kvb_roof_access;

#define KVB_ROOF_MAXPH 8
typedef struct {
  const char *what;
  double dram, wave, shm, flops, lane_util; /* lane_util: flop-weighted mean */
  double serial;                            /* cycles on one group's critical path */
  double groups, resident;                  /* work-groups; of them resident per SM */
  double lanes;                             /* work-items per group */
  double l2;                                /* bytes re-read in the call (from L2) */
  double rounds_dram, rounds_l2;            /* Σ bytes·dep / in-flight bytes per lane */
} kvb_roof_phase;

typedef struct {
  double useful_bytes, flops; /* the roofline's counts */
  kvb_roof_phase ph[KVB_ROOF_MAXPH];
  int nph;
  double launches;
} kvb_roof_kernel;

/* Starts phase `what` of `groups` work-groups of `lanes` work-items using `shm_group` bytes of
 * local memory each (resident groups per SM from the device's limits). Returns its index. */
int kvb_roof_phase_begin(kvb_roof_kernel *k, const kvb_roof_device *d, const char *what, double groups,
                         double lanes, double shm_group);
/* A global-memory stream of `bytes` in phase p with access class `acc`, lanes of `lane_bytes`;
 * from_dram = 0 when the bytes were read before in the call and the model takes them from cache
 * (they cost wavefronts, not HBM). */
void kvb_roof_stream(kvb_roof_kernel *k, int p, double bytes, kvb_roof_access acc, double lane_bytes, int from_dram);
/* The same with `mlp` loads of lane_bytes in flight per lane and `dep` dependent loads per
 * element (2: a gather through an index read from global memory); kvb_roof_stream is mlp = 4
 * (a load loop nvcc unrolls by 4), dep = 1. */
void kvb_roof_stream_mlp(kvb_roof_kernel *k, int p, double bytes, kvb_roof_access acc, double lane_bytes, int from_dram,
                         double mlp, double dep);
void kvb_roof_shm(kvb_roof_kernel *k, int p, double bytes);
void kvb_roof_flops(kvb_roof_kernel *k, int p, double flops, double lane_util);
void kvb_roof_serial(kvb_roof_kernel *k, int p, double cycles);

typedef struct {
  double t_roof, t_pred;
  double t_ph[KVB_ROOF_MAXPH];
  char bound[KVB_ROOF_MAXPH]; /* per phase: 'D' HBM, 'L' L1 wavefronts, 'S' local memory, 'F' flops, 'C' critical path */
  double frac_bw, frac_peak, frac_roof;
  int memory_bound; /* the roofline's bound: 1 bytes, 0 flops */
  /* the in-flight-limited estimate at the DRAM latencies lat_lo and lat_hi */
  double t_if[2], frac_bw_if[2], frac_peak_if[2];
} kvb_roof_result;

/* The value of "#define NAME N" in the embedded kernel text (0 if absent): the kernels' loads in
 * flight per lane (KVB_COOP_MLP, KVB_GRAM_MLP), which the models below take from there. */
double kvb_roof_kernel_define(const char *name);

/* bw_measured > 0: use it as BW with e = 1 (a measured copy on this device). */
kvb_roof_result kvb_roof_predict(const kvb_roof_kernel *k, const kvb_roof_device *d, double bw_measured);

/* ---- the kernels' models (each counts from the kernel's code; see roofline.c) ---- */
/* Decode attention for H query heads over Hkv KV heads (H/Hkv queries packed per KV head by the
 * cooperative kernel; today's kernel reads K/V once per query head), n tokens, nq queries, K/V of
 * `es` bytes (4 f32, 2 f16), split of `chunk` tokens. coop = 0: kvb_attn_split (one token row per
 * lane), 1: kvb_attn_coop (k_decode_coop.cl). */
void kvb_roof_decode(kvb_roof_kernel *k, double H, double Hkv, double n, double dk, double dv, double nq,
                     double es, double chunk, int coop, const kvb_roof_device *d);
/* SubGen query over m′ clusters × t samples and s slots, H heads, nq queries (kvb_subgen_query). */
void kvb_roof_subgen_query(kvb_roof_kernel *k, double H, double nq, double dk, double dv, double mc, double t,
                           double s, const kvb_roof_device *d);
/* SubGen update of nt tokens per head against m′ clusters (kvb_subgen_update, one group per head). */
void kvb_roof_subgen_update(kvb_roof_kernel *k, double H, double nt, double dk, double dv, double mc, double t,
                            double s, const kvb_roof_device *d);
/* The batched update (k_subgen_batch.cl) in chunks of `chunk` tokens, in the steady state where
 * every token's cluster existed before its chunk: kvb_subgen_prep (old representatives for 16
 * tokens per group, in parallel) and kvb_subgen_update_b (the chain: no distance work, ‖v‖²
 * precomputed, µ in a register, the next key prefetched). */
void kvb_roof_subgen_update_b(kvb_roof_kernel *k, double H, double nt, double dk, double dv, double mc, double t,
                              double s, double chunk, const kvb_roof_device *d);
/* One round of block BalanceKV on m tokens per head, blocks of b: gram = 0 today's walk
 * (kvb_bkvb_walk, dot products from global memory, row per lane) + one-thread halving; gram = 1
 * the Gram-tile walk (k_bkvb_gram.cl) + parallel halving. */
void kvb_roof_bkvb_round(kvb_roof_kernel *k, double H, double m, double d, double dv, double b, int gram,
                         const kvb_roof_device *d_);
/* Block BalanceKV's weighted query over kk entries per head (kvb_wquery). */
void kvb_roof_wquery(kvb_roof_kernel *k, double H, double nq, double dk, double dv, double kk,
                     const kvb_roof_device *d);

#endif

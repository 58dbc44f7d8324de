/* perf_model.c — kvb-gpucheck perf: the roofline model (roofline.h) of every kernel at the shapes a
 * kernel author would meet on an H100, before and after the reshaping. */
#include "gpucheck.h"
#include "gpu_resident.h"
#include "roofline.h"

#include <stdio.h>

/* ---- perf: the roofline model of every kernel at the shapes a kernel author would meet on an H100 (roofline.h) ---- */
typedef struct {
  const char *kernel, *shape;
  int after; /* 0 today's kernel ("before"), 1 a kernel reshaped for the hardware */
  int kind;  /* 0 decode, 1 subgen query, 2 subgen update, 3 bkvb round, 4 wquery */
  double a[9];
} model_row;

static void model_build(const model_row *r, const kvb_roof_device *d, kvb_roof_kernel *k) {
  const double *a = r->a;
  switch (r->kind) {
  case 0: kvb_roof_decode(k, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], r->after, d); break;
  case 1: kvb_roof_subgen_query(k, a[0], a[1], a[2], a[3], a[4], a[5], a[6], d); break;
  case 2:
    if (r->after) kvb_roof_subgen_update_b(k, a[0], a[1], a[2], a[3], a[4], a[5], a[6], KVB_SG_CHUNK, d);
    else kvb_roof_subgen_update(k, a[0], a[1], a[2], a[3], a[4], a[5], a[6], d);
    break;
  case 3: kvb_roof_bkvb_round(k, a[0], a[1], a[2], a[3], a[4], r->after, d); break;
  default: kvb_roof_wquery(k, a[0], a[1], a[2], a[3], a[4], d); break;
  }
}

/* H = 32 heads, d = 128, n = 32k (a Llama-class model at a long context); GQA rows: 8 KV heads. The "after" rows are the
 * kernels this tool also runs (k_decode_coop.cl, k_bkvb_gram.cl). */
static const model_row MODEL_ROWS[] = {
    {"attn_decode", "H=32,Hkv=32,n=32768,d=128,nq=1,split=256,f32", 0, 0, {32, 32, 32768, 128, 128, 1, 4, 256}},
    {"attn_decode", "H=32,Hkv=32,n=32768,d=128,nq=1,split=256,f16", 0, 0, {32, 32, 32768, 128, 128, 1, 2, 256}},
    {"attn_decode", "H=32,Hkv=8,n=32768,d=128,nq=1,split=256,f32 (GQA 4:1; today's kernel reads K/V per query head)", 0, 0, {32, 8, 32768, 128, 128, 1, 4, 256}},
    {"attn_decode", "H=32,Hkv=8,n=32768,d=128,nq=1,split=256,f16 (GQA 4:1; today's kernel reads K/V per query head)", 0, 0, {32, 8, 32768, 128, 128, 1, 2, 256}},
    {"subgen_query", "H=32,nq=1,d=128,clusters=256,t=8,s=64", 0, 1, {32, 1, 128, 128, 256, 8, 64}},
    {"subgen_update", "H=32,tokens=32768,d=128,clusters=256,t=8,s=64 (after: chunks of 256, steady state)", 0, 2,
     {32, 32768, 128, 128, 256, 8, 64}},
    {"bkvb_compress", "one round: H=32,m=32768,d=128,b=256 (walk + halving)", 0, 3, {32, 32768, 128, 128, 256}},
    {"bkvb_query", "H=32,nq=1,d=128,entries=16384", 0, 4, {32, 1, 128, 128, 16384}},
};

/* Prints each model row for the H100 with its phases, and its fractions on the other devices. */
void print_models(const char *filter, int after) {
  const kvb_roof_device *h100 = kvb_roof_device_find("H100");
  printf("\n== roofline model, %s (predicted; no device needed; roofline.h documents the model) ==\n",
         after ? "AFTER: the kernels reshaped for the hardware" : "BEFORE: today's kernels");
  for (size_t i = 0; i < sizeof MODEL_ROWS / sizeof *MODEL_ROWS; i++) {
    const model_row *r = &MODEL_ROWS[i];
    model_row rr = *r;
    if (!matches(filter, r->kernel)) continue;
    if (after) {
      if (r->kind == 1 || r->kind == 4) { /* not reshaped: the same model as before */
        printf("MODEL after  %s(%s): not reshaped on this branch (its model is the one above)\n", r->kernel, r->shape);
        continue;
      }
      rr.after = 1;
    }
    kvb_roof_kernel k;
    model_build(&rr, h100, &k);
    kvb_roof_result res = kvb_roof_predict(&k, h100, 0);
    printf("MODEL %-4s %s(%s)\n  per call: %.4g MB useful, %.4g GFLOP; H100 roofline %.2f us (%s-bound), predicted %.2f us:"
           " %.1f%% of HBM bandwidth, %.1f%% of FP32 peak, %.1f%% of the roofline\n",
           after ? "after" : "before", r->kernel, r->shape, k.useful_bytes / 1e6, k.flops / 1e9, res.t_roof * 1e6,
           res.memory_bound ? "memory" : "compute", res.t_pred * 1e6, 100 * res.frac_bw, 100 * res.frac_peak,
           100 * res.frac_roof);
    printf("  in-flight-limited (Little's law, DRAM latency %.0f / %.0f cycles at %.2f GHz): %.2f / %.2f us: %.1f%% / %.1f%% of "
           "%s\n",
           h100->lat_lo, h100->lat_hi, h100->clk_lat / 1e9, res.t_if[0] * 1e6, res.t_if[1] * 1e6,
           100 * (res.memory_bound ? res.frac_bw_if[0] : res.frac_peak_if[0]),
           100 * (res.memory_bound ? res.frac_bw_if[1] : res.frac_peak_if[1]), res.memory_bound ? "HBM bandwidth" : "FP32 peak");
    for (int p = 0; p < k.nph; p++)
      printf("    phase %-44s %9.2f us  bound by %s\n", k.ph[p].what, res.t_ph[p] * 1e6,
             res.bound[p] == 'D' ? "HBM bytes" : res.bound[p] == 'L' ? "L1 wavefronts (access pattern)"
             : res.bound[p] == 'S' ? "local memory" : res.bound[p] == 'F' ? "FP32 lanes"
             : res.bound[p] == '2' ? "L2 bytes (re-reads)" : "critical path (latency)");
    printf("    other devices:");
    for (const kvb_roof_device *d = kvb_roof_devices; d->name; d++) {
      model_build(&rr, d, &k);
      kvb_roof_result o = kvb_roof_predict(&k, d, 0);
      printf(" %s %.1f%% of %s", d->name, 100 * (o.memory_bound ? o.frac_bw : o.frac_peak), o.memory_bound ? "HBM" : "peak");
      printf(d[1].name ? ";" : "\n");
    }
  }
}

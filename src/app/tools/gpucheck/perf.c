/* perf.c — kvb-gpucheck perf: bytes and flops per call, the kernels' measured times beside the C
 * reference's and the roofline model's prediction (perf_model.c, roofline.h). */
#include "gpucheck.h"
#include "gpu_ops.h"
#include "kvb_error.h"
#include "roofline.h"
#include "gpu_resident.h"
#include "subgen_uniforms.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1: the device is PoCL (or another CPU OpenCL device): its times are a CPU stand-in, not a GPU's. */
static int cpu_standin(const kvb_gpu *g) {
  const char *n = kvb_gpu_device_name(g);
  return kvb_gpu_backend_of(g) == KVB_GPU_OPENCL && (strstr(n, "pthread") || strstr(n, "cpu") || strstr(n, "CPU"));
}

/* The model's device for g (by name: H100, H200, A100), or NULL. */
static const kvb_roof_device *model_device_of(const kvb_gpu *g) {
  const char *n = kvb_gpu_device_name(g);
  for (const kvb_roof_device *d = kvb_roof_devices; d->name; d++) {
    char key[8];
    snprintf(key, sizeof key, "%.4s", d->name);
    if (strstr(n, key)) return d;
  }
  return NULL;
}

/* A streaming copy of 256 MiB (32 MiB on a CPU stand-in), best of 3: bytes read + written per second. */
static double measure_copy(kvb_gpu *g) {
  size_t bytes = cpu_standin(g) ? (size_t)32 << 20 : (size_t)256 << 20, nf4 = bytes / 16;
  kvb_gpu_buf *a = NULL, *b = NULL;
  double best = 0;
  if (!kvb_gpu_alloc(g, bytes, &a) && !kvb_gpu_alloc(g, bytes, &b)) {
    float *h = calloc(bytes / 4, 4);
    if (h && !kvb_gpu_write(g, a, h, bytes))
      for (int rep = 0; rep < 3; rep++) {
        kvb_gpu_arg args[] = {{KVB_GPU_ARG_INT, NULL, (int)nf4, 0}, {KVB_GPU_ARG_BUF, a, 0, 0}, {KVB_GPU_ARG_BUF, b, 0, 0}};
        double t0 = now_s();
        if (kvb_gpu_launch(g, "kvb_copy_f4", cpu_standin(g) ? 64 : 132 * 16, 256, 3, args)) break;
        double bw = 2.0 * bytes / (now_s() - t0);
        best = bw > best ? bw : best;
      }
    free(h);
  }
  kvb_gpu_free(g, a), kvb_gpu_free(g, b);
  return best;
}

/* One perf report: the counts (bytes, flops), the measured kernel time, the C reference's time on
 * the same CPU (information, not a goal) and the model's prediction for the same shape (roofline.h:
 * the H100's, and the device's own when perf runs on a device of the table, with BW = the copy
 * measured there). On PoCL the time is a CPU stand-in's and is labelled so: it says nothing about
 * a GPU. measured: appended to the measured line ("" none); note: a last line (NULL none). */
static double g_copy_bw;                  /* measured copy bandwidth of the perf device, B/s */
static const kvb_roof_device *g_model_dev; /* the perf device's table entry, NULL if none */
static void perf_line(const kvb_gpu *g, const char *name, double bytes, double flops, double best, double ref_s,
                      const char *ref_what, const char *measured, const char *note, const kvb_roof_kernel *model) {
  int standin = cpu_standin(g);
  printf("%s\n  bytes/call %.3g MB, flops/call %.3g MFLOP, intensity %.2f flop/B\n"
         "  measured on %s%s: kernel %.3f ms (best of 3) = %.2f GB/s, %.2f GFLOP/s on %s%s\n"
         "  C double reference (%s, same CPU, 1 thread): %.3f ms (ratio kernel/ref %.2f)\n",
         name, bytes / 1e6, flops / 1e6, flops / bytes, standin ? "a CPU stand-in" : "the device",
         standin ? " (PoCL: not a GPU number)" : "", best * 1e3, bytes / best / 1e9, flops / best / 1e9,
         kvb_gpu_device_name(g), measured, ref_what, ref_s * 1e3, best / ref_s);
  if (model) {
    const kvb_roof_device *h = kvb_roof_device_find("H100");
    kvb_roof_result r = kvb_roof_predict(model, h, 0);
    printf("  model, H100: roofline %.2f us, predicted %.2f us (%.1f%% of the roofline), in-flight-limited %.2f-%.2f us\n",
           r.t_roof * 1e6, r.t_pred * 1e6, 100 * r.frac_roof, r.t_if[0] * 1e6, r.t_if[1] * 1e6);
    if (g_model_dev && !standin) {
      kvb_roof_result o = kvb_roof_predict(model, g_model_dev, g_copy_bw);
      printf("  model, this %s (BW = measured copy %.0f GB/s): roofline %.2f us, predicted %.2f us, in-flight-limited"
             " %.2f-%.2f us; measured %.2f us = %.1f%% of the roofline (model predicted %.1f%%)\n",
             g_model_dev->name, g_copy_bw / 1e9, o.t_roof * 1e6, o.t_pred * 1e6, o.t_if[0] * 1e6, o.t_if[1] * 1e6,
             best * 1e6, 100 * o.t_roof / best, 100 * o.frac_roof);
      /* one line per kernel for scripts/gpu-report's table */
      printf("REPORT|%s|%s|%.2f|%.2f|%.2f|%.2f|%.2f\n", name, g_model_dev->name, best * 1e6, o.t_roof * 1e6,
             o.t_pred * 1e6, o.t_if[0] * 1e6, o.t_if[1] * 1e6);
    } else if (!standin) {
      printf("  this device is not in the model's table: no prediction for it\n");
      printf("REPORT|%s|%s|%.2f|-|-|-|-\n", name, kvb_gpu_device_name(g), best * 1e6);
    }
  }
  if (note) printf("  %s\n", note);
}

/* Block BalanceKV's weighted query at T = 1 of n = 4096 (first/recent 32 + 32, 2016 kept). */
static int perf_wquery(kvb_gpu *g) {
  const size_t H = 8, n = 4096, dk = 128, dv = 128, kk = 2048, nq = 1;
  float *Q = malloc(nq * H * dk * 4), *K = malloc(H * n * dk * 4), *V = malloc(H * n * dv * 4);
  float *ln = malloc(H * kk * 4), *ld = malloc(H * kk * 4), *Z = malloc(nq * H * dv * 4);
  int *idx = malloc(H * kk * sizeof *idx), rc = 1;
  wterm *T = malloc(kk * sizeof *T);
  double *z = malloc(dv * 8), *B = malloc(dv * 8), *work = malloc(2 * kk * 8);
  if (!Q || !K || !V || !ln || !ld || !Z || !idx || !T || !z || !B || !work) goto out;
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 17, 1);
  fill(&r, Q, nq * H * dk, 1), fill(&r, K, H * n * dk, 1), fill(&r, V, H * n * dv, 1);
  for (size_t h = 0; h < H; h++)
    for (size_t j = 0; j < kk; j++) {
      idx[h * kk + j] = (int)(j < 64 ? (j < 32 ? j : n - 64 + j) : 32 + 2 * (j - 64));
      ln[h * kk + j] = j < 64 ? 0.0f : (float)(kvb_pcg32_bounded(&r, 2) * log(2.0));
      ld[h * kk + j] = j < 64 ? 0.0f : (float)log(2.0);
    }
  double best = 1e30, kt;
  for (int rep = 0; rep < 3; rep++) {
    if (kvb_gpu_wquery(g, H, n, dk, dv, kk, idx, ln, ld, nq, 1 / sqrt((double)dk), Q, K, V, Z, &kt)) {
      printf("FAIL perf bkvb_query: %s\n", kvb_strerror_last());
      goto out;
    }
    best = fmin(best, kt);
  }
  double t0 = now_s();
  for (size_t h = 0; h < H; h++) {
    for (size_t j = 0; j < kk; j++) {
      size_t row = h * n + (size_t)idx[h * kk + j];
      wterm w = {K + row * dk, V + row * dv, ln[h * kk + j], ld[h * kk + j], 0, (long)j};
      T[j] = w;
    }
    ref_wterms(kk, T, dk, dv, Q + h * dk, 1 / sqrt((double)dk), z, B, work);
  }
  double ref_s = now_s() - t0, nch = (double)((kk + KVB_GPU_CHUNK_MAX - 1) / KVB_GPU_CHUNK_MAX);
  /* per (head, query) group: index and log-weights and keys read in both passes, values once,
   * the output row read and written once per chunk */
  double bytes = (double)nq * H * (2.0 * kk * (12 + dk * 4) + kk * dv * 4.0 + dk * 4.0 + 2.0 * nch * dv * 4);
  double flops = (double)nq * H * kk * (4.0 * dk + 2.0 * dv + 8);
  char name[160];
  snprintf(name, sizeof name, "bkvb_query(H=%zu,n=%zu,kept=%zu,dk=%zu,dv=%zu,nq=%zu)", H, n, kk, dk, dv, nq);
  kvb_roof_kernel model;
  kvb_roof_wquery(&model, (double)H, (double)nq, (double)dk, (double)dv, (double)kk, kvb_roof_device_find("H100"));
  perf_line(g, name, bytes, flops, best, ref_s, "the double estimator with its error bound", "", NULL, &model);
  rc = 0;
out:
  free(Q), free(K), free(V), free(ln), free(ld), free(Z), free(idx), free(T), free(z), free(B), free(work);
  return rc;
}

/* SubGen: one batched update of 1024 tokens per head (16 clusters), then 8 queries. */
static int perf_subgen(kvb_gpu *g) {
  const size_t H = 8, n = 1024, dk = 64, dv = 64, t = 8, s = 32, m = 16, ut = t + s, nq = 8;
  float *K = malloc(H * n * dk * 4), *V = malloc(H * n * dv * 4), *u = malloc(H * n * ut * 4), *C = malloc(m * dk * 4);
  float *Q = malloc(nq * H * dk * 4), *Z = malloc(nq * H * dv * 4);
  double *kd = malloc(dk * 8), *vd = malloc(dv * 8), *ud = malloc(ut * 8);
  gsl_rng *rng = gsl_rng_alloc(kvb_rng_pcg32);
  kvb_gpu_subgen st;
  memset(&st, 0, sizeof st);
  int rc = 1;
  if (!K || !V || !u || !C || !Q || !Z || !kd || !vd || !ud || !rng) goto out;
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 23, 2);
  for (size_t h = 0; h < H; h++) {
    fill(&r, C, m * dk, 1.0);
    for (size_t i = 0; i < n; i++) {
      size_t ci = kvb_pcg32_bounded(&r, (uint32_t)m);
      fill(&r, K + (h * n + i) * dk, dk, 0.3 / sqrt((double)dk));
      for (size_t a = 0; a < dk; a++) K[(h * n + i) * dk + a] += C[ci * dk + a];
    }
  }
  fill(&r, V, H * n * dv, 1), fill(&r, Q, nq * H * dk, 1);
  for (size_t i = 0; i < H * n * ut; i++) u[i] = (float)kvb_pcg32_uniform(&r), u[i] = u[i] < 1 ? u[i] : 0.5f;
  /* the CPU reference's update time */
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "delta", 1.0), kvb_params_set(&p, "t", (double)t), kvb_params_set(&p, "s", (double)s);
  kvb_method_config cfg = {dk, dv, 1 / sqrt((double)dk), rng};
  double t0 = now_s();
  for (size_t h = 0; h < H; h++) {
    kvb_method *cm;
    if (kvb_method_alloc_type(&kvb_method_subgen, &cfg, &p, &cm)) goto out;
    for (size_t i = 0; i < n; i++) {
      for (size_t a = 0; a < dk; a++) kd[a] = K[(h * n + i) * dk + a];
      for (size_t a = 0; a < dv; a++) vd[a] = V[(h * n + i) * dv + a];
      for (size_t a = 0; a < ut; a++) ud[a] = u[(h * n + i) * ut + a];
      kvb_subgen_update_uniforms(cm, kd, vd, ud, ut, NULL);
    }
    kvb_method_free(cm);
  }
  double ref_u = now_s() - t0, bu = 1e30, bq = 1e30, kt;
  for (int rep = 0; rep < 3; rep++) {
    kvb_gpu_subgen_free(&st);
    if (kvb_gpu_subgen_init(&st, H, dk, dv, t, s, 1.0) || kvb_gpu_subgen_update(g, &st, n, K, V, u, &kt)) {
      printf("FAIL perf subgen_update: %s\n", kvb_strerror_last());
      goto out;
    }
    bu = fmin(bu, kt);
  }
  double mc = 0;
  for (size_t h = 0; h < H; h++) mc += st.mc[h];
  mc /= (double)H;
  /* per token: every representative read (m′ <= the final count, used as the model), the inputs;
   * replaced samples and slots written (expected counts not modelled: a lower bound) */
  double bytes = (double)H * n * (mc * dk + dk + dv + ut) * 4, flops = (double)H * n * (3 * mc * dk + 2 * dv + 4);
  char name[200];
  snprintf(name, sizeof name, "subgen_update(H=%zu,n=%zu,dk=%zu,dv=%zu,t=%zu,s=%zu,clusters=%.0f)", H, n, dk, dv, t, s, mc);
  kvb_roof_kernel model;
  kvb_roof_subgen_update(&model, (double)H, (double)n, (double)dk, (double)dv, mc, (double)t, (double)s, kvb_roof_device_find("H100"));
  perf_line(g, name, bytes, flops, bu, ref_u, "subgen.c fed the same coins", "",
            "note: the stream is sequential, one work-group per head walks its tokens with 5 barriers each: with "
            "H = 8 groups on 132 SMs the kernel is latency-bound and the roofline is a lower bound it cannot approach",
            &model);
  for (int rep = 0; rep < 3; rep++) {
    if (kvb_gpu_subgen_query(g, &st, nq, 1 / sqrt((double)dk), Q, Z, &kt)) {
      printf("FAIL perf subgen_query: %s\n", kvb_strerror_last());
      goto out;
    }
    bq = fmin(bq, kt);
  }
  {
    size_t cap = st.cap, nt = s + cap * t, k;
    wterm *T = malloc(nt * sizeof *T);
    double *z = malloc(dv * 8), *B = malloc(dv * 8), *work = malloc(2 * nt * 8);
    if (!T || !z || !B || !work) {
      free(T), free(z), free(B), free(work);
      goto out;
    }
    t0 = now_s();
    for (size_t qi = 0; qi < nq; qi++)
      for (size_t h = 0; h < H; h++) {
        k = 0;
        for (size_t j = 0; j < s; j++) {
          if (st.M_pos[h * s + j] < 0) continue;
          const float *v = st.Mv + (h * s + j) * dv;
          double vv = 0;
          for (size_t a = 0; a < dv; a++) vv += (double)v[a] * v[a];
          wterm w = {st.Mk + (h * s + j) * dk, v, log(st.mu[h] / (s * vv)), -INFINITY, 0, -1};
          T[k++] = w;
        }
        for (size_t ci = 0; ci < (size_t)st.mc[h]; ci++)
          for (size_t j = 0; j < t; j++) {
            wterm w = {st.S + ((h * cap + ci) * t + j) * dk, NULL, -INFINITY, log((double)st.cnt[h * cap + ci] / t), 0,
                       (long)(ci * t + j)};
            T[k++] = w;
          }
        ref_wterms(k, T, dk, dv, Q + (qi * H + h) * dk, 1 / sqrt((double)dk), z, B, work);
      }
    double ref_q = now_s() - t0;
    free(T), free(z), free(B), free(work);
    /* per (head, query) group: slots' keys and values read in both passes (‖v‖² each time), the
     * samples' keys in both passes, counts, the output row per chunk */
    double terms = s + mc * t;
    bytes = (double)nq * H * (2 * s * (dk + dv + 1) * 4.0 + 2 * mc * t * dk * 4.0 + 2 * mc * t * 4.0 + s * dv * 4.0 + 2 * dv * 4.0);
    flops = (double)nq * H * (terms * 4 * dk + s * 6.0 * dv + 8 * terms);
    snprintf(name, sizeof name, "subgen_query(H=%zu,nq=%zu,dk=%zu,dv=%zu,t=%zu,s=%zu,clusters=%.0f)", H, nq, dk, dv, t, s, mc);
    kvb_roof_subgen_query(&model, (double)H, (double)nq, (double)dk, (double)dv, mc, (double)t, (double)s, kvb_roof_device_find("H100"));
    perf_line(g, name, bytes, flops, bq, ref_q, "the double estimator with its error bound", "", NULL, &model);
  }
  rc = 0;
out:
  kvb_gpu_subgen_free(&st);
  if (rng) gsl_rng_free(rng);
  free(K), free(V), free(u), free(C), free(Q), free(Z), free(kd), free(vd), free(ud);
  return rc;
}

/* The reshaped kernels beside today's on the perf device, same inputs: the cooperative decode on a
 * resident cache (kernel time only: the cache is appended once) and block BalanceKV's round with
 * the Gram tile against k_bkvb.cl's (both through gpu_resident.h, old_kernels switching). */
static int perf_reshaped(kvb_gpu *g, const char *filter) {
  int standin = cpu_standin(g), rc = 0;
  const kvb_roof_device *h100 = kvb_roof_device_find("H100");
  if (matches(filter, "attn_decode")) {
    static const size_t S[][6] = {{8, 8, 4096, 128, 4, 0}, {8, 8, 4096, 128, 2, 0}, {32, 8, 2048, 128, 4, 0}};
    for (size_t i = 0; i < 3; i++) {
      size_t H = S[i][0], Hkv = S[i][1], n = S[i][2], d = S[i][3], es = S[i][4];
      float *Kf = malloc(Hkv * n * d * 4), *Q = malloc(H * d * 4), *Z = malloc(H * d * 4), *Kr = malloc(H * n * d * 4);
      uint16_t *Kh = malloc(Hkv * n * d * 2), *Krh = malloc(H * n * d * 2);
      kvb_gpu_kvcache kc;
      double best_new = 1e30, best_old = 1e30, kt;
      if (!Kf || !Q || !Z || !Kr || !Kh || !Krh) return 1;
      kvb_pcg32 r;
      kvb_pcg32_seed(&r, 31 + i, 4);
      fill(&r, Kf, Hkv * n * d, 1.0), fill(&r, Q, H * d, 1.0);
      for (size_t j = 0; j < Hkv * n * d; j++) Kh[j] = kvb_f32_to_f16(Kf[j]);
      for (size_t h = 0; h < H; h++) { /* today's kernel needs each query head's K/V */
        memcpy(Kr + h * n * d, Kf + (h / (H / Hkv)) * n * d, n * d * 4);
        memcpy(Krh + h * n * d, Kh + (h / (H / Hkv)) * n * d, n * d * 2);
      }
      const void *KK = es == 2 ? (const void *)Kh : (const void *)Kf, *KR = es == 2 ? (const void *)Krh : (const void *)Kr;
      if (kvb_gpu_kvcache_init(&kc, g, Hkv, d, d, es == 2) || kvb_gpu_kvcache_append(&kc, n, KK, KK)) {
        printf("FAIL perf coop decode: %s\n", kvb_strerror_last());
        return 1;
      }
      for (int rep = 0; rep < 3 && !rc; rep++) {
        rc |= kvb_gpu_kvcache_attend(&kc, H, 1, 1 / sqrt((double)d), Q, 256, Z, &kt);
        best_new = fmin(best_new, kt);
        rc |= kvb_gpu_attention(g, H, n, d, d, 1, 1 / sqrt((double)d), es == 2, Q, KR, KR, NULL, 256, Z, &kt);
        best_old = fmin(best_old, kt);
      }
      kvb_roof_kernel mo, mn;
      kvb_roof_decode(&mo, (double)H, (double)Hkv, (double)n, (double)d, (double)d, 1, (double)es, 256, 0, h100);
      kvb_roof_decode(&mn, (double)H, (double)Hkv, (double)n, (double)d, (double)d, 1, (double)es, 256, 1, h100);
      printf("attn_decode reshaped (H=%zu,Hkv=%zu,n=%zu,d=%zu,%s): kvb_attn_coop %.3f ms vs kvb_attn_split %.3f ms on %s%s;"
             " model, H100: %.2f us vs %.2f us\n", H, Hkv, n, d, es == 2 ? "f16" : "f32", best_new * 1e3, best_old * 1e3,
             standin ? "a CPU stand-in" : "the device", standin ? " (PoCL: not a GPU number)" : "",
             kvb_roof_predict(&mn, h100, 0).t_pred * 1e6, kvb_roof_predict(&mo, h100, 0).t_pred * 1e6);
      kvb_gpu_kvcache_free(&kc);
      free(Kf), free(Q), free(Z), free(Kr), free(Kh), free(Krh);
      if (rc) {
        printf("FAIL perf coop decode: %s\n", kvb_strerror_last());
        return 1;
      }
    }
  }
  if (matches(filter, "bkvb_compress")) {
    const size_t H = 8, n = 4096, d = 128, b = 256;
    float *K = malloc(H * n * d * 4);
    double *ub = malloc(H * n * 8), *w = malloc(H * n * 8), best[2] = {1e30, 1e30}, kt;
    size_t *ix = malloc(H * n * sizeof *ix);
    kvb_gpu_kvcache kc;
    kvb_gpu_bkvb_dev bk;
    if (!K || !ub || !w || !ix) return 1;
    kvb_pcg32 r;
    kvb_pcg32_seed(&r, 41, 4);
    fill(&r, K, H * n * d, 1.0);
    for (size_t j = 0; j < H * n; j++) ub[j] = kvb_pcg32_uniform(&r);
    const double *u[1] = {ub};
    if (kvb_gpu_kvcache_init(&kc, g, H, d, d, 0) || kvb_gpu_kvcache_append(&kc, n, K, K)) return 1;
    kvb_gpu_bkvb_dev_init(&bk, g);
    for (int rep = 0; rep < 2 && !rc; rep++)
      for (int old = 0; old < 2 && !rc; old++) {
        bk.old_kernels = old;
        rc = kvb_gpu_bkvb_dev_compress(&bk, &kc, 0, n, b, 1, 4.0, 0.5, 1.0, 0.0, 1, u, ix, w, NULL, &kt);
        best[old] = fmin(best[old], kt);
      }
    if (rc) printf("FAIL perf bkvb gram: %s\n", kvb_strerror_last());
    else {
      kvb_roof_kernel mo, mn;
      kvb_roof_bkvb_round(&mo, (double)H, (double)n, (double)d, (double)d, (double)b, 0, h100);
      kvb_roof_bkvb_round(&mn, (double)H, (double)n, (double)d, (double)d, (double)b, 1, h100);
      printf("bkvb_compress reshaped (one round, H=%zu,m=%zu,d=%zu,b=%zu): k_bkvb_gram.cl %.3f ms vs k_bkvb.cl %.3f ms on %s%s;"
             " model, H100: %.2f us vs %.2f us\n", H, n, d, b, best[0] * 1e3, best[1] * 1e3,
             standin ? "a CPU stand-in" : "the device", standin ? " (PoCL: not a GPU number)" : "",
             kvb_roof_predict(&mn, h100, 0).t_pred * 1e6, kvb_roof_predict(&mo, h100, 0).t_pred * 1e6);
    }
    kvb_gpu_bkvb_dev_free(&bk);
    kvb_gpu_kvcache_free(&kc);
    free(K), free(ub), free(w), free(ix);
  }
  return rc != 0;
}

/* perf: bytes and flops per call, measured rates, the H100 roofline as a model. */
int do_perf(kvb_gpu_backend be, int dev, const char *filter) {
  kvb_gpu *g;
  printf("model devices:");
  for (const kvb_roof_device *d = kvb_roof_devices; d->name; d++)
    printf(" %s %.2f TB/s HBM (copy reaches %.0f%%), %.1f TFLOP/s FP32 non-tensor, %d SMs;", d->name, d->bw / 1e12,
           100 * d->bw_eff, d->peak / 1e12, d->sms);
  printf("\nroofline time = max(useful bytes/BW, flops/peak); predicted time from the kernel's phases (roofline.h)\n");
  print_models(filter, 0);
  print_models(filter, 1);
  int orc = kvb_gpu_open(be, dev, NULL, &g);
  if (orc) { /* as test: no device of the backend is 3 (the model above printed, nothing measured) */
    printf("%s gpu open: %s\n", orc == KVB_ENOTFOUND ? "NO-DEVICE" : "FAIL", kvb_strerror_last());
    return orc == KVB_ENOTFOUND ? EXIT_NO_DEVICE : EXIT_FAIL;
  }
  g_copy_bw = measure_copy(g);
  g_model_dev = model_device_of(g);
  printf("\n== measured on %s (%s) ==\nstreaming copy: %.1f GB/s%s\n", kvb_gpu_device_name(g),
         cpu_standin(g) ? "a CPU stand-in: PoCL times say nothing about a GPU" : "the device", g_copy_bw / 1e9,
         cpu_standin(g) ? " (CPU stand-in; not used by the model)" : g_model_dev ? " (the model's BW for this device)" : "");
  static const attn_case P[] = {{8, 4096, 128, 128, 1, 256, 0, 0, 0}, {8, 4096, 128, 128, 1, 256, 1, 0, 0},
                                {32, 2048, 64, 64, 4, 128, 0, 0, 0}};
  if (matches(filter, "attn_decode"))
    for (size_t i = 0; i < sizeof P / sizeof *P; i++) {
      const attn_case *c = &P[i];
      attn_data a;
      char name[200];
      attn_name(c, name, sizeof name);
      float *Z = malloc(c->nq * c->H * c->dv * 4);
      if (attn_data_make(c, 9, &a) || !Z) return 1;
      size_t es = c->half ? 2 : 4, nsplit = (c->n + c->chunk - 1) / c->chunk;
      /* each (split, query) group reads its K and V rows once; partials written then read back */
      double bytes = (double)c->nq * c->H * c->n * (c->dk + c->dv) * es + c->nq * c->H * c->dk * 4.0 +
                     2.0 * c->nq * c->H * nsplit * (c->dv + 2) * 4.0 + c->nq * c->H * c->dv * 4.0;
      double flops = (double)c->nq * c->H * c->n * (2.0 * c->dk + 2.0 * c->dv + 4);
      double best = 1e30, kt = 0;
      for (int rep = 0; rep < 3; rep++) {
        if (kvb_gpu_attention(g, c->H, c->n, c->dk, c->dv, c->nq, 1.0 / sqrt((double)c->dk), c->half, a.Q,
                              c->half ? (const void *)a.Kh : a.Kf, c->half ? (const void *)a.Vh : a.Vf, NULL,
                              c->chunk, Z, &kt)) {
          printf("FAIL perf %s: %s\n", name, kvb_strerror_last());
          return 1;
        }
        if (kt < best) best = kt;
      }
      double ref_s = 0;
      verdict v = compare_attn(c, a.Q, a.Kf, a.Vf, NULL, Z, &ref_s);
      char acc[96];
      snprintf(acc, sizeof acc, "; nmse %.2g (tol %.2g)", v.nmse, v.tol);
      kvb_roof_kernel model;
      kvb_roof_decode(&model, (double)c->H, (double)c->H, (double)c->n, (double)c->dk, (double)c->dv, (double)c->nq,
                      (double)es, (double)c->chunk, 0, kvb_roof_device_find("H100"));
      perf_line(g, name, bytes, flops, best, ref_s, "kvb_attention_exact", acc, NULL, &model);
      free(Z);
      attn_data_free(&a);
    }
  int rc = 0;
  if (matches(filter, "bkvb_query")) rc |= perf_wquery(g);
  if (matches(filter, "subgen")) rc |= perf_subgen(g);
  rc |= perf_reshaped(g, filter);
  kvb_gpu_close(g);
  return rc;
}

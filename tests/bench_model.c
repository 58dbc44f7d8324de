/* bench_model.c — prefill speed of SmolLM2-135M (src/model) per context length, against the
 * model's own flop bound measured in the same run: the flops a prefill must do (every linear
 * layer, 2·params·L; causal attention, 2·2·n_head·hd·L²/2 per layer for QKᵀ and PV; the tied
 * output for the last row only, as kvb_model_prefill computes no logits) divided by the SGEMM
 * rate of this machine (1024³, the threads OPENBLAS_NUM_THREADS allows). The ratio time/bound
 * says how far the forward pass is from the machine's limit, and how that grows with length
 * (the quadratic attention term). Text: the debian-licenses corpus (12 839 tokens). A
 * measurement, never a verdict (README, Benchmarks). SKIP without the model. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kvb_error.h"
#include "model.h"
#include "real_text.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best of 3 SGEMM 1024³ runs, in flop/s. */
static double sgemm_rate(void) {
  enum { N = 1024 };
  float *a = malloc(sizeof(float) * N * N), *b = malloc(sizeof(float) * N * N),
        *c = malloc(sizeof(float) * N * N);
  if (!a || !b || !c) return 0;
  for (size_t i = 0; i < (size_t)N * N; i++) a[i] = (float)(i % 7) * 0.1f, b[i] = (float)(i % 5) * 0.2f;
  double best = 0;
  for (int r = 0; r < 3; r++) {
    double t0 = now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
    double s = now() - t0;
    if (s > 0 && 2.0 * N * N * N / s > best) best = 2.0 * N * N * N / s;
  }
  free(a), free(b), free(c);
  return best;
}

/* Flops of a prefill of L tokens (multiply-adds counted as 2). */
static double prefill_flops(const kvb_model_config *c, double L) {
  double hd = c->head_dim, dq = c->n_head * hd, dkv = c->n_head_kv * hd;
  double linear = (double)c->d_model * (dq + 2 * dkv) + dq * c->d_model + 3.0 * c->d_model * c->d_ff;
  double attn = 2.0 * 2.0 * c->n_head * hd * L * (L + 1) / 2; /* QKᵀ and PV, causal */
  return c->n_layer * (2.0 * linear * L + attn);
}

int main(void) {
  if (kvb_model_available() != KVB_OK) {
    printf("SKIP bench_model: %s\n", kvb_strerror_last());
    return 0;
  }
  kvb_model m;
  if (kvb_model_load(NULL, &m)) {
    printf("FAIL bench_model: %s\n", kvb_strerror_last());
    return 1;
  }
  char *buf = NULL;
  size_t len = 0, n = 0;
  int32_t *ids = NULL;
  if (kvb_text_read(KVB_TEXT_LICENSES, &buf, &len) || kvb_tok_encode(m.tok, buf, len, &ids, &n)) {
    printf("SKIP bench_model: %s\n", kvb_strerror_last());
    free(buf);
    kvb_model_free(&m);
    return 0;
  }
  free(buf);
  double rate = sgemm_rate();
  printf("bench_model: SGEMM 1024^3 %.2f GFLOP/s (this run, OPENBLAS_NUM_THREADS=%s); trained "
         "context %d tokens\n", rate / 1e9, getenv("OPENBLAS_NUM_THREADS") ? getenv("OPENBLAS_NUM_THREADS") : "(default)",
         m.cfg.n_ctx);
  printf("%8s %10s %10s %12s %10s %14s\n", "tokens", "seconds", "tokens/s", "GFLOP", "bound s",
         "time/bound");
  static const size_t lens[] = {512, 1024, 2048, 4096, 8192};
  int st = KVB_OK;
  for (size_t i = 0; i < sizeof lens / sizeof *lens && st == KVB_OK; i++) {
    size_t L = lens[i];
    if (L > n || (m.cfg.n_ctx > 0 && L > (size_t)m.cfg.n_ctx)) break;
    float *hid = malloc(L * (size_t)m.cfg.d_model * sizeof(float));
    if (!hid) break;
    double t0 = now();
    st = kvb_model_prefill(&m, ids, L, hid, NULL, NULL);
    double s = now() - t0, fl = prefill_flops(&m.cfg, (double)L);
    free(hid);
    if (st != KVB_OK) {
      printf("bench_model: prefill of %zu tokens failed: %s\n", L, kvb_strerror_last());
      break;
    }
    printf("%8zu %10.2f %10.0f %12.1f %10.2f %14.2f\n", L, s, (double)L / s, fl / 1e9,
           rate > 0 ? fl / rate : 0.0, rate > 0 ? s / (fl / rate) : 0.0);
    fflush(stdout);
  }
  free(ids);
  kvb_model_free(&m);
  return st == KVB_OK ? 0 : 1;
}

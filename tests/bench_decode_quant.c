/* bench_decode_quant.c — decode speed of the quantized caches (q8_0, q4_0, KIVI-2) against exact
 * attention inside SmolLM2-135M at a 4k context, the path `kvbound decode` times (every one of
 * its 30 × 3 (layer, kv head) caches a method, updated with each new token and asked its three
 * query heads; src/model/decode_compressed.h). A measurement, never a verdict (tests/README.md,
 * Benchmarks). SKIPped without the model file.
 *
 * One prompt of N0 tokens (default 4032: the debian-licenses corpus) is prefilled once; a session
 * per method is opened on it; then each rep forwards the next T = 16 tokens through every
 * session in turn (the order rotated from rep to rep), so the context runs from N0 to
 * N0 + reps·T = 4096 and exact and the quantized caches see the same tokens, the same context
 * and the same load. Per method: the best time per token over the reps (wall and CPU), and
 * speed = exact's time / the method's (≥ 1: at least as fast as exact) as best/best and as the
 * median, minimum and maximum of the per-rep pairs (the spread a loaded machine leaves); and the
 * bytes one query reads from a (layer, kv head) cache as stored (kvb_dec_bytes_now) beside an
 * exact cache's. The times include the model's own matrix products around the attention (the
 * same for every method), as `kvbound decode`'s do.
 *
 * KVB_BENCH_REPS=R (default 4, at most 32) reps; KVB_BENCH_N0=N the prompt (default 4096 − R·16). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "kvbound.h"
#include "decode_compressed.h"
#include "lm.h"
#include "real_text.h"
#include "stats.h"

#ifndef KVB_BUILD_COMMIT
#define KVB_BUILD_COMMIT "unknown" /* built outside the Makefile */
#endif

enum { NM = 4, T = 16, MAXREP = 32 };
static const char *const label[NM] = {"exact", "q8_0", "q4_0", "KIVI-2"};
static const char *const type[NM] = {"exact", "q8_0", "q4_0", "kivi"};
static const char *const param[NM] = {NULL, NULL, NULL, "bits=2"};

static int make(void *ctx, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  int i = *(const int *)ctx;
  (void)layer, (void)g;
  kvb_params p;
  kvb_params_init(&p);
  if (param[i] && kvb_params_parse(&p, param[i])) return KVB_EINVAL;
  return kvb_method_alloc(type[i], cfg, &p, out);
}

static size_t env_size(const char *name, size_t dflt) {
  const char *v = getenv(name);
  char *e;
  if (!v || !*v) return dflt;
  unsigned long long x = strtoull(v, &e, 10);
  return *e ? dflt : (size_t)x;
}

int main(void) {
  if (kvb_lm_available(KVB_LM_SMOLLM2) != KVB_OK) {
    printf("SKIP bench_decode_quant: %s\n", kvb_strerror_last());
    return 0;
  }
  size_t reps = env_size("KVB_BENCH_REPS", 4);
  if (reps < 1) reps = 1;
  if (reps > MAXREP) reps = MAXREP;
  size_t n0 = env_size("KVB_BENCH_N0", 4096 - reps * T);
  kvb_lm lm;
  if (kvb_lm_load(KVB_LM_SMOLLM2, NULL, &lm)) {
    printf("FAIL bench_decode_quant: %s\n", kvb_strerror_last());
    return 1;
  }
  char *buf = NULL;
  size_t len = 0, nt = 0;
  int32_t *ids = NULL;
  int rc = 0;
  kvb_dec_prefix pre = {0};
  kvb_dec_session *s[NM] = {NULL};
  static double tw[NM][MAXREP], tc[NM][MAXREP];
  if (kvb_text_read(KVB_TEXT_LICENSES, &buf, &len) || kvb_lm_encode(&lm, buf, len, &ids, &nt)) {
    printf("SKIP bench_decode_quant: %s\n", kvb_strerror_last());
    goto out;
  }
  if (n0 < 1 || n0 + reps * T > nt || n0 + reps * T > (size_t)lm.n_ctx) {
    printf("FAIL bench_decode_quant: a prompt of %zu tokens and %zu more do not fit (text %zu, "
           "context %d)\n", n0, reps * T, nt, lm.n_ctx);
    rc = 1;
    goto out;
  }
  printf("bench_decode_quant (commit %s): %s, prompt %zu tokens, then %zu reps of %d tokens "
         "through every method in turn (context %zu to %zu)\n", KVB_BUILD_COMMIT, lm.name, n0,
         reps, T, n0, n0 + reps * T);
  fflush(stdout);
  double w0 = now();
  if (kvb_lm_prefix_build(&lm, ids, n0, &pre)) {
    printf("FAIL bench_decode_quant: prefill: %s\n", kvb_strerror_last());
    rc = 1;
    goto out;
  }
  for (int i = 0; i < NM; i++) {
    int idx = i;
    kvb_dec_opts o = {0, 1, 0};
    if (kvb_lm_dec_open(&lm, &pre, make, &idx, &o, &s[i])) {
      printf("FAIL bench_decode_quant: %s: %s\n", label[i], kvb_strerror_last());
      rc = 1;
      goto out;
    }
  }
  printf("  prefill and %d sessions opened in %.1f s wall\n", NM, now() - w0);
  for (size_t r = 0; r < reps; r++)
    for (int jj = 0; jj < NM; jj++) {
      int i = (int)((jj + r) % NM);
      double a = now(), c = cpu_now();
      if (kvb_dec_forward(s[i], ids + n0 + r * T, T, NULL)) {
        printf("FAIL bench_decode_quant: %s: %s\n", label[i], kvb_strerror_last());
        rc = 1;
        goto out;
      }
      tw[i][r] = (now() - a) / T, tc[i][r] = (cpu_now() - c) / T;
    }
  double ebytes = 8.0 * 2.0 * (double)lm.head_dim * (double)(n0 + reps * T), bw0 = INFINITY,
         bc0 = INFINITY;
  for (size_t r = 0; r < reps; r++) bw0 = fmin(bw0, tw[0][r]), bc0 = fmin(bc0, tc[0][r]);
  printf("  speed = exact's time per token / the method's (>= 1: at least as fast as exact): "
         "best/best, and the median [min, max] of the %zu per-rep pairs, wall and CPU; bytes a "
         "query reads from one (layer, kv head) cache at the end, as stored\n"
         "  %-7s %9s %9s %6s %19s %6s %19s %11s %11s\n", reps, "method", "ms/tok", "cpu ms",
         "speed", "paired [min, max]", "cpu sp", "paired [min, max]", "bytes/query",
         "exact's");
  for (int i = 0; i < NM; i++) {
    double pw[MAXREP], pc[MAXREP], bw = INFINITY, bc = INFINITY;
    for (size_t r = 0; r < reps; r++) {
      bw = fmin(bw, tw[i][r]), bc = fmin(bc, tc[i][r]);
      pw[r] = tw[0][r] / tw[i][r], pc[r] = tc[0][r] / tc[i][r];
    }
    double wmin = INFINITY, wmax = 0, cmin = INFINITY, cmax = 0;
    for (size_t r = 0; r < reps; r++)
      wmin = fmin(wmin, pw[r]), wmax = fmax(wmax, pw[r]), cmin = fmin(cmin, pc[r]),
      cmax = fmax(cmax, pc[r]);
    printf("  %-7s %9.1f %9.1f %6.2f %5.2f [%5.2f, %5.2f] %6.2f %5.2f [%5.2f, %5.2f] %11.0f %11.0f\n",
           label[i], 1e3 * bw, 1e3 * bc, bw0 / bw, kvb_quantile(pw, reps, 0.5), wmin, wmax,
           bc0 / bc, kvb_quantile(pc, reps, 0.5), cmin, cmax, kvb_dec_bytes_now(s[i]), ebytes);
  }
out:
  for (int i = 0; i < NM; i++) kvb_dec_close(s[i]);
  kvb_dec_prefix_free(&pre);
  free(buf), free(ids);
  kvb_lm_free(&lm);
  return rc;
}

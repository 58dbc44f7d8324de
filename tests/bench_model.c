/* bench_model.c — prefill speed of SmolLM2-135M (src/model) on the first 2048 tokens of the
 * GPL-3 text: seconds and tokens/s, with OpenBLAS using the threads OPENBLAS_NUM_THREADS allows.
 * The target: 2k tokens in at most 15 s on 2 cores (printed beside the time; no timed verdict). llama.cpp on the same machine is
 * measured by hand (README, The real model), as it needs Python. SKIP without the model. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kvb_error.h"
#include "model.h"

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
  FILE *f = fopen("/usr/share/common-licenses/GPL-3", "rb");
  static char buf[40000];
  size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  int32_t *ids = NULL;
  size_t n = 0;
  if (len == 0 || kvb_tok_encode(m.tok, buf, len, &ids, &n) || n < 2048) {
    printf("SKIP bench_model: /usr/share/common-licenses/GPL-3 missing or short\n");
    kvb_model_free(&m);
    free(ids);
    return 0;
  }
  n = 2048;
  float *hid = malloc(n * (size_t)m.cfg.d_model * sizeof(float));
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  int st = kvb_model_prefill(&m, ids, n, hid, NULL, NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
  /* A measurement, not a test: the time is printed beside the target, never judged. */
  if (st == KVB_OK)
    printf("bench_model: prefill of %zu tokens in %.2f s (%.0f tokens/s); the target is <= 15 s "
           "on 2 cores: %.2fx the target\n", n, s, (double)n / s, s / 15.0);
  else
    printf("bench_model: prefill failed: %s\n", kvb_strerror_last());
  free(hid);
  free(ids);
  kvb_model_free(&m);
  return st == KVB_OK ? 0 : 1;
}

/* gpu_host_util.h — the small host-side helpers every GPU host file needs: a monotonic clock for
 * the timings kvb-gpucheck prints, kernel-argument constructors (gpu.h's kvb_gpu_arg), and the
 * finiteness checks run on inputs before anything is uploaded (src/gpu/README.md, GPU kernels: bad input is
 * refused on the host, never left to a kernel). Static inline: each file gets its own copy. */
#ifndef KVB_GPU_HOST_UTIL_H
#define KVB_GPU_HOST_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gpu.h"

static inline double kvb_gpu_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static inline kvb_gpu_arg A_buf(kvb_gpu_buf *b) { kvb_gpu_arg a = {KVB_GPU_ARG_BUF, b, 0, 0}; return a; }
static inline kvb_gpu_arg A_int(size_t i) { kvb_gpu_arg a = {KVB_GPU_ARG_INT, NULL, (int)i, 0}; return a; }
static inline kvb_gpu_arg A_flt(double f) { kvb_gpu_arg a = {KVB_GPU_ARG_FLOAT, NULL, 0, (float)f}; return a; }
static inline int kvb_finite_f32(const float *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}
/* binary16: exponent bits all ones is Inf or NaN */
static inline int kvb_finite_f16(const uint16_t *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (((x[i] >> 10) & 0x1f) == 0x1f) return 0;
  return 1;
}

#endif

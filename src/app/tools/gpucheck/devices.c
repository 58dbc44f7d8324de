/* devices.c — kvb-gpucheck devices: the platforms and devices of every backend. */
#include "gpucheck.h"
#include "kvb_error.h"

#include <stdio.h>

int do_devices(void) {
  char buf[8192];
  int n = kvb_gpu_list(KVB_GPU_OPENCL, buf, sizeof buf);
  if (n < 0) printf("opencl: %s\n", kvb_strerror_last());
  else printf("%s", buf);
  n = kvb_gpu_list(KVB_GPU_CUDA, buf, sizeof buf);
  if (n < 0) printf("cuda: %s\n", kvb_strerror_last());
  else printf("%s", buf);
  return 0;
}

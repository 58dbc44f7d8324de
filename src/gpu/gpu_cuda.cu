/* gpu_cuda.cu — the CUDA backend of gpu.h (runtime API). The kernels are the same text as the
 * OpenCL backend's: make concatenates k_prelude.cl + k_*.cl into $(B)/gpu/kvb_kernels.cu, included
 * here, and nvcc compiles it with the prelude's CUDA branch. Mutant kernels are an OpenCL-only
 * device (they are built from -D options at run time; here the kernels are compiled once), so
 * open() with defines is refused with a message. Built only when nvcc is found. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "gpu.h"
#include "kvb_error.h"
}

#include <kvb_kernels.cu>

struct kvb_gpu_buf {
  void *p;
  size_t bytes;
};

typedef struct {
  kvb_gpu_head head;
  int dev;
  char name[300]; /* cudaDeviceProp.name is 256 bytes */
} cu_gpu;

static const struct {
  const char *name;
  const void *fn;
} KERNELS[] = {{"kvb_attn_split", (const void *)kvb_attn_split},
               {"kvb_attn_combine", (const void *)kvb_attn_combine},
               {"kvb_usample_gather", (const void *)kvb_usample_gather},
               {"kvb_bkvb_walk", (const void *)kvb_bkvb_walk},
               {"kvb_bkvb_halving", (const void *)kvb_bkvb_halving},
               {"kvb_wquery", (const void *)kvb_wquery},
               {"kvb_subgen_update", (const void *)kvb_subgen_update},
               {"kvb_subgen_query", (const void *)kvb_subgen_query},
               {"kvb_copy_f4", (const void *)kvb_copy_f4},
               {"kvb_attn_coop", (const void *)kvb_attn_coop},
               {"kvb_restride", (const void *)kvb_restride},
               {"kvb_fill_i32", (const void *)kvb_fill_i32},
               {"kvb_bkvb_init", (const void *)kvb_bkvb_init},
               {"kvb_bkvb_qlist", (const void *)kvb_bkvb_qlist},
               {"kvb_bkvb_gram_walk", (const void *)kvb_bkvb_gram_walk},
               {"kvb_bkvb_halving_par", (const void *)kvb_bkvb_halving_par},
               {"kvb_subgen_prep", (const void *)kvb_subgen_prep},
               {"kvb_subgen_update_b", (const void *)kvb_subgen_update_b}};

static int cu_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

static int cu_list(char *out, size_t cap) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0)
    return -KVB_ERROR(KVB_ENOTFOUND, "no CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
  size_t used = 0;
  if (cap) out[0] = 0;
  for (int i = 0; i < n; i++) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    if (used < cap)
      used += (size_t)snprintf(out + used, cap - used, "cuda %d: %s | sm_%d%d | %d SMs | %.1f GiB\n", i, p.name,
                               p.major, p.minor, p.multiProcessorCount, (double)p.totalGlobalMem / 1073741824.0);
  }
  return n;
}

static const kvb_gpu_vtable *self_vt(void);

static int cu_open(int index, const char *defines, kvb_gpu **out) {
  *out = NULL;
  if (defines && *defines)
    return KVB_ERROR(KVB_EINVAL, "cuda: kernels are compiled at build time; mutant defines (%s) are checked on OpenCL", defines);
  int n = cu_count();
  if (n == 0) return KVB_ERROR(KVB_ENOTFOUND, "no CUDA device found");
  if (index < 0 || index >= n) return KVB_ERROR(KVB_ENOTFOUND, "CUDA device %d not found (%d devices)", index, n);
  cu_gpu *g = (cu_gpu *)calloc(1, sizeof *g);
  if (!g) return KVB_ERROR(KVB_ENOMEM, "cuda: out of memory");
  g->head.vt = self_vt();
  g->head.be = KVB_GPU_CUDA;
  g->dev = index;
  cudaDeviceProp p;
  cudaError_t e = cudaSetDevice(index);
  if (e == cudaSuccess) e = cudaGetDeviceProperties(&p, index);
  if (e != cudaSuccess) {
    free(g);
    return KVB_ERROR(KVB_EFAIL, "cuda: device %d: %s", index, cudaGetErrorString(e));
  }
  snprintf(g->name, sizeof g->name, "%s (sm_%d%d)", p.name, p.major, p.minor);
  *out = (kvb_gpu *)g;
  return KVB_OK;
}

static void cu_close(kvb_gpu *g) { free(g); }
static const char *cu_name(const kvb_gpu *g) { return ((const cu_gpu *)g)->name; }

static int cu_alloc(kvb_gpu *g, size_t bytes, kvb_gpu_buf **out) {
  cudaSetDevice(((cu_gpu *)g)->dev);
  *out = NULL;
  kvb_gpu_buf *b = (kvb_gpu_buf *)calloc(1, sizeof *b);
  if (!b) return KVB_ERROR(KVB_ENOMEM, "cuda: out of host memory");
  cudaError_t e = cudaMalloc(&b->p, bytes ? bytes : 4);
  if (e != cudaSuccess) {
    free(b);
    return KVB_ERROR(e == cudaErrorMemoryAllocation ? KVB_ENOMEM : KVB_EFAIL,
                     "cuda: the device refused %zu bytes (%s)", bytes, cudaGetErrorString(e));
  }
  b->bytes = bytes;
  *out = b;
  return KVB_OK;
}

static void cu_free(kvb_gpu *g, kvb_gpu_buf *b) {
  (void)g;
  if (!b) return;
  cudaFree(b->p);
  free(b);
}

static int cu_write(kvb_gpu *g, kvb_gpu_buf *b, const void *src, size_t bytes) {
  (void)g;
  cudaError_t e = cudaMemcpy(b->p, src, bytes, cudaMemcpyHostToDevice);
  return e == cudaSuccess ? KVB_OK : KVB_ERROR(KVB_EFAIL, "cuda: write failed (%s)", cudaGetErrorString(e));
}

static int cu_read(kvb_gpu *g, const kvb_gpu_buf *b, void *dst, size_t bytes) {
  (void)g;
  cudaError_t e = cudaMemcpy(dst, b->p, bytes, cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? KVB_OK : KVB_ERROR(KVB_EFAIL, "cuda: read failed (%s)", cudaGetErrorString(e));
}

static int cu_launch(kvb_gpu *g, const char *name, size_t groups, size_t local, size_t nargs,
                     const kvb_gpu_arg *args) {
  cudaSetDevice(((cu_gpu *)g)->dev);
  const void *fn = NULL;
  for (size_t i = 0; i < sizeof KERNELS / sizeof *KERNELS; i++)
    if (!strcmp(KERNELS[i].name, name)) fn = KERNELS[i].fn;
  if (!fn) return KVB_ERROR(KVB_ENOTFOUND, "cuda: no kernel %s", name);
  if (nargs > 32) return KVB_ERROR(KVB_EINVAL, "cuda: %s: too many arguments", name);
  void *ptrs[32], *vals[32];
  for (size_t i = 0; i < nargs; i++) {
    if (args[i].kind == kvb_gpu_arg::KVB_GPU_ARG_BUF) vals[i] = args[i].buf->p, ptrs[i] = &vals[i];
    else if (args[i].kind == kvb_gpu_arg::KVB_GPU_ARG_INT) ptrs[i] = (void *)&args[i].i;
    else ptrs[i] = (void *)&args[i].f;
  }
  cudaError_t e = cudaLaunchKernel(fn, dim3((unsigned)groups), dim3((unsigned)local), ptrs, 0, 0);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    return KVB_ERROR(e == cudaErrorMemoryAllocation ? KVB_ENOMEM : KVB_EFAIL, "cuda: %s: %s", name, cudaGetErrorString(e));
  return KVB_OK;
}

static const kvb_gpu_vtable cu_vt = {cu_count, cu_list,  cu_open,  cu_close, cu_name,
                                     cu_alloc, cu_free,  cu_write, cu_read,  cu_launch};
static const kvb_gpu_vtable *self_vt(void) { return &cu_vt; }
extern "C" const kvb_gpu_vtable *kvb_gpu_cuda_vtable(void) { return &cu_vt; }

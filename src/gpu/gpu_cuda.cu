/* gpu_cuda.cu — the CUDA backend of gpu.h (runtime API). The kernels are the same text as the
 * OpenCL backend's: make concatenates k_prelude.cl + k_*.cl into $(B)/gpu/kvb_kernels.cu, included
 * here, and nvcc compiles it with the prelude's CUDA branch for every architecture of CUDA_ARCHS.
 * Mutant kernels (a -D define set, kvb-gpucheck's mutant runs) cannot be compiled at run time
 * without NVRTC, so make compiles each KVB_MUT_* define of k_*.cl into a fatbin at build time
 * ($(B)/gpu/cuda-mutants/NAME.fatbin, nvcc -DNAME with the same flags); open() with defines loads
 * that file as a CUDA library (cudaLibraryLoadFromFile) and launches its kernels by name. A define
 * set with no such file is refused with a message naming the file. Every CUDA call's result is
 * checked. Built only when nvcc is found. */
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
  cudaLibrary_t lib; /* a mutant build (NULL: the kernels compiled into this binary) */
  char name[300];    /* cudaDeviceProp.name is 256 bytes */
} cu_gpu;

/* Where make puts the mutant fatbins (an absolute path given at build time; the environment
 * variable KVB_CUDA_MUTANT_DIR overrides it). */
#ifndef KVB_CUDA_MUTANT_DIR
#define KVB_CUDA_MUTANT_DIR "build/gpu/cuda-mutants"
#endif

/* "-DA -DB" -> "DIR/A+B.fatbin"; 0 when the defines are not all plain -DNAME options. */
static int mutant_path(const char *defines, char *out, size_t cap) {
  const char *dir = getenv("KVB_CUDA_MUTANT_DIR");
  size_t used = (size_t)snprintf(out, cap, "%s/", dir && *dir ? dir : KVB_CUDA_MUTANT_DIR);
  int names = 0;
  for (const char *p = defines; *p;) {
    while (*p == ' ') p++;
    if (!*p) break;
    if (strncmp(p, "-D", 2)) return 0;
    p += 2;
    size_t len = strcspn(p, " ");
    for (size_t i = 0; i < len; i++)
      if (!(p[i] == '_' || (p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9'))) return 0;
    if (len == 0 || used + len + 16 > cap) return 0;
    if (names++) out[used++] = '+';
    memcpy(out + used, p, len), used += len;
    p += len;
  }
  snprintf(out + used, cap - used, ".fatbin");
  return names > 0;
}

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

/* 0 devices when the runtime says so (no device, no driver); another error is kept as the last
 * error message (count() itself is never an error, gpu.h). */
static int cu_count(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess) return n;
  if (e != cudaErrorNoDevice && e != cudaErrorInsufficientDriver)
    KVB_ERROR(KVB_EFAIL, "cuda: cudaGetDeviceCount: %s", cudaGetErrorString(e));
  return 0;
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
    e = cudaGetDeviceProperties(&p, i);
    if (e != cudaSuccess) return -KVB_ERROR(KVB_EFAIL, "cuda: device %d: cudaGetDeviceProperties: %s", i, cudaGetErrorString(e));
    if (used < cap)
      used += (size_t)snprintf(out + used, cap - used, "cuda %d: %s | sm_%d%d | %d SMs | %.1f GiB\n", i, p.name,
                               p.major, p.minor, p.multiProcessorCount, (double)p.totalGlobalMem / 1073741824.0);
  }
  return n;
}

static const kvb_gpu_vtable *self_vt(void);

static int cu_open(int index, const char *defines, kvb_gpu **out) {
  *out = NULL;
  char path[1024] = "";
  if (defines && *defines && !mutant_path(defines, path, sizeof path))
    return KVB_ERROR(KVB_EINVAL, "cuda: defines \"%s\": only -DNAME options name a build-time CUDA build", defines);
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
  if (path[0]) {
    FILE *f = fopen(path, "rb");
    if (!f) {
      free(g);
      return KVB_ERROR(KVB_EFAIL, "cuda: no build for \"%s\": %s is missing (make compiles one fatbin per KVB_MUT_ "
                       "define of src/gpu/k_*.cl)", defines, path);
    }
    fclose(f);
    e = cudaLibraryLoadFromFile(&g->lib, path, NULL, NULL, 0, NULL, NULL, 0);
    if (e != cudaSuccess) {
      free(g);
      return KVB_ERROR(KVB_EFAIL, "cuda: loading %s: %s", path, cudaGetErrorString(e));
    }
  }
  *out = (kvb_gpu *)g;
  return KVB_OK;
}

static void cu_close(kvb_gpu *g0) {
  cu_gpu *g = (cu_gpu *)g0;
  if (!g) return;
  cudaError_t e = g->lib ? cudaLibraryUnload(g->lib) : cudaSuccess;
  if (e != cudaSuccess) KVB_ERROR(KVB_EFAIL, "cuda: unloading a mutant build: %s", cudaGetErrorString(e));
  free(g);
}

/* Makes g's device current; every entry point that touches device memory or launches calls it. */
static int cu_set(kvb_gpu *g, const char *what) {
  cudaError_t e = cudaSetDevice(((cu_gpu *)g)->dev);
  return e == cudaSuccess ? KVB_OK : KVB_ERROR(KVB_EFAIL, "cuda: %s: cudaSetDevice(%d): %s", what, ((cu_gpu *)g)->dev,
                                               cudaGetErrorString(e));
}
static const char *cu_name(const kvb_gpu *g) { return ((const cu_gpu *)g)->name; }

static int cu_alloc(kvb_gpu *g, size_t bytes, kvb_gpu_buf **out) {
  *out = NULL;
  int rc = cu_set(g, "alloc");
  if (rc) return rc;
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

/* free_buf returns nothing (gpu.h): a failure is kept as the last error message */
static void cu_free(kvb_gpu *g, kvb_gpu_buf *b) {
  if (!b) return;
  if (!cu_set(g, "free")) {
    cudaError_t e = cudaFree(b->p);
    if (e != cudaSuccess) KVB_ERROR(KVB_EFAIL, "cuda: cudaFree: %s", cudaGetErrorString(e));
  }
  free(b);
}

static int cu_write(kvb_gpu *g, kvb_gpu_buf *b, const void *src, size_t bytes) {
  int rc = cu_set(g, "write");
  if (rc) return rc;
  cudaError_t e = cudaMemcpy(b->p, src, bytes, cudaMemcpyHostToDevice);
  return e == cudaSuccess ? KVB_OK : KVB_ERROR(KVB_EFAIL, "cuda: write failed (%s)", cudaGetErrorString(e));
}

static int cu_read(kvb_gpu *g, const kvb_gpu_buf *b, void *dst, size_t bytes) {
  int rc = cu_set(g, "read");
  if (rc) return rc;
  cudaError_t e = cudaMemcpy(dst, b->p, bytes, cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? KVB_OK : KVB_ERROR(KVB_EFAIL, "cuda: read failed (%s)", cudaGetErrorString(e));
}

static int cu_launch(kvb_gpu *g, const char *name, size_t groups, size_t local, size_t nargs,
                     const kvb_gpu_arg *args) {
  int rc = cu_set(g, name);
  if (rc) return rc;
  const void *fn = NULL;
  cudaLibrary_t lib = ((cu_gpu *)g)->lib;
  if (lib) { /* a mutant build: the kernel by name from its library */
    cudaKernel_t k;
    cudaError_t e = cudaLibraryGetKernel(&k, lib, name);
    if (e != cudaSuccess) return KVB_ERROR(KVB_ENOTFOUND, "cuda: no kernel %s in the mutant build: %s", name, cudaGetErrorString(e));
    fn = (const void *)k;
  } else {
    for (size_t i = 0; i < sizeof KERNELS / sizeof *KERNELS; i++)
      if (!strcmp(KERNELS[i].name, name)) fn = KERNELS[i].fn;
  }
  if (!fn) return KVB_ERROR(KVB_ENOTFOUND, "cuda: no kernel %s", name);
  if (groups == 0 || groups > 0x7fffffffu || local == 0 || local > 1024)
    return KVB_ERROR(KVB_EINVAL, "cuda: %s: %zu blocks of %zu threads is outside CUDA's limits", name, groups, local);
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

/* cuda_standin.c — a stand-in for the CUDA runtime (libcudart) that runs kvbound's CUDA backend on
 * an OpenCL device, so the backend's host code (src/gpu/gpu_cuda.cu as nvcc compiles it: device
 * selection, error checks, argument marshalling, mutant builds loaded as libraries, launches by
 * name) is exercised on a machine without an NVIDIA GPU (make check-gpu-standin; src/gpu/README.md, GPU
 * kernels). Linked instead of -lcudart into build/kvb-gpucheck-cuda-standin.
 *
 * What it does with each call gpu_cuda.cu makes:
 *   __cudaRegisterFunction   nvcc's registration of a compiled-in kernel: remembers host stub ->
 *                            kernel name (the device code in the fatbin is not run);
 *   cudaGetDeviceCount       1 when an OpenCL device exists (KVB_CUDA_STANDIN_DEVICES=0 makes it
 *                            cudaErrorNoDevice, to check the "no device" exit code);
 *   cudaMalloc/Free/Memcpy   OpenCL buffers (a device pointer is the cl_mem handle; only whole
 *                            buffers are copied, as gpu_cuda.cu does);
 *   cudaLibraryLoadFromFile  a mutant fatbin built by nvcc: the file must exist and be non-empty;
 *                            its define set is read from the file name (A+B.fatbin -> -DA -DB);
 *   cudaLaunchKernel         the same kernel text (kvb_gpu_kernel_source()) built by OpenCL with
 *                            those defines and -cl-kernel-arg-info, each argument typed from the
 *                            kernel's argument info (global pointer -> buffer, int, float), run
 *                            with the same grid and block and waited for; a failure is returned
 *                            by the next cudaDeviceSynchronize, as CUDA reports kernel errors.
 * So the arithmetic is OpenCL's (PoCL here), not an NVIDIA GPU's: this checks the CUDA backend's
 * host side and the mutant pipeline, never CUDA numerics or timing. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <cuda_runtime_api.h>

#include "gpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the OpenCL device ---- */
static cl_context ctx;
static cl_command_queue queue;
static cl_device_id dev;
static char dev_name[200];
static int ready = -1; /* -1 not tried, 0 no device, 1 ready */

static int cl_ready(void) {
  if (ready >= 0) return ready;
  ready = 0;
  const char *nd = getenv("KVB_CUDA_STANDIN_DEVICES");
  if (nd && atoi(nd) == 0) return 0;
  cl_platform_id plats[8];
  cl_uint np = 0;
  if (clGetPlatformIDs(8, plats, &np) != CL_SUCCESS) return 0;
  for (cl_uint p = 0; p < np && p < 8; p++) {
    cl_uint nd2 = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &dev, &nd2) == CL_SUCCESS && nd2 > 0) {
      cl_int err;
      ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
      if (err != CL_SUCCESS) return 0;
      queue = clCreateCommandQueue(ctx, dev, 0, &err);
      if (err != CL_SUCCESS) return 0;
      clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dev_name, dev_name, NULL);
      return ready = 1;
    }
  }
  return 0;
}

/* programs, one per define set */
static struct {
  char defines[256];
  cl_program prog;
} progs[64];
static int nprogs;

static cl_program program_for(const char *defines) {
  for (int i = 0; i < nprogs; i++)
    if (!strcmp(progs[i].defines, defines)) return progs[i].prog;
  if (nprogs == 64 || strlen(defines) >= sizeof progs[0].defines) return NULL;
  const char *src = kvb_gpu_kernel_source();
  cl_int err;
  cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
  if (err != CL_SUCCESS) return NULL;
  char opts[512];
  snprintf(opts, sizeof opts, "-cl-std=CL1.2 -Werror -cl-kernel-arg-info %s", defines);
  if (clBuildProgram(p, 1, &dev, opts, NULL, NULL) != CL_SUCCESS) {
    char log[2048] = "";
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    fprintf(stderr, "cuda stand-in: kernel build failed (%s):\n%s\n", opts, log);
    clReleaseProgram(p);
    return NULL;
  }
  snprintf(progs[nprogs].defines, sizeof progs[nprogs].defines, "%s", defines);
  progs[nprogs].prog = p;
  return progs[nprogs++].prog;
}

/* ---- registration of the compiled-in kernels (nvcc's host code calls these at start-up) ---- */
static struct {
  const void *stub;
  char name[64];
} funcs[64];
static int nfuncs;
static int fatbin_handle;

void **__cudaRegisterFatBinary(void *fatCubin) {
  (void)fatCubin;
  return (void **)&fatbin_handle;
}
void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName, int thread_limit,
                            uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize) {
  (void)h, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
  if (nfuncs < 64) {
    funcs[nfuncs].stub = hostFun;
    snprintf(funcs[nfuncs].name, sizeof funcs[nfuncs].name, "%s", deviceName);
    nfuncs++;
  }
}
/* used only by the <<<>>> launch stubs, which kvbound never calls */
cudaError_t __cudaPopCallConfiguration(dim3 *g, dim3 *b, size_t *shmem, void *stream) {
  (void)g, (void)b, (void)shmem, (void)stream;
  return cudaErrorNotSupported;
}
cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *fn) {
  (void)k, (void)fn;
  return cudaErrorNotSupported;
}
cudaError_t __cudaLaunchKernel(const void *fn, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
  (void)fn, (void)g, (void)b, (void)args, (void)shmem, (void)s;
  return cudaErrorNotSupported;
}

/* ---- devices ---- */
static cudaError_t sticky = cudaSuccess; /* a kernel failure, returned by the next synchronize */

cudaError_t cudaGetDeviceCount(int *n) {
  *n = 0;
  if (!cl_ready()) return cudaErrorNoDevice;
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return cl_ready() && d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d) {
  if (!cl_ready() || d != 0) return cudaErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "CUDA stand-in on OpenCL %s", dev_name);
  cl_uint cu = 0;
  cl_ulong mem = 0;
  clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
  p->major = 0, p->minor = 0, p->multiProcessorCount = (int)cu, p->totalGlobalMem = (size_t)mem;
  return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return "no error (stand-in)";
  case cudaErrorNoDevice: return "no CUDA-capable device is detected (stand-in: no OpenCL device)";
  case cudaErrorInvalidDevice: return "invalid device ordinal (stand-in)";
  case cudaErrorMemoryAllocation: return "out of memory (stand-in)";
  case cudaErrorInvalidValue: return "invalid argument (stand-in)";
  case cudaErrorSymbolNotFound: return "named symbol not found (stand-in)";
  case cudaErrorFileNotFound: return "file not found (stand-in)";
  case cudaErrorLaunchFailure: return "unspecified launch failure (stand-in: the OpenCL launch failed)";
  default: return "error (stand-in)";
  }
}

/* ---- memory: a device pointer is the cl_mem handle ---- */
static struct {
  cl_mem m;
  size_t bytes;
} bufs[4096];

static int buf_find(const void *p) {
  for (int i = 0; i < 4096; i++)
    if (bufs[i].m && (const void *)bufs[i].m == p) return i;
  return -1;
}
cudaError_t cudaMalloc(void **p, size_t bytes) {
  *p = NULL;
  if (!cl_ready()) return cudaErrorNoDevice;
  for (int i = 0; i < 4096; i++)
    if (!bufs[i].m) {
      cl_int err;
      bufs[i].m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
      if (err != CL_SUCCESS) return bufs[i].m = NULL, cudaErrorMemoryAllocation;
      bufs[i].bytes = bytes;
      *p = (void *)bufs[i].m;
      return cudaSuccess;
    }
  return cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void *p) {
  int i = buf_find(p);
  if (i < 0) return cudaErrorInvalidValue;
  clReleaseMemObject(bufs[i].m);
  bufs[i].m = NULL;
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind) {
  int i = buf_find(kind == cudaMemcpyHostToDevice ? dst : src);
  if (i < 0 || bytes > bufs[i].bytes || (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost))
    return cudaErrorInvalidValue;
  cl_int err = kind == cudaMemcpyHostToDevice
                   ? clEnqueueWriteBuffer(queue, bufs[i].m, CL_TRUE, 0, bytes, src, 0, NULL, NULL)
                   : clEnqueueReadBuffer(queue, bufs[i].m, CL_TRUE, 0, bytes, dst, 0, NULL, NULL);
  return err == CL_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

/* ---- libraries (the mutant fatbins) and kernel handles ---- */
typedef struct {
  char defines[256];
} standin_lib;
typedef struct {
  char name[64];
  char defines[256];
} standin_kernel;
static standin_kernel kernels[256];
static int nkernels;

cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *lib, const char *file, enum cudaJitOption *jo, void **jv,
                                    unsigned int nj, enum cudaLibraryOption *lo, void **lv, unsigned int nl) {
  (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
  FILE *f = fopen(file, "rb");
  if (!f) return cudaErrorFileNotFound;
  int c = fgetc(f);
  fclose(f);
  if (c == EOF) return cudaErrorInvalidValue; /* an empty file is no nvcc build */
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  size_t len = strlen(base);
  if (len < 8 || strcmp(base + len - 7, ".fatbin")) return cudaErrorInvalidValue;
  standin_lib *l = calloc(1, sizeof *l);
  if (!l) return cudaErrorMemoryAllocation;
  size_t o = 0;
  for (size_t i = 0; i < len - 7 && o + 4 < sizeof l->defines; i++) { /* A+B -> -DA -DB */
    if (i == 0 || base[i] == '+') o += (size_t)snprintf(l->defines + o, sizeof l->defines - o, "%s-D", i ? " " : "");
    if (base[i] != '+') l->defines[o++] = base[i];
  }
  l->defines[o] = 0;
  *lib = (cudaLibrary_t)l;
  return cudaSuccess;
}
cudaError_t cudaLibraryUnload(cudaLibrary_t lib) {
  free(lib);
  return cudaSuccess;
}
cudaError_t cudaLibraryGetKernel(cudaKernel_t *k, cudaLibrary_t lib, const char *name) {
  const standin_lib *l = (const standin_lib *)lib;
  if (!l || !cl_ready()) return cudaErrorInvalidValue;
  for (int i = 0; i < nkernels; i++)
    if (!strcmp(kernels[i].name, name) && !strcmp(kernels[i].defines, l->defines)) return *k = (cudaKernel_t)&kernels[i], cudaSuccess;
  cl_program p = program_for(l->defines);
  if (!p) return cudaErrorInvalidValue;
  cl_int err;
  cl_kernel ck = clCreateKernel(p, name, &err);
  if (err != CL_SUCCESS) return cudaErrorSymbolNotFound;
  clReleaseKernel(ck);
  if (nkernels == 256) return cudaErrorMemoryAllocation;
  snprintf(kernels[nkernels].name, sizeof kernels[nkernels].name, "%s", name);
  snprintf(kernels[nkernels].defines, sizeof kernels[nkernels].defines, "%s", l->defines);
  *k = (cudaKernel_t)&kernels[nkernels++];
  return cudaSuccess;
}

/* ---- launches ---- */
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t s) {
  (void)s;
  if (!cl_ready()) return cudaErrorNoDevice;
  const char *name = NULL, *defines = "";
  for (int i = 0; i < nfuncs; i++)
    if (funcs[i].stub == func) name = funcs[i].name;
  uintptr_t fa = (uintptr_t)func, k0 = (uintptr_t)kernels, k1 = (uintptr_t)(kernels + 256);
  if (!name && fa >= k0 && fa < k1) {
    const standin_kernel *k = (const standin_kernel *)func;
    name = k->name, defines = k->defines;
  }
  if (!name) return cudaErrorInvalidDeviceFunction;
  if (shmem || grid.y != 1 || grid.z != 1 || block.y != 1 || block.z != 1 || !grid.x || !block.x)
    return cudaErrorInvalidConfiguration;
  cl_program p = program_for(defines);
  if (!p) return cudaErrorInvalidPtx;
  cl_int err;
  cl_kernel k = clCreateKernel(p, name, &err);
  if (err != CL_SUCCESS) return cudaErrorInvalidDeviceFunction;
  cl_uint na = 0;
  err = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof na, &na, NULL);
  for (cl_uint i = 0; i < na && err == CL_SUCCESS; i++) {
    cl_kernel_arg_address_qualifier aq;
    char type[64] = "";
    err = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL);
    if (err == CL_SUCCESS) err = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type, type, NULL);
    if (err != CL_SUCCESS) break;
    if (aq == CL_KERNEL_ARG_ADDRESS_GLOBAL) {
      void *ptr = *(void **)args[i];
      int b = buf_find(ptr);
      if (b < 0) {
        err = CL_INVALID_MEM_OBJECT;
        break;
      }
      err = clSetKernelArg(k, i, sizeof(cl_mem), &bufs[b].m);
    } else if (!strcmp(type, "int") || !strcmp(type, "float")) {
      err = clSetKernelArg(k, i, 4, args[i]);
    } else {
      err = CL_INVALID_ARG_VALUE; /* a kernel argument type the stand-in does not know */
    }
  }
  if (err != CL_SUCCESS) {
    clReleaseKernel(k);
    return cudaErrorInvalidValue;
  }
  size_t local = block.x, global = (size_t)grid.x * block.x;
  err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clFinish(queue);
  clReleaseKernel(k);
  if (err != CL_SUCCESS) sticky = cudaErrorLaunchFailure;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) {
  cudaError_t e = sticky;
  sticky = cudaSuccess;
  return e;
}

/* gpu_opencl.c — the OpenCL backend of gpu.h, through the ICD loader (libOpenCL). Devices are
 * counted over all platforms in platform order. The program is built from the embedded kernel
 * text at open time; a build failure returns the compiler's log in the error message. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "gpu.h"
#include "kvb_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO_PLATFORM_HINT                                                                         \
  "no OpenCL platform found: install an OpenCL driver (on Debian without a GPU: "               \
  "apt-get install pocl-opencl-icd ocl-icd-opencl-dev; see scripts/install-deps)"

typedef struct {
  kvb_gpu_head head;
  cl_context ctx;
  cl_command_queue q;
  cl_program prog;
  cl_device_id dev;
  char name[256];
} ocl_gpu;

struct kvb_gpu_buf {
  cl_mem mem;
  size_t bytes;
};

/* All devices of all platforms, in order; returns the count (0 on any failure). */
static int ocl_devices(cl_device_id *out, int cap) {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || np == 0) return 0;
  cl_platform_id plats[16];
  if (np > 16) np = 16;
  if (clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS) return 0;
  int total = 0;
  for (cl_uint p = 0; p < np; p++) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS) continue;
    cl_device_id ds[16];
    if (nd > 16) nd = 16;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ds, NULL) != CL_SUCCESS) continue;
    for (cl_uint d = 0; d < nd && total < cap; d++) out[total++] = ds[d];
  }
  return total;
}

static int ocl_count(void) {
  cl_device_id ds[64];
  return ocl_devices(ds, 64);
}

static int ocl_list(char *out, size_t cap) {
  cl_device_id ds[64];
  int n = ocl_devices(ds, 64);
  if (n == 0) return -KVB_ERROR(KVB_ENOTFOUND, NO_PLATFORM_HINT);
  size_t used = 0;
  if (cap) out[0] = 0;
  for (int i = 0; i < n; i++) {
    char name[256] = "", ver[256] = "";
    cl_platform_id pl;
    char pname[256] = "";
    cl_ulong mem = 0;
    cl_uint cu = 0;
    clGetDeviceInfo(ds[i], CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(ds[i], CL_DEVICE_VERSION, sizeof ver, ver, NULL);
    clGetDeviceInfo(ds[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    clGetDeviceInfo(ds[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    if (clGetDeviceInfo(ds[i], CL_DEVICE_PLATFORM, sizeof pl, &pl, NULL) == CL_SUCCESS)
      clGetPlatformInfo(pl, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    if (used < cap)
      used += (size_t)snprintf(out + used, cap - used,
                               "opencl %d: %s | %s | %s | %u compute units | %.1f GiB\n", i,
                               pname, name, ver, cu, (double)mem / 1073741824.0);
  }
  return n;
}

static void ocl_close(kvb_gpu *g0) {
  ocl_gpu *g = (ocl_gpu *)g0;
  if (!g) return;
  if (g->prog) clReleaseProgram(g->prog);
  if (g->q) clReleaseCommandQueue(g->q);
  if (g->ctx) clReleaseContext(g->ctx);
  free(g);
}

static int ocl_open(int index, const char *defines, kvb_gpu **out) {
  *out = NULL;
  cl_device_id ds[64];
  int n = ocl_devices(ds, 64);
  if (n == 0) return KVB_ERROR(KVB_ENOTFOUND, NO_PLATFORM_HINT);
  if (index < 0 || index >= n)
    return KVB_ERROR(KVB_ENOTFOUND, "OpenCL device %d not found (%d devices)", index, n);
  ocl_gpu *g = calloc(1, sizeof *g);
  if (!g) return KVB_ERROR(KVB_ENOMEM, "opencl: out of memory");
  g->head.be = KVB_GPU_OPENCL;
  g->head.vt = kvb_gpu_opencl_vtable();
  g->dev = ds[index];
  clGetDeviceInfo(g->dev, CL_DEVICE_NAME, sizeof g->name, g->name, NULL);
  cl_int err;
  g->ctx = clCreateContext(NULL, 1, &g->dev, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    ocl_close((kvb_gpu *)g);
    return KVB_ERROR(KVB_EFAIL, "opencl: cannot create a context on %s (error %d)", g->name, err);
  }
  g->q = clCreateCommandQueue(g->ctx, g->dev, 0, &err);
  if (err != CL_SUCCESS) {
    ocl_close((kvb_gpu *)g);
    return KVB_ERROR(KVB_EFAIL, "opencl: cannot create a queue (error %d)", err);
  }
  const char *src = kvb_gpu_kernel_source();
  g->prog = clCreateProgramWithSource(g->ctx, 1, &src, NULL, &err);
  if (err != CL_SUCCESS) {
    ocl_close((kvb_gpu *)g);
    return KVB_ERROR(KVB_EFAIL, "opencl: cannot create the program (error %d)", err);
  }
  char opts[1024];
  snprintf(opts, sizeof opts, "-cl-std=CL1.2 -Werror %s", defines ? defines : "");
  err = clBuildProgram(g->prog, 1, &g->dev, opts, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(g->prog, g->dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    ocl_close((kvb_gpu *)g);
    return KVB_ERROR(KVB_EFAIL, "opencl: kernel build failed (error %d, options \"%s\"):\n%s",
                     err, opts, log);
  }
  *out = (kvb_gpu *)g;
  return KVB_OK;
}

static const char *ocl_name(const kvb_gpu *g) { return ((const ocl_gpu *)g)->name; }

static int ocl_alloc(kvb_gpu *g0, size_t bytes, kvb_gpu_buf **out) {
  ocl_gpu *g = (ocl_gpu *)g0;
  *out = NULL;
  kvb_gpu_buf *b = calloc(1, sizeof *b);
  if (!b) return KVB_ERROR(KVB_ENOMEM, "opencl: out of host memory");
  cl_int err;
  b->mem = clCreateBuffer(g->ctx, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
  if (err != CL_SUCCESS) {
    free(b);
    return KVB_ERROR(KVB_ENOMEM, "opencl: the device refused %zu bytes (error %d)", bytes, err);
  }
  b->bytes = bytes;
  *out = b;
  return KVB_OK;
}

static void ocl_free(kvb_gpu *g, kvb_gpu_buf *b) {
  (void)g;
  if (!b) return;
  clReleaseMemObject(b->mem);
  free(b);
}

static int ocl_write(kvb_gpu *g0, kvb_gpu_buf *b, const void *src, size_t bytes) {
  ocl_gpu *g = (ocl_gpu *)g0;
  cl_int err = clEnqueueWriteBuffer(g->q, b->mem, CL_TRUE, 0, bytes, src, 0, NULL, NULL);
  /* an allocation is lazy on many drivers: the first write is where memory runs out */
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES)
    return KVB_ERROR(KVB_ENOMEM, "opencl: out of device memory writing %zu bytes", bytes);
  if (err != CL_SUCCESS) return KVB_ERROR(KVB_EFAIL, "opencl: write failed (error %d)", err);
  return KVB_OK;
}

static int ocl_read(kvb_gpu *g0, const kvb_gpu_buf *b, void *dst, size_t bytes) {
  ocl_gpu *g = (ocl_gpu *)g0;
  cl_int err = clEnqueueReadBuffer(g->q, b->mem, CL_TRUE, 0, bytes, dst, 0, NULL, NULL);
  if (err != CL_SUCCESS) return KVB_ERROR(KVB_EFAIL, "opencl: read failed (error %d)", err);
  return KVB_OK;
}

static int ocl_launch(kvb_gpu *g0, const char *name, size_t groups, size_t local, size_t nargs,
                      const kvb_gpu_arg *args) {
  ocl_gpu *g = (ocl_gpu *)g0;
  cl_int err;
  cl_kernel k = clCreateKernel(g->prog, name, &err);
  if (err != CL_SUCCESS) return KVB_ERROR(KVB_ENOTFOUND, "opencl: no kernel %s (error %d)", name, err);
  for (size_t i = 0; i < nargs && err == CL_SUCCESS; i++) {
    if (args[i].kind == KVB_GPU_ARG_BUF) err = clSetKernelArg(k, (cl_uint)i, sizeof(cl_mem), &args[i].buf->mem);
    else if (args[i].kind == KVB_GPU_ARG_INT) err = clSetKernelArg(k, (cl_uint)i, sizeof(cl_int), &args[i].i);
    else err = clSetKernelArg(k, (cl_uint)i, sizeof(cl_float), &args[i].f);
  }
  if (err != CL_SUCCESS) {
    clReleaseKernel(k);
    return KVB_ERROR(KVB_EFAIL, "opencl: %s: bad argument (error %d)", name, err);
  }
  size_t gsz = groups * local;
  err = clEnqueueNDRangeKernel(g->q, k, 1, NULL, &gsz, &local, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clFinish(g->q);
  clReleaseKernel(k);
  if (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES)
    return KVB_ERROR(KVB_ENOMEM, "opencl: %s: out of device resources (error %d)", name, err);
  if (err != CL_SUCCESS) return KVB_ERROR(KVB_EFAIL, "opencl: %s: launch failed (error %d)", name, err);
  return KVB_OK;
}

static const kvb_gpu_vtable ocl_vt = {ocl_count, ocl_list,  ocl_open,  ocl_close, ocl_name,
                                      ocl_alloc, ocl_free,  ocl_write, ocl_read,  ocl_launch};

const kvb_gpu_vtable *kvb_gpu_opencl_vtable(void) { return &ocl_vt; }

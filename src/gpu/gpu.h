/* gpu.h — kvbound's device backends: a small interface (devices, buffers, program build, launch,
 * errors) with an OpenCL implementation (gpu_opencl.c, through the ICD loader; on machines without
 * a GPU PoCL runs it on the CPU) and a CUDA one (gpu_cuda.cu, runtime API, built when nvcc is
 * found). Both run the same kernel text: k_prelude.cl + k_*.cl, embedded in the library at build
 * time (kvb_gpu_kernel_source(); no file is read at run time).
 *
 * Errors follow kvb_error.h: a status and a message (kvb_strerror_last()); a missing platform names
 * the package to install, a build failure carries the compiler log, an allocation the device
 * refuses is KVB_ENOMEM. */
#ifndef KVB_GPU_H
#define KVB_GPU_H

#include <stddef.h>
#include <stdint.h>

/* Must equal the defines of k_prelude.cl (gpu_ops.c passes them to the compiler, which fails the
 * build on a mismatch). */
#define KVB_GPU_WG 64
#define KVB_GPU_DMAX 256
#define KVB_GPU_CHUNK_MAX 256
#define KVB_GPU_BMAX 256

typedef struct kvb_gpu kvb_gpu;         /* one device with the kernels built for it */
typedef struct kvb_gpu_buf kvb_gpu_buf; /* device memory */

typedef enum { KVB_GPU_OPENCL = 1, KVB_GPU_CUDA = 2 } kvb_gpu_backend;

typedef struct {
  enum { KVB_GPU_ARG_BUF, KVB_GPU_ARG_INT, KVB_GPU_ARG_FLOAT } kind;
  kvb_gpu_buf *buf;
  int i;
  float f;
} kvb_gpu_arg;

/* The embedded kernel text (prelude + every kernel), NUL-terminated. */
const char *kvb_gpu_kernel_source(void);

/* Writes a listing of the backend's platforms and devices (one line each) into out[0..cap).
 * Returns the number of devices, or a negative status with the message set. */
int kvb_gpu_list(kvb_gpu_backend be, char *out, size_t cap);
/* Number of devices of the backend (0 when none or no platform; never an error). */
int kvb_gpu_count(kvb_gpu_backend be);

/* Opens device `index` (counting over all platforms) and builds the kernels with the extra
 * compiler options `defines` (e.g. "-DKVB_MUT_NO_BARRIER"; NULL for none). */
int kvb_gpu_open(kvb_gpu_backend be, int index, const char *defines, kvb_gpu **out);
void kvb_gpu_close(kvb_gpu *g);
const char *kvb_gpu_device_name(const kvb_gpu *g);
kvb_gpu_backend kvb_gpu_backend_of(const kvb_gpu *g);

int kvb_gpu_alloc(kvb_gpu *g, size_t bytes, kvb_gpu_buf **out);
void kvb_gpu_free(kvb_gpu *g, kvb_gpu_buf *b);
int kvb_gpu_write(kvb_gpu *g, kvb_gpu_buf *b, const void *src, size_t bytes);
int kvb_gpu_read(kvb_gpu *g, const kvb_gpu_buf *b, void *dst, size_t bytes);
/* Bytes moved by kvb_gpu_write (to the device) and kvb_gpu_read (from it) since the process
 * started, over all devices (either pointer may be NULL): the device-resident state of
 * gpu_resident.h is checked against these. */
void kvb_gpu_transfer_counts(uint64_t *to_device, uint64_t *from_device);
/* Launches kernel `name` on `groups` work-groups of `local` work-items and waits for it. */
int kvb_gpu_launch(kvb_gpu *g, const char *name, size_t groups, size_t local, size_t nargs,
                   const kvb_gpu_arg *args);

/* ---- backend vtable (gpu_ops.c dispatches; each backend fills one) ---- */
typedef struct {
  int (*count)(void);
  int (*list)(char *out, size_t cap);
  int (*open)(int index, const char *defines, kvb_gpu **out);
  void (*close)(kvb_gpu *g);
  const char *(*name)(const kvb_gpu *g);
  int (*alloc)(kvb_gpu *g, size_t bytes, kvb_gpu_buf **out);
  void (*free_buf)(kvb_gpu *g, kvb_gpu_buf *b);
  int (*write)(kvb_gpu *g, kvb_gpu_buf *b, const void *src, size_t bytes);
  int (*read)(kvb_gpu *g, const kvb_gpu_buf *b, void *dst, size_t bytes);
  int (*launch)(kvb_gpu *g, const char *name, size_t groups, size_t local, size_t nargs,
                const kvb_gpu_arg *args);
} kvb_gpu_vtable;

/* The backends' tables; NULL when the backend is not compiled in. */
const kvb_gpu_vtable *kvb_gpu_opencl_vtable(void);
const kvb_gpu_vtable *kvb_gpu_cuda_vtable(void);

/* Every kvb_gpu starts with this header (the backend's own struct follows). */
typedef struct {
  const kvb_gpu_vtable *vt;
  kvb_gpu_backend be;
} kvb_gpu_head;

#endif

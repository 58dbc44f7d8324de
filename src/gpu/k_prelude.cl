/* k_prelude.cl — the only text that differs between CUDA and OpenCL. Every kernel of kvbound
 * (k_*.cl) is written once against these macros, in the common subset of CUDA C++ and OpenCL C
 * 1.2. The OpenCL host (gpu_opencl.c) compiles prelude + kernels at run time; nvcc compiles the
 * same concatenated text (build/gpu/kvb_kernels.cu) as CUDA. Algorithm code never tests
 * __CUDACC__; only this file does.
 *
 *   KVB_KERNEL          a kernel entry point (extern "C" so CUDA names match OpenCL's)
 *   KVB_DEVICE          a helper function callable from kernels
 *   KVB_GLOBAL          qualifier of a pointer to device (global) memory
 *   KVB_SHARED          declares a work-group-local array (kernel scope only)
 *   KVB_GROUP_ID()      the work-group (block) index, 1-D grids only
 *   KVB_LOCAL_ID()      the work-item (thread) index in its group
 *   KVB_LOCAL_SIZE()    work-items per group
 *   KVB_BARRIER()       work-group barrier with a local-memory fence
 *   KVB_BARRIER_GLOBAL() the same with a global-memory fence too (work-items of one group
 *                       exchanging data through global memory: SubGen's state)
 *   KVB_LOCAL           qualifier of a pointer parameter to work-group-local memory
 *   kvb_half, KVB_LOAD_HALF(p, i)   IEEE binary16 storage, read as float (no half arithmetic)
 *   kvb_idx             a 64-bit signed index: every offset into a buffer whose size is a product
 *                       of shape parameters (n·d·heads·queries can pass 2^31) is computed in it
 *   KVB_EXP, KVB_LOG, KVB_FMAX, KVB_FMIN, KVB_NEG_INF   single-precision math
 *   KVB_NUM_GROUPS()    work-groups of the launch
 *   kvb_float4, KVB_LOAD_F4(p, i), KVB_STORE_F4(p, i, v)   16-byte vector access to elements
 *                       4i..4i+3 of a float array (p + 4i 16-byte aligned)
 *   KVB_LOAD_H4(p, i)   elements 4i..4i+3 of a binary16 array as a kvb_float4 (one 8-byte load)
 *   KVB_UNROLL          before a loop of constant trip count: unroll it fully (so an array it
 *                       indexes stays in registers; nothing on the host emulation)
 */
#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define KVB_KERNEL extern "C" __global__ void
#define KVB_DEVICE static __device__ __forceinline__
#define KVB_GLOBAL
#define KVB_SHARED __shared__
#define KVB_GROUP_ID() ((int)blockIdx.x)
#define KVB_LOCAL_ID() ((int)threadIdx.x)
#define KVB_LOCAL_SIZE() ((int)blockDim.x)
#define KVB_BARRIER() __syncthreads()
#define KVB_BARRIER_GLOBAL() __syncthreads()
#define KVB_LOCAL
#define KVB_EXP(x) expf(x)
#define KVB_LOG(x) logf(x)
#define KVB_FMAX(a, b) fmaxf((a), (b))
#define KVB_FMIN(a, b) fminf((a), (b))
#define KVB_NEG_INF (-__int_as_float(0x7f800000))
typedef __half kvb_half;
typedef long long kvb_idx;
#define KVB_LOAD_HALF(p, i) __half2float((p)[(i)])
#define KVB_NUM_GROUPS() ((int)gridDim.x)
typedef float4 kvb_float4;
#define KVB_LOAD_F4(p, i) (reinterpret_cast<const float4 *>(p)[(i)])
#define KVB_STORE_F4(p, i, v) (reinterpret_cast<float4 *>(p)[(i)] = (v))
static __device__ __forceinline__ float4 kvb_load_h4(const __half *p, long long i) {
  uint2 u = reinterpret_cast<const uint2 *>(p)[i];
  __half2 lo, hi;
  memcpy(&lo, &u.x, 4);
  memcpy(&hi, &u.y, 4);
  float2 a = __half22float2(lo), b = __half22float2(hi);
  return make_float4(a.x, a.y, b.x, b.y);
}
#define KVB_LOAD_H4(p, i) kvb_load_h4((p), (i))
#define KVB_UNROLL _Pragma("unroll")
#elif defined(KVB_HOST_EMU)
/* The kernels compiled as C on the host, the group id and the launch's group count set by the
 * caller, its work-items either one (kvb_host_wg = 1: no barrier is needed, every loop over lid
 * steps by 1, every tree reduction has no level) or kvb_host_wg POSIX threads of one group, each
 * with its own kvb_host_lid, KVB_BARRIER a pthread barrier and KVB_SHARED memory `static` (one
 * group at a time): tests/test_gpu_index64.c runs single groups at shapes whose offsets pass 2^31,
 * under UBSan's signed-overflow check. Not a backend. */
#include <math.h>
#include <stdint.h>
extern int kvb_host_group, kvb_host_groups, kvb_host_wg;
extern _Thread_local int kvb_host_lid;
float kvb_host_half(uint16_t h);
void kvb_host_barrier(void);
#define KVB_KERNEL void
#define KVB_DEVICE static inline
#define KVB_GLOBAL
#define KVB_SHARED static
#define KVB_GROUP_ID() kvb_host_group
#define KVB_LOCAL_ID() kvb_host_lid
#define KVB_LOCAL_SIZE() kvb_host_wg
#define KVB_BARRIER() kvb_host_barrier()
#define KVB_BARRIER_GLOBAL() kvb_host_barrier()
#define KVB_LOCAL
#define KVB_EXP(x) expf(x)
#define KVB_LOG(x) logf(x)
#define KVB_FMAX(a, b) fmaxf((a), (b))
#define KVB_FMIN(a, b) fminf((a), (b))
#define KVB_NEG_INF (-INFINITY)
typedef uint16_t kvb_half;
typedef int64_t kvb_idx;
#define KVB_LOAD_HALF(p, i) kvb_host_half((p)[(i)])
#define KVB_NUM_GROUPS() kvb_host_groups
typedef struct {
  float x, y, z, w;
} kvb_float4;
/* element 4i..4i+3; the index arithmetic 4i is the caller's kvb_idx (as vload4's offset) */
static inline kvb_float4 kvb_host_load_f4(const float *p, kvb_idx i) {
  kvb_float4 v = {p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]};
  return v;
}
static inline void kvb_host_store_f4(float *p, kvb_idx i, kvb_float4 v) {
  p[4 * i] = v.x, p[4 * i + 1] = v.y, p[4 * i + 2] = v.z, p[4 * i + 3] = v.w;
}
static inline kvb_float4 kvb_host_load_h4(const kvb_half *p, kvb_idx i) {
  kvb_float4 v = {kvb_host_half(p[4 * i]), kvb_host_half(p[4 * i + 1]), kvb_host_half(p[4 * i + 2]),
                  kvb_host_half(p[4 * i + 3])};
  return v;
}
#define KVB_LOAD_F4(p, i) kvb_host_load_f4((p), (i))
#define KVB_STORE_F4(p, i, v) kvb_host_store_f4((p), (i), (v))
#define KVB_LOAD_H4(p, i) kvb_host_load_h4((p), (i))
#define KVB_UNROLL
#else
#define KVB_KERNEL __kernel void
/* always inlined: a helper LLVM leaves out of line (kvb_coop_load once its loads were unrolled, too
 * big for the inliner's threshold) gets the kernel's __local array it is always passed folded
 * into its body as the module-level global (interprocedural constant propagation), and PoCL,
 * which gives each work-group its own copy of a kernel's __local arrays by rewriting the
 * kernel's uses only, leaves the helper writing that global: the kernel read its tile back as
 * zeros (optimized builds only; Oclgrind, and -cl-opt-disable, keep the pointer argument) */
#define KVB_DEVICE static inline __attribute__((always_inline))
#define KVB_GLOBAL __global
#define KVB_SHARED __local
#define KVB_GROUP_ID() ((int)get_group_id(0))
#define KVB_LOCAL_ID() ((int)get_local_id(0))
#define KVB_LOCAL_SIZE() ((int)get_local_size(0))
#define KVB_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
#define KVB_BARRIER_GLOBAL() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define KVB_LOCAL __local
#define KVB_EXP(x) exp(x)
#define KVB_LOG(x) log(x)
#define KVB_FMAX(a, b) fmax((a), (b))
#define KVB_FMIN(a, b) fmin((a), (b))
#define KVB_NEG_INF (-INFINITY)
typedef half kvb_half;
typedef long kvb_idx;
#define KVB_LOAD_HALF(p, i) vload_half((i), (p))
#define KVB_NUM_GROUPS() ((int)get_num_groups(0))
typedef float4 kvb_float4;
#define KVB_LOAD_F4(p, i) vload4((i), (p))
#define KVB_STORE_F4(p, i, v) vstore4((v), (i), (p))
#define KVB_LOAD_H4(p, i) vload_half4((i), (p))
#define KVB_UNROLL _Pragma("unroll")
#endif

/* Sizes shared with the host (gpu.h repeats them; gpu_ops.c checks they agree at build time of
 * the program through the -D options it passes). Work-groups have KVB_WG work-items, a power of
 * two (the tree reductions halve it). */
#define KVB_WG 64
#define KVB_DMAX 256       /* largest head dimension (d_key and d_value) */
#define KVB_CHUNK_MAX 256  /* largest split of the decode kernel (tokens per work-group) */
#define KVB_BMAX 256       /* largest BalanceKV block */

/* gpu_methods.h — methods whose compression and query run on a device (gpu.h), for a spec's
 * `method "TYPE" { backend = "opencl", ... }` (src/gpu/README.md, GPU kernels). Each is the CPU method of
 * the same name and parameters, with the same draws from cfg.rng in the same order, computed in
 * float32 on the device: its answers equal the CPU's within the float32 error of the kernels
 * (kvb-gpucheck's analysis), and its discrete choices (the kept tokens of balancekv_block) equal
 * the CPU's except at a float tie (a walk probability within float rounding of its uniform).
 *   exact            decode attention (k_attention.cl, split-K)
 *   balancekv_block  compression (k_bkvb.cl walk + halving) and weighted query (kvb_wquery)
 *   uniform_sample   the CPU's sampler (same draws), the gather and the weighted decode on the device
 * exact, balancekv_block and uniform_sample keep the stream in a device KV cache (gpu_resident.h)
 * when d_key and d_value are multiples of 4: only new tokens cross to the device, uniform_sample's
 * sample is gathered there and stays there (positions and log-weights up per compression, the
 * query and the answer per query); other dimensions use gpu_ops.h's upload-per-call path.
 * The device is device 0 of the backend, opened once per process (its kernels built once) and
 * shared by every method instance; calls are serialized. */
#ifndef KVB_GPU_METHODS_H
#define KVB_GPU_METHODS_H

#include "method.h"
#include "params.h"

/* Checks a backend name for method type `type` without touching a device: KVB_OK for "cpu" (any
 * type) and for a compiled-in device backend ("opencl"; "cuda" when built with nvcc) of a type
 * listed above; KVB_EINVAL for an unknown backend name, KVB_ENOTFOUND otherwise (message set). */
int kvb_gpu_method_check(const char *type, const char *backend);

/* Creates method `type` on `backend` (not "cpu": use kvb_method_alloc). Errors: those of
 * kvb_gpu_method_check, of kvb_gpu_open (no platform: the package to install), and of the
 * parameters (the CPU type's table). */
int kvb_gpu_method_alloc(const char *type, const char *backend, const kvb_method_config *cfg,
                         const kvb_params *p, kvb_method **out);

#endif

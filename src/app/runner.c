/* runner.c — the experiment runner's model (runner.h): the experiment and its sweep points, the
 * measure columns, and method backends (runner_backend.h). It calls no other runner file; the
 * run itself is runner_run.c's (the files and what each offers: runner.h, "The runner's files"). */
#include "runner_backend.h"

#include "probe.h"
#ifdef KVB_WITH_OPENCL
#include "gpu.h"
#include "gpu_methods.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- columns ---- */

static const char *const col_names[KVB_RUN_NCOLS] = {
    "rel_error", "err_abs", "attn_norm", "softmax_norm", "v_op", "v_f", "ratio_op", "ratio_f",
    "mem_bytes", "mem_vectors", "mem_bytes_fp16", "distances", "exps", "coins", "dots", "fails", "update_s",
    "query_s", "disc", "disc_inf", "disc_bound", "walk_fails", "radius", "radius_rel",
    "decode_acc", "u_size"};
static const unsigned col_groups[KVB_RUN_NCOLS] = {
    KVB_MEASURE_ERROR,  KVB_MEASURE_ERROR,  KVB_MEASURE_ERROR,  KVB_MEASURE_BOUND,
    KVB_MEASURE_BOUND,  KVB_MEASURE_BOUND,  KVB_MEASURE_BOUND,  KVB_MEASURE_BOUND,
    KVB_MEASURE_MEMORY, KVB_MEASURE_MEMORY, KVB_MEASURE_MEMORY, KVB_MEASURE_WORK,   KVB_MEASURE_WORK,
    KVB_MEASURE_WORK,   KVB_MEASURE_WORK,   KVB_MEASURE_WORK,   KVB_MEASURE_TIME,
    KVB_MEASURE_TIME,   KVB_MEASURE_PROBE,  KVB_MEASURE_PROBE,  KVB_MEASURE_PROBE,
    KVB_MEASURE_PROBE,  KVB_MEASURE_PROBE,  KVB_MEASURE_PROBE,  KVB_MEASURE_DECODE,
    KVB_MEASURE_DECODE};

const char *kvb_run_column_name(size_t i) { return i < KVB_RUN_NCOLS ? col_names[i] : NULL; }
unsigned kvb_run_column_group(size_t i) { return i < KVB_RUN_NCOLS ? col_groups[i] : 0; }
int kvb_run_column_find(const char *name) {
  for (size_t i = 0; name && i < KVB_RUN_NCOLS; i++)
    if (strcmp(col_names[i], name) == 0) return (int)i;
  return -1;
}

/* ---- experiment ---- */

void kvb_experiment_init(kvb_experiment *e) {
  memset(e, 0, sizeof *e);
  e->trials = 1;
  e->seed = 1;
  e->scale = 1;
  e->measures = KVB_MEASURE_DEFAULT;
  e->fail_above = NAN;
}

void kvb_experiment_free(kvb_experiment *e) {
  if (!e) return;
  free(e->spec_text);
  for (size_t i = 0; i < e->nsweeps; i++) free(e->sweeps[i].vals);
  memset(e, 0, sizeof *e);
}

size_t kvb_experiment_points(const kvb_experiment *e) {
  size_t p = 0;
  return kvb_experiment_units(e, &p, NULL) == 0 || p ? p : SIZE_MAX;
}

/* The first sweep varies slowest, as in nested loops written in declaration order; a zipped
 * sweep takes the index of the sweep it moves with. */
double kvb_experiment_sweep_value(const kvb_experiment *e, size_t s, size_t point) {
  size_t lead = e->sweeps[s].zip_with >= 0 ? (size_t)e->sweeps[s].zip_with : s, stride = 1;
  for (size_t i = e->nsweeps; i-- > lead + 1;)
    if (e->sweeps[i].zip_with < 0) stride *= e->sweeps[i].nvals;
  return e->sweeps[s].vals[(point / stride) % e->sweeps[lead].nvals];
}

const kvb_param_spec *kvb_experiment_item_spec(const kvb_experiment *e, const kvb_run_item *it) {
  int is_stream = it >= e->streams && it < e->streams + KVB_RUN_MAX_STREAMS;
  if (is_stream) {
    const kvb_stream_type *t = kvb_stream_lookup(it->type);
    return t ? t->params : NULL;
  }
  if (it->probe) {
    const kvb_probe_type *t = kvb_probe_lookup(it->type);
    return t ? t->params : NULL;
  }
  const kvb_method_type *t = kvb_method_lookup(it->type);
  return t ? t->params : NULL;
}

static int spec_has(const kvb_param_spec *sp, const char *name) {
  for (; sp && sp->name; sp++)
    if (strcmp(sp->name, name) == 0) return 1;
  return 0;
}

void kvb_experiment_item_params(const kvb_experiment *e, const kvb_run_item *it, size_t point,
                                kvb_params *out) {
  *out = it->params;
  const kvb_param_spec *sp = kvb_experiment_item_spec(e, it);
  for (size_t s = 0; s < e->nsweeps; s++)
    if (spec_has(sp, e->sweeps[s].param))
      kvb_params_set(out, e->sweeps[s].param, kvb_experiment_sweep_value(e, s, point));
}

/* A method on its spec's backend (src/gpu/README.md, GPU kernels): "cpu" (the default) or a device. */
#define NO_OPENCL_BUILD                                                                          \
  "this kvbound was built without OpenCL (install the Debian packages ocl-icd-opencl-dev "        \
  "opencl-c-headers pocl-opencl-icd, see scripts/install-deps, and rebuild)"
int kvb_run_backend_check(const char *type, const char *backend) {
  if (!backend[0] || !strcmp(backend, "cpu")) return KVB_OK;
#ifdef KVB_WITH_OPENCL
  return kvb_gpu_method_check(type, backend);
#else
  (void)type;
  if (strcmp(backend, "opencl") && strcmp(backend, "cuda"))
    return KVB_ERROR(KVB_EINVAL, "backend \"%s\" is not one of \"cpu\", \"opencl\", \"cuda\"", backend);
  return KVB_ERROR(KVB_ENOTFOUND, "backend \"%s\": %s", backend, NO_OPENCL_BUILD);
#endif
}

int runner_method_alloc(const kvb_run_item *it, const kvb_method_config *cfg, const kvb_params *p,
                        kvb_method **m) {
  if (!it->backend[0] || !strcmp(it->backend, "cpu")) return kvb_method_alloc(it->type, cfg, p, m);
  *m = NULL;
#ifdef KVB_WITH_OPENCL
  return kvb_gpu_method_alloc(it->type, it->backend, cfg, p, m);
#else
  return kvb_run_backend_check(it->type, it->backend);
#endif
}

int kvb_run_devices(void) {
#ifdef KVB_WITH_OPENCL
  char buf[8192];
  int n = kvb_gpu_list(KVB_GPU_OPENCL, buf, sizeof buf), total = n > 0 ? n : 0;
  if (n < 0) fprintf(stderr, "opencl: %s\n", kvb_strerror_last());
  else printf("%s", buf);
  n = kvb_gpu_list(KVB_GPU_CUDA, buf, sizeof buf);
  if (n < 0) printf("cuda: %s\n", kvb_strerror_last());
  else printf("%s", buf), total += n;
  return total > 0 ? 0 : 1;
#else
  fprintf(stderr, "kvbound devices: %s\n", NO_OPENCL_BUILD);
  return 1;
#endif
}

int kvb_experiment_units(const kvb_experiment *e, size_t *points, size_t *units) {
  size_t p = 1;
  for (size_t i = 0; i < e->nsweeps; i++)
    if (e->sweeps[i].zip_with < 0) {
      if (e->sweeps[i].nvals && p > SIZE_MAX / e->sweeps[i].nvals) return -1;
      p *= e->sweeps[i].nvals;
    }
  if (points) *points = p;
  if (e->trials && p > SIZE_MAX / e->trials) return -1;
  if (units) *units = p * e->trials;
  return 0;
}

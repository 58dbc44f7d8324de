/* pyramidkv.c — PyramidKV: Cai, Zhang, Gao, Liu, Liu, Lu, Xiong, Dong, Chang, Hu, Xiao,
 * "PyramidKV: Dynamic KV Cache Compression based on Pyramidal Information Funneling", arXiv
 * 2406.02069, §3. SnapKV's selection (an observation window of the last w queries votes,
 * pooled, top-k per head plus the window; §3.3) with a budget that shrinks with depth (§3.2):
 * with an average of c = B − w selected tokens per layer, the top layer L−1 gets c/β, the
 * bottom 2c − c/β, the layers between an arithmetic sequence (β = 20 in the paper). A baseline
 * of 003 §4.2 (LongBench, via MInference's implementation).
 *
 * Reading. The pyramid is meaningful inside a model; on one stream this method is SnapKV
 * (snapkv.c, with all its streaming conventions) at the budget its `layer` of `layers` would
 * get: kvb_pyramidkv_layer_budget, with the integer divisions and the clamp of the authors' code
 * (when the bottom budget exceeds the prefix n − w it becomes n − w and the top is raised to
 * keep the average c). Averaged over the layers the memory is B (up to the integer division of
 * the step). kvpress's PyramidKVPress derives the budget from a compression ratio and falls back
 * to SnapKV's budget when the pyramid does not fit; kvbound follows the paper and its authors'
 * code so that a layer's budget is the paper's.
 *
 * Memory: 2·min(n, B_layer) stored vectors; bytes the kept keys and values (raw stream and
 * window queries not counted, as snapkv). Parameters: budget B, window 1 ≤ w ≤ B, kernel odd,
 * pooling avg|max, layers ≥ 1, 0 ≤ layer < layers, beta ≥ 1, prompt (compress once: snapkv.c). */
#include "kvb_error.h"
#include "method.h"
#include "snap_core.h"

#include <math.h>

static const kvb_param_spec pyr_params[] = {
    {"budget", KVB_PARAM_INT, NAN, 1, 1e9, NULL,
     "B: average tokens kept per layer, window included (2406.02069 §3.2 total/L)"},
    {"window", KVB_PARAM_INT, 32, 1, 1e9, NULL, "w: observation window (SnapKV's), ≤ B"},
    {"kernel", KVB_PARAM_INT, 5, 1, 1e6, NULL, "pooling kernel size, odd"},
    {"pooling", KVB_PARAM_STRING, 0, 0, 0, "avg", "avg | max"},
    {"layers", KVB_PARAM_INT, 32, 1, 1e6, NULL, "L: the model's layers (2406.02069 §3.2)"},
    {"layer", KVB_PARAM_INT, 0, 0, 1e6, NULL, "this stream's layer, 0 = bottom (largest budget)"},
    {"beta", KVB_PARAM_REAL, 20, 1, 1e9, NULL, "β: top layer budget c/β (2406.02069 §3.2: 20)"},
    {"prompt", KVB_PARAM_INT, 0, 0, 1e12, NULL,
     "P > 0: compress once, at the first selection with >= P tokens; later tokens are appended"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec pyr_mutants[] = {
    {"layer_reversed", "budget grows with depth: layer l gets layer L−1−l's budget"},
    {"no_pooling", "ranks the raw votes (kernel 1)"},
    {NULL, NULL}};

static int pyr_init(kvb_method *m, const kvb_params *p) {
  size_t layers = (size_t)kvb_params_get(p, pyr_params, "layers");
  size_t layer = (size_t)kvb_params_get(p, pyr_params, "layer");
  if (layer >= layers)
    return KVB_ERROR(KVB_EINVAL, "pyramidkv: layer = %zu must be below layers = %zu", layer,
                     layers);
  int mp = 0, rc = kvb_snap_pooling(kvb_params_get_str(p, pyr_params, "pooling"), &mp,
                                    "pyramidkv");
  if (rc) return rc;
  rc = kvb_snap_init(m, (size_t)kvb_params_get(p, pyr_params, "budget"),
                     (size_t)kvb_params_get(p, pyr_params, "window"),
                     (size_t)kvb_params_get(p, pyr_params, "kernel"), mp, layers, layer,
                     kvb_params_get(p, pyr_params, "beta"), "pyramidkv");
  if (!rc) ((kvb_snap_state *)m->state)->prompt = (size_t)kvb_params_get(p, pyr_params, "prompt");
  return rc;
}

const kvb_method_type kvb_method_pyramidkv = {
    "pyramidkv",
    "PyramidKV: SnapKV's selection with the budget of layer `layer` of a pyramid over `layers`",
    "Cai et al., PyramidKV: Dynamic KV Cache Compression based on Pyramidal Information "
    "Funneling, arXiv 2406.02069 §3",
    pyr_params, pyr_mutants, 0, pyr_init, kvb_snap_update, kvb_snap_query, kvb_snap_memory,
    kvb_snap_free, .in_model = KVB_IN_MODEL_ONCE_AT_PROMPT | KVB_IN_MODEL_PER_LAYER,
    .observe = KVB_OBSERVE_WINDOW};

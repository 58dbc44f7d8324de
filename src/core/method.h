/* method.h — the one interface every streaming-attention algorithm implements.
 *
 * A method is created by name from a kvb_method_config (key and value dimension,
 * score scale, generator) and named parameters; it is fed the stream with
 * kvb_method_update(k, v) and asked kvb_method_query(q) -> z ≈ Attn(q, K, V) =
 * softmax(scale · K q)ᵀ V. scale is 1 in 000/001 and 1/√d in 003/004. Exact
 * attention is a method too, so the props, the runner, the lower-bound decoder
 * and the plots treat every algorithm alike (src/README.md, The flow of data).
 *
 * Mutants (mutant.h): a type lists its deliberately wrong variants (e.g. a reservoir
 * probability off by a constant) in a kvb_mutant_spec table; the string parameter
 * "mutant=NAME" selects one, kvb_method_alloc_type validates the name and the type's code
 * asks kvb_method_is_mutant(m, "NAME"). They exist only so the property checks can prove
 * they are able to fail; never use them for anything else.
 *
 * All entry points validate their arguments (NULL, dimensions, NaN/Inf) and on
 * error return a KVB_* status with a message, leaving the method unchanged.
 * kvb_method_query never returns KVB_OK with a NaN or Inf in z: an answer that left double
 * range (finite inputs with scores or value sums beyond 1.8e308) is KVB_ERANGE (z then
 * unspecified). */
#ifndef KVB_METHOD_H
#define KVB_METHOD_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "mutant.h"
#include "params.h"

/* Memory is what the algorithm, as its paper states it, must keep between tokens: its stored
 * vectors plus per-item bookkeeping (counts, weights, sums). It is NOT what this reference
 * happens to allocate: the block-parallel methods (balancekv_block, uniform_sample,
 * recent_kcenter) keep the raw stream so they can recompress from scratch and be checked
 * against an offline recomputation; that store is not counted (it is made with
 * kvb_kv_append_reference, kv_store.h), so bytes and vectors shrink together with the compression
 * rate. The report is not taken on trust: kvb-props --method measures the heap a method holds
 * (heap_meter.h; the reference stores of built-ins set apart) and fails one holding more than it
 * reports (method.contract.memory). For every method that keeps vectors exactly bytes >=
 * 8·(d_key or d_value)·(the vectors it counts), i.e. both columns tell the same story: a kept
 * token costs 8·(d_key + d_value) bytes (float64, as kv_store.h and the token caches hold it).
 * The quantized caches (kivi, q8_0, q4_0; quant_cache.h) are the exception by design: they keep
 * every token's key and value (vectors = 2n) in fewer bytes, counted as stored (packed codes,
 * scales, zero points, the full-precision residual). */
typedef struct {
  size_t bytes;   /* bytes the algorithm must keep: stored vectors plus per-item bookkeeping */
  size_t vectors; /* stored d-vectors (a key and a value each count one) */
} kvb_memory;

/* Work counters, incremented by the algorithms themselves (Theorem 1's runtime claim is
 * checked on these, never on time). */
typedef struct {
  uint64_t distances;    /* key-to-representative distance evaluations */
  uint64_t exps;         /* exponentials evaluated */
  uint64_t coins;        /* random draws */
  uint64_t dots;         /* inner products of d-vectors (beyond distances) */
  uint64_t fails;        /* FAIL events reported by a randomized subroutine (003 Alg. 3) */
} kvb_work;

typedef struct {
  size_t d_key;   /* key and query dimension */
  size_t d_value; /* value dimension (1 with all-ones values: the softmax normalizer) */
  double scale;   /* score = scale · <q, k>; 1 for 000/001, 1/sqrt(d_key) for 003/004 */
  gsl_rng *rng;   /* borrowed; randomized methods require it (a kvb_rng_pcg32 generator) */
} kvb_method_config;

typedef struct kvb_method kvb_method;

/* kvb_method_type.declares bits (ABI v1). */
#define KVB_DECLARES_UNBIASED_NUM 1u  /* E[N̂] = N: query_parts' numerator is unbiased */
#define KVB_DECLARES_UNBIASED_DEN 2u  /* E[D̂] = D: query_parts' denominator is unbiased */
#define KVB_DECLARES_ERROR_BOUND 4u   /* error_bound gives (ε, δ) the method guarantees */
#define KVB_DECLARES_ALL 7u

/* kvb_method_type.in_model bits (appended to ABI v1; zero: none): what a model does for the
 * method in each layer it compresses (src/model/task_run.c, src/app/decode_cli.c). The model
 * reads these bits, never the method's name. */
#define KVB_IN_MODEL_ONCE_AT_PROMPT 1u /* compresses once, when the prompt is in: the model sets
                                          its parameter "prompt" to the prompt's length unless the
                                          spec sets it */
#define KVB_IN_MODEL_PER_LAYER 2u      /* a budget per layer: the model sets "layer" (the index
                                          among the compressed layers) and "layers" (their count)
                                          unless set (PyramidKV's pyramid) */
#define KVB_IN_MODEL_SHARED_MASK 4u    /* detects on the model's second compressed layer of the
                                          prefill and shares that mask with the later layers
                                          (003 §4.3's augmented BalanceKV; task_run.c) */
#define KVB_IN_MODEL_ALL 7u

/* kvb_method_type.observe (appended to ABI v1; zero: none): the prefill queries a method reads
 * before it compresses, by default (kvb_dec_observe_default; `kvbound decode --observe`). */
#define KVB_OBSERVE_NONE 0u
#define KVB_OBSERVE_PROMPT 1u /* every prompt query (attention accumulated over the prefill: H2O, TOVA) */
#define KVB_OBSERVE_WINDOW 2u /* the last `window` prompt queries (its parameter "window"; SnapKV's
                                 observation window) */

/* The stream statistics an error_bound callback receives (ABI v1): n tokens, dimensions, the
 * score scale and the norms its bound may depend on (000 Thm. 1 and 003 Thm. 1.1 need these). */
typedef struct {
  size_t n, d_key, d_value;
  double scale, max_key_norm, max_query_norm, max_value_norm, value_frobenius_norm;
} kvb_bound_input;

typedef struct {
  const char *name;                /* registry name, e.g. "subgen" */
  const char *summary;             /* one line */
  const char *source;              /* paper file and number, e.g. "000 Algorithm 1" */
  const kvb_param_spec *params;    /* NULL-name terminated */
  const kvb_mutant_spec *mutants;  /* NULL-name terminated, or NULL */
  int randomized;                  /* needs cfg.rng */
  /* Allocates m->state from validated params. Must not touch anything else on failure. */
  int (*init)(kvb_method *m, const kvb_params *p);
  /* Arguments already validated (finite, right dimensions). Must leave state unchanged on error. */
  int (*update)(kvb_method *m, const double *k, const double *v);
  /* Arguments already validated; at least one update has happened. Writes d_value outputs. */
  int (*query)(kvb_method *m, const double *q, double *z);
  void (*memory)(const kvb_method *m, kvb_memory *out);
  void (*free_state)(void *state);
  /* ---- ABI v1 (plugin.h): appended members; everything above is frozen, in order. Later ABI
   * versions may only append below; a registrant passes its sizeof(kvb_method_type) and the
   * registry zero-fills what it lacks, so zero means "declares nothing". The built-ins' positional
   * initializers stop before these members (zero). ---- */
  unsigned declares; /* KVB_DECLARES_* bits: the properties the battery (kvb-props --method) tests */
  /* Estimates of N = Σ_j e^{s_j} v_j (d_value doubles) and D = Σ_j e^{s_j}, s_j = scale·<q,k_j>,
   * over the tokens absorbed so far; required by the UNBIASED bits (the battery z-tests
   * E[N̂] = N, E[D̂] = D). Arguments validated as for query. */
  int (*query_parts)(kvb_method *m, const double *q, double *num, double *den);
  /* A bound: with probability ≥ 1 − *delta, ‖z − Attn(q)‖₂ ≤ *eps for every query, for a stream
   * with the statistics in *in; required by KVB_DECLARES_ERROR_BOUND. m is a fresh instance
   * (its parameters and dimensions), not yet fed. */
  int (*error_bound)(const kvb_method *m, const kvb_bound_input *in, double *eps, double *delta);
  /* "NAME[,k=v,...]" of a built-in it reproduces given the same generator, or NULL. */
  const char *equivalent_to;
  double equivalence_tol; /* largest |Δz| allowed in the replay; 0 = bit for bit */
  /* How the method runs inside a model's attention (appended to ABI v1: a registrant that
   * lacks them gets zero, "compresses as it streams, observes no prefill query"). */
  unsigned in_model; /* KVB_IN_MODEL_* bits */
  unsigned observe;  /* KVB_OBSERVE_* */
} kvb_method_type;

/* The frozen prefix: the members every registrant has, whatever its ABI version
 * (kvb_method_register refuses a shorter type_size). */
#define KVB_METHOD_TYPE_MIN_SIZE offsetof(kvb_method_type, declares)

/* The words that end the default message of a callback that failed without saying why (the
 * registry appends the plugin's path to such a message, registry.c). */
#define KVB_METHOD_NO_REASON "and gave no reason (its code must record one with KVB_ERROR)"

struct kvb_method {
  const kvb_method_type *type;
  size_t d_key, d_value;
  double scale;
  gsl_rng *rng;
  int mutant;   /* 0: faithful; i+1: type->mutants[i] */
  uint64_t n;   /* tokens absorbed by update */
  kvb_work work;
  void *state;
  /* Re-entrancy guard: callbacks of this method now running (update, query, memory), and
   * whether kvb_method_free was called from inside one (a Python method's update closing its
   * own handle); the free then waits until the outermost callback has returned, so the wrapper
   * never touches freed memory. */
  unsigned busy;
  int free_pending;
};

/* Creates a method of type t (callers by name use kvb_method_alloc, registry.h). On error *out is
 * NULL and a message names the problem; a type whose callback (init, update, query) fails without
 * recording a message gets KVB_METHOD_NO_REASON's default one, naming the method and the status. */
int kvb_method_alloc_type(const kvb_method_type *t, const kvb_method_config *cfg,
                          const kvb_params *p, kvb_method **out);
/* NULL is fine. Called from inside one of m's own callbacks (re-entrant close), the free is
 * deferred until that callback has returned to the wrapper that called it. */
void kvb_method_free(kvb_method *m);
int kvb_method_update(kvb_method *m, const double *k, size_t d_key, const double *v,
                      size_t d_value);
int kvb_method_query(kvb_method *m, const double *q, size_t d_key, double *z, size_t d_value);
void kvb_method_memory(const kvb_method *m, kvb_memory *out);
/* Name of the active mutant, or NULL when faithful. */
const char *kvb_method_mutant_name(const kvb_method *m);
/* Whether the method runs mutant `name` (for the algorithm's own `if`s). */
int kvb_method_is_mutant(const kvb_method *m, const char *name);

/* Accessors (ABI v1) so code outside C (Python callbacks, plugins) never mirrors struct
 * kvb_method: the state pointer a type's init sets, the dimensions and scale, and a uniform
 * draw in [0, 1) from the method's generator (a randomized plugin takes all its randomness from
 * here so that a seed reproduces its answers; NAN when the method has no generator). */
void *kvb_method_state(const kvb_method *m);
void kvb_method_set_state(kvb_method *m, void *state);
size_t kvb_method_d_key(const kvb_method *m);
size_t kvb_method_d_value(const kvb_method *m);
double kvb_method_scale(const kvb_method *m);
double kvb_method_uniform(kvb_method *m);


#endif

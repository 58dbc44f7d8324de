/* decode_compressed.h — compressed decoding inside a model (model.h, any architecture record):
 * the model prefills n₀ tokens exactly, then every GLOBAL layer's every key/value head (arch.h:
 * every layer of SmolLM2-135M; layers 5, 11, 17 of Gemma 3 270M) hands its cache (post-RoPE keys
 * and values of the n₀ tokens) to a kvbound method (method.h), and the following tokens are
 * run with that method's query answer standing in for exact attention — the setting of the
 * papers' end-to-end tables (000 Table 1 / 001 Table 2 LongEval; 003 Table 1 LongBench and
 * Fig. 4 needle-in-a-haystack), where a compressed cache replaces the exact one after the prompt.
 *
 * The reading, where the papers leave a choice:
 *   - Prefill. The n₀ prompt tokens run exactly (kvb_model_prefill); their keys and values are
 *     fed to each method token by token with kvb_method_update, in position order (the
 *     streaming algorithms see the stream as they would online; the one-shot compressors —
 *     balancekv_block, uniform_sample, recent_kcenter, snapkv, pyramidkv — compress at their
 *     first query, i.e. once the prompt is in).
 *   - Queries during the prefill. Methods that score tokens by the queries they see (h2o, tova,
 *     snapkv, pyramidkv; baselines.h) must see the prompt's queries: the last `observe` prompt
 *     tokens are queried after their own update, each by all query heads of the group (see
 *     GQA below), answers discarded. observe = 0 for methods that ignore queries (it would only
 *     cost time), n₀ for h2o / tova (every token, as autoregressive attention), the window for
 *     snapkv / pyramidkv. The caller chooses (kvb_dec_opts). With observe = 0 the method is
 *     still asked one query, the last prompt token's of the group's first head, so that the
 *     one-shot compressors have compressed when the memory after the prompt is read.
 *   - New tokens. Each token after the prompt (teacher-forced or generated) is FED TO THE
 *     METHOD (kvb_method_update) before the query, in every layer and head; the method alone
 *     stands for the whole cache, the token's own key included. So the memory the method
 *     reports is the whole cache's, and a method whose recent window keeps the new tokens
 *     exactly (sink_recent, h2o, snapkv, the f/w windows of balancekv_block and uniform_sample,
 *     recent_kcenter's window) does so by its own rule. The one-shot compressors recompress at
 *     the first query after each update (their streaming convention: fresh uniforms each time).
 *     We chose this over "compressed prompt + exact buffer of the new tokens" because a
 *     method's answer is a normalized softmax average: combining it with an exact buffer would
 *     need the method's estimate of the softmax mass, which the method interface does not
 *     expose.
 *   - GQA. 9 query heads share 3 key/value heads; query head j asks the method of key/value
 *     head j / 3. One method per (layer, key/value head), so memory is counted once per cache
 *     as the model stores it. The three queries of a token reach the method in head order:
 *     h2o accumulates all three (the group's summed attention, as GQA ports of H2O do), tova
 *     evicts by the last query it was asked, and snapkv's window of w queries spans the last
 *     ⌈w/3⌉ tokens' three heads.
 *   - Scale 1/√64 (the model's), passed to every method as kvb_method_config.scale; each method
 *     gets its own PCG32 substream (seed, layer · n_head_kv + head).
 * The rest of the layer (Wo, RMSNorm, SwiGLU, the tied output) is model.c's, in float32; the
 * method's double answer is rounded to float32 where exact attention's output would be. The
 * new tokens run layer by layer over the whole chunk (sgemm for the projections), which equals
 * token-by-token decoding because layer l of token i reads only layer l − 1 of tokens ≤ i and
 * the method state of layer l after the tokens before i (the chunk's tokens are updated and
 * queried in order inside each layer). With the method "exact" the path reproduces the
 * prefill's logits (tests/test_decode_compressed.c). */
#ifndef KVB_DECODE_COMPRESSED_H
#define KVB_DECODE_COMPRESSED_H

#include <stddef.h>
#include <stdint.h>

#include "method.h"
#include "model.h"

/* The prompt's exact prefill: every layer's post-RoPE q [n_head][n0][hd], k and v
 * [n_head_kv][n0][hd] (float32, as model.c computes them). Built once per prompt and shared by
 * every method run (the prefill is the expensive part). */
typedef struct {
  size_t n0;
  int n_layer, n_head, n_head_kv, head_dim;
  int32_t *tokens; /* the n0 prompt tokens */
  float *q, *k, *v; /* [n_layer][heads][n0][hd] */
  float *logits_last; /* [n_vocab]: the exact logits after the last prompt token (what the
                         authors' needle protocol takes the first answer token from) */
  int n_vocab;
} kvb_dec_prefix;

int kvb_dec_prefix_build(const kvb_model *m, const int32_t *tokens, size_t n0, kvb_dec_prefix *out);
void kvb_dec_prefix_free(kvb_dec_prefix *p);

/* Creates the method for (layer, kv_head); cfg is filled in (d 64, scale 1/8, rng). Returns a
 * KVB_* status; *out NULL on error. */
typedef int (*kvb_dec_make_fn)(void *ctx, int layer, int kv_head, const kvb_method_config *cfg,
                               kvb_method **out);

typedef struct {
  size_t observe; /* the last `observe` prompt tokens are queried during the prefill (≤ n0) */
  uint64_t seed;  /* the methods' PCG32 substreams */
  int rope_shift; /* 0; a deliberately wrong RoPE position offset for the props' check mutant */
} kvb_dec_opts;

typedef struct kvb_dec_session kvb_dec_session;

/* Creates one method per (layer, kv head) with make, feeds it the prefix (and the queries
 * opts->observe asks for). The caller's method replaces attention on the GLOBAL layers (arch.h;
 * the layers that attend over the whole prefix: all of SmolLM2's); every LOCAL layer keeps its
 * sliding window of the last `window` tokens exactly (a sink_recent cache with sink 0 and budget
 * the window, which holds exactly the keys a local layer's query sees), as the model computes
 * it. make is called for global layers only; observe applies to them. The memory functions
 * below count the compressed (global) caches only; each local cache holds min(position, window)
 * tokens whatever the method. The block around the methods is the model's own
 * (kvb_model_layer_qkv / _rest), so with "exact" the path reproduces the prefill up to the
 * attention's float rounding (tests/test_decode_compressed.c; Gemma 3's in its own decode test).
 * KVB_EINVAL for a model without a global layer. On error *out is NULL and a message names
 * the layer and head. */
int kvb_dec_open(const kvb_model *m, const kvb_dec_prefix *p, kvb_dec_make_fn make, void *ctx,
                 const kvb_dec_opts *opts, kvb_dec_session **out);
void kvb_dec_close(kvb_dec_session *s);
/* Runs n new tokens at the next positions through the model with every attention answered by
 * the methods; writes logits [n][n_vocab] (may be NULL). The position must stay below the
 * model's context. On error the session is unusable (close it). */
int kvb_dec_forward(kvb_dec_session *s, const int32_t *tokens, size_t n, float *logits);
/* Stored vectors (method.h) summed over the methods now, divided by their number: the mean per
 * (layer, kv head) cache. */
double kvb_dec_memory_now(const kvb_dec_session *s);
/* The mean per (layer, kv head) right after the prefix was fed (before any new token). */
double kvb_dec_memory_prefill(const kvb_dec_session *s);
/* The same means in bytes as the methods store them (method.h's kvb_memory.bytes: float64 for an
 * exact token, packed codes for a quantized cache; quant_cache.h), now and after the prefix. */
double kvb_dec_bytes_now(const kvb_dec_session *s);
double kvb_dec_bytes_prefill(const kvb_dec_session *s);
/* Stored vectors of the method of (layer, kv_head) now. */
size_t kvb_dec_memory_of(const kvb_dec_session *s, int layer, int kv_head);
/* Tokens the session holds (n0 plus those forwarded). */
size_t kvb_dec_position(const kvb_dec_session *s);

/* The prefill queries a method needs (the `observe` of kvb_dec_opts) by kvbound's reading of its
 * paper, from its type's `observe` (method.h): n0 for KVB_OBSERVE_PROMPT (h2o, tova: every
 * token's query, as autoregressive attention pays it), the observation window for
 * KVB_OBSERVE_WINDOW (snapkv, pyramidkv: their `window` parameter, the last `window` tokens,
 * whose 3·window queries include the last `window` the method keeps), 0 otherwise or for NULL. */
size_t kvb_dec_observe_default(const kvb_method_type *t, size_t n0, size_t window);

/* ---- measures ---- */

/* Log-softmax (double) of one logit row into out (n entries); returns its argmax. */
size_t kvb_dec_log_softmax(const float *logits, size_t n, double *out);

/* Teacher-forced scoring of a continuation: with the session after the prompt t[0..n0), feeds
 * t[n0..n0+n1) and scores the targets t[n0+1..n0+n1] (cont holds n1 + 1 tokens: t[n0..n0+n1]).
 * ref_lp: the exact model's log-probabilities [n1][n_vocab] at the same positions (NULL: KL
 * and top-1 agreement are not computed). Per scored token i: nll[i] = −log p(t[n0+1+i]),
 * kl[i] = KL(exact ‖ method) = Σ p_exact (log p_exact − log p_method), agree[i] = 1 when the
 * argmaxes coincide. Any output may be NULL. mem_end: kvb_dec_memory_now after the n1 tokens
 * (may be NULL). The n1 tokens run as one chunk (equal to one at a time, see above). */
int kvb_dec_score(kvb_dec_session *s, const int32_t *cont, size_t n1, const float *ref_lp,
                  double *nll, double *kl, int *agree, double *mem_end);

/* The exact reference for kvb_dec_score: log-probabilities [n1][n_vocab] (float) of the full
 * model over t[0..n0+n1) at rows n0..n0+n1−1 (one prefill of n0 + n1 tokens). *lp malloc'd. */
int kvb_dec_reference(const kvb_model *m, const int32_t *t, size_t n0, size_t n1, float **lp);

/* Greedy decoding: feeds the n_tail tokens (at least one), then generates max_new tokens, each
 * the argmax of the previous step's logits, written to out. */
int kvb_dec_greedy(kvb_dec_session *s, const int32_t *tail, size_t n_tail, size_t max_new,
                   int32_t *out);

#endif

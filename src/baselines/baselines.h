/* baselines.h — the eviction baselines the papers compare against (000 §5 / 001 §5: H2O,
 * StreamingLLM's attention sink, uniform sampling; 003 §4.2: StreamingLLM, SnapKV, PyramidKV)
 * and the ones NVIDIA kvpress offers beside them (TOVA, K-norm): `sink_recent`, `h2o`,
 * `snapkv`, `pyramidkv`, `tova`, `knorm`. Each keeps a set of at most `budget` whole tokens and
 * answers exact attention over them; the files document each paper's rule and kvbound's
 * reading of it.
 *
 * How the queries reach a method. kvbound's interface is update(k, v) per token and query(q) at
 * query points (method.h). The methods that score tokens by attention (h2o, tova, snapkv,
 * pyramidkv) use the queries they are asked, and only those: query(q) at stream position n (n
 * tokens absorbed) is the query of token n−1, it answers from the kept set and is then recorded
 * (h2o adds its attention to the accumulated scores; tova keeps it for the next eviction;
 * snapkv/pyramidkv keep the last w as the observation window). When every token is queried
 * (autoregressive decoding; the props do this) each method is exactly its paper's rule, as
 * each file shows; when queries are sparse (the runner's query points) each file states what
 * stands in for the queries never seen.
 *
 * The kept set (introspection for the tests and the props): the shared token cache below is
 * the first member of every baseline's state, so one accessor serves all six. */
#ifndef KVB_BASELINES_H
#define KVB_BASELINES_H

#include <stddef.h>

#include "method.h"

/* Stream positions (0-based, increasing) of the tokens the method keeps now — for snapkv and
 * pyramidkv: the set its last query attended to. Writes at most cap of them to pos (pos may be
 * NULL) and returns their number; returns 0 when m is not one of the six baselines. */
size_t kvb_baseline_kept(const kvb_method *m, size_t *pos, size_t cap);

/* The budget of PyramidKV's layer `layer` of `layers` for average budget `budget` (window
 * included) at prefix length n (pyramidkv.c states the formula). Tokens, window included. */
size_t kvb_pyramidkv_layer_budget(size_t budget, size_t window, size_t layers, size_t layer,
                                  double beta, size_t n);

/* ---- internal: the shared token cache (one per method state, first member) ---- */
typedef struct {
  size_t cap, n;         /* capacity and tokens held */
  size_t d_key, d_value;
  size_t *pos;           /* stream positions, increasing */
  double *K, *V;         /* n × d_key, n × d_value, in position order */
  double *score;         /* one per token: the method's per-item bookkeeping (or unused) */
} kvb_tcache;

int kvb_tcache_init(kvb_tcache *c, size_t cap, size_t d_key, size_t d_value, const char *who);
void kvb_tcache_free(kvb_tcache *c);
/* Removes entry i (order kept). */
void kvb_tcache_remove(kvb_tcache *c, size_t i);
/* Appends (pos, k, v, score); requires n < cap and pos above every held position. */
void kvb_tcache_push(kvb_tcache *c, size_t pos, const double *k, const double *v, double score);
/* Exact attention over the held tokens (KVB_ERANGE as kvb_attention_exact); p (n entries, may
 * be NULL) receives the softmax weights. */
int kvb_tcache_attend(const kvb_tcache *c, const double *q, double scale, double *z, double *p);
/* The index minimizing (or, with largest = 1, maximizing) score over entries [lo, hi); ties go
 * to the earliest position. hi > lo. */
size_t kvb_tcache_argext(const kvb_tcache *c, size_t lo, size_t hi, int largest);

#endif

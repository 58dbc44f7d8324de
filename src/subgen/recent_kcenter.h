/* recent_kcenter.h — the practical method the experiments of 000 §3.2 / 001 §4.1 evaluate:
 * "retains the most recent ℓ token embeddings, in addition to k centers selected from the
 * remaining tokens ... We apply the greedy k-center clustering algorithm once to compress the
 * entire KV caches ... cache memory budgets ... ℓ + k". Registered as method "recent_kcenter"
 * with parameters window = ℓ and centers = k (method_recent_kcenter.c).
 *
 * Reading (the paper describes a one-shot compression, not a streaming algorithm):
 *   - the selection happens at QUERY time over the whole stream seen so far (n tokens):
 *     the window is tokens n−ℓ .. n−1; the k centers are chosen by greedy k-center
 *     (kcenter.h, first center = the oldest token, index 0) on the KEYS of tokens 0 .. n−ℓ−1;
 *     when n ≤ ℓ + k nothing is dropped. Every query re-selects from scratch, so the answer
 *     equals "compress the whole cache once, now, then attend" — the paper's procedure — for
 *     every n. It is not a streaming algorithm: a token dropped at one query may be kept at a
 *     later one. With the parameter prompt = P > 0 the first selection made at >= P tokens is
 *     frozen and the tokens after it are kept exactly (compress once, as 001 §4.1 runs it and as
 *     the long-context tasks do, src/model/task_run.h); memory is then the frozen selection plus
 *     that tail.
 *   - attention is exact softmax attention over the kept tokens, unweighted (the paper keeps
 *     the tokens themselves as the compressed cache; no cluster-size reweighting), computed by
 *     kvb_attention_exact on the kept rows in stream order — so with ℓ + k ≥ n the output is
 *     bit-identical to the exact method.
 *   - memory: kvb_method_memory reports the COMPRESSED cache, min(n, ℓ+k) (key, value) pairs,
 *     which is what the paper's budget ℓ + k counts. To make the one-shot selection at every n
 *     this reference STORES THE FULL STREAM (n pairs, kvb_recent_kcenter_stored_tokens); a
 *     deployment compresses once and discards the rest. Do not read the reported memory as
 *     this reference's footprint.
 *   - the distance is Euclidean on the raw keys (000 §3.1 clusters key embeddings); the score
 *     scale does not enter the selection.
 *
 * Mutants (property checks only): random_centers (k uniformly random old tokens without
 * replacement instead of k-center; needs cfg.rng), window_off_by_one (window of ℓ−1 tokens,
 * the k centers chosen from tokens 0 .. n−ℓ), nearest_centers (k-center with the nearest
 * instead of the farthest point). */
#ifndef KVB_RECENT_KCENTER_H
#define KVB_RECENT_KCENTER_H

#include <stddef.h>

#include "method.h"

/* Tokens the reference holds (the full stream, n); 0 for another method. */
size_t kvb_recent_kcenter_stored_tokens(const kvb_method *m);
/* Stream positions of the tokens the last query attended to, increasing; returns how many
 * (0 for another method or before the first query). At most cap are written to idx. */
size_t kvb_recent_kcenter_kept(const kvb_method *m, size_t *idx, size_t cap);

#endif

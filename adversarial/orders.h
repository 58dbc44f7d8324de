/* orders.h — adversarial token orders and the "ties_at_delta" stream, used by the SubGen
 * lemma checks: Lemma 2 on adversarial orders (sorted by norm, clusters interleaved, keys at
 * distance exactly δ from a representative).
 *
 * SubGen's online clustering (000 Alg. 1 lines 11-23, = 001 lines 11-22) depends on the order of the keys: the
 * first key of a cluster becomes its representative, so the order decides which clusters
 * open. Lemma 1 and Lemma 2 (000; 001 Lemmas 2.2, 2.3) hold for EVERY order, so the checks
 * replay the same token multiset in orders chosen to stress the rule. Each function returns
 * a new stream (the input is unchanged) holding the same (q, k, v) triplets permuted; the
 * recorded guarantees (m, delta, r) carry over, since they are properties of the multiset. */
#ifndef KVB_ORDERS_H
#define KVB_ORDERS_H

#include <stddef.h>

#include "stream.h"

/* out = tokens of s in the order perm[0], perm[1], ... (perm a permutation of 0..n-1;
 * anything else is KVB_EINVAL). */
int kvb_stream_permute(const kvb_stream *s, const size_t *perm, kvb_stream **out);

/* Tokens sorted by ‖k‖₂ (ascending, or descending when `descending`); ties keep stream order. */
int kvb_stream_reorder_by_key_norm(const kvb_stream *s, int descending, kvb_stream **out);
/* Tokens sorted by ‖v‖₂, the weight of Lemma 1's law (ascending or descending). */
int kvb_stream_reorder_by_value_norm(const kvb_stream *s, int descending, kvb_stream **out);

/* Round robin over clusters: label[i] (< num_labels) names token i's cluster; the output takes
 * the first token of label 0, of label 1, ..., then the second of each, and so on (a label that
 * runs out is skipped). Within a label stream order is kept. */
int kvb_stream_interleave_clusters(const kvb_stream *s, const size_t *label, size_t num_labels,
                                   kvb_stream **out);

#endif

/* subgen.h — SubGen / ClusterGen, exactly as 000 Algorithm 1 (LaTeX in 001 Algorithm 1).
 *
 *   UpdateSoftmaxNormalizer (000 Alg. 1 lines 11-23): online δ-threshold clustering of keys;
 *     the first key of a cluster is its representative x_i; a key joins the nearest
 *     representative when ‖k − x_i*‖₂ ≤ δ (line 13), else opens a cluster with t copies of
 *     itself (lines 20-21); each cluster keeps t independent one-slot reservoirs, slot j replaced
 *     with probability 1/n_i (line 17).
 *   UpdateMatrixProduct (lines 24-28): s independent one-slot reservoirs, each replaced by
 *     (k, v) with probability ‖v‖²/(µ + ‖v‖²) (line 26); then µ ← µ + ‖v‖² (line 6).
 *   QueryStreamAttn (lines 29-31): z = Σ_{(k,v)∈M} µ/(s‖v‖²)·exp(⟨q,k⟩)·v,
 *     τ = Σ_i (n_i/t)·Σ_{k∈S_i} exp(⟨q,k⟩), output z/τ — here in a shifted (log-sum-exp)
 *     domain, with ⟨q,k⟩ multiplied by the method's scale (1 in 000).
 *
 * Guarantee (000 Theorem 1 = 001 Theorem 2.4): if t = Ω(ε⁻²e^{2δr} log n), s = Ω(ε⁻²d) and
 * ‖q_n‖ ≤ r, then with probability ≥ 0.99
 *     ‖z_n − Attn(q_n, K_n, V_n)‖₂ ≤ ε‖softmax(K_n q_n)‖₂‖V_n‖_op            (000 eq. (3)),
 * and on (m, δ)-clusterable keys memory and per-step time are O(d(mt + s)) (m′ ≤ m).
 * props/subgen_theorem1_constants.md derives the explicit constants kvbound checks.
 *
 * Readings where the paper is silent:
 *   - ‖v‖ = 0 while µ = 0 makes line 26's probability 0/0. We take it as 0: a zero value has
 *     zero mass under Lemma 1's law ∝ ‖v‖², so slots stay empty (null) until the first
 *     nonzero value arrives, which then fills all s slots (p = 1), as in Lemma 1's base case.
 *     With every value zero, z = 0 — which is exactly Attn, since V = 0.
 *   - a tie in line 12's arg min goes to the earliest representative.
 *   - memory: the reference also records the stream position of every stored sample so the
 *     property checks can test the sampling laws; that bookkeeping is not the algorithm's and
 *     is not counted in kvb_method_memory.
 *
 * Mutants (for the property checks only; see method.h): listed in subgen.c. */
#ifndef KVB_SUBGEN_H
#define KVB_SUBGEN_H

#include <stddef.h>
#include <stdint.h>

#include "method.h"

/* Introspection for the property checks. All return 0 / NULL for a non-SubGen method. */
size_t kvb_subgen_num_clusters(const kvb_method *m);           /* m′ */
size_t kvb_subgen_t(const kvb_method *m);
size_t kvb_subgen_s(const kvb_method *m);
double kvb_subgen_delta(const kvb_method *m);
double kvb_subgen_mu(const kvb_method *m);                     /* µ */
/* Cluster i: representative x_i, count n_i, its t samples (t×d_key) and their stream positions. */
int kvb_subgen_cluster(const kvb_method *m, size_t i, const double **rep, uint64_t *count,
                       const double **samples, const uint64_t **sample_pos, uint64_t *rep_pos);
/* Slot j of M: key, value and stream position (pos = UINT64_MAX and NULL vectors when null). */
int kvb_subgen_slot(const kvb_method *m, size_t j, const double **k, const double **v,
                    uint64_t *pos);
/* The two halves of the query separately, in the shifted domain: z (d_value) and τ share the
 * shift `*log_shift`, i.e. the true values are exp(log_shift)·z_scaled and exp(log_shift)·tau_scaled.
 * This is what the intermediate bounds (000 eq. (5) and (6)) are checked on. */
int kvb_subgen_query_parts(kvb_method *m, const double *q, double *z_scaled, double *tau_scaled,
                           double *log_shift);

#endif

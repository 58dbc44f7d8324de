/* uniform_sample.h — the baseline every BalanceKV comparison needs (003 §4.1, App. B.1): the
 * first f and the last w tokens kept exactly and a uniform sample of the middle, the same layout
 * and budget as the block-parallel BalanceKV (balancekv_block.h). The method is registered as
 * "uniform_sample"; these accessors expose what it kept so the checks can test its law and bias. */
#ifndef KVB_UNIFORM_SAMPLE_H
#define KVB_UNIFORM_SAMPLE_H

#include <stddef.h>

#include "method.h"

/* Method "uniform_sample" accessors. The sampled middle positions (k = ⌊m/2^T⌋ of them, each with
 * weight m/k: see uniform_sample.c); KVB_ESTATE if not sampled since the last update. */
int kvb_usample_kept_set(const kvb_method *m, size_t *count, const size_t **pos);
/* The estimator's two sums for q (sampling if stale), scaled by e^{−shift}:
 *   num = e^{−shift}·ẑ,  ẑ = Σ_{first,recent} e^{s_i} v_i + (m/k) Σ_S e^{s_i} v_i  (d_value entries),
 *   den = e^{−shift}·τ̂,  τ̂ = Σ_{first,recent} e^{s_i} + (m/k) Σ_S e^{s_i},
 * s_i = scale·⟨q, k_i⟩; both are unbiased for the exact sums (their ratio is the output). The
 * caller picks `shift` (e.g. the largest score) so the values neither overflow nor underflow.
 * Errors: KVB_EINVAL (not uniform_sample, or T too large for the middle), KVB_ENULL, KVB_EDIM,
 * KVB_EDOM (non-finite q or shift), KVB_ESTATE (no tokens). */
int kvb_usample_sums(kvb_method *m, const double *q, size_t d_key, double shift, double *num,
                     size_t d_value, double *den);
/* The weight of every kept middle token (m/k), NAN when not sampled since the last update. */
double kvb_usample_weight(const kvb_method *m);

#endif

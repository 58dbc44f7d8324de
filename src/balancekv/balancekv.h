/* balancekv.h — BalanceKV, 003 Algorithm 1 (004 Alg. 1; Theorem 3.1), method "balancekv".
 *
 * Per token j (003 Alg. 1):
 *   line 5-6  (k_j, v_j) goes to MR-NUMERATOR_i, i the bucket with 2^{i−1} ≤ ‖v_j‖ ≤ 2^i
 *             (004 Alg. 1 line 4 writes this condition backwards; 003 line 5 is used).
 *             Boundary ‖v‖ = 2^i exactly satisfies both i and i+1: it goes to bucket i, so a
 *             bucket i holds exactly 2^{i−1} < ‖v‖ ≤ 2^i (of the computed double ‖v‖), and its
 *             SoftmaxBalance runs with r_value = 2^i.
 *             Zero-norm values (no i exists) go to no numerator bucket: they contribute
 *             nothing to the numerator; they still go to MR-DENOMINATOR (line 11) and count in
 *             n. Their number is kept (kvb_balancekv_info.zero_values).
 *   line 7    v_max ← max(‖v_j‖, v_max)
 *   line 8    erase every MR-NUMERATOR_i with 2^i ≤ (ε/2n)·e^{−r²·scale}·v_max (scale = 1/√d);
 *             n is the parameter "n", the stream length (required: 003 Alg. 1 takes n as an
 *             input, as T = log(n/t) presumes). Using the tokens so far j instead is a stricter
 *             variant (it erases more, earlier), available only as the mutant "n_so_far".
 *             Tokens past n are still accepted (line 8 then keeps the given n). A token arriving later in the range of an
 *             erased bucket starts that bucket afresh (and is erased again at once if the rule
 *             still holds). Every erasure is logged (kvb_balancekv_erasures).
 *   line 11   (k_j, 1) goes to MR-DENOMINATOR
 *   line 13   z = Σ_l 2^l Σ_{V^l} exp(scale<k,q>) v / Σ_l 2^l Σ_{K^l} exp(scale<k,q>),
 *             both sums in the shifted domain (kvb_expsum), then their ratio.
 * Every MergeAndReduce instance (merge_reduce.h) uses t, T, δ, the walk constant c, r_key = r.
 * Keys with ‖k‖ > r are rejected (KVB_EINVAL, unchanged): the guarantee assumes ‖k‖ ≤ r.
 * FAIL of any walk is counted in work.fails (never ignored, never aborts). */
#ifndef KVB_BALANCEKV_H
#define KVB_BALANCEKV_H

#include <stddef.h>
#include <stdint.h>

#include "merge_reduce.h"
#include "method.h"

typedef struct {
  int bucket;        /* i */
  uint64_t step;     /* j (1-based) at erasure */
  double vmax;       /* v_max at erasure */
  double n_used;     /* the n of line 8 */
  double threshold;  /* (ε/2n)·e^{−r²·scale}·v_max as computed */
} kvb_balancekv_erasure;

typedef struct {
  size_t buckets;        /* live numerator instances */
  uint64_t zero_values;  /* tokens with ‖v‖ = 0 */
  double vmax;
  size_t erasures;
} kvb_balancekv_info;

/* NULL m or non-balancekv: return nonzero. */
int kvb_balancekv_get_info(const kvb_method *m, kvb_balancekv_info *out);
/* i-th live bucket: its index and instance (NULL past the end). */
const kvb_mr *kvb_balancekv_bucket(const kvb_method *m, size_t i, int *index);
const kvb_mr *kvb_balancekv_denominator(const kvb_method *m);
/* The erasure log (count through *n). */
const kvb_balancekv_erasure *kvb_balancekv_erasures(const kvb_method *m, size_t *n);
/* Bucket index of a value norm as line 5 is read here (norm > 0 finite). */
int kvb_balancekv_bucket_of(double norm);

#endif

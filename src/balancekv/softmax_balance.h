/* softmax_balance.h — SoftmaxBalance, 003 Algorithm 2 (004 Alg. 2; Theorem 3.3).
 *
 * Given C = {(k_1,v_1),…,(k_n,v_n)}, k ∈ ℝ^d, v ∈ ℝ^s, runs the Self-Balancing Walk (walk.h,
 * 003 Alg. 3) on the implicit vectors φ(k_i)⊗v_i of the proof of Theorem 3.3 (003 App. A.2),
 * whose inner products are the kernel
 *   y_ij = <φ(k_i)⊗v_i, φ(k_j)⊗v_j> = exp(scale·<k_i,k_j>)·<v_i,v_j>      (Alg. 2 line 6)
 * with scale = 1/√d in 003 (cfg.scale of the method). Only inner products are needed, so the
 * walk runs on Gram rows (kvb_walk_gram_rows); nothing infinite-dimensional is formed. Row i
 * is formed at step i, the only time the walk reads it: O((d+s)·n) memory, as Theorem 3.3
 * states, and O((d+s)·n²) time.
 *   R = exp(scale·r_key²/2)·r_value      (line 2; ‖φ(k)⊗v‖ = exp(scale‖k‖²/2)‖v‖ ≤ R)
 *   c = 30·log(n/δ)                      (line 3; n = |C|, natural log) unless overridden
 *   FAIL when |yᵀη| > c·R²               (line 7), p_j = ½ − yᵀη/(2cR²) (line 8)
 *   output the side with fewer elements  (lines 12-16, the +1 side on a tie)
 * so |C′| ≤ |C|/2 always (Theorem 3.3).
 *
 * No overflow: the walk only ever uses y/R², computed as
 *   exp(scale·(<k_i,k_j> − r_key²))·<v_i,v_j>/r_value²,
 * whose exponent is ≤ 0 whenever the radii bound the inputs (checked), for any norm.
 *
 * Measured (props/balancekv_sb.c): when the walk does not balance (the paper's c at small n),
 * the smaller side keeps on average clearly less than |C|/2 (≈ 0.36·|C| at n = 8 with v ≡ 1),
 * so the weight 2 MergeAndReduce gives C′ underestimates; the bias compounds over the T levels.
 *
 * Reading noted: the proof of Theorem 3.3 runs the walk with failure parameter δ/s (so
 * c = 30·log(ns/δ)); Algorithm 2 line 3 writes c = 30·log(n/δ). We implement line 3; callers
 * wanting the proof's constant pass delta/s. */
#ifndef KVB_SOFTMAX_BALANCE_H
#define KVB_SOFTMAX_BALANCE_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

typedef struct {
  double scale;   /* score scale: 1/√d_key in 003 */
  double r_key;   /* max ‖k‖ ≤ r_key (> 0) */
  double r_value; /* max ‖v‖ ≤ r_value (> 0) */
  double delta;   /* failure probability δ ∈ (0, 1) */
  double c;       /* > 0: explicit constant; 0: the paper's 30·log(n/δ) */
  unsigned flags; /* KVB_WALK_MUT_* mutant switches (0 faithful) */
} kvb_sb_config;

/* Runs SoftmaxBalance on n pairs (K n×dk, V n×dv row-major; V NULL means dv = 1 with all-ones
 * values, the softmax normalizer). Uniforms from unif[n] if not NULL (caller-supplied), else
 * one gsl_rng_uniform per pair, in order. Writes eps[n] (±1, the walk's signs; may be NULL),
 * keep[] the indices of C′ in increasing order and *n_keep = |C′|, *fails the failing steps.
 * Returns KVB_OK, KVB_EFAIL (partition still valid), or an input error (nothing written). */
int kvb_softmax_balance(size_t n, size_t dk, size_t dv, const double *K, const double *V,
                        const kvb_sb_config *cfg, const double *unif, gsl_rng *rng, int *eps,
                        size_t *keep, size_t *n_keep, uint64_t *fails);

/* The constant actually used for n pairs (the override or 30·log(n/δ)). */
double kvb_sb_constant(const kvb_sb_config *cfg, size_t n);

/* Counting, for the property checks of Theorem 3.3's runtime and memory (and of Theorems 3.1
 * and 3.4, whose cost is that of their SoftmaxBalance calls): while a counter struct is installed
 * on the calling thread, every kvb_softmax_balance call that gets past input checking adds to it
 * what it really did — counted in its loops and at its allocation sites, not from a formula.
 * Off (NULL) by default; then the only cost is one test per call. No output changes. */
typedef struct {
  uint64_t calls;      /* SoftmaxBalance runs */
  uint64_t pairs;      /* Σ n over the runs */
  uint64_t kernels;    /* line-6 entries y_ij = exp(scale<k_i,k_j>)<v_i,v_j> evaluated */
  uint64_t madds;      /* multiply-adds in their inner products: d_k, plus d_v with values */
  uint64_t last_bytes; /* bytes the last run held: its inputs (n·d_k, n·d_v doubles) plus the
                          scratch it allocated (one Gram row of n doubles, the signs) */
  uint64_t peak_bytes; /* the largest last_bytes so far */
} kvb_sb_counters;

/* Installs c (NULL: none) on the calling thread; returns the one it replaces. */
kvb_sb_counters *kvb_sb_count(kvb_sb_counters *c);

#endif

/* merge_reduce.h — MergeAndReduce, 003 Algorithm 4 (004 Alg. 3; Theorem 3.4), and the
 * registered method "merge_reduce".
 *
 * The stream (k_j, v_j) enters level C⁰ (line 5). Every t tokens (j a multiple of t; line 6
 * writes "p is not a multiple of t", read as j) the cascade of lines 11-17 runs:
 *   p ← j/t, i ← 0; while p is an integer and i < T:
 *     C^{i+1} ← C^{i+1} ∪ SoftmaxBalance(C^i, r_key, r_value, δ); C^i ← ∅; i ← i+1; p ← p/2
 * The estimator at every step (Theorem 3.4) is
 *   z_j = Σ_{i=0..T} 2^i Σ_{(k,v)∈C^i} exp(scale·<k,q>)·v,   scale = 1/√d in 003,
 * summed with kvb_expsum (no overflow).
 *
 * Readings: the top level C^T is never reduced ("until i = T"), so |C^i| ≤ t holds for every
 * level only while j ≤ t·2^T, i.e. for the stream length n = t·2^T that Theorem 3.4 assumes
 * (T = log₂(n/t)); past it C^T keeps growing by ≤ t/2 per t·2^{T−1} tokens — stated, not hidden.
 * SoftmaxBalance runs with the configured δ (the paper's 1/poly(n)) and n = |C^i| in its c.
 * A FAIL inside SoftmaxBalance is counted (kvb_mr.fails, and the method's work.fails) and the
 * walk's partition is used (walk.h); the caller decides what a non-zero count means.
 *
 * Allocation: everything a push can need is reserved before anything changes, except the
 * SoftmaxBalance scratch (an n×n Gram matrix, n ≤ |C^i|); if that allocation fails mid-cascade
 * the levels already reduced stay reduced and KVB_ENOMEM is returned.
 *
 * Method "merge_reduce": one MergeAndReduce on (k, v) and one on (k, 1), query = their ratio
 * (003 Alg. 1 lines 11-13 without the value-norm buckets). Parameters r_key, r_value
 * (radii; updates whose key or value exceed them are rejected), t, T, delta, c. */
#ifndef KVB_MERGE_REDUCE_H
#define KVB_MERGE_REDUCE_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "attention.h"
#include "method.h"
#include "softmax_balance.h"

typedef struct {
  size_t cnt, cap;
  double *K, *V;  /* cap×dk, cap×dv (V NULL for all-ones values) */
  uint64_t *pos;  /* stream position (0-based) of each stored pair */
} kvb_mr_level;

typedef struct {
  size_t dk, dv;      /* dv = 1 and ones = 1: the normalizer instance (values all 1) */
  int ones;
  size_t t, T;
  kvb_sb_config sb;   /* radii, δ, c, walk mutant flags */
  int weight_shift;   /* 0 faithful; 1 = mutant weight 2^{i+1} */
  kvb_mr_level *lev;  /* T+1 levels */
  uint64_t j;         /* tokens absorbed */
  uint64_t fails;     /* failing walk steps (003 Alg. 3 FAIL) */
  uint64_t balances;  /* SoftmaxBalance calls */
} kvb_mr;

/* Sets up an empty instance (levels C⁰..C^T). t >= 1, T >= 1. */
int kvb_mr_init(kvb_mr *mr, size_t dk, size_t dv, int ones, size_t t, size_t T,
                const kvb_sb_config *sb);
void kvb_mr_free(kvb_mr *mr);
/* Lines 5-18 for one token (v ignored when ones); pos is its stream position. Inputs must be
 * finite; a key or value beyond its radius is rejected (KVB_EINVAL, unchanged). work may be
 * NULL. */
int kvb_mr_push(kvb_mr *mr, const double *k, const double *v, uint64_t pos, gsl_rng *rng,
                kvb_work *work);
/* Adds Σ_i 2^i Σ_{C^i} exp(scale<k,q>)·v (or ·1) to s. */
void kvb_mr_expsum(const kvb_mr *mr, const double *q, double scale, kvb_expsum *s, kvb_work *work);
/* Stored pairs over all levels. */
size_t kvb_mr_stored(const kvb_mr *mr);

/* For the property checks: the numerator instance of a "merge_reduce" method (NULL if m is
 * not one) and the denominator instance. */
const kvb_mr *kvb_merge_reduce_numerator(const kvb_method *m);
const kvb_mr *kvb_merge_reduce_denominator(const kvb_method *m);

#endif

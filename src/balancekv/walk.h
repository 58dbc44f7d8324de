/* walk.h — the Self-Balancing Walk of Alweiss, Liu and Sawhney as 003 Algorithm 3 states it
 * (003 Appendix A.2, Theorem A.1), in the form SoftmaxBalance (003 Alg. 2) and MergeAndReduce
 * (003 Alg. 4) run it.
 *
 * Step i sees only the correlation of u_i with the signed sum of the earlier vectors,
 *   corr_i = Σ_{u∈U+} <u, u_i> − Σ_{u∈U−} <u, u_i>              (003 Alg. 3 line 5)
 * and
 *   FAIL   when |corr_i| > c·r²                                  (line 5-6)
 *   p_i  = ½ − corr_i / (2c·r²)                                  (line 8)
 *   ε_i  = +1 with probability p_i, −1 otherwise                 (line 9)
 * with c = 30·log(n/δ) (line 2, natural log) unless the caller overrides c.
 * Sign rule, fixed so another implementation fed the same uniforms agrees bit for bit:
 *   ε_i = +1  exactly when  u_i < p_i,  u_i uniform on [0, 1).
 *
 * FAIL is never ignored and never aborts: the paper stops at FAIL; a reference that stopped
 * would leave the caller without a partition, so here the walk records the failure (status
 * KVB_EFAIL and a counter of failing steps), clips p_i to [0, 1] for that step (the sign the
 * formula points to, taken deterministically) and carries on, so the caller always gets a
 * valid partition and decides what the failure means.
 *
 * Output (lines 12-16): the smaller side, U+ on a tie (line 12 compares with ≤).
 * Typo read: line 10 writes U_ε ← U_ε ∪ {k_i}; it means u_i.
 *
 * Numerical form: callers that work in a kernel space pass correlations already divided by
 * r² (see softmax_balance.h), so thresholds are compared as |corr/r²| > c, the same test. */
#ifndef KVB_WALK_H
#define KVB_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

/* Mutant switches (deliberately wrong variants, for the property checks only). */
#define KVB_WALK_MUT_SIGN 1u        /* line 8 with + : p = ½ + corr/(2c r²) */
#define KVB_WALK_MUT_NOFAIL 2u      /* line 5 ignored: FAIL never reported */
#define KVB_WALK_MUT_KEEP_LARGER 4u /* lines 12-16 keep the larger side */
/* line 8 replaced by p = ½: independent random signs. The control every claim about the walk's
 * advantage runs (props/README.md, Verdicts: controls), and the mutant `random_signs` of merge_reduce and
 * balancekv (method:merge_reduce:random_signs, ...) those claims must reject. The FAIL test of
 * line 5 is kept, so only the balancing itself is removed. */
#define KVB_WALK_MUT_RANDOM_SIGNS 8u

/* c = 30·log(n/δ) (003 Alg. 3 line 2 / Alg. 2 line 3). n >= 1, 0 < δ. */
double kvb_walk_paper_c(size_t n, double delta);

/* Line 8: p for correlation `corr` already divided by r² (i.e. corr/r²), constant c > 0.
 * Not clipped. */
double kvb_walk_p(double corr_over_r2, double c, unsigned flags);

/* One step, lines 5-9: writes ε (±1) from uniform u ∈ [0,1); returns KVB_OK, or KVB_EFAIL
 * when |corr/r²| > c (the sign is still chosen, with p clipped to [0, 1]). */
int kvb_walk_step(double corr_over_r2, double c, double u, unsigned flags, int *eps);

/* The walk on explicit vectors U (n×dim, row-major), maxᵢ‖uᵢ‖ ≤ r (checked). Uniforms come
 * from `unif` (n numbers in [0,1), caller-supplied, e.g. to compare with a GPU kernel) when
 * it is not NULL, else from rng (one gsl_rng_uniform per step, in order). c > 0 is the
 * constant (pass kvb_walk_paper_c(n, δ) for the paper's). Writes eps[n] ∈ {±1} and, when
 * fails is not NULL, the number of failing steps. Returns KVB_OK, KVB_EFAIL (the partition
 * is still complete and valid), or an input error (nothing written). Cost O(n·dim): the
 * signed sum w = Σ ε_j u_j is kept so corr_i = <w, u_i>. */
int kvb_walk_vectors(size_t n, size_t dim, const double *U, double r, double c,
                     const double *unif, gsl_rng *rng, unsigned flags, int *eps, uint64_t *fails);

/* The walk given the Gram matrix only: G is n×n row-major with G[i·n+j] = <u_i,u_j>/r²
 * (only entries j < i are read). Same uniforms/rng, c, eps and fails as above. O(n²). */
int kvb_walk_gram(size_t n, const double *G, double c, const double *unif, gsl_rng *rng,
                  unsigned flags, int *eps, uint64_t *fails);

/* The walk with the Gram matrix produced one row at a time: before step i, row(ctx, i, buf)
 * writes buf[j] = <u_i,u_j>/r² for j < i (buf holds n doubles, the caller's). The walk reads
 * row i only at step i, so O(n) memory suffices for what kvb_walk_gram does with n² (003
 * Theorem 3.3's O((d+s)·n) memory). row returns KVB_OK or an error, which stops the walk and
 * is returned (eps then partial). Same uniforms/rng, c, eps and fails as kvb_walk_gram, and
 * the same signs bit for bit given the same rows. */
typedef int (*kvb_walk_row_fn)(void *ctx, size_t i, double *buf);
int kvb_walk_gram_rows(size_t n, kvb_walk_row_fn row, void *ctx, double *buf, double c,
                       const double *unif, gsl_rng *rng, unsigned flags, int *eps,
                       uint64_t *fails);

/* Lines 12-16: the sign of the side to output (+1: U+, −1: U−), U+ when |U+| ≤ |U−|. */
int kvb_walk_output_sign(size_t n, const int *eps, unsigned flags);

/* Mutant flags for a mutant name ("walk_sign", "walk_nofail", "keep_larger", "random_signs");
 * 0 otherwise. The walk is a function, not a type: these flags are reached only through the
 * mutant tables of the methods built on it (merge_reduce, balancekv), which list these names
 * (README "Mutants"). */
unsigned kvb_walk_flags_for(const char *mutant_name);

#endif

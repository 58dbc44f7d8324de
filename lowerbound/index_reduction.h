/* index_reduction.h — the space lower bound's INDEX reduction (003 Theorem 3.2, Appendix C),
 * as an instance generator and a decoder that runs on the answer of ANY registered method.
 *
 * 003 Appendix C, "The reduction": from public coins, Alice and Bob draw
 *   - n/d keys k̃_1..k̃_{n/d} uniform in {−r/√d, +r/√d}^d,
 *   - π : [n] → [n/d]×[d], a uniformly random partition of the n bit positions into groups of
 *     d (a uniformly random bijection: group π(i)₁, coordinate π(i)₂),
 *   - signs σ_1..σ_n uniform in {−1, +1};
 * bit i carries k_i = k̃_{π(i)₁} and v_i = σ_i·e_{π(i)₂}. Alice (bits x) streams
 * U = {(k_i, v_i) : x_i = 1} into the algorithm; Bob queries q_i = k_i and reports x_i = 1 iff
 * the answer's value in v_i's only non-zero coordinate, ⟨z, v_i⟩ = σ_i·z[π(i)₂], exceeds
 *     T = (1/40)·exp(r²/√d) / max{d·exp(r²/√d), |U|}.
 * Scores are ⟨k, q⟩/√d (003's convention), so methods are created with scale = 1/√d,
 * d_key = d_value = d.
 *
 * Premises (003 Theorem 3.2): r² ≤ d; n a multiple of d (the partition needs groups of
 * exactly d); ε ∈ (0, 1). The theorem's string length is n = min{1/ε², d·exp(2r²/√d)};
 * kvb_index_theorem_n gives it rounded down to a multiple of d. kvb_index_alloc accepts any
 * n = d·g, g ≥ 1, so the end-to-end checks can sweep n across (and beyond) the regime.
 *
 * Readings where the paper is loose:
 *   - "the value written in the only non-zero coordinate of v_i" is read as ⟨z, v_i⟩, i.e.
 *     the coordinate times σ_i (the signal exp(r²/√d)·⟨v_i, v_i⟩/D is positive; without σ_i a
 *     one with σ_i = −1 would read negative and always decode as 0).
 *   - the order of U in the stream is by increasing bit position (the paper gives a set).
 *   - "exceeds" is strict: x_i = 1 iff ⟨z, v_i⟩ > T.
 *   - |U| is public to Bob through the threshold; the paper's T uses it, so Bob is told |U|
 *     (log n extra bits, which does not change the Ω bound).
 *
 * Mutants (for the property checks only, enabled by name, never by users): see
 * kvb_index_mutant_names; the claims in props/lowerbound.c select them as "lowerbound:NAME". */
#ifndef KVB_INDEX_REDUCTION_H
#define KVB_INDEX_REDUCTION_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "method.h"

typedef enum {
  KVB_INDEX_FAITHFUL = 0,
  KVB_INDEX_MUT_THRESHOLD_FLIP,  /* decoder reports 1 iff ⟨z, v_i⟩ < T (sign flipped) */
  KVB_INDEX_MUT_NO_SIGN,         /* decoder reads z[π(i)₂] without σ_i */
  KVB_INDEX_MUT_SHARED_KEY,      /* group 1 reuses group 0's key k̃_1 (two groups, one key) */
  KVB_INDEX_MUT_COORD_COLLIDE,   /* π(i)₂ drawn independently: a group may repeat a coordinate */
  KVB_INDEX_MUT_IDENTITY_PI,     /* π(i) = (i / d, i mod d): not a random partition */
  KVB_INDEX_MUT_C3_NO_POWER,     /* Lemma C.3 closed form with r²/d instead of r²/d^{3/2} */
  KVB_INDEX_MUT_CLAIRVOYANT,     /* kvb_index_eq2_error aims the whole error at Bob's own
                                  * coordinate π(i)₂: the error is chosen after b (003 Lemma C.6's
                                  * proof needs it fixed before b is drawn) */
  KVB_INDEX_MUT_COUNT
} kvb_index_mutant;

/* Name of mutant m ("threshold_flip", ...), NULL for the faithful run or out of range. */
const char *kvb_index_mutant_name(kvb_index_mutant m);
/* Parses "lowerbound:NAME" (a claim's ctx->mutant) into a mutant; NULL or any other prefix
 * gives KVB_INDEX_FAITHFUL. An unknown NAME after "lowerbound:" gives -1. */
int kvb_index_mutant_parse(const char *spec);

typedef struct {
  size_t n, d, groups;   /* n bit positions, n = d·groups */
  double r;              /* keys have norm exactly r */
  kvb_index_mutant mutant;
  double *key;           /* groups × d: k̃_g (row-major) */
  size_t *group;         /* n: π(i)₁ */
  size_t *coord;         /* n: π(i)₂ */
  signed char *sigma;    /* n: σ_i */
} kvb_index_instance;

/* Checks 003 Theorem 3.2's premises: r² ≤ d, ε ∈ (0, 1) (pass NAN to skip ε), n a positive
 * multiple of d (pass 0 to skip n). KVB_EINVAL with a message naming the broken premise. */
int kvb_index_check_premises(size_t n, size_t d, double r, double eps);
/* The theorem's n = min{1/ε², d·exp(2r²/√d)}, rounded down to a multiple of d (at least d). */
int kvb_index_theorem_n(size_t d, double r, double eps, size_t *n);

/* Draws the public-coin part (k̃, π, σ) from `coins`. On error *out is NULL. */
int kvb_index_alloc(size_t n, size_t d, double r, kvb_index_mutant mutant, gsl_rng *coins,
                    kvb_index_instance **out);
void kvb_index_free(kvb_index_instance *inst); /* NULL is fine */

/* k_i and v_i of bit i (d doubles each). */
int kvb_index_pair(const kvb_index_instance *inst, size_t i, double *k, double *v);
/* |U| for bit string x (n bytes, 0/1). */
size_t kvb_index_count(const kvb_index_instance *inst, const unsigned char *x);
/* Alice: feeds U = {(k_i, v_i) : x_i = 1} into m in increasing i (m must have
 * d_key = d_value = d). Writes |U| to *u_size. An empty U feeds nothing. */
int kvb_index_alice(const kvb_index_instance *inst, const unsigned char *x, kvb_method *m,
                    size_t *u_size);
/* T = (1/40)·exp(r²/√d)/max{d·exp(r²/√d), |U|}, computed in the log domain. */
double kvb_index_threshold(const kvb_index_instance *inst, size_t u_size);
/* The same T from d, r and |U| alone: what a decoder that only sees the stream (the
 * "index_reduction" stream type, the runner's decode measure) uses. Premises as for the
 * instance (d >= 1, r > 0, checked where the stream is generated); |U| = 0 is allowed. */
double kvb_index_threshold_for(size_t d, double r, size_t u_size);
/* Bob's rule on an answer vector z (d values) for bit i: reads ⟨z, v_i⟩ (into *value when not
 * NULL) and decides *bit = [⟨z, v_i⟩ > T(|U|)]; |U| = 0 decides 0. kvb_index_bob is this rule on
 * the method's answer; the property checks also apply it to answers they perturb. */
int kvb_index_decide(const kvb_index_instance *inst, size_t i, size_t u_size, const double *z,
                     int *bit, double *value);
/* Bob: queries q_i = k_i, reads ⟨z, v_i⟩ (into *value when not NULL) and decides *bit.
 * With |U| = 0 nothing was streamed: Bob decides 0 (Attn of an empty stream is undefined). */
int kvb_index_bob(const kvb_index_instance *inst, kvb_method *m, size_t i, size_t u_size,
                  int *bit, double *value);

/* Exact Attn(q_i, K_U, V_U) for q_i = k_i, computed from the instance directly (a route
 * independent of the "exact" method: log-sum-exp over U in bit order), into z (d values);
 * *softmax_l2 = ‖softmax(K_U q_i/√d)‖₂ and *u_size = |U| (either may be NULL). With |U| = 0 the
 * attention is undefined: z = 0 and ‖softmax‖₂ = 0. Eq. (2) of 003 allows an answer within
 * ε·‖softmax‖₂·‖V_U‖_F of z, and ‖V_U‖_F = √|U| here (every v_j is a unit vector). */
int kvb_index_attention(const kvb_index_instance *inst, const unsigned char *x, size_t i,
                        double *z, double *softmax_l2, size_t *u_size);

typedef enum {
  KVB_INDEX_ERR_RANDOM = 0, /* a uniformly random direction, norm exactly `budget` */
  KVB_INDEX_ERR_ADVERSARIAL /* the worst error for Bob that the query model allows (below) */
} kvb_index_err_kind;
/* An error vector err (d values, ‖err‖₂ <= budget) that an answer meeting 003 eq. (2) may add
 * to the exact answer z = Attn(q_i, U) for budget = ε·‖softmax‖₂·‖V_U‖_F.
 * ADVERSARIAL: the algorithm sees the stream (x) and the query q_i = k̃_{π(i)₁}, which is the
 * same for all d bits of i's group, so it cannot know which of them Bob asks about (003 Lemma
 * C.6's proof: the error is fixed before b = π(i)₂ is drawn). It flips Bob's decision on as many
 * bits of the group as the budget allows: the flips cost |⟨z, v_j⟩ − T| (+ a relative 1e-9 so
 * the strict rule flips), cheapest first, while Σ cost² <= budget² — the L2-optimal choice.
 * Under the mutant KVB_INDEX_MUT_CLAIRVOYANT (either kind) the whole budget is spent against bit
 * i's own coordinate. `rng` is used by RANDOM only. */
int kvb_index_eq2_error(const kvb_index_instance *inst, const unsigned char *x, size_t i,
                        size_t u_size, const double *z, double budget, kvb_index_err_kind kind,
                        gsl_rng *rng, double *err);

/* The noise of 003 Lemma C.4 for bit i and query q_i = k_i:
 *   X = Σ_{j ≠ i, x_j = 1, π(j)₂ = π(i)₂} σ_j exp(⟨k_j, q_i⟩/√d)·σ_i
 * i.e. ⟨Σ_{(k,v)∈U\{(k_i,v_i)}} exp(⟨k,q_i⟩/√d) v, v_i⟩; *ui receives |U_i|. */
double kvb_index_noise(const kvb_index_instance *inst, const unsigned char *x, size_t i,
                       size_t *ui);

/* 003 Lemma C.3: E_{x,y ~ Unif{±r/√d}^d} exp(C⟨x,y⟩/√d) = cosh(C r²/d^{3/2})^d (with mutant
 * KVB_INDEX_MUT_C3_NO_POWER the wrong cosh(C r²/d)^d). Returns the log of it. */
double kvb_index_c3_log_closed_form(double C, double r, size_t d, kvb_index_mutant mutant);

#endif

/* balancekv_augmented.h — the augmented BalanceKV of 003 §4.3 (the needle-in-a-haystack result,
 * Fig. 4): "an augmented version of BALANCEKV that deterministically preserves a small set of
 * tokens whose key embeddings are strongly anti-correlated with the rest. The standard BALANCEKV
 * procedure is then applied to the remaining tokens within each layer." 003 gives no more; every
 * rule below is read from the authors' code, github.com/ksheth96/BalanceKV at 4ccee30:
 * src/balanced_walk.py, function balanced_walk_needle_detection (BWND below), called from
 * src/llama_forward.py, function manual_forward_llama_needle_detection (MFND), which
 * run_needle_in_haystack.py selects (greedy_generate(..., needle_detection=True)).
 *
 * The detector (BWND, branch `layer==1 and t==0`), per KV head, on the middle tokens (the
 * compressed region k[sink : n − window], MFND) of the model layer with 0-based index 1 (MFND
 * enumerates model.model.layers from 0 and calls the detector at `i==1`: the SECOND layer):
 *   - the middle is cut into blocks of b (round 0's block size; the tail block zero-padded);
 *   - token i of a block has the statistic  μ_i = (1/b)·Σ_{j=0}^{b−1} (1e-8 + ⟨k_i, k_j⟩), the
 *     sum over the b slots of its block, padding slots contributing 1e-8 + 0; the keys are the raw
 *     ones (RoPE'd, not centered: BWND's key_correlation reads key_sorted, not normal_keys);
 *   - i is flagged when NOT μ_i > 0 (BWND keeps `key_correlation_sum > threshold`, threshold
 *     0.0, as the unflagged mask), i.e. μ_i ≤ 0;
 *   - dilation: token i stays unflagged only if all of i−25 … i+25 are (BWND: the unflagged mask
 *     padded with 25 ones at each end, unfold(51), kept where the window's sum > 50, times the
 *     mask): every flag spreads ±25 tokens over the head's whole middle (across block
 *     boundaries); positions outside the middle count as unflagged.
 * The mask is computed once, at that layer, and MFND passes it to every later layer
 * (`needle_mask = needle_mask`, layers i > 1); layer 0 gets none (the plain walk). The same head
 * index of every layer reads the same mask (the middle has the same n tokens in every layer).
 *
 * The walk (BWND's sign loop): the kernel, centering, γ, c₀, τ, β and uniforms of balancekv_block
 * (balancekv_block.h), except that a flagged token's term is left out of every partial sum
 * (`kernel_ * signs * needle_mask_bw`); a flagged token still consumes its uniform (the whole
 * uniform tensor is drawn per round) and its sign becomes 0 (`signs = signs*needle_mask_bw`).
 *
 * The halving (BWND after the walk), over the head's whole current sequence, h = ⌊m/2⌋ kept:
 *   - when NO head has a flagged token (BWND: `torch.all(needle_mask_bw)`, over every head at
 *     once), balancekv_block's rule (kvb_bkvb_halve);
 *   - otherwise, in every head (also one without flags): the key is 3 for a flagged token, 2 for
 *     s = +1, 0 for s = −1 (`weight = signs; weight[zeros] += 2; weight += 1`), a stable sort by
 *     decreasing key keeps the first h — flagged first, then +1, then −1, each in position
 *     order — with multipliers 1 (flagged: `weight[weight_zeros] = 1`), 2 (+1) and 0 (−1).
 *     A kept −1 token therefore has weight 0 and drops out of attention (MFND: log weight −1e9,
 *     value zeroed); flagged tokens beyond h are dropped too (only when more than half the
 *     current sequence is flagged).
 *   Weights multiply across rounds; the flags of the kept tokens ride along
 *   (`needle_mask_bw.gather`), so a head with flags keeps the protected branch in every round.
 *
 * The estimator (MFND's decode step): the kept keys enter attention with bias log w (w > 0), their
 * values unweighted and zeroed where w = 0: z = [Σ_fr e^{s_i} v_i + Σ_S w_i e^{s_i} v_i] /
 * [Σ_fr e^{s_i} + Σ_S w_i e^{s_i}] — balancekv_block's "consistent" denominator (the only one
 * this method offers; the LongBench path, manual_forward_llama, divides values by 2^T instead).
 *
 * Differences from the authors' code, all documented readings:
 *   - block mean: balancekv_block centers a block by the mean of its REAL tokens (the authors'
 *     torch.mean includes the tail block's zero padding); equal whenever the middle length of a
 *     round is a multiple of b (the replay caches, tests/test_authors_replay.c), else only the tail
 *     block's centering differs. The detector's μ_i follows the authors (padding counted, /b);
 *   - arithmetic: double precision (the authors run bfloat16 keys, float32 signs); the kernel
 *     factor is (⟨w_i v_i, w_j v_j⟩ + c₀) without the authors' extra 1e-8 (balancekv_block);
 *   - the mask is computed from the prompt's layer-1 keys by the task runner (task_run.c) and
 *     handed to every compressed layer ≥ 1 (kvb_bkva_share); a method used alone runs the detector
 *     on its own keys (parameter detect = 1; one head: "any head flagged" is its own).
 */
#ifndef KVB_BALANCEKV_AUGMENTED_H
#define KVB_BALANCEKV_AUGMENTED_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "balancekv_block.h"
#include "method.h"

#define KVB_BKVA_DILATE 25    /* BWND: padding (25, 25), unfold 51 */
#define KVB_BKVA_OFFSET 1e-8  /* BWND: key_correlation = 1e-8 + K Kᵀ */

/* Mutants (deliberately wrong; for the tests and property checks only). */
enum {
  KVB_BKVA_MUT_STRICT = 1,         /* detector flags μ < 0 instead of μ ≤ 0 */
  KVB_BKVA_MUT_NO_DILATION = 2,    /* flags not dilated */
  KVB_BKVA_MUT_DILATE_24 = 4,      /* dilation ±24 instead of ±25 */
  KVB_BKVA_MUT_FLAGGED_IN_SUMS = 8, /* flagged tokens' signs enter the walk's partial sums */
  KVB_BKVA_MUT_NO_PROTECT = 16,    /* halving ignores the flags (balancekv_block's rule on the
                                      drawn signs) */
  KVB_BKVA_MUT_MASK_PER_LAYER = 32 /* every layer detects on its own keys (task runner) */
};

/* KVB_BKVA_MUT_* of a mutant name ("threshold_strict", "no_dilation", "dilation_24",
 * "flagged_in_sums", "no_protect", "mask_per_layer"); 0 otherwise or NULL. */
int kvb_bkva_flags_for(const char *mutant_name);

/* The detector of one head: K n×d (row-major), blocks of b. Writes flag[0..n) (1 = flagged,
 * protected) and, when nflag != NULL, the count. mutant: the detector's KVB_BKVA_MUT_* flags.
 * KVB_ENULL, KVB_EINVAL (n, d or b = 0), KVB_EDOM (a non-finite key). */
int kvb_bkva_detect(size_t n, size_t d, const double *K, size_t b, int mutant, unsigned char *flag,
                    size_t *nflag);

/* The same, with the smallest statistic μ_i of the head in *mu_min (how far the head is from
 * firing: it fires iff that is <= 0). */
int kvb_bkva_detect_stat(size_t n, size_t d, const double *K, size_t b, int mutant,
                         unsigned char *flag, size_t *nflag, double *mu_min);

/* The protected-first halving of m >= 2 signs s ∈ {+1, −1, 0} (0 = flagged): keeps h = ⌊m/2⌋,
 * flagged first, then +1, then −1, each in position order; mult 1, 2, 0. Returns h, 0 on bad
 * input. */
size_t kvb_bkva_halve_protected(size_t m, const int8_t *s, size_t *keep, double *mult);

/* Compresses H heads (K H×n×d, V H×n×dv) as BWND does: o as balancekv_block's core (b, T, γ, c₀,
 * τ, β; o->mutant and o->threads ignored), flags H×n (NULL: no flags; the plain walk of layer 0),
 * model_any nonzero when a head outside these H has a flag (the protected branch then runs in
 * every round; 0: the branch is decided from these H heads' flags, round by round), mutant the
 * walk's and halving's KVB_BKVA_MUT_* flags. u: NULL (draw from rng, balancekv_block's
 * order) or T arrays of H·⌊n/2^r⌋ uniforms. Writes idx, w (H × ⌊n/2^T⌋ each) and, when kflag !=
 * NULL, whether each kept token is a flagged one. Errors as kvb_bkvb_compress; nothing is written
 * on error. */
int kvb_bkva_compress(size_t H, size_t n, size_t d, size_t dv, const double *K, const double *V,
                      const kvb_bkvb_opts *o, const unsigned char *flags, int model_any,
                      int mutant, const double *const *u, gsl_rng *rng, size_t *idx, double *w,
                      unsigned char *kflag);

/* Method "balancekv_augmented" accessors. */
/* Hands the method the protection mask of its middle (n flags, 1 = protected) and whether any
 * head of the model has a flag (the halving branch): the task runner's shared layer-1 mask. The
 * mask is copied; it must match the middle's length when the method compresses. */
int kvb_bkva_share(kvb_method *m, const unsigned char *flags, size_t n, int any);
/* The mask the last compression used (NULL, 0 before; detect = 0 and no share: n = 0), the count
 * of flagged tokens and the branch bit. */
int kvb_bkva_mask(const kvb_method *m, const unsigned char **flags, size_t *n, size_t *nflag,
                  int *any);
/* The kept middle tokens: count, stream positions, weights (KVB_ESTATE if stale). */
int kvb_bkva_kept_set(const kvb_method *m, size_t *count, const size_t **pos, const double **w);

#endif

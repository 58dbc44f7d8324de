/* balancekv_block.h — the block-parallel practical variant of BalanceKV that the experiments of
 * 003 §4 / Appendix B (004 §4) ran, and its baseline. Where 003 App. B is silent (the walk's
 * kernel offset, the halving rule, the defaults) we follow the authors' code bit for bit:
 * github.com/ksheth96/BalanceKV, src/balanced_walk.py (function balanced_walk: the kernel with
 * const_denom = 0.025, the walk p = ½ − γ·Σ, the halving at c = max(c_neg, c_pos)) and
 * balancekv_press.py (BalanceKVPress: γ = 4, temp τ = 1, β = 0).
 *
 * This is NOT 003 Algorithm 1 (that is the exact reference, a separate method). It is:
 *   - per head the first f and the last w tokens kept exactly (003 App. B.1: "we retain the first
 *     256 embeddings and the recent ones"); the rounds run on the middle tokens;
 *   - T rounds. Round r works on the current sequence of m_r = ⌊m/2^r⌋ middle tokens (m = middle
 *     length): it cuts it into blocks of b (003 App. B "Implementation Detail"; the tail block is
 *     the one zero-padded), centers the keys of each block by the block mean k̃ = k − mean (003
 *     App. B.5 item 1: "our implementation shifts the keys by their average"), and walks
 *       K_ij = exp(τ·⟨k̃_i,k̃_j⟩/√d − β)·(⟨w_i v_i, w_j v_j⟩ + c0),
 *       s_0 = +1,  s_j = +1  iff  u_j < ½ − γ·Σ_{i<j} K_ij s_i       (sum in order i = 0..j−1)
 *     in every block of every head; then halves the whole head (all its blocks concatenated,
 *     padding dropped) keeping exactly h = ⌊m_r/2⌋ by the rule of balanced_walk.py (see
 *     kvb_bkvb_halve); weights multiply across rounds, so they lie in {1, 2, 4, …, 2^T};
 *   - the estimator over first/recent (weight 1) and the kept middle tokens S:
 *       z = [Σ_fr e^{s_i} v_i + Σ_S w_i e^{s_i} v_i] / [Σ_fr e^{s_i} + Σ_S D_i e^{s_i}],
 *     s_i = scale·⟨q, k_i⟩ on the ORIGINAL (uncentered) keys (block centering differs per block,
 *     so it is not the global shift attention is invariant to), D_i = 2^T ("paper", the
 *     experiments' denominator) or D_i = w_i ("consistent": the same weights as the numerator).
 *
 * Readings (003 and the authors' code leave these open; these are our choices, documented):
 *   - Padding. The zero rows pad only the tail of the last block of each round. The walk is causal
 *     (s_j reads i < j only), so padded rows placed after every real row cannot change any real
 *     sign; we therefore do not walk them at all, exclude them from the block mean (the mean is
 *     over the block's real tokens; with zeros included the tail block's centering would depend on
 *     b), and they never enter halving. A batched implementation that includes the zeros in the
 *     mean differs from this reference only in the tail block.
 *   - Uniforms. Round r consumes one array of H·m_r uniforms; head h, position p (in the round's
 *     order) reads u_r[h·m_r + p]. Positions that start a block read nothing (s_0 = +1). When no
 *     arrays are supplied they are drawn from the generator in exactly that order (round by
 *     round, head by head, position by position, including the unused block starts), so a run
 *     with a generator equals a run fed the same numbers as arrays, bit for bit.
 *   - Clipping. A step j ≥ 1 is "clipped" when p_j = ½ − γ·Σ K_ij s_i ≤ 0 or ≥ 1 (its sign is then
 *     forced); a NaN p_j (overflowing kernel: ∞ − ∞) is counted separately and gives s_j = −1.
 *   - Halving keeps the rule exactly even where it does not preserve the total weight (a prefix
 *     where one sign reaches h first is halved, the tail kept at ×1): Σ w is NOT an invariant;
 *     that is why the "paper" and "consistent" denominators differ and both are offered.
 *   - Streaming. The method interface is update/query; the paper compresses a prefill once. Here
 *     update() only stores the token; compression of the middle tokens [f, n − w) runs at the
 *     first query after the stream changed (or now, by kvb_bkvb_compress_now()), drawing fresh
 *     uniforms from cfg.rng. The method keeps the raw stream so it can recompress; memory() reports
 *     the compressed cache (f + w + kept tokens) as `vectors` and the real allocation as `bytes`.
 *   - T larger than ⌊log₂ m⌋ (some round would have fewer than 2 tokens) is bad input (KVB_EINVAL),
 *     detected at query time because m depends on the stream. T = 0 keeps every token: exact.
 *
 * Kernel products: the key and value Gram entries ⟨k̃_i, k̃_j⟩, ⟨w_i v_i, w_j v_j⟩, i < j, of a block
 * are computed by block_gram.h, each as one chain of fused multiply-adds over the coordinates in
 * order, with the same bits on every CPU and SIMD level (not BLAS, whose rounding depends on the
 * kernel it picks for the CPU; and faster at these small shapes). The oracle (props, loops in
 * plain double) sums differently and still gives the same kept sets: a sign changes only where
 * u_j is within rounding of p_j.
 *
 * Threads. A round's blocks are independent (each reads its own tokens and its own uniforms
 * u_r[h·m_r + start + j] and writes its own signs), so every round runs its H·⌈m_r/b⌉
 * (head, block) items on opts.threads workers (kvb_parallel_for), with per-worker scratch
 * allocated once per call; while a worker computes a block's products it prefetches the rows of
 * the block it will probably take next. Rounds are sequential (round r + 1 gathers in the order
 * round r's halving made). Every item does the same operations on the same numbers whichever
 * worker runs it, so the indices, weights and counters are identical for any thread count. The
 * float path evaluates expf 8 or 16 at a time where the CPU allows by the C library's own
 * algorithm, and only where it returns the library's bits (src/core/vexpf.h); the double path
 * calls exp. */
#ifndef KVB_BALANCEKV_BLOCK_H
#define KVB_BALANCEKV_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "method.h"

/* Mutant flags of the core (deliberately wrong; only for the property checks). The core is a
 * function, not a type: these are reached only through the mutants of the method
 * balancekv_block, mapped by kvb_bkvb_flags_for (README "Mutants"). */
enum {
  KVB_BKVB_MUT_NO_CENTER = 1,       /* keys not centered by the block mean */
  KVB_BKVB_MUT_KEEP_WRONG_SIDE = 2, /* halving keeps the tokens whose sign EQUALS the sign at c */
  KVB_BKVB_MUT_WEIGHT_NOT_DOUBLED = 4, /* weight-2 candidates keep ×1 */
  KVB_BKVB_MUT_SIGN_FLIP = 8,       /* walk pushes towards the partial sum: u < ½ + γ·Σ K s */
  KVB_BKVB_MUT_RANDOM_SIGNS = 16    /* p = ½: random signs, the control of every advantage claim */
};

typedef struct {
  size_t b;      /* block length, >= 1 */
  unsigned T;    /* rounds; kept middle tokens ⌊m/2^T⌋ */
  double gamma;  /* walk strength γ (4 in the authors' balancekv_press.py) */
  double c0;     /* kernel offset c₀ >= 0 (0.025) */
  double tau;    /* key temperature τ (1; 0.1 in the single-layer study) */
  double beta;   /* kernel shift β (0) */
  int mutant;    /* KVB_BKVB_MUT_* flags; 0 = faithful */
  int threads;   /* workers over (head, block) pairs; <= 0: kvb_threads_default(). The result is
                    identical for any value (each pair reads only its own uniforms). */
} kvb_bkvb_opts;

typedef struct {
  uint64_t steps;    /* walk steps j >= 1 (block starts are not steps) */
  uint64_t clipped0; /* steps with p <= 0 (sign forced to −1) */
  uint64_t clipped1; /* steps with p >= 1 (sign forced to +1) */
  uint64_t nan_p;    /* steps whose p was NaN (kernel overflow) */
  uint64_t exps;     /* kernel exponentials */
  /* Seconds per phase, summed over workers (so they add up to the CPU time, not the wall
   * time), read once per phase per block: t_gather (pack the block's keys and sum them, pack
   * w_i v_i, finiteness in round 0), t_center (divide by the length, subtract the mean),
   * t_gram (the two Gram products, block_gram.h), t_exp (the kernel factors: scale, exp, times
   * (Gv + c₀)), t_walk (the walk, and the per-head halving). Wall-clock readings: on a loaded
   * machine they include time the worker was descheduled. */
  double t_center, t_gram, t_exp, t_walk, t_gather;
} kvb_bkvb_stats;

/* Fills o with b = 256 (the largest block of 003 Fig. 3), T = 1, and the authors' code's γ = 4,
 * c₀ = 0.025, τ = 1, β = 0 (balancekv_press.py, balanced_walk.py); threads = 0 (all cores). */
void kvb_bkvb_opts_default(kvb_bkvb_opts *o);

/* Number of tokens kept per head from n: ⌊n/2^T⌋. */
size_t kvb_bkvb_kept(size_t n, unsigned T);

/* One halving (balanced_walk.py's rule) of a sequence of m >= 2 signs (+1/−1): with h = ⌊m/2⌋, for each
 * sign its first position where its running count equals h (0 if never), c = the larger, tokens
 * at positions <= c whose sign differs from s[c] are candidates ×2, tokens after c candidates ×1;
 * candidates ordered ×2 first then ×1 (each in position order); the first h are kept.
 * Writes keep[0..h) (positions, in the new order) and mult[0..h) (2 or 1). Returns h, or 0 on
 * bad input (m < 2, NULL, a sign not ±1). `mutant` takes the halving flags. */
size_t kvb_bkvb_halve(size_t m, const int8_t *s, int mutant, size_t *keep, double *mult);

/* KVB_BKVB_MUT_* flags of a balancekv_block mutant name: "no_center", "keep_wrong_side",
 * "weight_not_doubled", "sign_flip", "random_signs"; 0 for any other name (first_not_exact is
 * the method's own, not the core's) or NULL. */
int kvb_bkvb_flags_for(const char *mutant_name);

/* Compresses H heads. K: H×n×d, V: H×n×dv, row-major (head h token i at (h·n + i)·d).
 * u: NULL (draw from rng) or T arrays, u[r] holding H·⌊n/2^r⌋ uniforms in [0, 1).
 * Writes idx: H×kept token indices in [0, n) (head-local, in the final round's order) and
 * w: H×kept weights. st (may be NULL) accumulates counters. Errors: KVB_ENULL, KVB_EINVAL
 * (b = 0, n < 2^T, c0 < 0 or not finite, γ/τ/β not finite, H = 0, d = 0, dv = 0), KVB_EDOM (a
 * non-finite key, value or uniform, or a uniform outside [0, 1)), KVB_ENOMEM. Nothing is written
 * on error. */
int kvb_bkvb_compress(size_t H, size_t n, size_t d, size_t dv, const double *K, const double *V,
                      const kvb_bkvb_opts *o, const double *const *u, gsl_rng *rng, size_t *idx,
                      double *w, kvb_bkvb_stats *st);

/* The same in float32 (keys, values, Gram products, kernel and walk sum in single precision;
 * expf; uniforms and p compared in double; weights exact). For speed, not a reference:
 * signs may differ from the double path where p is within float rounding of u. */
int kvb_bkvb_compress_f32(size_t H, size_t n, size_t d, size_t dv, const float *K, const float *V,
                          const kvb_bkvb_opts *o, const double *const *u, gsl_rng *rng,
                          size_t *idx, double *w, kvb_bkvb_stats *st);


/* The core's options from the method's parameters (b, T, gamma, c0, tau, beta, threads; the rest
 * default): one reading for the CPU method and its device version (src/gpu/gpu_methods.c). */
void kvb_bkvb_opts_from_params(const kvb_params *p, kvb_bkvb_opts *o);

/* Method "balancekv_block" accessors. */
/* Compresses the current middle now (otherwise the next query does). */
int kvb_bkvb_compress_now(kvb_method *m);
/* The compressed middle: count, indices (stream positions) and weights; KVB_ESTATE if stale. */
int kvb_bkvb_kept_set(const kvb_method *m, size_t *count, const size_t **pos, const double **w);
/* Counters of every compression so far. */
int kvb_bkvb_get_stats(const kvb_method *m, kvb_bkvb_stats *st);
/* Both estimators for q (compressing if stale): the paper's and the consistent denominator. */
int kvb_bkvb_query_both(kvb_method *m, const double *q, size_t d_key, double *z_paper,
                        double *z_consistent, size_t d_value);

#endif

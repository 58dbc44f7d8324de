/* kcenter.h — greedy k-center (farthest-first traversal) and a clusterability profile of a
 * point set: the tools the experiment sections of 000/001 use (000 §3.1 and 001 §3.1 pick
 * "cluster center points through the greedy k-center algorithm" [Dyer & Frieze 1985]; the
 * practical method of 000 §3.2 / 001 §4.1 keeps k such centers, see method_recent_kcenter.c).
 *
 * Greedy k-center (Gonzalez 1985; Dyer & Frieze 1985): start from one point, then repeatedly
 * add the point farthest (Euclidean) from the centers chosen so far. With r_j the covering
 * radius max_i min_{c ≤ j} ‖x_i − x_c‖₂ after j centers, r_j ≤ 2·OPT_j, where OPT_j is the
 * smallest covering radius of any j centers chosen among the points (the discrete k-center
 * problem); props/kcenter.c checks this against a brute-forced optimum on tiny instances.
 * Because every prefix of the traversal is itself the greedy answer for a smaller k, one run
 * with k centers gives the whole radius-vs-k curve.
 *
 * Choices where the sources leave freedom (documented so results are reproducible):
 *   - first center: the caller passes its index (`first`); kvb_clusterability_profile and the
 *     recent_kcenter method use index 0, the oldest token.
 *   - ties in the farthest point go to the smallest index; a point already chosen is never
 *     chosen again. With duplicates, once every point is covered (radius 0) the remaining
 *     centers are the unchosen points in increasing index order (radius stays 0).
 *   - k ≤ n is required (k > n is KVB_EINVAL, not silently truncated).
 *
 * m′(δ) is the number of clusters the online δ-threshold rule of 000 Alg. 1 lines 12-13, 20-21
 * opens on the points in the given order: a point opens a cluster (becomes a representative)
 * unless some existing representative lies within distance ≤ δ. Which representative it joins
 * (line 12's nearest; 001 numbers these lines one lower) does not change the count, since representatives never move; so this is
 * exactly kvb_subgen_num_clusters after feeding the same keys to SubGen with the same δ
 * (tested in tests/test_kcenter.c and props/kcenter.c).
 *
 * All functions validate their input (NULL, zero sizes, k out of range, NaN/Inf, δ ≤ 0) and on
 * error return a KVB_* status with a message, writing nothing to the outputs. */
#ifndef KVB_KCENTER_H
#define KVB_KCENTER_H

#include <stddef.h>

/* Greedy k-center on n points X (n×d row-major), starting from point `first` (< n).
 * centers[j] (k entries): the j-th chosen index, selection order; radius[j] (k entries, may be
 * NULL): the covering radius with centers[0..j]. Work O(n·k·d), extra memory O(n). */
int kvb_kcenter_greedy(size_t n, size_t d, const double *X, size_t k, size_t first,
                       size_t *centers, double *radius);

/* m′(δ): clusters opened by the online threshold rule (000 Alg. 1 line 13, = 001 line 12: ≤ δ joins) on the
 * points in order. */
int kvb_threshold_clusters(size_t n, size_t d, const double *X, double delta, size_t *mprime);

/* Clusterability profile: radius[j] = greedy k-center covering radius with j+1 centers
 * (j < kmax, first center index 0) and mprime[i] = m′(deltas[i]) for i < ndelta.
 * Either part may be skipped (kmax = 0 with radius NULL; ndelta = 0 with deltas/mprime NULL). */
int kvb_clusterability_profile(size_t n, size_t d, const double *X, size_t kmax,
                               double *radius, size_t ndelta, const double *deltas,
                               size_t *mprime);

/* ---- For the property checks only (deliberately wrong variants; mutant.h). Greedy k-center is
 * a function, not a type: its variant is selected through the mutant of the type that owns it
 * (the kcenter probe's "nearest", recent_kcenter's "nearest_centers"), mapped here. ---- */
typedef enum {
  KVB_KCENTER_FAITHFUL = 0, /* farthest-first, as above */
  KVB_KCENTER_MUT_NEAREST = 1 /* adds the unchosen point NEAREST to the centers (wrong) */
} kvb_kcenter_variant;

/* kvb_kcenter_greedy with a variant switch; FAITHFUL is identical to kvb_kcenter_greedy. */
int kvb_kcenter_greedy_variant(size_t n, size_t d, const double *X, size_t k, size_t first,
                               size_t *centers, double *radius, kvb_kcenter_variant variant);
/* The variant an owning type's mutant selects: "nearest" (kcenter probe) and
 * "nearest_centers" (recent_kcenter) give KVB_KCENTER_MUT_NEAREST; any other name or NULL
 * gives KVB_KCENTER_FAITHFUL. */
kvb_kcenter_variant kvb_kcenter_variant_for(const char *mutant_name);

#endif

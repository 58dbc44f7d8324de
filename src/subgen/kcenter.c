/* kcenter.c — greedy k-center and the clusterability profile (see kcenter.h). */
#include "kcenter.h"
#include "attention.h"
#include "kvb_error.h"
#include "method.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int check_points(const char *what, size_t n, size_t d, const double *X) {
  if (!X) return KVB_ERROR(KVB_ENULL, "%s: point array is NULL", what);
  if (n == 0 || d == 0)
    return KVB_ERROR(KVB_EINVAL, "%s: need n >= 1 points of dimension d >= 1 (got n = %zu, d = %zu)",
                     what, n, d);
  if (n > SIZE_MAX / d) return KVB_ERROR(KVB_EINVAL, "%s: n·d overflows", what);
  for (size_t i = 0; i < n; i++)
    if (!kvb_all_finite(X + i * d, d))
      return KVB_ERROR(KVB_EDOM, "%s: point %zu has a NaN or Inf component", what, i);
  return KVB_OK;
}

int kvb_kcenter_greedy_variant(size_t n, size_t d, const double *X, size_t k, size_t first,
                               size_t *centers, double *radius, kvb_kcenter_variant variant) {
  int rc = check_points("kcenter", n, d, X);
  if (rc) return rc;
  if (!centers) return KVB_ERROR(KVB_ENULL, "kcenter: centers output is NULL");
  if (k == 0) return KVB_ERROR(KVB_EINVAL, "kcenter: k must be >= 1");
  if (k > n) return KVB_ERROR(KVB_EINVAL, "kcenter: k = %zu exceeds the n = %zu points", k, n);
  if (first >= n)
    return KVB_ERROR(KVB_EINVAL, "kcenter: first center %zu out of range (n = %zu)", first, n);
  if (variant != KVB_KCENTER_FAITHFUL && variant != KVB_KCENTER_MUT_NEAREST)
    return KVB_ERROR(KVB_EINVAL, "kcenter: unknown variant %d", (int)variant);

  /* dist[i] = min over chosen centers of ‖x_i − x_c‖₂; chosen[i] marks centers. */
  double *dist = malloc(n * sizeof *dist);
  unsigned char *chosen = calloc(n, 1);
  if (!dist || !chosen) {
    free(dist);
    free(chosen);
    return KVB_ERROR(KVB_ENOMEM, "kcenter: out of memory for n = %zu points", n);
  }
  size_t c = first;
  for (size_t j = 0; j < k; j++) {
    chosen[c] = 1;
    centers[j] = c;
    const double *xc = X + c * d;
    double r = 0;
    for (size_t i = 0; i < n; i++) {
      double di = kvb_dist2(X + i * d, xc, d);
      if (j == 0 || di < dist[i]) dist[i] = di;
      if (dist[i] > r) r = dist[i];
    }
    if (radius) radius[j] = r;
    if (j + 1 == k) break;
    /* Next center: the unchosen point farthest from the centers (ties: smallest index). */
    size_t best = n;
    for (size_t i = 0; i < n; i++) {
      if (chosen[i]) continue;
      if (best == n) {
        best = i;
        continue;
      }
      int better = variant == KVB_KCENTER_MUT_NEAREST ? dist[i] < dist[best] : dist[i] > dist[best];
      if (better) best = i;
    }
    c = best; /* k ≤ n guarantees an unchosen point exists */
  }
  free(dist);
  free(chosen);
  return KVB_OK;
}

int kvb_kcenter_greedy(size_t n, size_t d, const double *X, size_t k, size_t first,
                       size_t *centers, double *radius) {
  return kvb_kcenter_greedy_variant(n, d, X, k, first, centers, radius, KVB_KCENTER_FAITHFUL);
}

/* 000 Alg. 1 lines 12-13 and 20-21 (= 001 lines 11-12, 19-20), counting only: the representatives are the points that
 * found no representative within ≤ δ. */
static int count_clusters(size_t n, size_t d, const double *X, double delta, size_t *reps,
                          size_t *mprime) {
  size_t mc = 0;
  for (size_t i = 0; i < n; i++) {
    const double *x = X + i * d;
    int joins = 0;
    for (size_t r = 0; r < mc && !joins; r++) joins = kvb_dist2(X + reps[r] * d, x, d) <= delta;
    if (!joins) reps[mc++] = i;
  }
  *mprime = mc;
  return KVB_OK;
}

static int check_delta(double delta) {
  if (!(delta > 0) || !isfinite(delta))
    return KVB_ERROR(KVB_EINVAL, "threshold clusters: δ must be finite and > 0 (got %g)", delta);
  return KVB_OK;
}

int kvb_threshold_clusters(size_t n, size_t d, const double *X, double delta, size_t *mprime) {
  int rc = check_points("threshold clusters", n, d, X);
  if (rc) return rc;
  if (!mprime) return KVB_ERROR(KVB_ENULL, "threshold clusters: output is NULL");
  if ((rc = check_delta(delta))) return rc;
  size_t *reps = malloc(n * sizeof *reps);
  if (!reps) return KVB_ERROR(KVB_ENOMEM, "threshold clusters: out of memory (n = %zu)", n);
  count_clusters(n, d, X, delta, reps, mprime);
  free(reps);
  return KVB_OK;
}

int kvb_clusterability_profile(size_t n, size_t d, const double *X, size_t kmax,
                               double *radius, size_t ndelta, const double *deltas,
                               size_t *mprime) {
  int rc = check_points("clusterability profile", n, d, X);
  if (rc) return rc;
  if (kmax > 0 && !radius) return KVB_ERROR(KVB_ENULL, "clusterability profile: radius is NULL");
  if (kmax > n)
    return KVB_ERROR(KVB_EINVAL, "clusterability profile: kmax = %zu exceeds n = %zu", kmax, n);
  if (ndelta > 0 && (!deltas || !mprime))
    return KVB_ERROR(KVB_ENULL, "clusterability profile: deltas or mprime is NULL");
  for (size_t i = 0; i < ndelta; i++)
    if ((rc = check_delta(deltas[i]))) return rc;
  if (kmax == 0 && ndelta == 0)
    return KVB_ERROR(KVB_EINVAL, "clusterability profile: nothing requested (kmax = ndelta = 0)");

  /* Compute into scratch first so an allocation failure leaves the outputs untouched. */
  size_t *centers = malloc((kmax ? kmax : 1) * sizeof *centers);
  size_t *reps = malloc(n * sizeof *reps);
  double *rad = malloc((kmax ? kmax : 1) * sizeof *rad);
  size_t *mp = malloc((ndelta ? ndelta : 1) * sizeof *mp);
  if (!centers || !reps || !rad || !mp) {
    free(centers);
    free(reps);
    free(rad);
    free(mp);
    return KVB_ERROR(KVB_ENOMEM, "clusterability profile: out of memory (n = %zu)", n);
  }
  if (kmax > 0) rc = kvb_kcenter_greedy(n, d, X, kmax, 0, centers, rad);
  for (size_t i = 0; !rc && i < ndelta; i++) count_clusters(n, d, X, deltas[i], reps, &mp[i]);
  if (!rc) {
    for (size_t j = 0; j < kmax; j++) radius[j] = rad[j];
    for (size_t i = 0; i < ndelta; i++) mprime[i] = mp[i];
  }
  free(centers);
  free(reps);
  free(rad);
  free(mp);
  return rc;
}

kvb_kcenter_variant kvb_kcenter_variant_for(const char *mutant_name) {
  if (mutant_name &&
      (strcmp(mutant_name, "nearest") == 0 || strcmp(mutant_name, "nearest_centers") == 0))
    return KVB_KCENTER_MUT_NEAREST;
  return KVB_KCENTER_FAITHFUL;
}

/* walk.c — Self-Balancing Walk, 003 Algorithm 3 (see walk.h). */
#include "walk.h"
#include "attention.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double kvb_walk_paper_c(size_t n, double delta) { return 30.0 * log((double)n / delta); }

double kvb_walk_p(double corr, double c, unsigned flags) {
  if (flags & KVB_WALK_MUT_RANDOM_SIGNS) return 0.5;               /* control: no balancing */
  if (flags & KVB_WALK_MUT_SIGN) return 0.5 + corr / (2.0 * c); /* mutant: wrong sign */
  return 0.5 - corr / (2.0 * c);                                  /* 003 Alg. 3 line 8 */
}

int kvb_walk_step(double corr, double c, double u, unsigned flags, int *eps) {
  int fail = fabs(corr) > c && !(flags & KVB_WALK_MUT_NOFAIL); /* line 5 */
  double p = kvb_walk_p(corr, c, flags);
  if (p < 0) p = 0; /* only reachable when |corr| > c (FAIL) or under a mutant */
  if (p > 1) p = 1;
  *eps = (u < p) ? 1 : -1; /* line 9 */
  return fail ? KVB_EFAIL : KVB_OK;
}

static int check_common(size_t n, double c, const double *unif, gsl_rng *rng, int *eps) {
  if (!eps || (!unif && !rng))
    return KVB_ERROR(KVB_ENULL, "walk: eps, or both uniforms and rng, NULL");
  if (!(c > 0) || !isfinite(c)) return KVB_ERROR(KVB_EINVAL, "walk: constant c = %g must be > 0", c);
  if (unif)
    for (size_t i = 0; i < n; i++)
      if (!(unif[i] >= 0 && unif[i] < 1))
        return KVB_ERROR(KVB_EINVAL, "walk: uniform %zu = %g not in [0,1)", i, unif[i]);
  return KVB_OK;
}

int kvb_walk_vectors(size_t n, size_t dim, const double *U, double r, double c,
                     const double *unif, gsl_rng *rng, unsigned flags, int *eps, uint64_t *fails) {
  int rc = check_common(n, c, unif, rng, eps);
  if (rc) return rc;
  if (n && (!U || dim == 0)) return KVB_ERROR(KVB_ENULL, "walk: no vectors");
  if (!(r > 0) || !isfinite(r)) return KVB_ERROR(KVB_EINVAL, "walk: radius r = %g must be > 0", r);
  for (size_t i = 0; i < n; i++) {
    if (!kvb_all_finite(U + i * dim, dim))
      return KVB_ERROR(KVB_EDOM, "walk: vector %zu has a NaN or Inf component", i);
    double nu = kvb_norm2(U + i * dim, dim);
    if (nu > r * (1 + 1e-12))
      return KVB_ERROR(KVB_EINVAL, "walk: ‖u_%zu‖ = %.17g exceeds r = %.17g", i, nu, r);
  }
  double *w = calloc(dim ? dim : 1, sizeof *w);
  if (!w) return KVB_ERROR(KVB_ENOMEM, "walk: out of memory");
  uint64_t nf = 0;
  double r2 = r * r;
  for (size_t i = 0; i < n; i++) {
    const double *u = U + i * dim;
    double corr = kvb_dot(w, u, dim) / r2; /* line 5: Σ_{U+}<u,u_i> − Σ_{U−}<u,u_i> */
    double x = unif ? unif[i] : gsl_rng_uniform(rng);
    if (kvb_walk_step(corr, c, x, flags, &eps[i]) == KVB_EFAIL) nf++;
    for (size_t j = 0; j < dim; j++) w[j] += eps[i] * u[j]; /* line 10 */
  }
  free(w);
  if (fails) *fails = nf;
  return nf ? KVB_EFAIL : KVB_OK;
}

int kvb_walk_gram_rows(size_t n, kvb_walk_row_fn row, void *ctx, double *buf, double c,
                       const double *unif, gsl_rng *rng, unsigned flags, int *eps,
                       uint64_t *fails) {
  int rc = check_common(n, c, unif, rng, eps);
  if (rc) return rc;
  if (n && (!row || !buf)) return KVB_ERROR(KVB_ENULL, "walk: no Gram rows");
  uint64_t nf = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && (rc = row(ctx, i, buf)) != KVB_OK) return rc;
    double corr = 0;
    for (size_t j = 0; j < i; j++) corr += eps[j] * buf[j]; /* line 5 */
    double x = unif ? unif[i] : gsl_rng_uniform(rng);
    if (kvb_walk_step(corr, c, x, flags, &eps[i]) == KVB_EFAIL) nf++;
  }
  if (fails) *fails = nf;
  return nf ? KVB_EFAIL : KVB_OK;
}

typedef struct {
  const double *G;
  size_t n;
} gram_rows;

static int copy_row(void *ctx, size_t i, double *buf) {
  const gram_rows *g = ctx;
  memcpy(buf, g->G + i * g->n, i * sizeof *buf);
  return KVB_OK;
}

int kvb_walk_gram(size_t n, const double *G, double c, const double *unif, gsl_rng *rng,
                  unsigned flags, int *eps, uint64_t *fails) {
  int rc = check_common(n, c, unif, rng, eps);
  if (rc) return rc;
  if (n && !G) return KVB_ERROR(KVB_ENULL, "walk: Gram matrix NULL");
  double *buf = malloc((n ? n : 1) * sizeof *buf);
  if (!buf) return KVB_ERROR(KVB_ENOMEM, "walk: out of memory for n = %zu", n);
  gram_rows g = {G, n};
  rc = kvb_walk_gram_rows(n, copy_row, &g, buf, c, unif, rng, flags, eps, fails);
  free(buf);
  return rc;
}

int kvb_walk_output_sign(size_t n, const int *eps, unsigned flags) {
  size_t plus = 0;
  for (size_t i = 0; i < n; i++) plus += eps[i] > 0;
  int s = (plus <= n - plus) ? 1 : -1; /* line 12 */
  return (flags & KVB_WALK_MUT_KEEP_LARGER) ? -s : s;
}

unsigned kvb_walk_flags_for(const char *name) {
  if (!name) return 0;
  if (strcmp(name, "walk_sign") == 0) return KVB_WALK_MUT_SIGN;
  if (strcmp(name, "walk_nofail") == 0) return KVB_WALK_MUT_NOFAIL;
  if (strcmp(name, "keep_larger") == 0) return KVB_WALK_MUT_KEEP_LARGER;
  if (strcmp(name, "random_signs") == 0) return KVB_WALK_MUT_RANDOM_SIGNS;
  return 0;
}

/* real_method_error.c — a method's mean error on one real cache (real_method_error.h). */
#include "real_method_error.h"

#include <math.h>

double rme_mean_error(prop_ctx *ctx, const char *name, int under_test,
                      const char *const *settings, uint64_t sub, const rme_cache *c) {
  kvb_params p;
  kvb_params_init(&p);
  for (const char *const *a = settings; *a; a++) kvb_params_parse(&p, *a);
  gsl_rng *r = prop_rng(ctx, sub);
  kvb_method_config cfg = {c->d, c->d, c->scale, r};
  kvb_method *m = NULL;
  if (under_test) m = prop_method(ctx, name, &cfg, &p);
  else if (kvb_method_alloc(name, &cfg, &p, &m))
    prop_check(ctx, 0, "alloc %s: %s", name, kvb_strerror_last());
  double tot = NAN;
  if (m) {
    tot = 0;
    for (size_t i = 0; i < c->P; i++)
      kvb_method_update(m, c->K + i * c->d, c->d, c->V + i * c->d, c->d);
    double z[512];
    int nh = c->nh > 0 ? c->nh : 3;
    for (int h = 0; h < nh && h < 4 && isfinite(tot); h++)
      for (size_t j = 0; j < c->nq; j++) {
        kvb_errors er;
        if (c->d > 512 ||
            kvb_method_query(m, c->Q[h] + (c->P + j) * c->d, c->d, z, c->d) ||
            kvb_measure_errors(&c->xs[h * c->xs_stride + j], z, c->d, &er)) {
          tot = NAN;
          break;
        }
        tot += er.rel_error / ((double)nh * (double)c->nq);
      }
  }
  kvb_method_free(m), gsl_rng_free(r);
  return tot;
}

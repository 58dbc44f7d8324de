/* subgen_uniforms.c — see subgen_uniforms.h. */
#include "subgen_uniforms.h"
#include "kvb_error.h"

#include <string.h>

#include <gsl/gsl_rng.h>

extern const kvb_method_type kvb_method_subgen;

typedef struct {
  const double *u;
  size_t n, i;
} feed_state;

static void feed_set(void *vs, unsigned long seed) {
  (void)seed;
  memset(vs, 0, sizeof(feed_state));
}
static double feed_double(void *vs) {
  feed_state *f = vs;
  double x = f->i < f->n ? f->u[f->i] : 0.0;
  f->i++;
  return x;
}
static unsigned long feed_get(void *vs) { return (unsigned long)(feed_double(vs) * 4294967296.0); }

static const gsl_rng_type feed_type = {"kvb_feed", 0xffffffffUL, 0, sizeof(feed_state), feed_set, feed_get,
                                       feed_double};

int kvb_subgen_update_uniforms(kvb_method *m, const double *k, const double *v, const double *u,
                               size_t nu, size_t *used) {
  if (!m || !u) return KVB_ERROR(KVB_ENULL, "subgen update_uniforms: NULL argument");
  if (m->type != &kvb_method_subgen) return KVB_ERROR(KVB_EINVAL, "subgen update_uniforms: not a subgen method");
  for (size_t i = 0; i < nu; i++)
    if (!(u[i] >= 0 && u[i] < 1))
      return KVB_ERROR(KVB_EDOM, "subgen update_uniforms: u[%zu] = %g not in [0, 1)", i, u[i]);
  gsl_rng *feed = gsl_rng_alloc(&feed_type);
  if (!feed) return KVB_ERROR(KVB_ENOMEM, "subgen update_uniforms: out of memory");
  feed_state *f = feed->state;
  f->u = u, f->n = nu, f->i = 0;
  gsl_rng *own = m->rng;
  m->rng = feed;
  int rc = kvb_method_update(m, k, m->d_key, v, m->d_value);
  m->rng = own;
  size_t drawn = f->i;
  gsl_rng_free(feed);
  if (used) *used = drawn;
  if (!rc && drawn > nu)
    return KVB_ERROR(KVB_ERANGE, "subgen update_uniforms: the update drew %zu uniforms, %zu supplied", drawn, nu);
  return rc;
}

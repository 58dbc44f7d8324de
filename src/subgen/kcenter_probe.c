/* probe_kcenter.c — the "kcenter" probe (probe.h): greedy k-center covering radius of the
 * first j keys or values (000 §3.1; the clusterability of keys vs values of 000 Fig. 1, whose
 * t-SNE view of Llama-2 caches marks k = 16 greedy centers). Deterministic: draws nothing.
 *
 * Readings: the first center is token 0 (kcenter.h); with k >= j every point is a center and
 * the radius is 0; radius_rel divides by the one-center radius (the largest distance from
 * token 0), so streams of any scale, keys and values, share one axis (0/0, all points equal,
 * reads 0). */
#include "probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kcenter.h"
#include "kvb_error.h"

static const kvb_param_spec kcenter_params[] = {
    {"on", KVB_PARAM_STRING, 0, 0, 0, "keys", "\"keys\" or \"values\""},
    {"centers", KVB_PARAM_INT, NAN, 1, 1e9, NULL, "k: greedy k-center centers (000 §3.1; Fig. 1 uses 16)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec kcenter_mutants[] = {
    {"nearest", "greedy adds the unchosen point NEAREST to the centers instead of the farthest "
                "(000 §3.1; kvb_kcenter_variant_for)"},
    {NULL, NULL}};

static int run_kcenter(const kvb_probe *pr, const kvb_stream *s, const kvb_params *p,
                       const kvb_param_spec *sp, gsl_rng *rng, size_t nq, const size_t *js,
                       double *out) {
  (void)rng;
  kvb_kcenter_variant variant = kvb_kcenter_variant_for(kvb_probe_mutant_name(pr));
  const char *on = kvb_params_get_str(p, sp, "on");
  int keys = strcmp(on, "keys") == 0;
  if (!keys && strcmp(on, "values") != 0)
    return KVB_ERROR(KVB_EINVAL, "kcenter probe: on must be \"keys\" or \"values\", got \"%s\"", on);
  size_t dim = keys ? s->d_key : s->d_value, k = (size_t)kvb_params_get(p, sp, "centers");
  const double *X = keys ? s->K : s->V;
  size_t kmax = k < js[nq - 1] ? k : js[nq - 1];
  size_t *cent = malloc(kmax * sizeof *cent);
  double *rad = malloc(kmax * sizeof *rad);
  int st = cent && rad ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "kcenter probe: out of memory");
  for (size_t a = 0; !st && a < nq; a++) {
    size_t j = js[a], kk = k < j ? k : j;
    st = kvb_kcenter_greedy_variant(j, dim, X, kk, 0, cent, rad, variant);
    if (st) break;
    double *o = out + a * 2;
    o[0] = rad[kk - 1];
    o[1] = rad[0] > 0 ? rad[kk - 1] / rad[0] : 0;
  }
  free(cent);
  free(rad);
  return st;
}

const kvb_probe_type kvb_probe_kcenter = {
    "kcenter",
    "greedy k-center covering radius of the first j keys or values (clusterability)",
    "000 §3.1, Fig. 1 (keys more clusterable than values); 001 §3.1",
    kcenter_params,
    kcenter_mutants,
    {"radius", "radius_rel", NULL},
    "radius = max_i min_c ‖x_i − x_c‖ over the first j points with k greedy centers;\n"
    "radius_rel = radius / (the one-center radius)",
    run_kcenter};

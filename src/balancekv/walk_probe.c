/* probe_walk.c — the "walk" probe (probe.h): discrepancy of the Self-Balancing Walk (003
 * Alg. 3) run online over the stream's keys or values, or of independent random signs.
 *
 * Draw order (from the unit's rng): the direction g (uniform on the unit sphere), then the
 * signs: for "walk", one uniform per step inside kvb_walk_vectors; for "random", one uniform
 * per step, ε = +1 exactly when it is < ½.
 *
 * Readings:
 *   - the walk is given the whole stream length N = s->n as its n (Alg. 3 line 1: "stream of
 *     ≤ n vectors"), so c = 30·log(N/δ) (line 2) is the same at every query position j;
 *   - r (line 1's radius) defaults to the largest ‖u_i‖ over the vectors walked;
 *   - the bound column is Theorem A.1's O(log(n/δ)·max‖u_i‖·‖u‖) with the O read as the walk's
 *     own c = 30, i.e. c·r for the unit direction g — the same reading props/balancekv_walk.c
 *     asserts. Random signs have no such bound: their D grows like √j. */
#include "probe.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "kvb_error.h"
#include "walk.h"

static const kvb_param_spec walk_params[] = {
    {"signs", KVB_PARAM_STRING, 0, 0, 0, "walk", "\"walk\": 003 Alg. 3; \"random\": independent fair signs"},
    {"on", KVB_PARAM_STRING, 0, 0, 0, "keys", "\"keys\" or \"values\": the vectors u_i walked"},
    {"c", KVB_PARAM_REAL, 0, 0, 1e300, NULL, "walk constant; 0 = 30·log(n/δ) (003 Alg. 3 line 2)"},
    {"delta", KVB_PARAM_REAL, 1e-3, 1e-300, 0.999999, NULL, "failure probability δ (003 Alg. 3 line 1)"},
    {"r", KVB_PARAM_REAL, 0, 0, 1e300, NULL, "radius r >= every ‖u_i‖; 0 = the largest ‖u_i‖"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static int run_walk(const kvb_probe *pr, const kvb_stream *s, const kvb_params *p,
                    const kvb_param_spec *sp, gsl_rng *rng, size_t nq, const size_t *js,
                    double *out) {
  (void)pr; /* no mutants: random signs are the parameter signs = "random" */
  const char *signs = kvb_params_get_str(p, sp, "signs"), *on = kvb_params_get_str(p, sp, "on");
  int walk = strcmp(signs, "walk") == 0;
  if (!walk && strcmp(signs, "random") != 0)
    return KVB_ERROR(KVB_EINVAL, "walk probe: signs must be \"walk\" or \"random\", got \"%s\"", signs);
  int keys = strcmp(on, "keys") == 0;
  if (!keys && strcmp(on, "values") != 0)
    return KVB_ERROR(KVB_EINVAL, "walk probe: on must be \"keys\" or \"values\", got \"%s\"", on);
  size_t dim = keys ? s->d_key : s->d_value, n = js[nq - 1];
  const double *U = keys ? s->K : s->V;
  double delta = kvb_params_get(p, sp, "delta"), c = kvb_params_get(p, sp, "c");
  double r = kvb_params_get(p, sp, "r"), rmax = 0;
  for (size_t i = 0; i < n; i++) rmax = fmax(rmax, kvb_norm2(U + i * dim, dim));
  if (r == 0) r = rmax;
  if (r < rmax)
    return KVB_ERROR(KVB_EINVAL, "walk probe: r = %g is below the largest ‖u_i‖ = %g (003 Alg. 3 line 1)",
                     r, rmax);
  if (r == 0) return KVB_ERROR(KVB_EINVAL, "walk probe: every vector walked is zero");
  if (c == 0) c = kvb_walk_paper_c(s->n, delta);
  double *g = malloc(dim * sizeof *g), *w = calloc(dim, sizeof *w);
  int *eps = malloc(n * sizeof *eps);
  uint64_t *fails_at = calloc(n, sizeof *fails_at);
  int st = g && w && eps && fails_at ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "walk probe: out of memory");
  if (!st) {
    kvb_rand_sphere(rng, g, dim, 1.0);
    if (walk) {
      /* One step at a time so the FAIL count is known at every prefix; the same draws and
       * signs as one kvb_walk_vectors call (the walk is online: step i sees only u_1..u_i). */
      double *unif = malloc(n * sizeof *unif);
      if (!unif) st = KVB_ERROR(KVB_ENOMEM, "walk probe: out of memory");
      for (size_t i = 0; !st && i < n; i++) unif[i] = gsl_rng_uniform(rng);
      if (!st) {
        uint64_t f = 0;
        int ws = kvb_walk_vectors(n, dim, U, r, c, unif, NULL, 0, eps, &f);
        if (ws && ws != KVB_EFAIL) st = ws;
        /* per-prefix FAIL counts, recomputed from Alg. 3 line 5 on the returned signs */
        double *acc = calloc(dim, sizeof *acc);
        uint64_t cnt = 0;
        if (!acc && !st) st = KVB_ERROR(KVB_ENOMEM, "walk probe: out of memory");
        for (size_t i = 0; !st && i < n; i++) {
          double corr = kvb_dot(acc, U + i * dim, dim) / (r * r);
          cnt += fabs(corr) > c;
          fails_at[i] = cnt;
          for (size_t k = 0; k < dim; k++) acc[k] += eps[i] * U[i * dim + k];
        }
        if (!st && cnt != f)
          st = KVB_ERROR(KVB_ESTATE, "walk probe: FAIL recount %llu differs from the walk's %llu",
                         (unsigned long long)cnt, (unsigned long long)f);
        free(acc);
      }
      free(unif);
    } else {
      for (size_t i = 0; i < n; i++) eps[i] = gsl_rng_uniform(rng) < 0.5 ? 1 : -1;
    }
  }
  for (size_t i = 0, a = 0; !st && i < n && a < nq; i++) {
    for (size_t k = 0; k < dim; k++) w[k] += eps[i] * U[i * dim + k];
    if (i + 1 != js[a]) continue;
    double inf = 0;
    for (size_t k = 0; k < dim; k++) inf = fmax(inf, fabs(w[k]));
    double *o = out + a * 4;
    o[0] = fabs(kvb_dot(w, g, dim));
    o[1] = inf;
    o[2] = walk ? c * r : NAN;
    o[3] = walk ? (double)fails_at[i] : NAN;
    a++;
  }
  free(g);
  free(w);
  free(eps);
  free(fails_at);
  return st;
}

const kvb_probe_type kvb_probe_walk = {
    "walk",
    "discrepancy of the Self-Balancing Walk (or random signs) over the stream's keys or values",
    "003 Alg. 3, Theorem A.1",
    walk_params,
    NULL,
    {"disc", "disc_inf", "disc_bound", "walk_fails", NULL},
    "disc = |<Σ_{i<=j} ε_i u_i, g>| for a fixed random unit g; disc_inf = ‖Σ ε_i u_i‖_∞;\n"
    "disc_bound = c·r (Theorem A.1's O(log(n/δ) max‖u_i‖ ‖g‖) read with the walk's c);\n"
    "walk_fails = steps i <= j with |corr_i| > c·r² (Alg. 3 line 5); NaN for random signs",
    run_walk};

/* test_probe.c — the probes (src/probe.h) against independent recomputations from the library
 * pieces they are built on: the walk probe's signs, discrepancies and FAIL counts must be those
 * of kvb_walk_vectors fed the same uniforms in the documented draw order; the kcenter probe's
 * radii those of kvb_kcenter_greedy on each prefix; bad arguments are refused with nothing
 * written. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static kvb_stream *make_stream(const char *type, const char *const *assign, uint64_t seed) {
  kvb_params p;
  kvb_params_init(&p);
  for (size_t i = 0; assign[i]; i++) kvb_params_parse(&p, assign[i]);
  gsl_rng *rng = kvb_rng_alloc_substream(seed, 0);
  kvb_stream *s = NULL;
  kvb_stream_generate(type, &p, rng, &s);
  gsl_rng_free(rng);
  return s;
}

/* The walk probe vs kvb_walk_vectors: g first, then one uniform per step. */
static void walk_matches_library(const char *signs, double c) {
  const char *sa[] = {"n=600", "d_key=5", "d_value=3", "key_norm=1", "r=1", NULL};
  kvb_stream *s = make_stream("adv_sphere", sa, 11);
  size_t js[3] = {1, 257, 600}, n = 600, dim = 5;
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set_str(&p, "signs", signs);
  kvb_params_set(&p, "c", c);
  double out[12];
  gsl_rng *rng = kvb_rng_alloc_substream(5, 3);
  int st = kvb_probe_run("walk", s, &p, rng, 3, js, out);
  gsl_rng_free(rng);
  /* the recomputation */
  rng = kvb_rng_alloc_substream(5, 3);
  double g[5], w[5] = {0}, *unif = malloc(n * sizeof *unif);
  int *eps = malloc(n * sizeof *eps);
  kvb_rand_sphere(rng, g, dim, 1.0);
  for (size_t i = 0; i < n; i++) unif[i] = gsl_rng_uniform(rng);
  gsl_rng_free(rng);
  double rmax = 0;
  for (size_t i = 0; i < n; i++) rmax = fmax(rmax, kvb_norm2(s->K + i * dim, dim));
  double cc = c > 0 ? c : kvb_walk_paper_c(n, 1e-3);
  uint64_t fails = 0;
  int walk = strcmp(signs, "walk") == 0;
  if (walk)
    kvb_walk_vectors(n, dim, s->K, rmax, cc, unif, NULL, 0, eps, &fails);
  else
    for (size_t i = 0; i < n; i++) eps[i] = unif[i] < 0.5 ? 1 : -1;
  int same = st == KVB_OK;
  for (size_t i = 0, a = 0; i < n && same; i++) {
    for (size_t k = 0; k < dim; k++) w[k] += eps[i] * s->K[i * dim + k];
    if (i + 1 != js[a]) continue;
    double inf = 0;
    for (size_t k = 0; k < dim; k++) inf = fmax(inf, fabs(w[k]));
    same &= out[a * 4] == fabs(kvb_dot(w, g, dim)) && out[a * 4 + 1] == inf;
    same &= walk ? out[a * 4 + 2] == cc * rmax : isnan(out[a * 4 + 2]);
    a++;
  }
  /* FAIL counts never decrease along the prefixes and end at the walk's own count */
  if (walk) same &= out[3] <= out[7] && out[7] <= out[11] && out[11] == (double)fails;
  char name[128];
  snprintf(name, sizeof name, "probe walk (signs=%s, c=%g) = kvb_walk_vectors on the same uniforms",
           signs, c);
  CHECK(same, name, "st %d, disc %g %g %g, fails %g (library %llu)", st, out[0], out[4], out[8],
        out[11], (unsigned long long)fails);
  if (walk && c > 0 && c < 1)
    CHECK(fails > 0, "probe walk: a tiny c makes the walk FAIL (the count is exercised)",
          "%llu fails", (unsigned long long)fails);
  free(unif);
  free(eps);
  kvb_stream_free(s);
}

static void kcenter_matches_library(void) {
  const char *sa[] = {"n=300", "d_key=4", "d_value=6", "m=5", "delta=0.5", NULL};
  kvb_stream *s = make_stream("clusterable", sa, 2);
  size_t js[3] = {3, 100, 300};
  const char *on[2] = {"keys", "values"};
  for (int v = 0; v < 2; v++) {
    kvb_params p;
    kvb_params_init(&p);
    kvb_params_set_str(&p, "on", on[v]);
    kvb_params_set(&p, "centers", 7);
    double out[6];
    gsl_rng *rng = kvb_rng_alloc_substream(1, 0);
    int st = kvb_probe_run("kcenter", s, &p, rng, 3, js, out);
    gsl_rng_free(rng);
    size_t dim = v ? s->d_value : s->d_key, cent[7];
    double rad[7];
    int same = st == KVB_OK && out[0] == 0 && out[1] == 0; /* k >= j = 3: every point a center */
    for (int a = 1; a < 3 && same; a++) {
      kvb_kcenter_greedy(js[a], dim, v ? s->V : s->K, 7, 0, cent, rad);
      same &= out[2 * a] == rad[6] && out[2 * a + 1] == rad[6] / rad[0];
    }
    char name[96];
    snprintf(name, sizeof name, "probe kcenter (on=%s) = kvb_kcenter_greedy on each prefix", on[v]);
    CHECK(same, name, "st %d: %g %g %g", st, out[0], out[2], out[4]);
  }
  kvb_stream_free(s);
}

/* Each bad call: an error naming the problem, out untouched. */
static void bad_calls(void) {
  const char *sa[] = {"n=50", "d_key=3", "d_value=3", NULL};
  kvb_stream *s = make_stream("gaussian", sa, 1);
  gsl_rng *rng = kvb_rng_alloc_substream(1, 0);
  struct {
    const char *probe, *param, *sval;
    double nval;
    size_t j0, j1;
    const char *want;
  } cases[] = {
      {"walk", "signs", "sometimes", 0, 10, 20, "signs must be"},
      {"walk", "on", "queries", 0, 10, 20, "on must be"},
      {"walk", "r", NULL, 0.01, 10, 20, "below the largest"},
      {"walk", "c", NULL, -1, 10, 20, "outside"},
      {"walk", "delta", NULL, 0, 20, 10, "must increase"},
      {"kcenter", "centers", NULL, 3, 10, 51, "outside 1..50"},
      {"kcenter", "on", "both", 0, 10, 20, "on must be"},
      {"nosuch", "x", NULL, 1, 10, 20, "no probe named"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kvb_params p;
    kvb_params_init(&p);
    if (strcmp(cases[i].probe, "kcenter") == 0 && strcmp(cases[i].param, "centers") != 0)
      kvb_params_set(&p, "centers", 2);
    if (cases[i].sval)
      kvb_params_set_str(&p, cases[i].param, cases[i].sval);
    else if (strcmp(cases[i].param, "delta") != 0)
      kvb_params_set(&p, cases[i].param, cases[i].nval);
    double out[8] = {42, 42, 42, 42, 42, 42, 42, 42};
    size_t js[2] = {cases[i].j0, cases[i].j1};
    int st = kvb_probe_run(cases[i].probe, s, &p, rng, 2, js, out);
    int untouched = 1;
    for (int k = 0; k < 8; k++) untouched &= out[k] == 42;
    char name[128];
    snprintf(name, sizeof name, "probe %s: bad %s is refused with a message, nothing written",
             cases[i].probe, cases[i].param);
    CHECK(st != KVB_OK && untouched && strstr(kvb_strerror_last(), cases[i].want), name,
          "st %d, '%s'", st, kvb_strerror_last());
  }
  gsl_rng_free(rng);
  kvb_stream_free(s);
}

int main(void) {
  walk_matches_library("walk", 0);
  walk_matches_library("walk", 0.3);
  walk_matches_library("random", 0);
  kcenter_matches_library();
  bad_calls();
  UNIT_EXIT();
}

/* subgen_lemma1.c — 000 Lemma 1 (001 Lemma 2.2): correctness of UpdateMatrixProduct.
 *   (1) µ = Σ_{i≤n} ‖v_i‖²                                   — invariant, every step
 *   (2) each slot M(j) is distributed ∝ ‖v_i‖², slots i.i.d.  — distribution (see below) */
#include "prop.h"

#include <math.h>
#include <stdlib.h>

static kvb_method *make_subgen(prop_ctx *ctx, gsl_rng *rng, const kvb_stream *s, double delta,
                               int t, int sl) {
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "delta", delta);
  kvb_params_set(&p, "t", t);
  kvb_params_set(&p, "s", sl);
  prop_apply_mutant(ctx, "subgen", &p);
  kvb_method_config cfg = {s->d_key, s->d_value, 1.0, rng};
  kvb_method *m = NULL;
  if (kvb_method_alloc("subgen", &cfg, &p, &m)) prop_check(ctx, 0, "alloc: %s", kvb_strerror_last());
  return m;
}

/* (1): µ equals the running Σ‖v‖² to rounding (relative 1e-12: one rounding per addition,
 * n ≤ 4096, well inside n·2⁻⁵³), after every step, on value norms spanning 2⁻²⁰..2²⁰. */
static void lemma1_mu(prop_ctx *ctx) {
  static const char *const a[] = {"n=2048", "d_key=4", "d_value=3", "m=6", "delta=0.5",
                                  "value_spread=7", NULL};
  kvb_stream *s = prop_stream(ctx, 0, "clusterable", a);
  if (!s) return;
  gsl_rng *rng = prop_rng(ctx, 1);
  kvb_method *m = make_subgen(ctx, rng, s, 0.5, 2, 3);
  long double exact = 0;
  size_t bad = 0, first_bad = 0;
  for (size_t i = 0; m && i < s->n; i++) {
    const double *v = s->V + i * s->d_value;
    kvb_method_update(m, s->K + i * s->d_key, s->d_key, v, s->d_value);
    for (size_t j = 0; j < s->d_value; j++) exact += (long double)v[j] * v[j];
    double mu = kvb_subgen_mu(m);
    if (fabsl((long double)mu - exact) > 1e-12L * exact) {
      if (!bad) first_bad = i;
      bad++;
    }
  }
  prop_check(ctx, bad == 0, "µ ≠ Σ‖v‖² at %zu steps (first at step %zu)", bad, first_bad);
  prop_note(ctx, "µ matched Σ‖v‖² at all %zu steps", s->n);
  kvb_method_free(m);
  gsl_rng_free(rng);
  kvb_stream_free(s);
}

const prop_claim props_subgen_lemma1[] = {
    {"subgen.lemma1.mu", "000 Lemma 1 (1)", "invariant",
     "µ = Σ‖v_i‖² after every step, to rounding (relative 1e-12)",
     {"subgen:mu_norm"}, lemma1_mu},
    {NULL, NULL, NULL, NULL, {NULL}, NULL}};

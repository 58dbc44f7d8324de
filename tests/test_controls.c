/* test_controls.c — the controls every bound and comparison runs through its assertion
 * (props/README.md, Verdicts: controls): the z ≡ 0 method and the walk with p = ½ (random signs). A control
 * that silently did something else would make every VACUOUS verdict wrong. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  /* z_zero: answers exactly 0 whatever it was fed, keeps nothing, validates like any method. */
  {
    gsl_rng *rng = kvb_rng_alloc_substream(1, 0);
    kvb_method_config cfg = {.d_key = 3, .d_value = 2, .scale = 1.0, .rng = rng};
    kvb_params p;
    kvb_params_init(&p);
    kvb_method *m = NULL;
    int rc = kvb_method_alloc("z_zero", &cfg, &p, &m);
    double k[3] = {1, 2, 3}, v[2] = {4, -5}, q[3] = {0.5, 0.5, 0.5}, z[2] = {7, 7};
    for (int i = 0; i < 10 && rc == 0; i++) rc = kvb_method_update(m, k, 3, v, 2);
    if (rc == 0) rc = kvb_method_query(m, q, 3, z, 2);
    kvb_memory mem = {1, 1};
    if (m) kvb_method_memory(m, &mem);
    CHECK(rc == 0 && z[0] == 0 && z[1] == 0 && mem.bytes == 0 && mem.vectors == 0,
          "controls.z_zero_answers_zero", "rc %d z (%g, %g) mem %zu/%zu", rc, z[0], z[1],
          mem.bytes, mem.vectors);
    double bad[3] = {NAN, 0, 0};
    rc = m ? kvb_method_update(m, bad, 3, v, 2) : -1;
    int rc2 = m ? kvb_method_query(m, q, 2, z, 2) : -1;
    CHECK(rc != 0 && rc2 != 0, "controls.z_zero_validates", "NaN key rc %d, wrong d rc %d", rc,
          rc2);
    kvb_method_free(m);
    gsl_rng_free(rng);
  }
  /* Random signs: p = ½ whatever the correlation, and the FAIL test of line 5 still fires. */
  {
    double p1 = kvb_walk_p(3.0, 4.0, KVB_WALK_MUT_RANDOM_SIGNS);
    double p2 = kvb_walk_p(-100.0, 4.0, KVB_WALK_MUT_RANDOM_SIGNS);
    double pf = kvb_walk_p(3.0, 4.0, 0);
    int eps = 0;
    int st = kvb_walk_step(5.0, 4.0, 0.49, KVB_WALK_MUT_RANDOM_SIGNS, &eps);
    CHECK(p1 == 0.5 && p2 == 0.5 && pf == 0.5 - 3.0 / 8.0 && st == KVB_EFAIL && eps == 1,
          "controls.random_signs_p_half", "p %g %g (faithful %g), status %d eps %d", p1, p2, pf, st,
          eps);
    CHECK(kvb_walk_flags_for("random_signs") == KVB_WALK_MUT_RANDOM_SIGNS,
          "controls.random_signs_name", "flags %u", kvb_walk_flags_for("random_signs"));
    /* On collinear vectors the walk balances and random signs do not: over 64 runs of n = 256
     * copies of one unit vector the walk's |Σ ε| stays far below random signs' (√n = 16 on
     * average); a control equal to the walk would fail this. */
    const size_t n = 256;
    double *U = malloc(n * sizeof *U);
    int *e = malloc(n * sizeof *e);
    for (size_t i = 0; i < n; i++) U[i] = 1.0;
    gsl_rng *rng = kvb_rng_alloc_substream(2, 0);
    double sw = 0, sr = 0;
    for (int t = 0; t < 64; t++) {
      long a = 0, b = 0;
      kvb_walk_vectors(n, 1, U, 1.0, 8.0, NULL, rng, 0, e, NULL);
      for (size_t i = 0; i < n; i++) a += e[i];
      kvb_walk_vectors(n, 1, U, 1.0, 8.0, NULL, rng, KVB_WALK_MUT_RANDOM_SIGNS, e, NULL);
      for (size_t i = 0; i < n; i++) b += e[i];
      sw += labs(a), sr += labs(b);
    }
    CHECK(sw / 64 < 4 && sr / 64 > 8, "controls.random_signs_do_not_balance",
          "mean |Σε| walk %.2f, random %.2f", sw / 64, sr / 64);
    gsl_rng_free(rng);
    free(U), free(e);
  }
  UNIT_EXIT();
}

/* test_subgen_bounds.c — the explicit Theorem 1 constants (src/subgen_bounds.c): known values
 * from props/subgen_theorem1_constants.md and rejection of bad input with a message. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <string.h>

int main(void) {
  double t = -1, s = -1, lt = 0;
  /* 27·e^1·ln 1600 = 541.4… → 542 */
  CHECK(kvb_subgen_required_t(1, 0.5, 1, 1, 4, &t) == KVB_OK && t == 542, "bounds.t.value",
        "t = %g", t);
  /* scale multiplies r: δ r scale = 0.5 either way */
  double t2 = -1;
  CHECK(kvb_subgen_required_t(1, 0.5, 2, 0.5, 4, &t2) == KVB_OK && t2 == t, "bounds.t.scale",
        "t = %g vs %g", t2, t);
  CHECK(kvb_subgen_required_s(1, 2, &s) == KVB_OK && s == 3600, "bounds.s.value", "s = %g", s);
  CHECK(kvb_subgen_required_s(0.5, 128, &s) == KVB_OK && s == 921600, "bounds.s.value2",
        "s = %g", s);
  /* huge exponent: t overflows to +Inf, log t stays finite */
  CHECK(kvb_subgen_required_t(0.1, 1000, 1000, 1, 1e4, &t) == KVB_OK && isinf(t) &&
            kvb_subgen_required_log_t(0.1, 1000, 1000, 1, 1e4, &lt) == KVB_OK && isfinite(lt) &&
            fabs(lt - (log(27.0) + 2 * log(10.0) + 2e6 + log(log(4e6)))) < 1e-9 * 2e6,
        "bounds.t.overflow", "t = %g, log t = %g", t, lt);

  struct {
    double eps, delta, r, scale, m;
    int want;
    const char *name;
  } bad[] = {{0, 1, 1, 1, 1, KVB_EINVAL, "eps=0"},       {1.5, 1, 1, 1, 1, KVB_EINVAL, "eps>1"},
             {NAN, 1, 1, 1, 1, KVB_EDOM, "eps_NaN"},      {1, 0, 1, 1, 1, KVB_EINVAL, "delta=0"},
             {1, -1, 1, 1, 1, KVB_EINVAL, "delta<0"},     {1, 1, -1, 1, 1, KVB_EINVAL, "r<0"},
             {1, 1, INFINITY, 1, 1, KVB_EDOM, "r_Inf"},   {1, 1, 1, 0, 1, KVB_EINVAL, "scale=0"},
             {1, 1, 1, 1, 0.5, KVB_EINVAL, "m<1"},        {1, 1, 1, 1, NAN, KVB_EDOM, "m_NaN"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    double out = 12345;
    kvb_error_clear();
    int rc = kvb_subgen_required_t(bad[i].eps, bad[i].delta, bad[i].r, bad[i].scale, bad[i].m,
                                   &out);
    char name[64];
    snprintf(name, sizeof name, "bounds.t.bad.%s", bad[i].name);
    CHECK(rc == bad[i].want && out == 12345 && strlen(kvb_strerror_last()) > 0, name,
          "rc %d (want %d), out %g, msg '%s'", rc, bad[i].want, out, kvb_strerror_last());
  }
  struct {
    double eps, rho;
    int want;
    const char *name;
  } bads[] = {{0, 2, KVB_EINVAL, "eps=0"}, {2, 2, KVB_EINVAL, "eps>1"},
              {1, 0.5, KVB_EINVAL, "rho<1"}, {1, NAN, KVB_EDOM, "rho_NaN"},
              {INFINITY, 2, KVB_EDOM, "eps_Inf"}};
  for (size_t i = 0; i < sizeof bads / sizeof *bads; i++) {
    double out = 12345;
    kvb_error_clear();
    int rc = kvb_subgen_required_s(bads[i].eps, bads[i].rho, &out);
    char name[64];
    snprintf(name, sizeof name, "bounds.s.bad.%s", bads[i].name);
    CHECK(rc == bads[i].want && out == 12345 && strlen(kvb_strerror_last()) > 0, name,
          "rc %d (want %d), out %g", rc, bads[i].want, out);
  }
  CHECK(kvb_subgen_required_t(1, 1, 1, 1, 1, NULL) == KVB_ENULL, "bounds.t.null", "no ENULL");
  CHECK(kvb_subgen_required_s(1, 1, NULL) == KVB_ENULL, "bounds.s.null", "no ENULL");
  /* adv_markov (adversarial/streams_markov.c): the Markov-boundary stream the Theorem 1 check
   * uses for these constants — layout, and bad input refused with a message. */
  {
    kvb_params p;
    kvb_params_init(&p);
    kvb_params_parse(&p, "n=5");
    kvb_params_parse(&p, "key_special=3");
    kvb_params_parse(&p, "value_special=0.01");
    kvb_params_parse(&p, "spread=1");
    kvb_params_parse(&p, "special=2");
    gsl_rng *rng = kvb_rng_alloc_substream(5, 0);
    kvb_stream *st = NULL;
    int rc = kvb_stream_generate("adv_markov", &p, rng, &st);
    int ok = rc == KVB_OK && st && st->m == 2 && st->delta == 1 && st->K[0] == 0 &&
             st->K[2] == 3 && st->V[2] == 0.01 && st->V[0] == 1 && st->Q[4] == 1;
    for (size_t i = 0; ok && i < st->n; i++)
      if (i != 2) ok = fabs(st->K[i]) <= 0.5;
    CHECK(ok, "markov.layout", "rc %d", rc);
    kvb_stream_free(st);
    st = NULL;
    kvb_params_parse(&p, "key_special=0.75"); /* inside the bulk ball */
    rc = kvb_stream_generate("adv_markov", &p, rng, &st);
    CHECK(rc == KVB_EINVAL && !st && strstr(kvb_strerror_last(), "spread"), "markov.bad_special",
          "rc %d", rc);
    kvb_params_parse(&p, "key_special=3");
    kvb_params_parse(&p, "special=7");
    rc = kvb_stream_generate("adv_markov", &p, rng, &st);
    CHECK(rc == KVB_EINVAL && !st, "markov.bad_position", "rc %d", rc);
    gsl_rng_free(rng);
  }
  UNIT_EXIT();
}

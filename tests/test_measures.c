/* test_measures.c — the measures module (src/measures/measures.h) against hand-computed
 * answers, and its refusals of bad input (a status, nothing written). */
#include "kvbound.h"
#include "measures.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int close_to(double a, double b, double tol) { return fabs(a - b) <= tol * fmax(1, fabs(b)); }

/* Scores (scale 1, q = 1) s = (0, ln 3): softmax = (1/4, 3/4); V = I₂. */
static const double K2[2] = {0, 1.0986122886681098}, V2[4] = {1, 0, 0, 1}, Q1[1] = {1};

static void exact_side_known(void) {
  double attn[2];
  kvb_exact_side x;
  int st = kvb_exact_side_compute(2, 1, 2, K2, V2, Q1, 1.0, KVB_EXACT_NORMS, attn, &x);
  double an = sqrt(0.625); /* ‖(1/4, 3/4)‖₂ */
  CHECK(st == KVB_OK && x.attn == attn && close_to(attn[0], 0.25, 1e-15) &&
            close_to(attn[1], 0.75, 1e-15) && close_to(x.attn_norm, an, 1e-15),
        "measures: Attn = softmax^T V and its norm (hand-computed)", "st %d attn %.17g %.17g", st,
        attn[0], attn[1]);
  CHECK(close_to(x.softmax_norm, an, 1e-15) && close_to(x.v_op, 1, 1e-14) &&
            close_to(x.v_f, sqrt(2.0), 1e-15),
        "measures: ||softmax||_2, ||V||_op, ||V||_F (hand-computed)", "%.17g %.17g %.17g",
        x.softmax_norm, x.v_op, x.v_f);
  CHECK(close_to(x.log_sum, log(4.0), 1e-15) && close_to(x.max_score, log(3.0), 1e-15) &&
            close_to(x.log_exp_norm, 0.5 * log(10.0), 1e-15),
        "measures: log sum exp(s), max score, log ||exp(s)||_2 (hand-computed)", "%.17g %.17g %.17g",
        x.log_sum, x.max_score, x.log_exp_norm);
  /* ‖exp(s)‖₂ in the log domain where exp(s) itself overflows: s = (800, 800 + ln 3) */
  double Kb[2] = {800, 800 + log(3.0)}, ab[2];
  kvb_exact_side xb;
  st = kvb_exact_side_compute(2, 1, 2, Kb, V2, Q1, 1.0, KVB_EXACT_NORMS, ab, &xb);
  CHECK(st == KVB_OK && close_to(xb.log_exp_norm, 800 + 0.5 * log(10.0), 1e-15) &&
            close_to(ab[1], 0.75, 1e-12),
        "measures: log ||exp(s)||_2 where exp(s) overflows", "st %d %.17g", st, xb.log_exp_norm);
  kvb_exact_side x0;
  st = kvb_exact_side_compute(2, 1, 2, K2, V2, Q1, 1.0, 0, attn, &x0);
  CHECK(st == KVB_OK && isnan(x0.softmax_norm) && isnan(x0.v_op) && isnan(x0.v_f) &&
            close_to(x0.attn_norm, an, 1e-15),
        "measures: without KVB_EXACT_NORMS the norms are NaN (not computed)", "st %d", st);
}

static void errors_known(void) {
  double attn[2];
  kvb_exact_side x, x0;
  kvb_exact_side_compute(2, 1, 2, K2, V2, Q1, 1.0, KVB_EXACT_NORMS, attn, &x);
  double z[2] = {0.25 + 0.3, 0.75 - 0.4}; /* ‖z − Attn‖ = 0.5 */
  kvb_errors e;
  int st = kvb_measure_errors(&x, z, 2, &e);
  double an = sqrt(0.625);
  CHECK(st == KVB_OK && close_to(e.err_abs, 0.5, 1e-15) && close_to(e.rel_error, 0.5 / an, 1e-15) &&
            close_to(e.ratio_op, 0.5 / an, 1e-14) && close_to(e.ratio_f, 0.5 / (an * sqrt(2.0)), 1e-15),
        "measures: err_abs, rel_error, ratio_op (000 eq. 3), ratio_f (003 eq. 2), hand-computed",
        "st %d: %.17g %.17g %.17g %.17g", st, e.err_abs, e.rel_error, e.ratio_op, e.ratio_f);
  double zero[2] = {0, 0};
  st = kvb_measure_errors(&x, zero, 2, &e);
  CHECK(st == KVB_OK && e.rel_error == 1, "measures: z = 0 has rel_error exactly 1", "%.17g",
        e.rel_error);
  kvb_exact_side_compute(2, 1, 2, K2, V2, Q1, 1.0, 0, attn, &x0);
  st = kvb_measure_errors(&x0, z, 2, &e);
  CHECK(st == KVB_OK && isnan(e.ratio_op) && isnan(e.ratio_f) && close_to(e.err_abs, 0.5, 1e-15),
        "measures: ratios without the norms are NaN, not 0 or Inf", "%g %g", e.ratio_op, e.ratio_f);
  CHECK(kvb_measure_ratio(0, 0) == 0 && isinf(kvb_measure_ratio(1, 0)) &&
            isnan(kvb_measure_ratio(1, NAN)) && isnan(kvb_measure_ratio(NAN, 1)) &&
            kvb_measure_ratio(3, 4) == 0.75,
        "measures: ratio conventions 0/0 = 0, x/0 = Inf, NaN propagates", "%g %g",
        kvb_measure_ratio(0, 0), kvb_measure_ratio(1, 0));
}

static void bad_input(void) {
  double attn[2] = {7, 7}, z[2] = {0, 0};
  kvb_exact_side x, sentinel;
  memset(&sentinel, 0x5a, sizeof sentinel);
  x = sentinel;
  int a = kvb_exact_side_compute(2, 1, 2, NULL, V2, Q1, 1.0, 0, attn, &x);
  int b = kvb_exact_side_compute(0, 1, 2, K2, V2, Q1, 1.0, 0, attn, &x);
  int c = kvb_exact_side_compute(2, 0, 2, K2, V2, Q1, 1.0, 0, attn, &x);
  int d = kvb_exact_side_compute(2, 1, 2, K2, V2, Q1, -1.0, 0, attn, &x);
  double Kn[2] = {0, NAN};
  int e = kvb_exact_side_compute(2, 1, 2, Kn, V2, Q1, 1.0, 0, attn, &x);
  int f = kvb_exact_side_compute(2, 1, 2, K2, V2, Q1, 1.0, 8, attn, &x);
  CHECK(a == KVB_ENULL && b == KVB_EINVAL && c == KVB_EDIM && d == KVB_EINVAL && e == KVB_EDOM &&
            f == KVB_EINVAL && memcmp(&x, &sentinel, sizeof x) == 0 && attn[0] == 7 && attn[1] == 7,
        "measures: exact side refuses NULL, n = 0, d = 0, scale <= 0, NaN, unknown flags; writes nothing",
        "%d %d %d %d %d %d", a, b, c, d, e, f);
  /* finite inputs whose scores are beyond double range: KVB_ERANGE, *out untouched */
  double Kbig[2] = {1e200, -1e200}, qbig[1] = {1e200};
  int g = kvb_exact_side_compute(2, 1, 2, Kbig, V2, qbig, 1.0, 0, attn, &x);
  CHECK(g == KVB_ERANGE && memcmp(&x, &sentinel, sizeof x) == 0 && strlen(kvb_strerror_last()) > 0,
        "measures: scores beyond double range give KVB_ERANGE with a message, out untouched",
        "%d", g);
  kvb_exact_side good;
  kvb_exact_side_compute(2, 1, 2, K2, V2, Q1, 1.0, KVB_EXACT_NORMS, attn, &good);
  kvb_errors er, es;
  memset(&es, 0x5a, sizeof es);
  er = es;
  double zi[2] = {0, INFINITY};
  int h = kvb_measure_errors(NULL, z, 2, &er), i = kvb_measure_errors(&good, NULL, 2, &er);
  int j = kvb_measure_errors(&good, z, 3, &er), k = kvb_measure_errors(&good, zi, 2, &er);
  int l = kvb_measure_errors(&good, z, 2, NULL);
  CHECK(h == KVB_ENULL && i == KVB_ENULL && j == KVB_EDIM && k == KVB_EDOM && l == KVB_ENULL &&
            memcmp(&er, &es, sizeof er) == 0,
        "measures: errors refuse NULL, a dimension mismatch, a non-finite answer; write nothing",
        "%d %d %d %d %d", h, i, j, k, l);
}

static void quantiles_known(void) {
  double x[6] = {NAN, 4, 1, 3, 2, NAN};
  kvb_quantiles q;
  int st = kvb_quantiles_of(x, 6, &q);
  /* GSL: sorted (1, 2, 3, 4), level p at index p·(n − 1) interpolated linearly */
  CHECK(st == KVB_OK && q.n == 4 && close_to(q.q10, 1.3, 1e-15) && close_to(q.q25, 1.75, 1e-15) &&
            q.median == 2.5 && close_to(q.q75, 3.25, 1e-15) && close_to(q.q90, 3.7, 1e-15) &&
            close_to(q.q99, 3.97, 1e-15) && q.max == 4,
        "measures: quantiles leave NaN out (hand-computed)", "n %zu: %g %g %g %g %g %g %g", q.n,
        q.q10, q.q25, q.median, q.q75, q.q90, q.q99, q.max);
  double y[5] = {0.3, -2, 7, 1e-3, 5}, yc[5];
  memcpy(yc, y, sizeof y);
  kvb_quantiles_of(yc, 5, &q);
  CHECK(q.q10 == kvb_quantile(y, 5, 0.1) && q.median == kvb_quantile(y, 5, 0.5) &&
            q.q99 == kvb_quantile(y, 5, 0.99) && q.max == 7,
        "measures: quantiles agree with kvb_quantile (stats.h) bit for bit", "%.17g %.17g", q.q10,
        kvb_quantile(y, 5, 0.1));
  double inf[3] = {INFINITY, 1, 2};
  kvb_quantiles_of(inf, 3, &q);
  CHECK(q.n == 3 && q.median == 2 && isinf(q.max), "measures: +Inf is kept and sorts last",
        "%zu %g %g", q.n, q.median, q.max);
  double nan2[2] = {NAN, NAN};
  kvb_quantiles q0, qs;
  memset(&qs, 0x5a, sizeof qs);
  q0 = qs;
  int a = kvb_quantiles_of(nan2, 2, &q0);
  int b = kvb_quantiles_of(NULL, 0, &q);
  kvb_quantiles q1 = qs;
  int c = kvb_quantiles_of(NULL, 3, &q1), d = kvb_quantiles_of(x, 2, NULL);
  CHECK(a == KVB_OK && q0.n == 0 && isnan(q0.median) && isnan(q0.max) && b == KVB_OK && q.n == 0 &&
            c == KVB_ENULL && d == KVB_ENULL && memcmp(&q1, &qs, sizeof q1) == 0,
        "measures: empty or all-NaN samples give n = 0 and NaN; NULL is refused, nothing written",
        "%d %d %d %d", a, b, c, d);
}

/* A hand-built INDEX stream: k_0 = e_0, k_1 = e_1 (r = 1), v_0 = e_0, v_1 = −e_1. */
static kvb_stream *tiny_index_stream(void) {
  kvb_stream *s = NULL;
  if (kvb_stream_alloc(2, 2, 2, &s)) return NULL;
  const double K[4] = {1, 0, 0, 1}, V[4] = {1, 0, 0, -1};
  memcpy(s->K, K, sizeof K);
  memcpy(s->Q, K, sizeof K);
  memcpy(s->V, V, sizeof V);
  s->r = 1;
  return s;
}

static void index_decode(void) {
  kvb_stream *s = tiny_index_stream();
  kvb_index_instance *I = NULL;
  int st = s ? kvb_measure_index_view(s, &I) : -1;
  CHECK(st == KVB_OK && I && I->n == 2 && I->d == 2 && I->coord[0] == 0 && I->coord[1] == 1 &&
            I->sigma[0] == 1 && I->sigma[1] == -1 && I->r == 1,
        "measures: the INDEX view reads pi(i)_2 and sigma_i off the values", "st %d", st);
  /* x = (1, 0): Alice streams token 0 only; exact attention answers v_0 = e_0 to any query.
   * Bob, T = (1/40)e^{1/√2}/max{2e^{1/√2}, 1} = 1/80: bit 0 reads ⟨e_0, v_0⟩ = 1 > T → 1;
   * bit 1 reads ⟨e_0, v_1⟩ = 0 → 0. Both right. */
  unsigned char x[2] = {1, 0};
  kvb_method_config cfg = {2, 2, 1 / sqrt(2.0), NULL};
  kvb_params p;
  kvb_params_init(&p);
  kvb_method *m = NULL;
  kvb_decode dec;
  memset(&dec, 0, sizeof dec);
  if (I && kvb_method_alloc("exact", &cfg, &p, &m) == KVB_OK) st = kvb_measure_decode(I, x, m, &dec);
  CHECK(st == KVB_OK && dec.n == 2 && dec.u_size == 1 && dec.correct == 2 && dec.accuracy == 1,
        "measures: INDEX decode through kvb_index_alice/bob (hand-computed)", "st %d: %zu %zu %zu",
        st, dec.n, dec.u_size, dec.correct);
  kvb_method_free(m);
  /* z ≡ 0 answers nothing: Bob decides 0 everywhere, right on x_1 = 0 only */
  m = NULL;
  if (I && kvb_method_alloc("z_zero", &cfg, &p, &m) == KVB_OK) st = kvb_measure_decode(I, x, m, &dec);
  CHECK(st == KVB_OK && dec.correct == 1 && dec.accuracy == 0.5,
        "measures: INDEX decode of z = 0 gets the zero bits only", "st %d: %zu", st, dec.correct);
  kvb_decode ds;
  memset(&ds, 0x5a, sizeof ds);
  dec = ds;
  int a = kvb_measure_decode(NULL, x, m, &dec), b = kvb_measure_decode(I, NULL, m, &dec);
  CHECK(a == KVB_ENULL && b == KVB_ENULL && memcmp(&dec, &ds, sizeof dec) == 0,
        "measures: decode refuses NULL, writes nothing", "%d %d", a, b);
  kvb_method_free(m);
  kvb_index_free(I);
  /* not an INDEX stream: a value that is not ±e_c, q ≠ k, no r, d_key ≠ d_value */
  kvb_index_instance *sent = (kvb_index_instance *)&sent, *J = sent;
  s->V[1] = 0.5;
  int c = kvb_measure_index_view(s, &J);
  s->V[1] = 0;
  s->Q[0] = 2;
  int d = kvb_measure_index_view(s, &J);
  s->Q[0] = 1;
  s->r = NAN;
  int e = kvb_measure_index_view(s, &J);
  kvb_stream *s3 = NULL;
  kvb_stream_alloc(2, 2, 3, &s3);
  int f = s3 ? kvb_measure_index_view(s3, &J) : -1, g = kvb_measure_index_view(NULL, &J);
  CHECK(c == KVB_EINVAL && d == KVB_EINVAL && e == KVB_EINVAL && f == KVB_EINVAL &&
            g == KVB_ENULL && J == sent,
        "measures: the INDEX view refuses other streams, writes nothing", "%d %d %d %d %d", c, d,
        e, f, g);
  kvb_stream_free(s3);
  kvb_stream_free(s);
}

/* The view of a generated "index_reduction" stream decodes exactly as the instance it was
 * generated from (same draws): the runner's decode equals the lower-bound library's. */
static void index_view_matches_instance(void) {
  gsl_rng *r1 = kvb_rng_alloc_substream(5, 0), *r2 = kvb_rng_alloc_substream(5, 0);
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "n", 64);
  kvb_params_set(&p, "d_key", 8);
  kvb_params_set(&p, "d_value", 8);
  kvb_params_set(&p, "r", 2);
  kvb_stream *s = NULL;
  kvb_index_instance *I = NULL, *V = NULL;
  int st = kvb_stream_generate("index_reduction", &p, r1, &s);
  if (!st) st = kvb_index_alloc(64, 8, 2, KVB_INDEX_FAITHFUL, r2, &I);
  if (!st) st = kvb_measure_index_view(s, &V);
  unsigned char x[64];
  for (int i = 0; i < 64; i++) x[i] = (unsigned char)(i * 7 % 3 == 0);
  size_t same = 0, right_v = 0, right_i = 0;
  kvb_method_config cfg = {8, 8, 1 / sqrt(8.0), r1};
  kvb_params e;
  kvb_params_init(&e);
  kvb_method *mv = NULL, *mi = NULL;
  kvb_decode dv = {0};
  if (!st) st = kvb_method_alloc("exact", &cfg, &e, &mv);
  if (!st) st = kvb_method_alloc("exact", &cfg, &e, &mi);
  if (!st) st = kvb_measure_decode(V, x, mv, &dv);
  size_t u = 0;
  if (!st) st = kvb_index_alice(I, x, mi, &u);
  for (size_t i = 0; !st && i < 64; i++) {
    int bit = -1;
    kvb_index_bob(I, mi, i, u, &bit, NULL);
    right_i += bit == x[i];
    same += V->coord[i] == I->coord[i] && V->sigma[i] == I->sigma[i] &&
            memcmp(V->key + i * 8, I->key + I->group[i] * 8, 8 * sizeof(double)) == 0;
  }
  right_v = dv.correct;
  CHECK(st == KVB_OK && same == 64 && dv.u_size == u && right_v == right_i && right_i > 32,
        "measures: the view of a generated INDEX stream decodes as its instance",
        "st %d: same %zu, u %zu/%zu, right %zu/%zu", st, same, dv.u_size, u, right_v, right_i);
  kvb_method_free(mv);
  kvb_method_free(mi);
  kvb_index_free(I);
  kvb_index_free(V);
  kvb_stream_free(s);
  gsl_rng_free(r1);
  gsl_rng_free(r2);
}

int main(void) {
  exact_side_known();
  errors_known();
  bad_input();
  quantiles_known();
  index_decode();
  index_view_matches_instance();
  UNIT_EXIT();
}

/* test_index_reduction.c — unit tests of lowerbound/index_reduction (003 App. C): premises
 * rejected with messages, instance shape, threshold formula, Alice/Bob on tiny instances. */
#include "index_reduction.h"
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <string.h>

int main(void) {
  gsl_rng *rng = kvb_rng_alloc_substream(7, 0);
  kvb_index_instance *I = NULL;
  int st = kvb_index_alloc(32, 16, 5.0, KVB_INDEX_FAITHFUL, rng, &I);
  CHECK(st == KVB_EINVAL && I == NULL && strstr(kvb_strerror_last(), "r^2 <= d"),
        "index.premise.r2_gt_d", "status %d, msg %s", st, kvb_strerror_last());
  st = kvb_index_alloc(30, 16, 4.0, KVB_INDEX_FAITHFUL, rng, &I);
  CHECK(st == KVB_EINVAL && I == NULL && strstr(kvb_strerror_last(), "multiple of d"),
        "index.premise.n_not_multiple", "status %d, msg %s", st, kvb_strerror_last());
  size_t n = 0;
  st = kvb_index_theorem_n(16, 4.0, 1.5, &n);
  CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "(0, 1)"), "index.premise.eps_range",
        "status %d", st);
  st = kvb_index_theorem_n(16, 4.0, 0.0, &n);
  CHECK(st == KVB_EINVAL, "index.premise.eps_zero", "status %d", st);
  st = kvb_index_alloc(32, 16, NAN, KVB_INDEX_FAITHFUL, rng, &I);
  CHECK(st == KVB_EINVAL, "index.premise.r_nan", "status %d", st);
  st = kvb_index_alloc(32, 16, 4.0, KVB_INDEX_FAITHFUL, NULL, &I);
  CHECK(st == KVB_ENULL, "index.null_rng", "status %d", st);
  /* theorem n = min{1/ε², d e^{2r²/√d}} rounded down to a multiple of d */
  st = kvb_index_theorem_n(16, 4.0, 0.1, &n);
  CHECK(st == 0 && n == 96, "index.theorem_n.eps", "n = %zu (want 96 = 16·floor(100/16))", n);
  st = kvb_index_theorem_n(16, 2.0, 0.001, &n);
  CHECK(st == 0 && n == 112, "index.theorem_n.exp", "n = %zu (want 16·floor(e²)=112)", n);
  CHECK(kvb_index_check_premises(16, 16, 4.0, NAN) == 0, "index.premise.r2_eq_d_ok", "rejected");

  st = kvb_index_alloc(32, 16, 4.0, KVB_INDEX_FAITHFUL, rng, &I);
  CHECK(st == 0 && I && I->groups == 2, "index.alloc", "status %d", st);
  double k[16], v[16];
  int shape = 1;
  for (size_t i = 0; i < 32; i++) {
    kvb_index_pair(I, i, k, v);
    double nk = kvb_norm2(k, 16), nv = kvb_norm2(v, 16);
    shape = shape && fabs(nk - 4.0) < 1e-12 && nv == 1.0 && v[I->coord[i]] == I->sigma[i];
    for (size_t c = 0; c < 16; c++) shape = shape && fabs(fabs(k[c]) - 1.0) < 1e-15;
  }
  CHECK(shape, "index.pair_shape", "keys not in {±r/√d}^d or values not σ e_c");
  /* T = (1/40) e^{r²/√d} / max{d e^{r²/√d}, |U|}: here d e^4 > |U| so T = 1/(40 d). */
  double T = kvb_index_threshold(I, 10);
  CHECK(fabs(T - 1.0 / 640) < 1e-15, "index.threshold", "T = %.17g", T);
  /* Alice with every bit 1 into exact; Bob decodes all bits of group of bit 0 correctly with
   * no noise beyond one other group. Just check the plumbing and the dimension check. */
  unsigned char x[32];
  for (int i = 0; i < 32; i++) x[i] = (unsigned char)(i % 2);
  kvb_method_config cfg = {16, 16, 0.25, rng};
  kvb_params p;
  kvb_params_init(&p);
  kvb_method *m = NULL;
  kvb_method_alloc("exact", &cfg, &p, &m);
  size_t u = 0;
  st = kvb_index_alice(I, x, m, &u);
  CHECK(st == 0 && u == 16 && m->n == 16, "index.alice", "st %d u %zu", st, u);
  int bit = -1;
  double val = 0;
  st = kvb_index_bob(I, m, 1, u, &bit, &val);
  CHECK(st == 0 && bit == 1 && val > T, "index.bob.one", "bit %d val %g", bit, val);
  /* direct attention = the exact method's answer; decide = bob */
  {
    double za[16], zm[16], sn = 0;
    size_t ua = 0;
    st = kvb_index_attention(I, x, 1, za, &sn, &ua);
    kvb_method_query(m, I->key + I->group[1] * 16, 16, zm, 16);
    double diff = 0;
    for (int c = 0; c < 16; c++) diff = fmax(diff, fabs(za[c] - zm[c]));
    CHECK(st == 0 && ua == 16 && diff < 1e-13 && sn > 0 && sn <= 1, "index.attention",
          "st %d u %zu diff %g sn %g", st, ua, diff, sn);
    int b2 = -1;
    double v2 = 0;
    st = kvb_index_decide(I, 1, u, za, &b2, &v2);
    CHECK(st == 0 && b2 == bit && fabs(v2 - val) < 1e-13, "index.decide", "bit %d val %g", b2, v2);
    CHECK(kvb_index_decide(I, 99, u, za, &b2, NULL) == KVB_EINVAL &&
              kvb_index_decide(I, 1, u, NULL, &b2, NULL) == KVB_ENULL,
          "index.decide.bad_input", "bad input accepted");
    /* eq. (2) errors: norm <= budget; random has norm = budget; adversarial flips decisions of
     * the group only as far as the budget reaches; budget 0 changes nothing */
    double e[16], budget = 0.05, nr = 0, na = 0;
    st = kvb_index_eq2_error(I, x, 1, u, za, budget, KVB_INDEX_ERR_RANDOM, rng, e);
    for (int c = 0; c < 16; c++) nr += e[c] * e[c];
    int st2 = kvb_index_eq2_error(I, x, 1, u, za, budget, KVB_INDEX_ERR_ADVERSARIAL, NULL, e);
    for (int c = 0; c < 16; c++) na += e[c] * e[c];
    CHECK(st == 0 && st2 == 0 && fabs(sqrt(nr) - budget) < 1e-12 && sqrt(na) <= budget + 1e-15,
          "index.eq2_error.norm", "random %g adversarial %g budget %g", sqrt(nr), sqrt(na),
          budget);
    /* T = 1/640 here: each zero of the group costs just over T to flip, so the budget 0.05
     * flips every decoded-0 bit of bit 1's group (at most 16 zeros: cost <= 4·T < 0.05) */
    int flipped = 0, ones_kept = 1, zeros = 0;
    double w[16];
    for (size_t j = 0; j < 32; j++) {
      if (I->group[j] != I->group[1]) continue;
      for (int c = 0; c < 16; c++) w[c] = za[c] + e[c];
      int bj = 0;
      kvb_index_decide(I, j, u, w, &bj, NULL);
      flipped += !x[j] && bj == 1;
      zeros += !x[j];
      ones_kept = ones_kept && (!x[j] || bj == 1);
    }
    CHECK(zeros > 0 && flipped == zeros && ones_kept, "index.eq2_error.adversarial",
          "flipped %d zeros (want all %d), ones kept %d", flipped, zeros, ones_kept);
    kvb_index_eq2_error(I, x, 1, u, za, 0, KVB_INDEX_ERR_ADVERSARIAL, NULL, e);
    double n0 = 0;
    for (int c = 0; c < 16; c++) n0 += fabs(e[c]);
    CHECK(n0 == 0, "index.eq2_error.zero_budget", "|e|_1 = %g", n0);
    CHECK(kvb_index_eq2_error(I, x, 1, u, za, -1, KVB_INDEX_ERR_RANDOM, rng, e) == KVB_EINVAL &&
              kvb_index_eq2_error(I, x, 1, u, za, 1, KVB_INDEX_ERR_RANDOM, NULL, e) == KVB_ENULL,
          "index.eq2_error.bad_input", "bad input accepted");
    kvb_index_eq2_error(I, x, 1, u, za, budget, KVB_INDEX_ERR_CLAIRVOYANT, NULL, e);
    CHECK(e[I->coord[1]] == -I->sigma[1] * budget, "index.eq2_error.clairvoyant",
          "e_b = %g", e[I->coord[1]]);
  }
  kvb_method *m8 = NULL;
  kvb_method_config cfg8 = {8, 8, 0.25, rng};
  kvb_method_alloc("exact", &cfg8, &p, &m8);
  st = kvb_index_alice(I, x, m8, &u);
  CHECK(st == KVB_EDIM && m8->n == 0, "index.alice.dim", "st %d", st);
  st = kvb_index_bob(I, m, 99, u, &bit, &val);
  CHECK(st == KVB_EINVAL, "index.bob.range", "st %d", st);
  {
    /* the instance's mutants by name; the stream's table is the instance's */
    int ns = 1 + kvb_mutant_find(kvb_index_mutants, "no_sign");
    kvb_index_instance *J = NULL, *J2 = NULL;
    int sa = kvb_index_alloc(32, 16, 4.0, ns, rng, &J);
    CHECK(ns > 0 && sa == KVB_OK && kvb_index_is_mutant(J, "no_sign") &&
              !kvb_index_is_mutant(J, "threshold_flip") &&
              kvb_index_alloc(32, 16, 4.0, 1 + (int)kvb_mutant_count(kvb_index_mutants), rng,
                              &J2) == KVB_EINVAL && !J2,
          "index.mutant_by_name", "st %d", sa);
    kvb_index_free(J);
  }
  /* the registered stream */
  kvb_params sp;
  kvb_params_init(&sp);
  kvb_params_parse(&sp, "n=48");
  kvb_stream *s = NULL;
  st = kvb_stream_generate("index_reduction", &sp, rng, &s);
  CHECK(st == 0 && s && s->n == 48 && s->r == 4 && memcmp(s->Q, s->K, 48 * 16 * 8) == 0,
        "index.stream", "st %d", st);
  kvb_stream_free(s);
  kvb_params_parse(&sp, "n=40");
  st = kvb_stream_generate("index_reduction", &sp, rng, &s);
  CHECK(st == KVB_EINVAL && !s, "index.stream.premise", "st %d", st);
  kvb_method_free(m);
  kvb_method_free(m8);
  kvb_index_free(I);
  gsl_rng_free(rng);
  UNIT_EXIT();
}

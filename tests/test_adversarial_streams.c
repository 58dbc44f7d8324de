/* test_adversarial_streams.c — unit tests of the adversarial/ generators: each is registered
 * with its `attacks` text, produces what it promises, and rejects bad parameters. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <string.h>

static kvb_stream *gen(const char *name, const char *const *assign, int *st) {
  kvb_params p;
  kvb_params_init(&p);
  for (; *assign; assign++) kvb_params_parse(&p, *assign);
  gsl_rng *rng = kvb_rng_alloc_substream(11, 0);
  kvb_stream *s = NULL;
  *st = kvb_stream_generate(name, &p, rng, &s);
  gsl_rng_free(rng);
  return s;
}

int main(void) {
  static const char *const names[] = {"adv_sphere", "adv_ties", "adv_duplicates", "adv_large_q",
                                      "adv_values", "index_reduction", "adv_collinear"};
  for (size_t i = 0; i < 7; i++) {
    const kvb_stream_type *t = kvb_stream_lookup(names[i]);
    CHECK(t && t->attacks && strlen(t->attacks) > 40, names[i], "missing or undocumented");
  }
  int st;
  const char *a1[] = {"n=64", "d_key=8", "key_norm=3", NULL};
  kvb_stream *s = gen("adv_sphere", a1, &st);
  int ok = st == 0 && s;
  for (size_t i = 0; ok && i < s->n; i++) ok = fabs(kvb_norm2(s->K + i * 8, 8) - 3) < 1e-12;
  CHECK(ok, "adv_sphere.norms", "st %d", st);
  kvb_stream_free(s);
  const char *a2[] = {"n=64", "profile=spread", "order=sorted", NULL};
  s = gen("adv_values", a2, &st);
  ok = st == 0 && s;
  for (size_t i = 1; ok && i < s->n; i++)
    ok = kvb_norm2(s->V + (i - 1) * 4, 4) <= kvb_norm2(s->V + i * 4, 4) * (1 + 1e-12);
  CHECK(ok, "adv_values.sorted", "st %d", st);
  kvb_stream_free(s);
  const char *a3[] = {"n=64", "profile=weird", NULL};
  s = gen("adv_values", a3, &st);
  CHECK(st == KVB_EINVAL && !s && strstr(kvb_strerror_last(), "profile"), "adv_values.bad_profile",
        "st %d", st);
  const char *a4[] = {"n=64", "order=shuffled", NULL};
  s = gen("adv_values", a4, &st);
  CHECK(st == KVB_EINVAL && !s, "adv_values.bad_order", "st %d", st);
  const char *a5[] = {"n=3", "bases=4", NULL};
  s = gen("adv_ties", a5, &st);
  CHECK(st == KVB_EINVAL && !s, "adv_ties.bases_gt_n", "st %d", st);
  const char *a6[] = {"n=16", "d_key=2", "mutant=orthogonal", NULL};
  s = gen("adv_large_q", a6, &st);
  CHECK(st == KVB_EINVAL && !s, "adv_large_q.mutant_dim", "st %d", st);
  const char *a7[] = {"n=16", "distinct=3", NULL};
  s = gen("adv_duplicates", a7, &st);
  ok = st == 0 && s && s->m == 3;
  for (size_t i = 3; ok && i < s->n; i++) {
    int found = 0;
    for (size_t j = 0; j < 3; j++) found |= memcmp(s->K + i * 8, s->K + j * 8, 64) == 0;
    ok = found;
  }
  CHECK(ok, "adv_duplicates.distinct", "st %d", st);
  kvb_stream_free(s);
  const char *a8[] = {"n=32", "d_key=8", "spread=1e-3", "r=2", NULL};
  s = gen("adv_collinear", a8, &st);
  ok = st == 0 && s;
  for (size_t i = 1; ok && i < s->n; i++) /* every pair within a tiny angle, norms r */
    ok = fabs(kvb_norm2(s->K + i * 8, 8) - 2) < 1e-12 &&
         kvb_dot(s->K, s->K + i * 8, 8) > 4 * (1 - 1e-4);
  CHECK(ok, "adv_collinear.angle", "st %d", st);
  kvb_stream_free(s);
  UNIT_EXIT();
}

/* test_orders.c — adversarial/orders.c: the reorderings keep the token multiset and produce
 * the promised order, bad arguments are errors, and ties_at_delta really puts keys at
 * distance exactly δ (in double) from their cluster's first key. */
#include "kvbound.h"
#include "orders.h"
#include "unit.h"

#include <math.h>
#include <string.h>

/* Whether o is s permuted: every token of o equals a distinct token of s. */
static int is_permutation_of(const kvb_stream *s, const kvb_stream *o) {
  if (s->n != o->n || s->d_key != o->d_key || s->d_value != o->d_value) return 0;
  unsigned char used[512] = {0};
  for (size_t i = 0; i < o->n; i++) {
    int found = 0;
    for (size_t j = 0; j < s->n && !found; j++)
      if (!used[j] && !memcmp(o->K + i * o->d_key, s->K + j * s->d_key, s->d_key * sizeof(double)) &&
          !memcmp(o->Q + i * o->d_key, s->Q + j * s->d_key, s->d_key * sizeof(double)) &&
          !memcmp(o->V + i * o->d_value, s->V + j * s->d_value, s->d_value * sizeof(double)))
        used[j] = 1, found = 1;
    if (!found) return 0;
  }
  return 1;
}

int main(void) {
  gsl_rng *rng = kvb_rng_alloc_substream(5, 5);
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_parse(&p, "n=200");
  kvb_params_parse(&p, "d_key=3");
  kvb_params_parse(&p, "d_value=2");
  kvb_stream *s = NULL, *o = NULL;
  int rc = kvb_stream_generate("clusterable", &p, rng, &s);
  CHECK(rc == 0, "orders.setup", "%s", kvb_strerror_last());
  if (rc) return 1;

  for (int desc = 0; desc < 2; desc++) {
    rc = kvb_stream_reorder_by_key_norm(s, desc, &o);
    int sorted = rc == 0;
    for (size_t i = 1; sorted && i < o->n; i++) {
      double a = kvb_norm2(o->K + (i - 1) * 3, 3), b = kvb_norm2(o->K + i * 3, 3);
      sorted = desc ? a >= b : a <= b;
    }
    CHECK(sorted && is_permutation_of(s, o) && o->m == s->m && o->delta == s->delta,
          desc ? "orders.key_norm_descending" : "orders.key_norm_ascending", "rc %d", rc);
    kvb_stream_free(o);
    rc = kvb_stream_reorder_by_value_norm(s, desc, &o);
    sorted = rc == 0;
    for (size_t i = 1; sorted && i < o->n; i++) {
      double a = kvb_norm2(o->V + (i - 1) * 2, 2), b = kvb_norm2(o->V + i * 2, 2);
      sorted = desc ? a >= b : a <= b;
    }
    CHECK(sorted && is_permutation_of(s, o),
          desc ? "orders.value_norm_descending" : "orders.value_norm_ascending", "rc %d", rc);
    kvb_stream_free(o);
  }

  /* Interleave with labels i mod 3 on a prefix-heavy labelling: round robin 0,1,2,0,1,2,... */
  {
    size_t label[200];
    for (size_t i = 0; i < 200; i++) label[i] = i < 100 ? 0 : (i < 150 ? 1 : 2);
    rc = kvb_stream_interleave_clusters(s, label, 3, &o);
    /* expected: 50 rounds of (0,1,2), then the remaining 50 tokens of label 0 */
    int ok = rc == 0 && is_permutation_of(s, o);
    for (size_t i = 0; ok && i < 150; i++) {
      size_t c = i % 3, r = i / 3, src = c == 0 ? r : (c == 1 ? 100 + r : 150 + r);
      ok = !memcmp(o->K + i * 3, s->K + src * 3, 3 * sizeof(double));
    }
    for (size_t i = 150; ok && i < 200; i++)
      ok = !memcmp(o->K + i * 3, s->K + (i - 100) * 3, 3 * sizeof(double));
    CHECK(ok, "orders.interleave_round_robin", "rc %d", rc);
    kvb_stream_free(o);
    label[7] = 3;
    rc = kvb_stream_interleave_clusters(s, label, 3, &o);
    CHECK(rc == KVB_EINVAL && o == NULL && strstr(kvb_strerror_last(), "label[7]"),
          "orders.interleave_bad_label", "%s", kvb_status_name(rc));
  }

  /* Permutation validation. */
  {
    size_t perm[200];
    for (size_t i = 0; i < 200; i++) perm[i] = 199 - i;
    rc = kvb_stream_permute(s, perm, &o);
    CHECK(rc == 0 && !memcmp(o->K, s->K + 199 * 3, 3 * sizeof(double)), "orders.permute_reverse",
          "rc %d", rc);
    kvb_stream_free(o);
    perm[5] = perm[6];
    rc = kvb_stream_permute(s, perm, &o);
    CHECK(rc == KVB_EINVAL && o == NULL, "orders.permute_duplicate_rejected", "%s",
          kvb_status_name(rc));
    perm[5] = 1000;
    rc = kvb_stream_permute(s, perm, &o);
    CHECK(rc == KVB_EINVAL && o == NULL, "orders.permute_out_of_range_rejected", "%s",
          kvb_status_name(rc));
    rc = kvb_stream_permute(NULL, perm, &o);
    CHECK(rc == KVB_ENULL, "orders.permute_null", "%s", kvb_status_name(rc));
  }
  kvb_stream_free(s);

  /* ties_at_delta: exact distance δ, clusterability, and the power-of-two requirement. */
  {
    static const double deltas[3] = {1.0, 0.125, 64.0};
    for (int c = 0; c < 3; c++) {
      kvb_params q;
      kvb_params_init(&q);
      kvb_params_parse(&q, "n=300");
      kvb_params_set(&q, "delta", deltas[c]);
      rc = kvb_stream_generate("ties_at_delta", &q, rng, &s);
      size_t exact = 0, far = 0;
      for (size_t i = 0; rc == 0 && i < s->n; i++) {
        /* the first key of i's cluster: the earliest key on the same line within δ */
        for (size_t j = 0; j <= i; j++) {
          double d = kvb_dist2(s->K + j * s->d_key, s->K + i * s->d_key, s->d_key);
          if (d <= deltas[c]) {
            exact += d == deltas[c];
            break;
          }
        }
        for (size_t j = 0; j < i; j++) {
          double d = kvb_dist2(s->K + j * s->d_key, s->K + i * s->d_key, s->d_key);
          far += d > deltas[c] && d < 2 * deltas[c]; /* other clusters are ≥ 2δ away */
        }
      }
      char name[64];
      snprintf(name, sizeof name, "orders.ties_at_delta_exact_%g", deltas[c]);
      CHECK(rc == 0 && exact > 50 && far == 0 && s->delta == deltas[c], name,
            "rc %d, %zu keys at exactly δ, %zu pairs in (δ, 2δ)", rc, exact, far);
      kvb_stream_free(s);
    }
    kvb_params q;
    kvb_params_init(&q);
    kvb_params_parse(&q, "delta=0.3");
    rc = kvb_stream_generate("ties_at_delta", &q, rng, &s);
    CHECK(rc == KVB_EINVAL && s == NULL && strstr(kvb_strerror_last(), "power of two"),
          "orders.ties_at_delta_needs_power_of_two", "%s '%s'", kvb_status_name(rc),
          kvb_strerror_last());
  }
  gsl_rng_free(rng);
  UNIT_EXIT();
}

/* test_kv_store.c — the raw stream store (src/core/kv_store.h) shared by exact attention, the
 * block-parallel methods and recent window + k-center: rows in stream order across growth, and
 * a failed growth leaves the store as it was. */
#include "kv_store.h"
#include "kvbound.h"
#include "unit.h"

#include <stdint.h>
#include <string.h>

int main(void) {
  kvb_kv_store s;
  kvb_kv_init(&s, 3, 2);
  int rc = 0;
  for (int i = 0; i < 1000 && !rc; i++) {
    double k[3] = {i, i + 0.5, -i}, v[2] = {2.0 * i, 1};
    rc = kvb_kv_append(&s, k, v, "test");
  }
  int ok = rc == 0 && s.n == 1000 && s.cap >= 1000;
  for (size_t i = 0; ok && i < s.n; i++)
    ok = s.K[i * 3] == (double)i && s.K[i * 3 + 2] == -(double)i && s.V[i * 2] == 2.0 * i &&
         s.V[i * 2 + 1] == 1;
  CHECK(ok, "kv_store.rows_in_order_across_growth", "rc %d n %zu cap %zu", rc, s.n, s.cap);
  kvb_kv_free(&s);
  CHECK(s.n == 0 && s.cap == 0 && !s.K && !s.V, "kv_store.free_empties", "n %zu", s.n);

  /* Rows too wide to ever grow: refused with a message naming the caller, nothing changed. */
  kvb_kv_init(&s, SIZE_MAX / 64, 1);
  double k[1] = {0}, v[1] = {0};
  rc = kvb_kv_append(&s, k, v, "wide");
  CHECK(rc == KVB_ENOMEM && s.n == 0 && s.cap == 0 && !s.K && strstr(kvb_strerror_last(), "wide"),
        "kv_store.refused_growth_leaves_it_unchanged", "rc %d n %zu msg '%s'", rc, s.n,
        kvb_strerror_last());
  kvb_kv_free(&s);
  UNIT_EXIT();
}

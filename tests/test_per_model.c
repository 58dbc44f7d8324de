/* test_per_model.c — a real-model check written once and run on every model of the registry
 * (props/per_model.h) on hand-worked cases: the per-model claim ids, the model a claim id names,
 * and the expansion of a check table (order, ids, the first-model-only checks, a model's wording
 * row and the fallback wording). Two wrong expansions a reviewer might write — the key appended
 * at the end of the id, the copies grouped by check instead of by model — are run through the
 * same cases and must each disagree with at least one. */
#include "per_model.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void run_nothing(prop_ctx *ctx) { (void)ctx; }

/* ---- the mutants ---- */
typedef void (*id_fn)(const char *ref_id, kvb_lm_kind kind, char *buf, size_t cap);
static void id_suffix(const char *ref_id, kvb_lm_kind kind, char *buf, size_t cap) {
  if (kind == 0) snprintf(buf, cap, "%s", ref_id);
  else snprintf(buf, cap, "%s.%s", ref_id, kvb_lm_kind_key(kind));
}

/* The expected table of three reference checks a.x, a.y (first model only), a.z, listed as the
 * expansion must list them (or as a check-major mutant would). */
static int expected_ids(int check_major, const char **want, char (*store)[64]) {
  static const char *const names[] = {"x", "y", "z"};
  int n = 0;
  if (!check_major) {
    for (int k = 0; k < KVB_LM_N_KINDS; k++)
      for (int c = 0; c < 3; c++) {
        if (k > 0 && c == 1) continue;
        if (k == 0) snprintf(store[n], 64, "a.%s", names[c]);
        else snprintf(store[n], 64, "a.%s.%s", kvb_lm_kind_key((kvb_lm_kind)k), names[c]);
        want[n] = store[n], n++;
      }
  } else {
    for (int c = 0; c < 3; c++)
      for (int k = 0; k < KVB_LM_N_KINDS; k++) {
        if (k > 0 && c == 1) continue;
        if (k == 0) snprintf(store[n], 64, "a.%s", names[c]);
        else snprintf(store[n], 64, "a.%s.%s", kvb_lm_kind_key((kvb_lm_kind)k), names[c]);
        want[n] = store[n], n++;
      }
  }
  return n;
}

/* 1 when id_of names the hand-worked ids right */
static int ids_right(id_fn id_of) {
  char b[128];
  int ok = 1;
  id_of("real.cluster", (kvb_lm_kind)0, b, sizeof b), ok &= !strcmp(b, "real.cluster");
  id_of("real.cluster", KVB_LM_GEMMA3, b, sizeof b), ok &= !strcmp(b, "real.gemma3.cluster");
  id_of("real_model.e2e.balancekv", KVB_LM_GEMMA3, b, sizeof b);
  ok &= !strcmp(b, "real_model.gemma3.e2e.balancekv");
  id_of("long_context.needle", KVB_LM_GEMMA3, b, sizeof b), ok &= !strcmp(b, "long_context.gemma3.needle");
  return ok;
}

/* 1 when the table (NULL-id-terminated) lists exactly want[0..n) in order */
static int table_is(const prop_claim *t, const char **want, int n) {
  int i = 0;
  for (; t[i].id; i++)
    if (i >= n || strcmp(t[i].id, want[i])) return 0;
  return i == n;
}

int main(void) {
  CHECK(ids_right(prop_model_id), "per_model.ids", "a per-model id is not the hand-worked one");
  CHECK(!ids_right(id_suffix), "per_model.ids_mutant_suffix", "the key appended at the end passed");

  prop_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  static const struct { const char *id; int kind; } OF[] = {
      {"real.cluster", 0}, {"real.gemma3.cluster", 1}, {"real_model.gemma3.e2e.balancekv", 1},
      {"long_context.gemma3.needle", 1}, {"real.gemma3x.cluster", 0}, {"gemma3.real.cluster", 0},
      {"real.smollm2.cluster", 0}, {"nodot", 0}};
  int ok = 1;
  for (size_t i = 0; i < sizeof OF / sizeof *OF; i++) {
    ctx.id = OF[i].id;
    int got = (int)prop_model_of(&ctx);
    if (got != OF[i].kind) printf("  %s: model %d, want %d\n", OF[i].id, got, OF[i].kind), ok = 0;
  }
  ctx.id = NULL;
  ok &= prop_model_of(&ctx) == 0 && prop_model_of(NULL) == 0;
  CHECK(ok, "per_model.model_of", "a claim id names the wrong model");

  /* the expansion */
  static const prop_claim ref[] = {
      {"a.x", "src x", "comparison", "x on the first model", {"check:mx"}, run_nothing, {"R-X"}},
      {"a.y", "src y", "comparison", "y, first model only", {"check:my"}, run_nothing, {"R-Y"}},
      {"a.z", "src z", "comparison", "z on the first model", {"check:mz"}, run_nothing, {NULL},
       "the question?"}};
  static const char *const ref_only[] = {"a.y", NULL};
  const prop_model_wording words[] = {
      {"a.x", kvb_lm_kind_name(KVB_LM_GEMMA3), "src x on Gemma", "x on Gemma", {"check:mx_g"}, NULL},
      {NULL, NULL, NULL, NULL, {NULL}, NULL}};
  prop_claim out[3 * KVB_LM_N_KINDS + 1];
  size_t n = 0;
  int rc = prop_models_expand(out, &n, sizeof out / sizeof *out, ref, 3, ref_only, words);
  const char *want[3 * KVB_LM_N_KINDS], *wmaj[3 * KVB_LM_N_KINDS];
  char store[3 * KVB_LM_N_KINDS][64], smaj[3 * KVB_LM_N_KINDS][64];
  int nw = expected_ids(0, want, store), nm = expected_ids(1, wmaj, smaj);
  CHECK(rc == 0 && (int)n == nw && table_is(out, want, nw), "per_model.expand_order",
        "rc %d, %zu entries (want %d)", rc, n, nw);
  CHECK(!table_is(out, wmaj, nm), "per_model.expand_order_mutant_check_major",
        "the check-major order was accepted");
  /* Gemma's copies: a.x with its wording row, a.z with the fallback wording; the reference's
   * run, kind and covers kept; the first model's entries as written */
  const prop_claim *gx = &out[3], *gz = &out[4];
  ok = out[0].statement == ref[0].statement && out[2].question == ref[2].question;
  ok &= !strcmp(gx->source, "src x on Gemma") && !strcmp(gx->statement, "x on Gemma") &&
        !strcmp(gx->mutants[0], "check:mx_g") && gx->run == run_nothing &&
        !strcmp(gx->covers[0], "R-X") && gx->question == NULL;
  char fb[128];
  snprintf(fb, sizeof fb, "%s: as a.z", kvb_lm_kind_name(KVB_LM_GEMMA3));
  ok &= !strcmp(gz->statement, fb) && !strcmp(gz->source, "src z") &&
        !strcmp(gz->mutants[0], "check:mz") && !strcmp(gz->question, "the question?");
  CHECK(ok, "per_model.expand_wording", "copy x: '%s' / '%s'; copy z: '%s'", gx->source,
        gx->statement, gz->statement);
  /* too small a table: cut at the last whole entry, terminated, -1 */
  prop_claim small[3];
  n = 0;
  rc = prop_models_expand(small, &n, 3, ref, 3, ref_only, words);
  CHECK(rc == -1 && n == 2 && small[2].id == NULL, "per_model.expand_full",
        "rc %d, %zu entries", rc, n);
  /* the fewest items with which a sign test can reject at 1e-6: 2^-c <= 1e-6 < 2^-(c-1) */
  CHECK(ldexp(1.0, -PROP_SIGN_TEST_MIN_ITEMS) <= 1e-6 && ldexp(1.0, -(PROP_SIGN_TEST_MIN_ITEMS - 1)) > 1e-6,
        "per_model.sign_test_min_items", "PROP_SIGN_TEST_MIN_ITEMS = %d", PROP_SIGN_TEST_MIN_ITEMS);
  UNIT_EXIT();
}

/* test_lm.c — the one handle on either real model (src/model/lm.h): model names, refusals of bad
 * input with messages naming the problem, and — where the files are present — the handle's view of
 * each model (context, which layers a method compresses and their order, BOS, the tokenizer's
 * round trip, the pass-key prompt's BOS). Without a model file its checks print SKIP. */
#include "kvb_error.h"
#include "lm.h"
#include "passkey.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static void names(void) {
  kvb_lm_kind k = KVB_LM_GEMMA3;
  CHECK(kvb_lm_kind_lookup("smollm2", &k) == KVB_OK && k == KVB_LM_SMOLLM2, "lm.lookup_smollm2",
        "kind %d", (int)k);
  CHECK(kvb_lm_kind_lookup("gemma3", &k) == KVB_OK && k == KVB_LM_GEMMA3, "lm.lookup_gemma3",
        "kind %d", (int)k);
  int st = kvb_lm_kind_lookup("llama", &k);
  CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "llama") &&
            strstr(kvb_strerror_last(), "gemma3") && k == KVB_LM_GEMMA3,
        "lm.lookup_unknown_refused", "status %d, message '%s', kind %d", st, kvb_strerror_last(),
        (int)k);
  CHECK(!strcmp(kvb_lm_kind_key(KVB_LM_SMOLLM2), "smollm2") &&
            !strcmp(kvb_lm_kind_key(KVB_LM_GEMMA3), "gemma3") &&
            !strcmp(kvb_lm_kind_key((kvb_lm_kind)7), "?"),
        "lm.kind_keys", "keys differ");
}

static void refusals(void) {
  kvb_lm lm;
  memset(&lm, 0x5a, sizeof lm);
  int st = kvb_lm_load((kvb_lm_kind)7, NULL, &lm);
  int zero = 1;
  for (size_t i = 0; i < sizeof lm; i++) zero &= ((unsigned char *)&lm)[i] == 0;
  CHECK(st == KVB_EINVAL && zero, "lm.load_unknown_kind_refused", "status %d, zeroed %d", st, zero);
  CHECK(kvb_lm_load(KVB_LM_SMOLLM2, NULL, NULL) == KVB_ENULL, "lm.load_null_out_refused",
        "status differs");
  st = kvb_lm_load(KVB_LM_GEMMA3, "/nonexistent/gemma.gguf", &lm);
  CHECK(st != KVB_OK && lm.m == NULL && lm.owned == NULL, "lm.load_missing_file_refused",
        "status %d", st);
  /* a handle on no model: every call refuses, nothing is written */
  kvb_lm none = kvb_lm_view_smollm2(NULL);
  int32_t *ids = (int32_t *)&none;
  size_t n = 42;
  st = kvb_lm_encode(&none, "a", 1, &ids, &n);
  CHECK(st == KVB_ENULL && n == 42, "lm.encode_without_model_refused", "status %d n %zu", st, n);
  kvb_dec_session *s = (kvb_dec_session *)&none;
  st = kvb_lm_dec_open(&none, NULL, NULL, NULL, NULL, &s);
  CHECK(st == KVB_ENULL && s == NULL, "lm.dec_open_without_model_refused", "status %d", st);
  CHECK(kvb_lm_bos(&none) == -1 && kvb_lm_n_compressed(&none) == 0 &&
            kvb_lm_compressed_index(&none, 0) == -1 && kvb_lm_bos(NULL) == -1,
        "lm.queries_without_model", "a query on no model answered");
  kvb_lm_free(NULL);
  kvb_lm_free(&none);
  CHECK(none.m == NULL && none.owned == NULL, "lm.free_of_a_view", "view not cleared");
}

static void one_model(kvb_lm_kind kind) {
  const char *key = kvb_lm_kind_key(kind);
  char name[96];
  if (kvb_lm_available(kind) != KVB_OK) {
    printf("SKIP lm.%s: %s\n", key, kvb_strerror_last());
    return;
  }
  kvb_lm lm;
  int st = kvb_lm_load(kind, NULL, &lm);
  snprintf(name, sizeof name, "lm.%s.load", key);
  CHECK(st == KVB_OK && lm.owned && !strcmp(lm.key, key), name, "%s", kvb_strerror_last());
  if (st) return;
  int g3 = kind == KVB_LM_GEMMA3;
  snprintf(name, sizeof name, "lm.%s.shape", key);
  CHECK(lm.n_ctx == (g3 ? 32768 : 8192) && lm.n_layer == (g3 ? 18 : 30) &&
            lm.n_head_kv == (g3 ? 1 : 3) && lm.head_dim == (g3 ? 256 : 64),
        name, "n_ctx %d layers %d kv heads %d hd %d", lm.n_ctx, lm.n_layer, lm.n_head_kv,
        lm.head_dim);
  /* arch.h: Gemma 3's global layers l % 6 == 5; SmolLM2 compresses every layer */
  int ok = kvb_lm_n_compressed(&lm) == (g3 ? 3 : 30);
  for (int l = 0; l < lm.n_layer; l++) {
    int want = g3 ? (l % 6 == 5 ? l / 6 : -1) : l;
    ok &= kvb_lm_compressed_index(&lm, l) == want && kvb_lm_compressed(&lm, l) == (want >= 0);
  }
  ok &= !kvb_lm_compressed(&lm, -1) && !kvb_lm_compressed(&lm, lm.n_layer);
  snprintf(name, sizeof name, "lm.%s.compressed_layers", key);
  CHECK(ok, name, "%d compressed", kvb_lm_n_compressed(&lm));
  /* the table's facts known before loading (the props' per-model loops read them) agree with
   * the loaded record */
  ok = kvb_lm_kind_n_ctx(kind) == lm.n_ctx && !kvb_lm_kind_global(kind, -1) &&
       !kvb_lm_kind_global(kind, lm.n_layer);
  for (int l = 0; l < lm.n_layer; l++) ok &= kvb_lm_kind_global(kind, l) == kvb_lm_compressed(&lm, l);
  snprintf(name, sizeof name, "lm.%s.table_matches_record", key);
  CHECK(ok, name, "table n_ctx %d, record %d", kvb_lm_kind_n_ctx(kind), lm.n_ctx);
  snprintf(name, sizeof name, "lm.%s.bos", key);
  CHECK(kvb_lm_bos(&lm) == (g3 ? 2 : -1), name, "bos %d", (int)kvb_lm_bos(&lm));
  const char *text = "The secret number of apple is 1234567.";
  int32_t *ids = NULL;
  size_t n = 0, len = 0;
  char *back = NULL;
  st = kvb_lm_encode(&lm, text, strlen(text), &ids, &n);
  if (!st) st = kvb_lm_decode(&lm, ids, n, &back, &len);
  int nobos = st == KVB_OK && n > 0 && ids[0] != kvb_lm_bos(&lm);
  snprintf(name, sizeof name, "lm.%s.round_trip_without_bos", key);
  CHECK(st == KVB_OK && nobos && back && !strcmp(back, text), name, "status %d, '%s'", st,
        back ? back : "");
  free(ids), free(back);
  /* passkey.h: a model that takes a BOS gets it first, inside the compressed prefix, once */
  int32_t *pk = NULL;
  size_t n0 = 0, nt = 0;
  st = kvb_dec_passkey_prompt(&lm, 12345, 0.5, 4, &pk, &n0, &nt);
  int nb = 0;
  for (size_t i = 0; !st && i < n0 + nt; i++) nb += pk[i] == kvb_lm_bos(&lm);
  snprintf(name, sizeof name, "lm.%s.passkey_bos", key);
  CHECK(st == KVB_OK && n0 > 1 && nt > 0 && (g3 ? pk[0] == 2 && nb == 1 : nb == 0), name,
        "status %d, first id %d, %d BOS", st, pk ? (int)pk[0] : -1, nb);
  snprintf(name, sizeof name, "lm.%s.passkey_answer", key);
  int32_t ans[8];
  size_t na = 0;
  int32_t *a = NULL;
  st = kvb_lm_encode(&lm, " 12345.", 7, &a, &na);
  if (!st && na <= 8) memcpy(ans, a, na * sizeof *a);
  CHECK(st == KVB_OK && na <= 8 && kvb_dec_passkey_correct(&lm, ans, na, 12345) &&
            !kvb_dec_passkey_correct(&lm, ans, na, 12346),
        name, "status %d, %zu tokens", st, na);
  free(a), free(pk);
  kvb_lm_free(&lm);
  snprintf(name, sizeof name, "lm.%s.free", key);
  CHECK(lm.owned == NULL && lm.m == NULL, name, "not cleared");
}

int main(void) {
  names();
  refusals();
  one_model(KVB_LM_SMOLLM2);
  one_model(KVB_LM_GEMMA3);
  UNIT_EXIT();
}

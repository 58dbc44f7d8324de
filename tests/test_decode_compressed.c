/* test_decode_compressed.c — compressed decoding inside the model (src/model/decode_compressed.h)
 * on a few tokens of the GPL-3 text:
 *   - with the method "exact" every head's method holds the whole cache, so the decode path
 *     (methods fed the prompt, new tokens run layer by layer through update/query) must give the
 *     full prefill's log-probabilities: max |Δ log-prob| ≤ 1e-3 (float32 sgemm attention in the
 *     prefill vs double attention here), KL ≤ 1e-6, top-1 all equal — and the same through
 *     greedy decoding; a RoPE position off by one in the decode path breaks it (the check can
 *     fail);
 *   - a baseline whose budget holds every token (sink_recent, budget ≥ n) is exact too;
 *   - a small budget changes the distribution (KL > 0) and its memory is the budget's;
 *   - bad input: observe beyond the prompt, NULL, a prompt over the context, a make function
 *     that fails — clear errors.
 * SKIP lines without the model. */
#include "decode_compressed.h"
#include "kvb_error.h"
#include "model.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const kvb_method_type kvb_method_exact;
extern const kvb_method_type kvb_method_sink_recent;

typedef struct {
  const kvb_method_type *t;
  const char *assign; /* "name=value" or NULL */
  int fail_at;        /* layer at which make fails (-1: never) */
} mk_ctx;

static int make(void *vc, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  mk_ctx *c = vc;
  (void)g;
  if (layer == c->fail_at) return KVB_ERROR(KVB_EINVAL, "test: make fails at layer %d", layer);
  kvb_params p;
  kvb_params_init(&p);
  if (c->assign && kvb_params_parse(&p, c->assign)) return KVB_EINVAL;
  return kvb_method_alloc_type(c->t, cfg, &p, out);
}

/* A Gemma 3 file whose layer count leaves no global layer (5 layers; layer l is global when
 * l % 6 == 5) must be refused: the methods replace attention on the global layers only, so the
 * decode would be exact and report a method that never ran. A 6-layer one (global layer 5)
 * opens and makes one method per kv head of layer 5 (the check can pass). Needs no model: a
 * stand-in config and a zero prefix of the right shape. */
static int made;
static int make_count(void *vc, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  (void)vc, (void)layer, (void)g;
  made++;
  kvb_params p;
  kvb_params_init(&p);
  return kvb_method_alloc_type(&kvb_method_exact, cfg, &p, out);
}

static void gemma3_layers_without_a_global_one(void) {
  for (int nl = 5; nl <= 6; nl++) {
    float w = 0, qkv[6 * 2 * 2] = {0};
    kvb_model g = {0};
    g.cfg.n_layer = nl, g.cfg.n_head = 1, g.cfg.n_head_kv = 1, g.cfg.head_dim = 2;
    g.cfg.n_ctx = 64, g.cfg.window = 512, g.cfg.swa_period = 6, g.cfg.n_vocab = 4;
    g.weights = &w;
    int32_t tok[2] = {1, 2};
    kvb_dec_prefix p = {2, nl, 1, 1, 2, tok, qkv, qkv, qkv};
    kvb_dec_opts o = {0, 1, 0};
    kvb_dec_session *s = NULL;
    made = 0;
    int st = kvb_dec_open(&g, &p, make_count, NULL, &o, &s);
    if (nl == 5)
      CHECK(st == KVB_EINVAL && !s && made == 0 && strstr(kvb_strerror_last(), "no global layer"),
            "decode.gemma3_no_global_layer_refused", "5 layers: st %d, methods made %d: %s", st,
            made, kvb_strerror_last());
    else
      CHECK(st == KVB_OK && s && made == 1, "decode.gemma3_six_layers_one_global",
            "6 layers: st %d, methods made %d: %s", st, made, kvb_strerror_last());
    kvb_dec_close(s);
  }
}

int main(void) {
  gemma3_layers_without_a_global_one();
  if (kvb_model_available() != KVB_OK) {
    printf("SKIP decode.exact_matches_prefill: %s\n", kvb_strerror_last());
    UNIT_EXIT();
  }
  kvb_model m;
  if (kvb_model_load(NULL, &m)) {
    CHECK(0, "decode.model_load", "%s", kvb_strerror_last());
    UNIT_EXIT();
  }
  FILE *f = fopen("/usr/share/common-licenses/GPL-3", "rb");
  char buf[4096];
  size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  int32_t *ids = NULL;
  size_t nt = 0;
  if (len == 0 || kvb_tok_encode(m.tok, buf, len, &ids, &nt) || nt < 64) {
    printf("SKIP decode.exact_matches_prefill: /usr/share/common-licenses/GPL-3 missing\n");
    kvb_model_free(&m);
    free(ids);
    return 0;
  }
  const size_t n0 = 40, n1 = 8, V = (size_t)m.cfg.n_vocab;
  kvb_dec_prefix pre;
  int st = kvb_dec_prefix_build(&m, ids, n0, &pre);
  CHECK(st == KVB_OK, "decode.prefix_build", "%s", kvb_strerror_last());
  float *ref = NULL;
  st = kvb_dec_reference(&m, ids, n0, n1, &ref);
  CHECK(st == KVB_OK, "decode.reference", "%s", kvb_strerror_last());
  if (!ref) goto out;

  /* exact through the decode path */
  {
    mk_ctx c = {&kvb_method_exact, NULL, -1};
    kvb_dec_opts o = {0, 1, 0};
    kvb_dec_session *s = NULL;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    CHECK(st == KVB_OK, "decode.open_exact", "%s", kvb_strerror_last());
    double nll[8], kl[8], mem = 0;
    int ag[8];
    st = s ? kvb_dec_score(s, ids + n0, n1, ref, nll, kl, ag, &mem) : st;
    double kmax = 0, dmax = 0;
    int agree = 0;
    for (size_t i = 0; i < n1; i++) {
      kmax = fmax(kmax, kl[i]), agree += ag[i];
      dmax = fmax(dmax, fabs(nll[i] + ref[i * V + (size_t)ids[n0 + 1 + i]]));
    }
    CHECK(st == KVB_OK && kmax <= 1e-6 && dmax <= 1e-3 && agree == (int)n1,
          "decode.exact_matches_prefill", "st %d KL max %.3g, |Δ nll| max %.3g, top-1 %d/%zu", st,
          kmax, dmax, agree, n1);
    CHECK(fabs(mem - 2.0 * (double)(n0 + n1)) < 1e-9,
          "decode.exact_memory", "vectors %.1f after n0 + n1 tokens", mem);
    kvb_dec_close(s);
  }
  /* a RoPE position off by one: the same check must fail */
  {
    mk_ctx c = {&kvb_method_exact, NULL, -1};
    kvb_dec_opts o = {0, 1, 1};
    kvb_dec_session *s = NULL;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    double kl[8];
    double kmax = 0;
    if (!st) st = kvb_dec_score(s, ids + n0, n1, ref, NULL, kl, NULL, NULL);
    for (size_t i = 0; !st && i < n1; i++) kmax = fmax(kmax, kl[i]);
    CHECK(st == KVB_OK && kmax > 1e-3, "decode.rope_shift_detected", "KL max %.3g", kmax);
    kvb_dec_close(s);
  }
  /* greedy: exact decode equals the argmax of the reference at the first step */
  {
    mk_ctx c = {&kvb_method_exact, NULL, -1};
    kvb_dec_opts o = {0, 1, 0};
    kvb_dec_session *s = NULL;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    int32_t gen[2] = {-1, -1};
    if (!st) st = kvb_dec_greedy(s, ids + n0, 1, 2, gen);
    size_t am = 0;
    for (size_t a = 1; a < V; a++)
      if (ref[a] > ref[am]) am = a;
    CHECK(st == KVB_OK && gen[0] == (int32_t)am && kvb_dec_position(s) == n0 + 2,
          "decode.greedy_exact", "st %d gen %d vs argmax %zu, position %zu", st, (int)gen[0], am,
          kvb_dec_position(s));
    kvb_dec_close(s);
  }
  /* sink_recent with a budget beyond the stream is exact; a small budget is not */
  {
    const char *as[2] = {"budget=100", "budget=12"};
    for (int b = 0; b < 2; b++) {
      mk_ctx c = {&kvb_method_sink_recent, as[b], -1};
      kvb_dec_opts o = {0, 1, 0};
      kvb_dec_session *s = NULL;
      st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
      double kl[8], kmax = 0, mem = 0;
      if (!st) st = kvb_dec_score(s, ids + n0, n1, ref, NULL, kl, NULL, &mem);
      for (size_t i = 0; !st && i < n1; i++) kmax = fmax(kmax, kl[i]);
      if (b == 0)
        CHECK(st == KVB_OK && kmax <= 1e-6, "decode.full_budget_exact", "KL max %.3g", kmax);
      else
        CHECK(st == KVB_OK && kmax > 1e-4 && kvb_dec_memory_prefill(s) == 24.0 && mem == 24.0,
              "decode.small_budget_differs", "KL max %.3g, memory %.1f / %.1f", kmax,
              kvb_dec_memory_prefill(s), mem);
      kvb_dec_close(s);
    }
  }
  /* bad input */
  {
    mk_ctx c = {&kvb_method_exact, NULL, -1};
    kvb_dec_opts o = {n0 + 1, 1, 0};
    kvb_dec_session *s = (kvb_dec_session *)&c;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    CHECK(st == KVB_EINVAL && s == NULL && strstr(kvb_strerror_last(), "observe"),
          "decode.bad_observe", "st %d: %s", st, kvb_strerror_last());
    o.observe = 0;
    c.fail_at = 3;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    CHECK(st != KVB_OK && s == NULL && strstr(kvb_strerror_last(), "layer 3"),
          "decode.make_fails", "st %d: %s", st, kvb_strerror_last());
    st = kvb_dec_open(&m, NULL, make, &c, &o, &s);
    CHECK(st == KVB_ENULL && s == NULL, "decode.null_prefix", "st %d", st);
    kvb_dec_prefix bad;
    st = kvb_dec_prefix_build(&m, ids, 0, &bad);
    CHECK(st == KVB_EINVAL, "decode.empty_prompt", "st %d", st);
    st = kvb_dec_prefix_build(&m, ids, (size_t)m.cfg.n_ctx, &bad);
    CHECK(st == KVB_EINVAL, "decode.prompt_over_context", "st %d", st);
    c.fail_at = -1;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    int32_t badtok = -5;
    int st2 = st ? st : kvb_dec_forward(s, &badtok, 1, NULL);
    CHECK(st2 == KVB_EINVAL && kvb_dec_position(s) == n0, "decode.bad_token", "st %d", st2);
    kvb_dec_close(s);
  }
out:
  free(ref);
  kvb_dec_prefix_free(&pre);
  free(ids);
  kvb_model_free(&m);
  UNIT_EXIT();
}

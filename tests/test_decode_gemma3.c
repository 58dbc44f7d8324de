/* test_decode_gemma3.c — compressed decoding inside Gemma 3 270M (decode_compressed.h,
 * kvb_dec_open) on the GPL-3 text, with a prompt of 600 tokens, longer than the local
 * layers' 512-token window:
 *   - with the method "exact" on the global layers (and the 512-token window the session keeps
 *     on the local ones) the decode path must give the full prefill's log-probabilities:
 *     max |Δ log-prob| of the targets ≤ 1e-3, KL ≤ 1e-5, top-1 all equal; greedy decoding's first
 *     token is the reference's argmax; a RoPE position off by one must break it;
 *   - memory: a local layer holds exactly its window (2·512 vectors), a global one what its method
 *     holds (exact: every token), and the session's mean counts the global caches only;
 *   - a small sink_recent budget on the global layers changes the distribution;
 *   - bad input: a token outside the vocabulary, a make function that fails on a global layer.
 * SKIP without the model. */
#include "decode_compressed.h"
#include "kvb_error.h"
#include "lm.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const kvb_method_type kvb_method_exact;
extern const kvb_method_type kvb_method_sink_recent;

typedef struct {
  const kvb_method_type *t;
  const char *assign;
  int fail_at;
  int calls; /* layers make was called for (bit l) */
} mk_ctx;

static int make(void *vc, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  mk_ctx *c = vc;
  (void)g;
  c->calls |= 1 << layer;
  if (layer == c->fail_at) return KVB_ERROR(KVB_EINVAL, "test: make fails at layer %d", layer);
  kvb_params p;
  kvb_params_init(&p);
  if (c->assign && kvb_params_parse(&p, c->assign)) return KVB_EINVAL;
  return kvb_method_alloc_type(c->t, cfg, &p, out);
}

int main(void) {
  if (kvb_lm_available(KVB_LM_GEMMA3) != KVB_OK) {
    printf("SKIP decode_gemma3.exact_matches_prefill: %s\n", kvb_strerror_last());
    return 0;
  }
  kvb_model m;
  if (kvb_lm_model_load(KVB_LM_GEMMA3, NULL, &m)) {
    CHECK(0, "decode_gemma3.model_load", "%s", kvb_strerror_last());
    UNIT_EXIT();
  }
  FILE *f = fopen("/usr/share/common-licenses/GPL-3", "rb");
  static char buf[16384];
  size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
  if (f) fclose(f);
  int32_t *ids = NULL;
  size_t nt = 0;
  const size_t n0 = 600, n1 = 6, V = (size_t)m.cfg.n_vocab;
  if (len == 0 || kvb_spm_encode(m.spm, buf, len, 1, &ids, &nt) || nt < n0 + n1 + 1) {
    printf("SKIP decode_gemma3.exact_matches_prefill: /usr/share/common-licenses/GPL-3 missing or short\n");
    kvb_model_free(&m);
    free(ids);
    return 0;
  }
  kvb_dec_prefix pre;
  int st = kvb_dec_prefix_build(&m, ids, n0, &pre);
  CHECK(st == KVB_OK, "decode_gemma3.prefix_build", "%s", kvb_strerror_last());
  float *ref = NULL;
  st = kvb_dec_reference(&m, ids, n0, n1, &ref);
  CHECK(st == KVB_OK, "decode_gemma3.reference", "%s", kvb_strerror_last());
  if (!ref || pre.n0 != n0) goto out;

  {
    mk_ctx c = {&kvb_method_exact, NULL, -1, 0};
    kvb_dec_opts o = {0, 1, 0};
    kvb_dec_session *s = NULL;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    CHECK(st == KVB_OK && c.calls == ((1 << 5) | (1 << 11) | (1 << 17)),
          "decode_gemma3.make_global_layers_only", "st %d, layers asked 0x%x", st, c.calls);
    double nll[6], kl[6], mem = 0;
    int ag[6];
    st = s ? kvb_dec_score(s, ids + n0, n1, ref, nll, kl, ag, &mem) : st;
    double kmax = 0, dmax = 0;
    int agree = 0;
    for (size_t i = 0; !st && i < n1; i++) {
      kmax = fmax(kmax, kl[i]), agree += ag[i];
      dmax = fmax(dmax, fabs(nll[i] + ref[i * V + (size_t)ids[n0 + 1 + i]]));
    }
    CHECK(st == KVB_OK && kmax <= 1e-5 && dmax <= 1e-3 && agree == (int)n1,
          "decode_gemma3.exact_matches_prefill", "st %d KL max %.3g, |Δ nll| max %.3g, top-1 %d/%zu",
          st, kmax, dmax, agree, n1);
    printf("  exact on global layers, window on local: KL max %.3g, |dnll| max %.3g\n", kmax, dmax);
    size_t loc = kvb_dec_memory_of(s, 0, 0), glo = kvb_dec_memory_of(s, 5, 0);
    CHECK(st == KVB_OK && loc == 2 * 512 && glo == 2 * (n0 + n1) &&
              fabs(mem - 2.0 * (double)(n0 + n1)) < 1e-9 && kvb_dec_memory_prefill(s) == 2.0 * n0,
          "decode_gemma3.memory_global_only", "local %zu, global %zu, mean %.1f, prefill %.1f", loc,
          glo, mem, kvb_dec_memory_prefill(s));
    kvb_dec_close(s);
  }
  { /* a RoPE position off by one */
    mk_ctx c = {&kvb_method_exact, NULL, -1, 0};
    kvb_dec_opts o = {0, 1, 1};
    kvb_dec_session *s = NULL;
    double kl[6], kmax = 0;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    if (!st) st = kvb_dec_score(s, ids + n0, n1, ref, NULL, kl, NULL, NULL);
    for (size_t i = 0; !st && i < n1; i++) kmax = fmax(kmax, kl[i]);
    CHECK(st == KVB_OK && kmax > 1e-3, "decode_gemma3.rope_shift_detected", "KL max %.3g", kmax);
    kvb_dec_close(s);
  }
  { /* greedy */
    mk_ctx c = {&kvb_method_exact, NULL, -1, 0};
    kvb_dec_opts o = {0, 1, 0};
    kvb_dec_session *s = NULL;
    int32_t gen[2] = {-1, -1};
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    if (!st) st = kvb_dec_greedy(s, ids + n0, 1, 2, gen);
    size_t am = 0;
    for (size_t a = 1; a < V; a++)
      if (ref[a] > ref[am]) am = a;
    CHECK(st == KVB_OK && gen[0] == (int32_t)am && kvb_dec_position(s) == n0 + 2,
          "decode_gemma3.greedy_exact", "st %d gen %d vs argmax %zu", st, (int)gen[0], am);
    kvb_dec_close(s);
  }
  { /* a small budget on the global layers */
    mk_ctx c = {&kvb_method_sink_recent, "budget=32", -1, 0};
    kvb_dec_opts o = {0, 1, 0};
    kvb_dec_session *s = NULL;
    double kl[6], kmax = 0, mem = 0;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    if (!st) st = kvb_dec_score(s, ids + n0, n1, ref, NULL, kl, NULL, &mem);
    for (size_t i = 0; !st && i < n1; i++) kmax = fmax(kmax, kl[i]);
    CHECK(st == KVB_OK && kmax > 1e-4 && mem == 64.0 && kvb_dec_memory_of(s, 0, 0) == 2 * 512,
          "decode_gemma3.small_budget_differs", "KL max %.3g, memory %.1f", kmax, mem);
    printf("  sink_recent budget 32 on global layers: KL max %.3g\n", kmax);
    kvb_dec_close(s);
  }
  { /* bad input */
    mk_ctx c = {&kvb_method_exact, NULL, 11, 0};
    kvb_dec_opts o = {0, 1, 0};
    kvb_dec_session *s = NULL;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    CHECK(st != KVB_OK && s == NULL && strstr(kvb_strerror_last(), "layer 11"),
          "decode_gemma3.make_fails", "st %d: %s", st, kvb_strerror_last());
    c.fail_at = -1;
    st = kvb_dec_open(&m, &pre, make, &c, &o, &s);
    int32_t badtok = -5;
    int st2 = st ? st : kvb_dec_forward(s, &badtok, 1, NULL);
    CHECK(st2 == KVB_EINVAL && kvb_dec_position(s) == n0, "decode_gemma3.bad_token", "st %d", st2);
    kvb_dec_close(s);
  }
out:
  free(ref);
  kvb_dec_prefix_free(&pre);
  free(ids);
  kvb_model_free(&m);
  UNIT_EXIT();
}

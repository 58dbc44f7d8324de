/* decode_gemma3_cli.c — `kvbound decode --model gemma3 --text ...` (decode_gemma3_cli.h). */
#include "decode_gemma3_cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kvb_error.h"
#include "model_gemma3.h"
#include "read_file.h"

int kvb_decode_text_gemma3(const kvb_gemma3 *g, kvb_dec_make_fn make, void *mc, const char *method,
                           const char *text, size_t start, size_t n0, size_t n1, size_t observe,
                           uint64_t seed) {
  size_t len = 0, nt = 0;
  char *buf = NULL;
  int32_t *ids = NULL;
  if (kvb_read_file(text, KVB_TEXT_FILE_MAX, "--text", &buf, &len) ||
      kvb_spm_encode(g->tok, buf, len, 0, &ids, &nt)) {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
    free(buf);
    return 1;
  }
  free(buf);
  /* the prompt: BOS, then n0 − 1 text tokens from start; n1 + 1 more for the scored targets */
  if (n0 < 2 || start + n0 + n1 > nt) {
    fprintf(stderr, "kvbound decode: the text has %zu tokens; --start %zu --n0 %zu --n1 %zu need "
            "%zu (and n0 >= 2: BOS is the prompt's first token)\n", nt, start, n0, n1, start + n0 + n1);
    free(ids);
    return 2;
  }
  if (n0 + n1 > (size_t)g->cfg.n_ctx) {
    fprintf(stderr, "kvbound decode: n0 + n1 = %zu exceeds Gemma 3's context %d\n", n0 + n1, g->cfg.n_ctx);
    free(ids);
    return 2;
  }
  int32_t *t = malloc((n0 + n1 + 1) * sizeof *t);
  size_t V = (size_t)g->cfg.n_vocab;
  double *nll = malloc(n1 * sizeof *nll), *kl = malloc(n1 * sizeof *kl), mem1 = 0;
  int *ag = malloc(n1 * sizeof *ag);
  float *ref = NULL;
  kvb_dec_prefix pre = {0};
  kvb_dec_session *s = NULL;
  kvb_dec_opts o = {observe == (size_t)-1 ? n0 : observe, seed, 0};
  int st = t && nll && kl && ag ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) {
    t[0] = kvb_spm_bos(g->tok);
    for (size_t i = 1; i <= n0 + n1 && start + i - 1 < nt; i++) t[i] = ids[start + i - 1];
  }
  if (!st) st = kvb_dec_prefix_build_gemma3(g, t, n0, &pre);
  if (!st) st = kvb_dec_reference_gemma3(g, t, n0, n1, &ref);
  if (!st) st = kvb_dec_open_gemma3(g, &pre, make, mc, &o, &s);
  if (!st) st = kvb_dec_score(s, t + n0, n1, ref, nll, kl, ag, &mem1);
  if (!st) {
    double se = 0, sm = 0, sk = 0;
    int agree = 0;
    for (size_t i = 0; i < n1; i++)
      se -= ref[i * V + (size_t)t[n0 + 1 + i]], sm += nll[i], sk += kl[i], agree += ag[i];
    double pe = exp(se / (double)n1), pm = exp(sm / (double)n1);
    /* the global layers of this file's architecture (kvb_gemma3_is_global), not of 270M's */
    char layers[256] = "";
    size_t w = 0;
    for (int l = 0; l < g->cfg.n_layer && w < sizeof layers - 16; l++)
      if (kvb_gemma3_is_global(&g->cfg, l))
        w += (size_t)snprintf(layers + w, sizeof layers - w, "%s%d", w ? ", " : "", l);
    printf("model gemma3  method %s on the global layers (%s); local layers keep their "
           "%d-token window exactly\n", method, layers, g->cfg.window);
    printf("method %s  prompt %zu tokens (BOS + text from %zu), scored %zu\n", method, n0, start, n1);
    printf("perplexity exact %.4f  method %.4f  increase %+.4f (%+.2f%%)\n", pe, pm, pm - pe,
           100 * (pm / pe - 1));
    printf("mean KL(exact || method) %.5f nats/token  top-1 agreement %d/%zu\n", sk / (double)n1,
           agree, n1);
    printf("stored vectors per global-layer cache: %.1f after the prompt, %.1f after the scored "
           "tokens (exact: %zu, %zu; each local cache: at most 1024)\n", kvb_dec_memory_prefill(s),
           mem1, 2 * n0, 2 * (n0 + n1));
  } else {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
  }
  kvb_dec_close(s);
  kvb_dec_prefix_free(&pre);
  free(ref), free(ids), free(t), free(nll), free(kl), free(ag);
  return st ? 1 : 0;
}

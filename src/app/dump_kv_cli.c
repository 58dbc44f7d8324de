/* dump_kv_cli.c — the command line of `kvbound dump-kv` and build/kvb-dump-kv (dump_kv_cli.h);
 * the work is the model layer's kvb_dump_kv (src/model/kv_dump.h). */
#include "dump_kv_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_dump.h"
#include "lm.h"
#include "kvb_error.h"
#include "real_text.h"

static void usage(FILE *f, const char *prog) {
  fprintf(f,
          "usage: %s --text FILE [--tokens N] [--model PATH|smollm2|gemma3] --out DIR\n"
          "  Runs SmolLM2-135M (scripts/fetch-model) over the text and writes, for every layer\n"
          "  LL = 00..29, the post-RoPE queries DIR/layerLL_q.npy [9, n, 64] and keys and values\n"
          "  DIR/layerLL_k.npy, DIR/layerLL_v.npy [3, n, 64] (float32; query head j attends with\n"
          "  key/value head j/3), DIR/tokens.txt (token ids) and DIR/norms.tsv (per layer: mean and sd of\n"
          "  the norms of q, k, k - mean key, v) -- the layout the \"npy\" stream reads.\n"
          "  --text FILE   a text file, or \"%s\": /usr/share/common-licenses/GPL-3 then GFDL-1.3\n"
          "                (Debian's base-files), each checked by its SHA-256; 12839 tokens\n"
          "  --tokens N    keep the first N tokens (default: all, at most the context, 8192)\n"
          "  --model PATH  the GGUF file (default: $KVB_MODEL, else the fetch-model cache);\n"
          "                \"gemma3\": Gemma 3 270M instead (scripts/fetch-model --model gemma3;\n"
          "                18 layers, q [4, n, 256], k and v [1, n, 256]; BOS first)\n"
          "  --out DIR     output directory (created when absent; files in it are replaced)\n"
          "  Exit status 0 done, 1 failed, 2 usage error.\n",
          prog, KVB_TEXT_LICENSES);
}

int kvb_cmd_dump_kv(int argc, char **argv, const char *prog) {
  const char *text = NULL, *out = NULL, *model = NULL;
  long want = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout, prog);
      return 0;
    }
    int known = !strcmp(a, "--text") || !strcmp(a, "--out") || !strcmp(a, "--model") ||
                !strcmp(a, "--tokens");
    if (!known) {
      fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", prog, a, prog);
      return 2;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "%s: %s needs a value (see %s --help)\n", prog, a, prog);
      return 2;
    }
    const char *v = argv[++i];
    if (!strcmp(a, "--text")) text = v;
    else if (!strcmp(a, "--out")) out = v;
    else if (!strcmp(a, "--model")) model = v;
    else {
      char *e;
      errno = 0;
      want = strtol(v, &e, 10);
      if (e == v || *e || errno || want < 1 || want > 8192) {
        fprintf(stderr, "%s: --tokens needs an integer in [1, 8192], got '%s'\n", prog, v);
        return 2;
      }
    }
  }
  if (!text || !out) {
    fprintf(stderr, "%s: %s is required (see %s --help)\n", prog, !text ? "--text" : "--out", prog);
    return 2;
  }
  size_t n = 0;
  if (kvb_dump_kv(text, want, model, out, &n)) {
    fprintf(stderr, "%s: %s\n", prog, kvb_strerror_last());
    return 1;
  }
  kvb_lm_kind kind = KVB_LM_SMOLLM2; /* a path: SmolLM2's shape, as before */
  if (model && kvb_lm_kind_lookup(model, &kind)) kind = KVB_LM_SMOLLM2;
  int nl, nh, nhk, hd;
  kvb_lm_kind_shape(kind, &nl, &nh, &nhk, &hd);
  printf("%s: %zu tokens, %d layers of q [%d, %zu, %d], k and v [%d, %zu, %d] in %s\n", prog, n, nl,
         nh, n, hd, nhk, n, hd, out);
  return 0;
}

/* dump_kv.c — build/kvb-dump-kv: runs SmolLM2-135M (src/model) over a text and writes, for
 * every layer, the post-RoPE queries, keys and values as .npy files in the layout the "npy"
 * stream reads ([heads, n, head_dim], float32):
 *   DIR/layer00_q.npy  [9, n, 64]   DIR/layer00_k.npy  [3, n, 64]   DIR/layer00_v.npy  [3, n, 64]
 *   ... up to layer29, and DIR/tokens.txt (the token ids, one per line).
 * Query head j attends with key/value head j / 3 (grouped-query attention).
 *
 *   kvb-dump-kv --text FILE [--tokens N] [--model PATH] --out DIR
 *
 * --tokens keeps the first N tokens of the text (default: all, at most the model's context).
 * The model comes from --model, else where scripts/fetch-model puts it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvb_error.h"
#include "model.h"
#include "npy.h"

typedef struct {
  const char *dir;
  int status;
  int n_head, n_head_kv, head_dim;
} dump_ctx;

static int write_f32(const char *path, const float *x, size_t heads, size_t n, size_t d) {
  size_t cnt = heads * n * d, shape[3] = {heads, n, d};
  double *y = malloc(cnt * sizeof *y);
  if (!y) return KVB_ERROR(KVB_ENOMEM, "out of memory writing %s", path);
  for (size_t i = 0; i < cnt; i++) y[i] = x[i];
  int st = kvb_npy_write(path, y, 3, shape, "<f4", 1);
  free(y);
  return st;
}

static void on_qkv(void *vctx, int layer, size_t n, const float *q, const float *k, const float *v) {
  dump_ctx *c = vctx;
  if (c->status) return;
  char path[4200];
  const char *what[3] = {"q", "k", "v"};
  const float *src[3] = {q, k, v};
  for (int i = 0; i < 3 && !c->status; i++) {
    snprintf(path, sizeof path, "%s/layer%02d_%s.npy", c->dir, layer, what[i]);
    c->status = write_f32(path, src[i], (size_t)(i == 0 ? c->n_head : c->n_head_kv), n,
                          (size_t)c->head_dim);
  }
}

static int usage(void) {
  fprintf(stderr, "usage: kvb-dump-kv --text FILE [--tokens N] [--model PATH] --out DIR\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *text = NULL, *out = NULL, *model = NULL;
  long want = -1;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) return usage();
    if (strcmp(argv[i], "--text") == 0) text = argv[++i];
    else if (strcmp(argv[i], "--out") == 0) out = argv[++i];
    else if (strcmp(argv[i], "--model") == 0) model = argv[++i];
    else if (strcmp(argv[i], "--tokens") == 0) {
      char *e;
      want = strtol(argv[++i], &e, 10);
      if (*e || want < 1) {
        fprintf(stderr, "kvb-dump-kv: --tokens needs a positive integer\n");
        return 2;
      }
    } else return usage();
  }
  if (!text || !out) return usage();
  FILE *f = fopen(text, "rb");
  if (!f) {
    fprintf(stderr, "kvb-dump-kv: %s: %s\n", text, strerror(errno));
    return 1;
  }
  size_t cap = 1 << 16, len = 0, r;
  char *buf = malloc(cap);
  while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
    len += r;
    if (len == cap) buf = realloc(buf, cap *= 2);
  }
  fclose(f);
  if (!buf) {
    fprintf(stderr, "kvb-dump-kv: out of memory reading %s\n", text);
    return 1;
  }
  kvb_model m;
  if (kvb_model_load(model, &m)) {
    fprintf(stderr, "kvb-dump-kv: %s\n", kvb_strerror_last());
    free(buf);
    return 1;
  }
  int32_t *ids = NULL;
  size_t n = 0;
  int st = kvb_tok_encode(m.tok, buf, len, &ids, &n);
  free(buf);
  if (!st && n == 0) st = KVB_ERROR(KVB_EINVAL, "%s has no tokens", text);
  if (!st && want > 0 && (size_t)want > n)
    st = KVB_ERROR(KVB_EINVAL, "%s has %zu tokens, fewer than --tokens %ld", text, n, want);
  if (!st) {
    if (want > 0) n = (size_t)want;
    if (n > (size_t)m.cfg.n_ctx) n = (size_t)m.cfg.n_ctx;
    if (mkdir(out, 0777) != 0 && errno != EEXIST)
      st = KVB_ERROR(KVB_EIO, "cannot create %s: %s", out, strerror(errno));
  }
  dump_ctx c = {out, KVB_OK, m.cfg.n_head, m.cfg.n_head_kv, m.cfg.head_dim};
  float *hid = NULL;
  if (!st) {
    hid = malloc(n * (size_t)m.cfg.d_model * sizeof(float));
    st = hid ? kvb_model_prefill(&m, ids, n, hid, on_qkv, &c) : KVB_ERROR(KVB_ENOMEM, "out of memory");
    if (!st) st = c.status;
  }
  if (!st) {
    char path[4200];
    snprintf(path, sizeof path, "%s/tokens.txt", out);
    FILE *t = fopen(path, "w");
    if (!t) st = KVB_ERROR(KVB_EIO, "cannot write %s", path);
    else {
      for (size_t i = 0; i < n; i++) fprintf(t, "%d\n", (int)ids[i]);
      fclose(t);
    }
  }
  if (st) fprintf(stderr, "kvb-dump-kv: %s\n", kvb_strerror_last());
  else printf("kvb-dump-kv: %zu tokens, %d layers of q [%d, %zu, %d], k and v [%d, %zu, %d] in %s\n",
              n, m.cfg.n_layer, m.cfg.n_head, n, m.cfg.head_dim, m.cfg.n_head_kv, n, m.cfg.head_dim, out);
  free(hid);
  free(ids);
  kvb_model_free(&m);
  return st ? 1 : 0;
}

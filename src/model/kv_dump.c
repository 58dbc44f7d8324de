/* kv_dump.c — the model's post-RoPE queries, keys and values written as .npy (kv_dump.h); the
 * command line of `kvbound dump-kv` is src/app/dump_kv_cli.c. */
#include "kv_dump.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kvb_error.h"
#include "model.h"
#include "lm.h"
#include "npy.h"
#include "real_text.h"

typedef struct {
  const char *dir;
  int status;
  int n_head, n_head_kv, head_dim;
  FILE *norms; /* the per-layer norm table, or NULL */
} dump_ctx;

/* Mean and sd of the row norms of heads × n rows of dimension d (after subtracting each head's
 * mean row when centered). */
static void norm_stats(const float *x, size_t heads, size_t n, size_t d, int centered, double *mean,
                       double *sd) {
  double s = 0, s2 = 0, mu[256] = {0};
  for (size_t h = 0; h < heads; h++) {
    const float *X = x + h * n * d;
    for (size_t a = 0; a < d && centered; a++) {
      mu[a] = 0;
      for (size_t i = 0; i < n; i++) mu[a] += X[i * d + a];
      mu[a] /= (double)n;
    }
    for (size_t i = 0; i < n; i++) {
      double r = 0;
      for (size_t a = 0; a < d; a++) {
        double y = X[i * d + a] - (centered ? mu[a] : 0);
        r += y * y;
      }
      r = sqrt(r);
      s += r, s2 += r * r;
    }
  }
  double N = (double)(heads * n);
  *mean = s / N;
  *sd = N > 1 ? sqrt(fmax(0, (s2 - s * s / N) / (N - 1))) : 0;
}

static int write_f32(const char *path, const float *x, size_t heads, size_t n, size_t d) {
  size_t cnt = heads * n * d, shape[3] = {heads, n, d};
  double *y = malloc(cnt * sizeof *y);
  if (!y) return KVB_ERROR(KVB_ENOMEM, "out of memory writing %s", path);
  for (size_t i = 0; i < cnt; i++) y[i] = x[i];
  int st = kvb_npy_write(path, y, 3, shape, "<f4", 1);
  free(y);
  return st;
}

/* The prefill's per-layer callback (model.h): one layer's q, k, v to their files. */
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
  if (c->norms && !c->status && c->head_dim <= 256) {
    size_t d = (size_t)c->head_dim, hq = (size_t)c->n_head, hk = (size_t)c->n_head_kv;
    double m[4], sd[4];
    norm_stats(q, hq, n, d, 0, &m[0], &sd[0]);
    norm_stats(k, hk, n, d, 0, &m[1], &sd[1]);
    norm_stats(k, hk, n, d, 1, &m[2], &sd[2]);
    norm_stats(v, hk, n, d, 0, &m[3], &sd[3]);
    fprintf(c->norms, "%d\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\n", layer, m[0], sd[0],
            m[1], sd[1], m[2], sd[2], m[3], sd[3]);
  }
}

/* The directory, the norm table, the prefill and tokens.txt, for a loaded model. */
static int dump(const char *out, const kvb_model *m, const int32_t *ids, size_t n) {
  int n_head = m->cfg.n_head, n_head_kv = m->cfg.n_head_kv, head_dim = m->cfg.head_dim,
      d_model = m->cfg.d_model;
  int st = KVB_OK;
  if (mkdir(out, 0777) != 0 && errno != EEXIST)
    st = KVB_ERROR(KVB_EIO, "dump-kv: cannot create %s (%s)", out, strerror(errno));
  dump_ctx c = {out, KVB_OK, n_head, n_head_kv, head_dim, NULL};
  char npath[4200];
  snprintf(npath, sizeof npath, "%s/norms.tsv", out);
  if (!st && !(c.norms = fopen(npath, "w")))
    st = KVB_ERROR(KVB_EIO, "dump-kv: cannot write %s (%s)", npath, strerror(errno));
  if (c.norms)
    fprintf(c.norms, "# layer\tq_mean\tq_sd\tk_mean\tk_sd\tkc_mean\tkc_sd\tv_mean\tv_sd "
            "(row norms over all heads and tokens; kc: keys minus their head's mean key)\n");
  float *hid = NULL;
  if (!st) {
    hid = malloc(n * (size_t)d_model * sizeof(float));
    st = hid ? kvb_model_prefill(m, ids, n, hid, on_qkv, &c) : KVB_ERROR(KVB_ENOMEM, "dump-kv: out of memory");
    if (!st) st = c.status;
  }
  if (!st) {
    char path[4200];
    snprintf(path, sizeof path, "%s/tokens.txt", out);
    FILE *t = fopen(path, "w");
    if (!t) st = KVB_ERROR(KVB_EIO, "dump-kv: cannot write %s (%s)", path, strerror(errno));
    else {
      for (size_t i = 0; i < n; i++) fprintf(t, "%d\n", (int)ids[i]);
      if (fclose(t) != 0) st = KVB_ERROR(KVB_EIO, "dump-kv: error writing %s", path);
    }
  }
  if (c.norms && fclose(c.norms) != 0 && !st) st = KVB_ERROR(KVB_EIO, "dump-kv: error writing %s", npath);
  free(hid);
  return st;
}

int kvb_dump_kv(const char *text, long want, const char *model, const char *out, size_t *n_out) {
  if (!text || !out) return KVB_ERROR(KVB_ENULL, "dump-kv: the text and the output directory are required");
  if (want < 0) return KVB_ERROR(KVB_EINVAL, "dump-kv: the token count must be positive");
  if (strlen(out) > 4000) return KVB_ERROR(KVB_EINVAL, "dump-kv: output path too long");
  struct stat sb;
  if (stat(out, &sb) == 0 && !S_ISDIR(sb.st_mode))
    return KVB_ERROR(KVB_EINVAL, "dump-kv: %s exists and is not a directory", out);
  kvb_lm_kind kind = KVB_LM_SMOLLM2;
  int known = !model || kvb_lm_kind_lookup(model, &kind) == KVB_OK; /* a key, else a path */
  kvb_error_clear();
  char *buf = NULL;
  size_t len = 0;
  int st = kvb_text_read(text, &buf, &len);
  if (st) return st;
  kvb_model m;
  int32_t *ids = NULL;
  size_t n = 0;
  st = kvb_lm_model_load(kind, known ? NULL : model, &m); /* BOS first when the model takes one */
  if (!st && (st = kvb_model_tokens(&m, buf, len, text, want, "dump-kv", &ids, &n))) kvb_model_free(&m);
  free(buf);
  if (st) return st;
  if (want > (long)m.cfg.n_ctx)
    st = KVB_ERROR(KVB_EINVAL, "dump-kv: %ld tokens asked, the model's context is %d", want, m.cfg.n_ctx);
  if (!st) st = dump(out, &m, ids, n);
  if (!st && n_out) *n_out = n;
  free(ids);
  kvb_model_free(&m);
  return st;
}

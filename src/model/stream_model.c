/* stream_model.c — the "model" stream: the post-RoPE queries, keys and values of one layer and
 * query head of SmolLM2-135M (src/model) run over a text file — real attention caches for every
 * method and check (000 §3.1 and 003 §4 study real caches).
 *
 *   stream "model" { text = "FILE", layer = 0..29, head = 0..8, n = ... }
 *   stream "model" { text = "FILE", model = KEY, layer = ..., head = ..., n = ... }
 *     (a model of lm.h's registry by its key, e.g. Gemma 3 270M: layers 0..17, heads 0..3, BOS
 *     first, one key/value head, dimension 256; its cache key names that model and its file's
 *     SHA-256)
 *
 * text is a file, or "debian-licenses": GPL-3 then GFDL-1.3 from /usr/share/common-licenses,
 * each checked by its SHA-256 (real_text.h) — the real-cache checks' text.
 *
 * Query head `head` attends with key/value head head / 3 (grouped-query attention), so the
 * stream is (q of `head`, k and v of head / 3). The forward pass runs once per (model, text,
 * token count): every layer's q, k, v are cached as .npy ([heads, n, 64], float32) under
 * ${XDG_CACHE_HOME:-$HOME/.cache}/kvbound/kv2/<key>/ (or $KVB_MODEL_DIR/kv2/), keyed by the
 * model file's SHA-256, the text's SHA-256, the token count, the OpenBLAS thread count (the
 * products' rounding depends on it), the forward pass's attention, kvbound's version and the
 * build's source hash, written atomically and verified before every read (kv_cache.h: a
 * foreign, stale or truncated entry is rebuilt, never read); later
 * streams of any layer or head read the cache. n defaults to every token of the text, at most
 * the model's context (8192); the first n tokens' caches do not depend on later tokens (the
 * model is causal). */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kv_cache.h"
#include "kvb_error.h"
#include "lm.h"
#include "model.h"
#include "npy.h"
#include "real_text.h"
#include "stream.h"

static const kvb_param_spec model_params[] = {
    {"text", KVB_PARAM_STRING, 0, 0, 0, "", "text file the model reads, or \"debian-licenses\" (required)"},
    {"layer", KVB_PARAM_INT, 0, 0, 29, NULL, "transformer layer, 0..29 (Gemma 3: 0..17)"},
    {"head", KVB_PARAM_INT, 0, 0, 8, NULL, "query head, 0..8 (keys and values of head/3; Gemma 3: 0..3, one key/value head)"},
    {"n", KVB_PARAM_INT, 1, 1, 8192, NULL, "tokens (default: the whole text, at most 8192)"},
    {"model", KVB_PARAM_STRING, 0, 0, 0, "smollm2",
     "\"smollm2\" (default) or \"gemma3\" (Gemma 3 270M: layer 0..17, head 0..3, dimension 256)"},
    {"d_key", KVB_PARAM_INT, 64, 64, 256, NULL, "the model's head dimension (64; Gemma 3: 256), set by the model"},
    {"d_value", KVB_PARAM_INT, 64, 64, 256, NULL, "the model's head dimension (64; Gemma 3: 256), set by the model"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

typedef struct {
  const char *dir;
  int status;
  int n_head, n_head_kv, head_dim;
} cache_ctx;

static void write_layer(void *vc, int layer, size_t n, const float *q, const float *k, const float *v) {
  cache_ctx *c = vc;
  const char *what[3] = {"q", "k", "v"};
  const float *src[3] = {q, k, v};
  for (int i = 0; i < 3 && !c->status; i++) {
    size_t heads = (size_t)(i == 0 ? c->n_head : c->n_head_kv), cnt = heads * n * (size_t)c->head_dim;
    size_t shape[3] = {heads, n, (size_t)c->head_dim};
    double *y = malloc(cnt * sizeof *y);
    if (!y) {
      c->status = KVB_ERROR(KVB_ENOMEM, "model stream: out of memory writing the cache");
      return;
    }
    for (size_t j = 0; j < cnt; j++) y[j] = src[i][j];
    char path[4500];
    snprintf(path, sizeof path, "%s/layer%02d_%s.npy", c->dir, layer, what[i]);
    c->status = kvb_npy_write(path, y, 3, shape, "<f4", 1);
    free(y);
  }
}

/* The shape of the model the cache needs. */
typedef struct {
  const kvb_model *m;
  int n_layer, n_head, n_head_kv, head_dim, d_model;
} model_ref;

/* Runs the model over the text's first n tokens into dir (through a temporary directory
 * renamed at the end, so a crashed run leaves no half cache). */
static int build_cache(const model_ref *m, const int32_t *ids, size_t n, const char *dir,
                       const char *key) {
  /* a fresh name per call (mkdtemp): two trials of one process building the same cache at once
   * (kvbound run --jobs 2 on a cold cache) each get their own directory; the first rename wins */
  char tmp[4400];
  snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", dir);
  if (!mkdtemp(tmp))
    return KVB_ERROR(KVB_EIO, "model stream: cannot create %s (%s)", tmp, strerror(errno));
  cache_ctx c = {tmp, KVB_OK, m->n_head, m->n_head_kv, m->head_dim};
  float *hid = malloc(n * (size_t)m->d_model * sizeof(float));
  int st = hid ? kvb_model_prefill(m->m, ids, n, hid, write_layer, &c) : KVB_ERROR(KVB_ENOMEM, "model stream: out of memory");
  free(hid);
  if (!st) st = c.status;
  if (!st) st = kvb_kv_cache_seal(tmp, key); /* the manifest last: the entry is complete */
  if (!st && rename(tmp, dir) != 0 && errno != EEXIST && errno != ENOTEMPTY)
    st = KVB_ERROR(KVB_EIO, "model stream: cannot rename %s to %s (%s)", tmp, dir, strerror(errno));
  if (st || access(tmp, F_OK) == 0) kvb_kv_cache_discard(tmp); /* failed, or another made dir first */
  return st;
}

/* Runs the model of `kind` over the text's tokens (BOS first when the model takes one, as
 * llama.cpp feeds Gemma) into the entry dir for key. */
static int fill_cache(kvb_lm_kind kind, const char *text, const char *buf, size_t len, long want,
                      const char *dir, const char *key) {
  kvb_model m;
  int32_t *ids = NULL;
  size_t n = 0;
  int st = kvb_lm_model_load(kind, NULL, &m);
  if (st) return st;
  st = kvb_model_tokens(&m, buf, len, text, want, "model stream", &ids, &n);
  if (n > 8192) n = 8192; /* the stream's longest (SmolLM2's context) */
  model_ref r = {&m, m.cfg.n_layer, m.cfg.n_head, m.cfg.n_head_kv, m.cfg.head_dim, m.cfg.d_model};
  if (!st) st = build_cache(&r, ids, n, dir, key);
  free(ids);
  kvb_model_free(&m);
  return st;
}

static int gen_model(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  (void)rng;
  const char *text = kvb_params_get_str(p, sp, "text");
  if (!text[0]) return KVB_ERROR(KVB_EINVAL, "model stream: parameter 'text' (a file) is required");
  int layer = (int)kvb_params_get(p, sp, "layer"), head = (int)kvb_params_get(p, sp, "head");
  const char *which = kvb_params_get_str(p, sp, "model");
  kvb_lm_kind kind;
  int nl, nh, nhk, hdim;
  if (kvb_lm_kind_lookup(which, &kind)) {
    char known[256];
    return KVB_ERROR(KVB_EINVAL, "model stream: model '%s' is not known (%s)", which,
                     kvb_lm_known_keys(known, sizeof known, ", "));
  }
  kvb_lm_kind_shape(kind, &nl, &nh, &nhk, &hdim);
  if (layer >= nl || head >= nh)
    return KVB_ERROR(KVB_EINVAL, "model stream: %s has layers 0..%d and query heads 0..%d "
                     "(layer %d, head %d asked)", kvb_lm_kind_name(kind), nl - 1, nh - 1, layer, head);
  int st = kvb_lm_available(kind);
  if (st) return st;
  char *buf = NULL;
  size_t len = 0;
  if ((st = kvb_text_read(text, &buf, &len))) return st;
  /* The cache key (kv_cache.h): the model file's SHA-256 (remembered by size, mtime and inode),
   * the text's SHA-256, the token count (n asked, or 0: all), OpenBLAS's thread count — the
   * forward pass's matrix products round differently with 1 and with several BLAS threads, so a
   * cache written under one setting is not the bits another computes — the forward pass's
   * attention ("a2": model_ops.c's tiled online softmax), and this build's version and source
   * hash (build_id.h): an entry another build wrote is not read. */
  long want = kvb_params_has(p, "n") ? (long)kvb_params_get(p, sp, "n") : 0;
  char mpath[4096], dir[4300], root[4200], ids_dir[4300], msha[65], key[1024];
  kvb_lm_default_path(kind, mpath, sizeof mpath);
  char mdir[4096];
  snprintf(mdir, sizeof mdir, "%s", mpath);
  char *slash = strrchr(mdir, '/');
  if (slash) *slash = '\0';
  snprintf(root, sizeof root, "%s/%s", slash ? mdir : ".", KVB_KV_CACHE_SUBDIR);
  snprintf(ids_dir, sizeof ids_dir, "%s/ids", root);
  if (mkdir(root, 0777) != 0 && errno != EEXIST)
    st = KVB_ERROR(KVB_EIO, "model stream: cannot create %s (%s)", root, strerror(errno));
  if (!st) st = kvb_file_sha256_memo(mpath, ids_dir, msha);
  if (!st) st = kvb_kv_cache_key(kvb_lm_kind_key(kind), msha, buf, len, want,
                                 openblas_get_num_threads(), "a2", key, sizeof key);
  if (st) {
    free(buf);
    return st;
  }
  kvb_kv_cache_dir(root, key, dir, sizeof dir);
  char qf[4400], kf[4400], vf[4400];
  snprintf(qf, sizeof qf, "%s/layer%02d_q.npy", dir, layer);
  snprintf(kf, sizeof kf, "%s/layer%02d_k.npy", dir, layer);
  snprintf(vf, sizeof vf, "%s/layer%02d_v.npy", dir, layer);
  const char *files[3] = {qf, kf, vf};
  kvb_npy_array a[3];
  memset(a, 0, sizeof a);
  size_t grp = (size_t)(nh / nhk), d = (size_t)hdim; /* query heads per key/value head */
  size_t hh[3] = {(size_t)head, (size_t)head / grp, (size_t)head / grp};
  /* Twice at most: an entry that passes the manifest yet does not read as this layer's arrays
   * (a corrupt .npy header of the recorded size) is discarded and built once more. */
  for (int attempt = 0; attempt < 2; attempt++) {
    if (!kvb_kv_cache_valid(dir, key, files, 3)) {
      kvb_kv_cache_discard(dir); /* foreign, stale, truncated or unfinished: never read */
      st = fill_cache(kind, text, buf, len, want, dir, key);
      if (st) break;
    }
    for (int i = 0; i < 3 && !st; i++) {
      st = kvb_npy_read(files[i], &a[i]);
      if (!st && (a[i].ndim != 3 || a[i].shape[0] <= hh[i] || a[i].shape[2] != d ||
                  a[i].shape[1] != a[0].shape[1]))
        st = KVB_ERROR(KVB_EFORMAT, "model stream: the cache file %s has an unexpected shape",
                       files[i]);
    }
    if (!st) break;
    for (int i = 0; i < 3; i++) kvb_npy_free(&a[i]);
    memset(a, 0, sizeof a);
    if (attempt == 0) {
      kvb_error_clear();
      kvb_kv_cache_discard(dir);
      st = KVB_OK;
    }
  }
  free(buf);
  if (!st) {
    size_t n = a[0].shape[1];
    st = kvb_stream_set_data(s, n, d, d, a[0].data + hh[0] * n * d, a[1].data + hh[1] * n * d,
                             a[2].data + hh[2] * n * d, "model stream");
  }
  for (int i = 0; i < 3; i++) kvb_npy_free(&a[i]);
  return st;
}
const kvb_stream_type kvb_stream_model = {
    "model", "q, k, v of one layer and query head of SmolLM2-135M (or Gemma 3 270M) run over a text file", NULL,
    model_params, NULL, gen_model};

/* gguf.c — GGUF v3 reader and dequantization (see gguf.h for the format and the error policy).
 * The parser walks a cursor over the buffer; every read first checks the bytes left, and every
 * count is bounded by the bytes left divided by the smallest encoding of one item before
 * anything is allocated, so a hostile header cannot make it allocate more than a small
 * multiple of the file's size. */
#include "gguf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"
#include "read_file.h"

typedef struct {
  const unsigned char *p;
  size_t len, pos;
} cur;

static uint64_t rd_le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static int need(cur *c, uint64_t n, const char *what) {
  if (n > c->len - c->pos)
    return KVB_ERROR(KVB_EFORMAT, "GGUF truncated: %s needs %llu bytes at offset %zu, %zu left",
                     what, (unsigned long long)n, c->pos, c->len - c->pos);
  return KVB_OK;
}

static int get_u(cur *c, int n, uint64_t *v, const char *what) {
  int st = need(c, (uint64_t)n, what);
  if (st) return st;
  *v = rd_le(c->p + c->pos, n);
  c->pos += (size_t)n;
  return KVB_OK;
}

/* A string: uint64 length, bytes. Copied NUL-terminated when out != NULL. */
static int get_str(cur *c, char **out, uint64_t *len_out, const char *what) {
  uint64_t n;
  int st = get_u(c, 8, &n, what);
  if (st) return st;
  if ((st = need(c, n, what))) return st;
  if (out) {
    char *s = malloc((size_t)n + 1);
    if (!s) return KVB_ERROR(KVB_ENOMEM, "out of memory reading a GGUF string of %llu bytes",
                             (unsigned long long)n);
    memcpy(s, c->p + c->pos, (size_t)n);
    s[n] = '\0';
    *out = s;
  }
  if (len_out) *len_out = n;
  c->pos += (size_t)n;
  return KVB_OK;
}

static int scalar_size(uint32_t t) {
  switch (t) {
    case KVB_GGUF_UINT8: case KVB_GGUF_INT8: case KVB_GGUF_BOOL: return 1;
    case KVB_GGUF_UINT16: case KVB_GGUF_INT16: return 2;
    case KVB_GGUF_UINT32: case KVB_GGUF_INT32: case KVB_GGUF_FLOAT32: return 4;
    case KVB_GGUF_UINT64: case KVB_GGUF_INT64: case KVB_GGUF_FLOAT64: return 8;
    default: return 0;
  }
}
static int is_signed(uint32_t t) {
  return t == KVB_GGUF_INT8 || t == KVB_GGUF_INT16 || t == KVB_GGUF_INT32 || t == KVB_GGUF_INT64;
}
static int is_float(uint32_t t) { return t == KVB_GGUF_FLOAT32 || t == KVB_GGUF_FLOAT64; }

static double as_double(uint64_t bits, uint32_t t) {
  if (t == KVB_GGUF_FLOAT32) {
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, 4);
    return f;
  }
  double d;
  memcpy(&d, &bits, 8);
  return d;
}
static int64_t as_signed(uint64_t bits, int size) {
  if (size < 8) {
    uint64_t sign = (uint64_t)1 << (8 * size - 1);
    if (bits & sign) return (int64_t)(bits | ~((sign << 1) - 1));
  }
  return (int64_t)bits;
}

/* Reads one scalar of type t into kv->num. */
static int get_scalar(cur *c, uint32_t t, kvb_gguf_kv *kv, const char *what) {
  int sz = scalar_size(t);
  uint64_t bits;
  int st = get_u(c, sz, &bits, what);
  if (st) return st;
  if (is_float(t)) kv->num.f = as_double(bits, t);
  else if (is_signed(t)) kv->num.i = as_signed(bits, sz);
  else if (t == KVB_GGUF_BOOL) {
    if (bits > 1) return KVB_ERROR(KVB_EFORMAT, "GGUF %s: bool value %llu is not 0 or 1", what,
                                   (unsigned long long)bits);
    kv->num.u = bits;
  } else kv->num.u = bits;
  return KVB_OK;
}

#define MAX_NEST 8

/* Skips (checks) one value of type t; used for nested array elements. */
static int skip_value(cur *c, uint32_t t, int depth, const char *what) {
  int st;
  if (t == KVB_GGUF_STRING) return get_str(c, NULL, NULL, what);
  if (t == KVB_GGUF_ARRAY) {
    if (depth >= MAX_NEST)
      return KVB_ERROR(KVB_EFORMAT, "GGUF %s: arrays nested deeper than %d", what, MAX_NEST);
    uint64_t et, n;
    if ((st = get_u(c, 4, &et, what)) || (st = get_u(c, 8, &n, what))) return st;
    int esz = scalar_size((uint32_t)et);
    if (esz == 0 && et != KVB_GGUF_STRING && et != KVB_GGUF_ARRAY)
      return KVB_ERROR(KVB_EFORMAT, "GGUF %s: unknown array element type %llu", what,
                       (unsigned long long)et);
    if (esz) {
      if (n > (c->len - c->pos) / (uint64_t)esz)
        return KVB_ERROR(KVB_EFORMAT, "GGUF %s: array of %llu elements exceeds the file", what,
                         (unsigned long long)n);
      c->pos += (size_t)(n * (uint64_t)esz);
      return KVB_OK;
    }
    uint64_t min = et == KVB_GGUF_STRING ? 8 : 12;
    if (n > (c->len - c->pos) / min)
      return KVB_ERROR(KVB_EFORMAT, "GGUF %s: array of %llu elements exceeds the file", what,
                       (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++)
      if ((st = skip_value(c, (uint32_t)et, depth + 1, what))) return st;
    return KVB_OK;
  }
  int sz = scalar_size(t);
  if (!sz) return KVB_ERROR(KVB_EFORMAT, "GGUF %s: unknown value type %u", what, t);
  return get_u(c, sz, &(uint64_t){0}, what);
}

static void kv_free(kvb_gguf_kv *kv) {
  free(kv->key);
  free(kv->str);
  free(kv->arr_u);
  free(kv->arr_i);
  free(kv->arr_f);
  if (kv->arr_str)
    for (uint64_t i = 0; i < kv->arr_n; i++) free(kv->arr_str[i]);
  free(kv->arr_str);
  free(kv->arr_str_len);
  memset(kv, 0, sizeof *kv);
}

static int get_kv(cur *c, kvb_gguf_kv *kv) {
  int st;
  uint64_t t;
  if ((st = get_str(c, &kv->key, NULL, "metadata key"))) return st;
  const char *k = kv->key;
  if ((st = get_u(c, 4, &t, k))) return st;
  kv->type = (uint32_t)t;
  if (t > KVB_GGUF_FLOAT64)
    return KVB_ERROR(KVB_EFORMAT, "GGUF metadata \"%s\": unknown value type %llu", k,
                     (unsigned long long)t);
  if (t == KVB_GGUF_STRING) return get_str(c, &kv->str, &kv->str_len, k);
  if (t != KVB_GGUF_ARRAY) return get_scalar(c, kv->type, kv, k);
  uint64_t et, n;
  if ((st = get_u(c, 4, &et, k)) || (st = get_u(c, 8, &n, k))) return st;
  if (et > KVB_GGUF_FLOAT64)
    return KVB_ERROR(KVB_EFORMAT, "GGUF metadata \"%s\": unknown array element type %llu", k,
                     (unsigned long long)et);
  kv->arr_type = (uint32_t)et;
  int esz = scalar_size(kv->arr_type);
  uint64_t min = esz ? (uint64_t)esz : et == KVB_GGUF_STRING ? 8 : 12;
  if (n > (c->len - c->pos) / min)
    return KVB_ERROR(KVB_EFORMAT,
                     "GGUF metadata \"%s\": array of %llu elements exceeds the %zu bytes left", k,
                     (unsigned long long)n, c->len - c->pos);
  if (et == KVB_GGUF_ARRAY) {
    kv->arr_n = n;
    for (uint64_t i = 0; i < n; i++)
      if ((st = skip_value(c, KVB_GGUF_ARRAY, 1, k))) return st;
    return KVB_OK;
  }
  size_t cnt = n ? (size_t)n : 1;
  if (et == KVB_GGUF_STRING) {
    kv->arr_str = calloc(cnt, sizeof(char *));
    kv->arr_str_len = calloc(cnt, sizeof(uint64_t));
    if (!kv->arr_str || !kv->arr_str_len)
      return KVB_ERROR(KVB_ENOMEM, "out of memory reading GGUF metadata \"%s\"", k);
    kv->arr_n = n; /* strings allocated so far are freed by kv_free (calloc'd NULLs) */
    for (uint64_t i = 0; i < n; i++)
      if ((st = get_str(c, &kv->arr_str[i], &kv->arr_str_len[i], k))) return st;
    return KVB_OK;
  }
  kvb_gguf_kv tmp;
  if (is_float(kv->arr_type)) kv->arr_f = malloc(cnt * sizeof(double));
  else if (is_signed(kv->arr_type)) kv->arr_i = malloc(cnt * sizeof(int64_t));
  else kv->arr_u = malloc(cnt * sizeof(uint64_t));
  if (!kv->arr_f && !kv->arr_i && !kv->arr_u)
    return KVB_ERROR(KVB_ENOMEM, "out of memory reading GGUF metadata \"%s\"", k);
  kv->arr_n = n;
  for (uint64_t i = 0; i < n; i++) {
    if ((st = get_scalar(c, kv->arr_type, &tmp, k))) return st;
    if (kv->arr_f) kv->arr_f[i] = tmp.num.f;
    else if (kv->arr_i) kv->arr_i[i] = tmp.num.i;
    else kv->arr_u[i] = tmp.num.u;
  }
  return KVB_OK;
}

const char *kvb_ggml_type_name(uint32_t type) {
  switch (type) {
    case KVB_GGML_F32: return "F32";
    case KVB_GGML_F16: return "F16";
    case KVB_GGML_Q4_0: return "Q4_0";
    case KVB_GGML_Q4_1: return "Q4_1";
    case KVB_GGML_Q5_0: return "Q5_0";
    case KVB_GGML_Q5_1: return "Q5_1";
    case KVB_GGML_Q8_0: return "Q8_0";
    case KVB_GGML_Q4_K: return "Q4_K";
    case KVB_GGML_Q6_K: return "Q6_K";
    case KVB_GGML_BF16: return "BF16";
    default: return NULL;
  }
}

int kvb_ggml_type_block(uint32_t type, uint64_t *be, uint64_t *bb) {
  uint64_t e = 32, b;
  switch (type) {
    case KVB_GGML_F32: e = 1; b = 4; break;
    case KVB_GGML_F16: case KVB_GGML_BF16: e = 1; b = 2; break;
    case KVB_GGML_Q4_0: b = 18; break; /* fp16 d + 16 nibble bytes */
    case KVB_GGML_Q4_1: b = 20; break; /* fp16 d, fp16 m + 16 nibble bytes */
    case KVB_GGML_Q5_0: b = 22; break; /* fp16 d, 4 high-bit bytes, 16 nibble bytes */
    case KVB_GGML_Q5_1: b = 24; break; /* fp16 d, fp16 m, 4 high-bit bytes, 16 nibble bytes */
    case KVB_GGML_Q8_0: b = 34; break; /* fp16 d + 32 int8 */
    case KVB_GGML_Q4_K: e = 256; b = 144; break; /* fp16 d, dmin, 12 scale bytes, 128 nibble bytes */
    case KVB_GGML_Q6_K: e = 256; b = 210; break; /* 128 ql, 64 qh, 16 int8 scales, fp16 d */
    default: return KVB_ERROR(KVB_EFORMAT, "unknown ggml tensor type %u", type);
  }
  if (be) *be = e;
  if (bb) *bb = b;
  return KVB_OK;
}

static int get_tensor(cur *c, kvb_gguf_tensor *t) {
  int st;
  uint64_t v;
  if ((st = get_str(c, &t->name, NULL, "tensor name"))) return st;
  const char *nm = t->name;
  if ((st = get_u(c, 4, &v, nm))) return st;
  if (v < 1 || v > KVB_GGUF_MAX_DIMS)
    return KVB_ERROR(KVB_EFORMAT, "GGUF tensor \"%s\": %llu dimensions (1 to %d allowed)", nm,
                     (unsigned long long)v, KVB_GGUF_MAX_DIMS);
  t->ndim = (uint32_t)v;
  uint64_t count = 1;
  for (int i = 0; i < KVB_GGUF_MAX_DIMS; i++) t->ne[i] = 1;
  for (uint32_t i = 0; i < t->ndim; i++) {
    if ((st = get_u(c, 8, &t->ne[i], nm))) return st;
    /* 2^62 elements is far beyond any file; the bound keeps every later product exact. */
    if (t->ne[i] == 0 || t->ne[i] > ((uint64_t)1 << 62) / count)
      return KVB_ERROR(KVB_EFORMAT, "GGUF tensor \"%s\": dimension %u is %llu (zero or too large)",
                       nm, i, (unsigned long long)t->ne[i]);
    count *= t->ne[i];
  }
  t->n_elements = count;
  if ((st = get_u(c, 4, &v, nm))) return st;
  t->type = (uint32_t)v;
  uint64_t be, bb;
  if (v > UINT32_MAX || kvb_ggml_type_block(t->type, &be, &bb))
    return KVB_ERROR(KVB_EFORMAT, "GGUF tensor \"%s\": unknown ggml type %llu", nm,
                     (unsigned long long)v);
  if (t->ne[0] % be)
    return KVB_ERROR(KVB_EFORMAT,
                     "GGUF tensor \"%s\": row length %llu is not a multiple of the %s block (%llu)",
                     nm, (unsigned long long)t->ne[0], kvb_ggml_type_name(t->type),
                     (unsigned long long)be);
  t->n_bytes = count / be * bb;
  return get_u(c, 8, &t->offset, nm);
}

void kvb_gguf_free(kvb_gguf *g) {
  if (!g) return;
  if (g->kv)
    for (uint64_t i = 0; i < g->n_kv; i++) kv_free(&g->kv[i]);
  free(g->kv);
  if (g->tensors)
    for (uint64_t i = 0; i < g->n_tensors; i++) free(g->tensors[i].name);
  free(g->tensors);
  free(g->owned);
  memset(g, 0, sizeof *g);
}

int kvb_gguf_parse(const unsigned char *buf, size_t len, kvb_gguf *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "kvb_gguf_parse: out is NULL");
  memset(out, 0, sizeof *out);
  if (!buf && len) return KVB_ERROR(KVB_ENULL, "kvb_gguf_parse: buffer is NULL");
  cur c = {buf, len, 0};
  kvb_gguf g;
  memset(&g, 0, sizeof g);
  int st;
  uint64_t v;
  if ((st = need(&c, 4, "the magic"))) return st;
  if (memcmp(buf, "GGUF", 4) != 0)
    return KVB_ERROR(KVB_EFORMAT, "not a GGUF file (the magic is not \"GGUF\")");
  c.pos = 4;
  if ((st = get_u(&c, 4, &v, "the version"))) return st;
  if (v != 3)
    return KVB_ERROR(KVB_EFORMAT, "GGUF version %llu is not supported (only version 3)",
                     (unsigned long long)v);
  g.version = 3;
  if ((st = get_u(&c, 8, &g.n_tensors, "the tensor count")) ||
      (st = get_u(&c, 8, &g.n_kv, "the metadata count")))
    return st;
  /* smallest metadata entry: 8 (key length) + 4 (type) + 1 (a uint8) = 13 bytes; smallest
   * tensor info: 8 (name length) + 4 + 8 (one dim) + 4 + 8 = 32 bytes. */
  if (g.n_kv > (len - c.pos) / 13)
    return KVB_ERROR(KVB_EFORMAT, "GGUF metadata count %llu exceeds what the file can hold",
                     (unsigned long long)g.n_kv);
  if (g.n_tensors > (len - c.pos) / 32)
    return KVB_ERROR(KVB_EFORMAT, "GGUF tensor count %llu exceeds what the file can hold",
                     (unsigned long long)g.n_tensors);
  g.kv = calloc(g.n_kv ? (size_t)g.n_kv : 1, sizeof *g.kv);
  g.tensors = calloc(g.n_tensors ? (size_t)g.n_tensors : 1, sizeof *g.tensors);
  if (!g.kv || !g.tensors) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory reading the GGUF header");
    goto fail;
  }
  g.alignment = 32;
  for (uint64_t i = 0; i < g.n_kv; i++) {
    if ((st = get_kv(&c, &g.kv[i]))) goto fail;
    for (uint64_t j = 0; j < i; j++)
      if (strcmp(g.kv[j].key, g.kv[i].key) == 0) {
        st = KVB_ERROR(KVB_EFORMAT, "GGUF metadata key \"%s\" appears twice", g.kv[i].key);
        goto fail;
      }
    if (strcmp(g.kv[i].key, "general.alignment") == 0) {
      uint64_t a = g.kv[i].num.u;
      if (g.kv[i].type != KVB_GGUF_UINT32 || a == 0 || (a & (a - 1)) || a > 65536) {
        st = KVB_ERROR(KVB_EFORMAT, "GGUF general.alignment must be a uint32 power of two");
        goto fail;
      }
      g.alignment = a;
    }
  }
  for (uint64_t i = 0; i < g.n_tensors; i++) {
    if ((st = get_tensor(&c, &g.tensors[i]))) goto fail;
    /* Names are compared only against earlier ones in small files; the model has 272. */
    for (uint64_t j = 0; j < i; j++)
      if (strcmp(g.tensors[j].name, g.tensors[i].name) == 0) {
        st = KVB_ERROR(KVB_EFORMAT, "GGUF tensor \"%s\" appears twice", g.tensors[i].name);
        goto fail;
      }
  }
  uint64_t data = ((uint64_t)c.pos + g.alignment - 1) / g.alignment * g.alignment;
  if (g.n_tensors && data > len) {
    st = KVB_ERROR(KVB_EFORMAT, "GGUF truncated: the data section would start at %llu, past the "
                   "end (%zu bytes)", (unsigned long long)data, len);
    goto fail;
  }
  g.data_offset = data;
  uint64_t avail = data <= len ? len - data : 0;
  for (uint64_t i = 0; i < g.n_tensors; i++) {
    kvb_gguf_tensor *t = &g.tensors[i];
    if (t->offset % g.alignment) {
      st = KVB_ERROR(KVB_EFORMAT, "GGUF tensor \"%s\": offset %llu is not aligned to %llu",
                     t->name, (unsigned long long)t->offset, (unsigned long long)g.alignment);
      goto fail;
    }
    if (t->offset > avail || t->n_bytes > avail - t->offset) {
      st = KVB_ERROR(KVB_EFORMAT, "GGUF tensor \"%s\": %llu bytes at offset %llu run past the "
                     "end of the file (%llu bytes of data)", t->name,
                     (unsigned long long)t->n_bytes, (unsigned long long)t->offset,
                     (unsigned long long)avail);
      goto fail;
    }
    t->data = buf + data + t->offset;
  }
  *out = g;
  return KVB_OK;
fail:
  kvb_gguf_free(&g);
  return st;
}

int kvb_gguf_read(const char *path, kvb_gguf *out) {
  if (!out || !path) return KVB_ERROR(KVB_ENULL, "kvb_gguf_read: NULL argument");
  memset(out, 0, sizeof *out);
  /* a regular file only (read_file.h): a FIFO given as the model would block forever, a device
   * never end; the limit is the largest size ftell reports */
  FILE *f = NULL;
  int ost = kvb_open_regular(path, (size_t)LONG_MAX, "model", &f);
  if (ost) return ost;
  unsigned char *buf = NULL;
  size_t len = 0;
  long sz;
  if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return KVB_ERROR(KVB_EIO, "%s: cannot determine the size", path);
  }
  buf = malloc(sz ? (size_t)sz : 1);
  if (!buf) {
    fclose(f);
    return KVB_ERROR(KVB_ENOMEM, "%s: out of memory for %ld bytes", path, sz);
  }
  len = fread(buf, 1, (size_t)sz, f);
  fclose(f);
  if (len != (size_t)sz) {
    free(buf);
    return KVB_ERROR(KVB_EIO, "%s: short read (%zu of %ld bytes)", path, len, sz);
  }
  int st = kvb_gguf_parse(buf, len, out);
  if (st) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", kvb_strerror_last());
    free(buf);
    return KVB_ERROR(st, "%s: %s", path, msg);
  }
  out->owned = buf;
  out->owned_len = len;
  return KVB_OK;
}

const kvb_gguf_kv *kvb_gguf_find(const kvb_gguf *g, const char *key) {
  if (!g || !key) return NULL;
  for (uint64_t i = 0; i < g->n_kv; i++)
    if (strcmp(g->kv[i].key, key) == 0) return &g->kv[i];
  return NULL;
}

int kvb_gguf_get_uint(const kvb_gguf *g, const char *key, uint64_t *out) {
  const kvb_gguf_kv *kv = kvb_gguf_find(g, key);
  if (!kv) return KVB_ERROR(KVB_ENOTFOUND, "GGUF metadata \"%s\" is missing", key);
  if (!scalar_size(kv->type) || is_float(kv->type) || kv->type == KVB_GGUF_BOOL ||
      (is_signed(kv->type) && kv->num.i < 0))
    return KVB_ERROR(KVB_EFORMAT, "GGUF metadata \"%s\" is not a non-negative integer", key);
  *out = kv->num.u;
  return KVB_OK;
}

int kvb_gguf_get_float(const kvb_gguf *g, const char *key, double *out) {
  const kvb_gguf_kv *kv = kvb_gguf_find(g, key);
  if (!kv) return KVB_ERROR(KVB_ENOTFOUND, "GGUF metadata \"%s\" is missing", key);
  if (!is_float(kv->type)) return KVB_ERROR(KVB_EFORMAT, "GGUF metadata \"%s\" is not a float", key);
  *out = kv->num.f;
  return KVB_OK;
}

int kvb_gguf_get_str(const kvb_gguf *g, const char *key, const char **out) {
  const kvb_gguf_kv *kv = kvb_gguf_find(g, key);
  if (!kv) return KVB_ERROR(KVB_ENOTFOUND, "GGUF metadata \"%s\" is missing", key);
  if (kv->type != KVB_GGUF_STRING)
    return KVB_ERROR(KVB_EFORMAT, "GGUF metadata \"%s\" is not a string", key);
  *out = kv->str;
  return KVB_OK;
}

const kvb_gguf_tensor *kvb_gguf_tensor_find(const kvb_gguf *g, const char *name) {
  if (!g || !name) return NULL;
  for (uint64_t i = 0; i < g->n_tensors; i++)
    if (strcmp(g->tensors[i].name, name) == 0) return &g->tensors[i];
  return NULL;
}

float kvb_half_to_float(uint16_t h) {
  /* sign, 5-bit exponent (bias 15), 10-bit mantissa; subnormals scale by 2^-24. */
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v;
  if (e == 0) v = ldexpf((float)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexpf((float)(m | 1024), e - 25);
  return s ? -v : v;
}

int kvb_gguf_dequant(uint32_t type, const void *src_v, uint64_t n, float *dst) {
  const unsigned char *s = src_v;
  uint64_t be, bb;
  if (!src_v || !dst) return KVB_ERROR(KVB_ENULL, "kvb_gguf_dequant: NULL argument");
  if (kvb_ggml_type_block(type, &be, &bb)) return KVB_EINVAL;
  if (n % be) return KVB_ERROR(KVB_EINVAL, "%llu elements are not whole %s blocks",
                               (unsigned long long)n, kvb_ggml_type_name(type));
  uint64_t nb = n / be;
  switch (type) {
    case KVB_GGML_F32:
      memcpy(dst, s, (size_t)n * 4); /* little-endian host, as ggml itself assumes */
      return KVB_OK;
    case KVB_GGML_F16:
      for (uint64_t i = 0; i < n; i++) dst[i] = kvb_half_to_float((uint16_t)rd_le(s + 2 * i, 2));
      return KVB_OK;
    case KVB_GGML_Q4_0:
    case KVB_GGML_Q4_1:
      for (uint64_t b = 0; b < nb; b++, s += bb, dst += 32) {
        float d = kvb_half_to_float((uint16_t)rd_le(s, 2));
        float m = type == KVB_GGML_Q4_1 ? kvb_half_to_float((uint16_t)rd_le(s + 2, 2)) : 0.0f;
        const unsigned char *q = s + (type == KVB_GGML_Q4_1 ? 4 : 2);
        int off = type == KVB_GGML_Q4_0 ? 8 : 0; /* Q4_0 nibbles are offset by 8 */
        for (int j = 0; j < 16; j++) {
          dst[j] = d * (float)((q[j] & 15) - off) + m;
          dst[j + 16] = d * (float)((q[j] >> 4) - off) + m;
        }
      }
      return KVB_OK;
    case KVB_GGML_Q5_0:
      for (uint64_t b = 0; b < nb; b++, s += bb, dst += 32) {
        float d = kvb_half_to_float((uint16_t)rd_le(s, 2));
        uint32_t qh = (uint32_t)rd_le(s + 2, 4);
        const unsigned char *q = s + 6;
        for (int j = 0; j < 16; j++) {
          int lo = (q[j] & 15) | (int)((qh >> j) & 1) << 4;
          int hi = (q[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
          dst[j] = d * (float)(lo - 16);
          dst[j + 16] = d * (float)(hi - 16);
        }
      }
      return KVB_OK;
    case KVB_GGML_Q4_K:
      for (uint64_t b = 0; b < nb; b++, s += bb, dst += 256) {
        float d = kvb_half_to_float((uint16_t)rd_le(s, 2));
        float dmin = kvb_half_to_float((uint16_t)rd_le(s + 2, 2));
        const unsigned char *sc = s + 4, *q = s + 16;
        for (int sb = 0; sb < 8; sb++) {
          int scale, mn; /* the 6-bit packing gguf.h describes */
          if (sb < 4) {
            scale = sc[sb] & 63;
            mn = sc[sb + 4] & 63;
          } else {
            scale = (sc[sb + 4] & 15) | (sc[sb - 4] >> 6) << 4;
            mn = (sc[sb + 4] >> 4) | (sc[sb] >> 6) << 4;
          }
          float ds = d * (float)scale, ms = dmin * (float)mn;
          const unsigned char *qq = q + 32 * (sb / 2);
          int shift = sb & 1 ? 4 : 0; /* odd sub-blocks are the high nibbles */
          for (int i = 0; i < 32; i++) dst[32 * sb + i] = ds * (float)((qq[i] >> shift) & 15) - ms;
        }
      }
      return KVB_OK;
    case KVB_GGML_Q6_K:
      for (uint64_t b = 0; b < nb; b++, s += bb, dst += 256) {
        const unsigned char *ql = s, *qh = s + 128;
        const signed char *sc = (const signed char *)(s + 192);
        float d = kvb_half_to_float((uint16_t)rd_le(s + 208, 2));
        for (int h = 0; h < 2; h++)
          for (int r = 0; r < 4; r++)
            for (int i = 0; i < 32; i++) {
              int lo = (ql[64 * h + 32 * (r & 1) + i] >> (r < 2 ? 0 : 4)) & 15;
              int hi = (qh[32 * h + i] >> (2 * r)) & 3;
              dst[128 * h + 32 * r + i] = d * (float)sc[8 * h + 2 * r + i / 16] * (float)((lo | hi << 4) - 32);
            }
      }
      return KVB_OK;
    case KVB_GGML_Q8_0:
      for (uint64_t b = 0; b < nb; b++, s += bb, dst += 32) {
        float d = kvb_half_to_float((uint16_t)rd_le(s, 2));
        for (int j = 0; j < 32; j++) dst[j] = d * (float)(int8_t)s[2 + j];
      }
      return KVB_OK;
    default:
      return KVB_ERROR(KVB_EINVAL, "dequantization of %s tensors is not implemented",
                       kvb_ggml_type_name(type));
  }
}

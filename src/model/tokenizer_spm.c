/* tokenizer_spm.c — score-merge SentencePiece tokenizer with byte fallback (see
 * tokenizer_spm.h). The merge loop keeps a max-heap of candidate pairs keyed by (score, −left
 * position); a popped pair whose symbols changed since it was pushed is stale and skipped, so
 * each merge takes the best pair among the current neighbours in O(log n). */
#include "tokenizer_spm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids_buf.h"
#include "kvb_error.h"

struct kvb_spm {
  size_t n_vocab;
  char **tok;
  size_t *tok_len;
  float *score;
  int32_t *type;
  uint32_t cap;          /* hash of token text -> id (open addressing) */
  int32_t *slot;
  int32_t *special;      /* non-normal, non-byte tokens, longest first */
  size_t n_special;
  int32_t byte_tok[256];
  int32_t bos;
};

static uint64_t fnv(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static int32_t lookup(const kvb_spm *t, const char *s, size_t n) {
  uint32_t m = t->cap - 1;
  for (uint32_t i = (uint32_t)fnv(s, n) & m;; i = (i + 1) & m) {
    int32_t id = t->slot[i];
    if (id < 0) return -1;
    if (t->tok_len[id] == n && memcmp(t->tok[id], s, n) == 0) return id;
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

void kvb_spm_free(kvb_spm *t) {
  if (!t) return;
  if (t->tok)
    for (size_t i = 0; i < t->n_vocab; i++) free(t->tok[i]);
  free(t->tok);
  free(t->tok_len);
  free(t->score);
  free(t->type);
  free(t->slot);
  free(t->special);
  free(t);
}

size_t kvb_spm_vocab_size(const kvb_spm *t) { return t ? t->n_vocab : 0; }
int32_t kvb_spm_bos(const kvb_spm *t) { return t ? t->bos : -1; }

int kvb_spm_load(const kvb_gguf *g, kvb_spm **out) {
  if (!g || !out) return KVB_ERROR(KVB_ENULL, "kvb_spm_load: NULL argument");
  *out = NULL;
  const char *model = NULL;
  if (kvb_gguf_get_str(g, "tokenizer.ggml.model", &model) || strcmp(model, "llama") != 0)
    return KVB_ERROR(KVB_EFORMAT, "the file's tokenizer is not SentencePiece-style "
                     "(tokenizer.ggml.model is not \"llama\")");
  const kvb_gguf_kv *tk = kvb_gguf_find(g, "tokenizer.ggml.tokens");
  const kvb_gguf_kv *sc = kvb_gguf_find(g, "tokenizer.ggml.scores");
  const kvb_gguf_kv *ty = kvb_gguf_find(g, "tokenizer.ggml.token_type");
  const kvb_gguf_kv *asp = kvb_gguf_find(g, "tokenizer.ggml.add_space_prefix");
  if (!tk || tk->type != KVB_GGUF_ARRAY || tk->arr_type != KVB_GGUF_STRING || tk->arr_n == 0 ||
      tk->arr_n > INT32_MAX / 4)
    return KVB_ERROR(KVB_EFORMAT, "tokenizer.ggml.tokens is missing or not a string array");
  if (!sc || sc->type != KVB_GGUF_ARRAY || sc->arr_n != tk->arr_n || !sc->arr_f)
    return KVB_ERROR(KVB_EFORMAT, "tokenizer.ggml.scores is not a float array as long as the vocabulary");
  if (!ty || ty->type != KVB_GGUF_ARRAY || ty->arr_n != tk->arr_n || !ty->arr_i)
    return KVB_ERROR(KVB_EFORMAT, "tokenizer.ggml.token_type is not an int32 array as long as the vocabulary");
  if (asp && asp->num.u != 0)
    return KVB_ERROR(KVB_EFORMAT, "tokenizer.ggml.add_space_prefix = true is not supported");
  uint64_t bos = 2;
  if (kvb_gguf_find(g, "tokenizer.ggml.bos_token_id") &&
      kvb_gguf_get_uint(g, "tokenizer.ggml.bos_token_id", &bos))
    return KVB_EFORMAT;
  if (bos >= tk->arr_n) return KVB_ERROR(KVB_EFORMAT, "the BOS id %llu is outside the vocabulary",
                                         (unsigned long long)bos);
  kvb_spm *t = calloc(1, sizeof *t);
  if (!t) return KVB_ERROR(KVB_ENOMEM, "out of memory for the tokenizer");
  size_t n = (size_t)tk->arr_n;
  t->n_vocab = n;
  t->bos = (int32_t)bos;
  t->cap = 16;
  while (t->cap < 2 * n) t->cap <<= 1;
  t->tok = calloc(n, sizeof *t->tok);
  t->tok_len = calloc(n, sizeof *t->tok_len);
  t->score = calloc(n, sizeof *t->score);
  t->type = calloc(n, sizeof *t->type);
  t->special = calloc(n, sizeof *t->special);
  t->slot = malloc(t->cap * sizeof *t->slot);
  if (!t->tok || !t->tok_len || !t->score || !t->type || !t->special || !t->slot) {
    kvb_spm_free(t);
    return KVB_ERROR(KVB_ENOMEM, "out of memory for the tokenizer");
  }
  memset(t->slot, 0xff, t->cap * sizeof *t->slot);
  for (size_t i = 0; i < n; i++) {
    size_t len = (size_t)tk->arr_str_len[i];
    if (!(t->tok[i] = malloc(len + 1))) {
      kvb_spm_free(t);
      return KVB_ERROR(KVB_ENOMEM, "out of memory for the tokenizer");
    }
    memcpy(t->tok[i], tk->arr_str[i], len + 1);
    t->tok_len[i] = len;
    t->score[i] = (float)sc->arr_f[i];
    t->type[i] = (int32_t)ty->arr_i[i];
    if (lookup(t, t->tok[i], len) >= 0) continue; /* a duplicate text: the first id wins */
    uint32_t m = t->cap - 1, h = (uint32_t)fnv(t->tok[i], len) & m;
    while (t->slot[h] >= 0) h = (h + 1) & m;
    t->slot[h] = (int32_t)i;
    if ((t->type[i] == 2 || t->type[i] == 3 || t->type[i] == 4) && len > 0)
      t->special[t->n_special++] = (int32_t)i; /* unknown, control, user-defined */
  }
  /* longest first, equal lengths in id order: sort keys (~length << 32 | id) ascending */
  uint64_t *key = malloc((t->n_special ? t->n_special : 1) * sizeof *key);
  if (!key) {
    kvb_spm_free(t);
    return KVB_ERROR(KVB_ENOMEM, "out of memory for the tokenizer");
  }
  for (size_t i = 0; i < t->n_special; i++)
    key[i] = (uint64_t)(UINT32_MAX - (uint32_t)t->tok_len[t->special[i]]) << 32 | (uint32_t)t->special[i];
  qsort(key, t->n_special, sizeof *key, cmp_u64);
  for (size_t i = 0; i < t->n_special; i++) t->special[i] = (int32_t)(key[i] & 0xffffffffu);
  free(key);
  for (size_t i = 0; i < 256; i++) {
    char b[8];
    snprintf(b, sizeof b, "<0x%02X>", (unsigned)i);
    t->byte_tok[i] = lookup(t, b, 6);
    if (t->byte_tok[i] < 0) {
      kvb_spm_free(t);
      return KVB_ERROR(KVB_EFORMAT, "the vocabulary has no byte token %s", b);
    }
  }
  *out = t;
  return KVB_OK;
}


typedef struct {
  size_t start, len; /* into the escaped text */
  long prev, next;   /* neighbours, −1 at the ends */
} sym;
typedef struct {
  float score;
  long left, right;
  size_t size; /* the pair's byte length when pushed: a mismatch later marks it stale */
} pair;

/* max-heap order: higher score, then smaller left */
static int better(const pair *a, const pair *b) {
  return a->score > b->score || (a->score == b->score && a->left < b->left);
}
typedef struct {
  pair *v;
  size_t n, cap;
} heap;
static int heap_push(heap *h, pair p) {
  if (h->n == h->cap) {
    size_t c = h->cap ? 2 * h->cap : 64;
    pair *v = realloc(h->v, c * sizeof *v);
    if (!v) return KVB_ERROR(KVB_ENOMEM, "out of memory encoding text");
    h->v = v, h->cap = c;
  }
  size_t i = h->n++;
  h->v[i] = p;
  while (i > 0 && better(&h->v[i], &h->v[(i - 1) / 2])) {
    pair x = h->v[i];
    h->v[i] = h->v[(i - 1) / 2];
    h->v[(i - 1) / 2] = x;
    i = (i - 1) / 2;
  }
  return KVB_OK;
}
static pair heap_pop(heap *h) {
  pair top = h->v[0];
  h->v[0] = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && better(&h->v[l], &h->v[m])) m = l;
    if (r < h->n && better(&h->v[r], &h->v[m])) m = r;
    if (m == i) break;
    pair x = h->v[i];
    h->v[i] = h->v[m];
    h->v[m] = x;
    i = m;
  }
  return top;
}

static int try_pair(const kvb_spm *t, const char *s, const sym *y, long a, long b, heap *h) {
  if (a < 0 || b < 0) return KVB_OK;
  size_t len = y[a].len + y[b].len;
  int32_t id = lookup(t, s + y[a].start, len); /* the two symbols are contiguous in s */
  if (id < 0) return KVB_OK;
  return heap_push(h, (pair){t->score[id], a, b, len});
}

/* A character's length from its first byte's top four bits alone (as llama.cpp's
 * unicode_len_utf8 decides it: 0xC_/0xD_ two, 0xE_ three, 0xF_ four, anything else one),
 * cut at the piece's end; the bytes are not validated. */
static size_t utf8_len(unsigned char c) {
  static const unsigned char len[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return len[c >> 4];
}

/* Steps 2–4 for one raw piece. */
static int encode_piece(const kvb_spm *t, const char *raw, size_t len, kvb_ids_buf *out) {
  size_t cap = 3 * len + 1, n = 0;
  char *s = malloc(cap);
  sym *y = malloc((len ? len : 1) * sizeof *y);
  heap h = {0};
  int st = KVB_OK;
  if (!s || !y) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory encoding %zu bytes", len);
    goto done;
  }
  size_t m = 0;
  for (size_t i = 0; i < len; i++) {
    if (raw[i] == ' ') memcpy(s + m, "\xe2\x96\x81", 3), m += 3; /* U+2581 */
    else s[m++] = raw[i];
  }
  for (size_t i = 0; i < m; n++) {
    size_t k = utf8_len((unsigned char)s[i]);
    if (k > m - i) k = m - i;
    y[n] = (sym){i, k, (long)n - 1, -1};
    if (n) y[n - 1].next = (long)n;
    i += k;
  }
  for (size_t i = 0; i + 1 < n && !st; i++) st = try_pair(t, s, y, (long)i, (long)i + 1, &h);
  while (h.n && !st) {
    pair p = heap_pop(&h);
    sym *a = &y[p.left], *b = &y[p.right];
    if (a->len == 0 || b->len == 0 || a->len + b->len != p.size || a->next != p.right) continue;
    a->len += b->len;
    b->len = 0;
    a->next = b->next;
    if (b->next >= 0) y[b->next].prev = p.left;
    st = try_pair(t, s, y, a->prev, p.left, &h);
    if (!st) st = try_pair(t, s, y, p.left, a->next, &h);
  }
  for (long i = n ? 0 : -1; i >= 0 && !st; i = y[i].next) {
    int32_t id = lookup(t, s + y[i].start, y[i].len);
    if (id >= 0) st = kvb_ids_push(out, id);
    else
      for (size_t k = 0; k < y[i].len && !st; k++) st = kvb_ids_push(out, t->byte_tok[(unsigned char)s[y[i].start + k]]);
  }
done:
  free(s);
  free(y);
  free(h.v);
  return st;
}

typedef struct {
  size_t start, len;
  int32_t id; /* −1: raw text */
} frag;

int kvb_spm_encode(const kvb_spm *t, const char *text, size_t len, int add_bos, int32_t **ids,
                   size_t *n) {
  if (!t || (!text && len) || !ids || !n) return KVB_ERROR(KVB_ENULL, "kvb_spm_encode: NULL argument");
  *ids = NULL, *n = 0;
  kvb_ids_buf out = {0};
  /* at most 2 new fragments per special occurrence, and occurrences ≤ len */
  size_t fcap = 2 * len + 2, nf = len ? 1 : 0;
  frag *f = malloc(fcap * sizeof *f), *g = malloc(fcap * sizeof *g);
  int st = KVB_OK;
  if (!f || !g) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory encoding %zu bytes", len);
    goto done;
  }
  if (len) f[0] = (frag){0, len, -1};
  for (size_t k = 0; k < t->n_special && nf; k++) {
    int32_t id = t->special[k];
    const char *w = t->tok[id];
    size_t wl = t->tok_len[id], ng = 0;
    for (size_t i = 0; i < nf; i++) {
      if (f[i].id >= 0 || f[i].len < wl) {
        g[ng++] = f[i];
        continue;
      }
      size_t a = f[i].start, end = f[i].start + f[i].len, from = a;
      while (a + wl <= end) {
        const char *hit = memchr(text + a, w[0], end - wl + 1 - a);
        if (!hit) break;
        a = (size_t)(hit - text);
        if (memcmp(text + a, w, wl) != 0) {
          a++;
          continue;
        }
        if (a > from) g[ng++] = (frag){from, a - from, -1};
        g[ng++] = (frag){a, wl, id};
        a += wl;
        from = a;
      }
      if (end > from) g[ng++] = (frag){from, end - from, -1};
    }
    frag *x = f;
    f = g, g = x, nf = ng;
  }
  if (add_bos) st = kvb_ids_push(&out, t->bos);
  for (size_t i = 0; i < nf && !st; i++)
    st = f[i].id >= 0 ? kvb_ids_push(&out, f[i].id) : encode_piece(t, text + f[i].start, f[i].len, &out);
done:
  free(f);
  free(g);
  if (st) {
    free(out.v);
    return st;
  }
  if (!out.v && !(out.v = malloc(sizeof(int32_t)))) return KVB_ERROR(KVB_ENOMEM, "out of memory");
  *ids = out.v;
  *n = out.n;
  return KVB_OK;
}

int kvb_spm_decode(const kvb_spm *t, const int32_t *ids, size_t n, char **text, size_t *len) {
  if (!t || (!ids && n) || !text || !len) return KVB_ERROR(KVB_ENULL, "kvb_spm_decode: NULL argument");
  *text = NULL, *len = 0;
  size_t cap = 1;
  for (size_t i = 0; i < n; i++) {
    if (ids[i] < 0 || (size_t)ids[i] >= t->n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token id %d is outside the vocabulary (%zu)", (int)ids[i], t->n_vocab);
    cap += t->tok_len[ids[i]];
  }
  char *o = malloc(cap);
  if (!o) return KVB_ERROR(KVB_ENOMEM, "out of memory decoding");
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t id = ids[i];
    const char *s = t->tok[id];
    size_t l = t->tok_len[id];
    if (t->type[id] == 3) continue;                 /* control tokens print nothing */
    if (t->type[id] == 6) {                         /* <0xXX> */
      o[m++] = (char)strtol(s + 3, NULL, 16);
      continue;
    }
    for (size_t p = 0; p < l;) {
      if (l - p >= 3 && memcmp(s + p, "\xe2\x96\x81", 3) == 0) o[m++] = ' ', p += 3;
      else o[m++] = s[p++];
    }
  }
  o[m] = '\0';
  *text = o;
  *len = m;
  return KVB_OK;
}

/* tokenizer.c — GPT-2 byte-level BPE with SmolLM2's pre-tokenizer (see tokenizer.h). */
#include "tokenizer.h"

#include <stdlib.h>
#include <string.h>

#include "ids_buf.h"
#include "kvb_error.h"
#include "unicode_classes.h"

/* Open-addressing hash tables (power-of-two capacity, linear probing). */
typedef struct {
  uint32_t cap;
  int32_t *slot; /* token id or -1 */
} str_map;
typedef struct {
  uint32_t cap;
  uint64_t *key; /* (left << 32 | right) + 1; 0 = empty */
  int32_t *rank, *merged;
} pair_map;

struct kvb_tokenizer {
  size_t n_vocab;
  char **tok;      /* byte-level strings as stored in the file */
  size_t *tok_len;
  int32_t *special; /* ids of control tokens, longest first */
  size_t n_special;
  str_map vocab;
  pair_map merges;
  int32_t byte_tok[256];     /* id of the one-byte token of each byte */
  char byte_str[256][3];     /* GPT-2 alphabet: byte -> UTF-8 of its printable stand-in */
  int16_t cp_byte[512];      /* stand-in code point (< 512) -> byte, -1 if none */
};

static uint64_t fnv(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}
static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

static int32_t vocab_get(const kvb_tokenizer *t, const char *s, size_t n) {
  uint32_t m = t->vocab.cap - 1;
  for (uint32_t i = (uint32_t)fnv(s, n) & m;; i = (i + 1) & m) {
    int32_t id = t->vocab.slot[i];
    if (id < 0) return -1;
    if (t->tok_len[id] == n && memcmp(t->tok[id], s, n) == 0) return id;
  }
}

static int pair_get(const kvb_tokenizer *t, int32_t a, int32_t b, int32_t *rank, int32_t *merged) {
  uint64_t k = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
  uint32_t m = t->merges.cap - 1;
  for (uint32_t i = (uint32_t)mix(k) & m;; i = (i + 1) & m) {
    if (t->merges.key[i] == 0) return 0;
    if (t->merges.key[i] == k) {
      *rank = t->merges.rank[i];
      *merged = t->merges.merged[i];
      return 1;
    }
  }
}

static int put_utf8(uint32_t cp, char *out) {
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 63));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 63));
    out[2] = (char)(0x80 | (cp & 63));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 63));
  out[2] = (char)(0x80 | ((cp >> 6) & 63));
  out[3] = (char)(0x80 | (cp & 63));
  return 4;
}

/* Decodes one UTF-8 code point at s[0..n); invalid or truncated sequences yield the single
 * byte as a code point of its own class "other" (flagged by returning cp = 0x110000 + byte). */
static uint32_t get_utf8(const unsigned char *s, size_t n, size_t *adv) {
  unsigned c = s[0];
  int need = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
  if (need == 0) { *adv = 1; return c; }
  if (need < 0 || (size_t)need >= n) { *adv = 1; return 0x110000u + c; }
  uint32_t cp = c & (0x3Fu >> need);
  for (int i = 1; i <= need; i++) {
    if ((s[i] & 0xC0) != 0x80) { *adv = 1; return 0x110000u + c; }
    cp = (cp << 6) | (s[i] & 63);
  }
  static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
  if (cp < min[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    *adv = 1;
    return 0x110000u + c;
  }
  *adv = (size_t)need + 1;
  return cp;
}

void kvb_tok_free(kvb_tokenizer *t) {
  if (!t) return;
  if (t->tok)
    for (size_t i = 0; i < t->n_vocab; i++) free(t->tok[i]);
  free(t->tok);
  free(t->tok_len);
  free(t->special);
  free(t->vocab.slot);
  free(t->merges.key);
  free(t->merges.rank);
  free(t->merges.merged);
  free(t);
}

size_t kvb_tok_vocab_size(const kvb_tokenizer *t) { return t ? t->n_vocab : 0; }

static uint32_t pow2_above(uint64_t n) {
  uint32_t c = 16;
  while (c < 2 * n) c <<= 1;
  return c;
}

int kvb_tok_load(const kvb_gguf *g, kvb_tokenizer **out) {
  if (!g || !out) return KVB_ERROR(KVB_ENULL, "kvb_tok_load: NULL argument");
  *out = NULL;
  const kvb_gguf_kv *tk = kvb_gguf_find(g, "tokenizer.ggml.tokens");
  const kvb_gguf_kv *mk = kvb_gguf_find(g, "tokenizer.ggml.merges");
  const kvb_gguf_kv *ty = kvb_gguf_find(g, "tokenizer.ggml.token_type");
  const char *model = NULL;
  if (kvb_gguf_get_str(g, "tokenizer.ggml.model", &model) || strcmp(model, "gpt2") != 0)
    return KVB_ERROR(KVB_EFORMAT, "the file's tokenizer is not GPT-2 byte-level BPE "
                     "(tokenizer.ggml.model is not \"gpt2\")");
  if (!tk || tk->type != KVB_GGUF_ARRAY || tk->arr_type != KVB_GGUF_STRING || tk->arr_n == 0 ||
      tk->arr_n > INT32_MAX / 4)
    return KVB_ERROR(KVB_EFORMAT, "tokenizer.ggml.tokens is missing or not a string array");
  if (!mk || mk->type != KVB_GGUF_ARRAY || mk->arr_type != KVB_GGUF_STRING ||
      mk->arr_n > INT32_MAX / 4)
    return KVB_ERROR(KVB_EFORMAT, "tokenizer.ggml.merges is missing or not a string array");
  if (ty && (ty->type != KVB_GGUF_ARRAY || ty->arr_n != tk->arr_n || !ty->arr_i))
    return KVB_ERROR(KVB_EFORMAT, "tokenizer.ggml.token_type is not an int32 array as long as "
                     "the vocabulary");
  kvb_tokenizer *t = calloc(1, sizeof *t);
  if (!t) return KVB_ERROR(KVB_ENOMEM, "out of memory for the tokenizer");
  size_t n = (size_t)tk->arr_n;
  t->n_vocab = n;
  t->tok = calloc(n, sizeof *t->tok);
  t->tok_len = calloc(n, sizeof *t->tok_len);
  t->special = calloc(n, sizeof *t->special);
  t->vocab.cap = pow2_above(n);
  t->vocab.slot = malloc(t->vocab.cap * sizeof(int32_t));
  t->merges.cap = pow2_above(mk->arr_n);
  t->merges.key = calloc(t->merges.cap, sizeof(uint64_t));
  t->merges.rank = calloc(t->merges.cap, sizeof(int32_t));
  t->merges.merged = calloc(t->merges.cap, sizeof(int32_t));
  if (!t->tok || !t->tok_len || !t->special || !t->vocab.slot || !t->merges.key ||
      !t->merges.rank || !t->merges.merged) {
    kvb_tok_free(t);
    return KVB_ERROR(KVB_ENOMEM, "out of memory for the tokenizer");
  }
  int st = KVB_OK;
  memset(t->vocab.slot, 0xff, t->vocab.cap * sizeof(int32_t));
  for (size_t i = 0; i < n; i++) {
    size_t len = (size_t)tk->arr_str_len[i];
    t->tok[i] = malloc(len + 1);
    if (!t->tok[i]) {
      kvb_tok_free(t);
      return KVB_ERROR(KVB_ENOMEM, "out of memory for the tokenizer");
    }
    memcpy(t->tok[i], tk->arr_str[i], len + 1);
    t->tok_len[i] = len;
    if (vocab_get(t, t->tok[i], len) >= 0) continue; /* a duplicate: the first id wins */
    uint32_t m = t->vocab.cap - 1, h = (uint32_t)fnv(t->tok[i], len) & m;
    while (t->vocab.slot[h] >= 0) h = (h + 1) & m;
    t->vocab.slot[h] = (int32_t)i;
    if (ty && ty->arr_i[i] == 3 && len > 0) t->special[t->n_special++] = (int32_t)i;
  }
  /* Control tokens, longest first, so the scan takes the longest match. */
  for (size_t i = 1; i < t->n_special; i++)
    for (size_t j = i; j > 0 && t->tok_len[t->special[j]] > t->tok_len[t->special[j - 1]]; j--) {
      int32_t x = t->special[j];
      t->special[j] = t->special[j - 1];
      t->special[j - 1] = x;
    }
  /* GPT-2's byte alphabet: the printable bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF stand for
   * themselves; the others, in increasing order, for the code points 256, 257, ... */
  for (int i = 0; i < 512; i++) t->cp_byte[i] = -1;
  int extra = 0;
  for (int b = 0; b < 256; b++) {
    int self = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    uint32_t cp = self ? (uint32_t)b : 256u + (uint32_t)extra++;
    int k = put_utf8(cp, t->byte_str[b]);
    t->byte_str[b][k] = '\0';
    t->cp_byte[cp] = (int16_t)b;
    /* -1 when the vocabulary has no token for the byte (SmolLM2 lacks 21 of them, e.g. 0x04,
     * 0xC0, 0xF5..0xFF): such bytes are dropped, as Hugging Face's BPE without an unknown token
     * does, before the merges (so their neighbours can merge). */
    t->byte_tok[b] = vocab_get(t, t->byte_str[b], (size_t)k);
  }
  char buf[1024];
  for (uint64_t r = 0; r < mk->arr_n && !st; r++) {
    const char *s = mk->arr_str[r];
    size_t len = (size_t)mk->arr_str_len[r];
    const char *sp = memchr(s, ' ', len);
    if (!sp || len > sizeof buf) {
      st = KVB_ERROR(KVB_EFORMAT, "merge %llu is not two tokens separated by a space",
                     (unsigned long long)r);
      break;
    }
    size_t la = (size_t)(sp - s), lb = len - la - 1;
    memcpy(buf, s, la);
    memcpy(buf + la, sp + 1, lb);
    int32_t a = vocab_get(t, s, la), b = vocab_get(t, sp + 1, lb), ab = vocab_get(t, buf, la + lb);
    if (a < 0 || b < 0 || ab < 0) {
      st = KVB_ERROR(KVB_EFORMAT, "merge %llu names a token that is not in the vocabulary",
                     (unsigned long long)r);
      break;
    }
    uint64_t k = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
    uint32_t m = t->merges.cap - 1, h = (uint32_t)mix(k) & m;
    while (t->merges.key[h] != 0 && t->merges.key[h] != k) h = (h + 1) & m;
    if (t->merges.key[h] == k) continue; /* a repeated merge keeps its first (lowest) rank */
    t->merges.key[h] = k;
    t->merges.rank[h] = (int32_t)r;
    t->merges.merged[h] = ab;
  }
  if (st) {
    kvb_tok_free(t);
    return st;
  }
  *out = t;
  return KVB_OK;
}


/* BPE over one pre-token's bytes. sym holds the current symbols' ids (at most len of them). */
static int bpe(const kvb_tokenizer *t, const unsigned char *s, size_t len, int32_t *sym, kvb_ids_buf *out) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++)
    if (t->byte_tok[s[i]] >= 0) sym[n++] = t->byte_tok[s[i]];
  for (;;) {
    int32_t best = INT32_MAX, merged = -1, r, m;
    size_t at = 0;
    for (size_t i = 0; i + 1 < n; i++)
      if (pair_get(t, sym[i], sym[i + 1], &r, &m) && r < best) {
        best = r;
        merged = m;
        at = i;
      }
    if (merged < 0) break;
    sym[at] = merged;
    memmove(sym + at + 1, sym + at + 2, (n - at - 2) * sizeof *sym);
    n--;
  }
  for (size_t i = 0; i < n; i++) {
    int st = kvb_ids_push(out, sym[i]);
    if (st) return st;
  }
  return KVB_OK;
}

enum { C_LETTER, C_NUMBER, C_SPACE, C_OTHER };
static int cls(uint32_t cp) {
  if (cp >= 0x110000u) return C_OTHER; /* an invalid byte */
  if (kvb_uc_is_letter(cp)) return C_LETTER;
  if (kvb_uc_is_number(cp)) return C_NUMBER;
  if (kvb_uc_is_space(cp)) return C_SPACE;
  return C_OTHER;
}

/* GPT-2's pattern over one piece of np code points (cp, class cl, byte offsets off[0..np]). */
static int split_piece(const kvb_tokenizer *t, const unsigned char *text, const uint32_t *cp,
                       const unsigned char *cl, const size_t *off, size_t np, int32_t *sym,
                       kvb_ids_buf *out) {
  size_t i = 0;
  while (i < np) {
    size_t j = i;
    if (cp[i] == '\'' && i + 1 < np) { /* 's 't 're 've 'm 'll 'd (case-sensitive) */
      uint32_t a = cp[i + 1], b = i + 2 < np ? cp[i + 2] : 0;
      if (a == 's' || a == 't' || a == 'm' || a == 'd') j = i + 2;
      else if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) j = i + 3;
    }
    if (j == i) {
      size_t k = i + (cp[i] == ' ' && i + 1 < np && cl[i + 1] != C_SPACE);
      int c = cl[k];
      if (c != C_SPACE && (k == i || cp[i] == ' ')) {
        /* ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: an optional space, then a run */
        j = k;
        while (j < np && cl[j] == c) j++;
      } else { /* `\s+(?!\S)` then `\s+` */
        size_t r = 0;
        while (i + r < np && cl[i + r] == C_SPACE) r++;
        j = i + (i + r == np || r == 1 ? r : r - 1);
      }
    }
    int st = bpe(t, text + off[i], off[j] - off[i], sym, out);
    if (st) return st;
    i = j;
  }
  return KVB_OK;
}

int kvb_tok_encode(const kvb_tokenizer *t, const char *text, size_t len, int32_t **ids, size_t *n) {
  if (!t || (!text && len) || !ids || !n) return KVB_ERROR(KVB_ENULL, "kvb_tok_encode: NULL argument");
  *ids = NULL;
  *n = 0;
  const unsigned char *s = (const unsigned char *)text;
  uint32_t *cp = malloc((len + 1) * sizeof *cp);
  unsigned char *cl = malloc(len + 1);
  size_t *off = malloc((len + 1) * sizeof *off);
  int32_t *sym = malloc((len + 1) * sizeof *sym);
  kvb_ids_buf out = {0};
  int st = KVB_OK;
  if (!cp || !cl || !off || !sym) {
    st = KVB_ERROR(KVB_ENOMEM, "out of memory encoding %zu bytes", len);
    goto done;
  }
  size_t pos = 0;
  while (pos < len && !st) {
    /* the next control token at or after pos (longest at the earliest position) */
    size_t seg_end = len;
    int32_t sp = -1;
    for (size_t p = pos; p < len && sp < 0; p++)
      for (size_t k = 0; k < t->n_special; k++) {
        int32_t id = t->special[k];
        if (t->tok_len[id] <= len - p && memcmp(s + p, t->tok[id], t->tok_len[id]) == 0) {
          sp = id;
          seg_end = p;
          break;
        }
      }
    /* the ordinary text [pos, seg_end): code points, then pieces split at every number */
    size_t np = 0, adv;
    for (size_t p = pos; p < seg_end; p += adv) {
      cp[np] = get_utf8(s + p, seg_end - p, &adv);
      cl[np] = (unsigned char)cls(cp[np]);
      off[np++] = p;
    }
    off[np] = seg_end;
    size_t a = 0;
    while (a < np && !st) {
      size_t b = a + 1;
      if (cl[a] != C_NUMBER)
        while (b < np && cl[b] != C_NUMBER) b++;
      st = split_piece(t, s, cp + a, cl + a, off + a, b - a, sym, &out);
      a = b;
    }
    if (st) break;
    if (sp >= 0) {
      st = kvb_ids_push(&out, sp);
      pos = seg_end + t->tok_len[sp];
    } else {
      pos = len;
    }
  }
done:
  free(cp);
  free(cl);
  free(off);
  free(sym);
  if (st) {
    free(out.v);
    return st;
  }
  if (!out.v) out.v = malloc(sizeof(int32_t)); /* a valid pointer for empty text */
  if (!out.v) return KVB_ERROR(KVB_ENOMEM, "out of memory");
  *ids = out.v;
  *n = out.n;
  return KVB_OK;
}

int kvb_tok_decode(const kvb_tokenizer *t, const int32_t *ids, size_t n, char **text, size_t *len) {
  if (!t || (!ids && n) || !text || !len) return KVB_ERROR(KVB_ENULL, "kvb_tok_decode: NULL argument");
  *text = NULL;
  *len = 0;
  size_t cap = 1;
  for (size_t i = 0; i < n; i++) {
    if (ids[i] < 0 || (size_t)ids[i] >= t->n_vocab)
      return KVB_ERROR(KVB_EINVAL, "token id %d is outside the vocabulary (%zu)", (int)ids[i],
                       t->n_vocab);
    cap += t->tok_len[ids[i]];
  }
  char *o = malloc(cap);
  if (!o) return KVB_ERROR(KVB_ENOMEM, "out of memory decoding");
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    const unsigned char *s = (const unsigned char *)t->tok[ids[i]];
    size_t l = t->tok_len[ids[i]], adv;
    int special = 0;
    for (size_t k = 0; k < t->n_special; k++) special |= t->special[k] == ids[i];
    for (size_t p = 0; p < l; p += adv) {
      uint32_t c = get_utf8(s + p, l - p, &adv);
      if (!special && c < 512 && t->cp_byte[c] >= 0) o[m++] = (char)t->cp_byte[c];
      else memcpy(o + m, s + p, adv), m += adv; /* not a byte stand-in: keep as is */
    }
  }
  o[m] = '\0';
  *text = o;
  *len = m;
  return KVB_OK;
}

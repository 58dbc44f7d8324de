/* tasks.c — the seeded long-context tasks (tasks.h). */
#include "tasks.h"
#include "haystack.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kvb_error.h"
#include "pcg32.h"

static const char *const FAMILY[KVB_TASK_N_FAMILIES] = {
    "niah_single", "niah_multikey", "niah_multivalue", "niah_multiquery", "vt", "cwe", "fwe"};
/* Greedy tokens per family: room for the answer (7-digit numbers are 8 tokens with the space in
 * both models: SmolLM2's individual-digits pre-tokenizer, Gemma 3's single-digit pieces) and a
 * little more. */
static const size_t MAX_NEW[KVB_TASK_N_FAMILIES] = {12, 12, 40, 40, 40, 48, 24};

const char *kvb_task_family_name(kvb_task_family f) {
  return (unsigned)f < KVB_TASK_N_FAMILIES ? FAMILY[f] : "(unknown)";
}

int kvb_task_family_lookup(const char *name, kvb_task_family *f) {
  for (int i = 0; name && i < KVB_TASK_N_FAMILIES; i++)
    if (!strcmp(name, FAMILY[i])) {
      *f = (kvb_task_family)i;
      return KVB_OK;
    }
  return KVB_ERROR(KVB_EINVAL, "unknown task family '%s' (niah_single, niah_multikey, "
                   "niah_multivalue, niah_multiquery, vt, cwe, fwe)", name ? name : "(null)");
}

/* Key words of the needles: concrete nouns that none of the license texts uses. */
static const char *const KEYS[] = {
    "walrus",  "teapot",   "lantern", "pelican", "meadow",  "violin",  "harbor",  "cactus",
    "giraffe", "kettle",   "orchard", "penguin", "saddle",  "trumpet", "glacier", "hammock",
    "lobster", "mustard",  "pumpkin", "raccoon", "sparrow", "tulip",   "volcano", "whistle",
    "anchor",  "biscuit",  "canyon",  "dolphin", "falcon",  "gazelle", "honey",   "iceberg",
    "jaguar",  "koala",    "lemon",   "magnet",  "nutmeg",  "octopus", "parrot",  "quartz",
    "rhubarb", "squirrel", "tiger",   "umbrella", "walnut", "yak",     "zebra",   "badger",
    "candle",  "donkey",   "emerald", "feather", "garlic",  "hedgehog", "island", "jasmine",
    "kayak",   "llama",    "marble",  "noodle",  "oyster",  "pepper",  "quilt",   "robin"};
#define N_KEYS (sizeof KEYS / sizeof *KEYS)

/* ---- growable token buffer ---- */
typedef struct {
  int32_t *v;
  size_t n, cap;
} tbuf;

static int tb_put(tbuf *b, const int32_t *t, size_t n) {
  if (b->n + n > b->cap) {
    size_t c = b->cap ? b->cap : 1024;
    while (c < b->n + n) c *= 2;
    int32_t *g = realloc(b->v, c * sizeof *g);
    if (!g) return KVB_ERROR(KVB_ENOMEM, "out of memory");
    b->v = g, b->cap = c;
  }
  memcpy(b->v + b->n, t, n * sizeof *t);
  b->n += n;
  return KVB_OK;
}

static int tb_text(const kvb_lm *lm, tbuf *b, const char *s) {
  int32_t *t = NULL;
  size_t n = 0;
  int st = kvb_lm_encode(lm, s, strlen(s), &t, &n);
  if (!st) st = tb_put(b, t, n);
  free(t);
  return st;
}

static size_t ntok(const kvb_lm *lm, const char *s, int *st) {
  int32_t *t = NULL;
  size_t n = 0;
  if (!*st) *st = kvb_lm_encode(lm, s, strlen(s), &t, &n);
  free(t);
  return n;
}

/* The BOS a model takes first (kvb_lm_bos: Gemma 3's <bos>; none for SmolLM2): 1 or 0 tokens,
 * counted in every budget below so the task still fits its length. */
static size_t n_bos(const kvb_lm *lm) { return kvb_lm_bos(lm) >= 0; }

static uint32_t draw(kvb_pcg32 *g, size_t bound) { return kvb_pcg32_bounded(g, (uint32_t)bound); }

/* k distinct indices of [0, n) in draw order (partial Fisher–Yates over a scratch array). */
static void distinct(kvb_pcg32 *g, size_t n, size_t k, size_t *out) {
  size_t idx[256];
  for (size_t i = 0; i < n && i < 256; i++) idx[i] = i;
  for (size_t i = 0; i < k; i++) {
    size_t j = i + draw(g, n - i);
    size_t t = idx[i];
    idx[i] = idx[j], idx[j] = t, out[i] = idx[i];
  }
}

/* A 7-digit number (1000000..9999999) differing from the first `have` in vals. */
static unsigned number7(kvb_pcg32 *g, const unsigned *vals, size_t have) {
  for (;;) {
    unsigned v = 1000000u + draw(g, 9000000);
    size_t i = 0;
    while (i < have && vals[i] != v) i++;
    if (i == have) return v;
  }
}

/* ---- prompt pieces (kvbound's own wording) ---- */
static const char NIAH_INTRO[] =
    "Some secret numbers are hidden in the long text below. Each one belongs to a word. Read "
    "carefully and remember them: you will be asked about them after the text.\n\n";
static const char VT_INTRO[] =
    "The long text below hides a few assignments of values to names. A name set to another name "
    "takes that name's value. Keep track of them: you will be asked about them after the text.\n\n";
static const char CWE_INTRO[] =
    "Below is a long list of words. A few of the words occur far more often than the others. "
    "Count them: you will be asked about them after the list.\n\n";
static const char FWE_INTRO[] =
    "Below is a long text of made-up words. Some of the words occur more often than others. "
    "Count them: you will be asked about them after the text.\n\n";

/* A needle sentence to insert: its text, and where it goes (haystack boundary, tie order). */
typedef struct {
  char text[96];
  size_t at;   /* boundary index: before sentence `at` of the cut haystack */
  int order;   /* ties at one boundary: ascending */
  int target;  /* the (first) target sentence: needle_at points at it */
} needle;

static int cmp_needle(const void *a, const void *b) {
  const needle *x = a, *y = b;
  if (x->at != y->at) return x->at < y->at ? -1 : 1;
  return (x->order > y->order) - (x->order < y->order);
}

static void join_answer(kvb_task *t, char *buf, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < t->n_expected && n < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : " ", t->expected[i]);
}

static void rand_name(kvb_pcg32 *g, char *s) {
  for (int i = 0; i < 5; i++) s[i] = (char)('A' + draw(g, 26));
  s[5] = '\0';
}

/* The needle families and vt: needles, the question and cue, the haystack cut around them. */
static int build_haystack_task(const kvb_lm *lm, kvb_pcg32 *g, kvb_task *t, tbuf *ctx,
                               char *question, char *cue, size_t qcap) {
  needle nd[16];
  size_t nn = 0, ntarget = 0;
  char ans[512];
  const char *intro = t->family == KVB_TASK_VT ? VT_INTRO : NIAH_INTRO;
  size_t ki[8];
  distinct(g, N_KEYS, 4, ki);
  unsigned vals[8];
  for (size_t i = 0; i < 4; i++) vals[i] = number7(g, vals, i);
  switch (t->family) {
  case KVB_TASK_NIAH_SINGLE:
  case KVB_TASK_NIAH_MULTIKEY:
    nn = t->family == KVB_TASK_NIAH_SINGLE ? 1 : 4, ntarget = 1;
    for (size_t i = 0; i < nn; i++)
      snprintf(nd[i].text, sizeof nd[i].text, " The secret number of %s is %u.", KEYS[ki[i]], vals[i]);
    snprintf(question, qcap, "\n\nQuestion: What is the secret number of %s in the text above?",
             KEYS[ki[0]]);
    snprintf(cue, qcap, "\nAnswer: The secret number of %s is", KEYS[ki[0]]);
    t->n_expected = 1;
    snprintf(t->expected[0], sizeof t->expected[0], "%u", vals[0]);
    break;
  case KVB_TASK_NIAH_MULTIVALUE:
    nn = ntarget = 4;
    for (size_t i = 0; i < nn; i++)
      snprintf(nd[i].text, sizeof nd[i].text, " The secret number of %s is %u.", KEYS[ki[0]], vals[i]);
    snprintf(question, qcap, "\n\nQuestion: What are all the secret numbers of %s in the text above?",
             KEYS[ki[0]]);
    snprintf(cue, qcap, "\nAnswer: The secret numbers of %s are", KEYS[ki[0]]);
    t->n_expected = 4;
    for (size_t i = 0; i < 4; i++) snprintf(t->expected[i], sizeof t->expected[i], "%u", vals[i]);
    break;
  case KVB_TASK_NIAH_MULTIQUERY:
    nn = ntarget = 4;
    for (size_t i = 0; i < nn; i++)
      snprintf(nd[i].text, sizeof nd[i].text, " The secret number of %s is %u.", KEYS[ki[i]], vals[i]);
    snprintf(question, qcap, "\n\nQuestion: What are the secret numbers of %s, %s, %s and %s in "
             "the text above?", KEYS[ki[0]], KEYS[ki[1]], KEYS[ki[2]], KEYS[ki[3]]);
    snprintf(cue, qcap, "\nAnswer: The secret numbers of %s, %s, %s and %s are", KEYS[ki[0]],
             KEYS[ki[1]], KEYS[ki[2]], KEYS[ki[3]]);
    t->n_expected = 4;
    for (size_t i = 0; i < 4; i++) snprintf(t->expected[i], sizeof t->expected[i], "%u", vals[i]);
    break;
  default: { /* vt: a chain of five names holding v, a distractor chain holding w */
    char names[10][6];
    for (size_t i = 0; i < 10; i++) {
      for (int again = 1; again;) {
        rand_name(g, names[i]);
        again = 0;
        for (size_t j = 0; j < i; j++) again |= !strcmp(names[i], names[j]);
      }
    }
    unsigned v = 10000 + draw(g, 90000), w;
    do w = 10000 + draw(g, 90000); while (w == v);
    nn = 10, ntarget = 5;
    for (size_t c = 0; c < 2; c++)
      for (size_t i = 0; i < 5; i++) {
        char *s = nd[5 * c + i].text;
        if (i == 0) snprintf(s, sizeof nd[0].text, " Set %s to %u.", names[5 * c], c ? w : v);
        else snprintf(s, sizeof nd[0].text, " Set %s to %s.", names[5 * c + i], names[5 * c + i - 1]);
      }
    snprintf(question, qcap, "\n\nQuestion: Which names hold the value %u after all the "
             "assignments in the text above?", v);
    snprintf(cue, qcap, "\nAnswer: The names that hold the value %u are", v);
    t->n_expected = 5;
    for (size_t i = 0; i < 5; i++) snprintf(t->expected[i], sizeof t->expected[i], "%.31s", names[i]);
  }
  }
  join_answer(t, ans, sizeof ans);
  int st = KVB_OK;
  size_t fixed = n_bos(lm) + ntok(lm, intro, &st) + ntok(lm, question, &st) + ntok(lm, cue, &st);
  for (size_t i = 0; i < nn; i++) fixed += ntok(lm, nd[i].text, &st);
  if (st) return st;
  if (fixed + t->max_new + 64 > t->length)
    return KVB_ERROR(KVB_EINVAL, "task %s: length %zu leaves no room for a haystack",
                     FAMILY[t->family], t->length);
  size_t budget = t->length - t->max_new - fixed;
  kvb_haystack h;
  size_t which = draw(g, kvb_haystack_n_texts);
  if ((st = kvb_haystack_load(lm, which, &h))) return st;
  t->text = h.text->name;
  /* whole sentences from a seeded start, wrapping around, while they fit */
  size_t s0 = draw(g, h.n_sent), m = 0, total = 0, cap = 1024;
  size_t *sent = malloc(cap * sizeof *sent), *bnd = malloc((cap + 1) * sizeof *bnd);
  if (!sent || !bnd) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  while (!st) {
    size_t s = (s0 + m) % h.n_sent, len = h.off[s + 1] - h.off[s];
    if (total + len > budget) break;
    if (m == cap) {
      size_t *a = realloc(sent, 2 * cap * sizeof *a), *b = a ? realloc(bnd, (2 * cap + 1) * sizeof *b) : NULL;
      if (a) sent = a;
      if (!b) {
        st = KVB_ERROR(KVB_ENOMEM, "out of memory");
        break;
      }
      bnd = b, cap *= 2;
    }
    bnd[m] = total, sent[m++] = s, total += len;
  }
  if (!st) bnd[m] = total;
  /* the target at the boundary nearest depth·total (strict <: of two equally near, the earlier;
   * tasks.h), the rest of the target after it, in order, the distractors anywhere (ties at a
   * boundary keep the chains' order) */
  if (!st) {
    size_t j = 0;
    double want = t->depth * (double)total;
    for (size_t b = 1; b <= m; b++)
      if (fabs((double)bnd[b] - want) < fabs((double)bnd[j] - want)) j = b;
    size_t pos[16];
    pos[0] = j; /* nd[0] is always the target's first sentence */
    for (size_t i = 1; i < ntarget; i++) pos[i] = j + draw(g, m - j + 1);
    /* sort the later target positions so the order is kept (a chain's assignments in order) */
    for (size_t a = 1; a < ntarget; a++)
      for (size_t b = a + 1; b < ntarget; b++)
        if (pos[b] < pos[a]) {
          size_t x = pos[a];
          pos[a] = pos[b], pos[b] = x;
        }
    for (size_t i = ntarget; i < nn; i++) pos[i] = draw(g, m + 1);
    if (t->family == KVB_TASK_VT) /* the distractor chain in order too */
      for (size_t a = ntarget; a < nn; a++)
        for (size_t b = a + 1; b < nn; b++)
          if (pos[b] < pos[a]) {
            size_t x = pos[a];
            pos[a] = pos[b], pos[b] = x;
          }
    for (size_t i = 0; i < nn; i++)
      nd[i].at = pos[i], nd[i].order = (int)i, nd[i].target = i == 0;
    qsort(nd, nn, sizeof *nd, cmp_needle);
  }
  if (!st) st = tb_text(lm, ctx, intro);
  t->haystack_begin = ctx->n;
  size_t k = 0;
  for (size_t b = 0; b <= m && !st; b++) {
    for (; k < nn && nd[k].at == b && !st; k++) {
      if (nd[k].target) t->needle_at = ctx->n;
      st = tb_text(lm, ctx, nd[k].text);
      if (nd[k].target) t->needle_end = ctx->n;
    }
    if (b < m && !st) st = tb_put(ctx, h.ids + h.off[sent[b]], h.off[sent[b] + 1] - h.off[sent[b]]);
  }
  t->haystack_end = ctx->n;
  free(sent), free(bnd);
  kvb_haystack_free(&h);
  if (!st && !(t->answer = malloc(strlen(ans) + 1))) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) strcpy(t->answer, ans);
  return st;
}

/* ---- cwe: the vocabulary of the license texts ---- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct lowercase words of 4..10 letters over every haystack text, sorted (*words and the
 * strings in *pool, both malloc'd). */
static int text_words(char ***words, size_t *nw, char **pool) {
  char *all = NULL;
  size_t tot = 0;
  int st = KVB_OK;
  for (size_t i = 0; i < kvb_haystack_n_texts && !st; i++) {
    char *b = NULL;
    size_t n = 0;
    if ((st = kvb_haystack_read(i, &b, &n))) break;
    char *g = realloc(all, tot + n + 2);
    if (!g) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
    else {
      all = g;
      memcpy(all + tot, b, n);
      tot += n;
      all[tot++] = ' ';
    }
    free(b);
  }
  if (st) {
    free(all);
    return st;
  }
  all[tot] = '\0';
  /* cut into words in place: a word is a maximal run of ASCII letters */
  size_t cap = tot / 2 + 1, n = 0;
  char **w = malloc(cap * sizeof *w);
  if (!w) {
    free(all);
    return KVB_ERROR(KVB_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < tot;) {
    size_t j = i;
    int lower = 1;
    while (j < tot && isalpha((unsigned char)all[j])) lower &= islower((unsigned char)all[j]) != 0, j++;
    if (j > i && j - i >= 4 && j - i <= 10 && lower) {
      all[j] = '\0';
      w[n++] = all + i;
    }
    i = j > i ? j + 1 : i + 1;
  }
  qsort(w, n, sizeof *w, cmp_str);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (!u || strcmp(w[u - 1], w[i])) w[u++] = w[i];
  *words = w, *nw = u, *pool = all;
  return KVB_OK;
}

static void shuffle(kvb_pcg32 *g, const char **a, size_t n) {
  for (size_t i = n; i > 1; i--) {
    size_t j = draw(g, i);
    const char *x = a[i - 1];
    a[i - 1] = a[j], a[j] = x;
  }
}

/* The words of the list in order: common words ×fc, the others ×fu, shuffled; fills
 * budget tokens with items " word,". */
static int build_cwe(const kvb_lm *lm, kvb_pcg32 *g, kvb_task *t, tbuf *ctx,
                     char *question, char *cue, size_t qcap) {
  char **words = NULL, *pool = NULL;
  size_t nw = 0;
  int st = text_words(&words, &nw, &pool);
  if (st) return st;
  snprintf(question, qcap, "\n\nQuestion: Which ten words occur most often in the list above?");
  snprintf(cue, qcap, "\nAnswer: The ten words that occur most often in the list are");
  size_t fixed = n_bos(lm) + ntok(lm, CWE_INTRO, &st) + ntok(lm, question, &st) + ntok(lm, cue, &st);
  size_t budget = fixed + t->max_new + 64 <= t->length ? t->length - t->max_new - fixed : 0;
  /* a random order of the vocabulary: the first ten are the common words */
  const char **ord = malloc(nw * sizeof *ord), **list = NULL;
  size_t *tk = malloc(nw * sizeof *tk), nl = 0;
  if (!ord || !tk) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st && !budget) st = KVB_ERROR(KVB_EINVAL, "task cwe: length %zu is too short", t->length);
  for (size_t i = 0; i < nw && !st; i++) ord[i] = words[i];
  if (!st) shuffle(g, ord, nw);
  char item[32];
  for (size_t i = 0; i < nw && !st; i++) {
    snprintf(item, sizeof item, " %s,", ord[i]);
    tk[i] = ntok(lm, item, &st);
  }
  /* the common words take about a quarter of the list, at least 3 times each; the others once
   * each if the vocabulary is large enough, else as few times as fill the rest, always fewer
   * than the common words */
  size_t ct = 0, rest = 0;
  for (size_t i = 0; i < 10 && !st; i++) ct += tk[i];
  for (size_t i = 10; i < nw && !st; i++) rest += tk[i];
  size_t fc = st ? 0 : (size_t)(0.25 * (double)budget / (double)ct);
  if (fc < 3) fc = 3;
  size_t left = budget > fc * ct ? budget - fc * ct : 0, fu = 1;
  while (!st && fu * rest < left) fu++;
  if (!st && fu + 2 > fc) fc = fu + 2;
  if (!st && fc * ct > budget) st = KVB_ERROR(KVB_EINVAL, "task cwe: length %zu is too short", t->length);
  if (!st) {
    left = budget - fc * ct;
    list = malloc((budget + 1) * sizeof *list);
    if (!list) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < 10 && !st; i++)
    for (size_t r = 0; r < fc; r++) list[nl++] = ord[i];
  for (size_t i = 10; i < nw && !st && tk[i] * fu <= left; i++) {
    for (size_t r = 0; r < fu; r++) list[nl++] = ord[i];
    left -= tk[i] * fu;
  }
  if (!st) shuffle(g, list, nl);
  if (!st) st = tb_text(lm, ctx, CWE_INTRO);
  t->haystack_begin = ctx->n;
  for (size_t i = 0; i < nl && !st; i++) {
    snprintf(item, sizeof item, " %s,", list[i]);
    st = tb_text(lm, ctx, item);
  }
  t->haystack_end = ctx->n;
  t->n_expected = 10;
  for (size_t i = 0; i < 10 && !st; i++) snprintf(t->expected[i], sizeof t->expected[i], "%.31s", ord[i]);
  char ans[512];
  if (!st) {
    join_answer(t, ans, sizeof ans);
    if (!(t->answer = malloc(strlen(ans) + 1))) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
    else strcpy(t->answer, ans);
  }
  free(ord), free(tk), free(list), free(words), free(pool);
  return st;
}

/* ---- fwe: made-up words, count of rank r = max(1, ⌊C / r²⌋) ---- */
#define FWE_V 60

static int build_fwe(const kvb_lm *lm, kvb_pcg32 *g, kvb_task *t, tbuf *ctx,
                     char *question, char *cue, size_t qcap) {
  static const char C[] = "bdfgklmnprstvz", V[] = "aeiou";
  char w[FWE_V][8];
  for (size_t i = 0; i < FWE_V; i++) {
    for (int again = 1; again;) {
      for (int c = 0; c < 5; c++) w[i][c] = c % 2 ? V[draw(g, 5)] : C[draw(g, 14)];
      w[i][5] = '\0';
      again = 0;
      for (size_t j = 0; j < i; j++) again |= !strcmp(w[i], w[j]);
    }
  }
  snprintf(question, qcap, "\n\nQuestion: Which three words occur most often in the text above?");
  snprintf(cue, qcap, "\nAnswer: The three words that occur most often in the text are");
  int st = KVB_OK;
  size_t fixed = n_bos(lm) + ntok(lm, FWE_INTRO, &st) + ntok(lm, question, &st) + ntok(lm, cue, &st);
  size_t tk[FWE_V], cnt[FWE_V];
  char item[16];
  for (size_t i = 0; i < FWE_V && !st; i++) {
    snprintf(item, sizeof item, " %s", w[i]);
    tk[i] = ntok(lm, item, &st);
  }
  if (st) return st;
  if (fixed + t->max_new + 64 > t->length)
    return KVB_ERROR(KVB_EINVAL, "task fwe: length %zu is too short", t->length);
  size_t budget = t->length - t->max_new - fixed, lo = 16, hi = 1u << 20;
  /* the largest C whose list fits (tokens grow with C) */
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2, tot = 0;
    for (size_t r = 0; r < FWE_V; r++) {
      size_t c = mid / ((r + 1) * (r + 1));
      tot += (c ? c : 1) * tk[r];
    }
    if (tot <= budget) lo = mid;
    else hi = mid - 1;
  }
  size_t nl = 0;
  for (size_t r = 0; r < FWE_V; r++) {
    cnt[r] = lo / ((r + 1) * (r + 1));
    if (!cnt[r]) cnt[r] = 1;
    nl += cnt[r];
  }
  const char **list = malloc(nl * sizeof *list);
  if (!list) return KVB_ERROR(KVB_ENOMEM, "out of memory");
  size_t k = 0;
  for (size_t r = 0; r < FWE_V; r++)
    for (size_t c = 0; c < cnt[r]; c++) list[k++] = w[r];
  shuffle(g, list, nl);
  st = tb_text(lm, ctx, FWE_INTRO);
  t->haystack_begin = ctx->n;
  for (size_t i = 0; i < nl && !st; i++) {
    snprintf(item, sizeof item, " %s", list[i]);
    st = tb_text(lm, ctx, item);
  }
  t->haystack_end = ctx->n;
  free(list);
  t->n_expected = 3;
  for (size_t i = 0; i < 3; i++) snprintf(t->expected[i], sizeof t->expected[i], "%.31s", w[i]);
  char ans[128];
  join_answer(t, ans, sizeof ans);
  if (!st && !(t->answer = malloc(strlen(ans) + 1))) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) strcpy(t->answer, ans);
  return st;
}

int kvb_task_make(const kvb_lm *lm, kvb_task_family family, size_t length, double depth,
                  uint64_t seed, kvb_task *out) {
  if (!lm || !out) return KVB_ERROR(KVB_ENULL, "kvb_task_make: NULL argument");
  memset(out, 0, sizeof *out);
  if (lm->n_ctx <= 0) return KVB_ERROR(KVB_ENULL, "kvb_task_make: no model");
  size_t n_ctx = (size_t)lm->n_ctx;
  if ((unsigned)family >= KVB_TASK_N_FAMILIES)
    return KVB_ERROR(KVB_EINVAL, "unknown task family %d (0..%d)", (int)family, KVB_TASK_N_FAMILIES - 1);
  if (!(depth >= 0 && depth <= 1))
    return KVB_ERROR(KVB_EINVAL, "task depth %g: it must lie in [0, 1]", depth);
  if (length < KVB_TASK_MIN_LENGTH || length > n_ctx)
    return KVB_ERROR(KVB_EINVAL, "task length %zu tokens: it must lie in [%d, %zu] (the model's "
                     "context)", length, KVB_TASK_MIN_LENGTH, n_ctx);
  kvb_task *t = out;
  t->family = family, t->length = length, t->depth = depth, t->seed = seed;
  t->max_new = MAX_NEW[family], t->needle_at = (size_t)-1, t->needle_end = (size_t)-1, t->text = "";
  kvb_pcg32 g;
  kvb_pcg32_seed(&g, seed, 0x7a5c0000u + (uint64_t)family);
  tbuf ctx = {0}, q = {0}, cu = {0}, an = {0};
  char question[512], cue[512];
  int st = KVB_OK;
  /* a model that takes a BOS sees it first, before the instruction (the builders count it) */
  int32_t bos = kvb_lm_bos(lm);
  if (bos >= 0) st = tb_put(&ctx, &bos, 1);
  if (!st && family == KVB_TASK_CWE) st = build_cwe(lm, &g, t, &ctx, question, cue, sizeof question);
  else if (!st && family == KVB_TASK_FWE) st = build_fwe(lm, &g, t, &ctx, question, cue, sizeof question);
  else if (!st) st = build_haystack_task(lm, &g, t, &ctx, question, cue, sizeof question);
  if (!st) st = tb_text(lm, &q, question);
  if (!st) st = tb_text(lm, &cu, cue);
  if (!st) st = tb_text(lm, &an, t->answer);
  if (!st && an.n > t->max_new)
    st = KVB_ERROR(KVB_EINVAL, "task %s: the answer has %zu tokens, more than the %zu generated",
                   FAMILY[family], an.n, t->max_new);
  if (st) {
    free(ctx.v), free(q.v), free(cu.v), free(an.v), free(t->answer);
    memset(out, 0, sizeof *out);
    return st;
  }
  t->context = ctx.v, t->n_context = ctx.n;
  t->question = q.v, t->n_question = q.n;
  t->cue = cu.v, t->n_cue = cu.n;
  t->answer_ids = an.v, t->n_answer = an.n;
  return KVB_OK;
}

void kvb_task_free(kvb_task *t) {
  if (!t) return;
  free(t->context), free(t->question), free(t->cue), free(t->answer_ids), free(t->answer);
  memset(t, 0, sizeof *t);
}

double kvb_task_score(const kvb_task *t, const char *text, int *all) {
  size_t found = 0, tl = text ? strlen(text) : 0;
  for (size_t e = 0; t && text && e < t->n_expected; e++) {
    const char *w = t->expected[e];
    size_t wl = strlen(w);
    int hit = 0;
    for (size_t i = 0; !hit && wl && i + wl <= tl; i++) {
      if (strncasecmp(text + i, w, wl)) continue;
      /* a whole word or number: no letter or digit right before or after */
      int before = i > 0 && isalnum((unsigned char)text[i - 1]);
      int after = i + wl < tl && isalnum((unsigned char)text[i + wl]);
      hit = !before && !after;
    }
    found += hit;
  }
  if (all) *all = t && found == t->n_expected;
  return t && t->n_expected ? (double)found / (double)t->n_expected : 0;
}

/* test_tasks.c — the long-context task generator (src/model/tasks.h, haystack.h): family names;
 * every family at 1024 tokens and at the model's context (llama.context_length from the GGUF
 * file): the length within KVB_TASK_TOLERANCE below the target, the answer within the generation
 * budget, the same seed giving the same tokens and another seed other tokens; the needle at its
 * depth (within a sentence), and at the earlier of two equally near boundaries (a hand-worked tie
 * on the recovered sentence boundaries); the single needle's answer exactly once in the context; the planted
 * frequencies of cwe and fwe; vt's chain in order; the string-match score; bad arguments
 * refused with a clear message; a changed or missing haystack text refused (through
 * $KVB_COMMON_LICENSES). Needs the model file for its tokenizer (SKIP without it). */
#include "cli_harness.h"
#include "gguf.h"
#include "haystack.h"
#include "kvb_error.h"
#include "lm.h"
#include "model.h"
#include "tasks.h"
#include "task_compare.h"

#include <ctype.h>
#include <math.h>

static kvb_lm LM; /* SmolLM2-135M (lm.h) */
static size_t NCTX;


static char *decode(const int32_t *ids, size_t n) {
  char *s = NULL;
  size_t l = 0;
  if (kvb_lm_decode(&LM, ids, n, &s, &l)) return NULL;
  return s;
}

/* occurrences of w in s as a whole word/number */
static size_t count_word(const char *s, const char *w) {
  size_t n = 0, wl = strlen(w);
  for (const char *p = s; (p = strstr(p, w)); p += wl) {
    int before = p > s && (isalnum((unsigned char)p[-1]));
    int after = isalnum((unsigned char)p[wl]);
    n += !before && !after;
  }
  return n;
}

static void test_families(void) {
  kvb_task_family f;
  int ok = 1;
  for (int i = 0; i < KVB_TASK_N_FAMILIES; i++)
    ok &= !kvb_task_family_lookup(kvb_task_family_name((kvb_task_family)i), &f) && (int)f == i;
  CHECK(ok, "tasks.family_names", "a family name does not round-trip");
  int st = kvb_task_family_lookup("niah_double", &f);
  CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "niah_double") &&
            strstr(kvb_strerror_last(), "niah_single"),
        "tasks.unknown_family_refused", "status %d: %s", st, kvb_strerror_last());
}

static void test_every_family(void) {
  size_t lens[2] = {1024, NCTX};
  for (int L = 0; L < 2; L++)
    for (int i = 0; i < KVB_TASK_N_FAMILIES; i++) {
      kvb_task a, b, c;
      char name[96];
      int sa = kvb_task_make(&LM, (kvb_task_family)i, lens[L], 0.5, 11, &a);
      snprintf(name, sizeof name, "tasks.make.%s.%zu", kvb_task_family_name((kvb_task_family)i), lens[L]);
      CHECK(!sa, name, "%s", kvb_strerror_last());
      if (sa) continue;
      size_t tot = total_of(&a);
      snprintf(name, sizeof name, "tasks.length.%s.%zu", kvb_task_family_name((kvb_task_family)i), lens[L]);
      CHECK(tot <= lens[L] && tot + KVB_TASK_TOLERANCE >= lens[L] && a.n_answer <= a.max_new &&
                a.n_expected >= 1,
            name, "total %zu tokens for %zu (answer %zu of %zu)", tot, lens[L], a.n_answer, a.max_new);
      int sb = kvb_task_make(&LM, (kvb_task_family)i, lens[L], 0.5, 11, &b);
      int sc = kvb_task_make(&LM, (kvb_task_family)i, lens[L], 0.5, 12, &c);
      snprintf(name, sizeof name, "tasks.deterministic.%s.%zu", kvb_task_family_name((kvb_task_family)i), lens[L]);
      CHECK(!sb && same_task(&a, &b), name, "status %d", sb);
      snprintf(name, sizeof name, "tasks.seeds_differ.%s.%zu", kvb_task_family_name((kvb_task_family)i), lens[L]);
      CHECK(!sc && !same_task(&a, &c), name, "status %d", sc);
      /* every expected string is in the context (the task is answerable) */
      char *ctx = decode(a.context, a.n_context);
      int all = 1;
      for (size_t e = 0; e < a.n_expected && ctx; e++) all &= count_word(ctx, a.expected[e]) >= 1;
      snprintf(name, sizeof name, "tasks.answer_in_context.%s.%zu", kvb_task_family_name((kvb_task_family)i), lens[L]);
      CHECK(ctx && all, name, "an expected string is not in the context");
      free(ctx);
      kvb_task_free(&a), kvb_task_free(&b), kvb_task_free(&c);
    }
}

/* the length over seeds and lengths (the haystack's cut depends on where the seed starts it) */
static void test_lengths(void) {
  static const size_t L[] = {1024, 1500, 3000, 5555, 8192};
  int bad = 0;
  size_t worst = 0;
  for (int f = 0; f < KVB_TASK_N_FAMILIES; f++)
    for (size_t i = 0; i < sizeof L / sizeof *L; i++)
      for (uint64_t s = 1; s <= 4; s++) {
        kvb_task t;
        size_t len = L[i] > NCTX ? NCTX : L[i];
        if (kvb_task_make(&LM, (kvb_task_family)f, len, 0.37, s * 7919, &t)) {
          bad++;
          continue;
        }
        size_t tot = total_of(&t), sh = len - (tot < len ? tot : len);
        if (sh > worst) worst = sh;
        bad += tot > len || sh > KVB_TASK_TOLERANCE;
        kvb_task_free(&t);
      }
  CHECK(bad == 0, "tasks.length_within_tolerance", "%d of %d tasks outside [length - %d, length] "
        "(largest shortfall %zu)", bad, KVB_TASK_N_FAMILIES * 20, KVB_TASK_TOLERANCE, worst);
}

static void test_depth(void) {
  static const double D[] = {0, 0.1, 0.25, 0.5, 0.75, 0.9, 1};
  int bad = 0;
  double worst = 0;
  for (size_t i = 0; i < sizeof D / sizeof *D; i++)
    for (uint64_t s = 1; s <= 3; s++) {
      kvb_task t;
      if (kvb_task_make(&LM, KVB_TASK_NIAH_SINGLE, 2048, D[i], s, &t)) {
        bad++;
        continue;
      }
      /* the haystack holds the needle: its own share is the haystack without the needle */
      double hay = (double)(t.haystack_end - t.haystack_begin);
      double at = (double)(t.needle_at - t.haystack_begin), off = fabs(at - D[i] * hay);
      if (off > worst) worst = off;
      bad += off > KVB_TASK_TOLERANCE;
      kvb_task_free(&t);
    }
  CHECK(bad == 0, "tasks.depth_placement", "%d placements off by more than a sentence (worst %.0f tokens)",
        bad, worst);
  /* the end points: the needle first, the needle last */
  kvb_task a, b;
  int sa = kvb_task_make(&LM, KVB_TASK_NIAH_SINGLE, 1024, 0, 5, &a);
  int sb = kvb_task_make(&LM, KVB_TASK_NIAH_SINGLE, 1024, 1, 5, &b);
  CHECK(!sa && !sb && a.needle_at == a.haystack_begin && b.needle_at + 20 >= b.haystack_end &&
            b.needle_at < b.haystack_end,
        "tasks.depth_ends", "depth 0 at %zu (haystack from %zu), depth 1 at %zu (to %zu)",
        a.needle_at, a.haystack_begin, b.needle_at, b.haystack_end);
  kvb_task_free(&a), kvb_task_free(&b);
}

/* The tie rule (tasks.h: of two boundaries equally near depth · haystack, the earlier), on a
 * hand-worked haystack: the task at depth 1 puts the needle after the whole haystack, so the
 * tokens before it are the cut sentences alone; they are matched sentence by sentence against
 * the text (haystack.h) to recover every boundary, a depth is chosen whose target lies exactly
 * halfway between two consecutive boundaries (checked in double, as tasks.c computes it), and
 * the task made at that depth (the same seed draws the same haystack: niah_single's draws do
 * not depend on depth) must put the needle at the earlier one. */
static void test_depth_tie(void) {
  kvb_task a, c;
  const uint64_t seed = 5;
  int st = kvb_task_make(&LM, KVB_TASK_NIAH_SINGLE, 1024, 1, seed, &a);
  if (st) {
    CHECK(0, "tasks.depth_tie_earlier", "depth 1: %s", kvb_strerror_last());
    return;
  }
  const int32_t *hay = a.context + a.haystack_begin;
  size_t total = a.needle_at - a.haystack_begin, ti = kvb_haystack_n_texts;
  for (size_t i = 0; i < kvb_haystack_n_texts; i++)
    if (!strcmp(kvb_haystack_texts[i].name, a.text)) ti = i;
  kvb_haystack h;
  st = ti < kvb_haystack_n_texts ? kvb_haystack_load(&LM, ti, &h) : KVB_ENOTFOUND;
  size_t *bnd = malloc((total + 1) * sizeof *bnd), m = 0;
  int found = 0;
  for (size_t s0 = 0; !st && bnd && !found && s0 < h.n_sent; s0++) {
    size_t pos = 0, s = s0;
    m = 0;
    bnd[0] = 0;
    while (pos < total) {
      size_t len = h.off[s + 1] - h.off[s];
      if (len == 0 || pos + len > total ||
          memcmp(hay + pos, h.ids + h.off[s], len * sizeof *hay))
        break;
      pos += len, bnd[++m] = pos, s = (s + 1) % h.n_sent;
    }
    found = pos == total && m >= 4;
  }
  /* a boundary pair near the middle whose midpoint depth·total reproduces exactly */
  size_t b = m, want_at = 0, later = 0;
  double depth = 0;
  for (size_t j = m / 2; found && j + 1 <= m && b == m; j++) {
    depth = 0.5 * (double)(bnd[j] + bnd[j + 1]) / (double)total;
    double want = depth * (double)total;
    if (fabs((double)bnd[j] - want) == fabs((double)bnd[j + 1] - want)) b = j;
  }
  if (b < m) want_at = bnd[b], later = bnd[b + 1];
  printf("  tie: %s, %zu sentences, %zu tokens; depth %.17g is halfway between boundaries %zu and "
         "%zu\n", a.text, m, total, depth, want_at, later);
  int sc = b < m ? kvb_task_make(&LM, KVB_TASK_NIAH_SINGLE, 1024, depth, seed, &c) : KVB_EINVAL;
  CHECK(!st && found && b < m && !sc && c.haystack_end - c.haystack_begin == a.haystack_end - a.haystack_begin &&
            c.needle_at - c.haystack_begin == want_at,
        "tasks.depth_tie_earlier",
        "status %d/%d, %s matched %d (%zu sentences, %zu tokens); depth %.17g halfway between "
        "boundaries %zu and %zu: needle at %zu (want the earlier, %zu)", st, sc, a.text, found, m,
        total, depth, want_at, later, sc ? (size_t)-1 : c.needle_at - c.haystack_begin, want_at);
  if (!sc) kvb_task_free(&c);
  if (!st) kvb_haystack_free(&h);
  free(bnd);
  kvb_task_free(&a);
}

static void test_content(void) {
  /* single needle: the answer exactly once in the context, over seeds and both ends of the range */
  int bad = 0;
  for (uint64_t s = 1; s <= 10; s++) {
    kvb_task t;
    if (kvb_task_make(&LM, KVB_TASK_NIAH_SINGLE, s % 2 ? 1024 : NCTX, 0.1 * (double)s - 0.05, s, &t)) {
      bad++;
      continue;
    }
    char *c = decode(t.context, t.n_context);
    bad += !c || count_word(c, t.expected[0]) != 1 || strlen(t.expected[0]) != 7;
    free(c);
    kvb_task_free(&t);
  }
  CHECK(bad == 0, "tasks.single_needle_once", "%d of 10 tasks without exactly one 7-digit answer", bad);
  /* multikey: four keys, the target's number once; multivalue: four numbers once each */
  kvb_task t;
  int st = kvb_task_make(&LM, KVB_TASK_NIAH_MULTIKEY, 2048, 0.3, 3, &t);
  char *c = st ? NULL : decode(t.context, t.n_context);
  size_t needles = 0;
  for (const char *p = c; p && (p = strstr(p, "The secret number of ")); p++) needles++;
  CHECK(c && needles == 4 && count_word(c, t.expected[0]) == 1, "tasks.multikey_distractors",
        "%zu needle sentences", needles);
  free(c), kvb_task_free(&t);
  st = kvb_task_make(&LM, KVB_TASK_NIAH_MULTIVALUE, 2048, 0.3, 3, &t);
  c = st ? NULL : decode(t.context, t.n_context);
  int once = c != NULL;
  for (size_t e = 0; c && e < 4; e++) once &= count_word(c, t.expected[e]) == 1;
  CHECK(once && t.n_expected == 4, "tasks.multivalue_values", "status %d", st);
  free(c), kvb_task_free(&t);
  /* vt: the chain's assignments in order, the value set once */
  st = kvb_task_make(&LM, KVB_TASK_VT, 2048, 0.2, 4, &t);
  c = st ? NULL : decode(t.context, t.n_context);
  int order = c != NULL;
  const char *prev = c;
  for (size_t e = 1; c && e < 5; e++) {
    char a[64];
    snprintf(a, sizeof a, "Set %s to %s.", t.expected[e], t.expected[e - 1]);
    const char *p = strstr(c, a);
    order &= p != NULL && p > prev;
    if (p) prev = p;
  }
  CHECK(order && t.n_expected == 5, "tasks.vt_chain_in_order", "status %d", st);
  free(c), kvb_task_free(&t);
  /* cwe: each of the ten common words more often than any other word (items " word,") */
  st = kvb_task_make(&LM, KVB_TASK_CWE, 2048, 0.5, 6, &t);
  c = st ? NULL : decode(t.context + t.haystack_begin, t.haystack_end - t.haystack_begin);
  static char words[4096][24];
  static size_t counts[4096];
  size_t nw = 0, items = 0;
  for (char *p = c ? strtok(c, " ,") : NULL; p; p = strtok(NULL, " ,")) {
    size_t k = 0;
    while (k < nw && strcmp(words[k], p)) k++;
    if (k == nw && nw < 4096) snprintf(words[nw], sizeof words[nw], "%s", p), counts[nw++] = 0;
    if (k < 4096) counts[k]++;
    items++;
  }
  size_t minc = (size_t)-1, maxo = 0;
  for (size_t k = 0; k < nw; k++) {
    int common = 0;
    for (size_t e = 0; e < 10; e++) common |= !strcmp(words[k], t.expected[e]);
    if (common && counts[k] < minc) minc = counts[k];
    if (!common && counts[k] > maxo) maxo = counts[k];
  }
  CHECK(c && items > 100 && minc != (size_t)-1 && minc > maxo && maxo >= 1, "tasks.cwe_frequencies",
        "%zu items; common words at least %zu times, another word %zu times", items, minc, maxo);
  free(c), kvb_task_free(&t);
  /* fwe: the three expected words are the three most frequent, in order */
  st = kvb_task_make(&LM, KVB_TASK_FWE, 2048, 0.5, 6, &t);
  c = st ? NULL : decode(t.context + t.haystack_begin, t.haystack_end - t.haystack_begin);
  size_t n3[3] = {0, 0, 0}, best_other = 0;
  for (size_t e = 0; c && e < 3; e++) n3[e] = count_word(c, t.expected[e]);
  for (const char *p = c; p && *p;) {
    while (*p == ' ') p++;
    const char *q = p;
    while (*q && *q != ' ') q++;
    if (q == p) break;
    char w[16];
    size_t l = (size_t)(q - p) < 15 ? (size_t)(q - p) : 15;
    memcpy(w, p, l), w[l] = '\0';
    if (strcmp(w, t.expected[0]) && strcmp(w, t.expected[1]) && strcmp(w, t.expected[2])) {
      size_t n = count_word(c, w);
      if (n > best_other) best_other = n;
    }
    p = q;
  }
  CHECK(c && n3[0] > n3[1] && n3[1] > n3[2] && n3[2] > best_other, "tasks.fwe_frequencies",
        "counts %zu %zu %zu, next %zu", n3[0], n3[1], n3[2], best_other);
  free(c), kvb_task_free(&t);
}

static void test_score(void) {
  kvb_task t;
  memset(&t, 0, sizeof t);
  t.n_expected = 2;
  strcpy(t.expected[0], "1234567");
  strcpy(t.expected[1], "walrus");
  int all = 0;
  double s = kvb_task_score(&t, " 1234567 and the WALRUS.", &all);
  CHECK(s == 1 && all, "tasks.score_both", "%g", s);
  s = kvb_task_score(&t, " 12345678, walruses", &all);
  CHECK(s == 0 && !all, "tasks.score_whole_words", "%g", s);
  s = kvb_task_score(&t, "1234567", &all);
  CHECK(s == 0.5 && !all, "tasks.score_half", "%g", s);
}

static void test_bad_input(void) {
  kvb_task t;
  static const struct {
    int fam;
    size_t len;
    double depth;
    const char *msg, *name;
  } bad[] = {
      {0, 2048, -0.01, "[0, 1]", "tasks.depth_below_refused"},
      {0, 2048, 1.01, "[0, 1]", "tasks.depth_above_refused"},
      {0, 2048, NAN, "[0, 1]", "tasks.depth_nan_refused"},
      {0, 1023, 0.5, "1024", "tasks.length_short_refused"},
      {0, 0, 0.5, "1024", "tasks.length_zero_refused"},
      {0, (size_t)-1, 0.5, "context", "tasks.length_long_refused"},
      {KVB_TASK_N_FAMILIES, 2048, 0.5, "unknown task family", "tasks.family_refused"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    size_t len = bad[i].len == (size_t)-1 ? NCTX + 1 : bad[i].len;
    int st = kvb_task_make(&LM, (kvb_task_family)bad[i].fam, len, bad[i].depth, 1, &t);
    CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), bad[i].msg) && !t.context,
          bad[i].name, "status %d: %s", st, kvb_strerror_last());
  }
}

static void test_hash(void) {
  char cmd[1024], out[512];
  snprintf(cmd, sizeof cmd, "cp /usr/share/common-licenses/{GPL-2,GPL-3,LGPL-2.1,Apache-2.0,MPL-2.0,GFDL-1.3,Artistic} %s/ 2>&1 || "
           "for f in GPL-2 GPL-3 LGPL-2.1 Apache-2.0 MPL-2.0 GFDL-1.3 Artistic; do cp /usr/share/common-licenses/$f %s/; done", tmp, tmp);
  sh(cmd, out, sizeof out);
  setenv("KVB_COMMON_LICENSES", tmp, 1);
  kvb_haystack h;
  int st = kvb_haystack_load(&LM, 0, &h);
  CHECK(!st && h.n_sent > 50 && h.off[h.n_sent] > 3000, "tasks.haystack_copy_accepted", "status %d: %s",
        st, st ? kvb_strerror_last() : "");
  if (!st) kvb_haystack_free(&h);
  /* one changed byte in every text: any task with a haystack, and cwe (all texts), refused */
  for (size_t i = 0; i < kvb_haystack_n_texts; i++) {
    snprintf(cmd, sizeof cmd, "sed -i 's/the /the  /' %s/%s", tmp, kvb_haystack_texts[i].name);
    sh(cmd, out, sizeof out);
  }
  st = kvb_haystack_load(&LM, 0, &h);
  CHECK(st == KVB_EFORMAT && strstr(kvb_strerror_last(), "GPL-2") &&
            strstr(kvb_strerror_last(), kvb_haystack_texts[0].sha256) && !h.ids,
        "tasks.haystack_changed_refused", "status %d: %s", st, kvb_strerror_last());
  kvb_task t;
  st = kvb_task_make(&LM, KVB_TASK_NIAH_SINGLE, 1024, 0.5, 1, &t);
  int st2 = kvb_task_make(&LM, KVB_TASK_CWE, 1024, 0.5, 1, &t);
  CHECK(st == KVB_EFORMAT && st2 == KVB_EFORMAT && strstr(kvb_strerror_last(), "SHA-256"),
        "tasks.task_on_changed_text_refused", "status %d, %d: %s", st, st2, kvb_strerror_last());
  snprintf(cmd, sizeof cmd, "rm -f %s/GPL-2", tmp);
  sh(cmd, out, sizeof out);
  st = kvb_haystack_load(&LM, 0, &h);
  CHECK(st == KVB_ENOTFOUND && strstr(kvb_strerror_last(), "base-files"), "tasks.haystack_missing_refused",
        "status %d: %s", st, kvb_strerror_last());
  unsetenv("KVB_COMMON_LICENSES");
}

int main(int argc, char **argv) {
  (void)argc;
  (void)read_file, (void)write_file;
  if (cli_harness_init(argv[0], "/tmp/kvb-tasks-XXXXXX", "test_tasks")) return 1;
  test_families();
  test_score();
  char path[4096];
  kvb_gguf g;
  if (kvb_model_available() != KVB_OK || access("/usr/share/common-licenses/GPL-2", R_OK) != 0) {
    printf("SKIP tasks.tokenized: %s\n", kvb_model_available() ? kvb_strerror_last() : "no GPL-2");
  } else if (kvb_model_default_path(path, sizeof path) || kvb_gguf_read(path, &g)) {
    CHECK(0, "tasks.model_read", "%s", kvb_strerror_last());
  } else {
    uint64_t nctx = 0;
    int st = kvb_gguf_get_uint(&g, "llama.context_length", &nctx);
    kvb_gguf_free(&g);
    if (!st) st = kvb_lm_load(KVB_LM_SMOLLM2, NULL, &LM);
    CHECK(!st && nctx == 8192, "tasks.context_length", "status %d, %llu", st, (unsigned long long)nctx);
    NCTX = (size_t)nctx;
    if (!st) {
      test_bad_input();
      test_every_family();
      test_lengths();
      test_depth();
      test_depth_tie();
      test_content();
      test_hash();
      kvb_lm_free(&LM);
    }
  }
  char cmd[128], out[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  sh(cmd, out, sizeof out);
  UNIT_EXIT();
}

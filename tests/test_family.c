/* test_family.c — the papers' empirical family (props/family.h) on hand-worked cases: Holm's
 * step-down adjusted p-values (ties, the cap at 1, the step-down stop), the members' records in
 * the notes and their round trip through a shard record (prop_shard.h), the decisions and the
 * rows' verdicts they give, and the report's findings opening (props/findings.h).
 * Three wrong procedures — Bonferroni, Hochberg's step-up, Holm without the running maximum —
 * are run through the same hand-worked cases and must each disagree with at least one. */
#include "family.h"
#include "findings.h"
#include "prop_shard.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*adjust_fn)(const double *p, size_t m, double *adj);

/* ---- the mutants: procedures a reviewer might write instead of Holm's ---- */
static void bonferroni(const double *p, size_t m, double *adj) {
  for (size_t i = 0; i < m; i++) adj[i] = fmin(1, (double)m * (isnan(p[i]) ? 1 : p[i]));
}
static size_t *order_of(const double *p, size_t m) { /* ascending, ties in index order */
  size_t *o = malloc(m * sizeof *o);
  for (size_t i = 0; i < m; i++) o[i] = i;
  for (size_t i = 1; i < m; i++)
    for (size_t j = i; j > 0 && p[o[j]] < p[o[j - 1]]; j--) {
      size_t t = o[j];
      o[j] = o[j - 1], o[j - 1] = t;
    }
  return o;
}
static void hochberg(const double *p, size_t m, double *adj) { /* step-up: min from the top */
  size_t *o = order_of(p, m);
  double run = 1;
  for (size_t k = m; k-- > 0;) {
    double a = fmin(1, (double)(m - k) * p[o[k]]);
    if (a < run) run = a;
    adj[o[k]] = run;
  }
  free(o);
}
static void holm_no_max(const double *p, size_t m, double *adj) { /* no step-down stop */
  size_t *o = order_of(p, m);
  for (size_t k = 0; k < m; k++) adj[o[k]] = fmin(1, (double)(m - k) * p[o[k]]);
  free(o);
}

/* ---- hand-worked cases (computed by hand in the comments) ---- */
typedef struct {
  const char *what;
  size_t m;
  double p[5], adj[5];
} holm_case;

static const holm_case CASES[] = {
    /* sorted 0.005, 0.01, 0.03, 0.04: 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06,
     * max(0.06, 1·0.04) = 0.06. At 0.05 the step-down rejects two and STOPS at 0.03, so 0.04
     * is not rejected although 0.04 <= 0.05/1 (Hochberg's step-up would reject all four). */
    {"step-down stop", 4, {0.01, 0.04, 0.03, 0.005}, {0.03, 0.06, 0.06, 0.02}},
    /* 3·0.01 = 0.03, 2·0.02 = 0.04, 1·0.03 = 0.03 → running max 0.04: all three rejected at
     * 0.05 (Bonferroni's 3·p = 0.03, 0.06, 0.09 rejects one) */
    {"Holm beats Bonferroni", 3, {0.01, 0.02, 0.03}, {0.03, 0.04, 0.04}},
    /* ties: 3·0.02 = 0.06 for the first, max(0.06, 2·0.02) = 0.06 for its twin, then 0.5 */
    {"ties", 3, {0.02, 0.5, 0.02}, {0.06, 0.5, 0.06}},
    {"four ties", 4, {0.01, 0.01, 0.01, 0.01}, {0.04, 0.04, 0.04, 0.04}},
    /* the cap: 2·0.6 = 1.2 → 1, max(1, 0.7) = 1 */
    {"cap at 1", 2, {0.6, 0.7}, {1, 1}},
    {"one member", 1, {0.037}, {0.037}},
    /* a not-run member (p = 1) still counts in m: 5·0.009 = 0.045, 4·0.02 = 0.08, … */
    {"p = 1 counts in m", 5, {0.009, 1, 1, 0.02, 1}, {0.045, 1, 1, 0.08, 1}},
};
#define NCASES (sizeof CASES / sizeof *CASES)

/* The hand-worked cases fn gets wrong (adjusted p off by more than 1e-12). */
static int wrong_cases(adjust_fn fn, char *first, size_t cap) {
  int bad = 0;
  first[0] = 0;
  for (size_t c = 0; c < NCASES; c++) {
    double adj[5];
    fn(CASES[c].p, CASES[c].m, adj);
    for (size_t i = 0; i < CASES[c].m; i++)
      if (fabs(adj[i] - CASES[c].adj[i]) > 1e-12) {
        if (!bad)
          snprintf(first, cap, "%s: member %zu adjusted %.6g, hand-worked %.6g", CASES[c].what,
                   i, adj[i], CASES[c].adj[i]);
        bad++;
        break;
      }
  }
  return bad;
}

static void ctx_init(prop_ctx *c, FILE *log) {
  memset(c, 0, sizeof *c);
  c->log = log;
  c->id = "long_context.test";
}

static long find_member(const char *row, const char *cell) {
  for (size_t i = 0; i < prop_family_size(); i++) {
    const char *c, *r = prop_family_member(i, &c);
    if (!strcmp(r, row) && !strcmp(c, cell)) return (long)i;
  }
  return -1;
}

int main(void) {
  FILE *log = fopen("/dev/null", "w");
  char why[512];

  /* ---- Holm on the hand-worked cases; the mutants must each get one wrong ---- */
  int bad = wrong_cases(prop_holm, why, sizeof why);
  CHECK(bad == 0, "family.holm.hand_worked", "%d of %zu cases wrong; first: %s", bad, NCASES, why);
  static const struct { const char *name; adjust_fn fn; } MUT[] = {
      {"bonferroni", bonferroni}, {"hochberg_step_up", hochberg}, {"holm_without_max", holm_no_max}};
  for (size_t k = 0; k < sizeof MUT / sizeof *MUT; k++) {
    char name[96];
    snprintf(name, sizeof name, "family.holm.rejects_mutant.%s", MUT[k].name);
    CHECK(wrong_cases(MUT[k].fn, why, sizeof why) > 0, name,
          "the mutant agrees with every hand-worked case, so they cannot tell it from Holm");
  }
  {
    double p[3] = {NAN, 0.01, 0.02}, adj[3];
    prop_holm(p, 3, adj); /* NaN → 1: 3·0.01 = 0.03, 2·0.02 = 0.04, 1 */
    CHECK(fabs(adj[0] - 1) < 1e-15 && fabs(adj[1] - 0.03) < 1e-15 && fabs(adj[2] - 0.04) < 1e-15,
          "family.holm.nan_is_one", "adj = %g %g %g", adj[0], adj[1], adj[2]);
  }

  /* ---- the table: non-empty, no member twice, every cell MODEL:… of a known model ---- */
  size_t m = prop_family_size();
  int dup = 0, badcell = 0;
  for (size_t i = 0; i < m; i++) {
    const char *ci, *ri = prop_family_member(i, &ci);
    if (strncmp(ci, "smollm2:", 8) && strncmp(ci, "gemma3:", 7)) badcell++;
    if (!strchr(ci, '>') && !strchr(ci, '~')) badcell++;
    for (size_t j = 0; j < i; j++) {
      const char *cj, *rj = prop_family_member(j, &cj);
      if (!strcmp(ri, rj) && !strcmp(ci, cj)) dup++;
    }
  }
  const char *cnull;
  CHECK(m >= 7 && !dup && !badcell && !prop_family_member(m, &cnull) && !cnull, "family.table",
        "m = %zu, %d duplicates, %d malformed cells", m, dup, badcell);

  /* ---- records: made by prop_family, carried through a shard record, decided ---- */
  static prop_ctx c;
  ctx_init(&c, log);
  prop_family(&c, "B-FIG4", "smollm2:balancekv_augmented>streamingllm", PROP_FAM_SUPERIORITY,
              1e-6, 1 - 1e-6, 0.95, "task", 40, "mean Δ %+.2f nats, SD %.2f", 1.5, 2.0);
  prop_family(&c, "B-FIG4", "gemma3:balancekv_augmented>streamingllm", PROP_FAM_SUPERIORITY,
              1 - 1e-7, 1e-7, 0.95, "task", 12, "mean Δ %+.2f | with a bar ⟧ and a bracket", -1.0);
  prop_family(&c, "B-FIG4", "smollm2:balancekv_augmented>uniform", PROP_FAM_SUPERIORITY,
              0.3, 0.7, 0.95, "task", 40, "powered, not seen");
  prop_family(&c, "B-FIG4", "smollm2:balancekv_augmented>snapkv", PROP_FAM_SUPERIORITY,
              0.3, 0.7, 0.5, "task", 40, "underpowered");
  prop_family(&c, "B-TAB1.trivia", "smollm2:uniform~balancekv_block",
              PROP_FAM_EQUIVALENCE, 1e-5, 0.9, 0.95, "text", 30, "TOST within ×1.25");
  prop_family(&c, "B-TAB1.trivia", "gemma3:uniform~balancekv_block",
              PROP_FAM_EQUIVALENCE, 0.5, 1e-9, 0.95, "text", 30, "beyond the margin");
  /* ranked 4th and 5th of the p-values (after 2e-7, 2e-6, 1e-5): Holm multiplies them by
   * m − 3 and m − 4, the members that did not run (p = 1) included, so 2·p = 0.99·0.05/(m − 3)
   * is rejected (adjusted 0.0495) and 2·p = 1.01·0.05/(m − 4) is not (0.0505); were the members
   * not run left out of m, both would be */
  double pa = 0.99 * PROP_FAMILY_ALPHA / (double)(m - 3) / 2;
  double pb = 1.01 * PROP_FAMILY_ALPHA / (double)(m - 4) / 2;
  prop_family(&c, "S-CG-TAB3", "smollm2:clustergen>streamingllm", PROP_FAM_SUPERIORITY, pa,
              1 - pa, 0.5, "task", 24, "at the edge");
  prop_family(&c, "S-CG-TAB3", "gemma3:clustergen>streamingllm", PROP_FAM_SUPERIORITY,
              pb, 1 - pb, 0.5, "task", 24, "just past the edge");
  prop_family(&c, "B-TAB6", "gemma3:balancekv_block>clustergen", PROP_FAM_SUPERIORITY, 1, 1, 0,
              "text", 0, "not run in this tier");
  CHECK(c.failures == 0, "family.record.valid", "%d failed checks recording valid members",
        c.failures);
  /* a name not in the table, and a p outside [0, 1]: failed checks, nothing recorded */
  size_t before = strlen(c.notes);
  prop_family(&c, "B-FIG4", "smollm2:balancekv_augmented>sink_recent", PROP_FAM_SUPERIORITY,
              0.1, 0.9, 0.5, "task", 4, "a name the table does not have");
  prop_family(&c, "B-TAB6", "smollm2:balancekv_block>clustergen", PROP_FAM_SUPERIORITY, 1.5,
              0.1, 0.5, "text", 4, "p out of range");
  prop_family(&c, "B-TAB6", "smollm2:balancekv_block>clustergen", PROP_FAM_EQUIVALENCE, 0.1,
              0.9, 0.5, "text", 4, "the kind the table does not have");
  CHECK(c.failures == 3 && strlen(c.notes) == before, "family.record.rejects_bad",
        "%d failures (want 3), notes grew by %zu", c.failures, strlen(c.notes) - before);

  /* the shard record round trip (kvb-props --shard/--merge carry the notes) */
  prop_run_rec rec, back;
  memset(&rec, 0, sizeof rec);
  snprintf(rec.id, sizeof rec.id, "long_context.test");
  snprintf(rec.notes, sizeof rec.notes, "%s", c.notes);
  FILE *t = tmpfile();
  int rt = t && prop_rec_write(t, &rec) == 0 && (rewind(t), prop_rec_read(t, &back) == 1) &&
           strcmp(back.notes, rec.notes) == 0;
  if (t) fclose(t);
  CHECK(rt, "family.record.shard_round_trip", "the notes did not survive a shard record");

  static prop_family_outcome out[256];
  const char *ids[2] = {"long_context.test", "real.proxy.other"};
  const char *notes[2] = {back.notes, "unit = text, N = 1; nothing for the family"};
  int problems = prop_family_collect(ids, notes, 2, out, why, sizeof why);
  CHECK(problems == 0, "family.collect.clean", "%d problems: %s", problems, why);
  struct { const char *row, *cell; prop_family_decision d; } want[] = {
      {"B-FIG4", "smollm2:balancekv_augmented>streamingllm", PROP_FAMD_SUPPORTED},
      {"B-FIG4", "gemma3:balancekv_augmented>streamingllm", PROP_FAMD_CONTRADICTED},
      {"B-FIG4", "smollm2:balancekv_augmented>uniform", PROP_FAMD_NOT_OBSERVED},
      {"B-FIG4", "smollm2:balancekv_augmented>snapkv", PROP_FAMD_INCONCLUSIVE},
      {"B-TAB1.trivia", "smollm2:uniform~balancekv_block", PROP_FAMD_SUPPORTED},
      /* an equivalence member is never CONTRADICTED by the family (its p is the TOST p) */
      {"B-TAB1.trivia", "gemma3:uniform~balancekv_block", PROP_FAMD_NOT_OBSERVED},
      {"S-CG-TAB3", "smollm2:clustergen>streamingllm", PROP_FAMD_SUPPORTED},
      {"S-CG-TAB3", "gemma3:clustergen>streamingllm", PROP_FAMD_INCONCLUSIVE},
      {"B-TAB6", "smollm2:balancekv_block>clustergen", PROP_FAMD_NOT_RUN},
      {"B-TAB6", "gemma3:balancekv_block>clustergen", PROP_FAMD_NOT_RUN}, /* N = 0 */
  };
  int wrong = 0;
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    long i = find_member(want[k].row, want[k].cell);
    if (i < 0 || out[i].d != want[k].d) {
      if (!wrong)
        snprintf(why, sizeof why, "(%s, %s): %s, want %s (p %.3g, Holm %.3g)", want[k].row,
                 want[k].cell, i < 0 ? "absent" : prop_family_decision_name(out[i].d),
                 prop_family_decision_name(want[k].d), i < 0 ? NAN : out[i].p,
                 i < 0 ? NAN : out[i].p_holm);
      wrong++;
    }
  }
  CHECK(wrong == 0, "family.collect.decisions", "%d wrong; first %s", wrong, why);
  long i0 = find_member("B-FIG4", "smollm2:balancekv_augmented>streamingllm");
  long i1 = find_member("B-FIG4", "gemma3:balancekv_augmented>streamingllm");
  long i6 = find_member("S-CG-TAB3", "smollm2:clustergen>streamingllm");
  long i7 = find_member("S-CG-TAB3", "gemma3:clustergen>streamingllm");
  long i8 = find_member("B-TAB6", "gemma3:balancekv_block>clustergen");
  CHECK(i8 >= 0 && out[i8].recorded && !out[i8].ran && out[i8].p_holm == 1 &&
            !strcmp(out[i8].check, "long_context.test"),
        "family.collect.not_run_recorded", "an N = 0 record: recorded %d, ran %d, Holm %g",
        i8 >= 0 ? out[i8].recorded : -1, i8 >= 0 ? out[i8].ran : -1, i8 >= 0 ? out[i8].p_holm : NAN);
  CHECK(i0 >= 0 && i1 >= 0 && i6 >= 0 && fabs(out[i0].p - 2e-6) < 1e-18 &&
            fabs(out[i1].p - 2e-7) < 1e-19 && out[i0].n == 40 && !strcmp(out[i0].unit, "task") &&
            fabs(out[i6].p_holm - 0.99 * PROP_FAMILY_ALPHA) < 1e-12 && i7 >= 0 &&
            fabs(out[i7].p_holm - 1.01 * PROP_FAMILY_ALPHA) < 1e-12 &&
            strstr(out[i1].numbers, "/ with a bar ] and a bracket") != NULL,
        "family.collect.numbers", "p %.17g / %.17g, Holm at the edge %.17g, numbers '%s'",
        i0 >= 0 ? out[i0].p : NAN, i1 >= 0 ? out[i1].p : NAN, i6 >= 0 ? out[i6].p_holm : NAN,
        i1 >= 0 ? out[i1].numbers : "");

  /* the rows' verdicts */
  prop_verdict v;
  int ok = prop_family_row(out, m, "B-FIG4", &v) && v == PROP_MIXED;
  ok = ok && prop_family_row(out, m, "B-TAB1.trivia", &v) && v == PROP_MIXED;
  ok = ok && !prop_family_row(out, m, "B-TAB6", &v) && !prop_family_row(out, m, "S-L1.1", &v);
  CHECK(ok, "family.row.mixed_and_absent", "B-FIG4 / B-TAB1.trivia not MIXED or B-TAB6 decided");
  {
    static prop_family_outcome one[256];
    static prop_ctx c2;
    ctx_init(&c2, log);
    prop_family(&c2, "B-TAB5", "smollm2:balancekv_block>uniform", PROP_FAM_SUPERIORITY,
                1e-9, 1, 0.99, "text", 30, "x");
    prop_family(&c2, "B-TAB5", "gemma3:balancekv_block>uniform", PROP_FAM_SUPERIORITY,
                1e-8, 1, 0.99, "text", 30, "y");
    prop_family(&c2, "B-TAB6", "smollm2:balancekv_block>clustergen", PROP_FAM_SUPERIORITY, 1,
                1e-9, 0.99, "text", 30, "z");
    const char *n2[1] = {c2.notes};
    prop_family_collect(ids, n2, 1, one, why, sizeof why);
    prop_verdict v5, v6;
    int ok5 = prop_family_row(one, m, "B-TAB5", &v5), ok6 = prop_family_row(one, m, "B-TAB6", &v6);
    CHECK(ok5 && v5 == PROP_HOLDS && ok6 && v6 == PROP_FAILS, "family.row.common",
          "B-TAB5 %s, B-TAB6 %s", ok5 ? prop_verdict_name(v5) : "-", ok6 ? prop_verdict_name(v6) : "-");
    /* the same member recorded by two checks, and a record naming no member: problems */
    const char *n3[2] = {c2.notes, c2.notes};
    const char *id3[2] = {"a", "b"};
    int pr = prop_family_collect(id3, n3, 2, one, why, sizeof why);
    const char *forged[1] = {"family ⟦B-FIG4|smollm2:nonesuch>x|superiority|0.1|0.9|0.5|task|4|⟧"};
    int pf = prop_family_collect(id3, forged, 1, one, why, sizeof why);
    CHECK(pr == 3 && pf == 1 && strstr(why, "no member of the table"), "family.collect.problems",
          "duplicates %d (want 3), unknown %d (want 1): %s", pr, pf, why);
  }

  /* ---- the checks table's notes: a record written for a reader, the rest md-escaped ---- */
  {
    static prop_ctx c3;
    ctx_init(&c3, log);
    prop_note(&c3, "a | b");
    prop_family(&c3, "B-TAB5", "gemma3:balancekv_block>uniform", PROP_FAM_SUPERIORITY,
                0.012345678, 0.987654322, 0.25, "text", 3, "Δ %+.2f", 0.5);
    prop_note(&c3, "after");
    FILE *f = tmpfile();
    prop_family_md_notes(f, c3.notes);
    char buf[2048];
    size_t len = 0;
    if (f) {
      rewind(f);
      len = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
    }
    buf[len] = 0;
    const char *want = "a \\| b; family member [B-TAB5 gemma3:balancekv_block>uniform, "
                       "superiority]: p_claim 0.0123, p_contra 0.988, power at α/m 0.250, "
                       "unit = text, N = 3: Δ +0.50; after";
    CHECK(strcmp(buf, want) == 0, "family.md_notes", "got '%s'", buf);
  }

  /* ---- the findings opening ---- */
  {
    prop_finding_row rows[] = {
        {"B-X", "003 Thm 9", "a bound", PROP_FAILS, 0, 0, "b.x",
         "unit = text, N = 3; powered for: 2; cell [n=8] FAILS: error 0.41 > bound 0.2"},
        {"B-Y", "003 eq. 7", "an exponent", PROP_ERRATUM, 0, 0, "b.y",
         "slope 1.02; ERRATUM ⟦the text, wrong whatever the run: n^2 — corrected: n^1⟧"},
        {"B-Z", "003 Fig. 9", "an advantage", PROP_NOT_OBSERVED, 0, 0, "b.z",
         "NOT-OBSERVED: CI [-0.1, 0.05], power 0.93"},
        {"B-H", "003 Lemma 1", "an identity", PROP_HOLDS, 0, 0, "b.h", "max error 0"},
        {"q.walk", "003 §3", "Does the walk beat random signs?", PROP_HOLDS, 1, 0, "q.walk",
         "cell [d=8] HOLDS: ratio 0.61 (p 1e-9)"},
    };
    FILE *f = tmpfile();
    int k = prop_findings_write(f, rows, 5, out, m);
    char buf[16384];
    size_t len = 0;
    if (f) {
      rewind(f);
      len = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
    }
    buf[len] = 0;
    /* FAILS, ERRATUM, NOT-OBSERVED, the question: 4; the family's 8 members that ran and its
     * count sentence: 9; the HOLDS row is no finding */
    int has = strstr(buf, "**FAILS** — B-X") && strstr(buf, "error 0.41 > bound 0.2") &&
              strstr(buf, "corrected: n^1") && strstr(buf, "power 0.93") &&
              strstr(buf, "ratio 0.61") && !strstr(buf, "B-H") &&
              strstr(buf, "Family: CONTRADICTED** — B-FIG4, gemma3") &&
              strstr(buf, "8 of its ") && strstr(buf, "FAILS") < strstr(buf, "ERRATUM");
    CHECK(k == 13 && has, "family.findings", "%d sentences (want 13):\n%s", k, buf);
  }
  fclose(log);
  UNIT_EXIT();
}

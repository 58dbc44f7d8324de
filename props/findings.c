/* findings.c — see findings.h. Each sentence is built from a verdict and the notes of the check
 * that gives it (the number: the note that states the finding — the failed cell, the corrected
 * statement, the control that passes, the power — else the first note with a number). */
#include "findings.h"

#include <string.h>

static int has_digit(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (s[i] >= '0' && s[i] <= '9') return 1;
  return 0;
}

/* [*a, *b) the note around position p of notes */
static void note_bounds(const char *notes, const char *p, const char **a, const char **b) {
  const char *s = notes, *q;
  while ((q = strstr(s, "; ")) && q < p) s = q + 2;
  *a = s;
  q = strstr(p, "; ");
  *b = q ? q : p + strlen(p);
}

static void copy_note(const char *a, const char *b, char *buf, size_t cap) {
  size_t len = (size_t)(b - a);
  if (len + 1 > cap) {
    /* cut on a UTF-8 boundary, with an ellipsis */
    len = cap > 4 ? cap - 4 : 0;
    while (len && ((unsigned char)a[len] & 0xC0) == 0x80) len--;
    memcpy(buf, a, len);
    memcpy(buf + len, "…", 4);
    return;
  }
  memcpy(buf, a, len);
  buf[len] = 0;
}

void prop_finding_note(const char *notes, const char *key, char *buf, size_t cap) {
  if (!cap) return;
  buf[0] = 0;
  if (!notes || !key) return;
  for (const char *p = strstr(notes, key); p; p = strstr(p + 1, key)) {
    const char *a, *b;
    note_bounds(notes, p, &a, &b);
    if (!has_digit(a, (size_t)(b - a)) && *key) continue; /* a finding's note has its number */
    copy_note(a, b, buf, cap);
    return;
  }
}

/* The note giving the number of a finding of verdict v: the keyed note, else the first note with
 * a number. */
static void number_of(const char *notes, const char *key, char *buf, size_t cap) {
  if (*key) prop_finding_note(notes, key, buf, cap);
  if (!buf[0] && !strcmp(key, "] VACUOUS")) prop_finding_note(notes, "PASSES the assertion", buf, cap);
  /* else the first note with a digit */
  if (!buf[0] && notes) {
    for (const char *s = notes; *s;) {
      const char *e = strstr(s, "; ");
      const char *b = e ? e : s + strlen(s);
      if (has_digit(s, (size_t)(b - s))) {
        copy_note(s, b, buf, cap);
        return;
      }
      if (!e) break;
      s = e + 2;
    }
  }
}

static void md(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '|') fputs("\\|", f);
    else if (*s == '\n') fputc(' ', f);
    else fputc(*s, f);
  }
}

/* The key that names verdict v's evidence in a check's notes. */
static const char *key_of(prop_verdict v) {
  switch (v) {
    case PROP_FAILS: return "] FAILS";
    case PROP_ERRATUM: return "ERRATUM ⟦";
    case PROP_VACUOUS: return "] VACUOUS"; /* a VACUOUS cell, else the control's note below */
    case PROP_VACUOUS_PRACTICAL: return "VACUOUS-AT-PRACTICAL-PARAMETERS";
    case PROP_NOT_OBSERVED: return "NOT-OBSERVED";
    case PROP_INCONCLUSIVE: return "INCONCLUSIVE";
    case PROP_HOLDS: return "] HOLDS";
    case PROP_MIXED: return "cell [";
    default: return "";
  }
}

static void sentence(FILE *f, const prop_finding_row *r) {
  char num[640] = "";
  if (r->v == PROP_ERRATUM && r->notes) { /* the corrected statement with its evidence, whole */
    const char *a = strstr(r->notes, "ERRATUM ⟦"), *b = a ? strstr(a, "⟧") : NULL;
    if (b) {
      a += strlen("ERRATUM ⟦");
      static const char lead[] = "the text, wrong whatever the run: "; /* prop_erratum's words */
      if (strncmp(a, lead, sizeof lead - 1) == 0 && a + sizeof lead - 1 < b) a += sizeof lead - 1;
      copy_note(a, b, num, sizeof num);
    }
  }
  if (!num[0]) number_of(r->notes, key_of(r->v), num, sizeof num);
  if (r->question == 1) {
    fprintf(f, "- **kvbound's question** (`%s`): ", r->id);
    md(f, r->what);
    fprintf(f, " — **%s**", prop_verdict_name(r->v));
  } else {
    fprintf(f, "- **%s** — %s%s (", prop_verdict_name(r->v), r->question ? "check `" : "",
            r->id);
    if (r->question) fputc('`', f);
    md(f, r->source);
    fprintf(f, "): ");
    md(f, r->what);
  }
  if (num[0]) {
    fprintf(f, r->v == PROP_ERRATUM ? " — the text is wrong as written: " : " — measured");
    if (r->v != PROP_ERRATUM && r->check) fprintf(f, " (`%s`)", r->check);
    if (r->v != PROP_ERRATUM) fprintf(f, ": ");
    md(f, num);
  } else {
    fprintf(f, " — (no number recorded%s%s%s)", r->check ? " by `" : "", r->check ? r->check : "",
            r->check ? "`" : "");
  }
  fprintf(f, "%s\n", r->by_family ? " (the row's verdict is the empirical family's, below)" : "");
}

static int is_finding(const prop_finding_row *r) {
  if (r->question == 1) return r->v != PROP_SKIPPED && r->v != PROP_UNCHECKED;
  return r->v == PROP_FAILS || r->v == PROP_ERRATUM || r->v == PROP_VACUOUS ||
         r->v == PROP_VACUOUS_PRACTICAL || r->v == PROP_NOT_OBSERVED;
}

int prop_findings_write(FILE *f, const prop_finding_row *rows, size_t n,
                        const prop_family_outcome *fam, size_t m) {
  int k = 0;
  fprintf(f, "### Findings\n\n"
             "What this run found, one sentence each with its number, generated from the "
             "verdicts below: every FAILS, ERRATUM, VACUOUS bound and NOT-OBSERVED advantage, "
             "every decision of the papers' empirical family, and every answer to one of "
             "kvbound's own questions.\n\n");
  /* in the order of the vocabulary's weight: what is wrong first */
  static const prop_verdict order[] = {PROP_FAILS, PROP_ERRATUM, PROP_VACUOUS,
                                       PROP_VACUOUS_PRACTICAL, PROP_NOT_OBSERVED};
  for (size_t o = 0; o < sizeof order / sizeof *order; o++)
    for (size_t i = 0; i < n; i++)
      if (rows[i].question != 1 && rows[i].v == order[o] && is_finding(&rows[i])) {
        sentence(f, &rows[i]);
        k++;
      }
  size_t not_run = 0;
  for (size_t i = 0; i < m; i++) {
    const prop_family_outcome *o = &fam[i];
    if (!o->ran) {
      not_run++;
      continue;
    }
    fprintf(f, "- **Family: %s** — %s, %s (%s): Holm-adjusted p = %.3g (p = %.3g; unit = ",
            prop_family_decision_name(o->d), o->row, o->cell,
            o->kind == PROP_FAM_EQUIVALENCE ? "equivalence" : "superiority", o->p_holm, o->p);
    md(f, o->unit);
    fprintf(f, ", N = %zu; power %.2f at α/m)%s", o->n, o->power, o->numbers[0] ? ": " : "");
    md(f, o->numbers);
    fprintf(f, " (`%s`)\n", o->check);
    k++;
  }
  if (m) {
    fprintf(f, "- **Family**: %zu of its %zu pre-registered members ran at this tier; %zu did "
               "not (each entered with p = 1).\n", m - not_run, m, not_run);
    k++;
  }
  for (size_t i = 0; i < n; i++)
    if (rows[i].question == 1 && is_finding(&rows[i])) {
      sentence(f, &rows[i]);
      k++;
    }
  if (!k) fprintf(f, "- (nothing to report: no check ran)\n");
  fprintf(f, "\n");
  return k;
}

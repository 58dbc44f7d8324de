/* findings.h — the report's opening: what kvbound found about the papers, one sentence per
 * finding with its number, generated from the verdicts (never hand-typed), before the rows. */
#ifndef KVB_PROP_FINDINGS_H
#define KVB_PROP_FINDINGS_H

#include <stddef.h>
#include <stdio.h>

#include "family.h"

/* One verdict the report gives: a paper row, a question of kvbound's own, or a supporting
 * check. */
typedef struct {
  const char *id;        /* paper row id, or the check id for a question / supporting check */
  const char *source;    /* the paper's numbering */
  const char *what;      /* the claim or the question in one sentence */
  prop_verdict v;        /* the verdict the report prints */
  int question;          /* 1: kvbound's own question; 2: a supporting check (covers no row) */
  int by_family;         /* the verdict is the empirical family's (prop_family_row) */
  const char *check;     /* the check whose notes give the number (NULL: none) */
  const char *notes;     /* that check's notes */
} prop_finding_row;

/* Writes "### Findings": one sentence, with its number, for every FAILS, every ERRATUM (with the
 * corrected statement), every VACUOUS or VACUOUS-AT-PRACTICAL-PARAMETERS verdict, every
 * NOT-OBSERVED advantage, every decision of the empirical family (members that ran; those that
 * did not are counted in one sentence) and every answer to one of kvbound's own questions.
 * Returns the number of sentences. */
int prop_findings_write(FILE *f, const prop_finding_row *rows, size_t n,
                        const prop_family_outcome *fam, size_t m);

/* The first note of `notes` (notes are "; "-joined) that contains `key`, from that key to the
 * next "; " (at most cap − 1 bytes; "…" when cut); "" when none. For the findings' numbers. */
void prop_finding_note(const char *notes, const char *key, char *buf, size_t cap);

#endif

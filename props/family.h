/* family.h — the papers' empirical claims judged as ONE pre-registered family (props/README.md,
 * "The papers' empirical claims as one family").
 *
 * Two families, two levels. The regression battery (`make check`'s PASS/FAIL lines, mutants)
 * keeps α ≤ 1e-6 per assertion (prop.h, PROP_ALPHA): a FAIL line must almost never be a false
 * alarm. The papers' empirical claims — comparisons on real models and tasks — are scientific
 * statements a reader weighs together: their members are fixed in advance in family.c's table
 * (m of them), each check reports its member's p-values through prop_family(), and the report
 * applies Holm's step-down procedure at family-wise level PROP_FAMILY_ALPHA over all m members
 * (a member that did not run at this tier enters with p = 1). The empirical paper rows'
 * verdicts in the report are then the family's decisions (prop_family_row); the checks' own
 * lines at α = 1e-6 stay as they are (the regression view). */
#ifndef KVB_PROP_FAMILY_H
#define KVB_PROP_FAMILY_H

#include <stddef.h>
#include <stdio.h>

#include "prop.h"

typedef enum { PROP_FAM_SUPERIORITY = 0, PROP_FAM_EQUIVALENCE = 1 } prop_family_kind;

/* One member of the papers' empirical family (DESIGN, Two families). (row, cell) must be in the
 * pre-registered member table of family.c (else a failed prop_check naming it). kind SUPERIORITY:
 * p_claim = one-sided p for the paper's claimed direction, p_contra = one-sided p for the opposite.
 * kind EQUIVALENCE (TOST at a stated margin): p_claim = TOST p (max of the two one-sided p),
 * p_contra = one-sided p that the difference exceeds the margin on the side against the claim.
 * power = the design's power at the pre-registered effect at level PROP_FAMILY_ALPHA/m (m = the table's size;
 * computed by the caller from N before reading the outcome). unit, n: the unit of replication and N.
 * fmt: the outcome numbers (mean Δ, SD, CI …) for the report. n = 0 records that the member does
 * not run at this tier (it enters the family with p = 1, "not run at this tier"). kind must be the
 * table's. */
void prop_family(prop_ctx *ctx, const char *row, const char *cell, prop_family_kind kind,
                 double p_claim, double p_contra, double power, const char *unit, size_t n,
                 const char *fmt, ...) __attribute__((format(printf, 10, 11)));
#define PROP_FAMILY_ALPHA 0.05
size_t prop_family_size(void);                 /* m: members pre-registered */
const char *prop_family_member(size_t i, const char **cell); /* row of member i, its cell */

/* ---- the report's side ---- */

/* Holm's step-down procedure over m p-values: adj[i] is p[i]'s Holm-adjusted p-value,
 * max over the members ranked at or before it of min(1, (m − rank + 1)·p) (ranks from 1, p in
 * ascending order, ties in index order — tied p-values get equal adjusted ones). A member is
 * rejected at family-wise level α iff adj[i] ≤ α: the step-down rejects the smallest p while
 * p_(k) ≤ α/(m − k + 1) and stops at the first that is not. A NaN p is treated as 1. */
void prop_holm(const double *p, size_t m, double *adj);

typedef enum {
  PROP_FAMD_NOT_RUN = 0,   /* no faithful run of this tier recorded the member: p = 1 */
  PROP_FAMD_SUPPORTED,     /* Holm rejects, in the claimed direction (equivalence: within margin) */
  PROP_FAMD_CONTRADICTED,  /* Holm rejects, in the opposite direction (superiority members only) */
  PROP_FAMD_NOT_OBSERVED,  /* not rejected although the power at α/m was >= 0.9 */
  PROP_FAMD_INCONCLUSIVE   /* not rejected, power at α/m < 0.9 */
} prop_family_decision;

const char *prop_family_decision_name(prop_family_decision d);

typedef struct {
  const char *row, *cell;  /* from the table */
  int recorded;            /* a faithful run recorded it (N = 0: "not run at this tier") */
  int ran;                 /* … with N > 0: it ran at this tier */
  char check[128];         /* the check that recorded it */
  prop_family_kind kind;
  double p_claim, p_contra, power;
  char unit[128];
  size_t n;
  char numbers[768];       /* the caller's fmt */
  double p, p_holm;        /* the member's p in the family and its Holm-adjusted p */
  prop_family_decision d;
} prop_family_outcome;

/* Fills out[0..m) (m = prop_family_size()) from the notes of the faithful runs (ids[r], notes[r],
 * r < nruns): the "family ⟦…⟧" entries prop_family() left there (they travel with the notes
 * through kvb-props --shard/--merge). Then decides the family (Holm at PROP_FAMILY_ALPHA).
 * Returns the number of problems — a note naming no member of the table, a member recorded
 * twice, a malformed entry — each described in why (";"-joined) for the report. */
int prop_family_collect(const char *const *ids, const char *const *notes, size_t nruns,
                        prop_family_outcome *out, char *why, size_t cap);

/* The report section "The papers' empirical claims as one family": the rule, m, one row per
 * member (row, cell, unit, N, p, Holm-adjusted p, power at α/m, decision). */
void prop_family_write(FILE *rep, const prop_family_outcome *out, size_t m, const char *problems);

/* notes as markdown table text (| escaped), each "family ⟦…⟧" record written for a reader: the
 * member, its p-values rounded, power, unit and N, and its numbers. */
void prop_family_md_notes(FILE *f, const char *notes);

/* The verdict the family gives paper row `row`: 1 with *v set when at least one of its members
 * ran (members not run do not vote; they still count in m), else 0 (the checks' roll-up stands).
 * The members' decisions map SUPPORTED → HOLDS, CONTRADICTED → FAILS, NOT-OBSERVED →
 * NOT-OBSERVED, INCONCLUSIVE → INCONCLUSIVE; the row takes their common verdict, MIXED when they
 * differ. */
int prop_family_row(const prop_family_outcome *out, size_t m, const char *row, prop_verdict *v);

#endif

/* prop_expect.h — the verdicts pre-registered for checks whose verdict is a theorem asserted to
 * hold or an exact invariant (props/README.md, Verdicts: expectations). A faithful run at the
 * check tier whose verdict differs prints a FAIL line, so a wrong verdict mapping (the harness's
 * prop_verdict_of, a check's cell rule) changes a line make check reads. Exploratory and
 * empirical checks (comparisons on real models, questions, seed-fragile cells) have none: their
 * verdict is the finding, not a regression. */
#ifndef KVB_PROP_EXPECT_H
#define KVB_PROP_EXPECT_H

#include "prop.h"

typedef struct {
  const char *id;
  prop_verdict expect;
} prop_expectation;

/* Terminated by {NULL, 0}. */
extern const prop_expectation prop_expectations[];

/* The pre-registered verdict of check `id`, or -1 when it has none. */
int prop_expected_verdict(const char *id);

#endif

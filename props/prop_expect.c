/* prop_expect.c — pre-registered verdicts (prop_expect.h). Only checks whose verdict is a theorem
 * or exact statement asserted before any run: an exact invariant (its mutants show it can fail),
 * exact arithmetic on a paper's numbers, a bound asserted to hold. Filled from the verdicts at the
 * fixed seed of make check (20261123) and checked against the check's declaration. */
#include "prop_expect.h"

#include "claims.h"

#include <stdio.h>
#include <string.h>

const prop_expectation prop_expectations[] = {
    {NULL, PROP_HOLDS}};

int prop_expected_verdict(const char *id) {
  for (const prop_expectation *e = prop_expectations; e->id; e++)
    if (strcmp(e->id, id) == 0) return (int)e->expect;
  return -1;
}

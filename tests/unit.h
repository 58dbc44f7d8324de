/* unit.h — the unit tests' tiny harness. Every check prints one line, "PASS name" or
 * "FAIL name: why", which scripts/run-checks counts into the closing "N passed, N failed".
 * No shared hidden state between tests: each builds what it needs. */
#ifndef KVB_UNIT_H
#define KVB_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_failed = 0;

/* The tier scripts/run-checks runs this binary in: $KVB_TIER is "check" in `make check`, "full"
 * in `make check-full`, unset when a binary is run by hand (then everything runs). A test's
 * costly case that repeats, through another door, a path a test of the check tier already
 * covers runs in the full tier only: it asks unit_full_tier() and otherwise prints
 * "SKIP name: check-full only (...)" (props/README.md, Where each check runs). */
static inline int unit_full_tier(void) {
  const char *t = getenv("KVB_TIER");
  return !t || strcmp(t, "check") != 0;
}

#define CHECK(cond, name, ...)                                   \
  do {                                                           \
    if (cond) {                                                  \
      printf("PASS %s\n", name);                                 \
    } else {                                                     \
      unit_failed++;                                             \
      printf("FAIL %s: ", name);                                 \
      printf(__VA_ARGS__);                                       \
      printf(" (%s:%d)\n", __FILE__, __LINE__);                  \
    }                                                            \
    fflush(stdout);                                              \
  } while (0)

#define UNIT_EXIT() return unit_failed ? 1 : 0

#endif

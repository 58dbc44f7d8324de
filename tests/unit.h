/* unit.h — the unit tests' tiny harness. Every check prints one line, "PASS name" or
 * "FAIL name: why", which scripts/run-checks counts into the closing "N passed, N failed".
 * No shared hidden state between tests: each builds what it needs. */
#ifndef KVB_UNIT_H
#define KVB_UNIT_H

#include <stdio.h>

static int unit_failed = 0;

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

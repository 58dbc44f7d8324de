/* family_stub.h — TEMPORARY stand-in for props/family.h (branch h35-family), with its exact
 * signature, so long_context.c and real_proxies.c build before that branch is merged. Delete on
 * merge and include "family.h" instead. It records nothing: it writes the member to the notes. */
#ifndef KVB_PROPS_FAMILY_STUB_H
#define KVB_PROPS_FAMILY_STUB_H

#include "prop.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#ifndef PROP_FAMILY_ALPHA
#define PROP_FAMILY_ALPHA 0.05
typedef enum { PROP_FAM_SUPERIORITY = 0, PROP_FAM_EQUIVALENCE = 1 } prop_family_kind;
static inline size_t prop_family_size(void) { return 28; } /* props/FAMILY-CELLS.txt */
static inline void prop_family(prop_ctx *ctx, const char *row, const char *cell,
                               prop_family_kind kind, double p_claim, double p_contra,
                               double power, const char *unit, size_t n, const char *fmt, ...) {
  char buf[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  prop_note(ctx, "family member %s %s (%s): p = %.3g, against %.3g, power %.2f at 0.05/%zu; "
            "unit = %s, N = %zu; %s", row, cell, kind ? "equivalence" : "superiority", p_claim,
            p_contra, power, prop_family_size(), unit, n, buf);
}
#endif

#endif

/* mutant.h — the one mutant mechanism of methods, streams and probes.
 *
 * A mutant is a deliberately wrong variant of a type (a reservoir probability off by a
 * constant, a walk pushing the wrong way, an INDEX instance whose groups share a key). Mutants
 * exist only so the property checks can show that each check is able to fail; nothing else may
 * use them.
 *
 * Every method, stream and probe type lists its mutants in a kvb_mutant_spec table (name and
 * one line of help, ended by a row whose name is NULL; NULL for a type without mutants). The
 * generic layer of each kind (kvb_method_alloc_type, kvb_stream_generate_type,
 * kvb_probe_run_type) owns the string parameter "mutant": it removes it from the parameters
 * the type sees, checks the name against the type's table (an unknown name is KVB_ENOTFOUND
 * naming the type and listing its mutants) and stores the mutant's index; the implementation
 * asks kvb_method_is_mutant(m, "NAME"), kvb_stream_is_mutant(s, "NAME") or
 * kvb_probe_is_mutant(pr, "NAME"). So a mutant is selected the same way everywhere:
 *   C          kvb_params_set_str(&p, "mutant", "mu_norm") (or kvb_params_parse "mutant=mu_norm")
 *   spec       method "subgen" { mutant = "mu_norm" }   (stream and probe alike)
 *   kvb-props  --mutant method:subgen:mu_norm            (stream:TYPE:NAME, probe:TYPE:NAME)
 * and `kvbound list` prints every type's table.
 *
 * Functions rather than types: the Self-Balancing Walk (walk.h, KVB_WALK_MUT_* flags), the
 * block variant's core (balancekv_block.h, KVB_BKVB_MUT_*), greedy k-center (kcenter.h,
 * kvb_kcenter_variant) and the INDEX instance (index_reduction.h) take their wrong variants as
 * arguments, but each variant is reachable only through the mutant table of the type that
 * owns the function; the mapping is in one place, README "Mutants". The property checks also
 * have "check mutants" (kvb-props --mutant check:NAME): wrong variants of a check's own
 * arithmetic (a bound constant halved, a closed form with the wrong power), which are not
 * variants of any type and live in the check's file. */
#ifndef KVB_MUTANT_H
#define KVB_MUTANT_H

#include <stddef.h>

#include "params.h"

typedef struct {
  const char *name; /* [a-z0-9_]+ */
  const char *help; /* one line: what is wrong, citing the step it breaks */
} kvb_mutant_spec;

/* The parameter the generic layer owns. */
#define KVB_MUTANT_PARAM "mutant"

/* Number of rows of `table` (0 for NULL). */
size_t kvb_mutant_count(const kvb_mutant_spec *table);
/* Index (0-based) of mutant `name` in `table`, or -1 (also for NULL arguments). */
int kvb_mutant_find(const kvb_mutant_spec *table, const char *name);
/* Name of mutant number `mutant` (1-based, as stored by the generic layers), NULL for 0 (the
 * faithful variant) or out of range. */
const char *kvb_mutant_name(const kvb_mutant_spec *table, int mutant);

/* Splits p (NULL: no parameters) into the "mutant" parameter and the rest: *mutant receives 0
 * (absent) or 1 + its index in `table`; `rest` receives every other parameter in order. A
 * mutant that is not a string or not in the table is an error naming `kind` ("method",
 * "stream", "probe") and `what` (the type's name) and listing the table's names; *mutant and
 * rest are then unspecified. */
int kvb_mutant_split(const kvb_params *p, const kvb_mutant_spec *table, const char *kind,
                     const char *what, kvb_params *rest, int *mutant);

#endif

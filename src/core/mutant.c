/* mutant.c — mutant tables and the "mutant" parameter (see mutant.h). */
#include "mutant.h"
#include "kvb_error.h"

#include <stdio.h>
#include <string.h>

size_t kvb_mutant_count(const kvb_mutant_spec *table) {
  size_t n = 0;
  while (table && table[n].name) n++;
  return n;
}

int kvb_mutant_find(const kvb_mutant_spec *table, const char *name) {
  if (!name) return -1;
  for (int i = 0; table && table[i].name; i++)
    if (strcmp(table[i].name, name) == 0) return i;
  return -1;
}

const char *kvb_mutant_name(const kvb_mutant_spec *table, int mutant) {
  if (mutant < 1 || (size_t)mutant > kvb_mutant_count(table)) return NULL;
  return table[mutant - 1].name;
}

/* "a, b, c" or "it has none" into buf. */
static void list_names(const kvb_mutant_spec *table, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = '\0';
  if (!kvb_mutant_count(table)) {
    snprintf(buf, cap, "it has none");
    return;
  }
  o += (size_t)snprintf(buf, cap, "its mutants: ");
  for (size_t i = 0; table[i].name && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", table[i].name);
}

int kvb_mutant_split(const kvb_params *p, const kvb_mutant_spec *table, const char *kind,
                     const char *what, kvb_params *rest, int *mutant) {
  if (!rest || !mutant) return KVB_ERROR(KVB_ENULL, "mutant split: NULL output");
  kvb_params_init(rest);
  *mutant = 0;
  for (size_t i = 0; p && i < p->n; i++) {
    const kvb_param *it = &p->items[i];
    if (strcmp(it->name, KVB_MUTANT_PARAM) != 0) {
      rest->items[rest->n++] = *it;
      continue;
    }
    char names[384];
    list_names(table, names, sizeof names);
    if (!it->is_string)
      return KVB_ERROR(KVB_EINVAL, "%s '%s': mutant must be a name, got the number %g (%s)", kind,
                       what, it->num, names);
    int idx = kvb_mutant_find(table, it->str);
    if (idx < 0)
      return KVB_ERROR(KVB_ENOTFOUND, "%s '%s' has no mutant '%s' (%s)", kind, what, it->str,
                       names);
    *mutant = idx + 1;
  }
  return KVB_OK;
}

/* params.h — named parameters for methods and streams.
 *
 * Methods and streams are created from a kvb_params list ("delta=0.5", "t=32",
 * "mutant=mp_prob_half"), validated against the type's kvb_param_spec table:
 * an unknown name, a value out of range or a non-integer for an integer
 * parameter is an error naming the parameter, so a typo in a spec never
 * silently runs the default. */
#ifndef KVB_PARAMS_H
#define KVB_PARAMS_H

#include <stddef.h>

#define KVB_PARAMS_MAX 32
#define KVB_PARAM_NAME_MAX 32
#define KVB_PARAM_STR_MAX 96

typedef enum { KVB_PARAM_REAL, KVB_PARAM_INT, KVB_PARAM_STRING } kvb_param_kind;

/* One row of a type's parameter table; the table ends with a row whose name is NULL. */
typedef struct {
  const char *name;
  kvb_param_kind kind;
  double def;        /* default (REAL/INT); NAN means "required" */
  double min, max;   /* inclusive range (REAL/INT) */
  const char *sdef;  /* default (STRING) */
  const char *help;  /* one line, citing the paper where the parameter comes from */
} kvb_param_spec;

typedef struct {
  char name[KVB_PARAM_NAME_MAX];
  int is_string;
  double num;
  char str[KVB_PARAM_STR_MAX];
} kvb_param;

typedef struct {
  size_t n;
  kvb_param items[KVB_PARAMS_MAX];
} kvb_params;

void kvb_params_init(kvb_params *p);
/* Sets (or replaces) a numeric parameter. */
int kvb_params_set(kvb_params *p, const char *name, double value);
/* Sets (or replaces) a string parameter. */
int kvb_params_set_str(kvb_params *p, const char *name, const char *value);
/* Parses "name=value" (number if it parses fully as one, else string). */
int kvb_params_parse(kvb_params *p, const char *assignment);

/* Checks every given parameter against `spec` (unknown names, ranges, integrality, missing
 * required ones); `what` names the method or stream in messages. */
int kvb_params_validate(const kvb_params *p, const kvb_param_spec *spec, const char *what);
/* Value of a numeric parameter, or the spec default. Call after validate. */
double kvb_params_get(const kvb_params *p, const kvb_param_spec *spec, const char *name);
/* Value of a string parameter, or the spec default ("" if none). Call after validate. */
const char *kvb_params_get_str(const kvb_params *p, const kvb_param_spec *spec, const char *name);
/* Whether the caller gave `name` explicitly. */
int kvb_params_has(const kvb_params *p, const char *name);

#endif

/* params.c — named parameter lists validated against spec tables (see params.h). */
#include "params.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void kvb_params_init(kvb_params *p) {
  if (p) memset(p, 0, sizeof *p);
}

static kvb_param *slot(kvb_params *p, const char *name, int *status) {
  if (!p || !name) {
    *status = KVB_ERROR(KVB_ENULL, "params or name is NULL");
    return 0;
  }
  size_t len = strlen(name);
  if (len == 0 || len >= KVB_PARAM_NAME_MAX) {
    *status = KVB_ERROR(KVB_EINVAL, "parameter name '%s' is empty or longer than %d", name,
                        KVB_PARAM_NAME_MAX - 1);
    return 0;
  }
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->items[i].name, name) == 0) return &p->items[i];
  if (p->n == KVB_PARAMS_MAX) {
    *status = KVB_ERROR(KVB_EINVAL, "more than %d parameters", KVB_PARAMS_MAX);
    return 0;
  }
  kvb_param *it = &p->items[p->n++];
  memset(it, 0, sizeof *it);
  memcpy(it->name, name, len + 1);
  return it;
}

int kvb_params_set(kvb_params *p, const char *name, double value) {
  int st = KVB_OK;
  kvb_param *it = slot(p, name, &st);
  if (!it) return st;
  it->is_string = 0;
  it->num = value;
  return KVB_OK;
}

int kvb_params_set_str(kvb_params *p, const char *name, const char *value) {
  if (!value) return KVB_ERROR(KVB_ENULL, "value of parameter '%s' is NULL", name ? name : "?");
  if (strlen(value) >= KVB_PARAM_STR_MAX)
    return KVB_ERROR(KVB_EINVAL, "value of parameter '%s' is longer than %d characters", name,
                     KVB_PARAM_STR_MAX - 1);
  int st = KVB_OK;
  kvb_param *it = slot(p, name, &st);
  if (!it) return st;
  it->is_string = 1;
  strcpy(it->str, value);
  return KVB_OK;
}

int kvb_params_parse(kvb_params *p, const char *assignment) {
  if (!assignment) return KVB_ERROR(KVB_ENULL, "assignment is NULL");
  const char *eq = strchr(assignment, '=');
  if (!eq || eq == assignment)
    return KVB_ERROR(KVB_EINVAL, "'%s' is not of the form name=value", assignment);
  char name[KVB_PARAM_NAME_MAX];
  size_t len = (size_t)(eq - assignment);
  if (len >= sizeof name) return KVB_ERROR(KVB_EINVAL, "parameter name in '%s' is too long", assignment);
  memcpy(name, assignment, len);
  name[len] = '\0';
  char *end = 0;
  double v = strtod(eq + 1, &end);
  if (eq[1] != '\0' && end && *end == '\0') return kvb_params_set(p, name, v);
  return kvb_params_set_str(p, name, eq + 1);
}

static const kvb_param_spec *find_spec(const kvb_param_spec *spec, const char *name) {
  for (; spec && spec->name; spec++)
    if (strcmp(spec->name, name) == 0) return spec;
  return 0;
}

static const kvb_param *find_given(const kvb_params *p, const char *name) {
  if (!p) return 0;
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->items[i].name, name) == 0) return &p->items[i];
  return 0;
}

int kvb_params_has(const kvb_params *p, const char *name) { return find_given(p, name) != 0; }

int kvb_params_validate(const kvb_params *p, const kvb_param_spec *spec, const char *what) {
  if (p) {
    for (size_t i = 0; i < p->n; i++) {
      const kvb_param *it = &p->items[i];
      const kvb_param_spec *s = find_spec(spec, it->name);
      if (!s) return KVB_ERROR(KVB_ENOTFOUND, "%s has no parameter '%s'", what, it->name);
      if (s->kind == KVB_PARAM_STRING) {
        if (!it->is_string)
          return KVB_ERROR(KVB_EINVAL, "%s: parameter '%s' takes a name, not a number", what,
                           it->name);
        continue;
      }
      if (it->is_string)
        return KVB_ERROR(KVB_EINVAL, "%s: parameter '%s' takes a number, got '%s'", what,
                         it->name, it->str);
      if (!isfinite(it->num))
        return KVB_ERROR(KVB_EDOM, "%s: parameter '%s' is not finite", what, it->name);
      if (s->kind == KVB_PARAM_INT && it->num != floor(it->num))
        return KVB_ERROR(KVB_EINVAL, "%s: parameter '%s' must be an integer, got %g", what,
                         it->name, it->num);
      if (it->num < s->min || it->num > s->max)
        return KVB_ERROR(KVB_EINVAL, "%s: parameter '%s' = %g is outside [%g, %g]", what,
                         it->name, it->num, s->min, s->max);
    }
  }
  for (const kvb_param_spec *s = spec; s && s->name; s++)
    if (s->kind != KVB_PARAM_STRING && isnan(s->def) && !find_given(p, s->name))
      return KVB_ERROR(KVB_EINVAL, "%s: required parameter '%s' is missing", what, s->name);
  return KVB_OK;
}

double kvb_params_get(const kvb_params *p, const kvb_param_spec *spec, const char *name) {
  const kvb_param *it = find_given(p, name);
  if (it && !it->is_string) return it->num;
  const kvb_param_spec *s = find_spec(spec, name);
  return s ? s->def : NAN;
}

const char *kvb_params_get_str(const kvb_params *p, const kvb_param_spec *spec, const char *name) {
  const kvb_param *it = find_given(p, name);
  if (it && it->is_string) return it->str;
  const kvb_param_spec *s = find_spec(spec, name);
  return (s && s->sdef) ? s->sdef : "";
}

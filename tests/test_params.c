/* test_params.c — named-parameter parsing and validation (src/params.h): every malformed
 * assignment or out-of-spec value is an error naming the parameter, never a silent default. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <string.h>

static const kvb_param_spec spec[] = {
    {"delta", KVB_PARAM_REAL, NAN, 1e-300, INFINITY, NULL, "required real > 0"},
    {"t", KVB_PARAM_INT, 8, 1, 100, NULL, "integer in [1, 100], default 8"},
    {"name", KVB_PARAM_STRING, 0, 0, 0, "dflt", "a string"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static int msg_has(const char *needle) { return strstr(kvb_strerror_last(), needle) != NULL; }

/* Parses the assignments into p, returns the first parse error (or 0). */
static int parse_all(kvb_params *p, const char *const *a) {
  kvb_params_init(p);
  for (; *a; a++) {
    int rc = kvb_params_parse(p, *a);
    if (rc) return rc;
  }
  return 0;
}

int main(void) {
  kvb_params p;

  /* Parsing: numbers, strings, replacement. */
  {
    static const char *const a[] = {"delta=0.25", "name=abc", "t=3", "t=4", NULL};
    int rc = parse_all(&p, a);
    rc |= kvb_params_validate(&p, spec, "demo");
    CHECK(rc == 0 && p.n == 3 && kvb_params_get(&p, spec, "delta") == 0.25 &&
              kvb_params_get(&p, spec, "t") == 4 &&
              strcmp(kvb_params_get_str(&p, spec, "name"), "abc") == 0,
          "params.parse_and_replace", "rc %d n %zu", rc, p.n);
    static const char *const b[] = {"delta=1e-3", NULL};
    parse_all(&p, b);
    CHECK(kvb_params_validate(&p, spec, "demo") == 0 && kvb_params_get(&p, spec, "t") == 8 &&
              strcmp(kvb_params_get_str(&p, spec, "name"), "dflt") == 0 &&
              kvb_params_has(&p, "delta") && !kvb_params_has(&p, "t"),
          "params.defaults", "defaults not applied");
    static const char *const c[] = {"name=12abc", "delta=2", NULL};
    parse_all(&p, c);
    CHECK(kvb_params_validate(&p, spec, "demo") == 0 &&
              strcmp(kvb_params_get_str(&p, spec, "name"), "12abc") == 0,
          "params.partial_number_is_string", "'12abc' not kept as a string");
  }

  /* Malformed assignments. */
  {
    kvb_params_init(&p);
    int rc = kvb_params_parse(&p, "=3");
    CHECK(rc == KVB_EINVAL && msg_has("name=value"), "params.parse.empty_name", "%s '%s'",
          kvb_status_name(rc), kvb_strerror_last());
    rc = kvb_params_parse(&p, "delta");
    CHECK(rc == KVB_EINVAL && msg_has("'delta'"), "params.parse.no_equals", "%s '%s'",
          kvb_status_name(rc), kvb_strerror_last());
    rc = kvb_params_parse(&p, NULL);
    CHECK(rc == KVB_ENULL, "params.parse.null", "%s", kvb_status_name(rc));
    rc = kvb_params_parse(&p, "a_parameter_name_that_is_far_too_long_to_store=1");
    CHECK(rc == KVB_EINVAL && msg_has("too long"), "params.parse.long_name", "%s '%s'",
          kvb_status_name(rc), kvb_strerror_last());
    char big[200];
    memset(big, 'x', sizeof big);
    memcpy(big, "name=", 5);
    big[sizeof big - 1] = 0;
    rc = kvb_params_parse(&p, big);
    CHECK(rc == KVB_EINVAL && msg_has("longer than"), "params.parse.long_value", "%s '%s'",
          kvb_status_name(rc), kvb_strerror_last());
    rc = kvb_params_set_str(&p, "name", NULL);
    CHECK(rc == KVB_ENULL, "params.set_str_null", "%s", kvb_status_name(rc));
    CHECK(p.n == 0, "params.failed_parse_adds_nothing", "n = %zu", p.n);
    kvb_params_init(&p);
    char nm[16];
    int full = 0;
    for (int i = 0; i <= KVB_PARAMS_MAX; i++) {
      snprintf(nm, sizeof nm, "p%d", i);
      full = kvb_params_set(&p, nm, i);
    }
    CHECK(full == KVB_EINVAL && p.n == KVB_PARAMS_MAX && msg_has("more than"),
          "params.too_many", "%s n %zu", kvb_status_name(full), p.n);
  }

  /* Validation against the spec: each error names the parameter. */
  {
    struct {
      const char *name;
      const char *a[4];
      int want;
      const char *needle;
    } cases[] = {
        {"params.validate.unknown", {"delta=1", "tt=2"}, KVB_ENOTFOUND, "no parameter 'tt'"},
        {"params.validate.missing", {"t=2"}, KVB_EINVAL, "'delta' is missing"},
        {"params.validate.below_min", {"delta=0"}, KVB_EINVAL, "'delta' = 0 is outside"},
        {"params.validate.negative", {"delta=-2"}, KVB_EINVAL, "'delta' = -2 is outside"},
        {"params.validate.above_max", {"delta=1", "t=101"}, KVB_EINVAL, "'t' = 101 is outside"},
        {"params.validate.not_integer", {"delta=1", "t=2.5"}, KVB_EINVAL, "'t' must be an integer"},
        {"params.validate.nan", {"delta=nan"}, KVB_EDOM, "'delta' is not finite"},
        {"params.validate.inf", {"delta=inf"}, KVB_EDOM, "'delta' is not finite"},
        {"params.validate.string_for_number", {"delta=big"}, KVB_EINVAL, "'delta' takes a number"},
        {"params.validate.number_for_string", {"delta=1", "name=3"}, KVB_EINVAL,
         "'name' takes a name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      const char *a[5] = {cases[i].a[0], cases[i].a[1], cases[i].a[2], cases[i].a[3], NULL};
      int prc = parse_all(&p, a);
      int rc = kvb_params_validate(&p, spec, "demo");
      CHECK(prc == 0 && rc == cases[i].want && msg_has(cases[i].needle) && msg_has("demo"),
            cases[i].name, "got %s '%s'", kvb_status_name(rc), kvb_strerror_last());
    }
  }
  /* Messages are for users: no status name, no source position; the position is kept apart
   * for developers. */
  {
    kvb_params_init(&p);
    int rc = kvb_params_validate(&p, spec, "demo");
    const char *msg = kvb_strerror_last(), *where = kvb_error_where_last();
    CHECK(rc == KVB_EINVAL && strstr(msg, "delta") && !strstr(msg, "KVB_") && !strstr(msg, ".c:") &&
              strstr(where, ".c:"),
          "errors.message_for_users", "message '%s', where '%s'", msg, where);
    kvb_error_clear();
    CHECK(kvb_strerror_last()[0] == 0 && kvb_error_where_last()[0] == 0, "errors.clear",
          "after clear: '%s' '%s'", kvb_strerror_last(), kvb_error_where_last());
  }
  UNIT_EXIT();
}

/* registry.c — names to types (registry.h). One lookup serves the three tables: every type
 * struct begins with its `const char *name`, so a pointer to it is a pointer to its name.
 * Methods have a second, run-time table behind the built-in one: the types given to
 * kvb_method_register (plugins, Python; plugin.h), looked up after the built-ins and listed after
 * them by kvb_method_type_at. */
#include "registry.h"

#include <ctype.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"
#include "plugin.h"

static const void *find(const void *const *table, const char *name) {
  for (size_t i = 0; name && table[i]; i++)
    if (strcmp(*(const char *const *)table[i], name) == 0) return table[i];
  return NULL;
}

static const void *nth(const void *const *table, size_t i) {
  for (size_t k = 0; table[k]; k++)
    if (k == i) return table[k];
  return NULL;
}

#define TABLE(t) ((const void *const *)(t))

/* ---- run-time registered methods (plugin.h) ----
 * Slots are filled once and never moved or freed, and the count is published after the slot
 * (under the lock; readers load it atomically), so lookups need no lock and a pointer handed
 * out stays valid for the life of the process. */
#define KVB_RUNTIME_MAX 256
static kvb_method_type *rt_types[KVB_RUNTIME_MAX];
static char *rt_origin[KVB_RUNTIME_MAX];
static size_t rt_n;
static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t rt_count(void) { return __atomic_load_n(&rt_n, __ATOMIC_ACQUIRE); }

static const kvb_method_type *rt_find(const char *name) {
  size_t n = rt_count();
  for (size_t i = 0; name && i < n; i++)
    if (strcmp(rt_types[i]->name, name) == 0) return rt_types[i];
  return NULL;
}

static size_t builtin_count(void) {
  size_t n = 0;
  while (kvb_method_registry[n]) n++;
  return n;
}

const kvb_method_type *kvb_method_lookup(const char *name) {
  const kvb_method_type *t = find(TABLE(kvb_method_registry), name);
  return t ? t : rt_find(name);
}
const kvb_stream_type *kvb_stream_lookup(const char *name) { return find(TABLE(kvb_stream_registry), name); }
const kvb_probe_type *kvb_probe_lookup(const char *name) { return find(TABLE(kvb_probe_registry), name); }
const kvb_method_type *kvb_method_type_at(size_t i) {
  size_t nb = builtin_count();
  if (i < nb) return kvb_method_registry[i];
  return i - nb < rt_count() ? rt_types[i - nb] : NULL;
}
const kvb_stream_type *kvb_stream_type_at(size_t i) { return nth(TABLE(kvb_stream_registry), i); }
const kvb_probe_type *kvb_probe_type_at(size_t i) { return nth(TABLE(kvb_probe_registry), i); }

int kvb_method_alloc(const char *name, const kvb_method_config *cfg, const kvb_params *p,
                     kvb_method **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "output pointer is NULL");
  *out = NULL;
  if (!name) return KVB_ERROR(KVB_ENULL, "method name is NULL");
  const kvb_method_type *t = kvb_method_lookup(name);
  if (!t) return KVB_ERROR(KVB_ENOTFOUND, "no method named '%s' (see `kvbound list`)", name);
  int st = kvb_method_alloc_type(t, cfg, p, out);
  /* A method that failed without saying why got method.c's default reason; name where it came
   * from (a plugin's path), the one thing the user can act on. */
  const char *origin = st ? kvb_method_origin(t) : NULL;
  if (origin && strstr(kvb_strerror_last(), KVB_METHOD_NO_REASON)) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s; it comes from %s", kvb_strerror_last(), origin);
    KVB_ERROR(st, "%s", msg);
  }
  return st;
}

int kvb_stream_generate(const char *name, const kvb_params *p, gsl_rng *rng, kvb_stream **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "stream output pointer is NULL");
  *out = NULL;
  const kvb_stream_type *t = kvb_stream_lookup(name);
  if (!t)
    return KVB_ERROR(KVB_ENOTFOUND, "no stream named '%s' (see `kvbound list`)", name ? name : "(null)");
  return kvb_stream_generate_type(t, p, rng, out);
}

int kvb_probe_run(const char *name, const kvb_stream *s, const kvb_params *p, gsl_rng *rng,
                  size_t nq, const size_t *js, double *out) {
  const kvb_probe_type *t = kvb_probe_lookup(name);
  if (!t) return KVB_ERROR(KVB_EINVAL, "no probe named '%s' is registered", name ? name : "(null)");
  return kvb_probe_run_type(t, s, p, rng, nq, js, out);
}

/* The refusals of kvb_method_register (plugin.h) for one type; `what` names it in messages. */
static int check_type(const kvb_method_type *t, size_t type_size, const char *what) {
  if (!t) return KVB_ERROR(KVB_ENULL, "%s: the method type is NULL", what);
  if (type_size < KVB_METHOD_TYPE_MIN_SIZE)
    return KVB_ERROR(KVB_EINVAL,
                     "%s: type_size %zu is smaller than kvb_method_type's frozen prefix (%zu bytes, "
                     "the members up to free_state): not a kvb_method_type of kvbound's method.h",
                     what, type_size, (size_t)KVB_METHOD_TYPE_MIN_SIZE);
  if (!t->name) return KVB_ERROR(KVB_ENULL, "%s: the method's name is NULL", what);
  if (!t->name[0]) return KVB_ERROR(KVB_EINVAL, "%s: the method's name is empty", what);
  for (const char *c = t->name; *c; c++)
    if (*c == ',' || *c == '=' || *c == '"' || isspace((unsigned char)*c))
      return KVB_ERROR(KVB_EINVAL,
                       "%s: method name '%s' contains '%c' (a name must be writable in a spec and "
                       "in --method NAME,k=v: no ',', '=', quote or whitespace)",
                       what, t->name, isspace((unsigned char)*c) ? ' ' : *c);
  if (strlen(t->name) >= 64)
    return KVB_ERROR(KVB_EINVAL, "%s: method name '%.20s...' is longer than 63 characters", what, t->name);
  const kvb_method_type *prev = kvb_method_lookup(t->name);
  if (prev)
    return KVB_ERROR(KVB_EINVAL, "%s: duplicate name: a method named '%s' is already registered "
                     "(%s); names must be unique", what, t->name,
                     kvb_method_origin(prev) ? kvb_method_origin(prev) : "a built-in");
  const char *null_cb = !t->init ? "init" : !t->update ? "update" : !t->query ? "query"
                       : !t->memory ? "memory" : !t->free_state ? "free_state" : NULL;
  if (null_cb)
    return KVB_ERROR(KVB_ENULL, "%s: method '%s' has a NULL %s callback (init, update, query, "
                     "memory and free_state are all required)", what, t->name, null_cb);
  if (!t->params)
    return KVB_ERROR(KVB_ENULL, "%s: method '%s' has a NULL params table (give an empty table: one "
                     "row whose name is NULL)", what, t->name);
  /* The ABI v1 members exist only when the registrant's type reaches them. */
  kvb_method_type v1;
  memset(&v1, 0, sizeof v1);
  memcpy(&v1, t, type_size < sizeof v1 ? type_size : sizeof v1);
  if (v1.declares & ~KVB_DECLARES_ALL)
    return KVB_ERROR(KVB_EINVAL, "%s: method '%s' declares unknown property bits 0x%x (ABI v1 knows "
                     "UNBIASED_NUM 1, UNBIASED_DEN 2, ERROR_BOUND 4)", what, t->name,
                     v1.declares & ~KVB_DECLARES_ALL);
  if ((v1.declares & (KVB_DECLARES_UNBIASED_NUM | KVB_DECLARES_UNBIASED_DEN)) && !v1.query_parts)
    return KVB_ERROR(KVB_ENULL, "%s: method '%s' declares itself unbiased but its query_parts "
                     "callback is NULL (the unbiasedness tests need the estimates of N and D)",
                     what, t->name);
  if ((v1.declares & KVB_DECLARES_ERROR_BOUND) && !v1.error_bound)
    return KVB_ERROR(KVB_ENULL, "%s: method '%s' declares an error bound but its error_bound "
                     "callback is NULL", what, t->name);
  if (!(v1.equivalence_tol >= 0))
    return KVB_ERROR(KVB_EINVAL, "%s: method '%s' has equivalence_tol %g (must be >= 0)", what,
                     t->name, v1.equivalence_tol);
  if (v1.in_model & ~KVB_IN_MODEL_ALL)
    return KVB_ERROR(KVB_EINVAL, "%s: method '%s' has unknown in_model bits 0x%x (known: "
                     "ONCE_AT_PROMPT 1, PER_LAYER 2, SHARED_MASK 4)", what, t->name,
                     v1.in_model & ~KVB_IN_MODEL_ALL);
  if (v1.observe > KVB_OBSERVE_WINDOW)
    return KVB_ERROR(KVB_EINVAL, "%s: method '%s' has observe %u (known: NONE 0, PROMPT 1, "
                     "WINDOW 2)", what, t->name, v1.observe);
  return KVB_OK;
}

static char *dup_or(const char *s, const char *fallback) {
  const char *src = s ? s : fallback;
  if (!src) return NULL;
  size_t n = strlen(src) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, src, n);
  return d;
}

static void free_copy(kvb_method_type *c) {
  if (!c) return;
  free((char *)c->name), free((char *)c->summary), free((char *)c->source);
  free((char *)c->equivalent_to), free(c);
}

int kvb_method_register_all(const kvb_method_type *const *ts, size_t n, size_t type_size,
                            const char *origin) {
  if (!ts && n) return KVB_ERROR(KVB_ENULL, "register: the list of method types is NULL");
  const char *what = origin ? origin : "kvb_method_register";
  pthread_mutex_lock(&rt_lock);
  int st = KVB_OK;
  if (rt_count() + n > KVB_RUNTIME_MAX)
    st = KVB_ERROR(KVB_EINVAL, "%s: more than %d run-time registered methods", what, KVB_RUNTIME_MAX);
  for (size_t i = 0; !st && i < n; i++) {
    st = check_type(ts[i], type_size, what);
    for (size_t j = 0; !st && j < i; j++)
      if (strcmp(ts[i]->name, ts[j]->name) == 0)
        st = KVB_ERROR(KVB_EINVAL, "%s: method name '%s' appears twice in its list of types", what,
                       ts[i]->name);
  }
  /* Copy everything first, so that running out of memory half way also leaves no trace. */
  kvb_method_type *copies[KVB_RUNTIME_MAX] = {0};
  char *orig = NULL;
  for (size_t i = 0; !st && i < n; i++) {
    kvb_method_type *c = calloc(1, sizeof *c);
    if (c) {
      memcpy(c, ts[i], type_size < sizeof *c ? type_size : sizeof *c);
      c->name = dup_or(ts[i]->name, NULL);
      c->summary = dup_or(c->summary, "(no summary)");
      c->source = dup_or(c->source, "(no source given)");
      const char *eq = c->equivalent_to; /* zero when type_size does not reach it */
      c->equivalent_to = eq ? dup_or(eq, NULL) : NULL;
      if (!c->name || !c->summary || !c->source || (eq && !c->equivalent_to)) free_copy(c), c = NULL;
    }
    copies[i] = c;
    if (!c) st = KVB_ERROR(KVB_ENOMEM, "%s: out of memory", what);
  }
  if (!st && origin && !(orig = dup_or(origin, NULL))) st = KVB_ERROR(KVB_ENOMEM, "%s: out of memory", what);
  if (st) {
    for (size_t i = 0; i < n; i++) free_copy(copies[i]);
    free(orig);
  } else {
    size_t base = rt_n;
    for (size_t i = 0; i < n; i++) {
      rt_types[base + i] = copies[i];
      rt_origin[base + i] = orig; /* shared by a plugin's types; never freed */
    }
    __atomic_store_n(&rt_n, base + n, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&rt_lock);
  return st;
}

int kvb_method_register(const kvb_method_type *t, size_t type_size) {
  return kvb_method_register_all(&t, 1, type_size, NULL);
}

const char *kvb_method_origin(const kvb_method_type *t) {
  size_t n = rt_count();
  for (size_t i = 0; t && i < n; i++)
    if (rt_types[i] == t) return rt_origin[i] ? rt_origin[i] : "registered at run time";
  return NULL;
}

/* test_plugin.c — the plugin / registration contract (src/core/plugin.h): kvb_method_register
 * refuses every malformed type with a message naming the problem and leaves the registry as it
 * was; a registered type is found by name and run like a built-in, with the ABI v1 members a
 * shorter (older) type lacks zero; kvb_plugin_load refuses a wrong ABI version (newer and
 * older), a missing entry
 * symbol and a NULL callback, registering nothing, and loads a good plugin (the worked example,
 * tests/plugins/strided_sample.c, built by make into build/plugins/) once. */
#include "kvbound.h"
#include "sha256.h"
#include "unit.h"

#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kvb_param_spec no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

/* A minimal method: remembers the last value and answers it. */
typedef struct {
  double last[8];
} echo_state;
static int echo_init(kvb_method *m, const kvb_params *p) {
  (void)p;
  echo_state *s = calloc(1, sizeof *s);
  if (!s) return KVB_ENOMEM;
  kvb_method_set_state(m, s);
  return KVB_OK;
}
static int echo_update(kvb_method *m, const double *k, const double *v) {
  (void)k;
  echo_state *s = kvb_method_state(m);
  memcpy(s->last, v, kvb_method_d_value(m) * sizeof *v);
  return KVB_OK;
}
static int echo_query(kvb_method *m, const double *q, double *z) {
  (void)q;
  echo_state *s = kvb_method_state(m);
  memcpy(z, s->last, kvb_method_d_value(m) * sizeof *z);
  return KVB_OK;
}
static void echo_memory(const kvb_method *m, kvb_memory *out) {
  out->vectors = 1;
  out->bytes = kvb_method_d_value(m) * sizeof(double);
}
static int echo_parts(kvb_method *m, const double *q, double *num, double *den) {
  (void)m, (void)q, (void)num, (void)den;
  return KVB_OK;
}

static int silent_update(kvb_method *m, const double *k, const double *v) {
  (void)m, (void)k, (void)v;
  return KVB_EFAIL; /* no message */
}

static kvb_method_type echo_type(const char *name) {
  kvb_method_type t = {.name = name, .summary = "echo", .source = "test", .params = no_params,
                       .init = echo_init, .update = echo_update, .query = echo_query,
                       .memory = echo_memory, .free_state = free};
  return t;
}

static size_t count_types(void) {
  size_t n = 0;
  while (kvb_method_type_at(n)) n++;
  return n;
}

static int msg_has(const char *s) { return strstr(kvb_strerror_last(), s) != NULL; }

/* A refusal: status non-zero, the message names `what`, the registry's size unchanged. */
static void refused(const kvb_method_type *t, size_t size, const char *what, const char *name) {
  size_t before = count_types();
  int st = kvb_method_register(t, size);
  CHECK(st != KVB_OK && msg_has(what) && count_types() == before, name,
        "status %s, message '%s' (wanted '%s'), types %zu -> %zu", kvb_status_name(st),
        kvb_strerror_last(), what, before, count_types());
}

static char plugin_dir[4096];
static const char *plugin(const char *name) {
  static char path[4200];
  snprintf(path, sizeof path, "%s/%s.so", plugin_dir, name);
  return path;
}

int main(int argc, char **argv) {
  (void)argc;
  char self[4096];
  snprintf(self, sizeof self, "%s", argv[0]);
  snprintf(plugin_dir, sizeof plugin_dir, "%s/../plugins", dirname(self));
  size_t nb = count_types();

  /* ---- kvb_method_register: each refusal, the registry unchanged ---- */
  kvb_method_type t = echo_type("t_echo");
  refused(NULL, sizeof t, "NULL", "plugin.register.null_type");
  refused(&t, KVB_METHOD_TYPE_MIN_SIZE - 1, "smaller than kvb_method_type's frozen prefix",
          "plugin.register.short_type_size");
  t.name = NULL;
  refused(&t, sizeof t, "name is NULL", "plugin.register.null_name");
  t.name = "bad,name";
  refused(&t, sizeof t, "contains ','", "plugin.register.comma_in_name");
  t.name = "exact";
  refused(&t, sizeof t, "duplicate name", "plugin.register.duplicate_builtin");
  t = echo_type("t_echo");
  t.query = NULL;
  refused(&t, sizeof t, "NULL query callback", "plugin.register.null_query");
  t = echo_type("t_echo");
  t.free_state = NULL;
  refused(&t, sizeof t, "NULL free_state callback", "plugin.register.null_free_state");
  t = echo_type("t_echo");
  t.params = NULL;
  refused(&t, sizeof t, "NULL params table", "plugin.register.null_params");
  t = echo_type("t_echo");
  t.declares = KVB_DECLARES_UNBIASED_NUM;
  refused(&t, sizeof t, "query_parts callback is NULL", "plugin.register.unbiased_without_parts");
  t = echo_type("t_echo");
  t.declares = KVB_DECLARES_ERROR_BOUND;
  refused(&t, sizeof t, "error_bound callback is NULL", "plugin.register.bound_without_callback");
  t = echo_type("t_echo");
  t.declares = 64;
  refused(&t, sizeof t, "unknown property bits", "plugin.register.unknown_declares");

  /* ---- a good registration: found by name, listed after the built-ins, runs ---- */
  t = echo_type("t_echo");
  t.declares = KVB_DECLARES_UNBIASED_DEN;
  t.query_parts = echo_parts;
  char name_buf[16] = "t_echo";
  t.name = name_buf; /* the registry copies the name: the caller's buffer may change after */
  int st = kvb_method_register(&t, sizeof t);
  name_buf[0] = 'X';
  const kvb_method_type *got = kvb_method_lookup("t_echo");
  CHECK(st == KVB_OK && got && got != &t && kvb_method_type_at(nb) == got && !kvb_method_type_at(nb + 1) &&
            got->declares == KVB_DECLARES_UNBIASED_DEN &&
            strcmp(kvb_method_origin(got), "registered at run time") == 0 &&
            kvb_method_origin(kvb_method_lookup("exact")) == NULL,
        "plugin.register.found_by_name", "status %s '%s'", kvb_status_name(st), kvb_strerror_last());
  t.name = "t_echo";
  refused(&t, sizeof t, "duplicate name", "plugin.register.duplicate_registered");
  {
    kvb_method_config cfg = {3, 2, 1.0, NULL};
    kvb_method *m = NULL;
    double k[3] = {1, 2, 3}, v[2] = {4, 5}, z[2] = {0, 0};
    st = kvb_method_alloc("t_echo", &cfg, NULL, &m);
    if (!st) st = kvb_method_update(m, k, 3, v, 2);
    if (!st) st = kvb_method_query(m, k, 3, z, 2);
    CHECK(st == KVB_OK && z[0] == 4 && z[1] == 5 && kvb_method_d_key(m) == 3 &&
              kvb_method_scale(m) == 1.0 && isnan(kvb_method_uniform(m)),
          "plugin.register.runs_like_a_builtin", "status %s '%s'", kvb_status_name(st),
          kvb_strerror_last());
    kvb_method_free(m);
  }
  /* An older, shorter type (only the frozen prefix): the v1 members read as zero, whatever the
   * caller's bytes beyond its size hold. */
  {
    kvb_method_type old = echo_type("t_old");
    old.declares = 7; /* beyond the size given: must not be read */
    st = kvb_method_register(&old, KVB_METHOD_TYPE_MIN_SIZE);
    got = kvb_method_lookup("t_old");
    CHECK(st == KVB_OK && got && got->declares == 0 && !got->query_parts && !got->error_bound &&
              !got->equivalent_to && got->equivalence_tol == 0,
          "plugin.register.short_type_zero_filled", "status %s '%s'", kvb_status_name(st),
          kvb_strerror_last());
  }

  /* ---- kvb_plugin_load ---- */
  size_t before = count_types();
  st = kvb_plugin_load(plugin("bad_abi"));
  CHECK(st != KVB_OK && msg_has("wrong ABI version") && msg_has("99") && count_types() == before,
        "plugin.load.wrong_abi", "status %s '%s'", kvb_status_name(st), kvb_strerror_last());
  /* the rule both ways (plugin.h): exactly this ABI version; an older one is refused too */
  st = kvb_plugin_load(plugin("old_abi"));
  char want_v[32];
  snprintf(want_v, sizeof want_v, "ABI version %u", KVB_PLUGIN_ABI_VERSION - 1);
  CHECK(st != KVB_OK && msg_has("wrong ABI version") && msg_has(want_v) &&
            count_types() == before && !kvb_method_lookup("old_abi_method"),
        "plugin.load.older_abi_refused", "status %s '%s'", kvb_status_name(st),
        kvb_strerror_last());
  st = kvb_plugin_load(plugin("no_entry"));
  CHECK(st != KVB_OK && msg_has("missing symbol kvb_plugin_entry") && count_types() == before,
        "plugin.load.missing_symbol", "status %s '%s'", kvb_status_name(st), kvb_strerror_last());
  st = kvb_plugin_load(plugin("null_callback"));
  CHECK(st != KVB_OK && msg_has("NULL query callback") && msg_has("null_callback.so") &&
            count_types() == before && !kvb_method_lookup("no_query"),
        "plugin.load.null_callback", "status %s '%s'", kvb_status_name(st), kvb_strerror_last());
  /* a callback failing without a message: a stated default reason (method, status, plugin
   * path), not the empty or stale message of an earlier call */
  st = kvb_plugin_load(plugin("silent_init"));
  {
    kvb_method_config cfg = {2, 1, 1.0, NULL};
    kvb_params p;
    kvb_params_init(&p);
    kvb_method *m = (kvb_method *)&cfg;
    KVB_ERROR(KVB_EIO, "a stale message of an earlier call");
    int sa = st ? st : kvb_method_alloc("silent_init", &cfg, &p, &m);
    CHECK(st == KVB_OK && sa == KVB_EINVAL && !m && msg_has("silent_init") && msg_has("init") &&
              msg_has("KVB_EINVAL") && msg_has("gave no reason") && msg_has("silent_init.so") &&
              !msg_has("stale"),
          "plugin.init_failure_without_message_named", "load %s, alloc %s: '%s'",
          kvb_status_name(st), kvb_status_name(sa), kvb_strerror_last());
  }
  {
    static kvb_method_type t;
    t = echo_type("silent_update");
    t.update = silent_update;
    kvb_method_config cfg = {2, 1, 1.0, NULL};
    kvb_params p;
    kvb_params_init(&p);
    kvb_method *m = NULL;
    double k[2] = {0, 0}, v = 1;
    int sr = kvb_method_register(&t, sizeof t);
    int sa = sr ? sr : kvb_method_alloc("silent_update", &cfg, &p, &m);
    KVB_ERROR(KVB_EIO, "a stale message of an earlier call");
    int su = sa ? sa : kvb_method_update(m, k, 2, &v, 1);
    CHECK(su == KVB_EFAIL && msg_has("silent_update") && msg_has("update callback") &&
              msg_has("KVB_EFAIL") && !msg_has("stale"),
          "plugin.update_failure_without_message_named", "status %s: '%s'", kvb_status_name(su),
          kvb_strerror_last());
    kvb_method_free(m);
  }
  before = count_types();
  st = kvb_plugin_load(plugin("does_not_exist"));
  CHECK(st != KVB_OK && msg_has("no such file") && count_types() == before,
        "plugin.load.no_such_file", "status %s '%s'", kvb_status_name(st), kvb_strerror_last());
  st = kvb_plugin_load(plugin("strided_sample"));
  int st2 = kvb_plugin_load(plugin("strided_sample")); /* the same file again: a no-op */
  got = kvb_method_lookup("strided_sample");
  CHECK(st == KVB_OK && st2 == KVB_OK && got && count_types() == before + 1 &&
            strstr(kvb_method_origin(got), "strided_sample.so"),
        "plugin.load.good_plugin", "status %s/%s '%s'", kvb_status_name(st), kvb_status_name(st2),
        kvb_strerror_last());
  /* its identity: the real path, size, SHA-256 and ABI version of the file loaded, also found
   * from its method's type; a built-in has none */
  {
    kvb_plugin_identity id, of;
    char hex[65] = "";
    unsigned long long size = 0;
    int n = 0, at = -1; /* the plugins loaded before it (silent_init, …) have their own rows */
    while (kvb_plugin_identity_at((size_t)n, &id) == KVB_OK) {
      if (strstr(id.path, "strided_sample.so")) at = n;
      n++;
    }
    int ok = at >= 0 && kvb_plugin_identity_at((size_t)at, &id) == KVB_OK &&
             kvb_sha256_file(plugin("strided_sample"), hex, &size) == KVB_OK;
    CHECK(ok && strcmp(id.sha256, hex) == 0 && id.size == size && id.abi_version == KVB_PLUGIN_ABI_VERSION &&
              strstr(id.path, "strided_sample.so") && kvb_plugin_identity_of(got, &of) == KVB_OK &&
              strcmp(of.sha256, hex) == 0 &&
              kvb_plugin_identity_of(kvb_method_lookup("exact"), &of) == KVB_ENOTFOUND,
          "plugin.identity.recorded", "n %d sha %s vs %s", n, ok ? id.sha256 : "-", hex);
  }
  {
    kvb_method_config cfg = {2, 1, 1.0, NULL};
    kvb_params p;
    kvb_params_init(&p);
    kvb_params_set(&p, "stride", 2);
    kvb_method *m = NULL;
    double z = 0, q[2] = {0, 0};
    st = kvb_method_alloc("strided_sample", &cfg, &p, &m);
    for (int i = 0; !st && i < 5; i++) {
      double k[2] = {0, 0}, v = i; /* kept: tokens 0, 2, 4; equal scores, so z = mean = 2 */
      st = kvb_method_update(m, k, 2, &v, 1);
    }
    if (!st) st = kvb_method_query(m, q, 2, &z, 1);
    kvb_memory mem;
    kvb_method_memory(m, &mem);
    CHECK(st == KVB_OK && fabs(z - 2) < 1e-15 && mem.vectors == 6 && mem.bytes == 3 * 3 * 8,
          "plugin.load.plugin_method_runs", "status %s '%s' z %g vectors %zu", kvb_status_name(st),
          kvb_strerror_last(), z, mem.vectors);
    kvb_method_free(m);
  }
  /* KVBOUND_PLUGINS: a bad entry names the variable and the file. */
  setenv("KVBOUND_PLUGINS", plugin("bad_abi"), 1);
  st = kvb_plugins_load_env();
  CHECK(st != KVB_OK && msg_has("KVBOUND_PLUGINS") && msg_has("bad_abi.so"),
        "plugin.load.env_names_the_file", "status %s '%s'", kvb_status_name(st), kvb_strerror_last());
  UNIT_EXIT();
}

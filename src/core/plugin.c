/* plugin.c — loading method plugins (plugin.h): dlopen, the ABI checks, registration of the
 * plugin's types all or none. The run-time registry itself is the application's
 * (src/app/registry.c, kvb_method_register_all). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "plugin.h"
#include "kvb_error.h"
#include "sha256.h"

#include <dlfcn.h>
#include <stdio.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Real paths of the plugins loaded so far, so that loading one twice (KVBOUND_PLUGINS and
 * --plugin naming the same file) is a no-op rather than a duplicate-name error. */
#define KVB_PLUGINS_MAX 64
static char *loaded[KVB_PLUGINS_MAX];
/* Each loaded plugin's identity (plugin.h, kvb_plugin_identity_at): what a record of a run
 * names instead of code to load. The bytes are hashed just before dlopen of the same path. */
static kvb_plugin_identity ident[KVB_PLUGINS_MAX];
static size_t n_loaded;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

typedef const kvb_plugin_info *(*entry_fn)(void);

static int load_locked(const char *path) {
  char real[PATH_MAX];
  if (!realpath(path, real))
    return KVB_ERROR(KVB_EIO, "plugin %s: no such file (or it cannot be read)", path);
  for (size_t i = 0; i < n_loaded; i++)
    if (strcmp(loaded[i], real) == 0) return KVB_OK;
  if (n_loaded == KVB_PLUGINS_MAX)
    return KVB_ERROR(KVB_EINVAL, "plugin %s: more than %d plugins loaded", path, KVB_PLUGINS_MAX);
  kvb_plugin_identity id = {.abi_version = 0};
  int hst = kvb_sha256_file(real, id.sha256, &id.size);
  if (hst) return hst;
  /* RTLD_NOW: an unresolved symbol is an error now, not a crash in the middle of a run. */
  void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *why = dlerror();
    return KVB_ERROR(KVB_EIO, "plugin %s: cannot be loaded as a shared library: %s", path,
                     why ? why : "(no reason given)");
  }
  dlerror();
  void *sym = dlsym(h, KVB_PLUGIN_ENTRY);
  if (!sym) {
    dlclose(h);
    return KVB_ERROR(KVB_ENOTFOUND,
                     "plugin %s: missing symbol %s (a kvbound plugin exports `const kvb_plugin_info "
                     "*%s(void)`; see plugin.h)", path, KVB_PLUGIN_ENTRY, KVB_PLUGIN_ENTRY);
  }
  entry_fn entry;
  memcpy(&entry, &sym, sizeof entry); /* POSIX: a data pointer from dlsym to a function pointer */
  const kvb_plugin_info *info = entry();
  int st = KVB_OK;
  if (!info)
    st = KVB_ERROR(KVB_ENULL, "plugin %s: %s() returned NULL", path, KVB_PLUGIN_ENTRY);
  /* The compatibility rule (plugin.h): exactly this ABI version. An older plugin's frozen part
   * is another layout and a newer one's is unknown here; both are refused, never misread. */
  else if (info->abi_version != KVB_PLUGIN_ABI_VERSION)
    st = KVB_ERROR(KVB_EINVAL,
                   "plugin %s: wrong ABI version: built for plugin ABI version %u, this kvbound "
                   "speaks version %u (rebuild it against this kvbound's headers)", path,
                   (unsigned)info->abi_version, KVB_PLUGIN_ABI_VERSION);
  else if (info->method_type_size < KVB_METHOD_TYPE_MIN_SIZE)
    st = KVB_ERROR(KVB_EINVAL,
                   "plugin %s: method_type_size %u is smaller than kvb_method_type's frozen prefix "
                   "(%zu bytes): set it to sizeof(kvb_method_type)", path,
                   (unsigned)info->method_type_size, (size_t)KVB_METHOD_TYPE_MIN_SIZE);
  else if (info->n_methods == 0 || !info->methods)
    st = KVB_ERROR(KVB_EINVAL, "plugin %s: lists no method types (n_methods = %zu, methods %s)",
                   path, info->n_methods, info->methods ? "set" : "NULL");
  for (size_t i = 0; !st && i < info->n_methods; i++)
    if (!info->methods[i])
      st = KVB_ERROR(KVB_ENULL, "plugin %s: method type %zu of %zu is NULL", path, i + 1,
                     info->n_methods);
  if (!st) st = kvb_method_register_all(info->methods, info->n_methods, info->method_type_size, path);
  if (st) {
    dlclose(h);
    return st;
  }
  /* Never closed: the registry keeps pointers to the plugin's callbacks and tables. */
  loaded[n_loaded] = strdup(real);
  if (loaded[n_loaded]) {
    id.path = loaded[n_loaded];
    id.abi_version = info->abi_version;
    ident[n_loaded++] = id;
  }
  return KVB_OK;
}

const char *kvb_plugin_loaded_path(size_t i) {
  pthread_mutex_lock(&load_lock);
  const char *p = i < n_loaded ? loaded[i] : NULL;
  pthread_mutex_unlock(&load_lock);
  return p;
}

int kvb_plugin_identity_at(size_t i, kvb_plugin_identity *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "plugin identity: NULL argument");
  pthread_mutex_lock(&load_lock);
  int ok = i < n_loaded;
  if (ok) *out = ident[i];
  pthread_mutex_unlock(&load_lock);
  return ok ? KVB_OK : KVB_ENOTFOUND; /* past the last: the end of the list, not an error */
}

int kvb_plugin_identity_of(const kvb_method_type *t, kvb_plugin_identity *out) {
  if (!t || !out) return KVB_ERROR(KVB_ENULL, "plugin identity: NULL argument");
  const char *origin = kvb_method_origin(t);
  char real[PATH_MAX];
  if (!origin || !realpath(origin, real)) return KVB_ENOTFOUND;
  pthread_mutex_lock(&load_lock);
  int found = 0;
  for (size_t i = 0; i < n_loaded && !found; i++)
    if (strcmp(loaded[i], real) == 0) *out = ident[i], found = 1;
  pthread_mutex_unlock(&load_lock);
  return found ? KVB_OK : KVB_ENOTFOUND;
}

int kvb_plugin_load(const char *path) {
  if (!path || !path[0]) return KVB_ERROR(KVB_ENULL, "plugin: the path is NULL or empty");
  pthread_mutex_lock(&load_lock);
  int st = load_locked(path);
  pthread_mutex_unlock(&load_lock);
  return st;
}

int kvb_plugins_load_env(void) {
  const char *env = getenv("KVBOUND_PLUGINS");
  if (!env || !env[0]) return KVB_OK;
  char *list = strdup(env);
  if (!list) return KVB_ERROR(KVB_ENOMEM, "KVBOUND_PLUGINS: out of memory");
  int st = KVB_OK;
  char *save = NULL;
  for (char *p = strtok_r(list, ":", &save); p && !st; p = strtok_r(NULL, ":", &save)) {
    st = kvb_plugin_load(p);
    if (st) {
      char msg[512], where[128];
      snprintf(msg, sizeof msg, "KVBOUND_PLUGINS: %s", kvb_strerror_last());
      snprintf(where, sizeof where, "%s", kvb_error_where_last());
      st = kvb_error_restore(st, msg, where);
    }
  }
  free(list);
  return st;
}

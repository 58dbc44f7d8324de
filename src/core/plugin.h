/* plugin.h — methods from outside the tree: shared-library plugins and run-time registration.
 *
 * A plugin is a shared library built against the installed headers
 * (cc $(pkg-config --cflags --libs kvbound) -shared -fPIC my_method.c -o my_method.so) that
 * exports one function, KVB_PLUGIN_ENTRY, returning a kvb_plugin_info: the ABI version it was
 * built with, sizeof(kvb_method_type) as it saw it, and its method types. kvb_plugin_load opens
 * it, checks it and registers every type with kvb_method_register; from then on the method is
 * found by name like a built-in (kvb_method_lookup, `kvbound list`, specs, kvb-props --method).
 * `kvbound run --plugin PATH`, `kvb-props --plugin PATH` and the environment variable
 * KVBOUND_PLUGINS=path1:path2 load plugins (src/README.md, "Your own method").
 *
 * The ABI. kvb_method_type (method.h) is the interface kvbound's own methods implement. Its
 * members up to free_state are frozen (the prefix KVB_METHOD_TYPE_MIN_SIZE); ABI v1 appended
 * declares, query_parts, error_bound, equivalent_to and equivalence_tol, then in_model and
 * observe; a later version may only append. A registrant passes the size of the type it was compiled with: the registry copies
 * that many bytes (at most its own sizeof) into zeroed storage it keeps, so a shorter, older type
 * still loads with the new members zero ("declares nothing") and a longer, newer one is cut to
 * what this kvbound knows. KVB_PLUGIN_ABI_VERSION changes only if the frozen part changes (then
 * an old plugin is refused rather than misread). struct kvb_method is not part of the ABI: a
 * plugin reaches its instance through the accessors of method.h (kvb_method_state, ...).
 *
 * Registration is process-wide and permanent (a registered type is never removed, and a loaded
 * library is never closed, so pointers handed out stay valid); it is thread-safe. */
#ifndef KVB_PLUGIN_H
#define KVB_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "method.h"

#define KVB_PLUGIN_ABI_VERSION 1u
#define KVB_PLUGIN_ENTRY "kvb_plugin_entry" /* const kvb_plugin_info *kvb_plugin_entry(void); */

typedef struct {
  uint32_t abi_version;      /* KVB_PLUGIN_ABI_VERSION the plugin was built with */
  uint32_t method_type_size; /* sizeof(kvb_method_type) the plugin was built with */
  size_t n_methods;
  const kvb_method_type *const *methods;
} kvb_plugin_info;

/* dlopen(path) + the checks above + kvb_method_register of each type, all or none: a plugin with
 * one bad type registers nothing. Loading the same file (same real path) again is a no-op. On
 * error a message names the file and the problem (no such file, no KVB_PLUGIN_ENTRY symbol, wrong
 * ABI version, and each refusal of kvb_method_register). */
int kvb_plugin_load(const char *path);
/* Loads every plugin named in $KVBOUND_PLUGINS (paths separated by ':'; unset or empty: none).
 * Stops at the first failure, whose message names the file. */
int kvb_plugins_load_env(void);

/* Runtime registration (plugins, Python): copies min(type_size, sizeof(kvb_method_type)) bytes
 * into zeroed storage kept by the registry, so older/shorter types still load; the name, summary,
 * source and equivalent_to strings are copied too. Refuses with a message naming the problem:
 * NULL type, NULL or empty name or one with ',', '=' or whitespace (it could not be written in a
 * spec or in --method NAME,PARAMS), duplicate name (built-in or registered),
 * NULL init/update/query/memory/free_state, NULL params table, type_size smaller than the frozen
 * prefix, a declared property without its callback (UNBIASED_NUM/DEN without query_parts,
 * ERROR_BOUND without error_bound) or unknown declares bits. After success
 * kvb_method_lookup(name) and kvb_method_type_at() see it; on refusal the registry is unchanged. */
int kvb_method_register(const kvb_method_type *t, size_t type_size);
/* kvb_method_register of n types, all or none (the checks of every type, and of the names among
 * themselves, before any is added); origin is kept for kvb_method_origin (copied; NULL: "registered
 * at run time"). What kvb_plugin_load uses. */
int kvb_method_register_all(const kvb_method_type *const *ts, size_t n, size_t type_size,
                            const char *origin);
/* The real path of the i-th plugin loaded in this process (in load order), NULL past the last:
 * what a record of a run names so that it can be loaded again (kvb-props shard metadata,
 * kvbound run's meta.json). */
const char *kvb_plugin_loaded_path(size_t i);
/* What a record of a run names instead of code (a shard's metadata; src/README.md, "Your own
 * method"): a plugin is trusted native code — loading one runs it — so a results directory
 * records each plugin's identity, and a merge compares identities and loads only plugins its
 * own command line names. path is the real path (valid for the process's life), sha256 the
 * file's bytes as hashed just before they were loaded, abi_version what its entry declared. */
typedef struct {
  const char *path;
  unsigned long long size;
  char sha256[65];
  uint32_t abi_version;
} kvb_plugin_identity;
/* The identity of the i-th plugin loaded (load order): KVB_OK, or KVB_ENOTFOUND past the last
 * (no error message: the end of the list). */
int kvb_plugin_identity_at(size_t i, kvb_plugin_identity *out);
/* The identity of the plugin a method type came from: KVB_OK, or KVB_ENOTFOUND for a built-in
 * or a type registered at run time (Python; no file). */
int kvb_plugin_identity_of(const kvb_method_type *t, kvb_plugin_identity *out);
/* Where a method type came from: NULL for a built-in, the plugin's path for a plugin's type,
 * "registered at run time" for one given to kvb_method_register directly (e.g. from Python). */
const char *kvb_method_origin(const kvb_method_type *t);

#endif

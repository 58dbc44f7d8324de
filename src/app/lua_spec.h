/* lua_spec.h — reading an experiment spec written in Lua 5.4 (all Lua glue is in lua_spec.c). */
#ifndef KVB_CLI_LUA_SPEC_H
#define KVB_CLI_LUA_SPEC_H

#include <stddef.h>

#include "runner.h"

/* Runs the spec file `path` in a fresh Lua state and fills e (kvb_experiment_init'ed here).
 * On error returns KVB_EFORMAT (KVB_EIO if unreadable) and writes "file:line: what was
 * expected" followed by a Lua traceback into err. */
int kvb_spec_load(const char *path, kvb_experiment *e, char *err, size_t errcap);

/* The same for a spec given as text (len bytes; a NUL inside is refused) named `name` in
 * messages, under a time limit of `limit` seconds (at most the usual 5 s): for the fuzzer
 * (tests/fuzz_spec.c). */
int kvb_spec_load_text(const char *name, const char *text, size_t len, double limit,
                       kvb_experiment *e, char *err, size_t errcap);

/* The spec language, for `kvbound run --help`. */
extern const char kvb_spec_help[];

#endif

/* lua_spec.c — the Lua 5.4 side of `kvbound run`: the spec language's functions, which fill
 * a kvb_experiment. Every declaration is checked when it runs, so an error names the spec's
 * file:line (luaL_error adds the caller's position); checks that need the whole spec (a sweep
 * supplying a required parameter, plot columns) run at the end and name the declaration's line.
 * The chunk runs under lua_pcall with a traceback handler.
 *
 * Sandbox (README "What a spec may do"): a spec only declares an experiment. It runs with the
 * base, math, string and table libraries opened one by one (luaL_requiref, not luaL_openlibs),
 * without dofile, loadfile, load, collectgarbage and string.dump — so no os, io, package,
 * require, debug, and no bytecode; an instruction-count hook ends it after
 * KVB_SPEC_TIME_LIMIT seconds of wall clock (an endless loop names its file:line), and an
 * allocator refuses to hold more than KVB_SPEC_MEM_LIMIT bytes. Plot bound expressions are
 * checked against a whitelist here and again by `kvbound plot`. */
#define _XOPEN_SOURCE 700
#include "lua_spec.h"
#include "read_file.h"
#include "task_run.h"
#include "tasks.h"

#include <ctype.h>
#include <math.h>
#include <unistd.h>
#include <signal.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "plot.h"
#include "probe.h"

#define KVB_SPEC_TIME_LIMIT 5.0            /* seconds a spec may run */
#define KVB_SPEC_MEM_LIMIT (256u << 20)    /* bytes a spec's Lua state may hold */
#define KVB_SPEC_HOOK_COUNT 10000          /* instructions between two clock checks */

const char kvb_spec_help[] =
    "A spec is a Lua 5.4 file calling these functions (see scripts/specs/ for examples):\n"
    "  name \"my_experiment\"                          results label\n"
    "  stream \"TYPE\" { param = value, ..., label = \"L\" }   a stream (kvbound list); 1-8\n"
    "  method \"TYPE\" { param = value, ..., label = \"L\" }   a method (kvbound list); backend = \"opencl\"\n"
    "                                     runs exact or balancekv_block on a device (kvbound devices)\n"
    "  probe \"TYPE\" { param = value, ..., label = \"L\" }    a probe: walk discrepancy or\n"
    "                                     k-center radius of the stream (kvbound list);\n"
    "                                     methods + probes: 1-16\n"
    "  ... { mutant = \"NAME\" }             in any of the three: one of the type's test-only\n"
    "                                     deliberate faults (kvbound list; for checking checks)\n"
    "  sweep \"PARAM\" { v1, v2, ... }      PARAM takes each value, in every stream and method\n"
    "                                     that has PARAM; several sweeps form a product\n"
    "  sweep { A = { ... }, B = { ... } }   A and B move in step (equal lengths), e.g. each\n"
    "                                     method's own budget parameter over one axis\n"
    "  trials(N)                          independent trials per sweep point (default 1)\n"
    "  seed(S)                            PCG32 seed (default 1; --seed overrides)\n"
    "  scale(X) | scale \"inv_sqrt_d\"      score = X·<q,k> (default 1: 000/001; 003/004 use 1/sqrt(d))\n"
    "  queries { last = true } | queries { every = K } | queries { at = {j1, j2, ...} }\n"
    "                                     token positions j where q_j is asked (default: last)\n"
    "  measures { \"error\", \"bound\", \"memory\", \"work\", \"time\", \"decode\" }   column\n"
    "                                     groups (default error bound memory work; time is not\n"
    "                                     reproducible; decode: 003 App. C INDEX decoding on\n"
    "                                     index_reduction streams, one row per trial and method)\n"
    "  failure { column = \"ratio_op\", above = 0.5 }   rate of trials failing at any query\n"
    "                                     point, with 95% Clopper-Pearson intervals\n"
    "  plot { name = \"N\", x = \"SWEEP\"|\"j\"|\"COLUMN\", y = \"COLUMN\", bound = \"gnuplot expr in x\",\n"
    "         bound_title = \"...\", bound2 = \"...\", bound2_title = \"...\", title = \"...\",\n"
    "         xlabel = \"...\", ylabel = \"...\",\n"
    "         logx = true, logy = true, bands = true }\n"
    "Measure columns: rel_error err_abs attn_norm (error); softmax_norm v_op v_f ratio_op ratio_f\n"
    "(bound: ratio_op = err/(|softmax|_2 |V|_op), ratio_f = err/(|softmax|_2 |V|_F));\n"
    "mem_bytes mem_vectors (memory; mem_bytes_fp16: priced as the field does, K and V in fp16 -\n"
    "a quarter of mem_bytes for methods keeping float64 vectors, a quantized cache as stored);\n"
    "distances exps coins dots fails (work); update_s query_s (time);\n"
    "disc disc_inf disc_bound walk_fails radius radius_rel (probes); decode_acc u_size (decode).\n"
    "A plot whose x is a measure column (e.g. mem_vectors) draws one point per sweep point at the\n"
    "median x.\n";

#define EXP_KEY "kvbound.experiment"

static kvb_experiment *get_exp(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, EXP_KEY);
  kvb_experiment *e = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return e;
}

static int caller_line(lua_State *L) {
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar)) return ar.currentline;
  return 0;
}

static int label_ok(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.' && *s != '+') return 0;
  return 1;
}

static int text_ok(const char *s) {
  for (; *s; s++)
    if (*s == '\t' || *s == '\n' || *s == '\r') return 0;
  return 1;
}

/* Field `key` of the table at idx, pushed, read raw: no __index metamethod runs. Every spec
 * reader reads tables raw (lua_rawlen, lua_rawgeti, lua_next), so no Lua code of the spec can
 * run — and re-enter a reader — between a reader's bounds check and its write. */
static int raw_field(lua_State *L, int idx, const char *key) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, key);
  return lua_rawget(L, idx);
}

/* Copies string field `key` of the table at idx into buf (absent: leaves buf). */
static void opt_string(lua_State *L, int idx, const char *what, const char *key, char *buf,
                       size_t cap) {
  int t = raw_field(L, idx, key);
  if (t != LUA_TNIL) {
    if (t != LUA_TSTRING)
      luaL_error(L, "%s: field '%s' must be a string, got %s", what, key, lua_typename(L, t));
    const char *s = lua_tostring(L, -1);
    if (strlen(s) >= cap) luaL_error(L, "%s: field '%s' is longer than %d characters", what, key, (int)cap - 1);
    if (!text_ok(s)) luaL_error(L, "%s: field '%s' must not contain tabs or newlines", what, key);
    memcpy(buf, s, strlen(s) + 1);
  }
  lua_pop(L, 1);
}

static int opt_bool(lua_State *L, int idx, const char *what, const char *key, int def) {
  int t = raw_field(L, idx, key), v = def;
  if (t != LUA_TNIL) {
    if (t != LUA_TBOOLEAN)
      luaL_error(L, "%s: field '%s' must be true or false, got %s", what, key, lua_typename(L, t));
    v = lua_toboolean(L, -1);
  }
  lua_pop(L, 1);
  return v;
}

/* The library's last message for a spec author: without the status name in front and the
 * library's own " (file.c:line)" behind, which say nothing about the spec. */
static const char *lib_message(char *buf, size_t cap) {
  const char *m = kvb_strerror_last();
  /* never NULL, but GCC's UBSan build (-fsanitize=undefined) cannot know it and, with -Werror,
   * refuses the snprintf below ("argument is null"): the sanitizer build must compile */
  if (!m) m = "";
  const char *colon = strncmp(m, "KVB_", 4) == 0 ? strstr(m, ": ") : NULL;
  if (colon) m = colon + 2;
  snprintf(buf, cap, "%s", m);
  size_t n = strlen(buf);
  char *open = strrchr(buf, '(');
  if (n && buf[n - 1] == ')' && open && open > buf && open[-1] == ' ' && strstr(open, ".c:"))
    open[-1] = '\0';
  return buf;
}

/* The kinds of declaration (item_body's upvalue 2). */
enum { KIND_STREAM = 0, KIND_METHOD = 1, KIND_PROBE = 2 };
static const char *const kind_names[] = {"stream", "method", "probe"};

/* A declared type's parameter and mutant tables. */
static void type_tables(int kind_id, const char *type, const kvb_param_spec **params,
                        const kvb_mutant_spec **mutants) {
  if (kind_id == KIND_PROBE) {
    const kvb_probe_type *t = kvb_probe_lookup(type);
    *params = t->params, *mutants = t->mutants;
  } else if (kind_id == KIND_METHOD) {
    const kvb_method_type *t = kvb_method_lookup(type);
    *params = t->params, *mutants = t->mutants;
  } else {
    const kvb_stream_type *t = kvb_stream_lookup(type);
    *params = t->params, *mutants = t->mutants;
  }
}

static int item_kind(const kvb_experiment *e, const kvb_run_item *it) {
  if (it >= e->streams && it < e->streams + KVB_RUN_MAX_STREAMS) return KIND_STREAM;
  return it->probe ? KIND_PROBE : KIND_METHOD;
}

/* Checks a declaration's parameters as the library will when it creates the object: the
 * "mutant" parameter against the type's mutant table (mutant.h: the generic layer owns it, so
 * it is in no type's parameter table), the rest against the parameter table. With
 * `before_sweeps`, required parameters may be missing (a sweep may supply them later). */
static int check_item_params(const kvb_params *p, int kind_id, const char *type,
                             int before_sweeps) {
  const kvb_param_spec *spec;
  const kvb_mutant_spec *mutants;
  type_tables(kind_id, type, &spec, &mutants);
  kvb_params rest;
  int mutant, st = kvb_mutant_split(p, mutants, kind_names[kind_id], type, &rest, &mutant);
  if (st || !before_sweeps) return st ? st : kvb_params_validate(&rest, spec, type);
  kvb_param_spec tmp[64];
  size_t n = 0;
  for (; spec && spec->name && n + 1 < 64; spec++) {
    tmp[n] = *spec;
    if (tmp[n].kind != KVB_PARAM_STRING && isnan(tmp[n].def)) tmp[n].def = tmp[n].min;
    n++;
  }
  memset(&tmp[n], 0, sizeof tmp[n]);
  return kvb_params_validate(&rest, tmp, type);
}

/* stream "TYPE" { ... } and method "TYPE" { ... }: upvalue 1 = type name, 2 = 1 for a method. */
static int item_body(lua_State *L) {
  kvb_experiment *e = get_exp(L);
  const char *type = lua_tostring(L, lua_upvalueindex(1));
  int kind_id = (int)lua_tointeger(L, lua_upvalueindex(2)); /* KIND_* */
  int is_method = kind_id != KIND_STREAM;
  const char *kind = kind_names[kind_id];
  luaL_checktype(L, 1, LUA_TTABLE);
  kvb_run_item *it;
  if (is_method) {
    if (e->nmethods == KVB_RUN_MAX_METHODS)
      luaL_error(L, "more than %d methods and probes", KVB_RUN_MAX_METHODS);
    it = &e->methods[e->nmethods];
  } else {
    if (e->nstreams == KVB_RUN_MAX_STREAMS) luaL_error(L, "more than %d streams", KVB_RUN_MAX_STREAMS);
    it = &e->streams[e->nstreams];
  }
  memset(it, 0, sizeof *it);
  snprintf(it->type, sizeof it->type, "%s", type);
  snprintf(it->label, sizeof it->label, "%s", type);
  it->line = caller_line(L);
  it->probe = kind_id == KIND_PROBE;
  kvb_params_init(&it->params);
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "%s \"%s\": parameters are written name = value (found a %s key)", kind, type,
                 lua_typename(L, lua_type(L, -2)));
    const char *k = lua_tostring(L, -2);
    int vt = lua_type(L, -1);
    if (strcmp(k, "label") == 0) {
      if (vt != LUA_TSTRING || !label_ok(lua_tostring(L, -1)) ||
          strlen(lua_tostring(L, -1)) >= sizeof it->label)
        luaL_error(L, "%s \"%s\": label must be a string of letters, digits, _ - . + (at most %d)",
                   kind, type, KVB_LABEL_MAX - 1);
      snprintf(it->label, sizeof it->label, "%s", lua_tostring(L, -1));
    } else if (strcmp(k, "backend") == 0 && kind_id == KIND_METHOD) { /* src/gpu/README.md, GPU kernels */
      if (vt != LUA_TSTRING || strlen(lua_tostring(L, -1)) >= sizeof it->backend)
        luaL_error(L, "method \"%s\": backend must be \"cpu\", \"opencl\" or \"cuda\"", type);
      snprintf(it->backend, sizeof it->backend, "%s", lua_tostring(L, -1));
      if (kvb_run_backend_check(type, it->backend)) {
        char msg[512];
        luaL_error(L, "method \"%s\": %s", type, lib_message(msg, sizeof msg));
      }
    } else if (vt == LUA_TNUMBER) {
      if (kvb_params_set(&it->params, k, lua_tonumber(L, -1)))
        luaL_error(L, "%s \"%s\": %s", kind, type, kvb_strerror_last());
    } else if (vt == LUA_TSTRING) {
      if (kvb_params_set_str(&it->params, k, lua_tostring(L, -1)))
        luaL_error(L, "%s \"%s\": %s", kind, type, kvb_strerror_last());
    } else {
      luaL_error(L, "%s \"%s\": parameter '%s' must be a number or a string, got %s", kind, type,
                 k, lua_typename(L, vt));
    }
    lua_pop(L, 1);
  }
  if (check_item_params(&it->params, kind_id, type, 1)) {
    char msg[512];
    luaL_error(L, "%s (see `kvbound list`)", lib_message(msg, sizeof msg));
  }
  for (size_t i = 0; i < (is_method ? e->nmethods : e->nstreams); i++)
    if (strcmp((is_method ? e->methods : e->streams)[i].label, it->label) == 0)
      luaL_error(L, "label '%s' is used twice among the %s: give one of them label = \"...\"",
                 it->label, is_method ? "methods and probes" : "streams");
  if (is_method)
    e->nmethods++;
  else
    e->nstreams++;
  return 0;
}

static void list_names(lua_State *L, int kind_id, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = '\0';
  for (size_t i = 0;; i++) {
    const char *n =
        kind_id == KIND_PROBE    ? (kvb_probe_type_at(i) ? kvb_probe_type_at(i)->name : NULL)
        : kind_id == KIND_METHOD ? (kvb_method_type_at(i) ? kvb_method_type_at(i)->name : NULL)
                                 : (kvb_stream_type_at(i) ? kvb_stream_type_at(i)->name : NULL);
    if (!n || o + strlen(n) + 3 >= cap) break;
    o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", n);
  }
  (void)L;
}

static int item_decl(lua_State *L, int kind_id) {
  const char *type = luaL_checkstring(L, 1);
  int known = kind_id == KIND_PROBE    ? kvb_probe_lookup(type) != NULL
              : kind_id == KIND_METHOD ? kvb_method_lookup(type) != NULL
                                       : kvb_stream_lookup(type) != NULL;
  if (!known) {
    char names[1024];
    list_names(L, kind_id, names, sizeof names);
    luaL_error(L, "no %s named '%s' is registered (available: %s)",
               kind_names[kind_id], type, names);
  }
  lua_pushstring(L, type);
  lua_pushinteger(L, kind_id);
  lua_pushcclosure(L, item_body, 2);
  return 1;
}
static int l_stream(lua_State *L) { return item_decl(L, KIND_STREAM); }
static int l_method(lua_State *L) { return item_decl(L, KIND_METHOD); }
static int l_probe(lua_State *L) { return item_decl(L, KIND_PROBE); }

/* Adds sweep `param` with the list at stack index idx; returns its index. */
static size_t add_sweep(lua_State *L, kvb_experiment *e, const char *param, int idx, int zip_with) {
  if (strlen(param) >= KVB_PARAM_NAME_MAX || !label_ok(param))
    luaL_error(L, "sweep: '%s' is not a parameter name", param);
  if (lua_type(L, idx) != LUA_TTABLE)
    luaL_error(L, "sweep \"%s\": expected a list of numbers { v1, v2, ... }", param);
  lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
  if (n < 1) luaL_error(L, "sweep \"%s\": expected a non-empty list of numbers { v1, v2, ... }", param);
  if (n > 100000) luaL_error(L, "sweep \"%s\": more than 100000 values", param);
  if (e->nsweeps == KVB_RUN_MAX_SWEEPS) luaL_error(L, "more than %d swept parameters", KVB_RUN_MAX_SWEEPS);
  for (size_t i = 0; i < e->nsweeps; i++)
    if (strcmp(e->sweeps[i].param, param) == 0) luaL_error(L, "sweep \"%s\" is declared twice", param);
  if (idx < 0) idx = lua_gettop(L) + idx + 1;
  /* The values are gathered in a Lua-owned buffer: any error below (a non-number, a
   * metamethod raising, memory) leaves nothing to free; the C copy is made last. */
  double *tmp = lua_newuserdatauv(L, (size_t)n * sizeof *tmp, 0);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, idx, i) != LUA_TNUMBER)
      luaL_error(L, "sweep \"%s\": value %I must be a number, got %s", param, (LUAI_UACINT)i,
                 luaL_typename(L, -1));
    tmp[i - 1] = lua_tonumber(L, -1);
    if (!isfinite(tmp[i - 1]))
      luaL_error(L, "sweep \"%s\": value %I is not finite", param, (LUAI_UACINT)i);
    lua_pop(L, 1);
  }
  double *v = malloc((size_t)n * sizeof *v);
  if (!v) luaL_error(L, "sweep \"%s\": out of memory for %I values", param, (LUAI_UACINT)n);
  memcpy(v, tmp, (size_t)n * sizeof *v);
  lua_pop(L, 1);
  kvb_run_sweep *s = &e->sweeps[e->nsweeps];
  snprintf(s->param, sizeof s->param, "%s", param);
  s->vals = v;
  s->nvals = (size_t)n;
  s->line = caller_line(L);
  s->zip_with = zip_with;
  return e->nsweeps++;
}

static int sweep_body(lua_State *L) {
  add_sweep(L, get_exp(L), lua_tostring(L, lua_upvalueindex(1)), 1, -1);
  return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(a, b); }

/* sweep "PARAM" { v1, ... }, or sweep { a = { ... }, b = { ... } }: parameters moving in step
 * (equal lengths), taken in name order so the columns do not depend on Lua's table order. */
static int l_sweep(lua_State *L) {
  if (lua_type(L, 1) != LUA_TTABLE) {
    const char *param = luaL_checkstring(L, 1);
    if (strlen(param) >= KVB_PARAM_NAME_MAX || !label_ok(param))
      luaL_error(L, "sweep: '%s' is not a parameter name", param);
    lua_pushstring(L, param);
    lua_pushcclosure(L, sweep_body, 1);
    return 1;
  }
  kvb_experiment *e = get_exp(L);
  /* the names are copied: a borrowed key string could be collected once its table changes */
  char names[KVB_RUN_MAX_SWEEPS][KVB_PARAM_NAME_MAX];
  size_t k = 0;
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING)
      luaL_error(L, "sweep { ... }: write parameter = { v1, v2, ... } for each parameter");
    if (k == KVB_RUN_MAX_SWEEPS) luaL_error(L, "more than %d swept parameters", KVB_RUN_MAX_SWEEPS);
    const char *key = lua_tostring(L, -2);
    if (strlen(key) >= KVB_PARAM_NAME_MAX || !label_ok(key))
      luaL_error(L, "sweep: '%s' is not a parameter name", key);
    memcpy(names[k++], key, strlen(key) + 1);
    lua_pop(L, 1);
  }
  if (k == 0) luaL_error(L, "sweep { ... }: expected parameter = { v1, v2, ... } fields");
  qsort(names, k, sizeof names[0], cmp_name);
  int lead = -1;
  lua_Integer len = 0;
  for (size_t i = 0; i < k; i++) {
    raw_field(L, 1, names[i]);
    lua_Integer n = lua_type(L, -1) == LUA_TTABLE ? (lua_Integer)lua_rawlen(L, -1) : 0;
    if (i == 0) len = n;
    if (n != len)
      luaL_error(L, "sweep { ... }: '%s' has %I values and '%s' %I; parameters swept together "
                 "need equal lengths", names[i], (LUAI_UACINT)n, names[0], (LUAI_UACINT)len);
    size_t at = add_sweep(L, e, names[i], lua_gettop(L), lead);
    if (lead < 0) lead = (int)at;
    lua_pop(L, 1);
  }
  return 0;
}

static int l_name(lua_State *L) {
  const char *n = luaL_checkstring(L, 1);
  /* the name is the default output directory's last component: ".", ".." or a hidden name
   * would be the working directory, its parent, or a file ls does not show */
  if (n[0] == '.')
    luaL_error(L, "name: must not begin with '.' (it names the output directory out/NAME), got '%s'", n);
  if (!label_ok(n) || strlen(n) >= KVB_LABEL_MAX)
    luaL_error(L, "name: expected letters, digits, _ - . + (at most %d), got '%s'", KVB_LABEL_MAX - 1, n);
  snprintf(get_exp(L)->name, KVB_LABEL_MAX, "%s", n);
  return 0;
}

static int l_trials(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  if (n < 1 || n > 10000000)
    luaL_error(L, "trials: expected an integer in [1, 1e7], got %I", (LUAI_UACINT)n);
  get_exp(L)->trials = (size_t)n;
  return 0;
}

static int l_seed(lua_State *L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  if (n < 0) luaL_error(L, "seed: expected a non-negative integer");
  get_exp(L)->seed = (uint64_t)n;
  return 0;
}

static int l_scale(lua_State *L) {
  kvb_experiment *e = get_exp(L);
  if (lua_type(L, 1) == LUA_TSTRING) {
    if (strcmp(lua_tostring(L, 1), "inv_sqrt_d") != 0)
      luaL_error(L, "scale: expected a positive number or \"inv_sqrt_d\", got \"%s\"", lua_tostring(L, 1));
    e->scale = 0;
    return 0;
  }
  double x = luaL_checknumber(L, 1);
  /* lua_pushfstring knows %f (LUAI_NUMFFORMAT), not %g */
  if (!(x > 0) || !isfinite(x))
    luaL_error(L, "scale: expected a positive finite number, got %f", (LUAI_UACNUMBER)x);
  e->scale = x;
  return 0;
}

static int l_queries(lua_State *L) {
  kvb_experiment *e = get_exp(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  e->q_every = 0;
  e->nq_at = 0;
  e->queries_line = caller_line(L);
  int t = raw_field(L, 1, "every");
  if (t != LUA_TNIL) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1)
      luaL_error(L, "queries: 'every' must be a positive integer");
    e->q_every = (size_t)lua_tointeger(L, -1);
  }
  lua_pop(L, 1);
  t = raw_field(L, 1, "at");
  if (t != LUA_TNIL) {
    if (t != LUA_TTABLE) luaL_error(L, "queries: 'at' must be a list of token positions");
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    if (n < 1 || n > KVB_RUN_MAX_QUERIES)
      luaL_error(L, "queries: 'at' must list 1 to %d positions", KVB_RUN_MAX_QUERIES);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, -1, i);
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1)
        luaL_error(L, "queries: 'at' entry %d must be a positive integer", (int)i);
      size_t j = (size_t)lua_tointeger(L, -1);
      if (e->nq_at && j <= e->q_at[e->nq_at - 1])
        luaL_error(L, "queries: 'at' positions must increase");
      e->q_at[e->nq_at++] = j;
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  if (e->q_every && e->nq_at) luaL_error(L, "queries: give 'every' or 'at', not both");
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    if (strcmp(k, "every") && strcmp(k, "at") && strcmp(k, "last"))
      luaL_error(L, "queries: unknown field '%s' (expected every, at or last)", k);
    lua_pop(L, 1);
  }
  return 0;
}

static int l_measures(lua_State *L) {
  kvb_experiment *e = get_exp(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  static const char *const names[] = {"error", "bound", "memory", "work", "time", "decode",
                                      "all", NULL};
  static const unsigned bits[] = {KVB_MEASURE_ERROR, KVB_MEASURE_BOUND, KVB_MEASURE_MEMORY,
                                  KVB_MEASURE_WORK,  KVB_MEASURE_TIME,  KVB_MEASURE_DECODE, 31};
  unsigned m = 0;
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 1, i);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    size_t k = 0;
    while (names[k] && strcmp(names[k], s)) k++;
    if (!names[k])
      luaL_error(L, "measures: entry %d must be one of \"error\", \"bound\", \"memory\", \"work\", "
                    "\"time\", \"decode\", \"all\"", (int)i);
    m |= bits[k];
    lua_pop(L, 1);
  }
  if (!m) luaL_error(L, "measures: expected a non-empty list");
  /* the error is what every summary is about, except the decoding pass, which has none */
  e->measures = (m & KVB_MEASURE_DECODE) ? m & ~(unsigned)(KVB_MEASURE_ERROR | KVB_MEASURE_BOUND)
                                         : m | KVB_MEASURE_ERROR;
  return 0;
}

static int l_failure(lua_State *L) {
  kvb_experiment *e = get_exp(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  char col[32] = "";
  opt_string(L, 1, "failure", "column", col, sizeof col);
  if (kvb_run_column_find(col) < 0)
    luaL_error(L, "failure: 'column' must name a measure column (e.g. \"ratio_op\"), got '%s'", col);
  if (raw_field(L, 1, "above") != LUA_TNUMBER || !isfinite(lua_tonumber(L, -1)))
    luaL_error(L, "failure: 'above' must be a finite number (a failure is column > above)");
  e->fail_above = lua_tonumber(L, -1);
  lua_pop(L, 1);
  snprintf(e->fail_col, sizeof e->fail_col, "%s", col);
  return 0;
}

/* tasks { family = "niah_single", lengths = { 1024, 2048 }, depths = { 0.1, 0.5, 0.9 } or
 * "spread", per_cell = 2, mode = "agnostic" | "aware", protocol = "kvbound" | "authors", seed = 1,
 * model = a key of lm.h's registry, "smollm2" by default }: protocol "authors" is the BalanceKV authors' needle protocol
 * (task_run.h: the whole prompt with the cue prefilled exactly and compressed, the first answer
 * token from the exact logits), which takes no mode; "kvbound" (the default) runs `mode`.
 * the model/task stage (runner.h; model defaults to smollm2). Every field is checked here; sizes are bounded (KVB_RUN_MAX_TASK_*); the model's
 * own context bounds the lengths at run time. */
static int l_tasks(lua_State *L) {
  kvb_experiment *e = get_exp(L);
  kvb_run_tasks *t = &e->tasks;
  luaL_checktype(L, 1, LUA_TTABLE);
  if (t->on) luaL_error(L, "tasks: declared twice");
  memset(t, 0, sizeof *t);
  t->on = 1, t->line = caller_line(L), t->per_cell = 1, t->task_seed = 1;
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    if (strcmp(k, "family") && strcmp(k, "lengths") && strcmp(k, "depths") &&
        strcmp(k, "per_cell") && strcmp(k, "mode") && strcmp(k, "seed") && strcmp(k, "model") &&
        strcmp(k, "protocol"))
      luaL_error(L, "tasks: unknown field '%s' (expected family, lengths, depths, per_cell, mode, "
                    "protocol, seed, model)", k);
    lua_pop(L, 1);
  }
  char fam[32] = "", mode[16] = "";
  opt_string(L, 1, "tasks", "family", fam, sizeof fam);
  kvb_task_family f;
  if (!fam[0]) luaL_error(L, "tasks: 'family' is required (e.g. \"niah_single\")");
  if (kvb_task_family_lookup(fam, &f)) luaL_error(L, "tasks: %s", kvb_strerror_last());
  t->family = (int)f;
  opt_string(L, 1, "tasks", "mode", mode, sizeof mode);
  if (mode[0] && strcmp(mode, "agnostic") && strcmp(mode, "aware"))
    luaL_error(L, "tasks: 'mode' must be \"agnostic\" or \"aware\", got \"%s\"", mode);
  t->aware = !strcmp(mode, "aware");
  char proto[16] = "kvbound";
  opt_string(L, 1, "tasks", "protocol", proto, sizeof proto);
  if (strcmp(proto, "kvbound") && strcmp(proto, "authors"))
    luaL_error(L, "tasks: 'protocol' must be \"kvbound\" or \"authors\", got \"%s\"", proto);
  if (!strcmp(proto, "authors")) {
    if (raw_field(L, 1, "mode") != LUA_TNIL)
      luaL_error(L, "tasks: protocol = \"authors\" prefills the question and the cue with the "
                    "context; it takes no 'mode'");
    lua_pop(L, 1);
    t->aware = KVB_TASK_AUTHORS;
  }
  char model[32] = "smollm2";
  opt_string(L, 1, "tasks", "model", model, sizeof model);
  kvb_lm_kind kind;
  if (kvb_lm_kind_lookup(model, &kind)) {
    char known[256];
    luaL_error(L, "tasks: 'model' must be \"%s\", got \"%s\"",
               kvb_lm_known_keys(known, sizeof known, "\" or \""), model);
  }
  t->model = (int)kind;
  if (raw_field(L, 1, "lengths") != LUA_TTABLE)
    luaL_error(L, "tasks: 'lengths' must be a list of 1 to %d token counts", KVB_RUN_MAX_TASK_LENGTHS);
  lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
  if (n < 1 || n > KVB_RUN_MAX_TASK_LENGTHS)
    luaL_error(L, "tasks: 'lengths' must list 1 to %d token counts", KVB_RUN_MAX_TASK_LENGTHS);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, -1, i);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < KVB_TASK_MIN_LENGTH ||
        lua_tointeger(L, -1) > 1 << 20)
      luaL_error(L, "tasks: 'lengths' entry %d must be an integer in [%d, 1048576] (the model's "
                    "context bounds it further)", (int)i, KVB_TASK_MIN_LENGTH);
    t->lengths[t->nlengths++] = (size_t)lua_tointeger(L, -1);
    /* a repeated length would run its cell's tasks twice and count them twice in the summary */
    for (size_t j = 0; j + 1 < t->nlengths; j++)
      if (t->lengths[j] == t->lengths[t->nlengths - 1])
        luaL_error(L, "tasks: 'lengths' entry %d (%d) repeats entry %d", (int)i,
                   (int)t->lengths[j], (int)j + 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  int ty = raw_field(L, 1, "depths");
  if (ty == LUA_TSTRING) {
    if (strcmp(lua_tostring(L, -1), "spread"))
      luaL_error(L, "tasks: 'depths' must be a list of numbers in [0, 1] or \"spread\"");
  } else if (ty == LUA_TTABLE) {
    n = (lua_Integer)lua_rawlen(L, -1);
    if (n < 1 || n > KVB_RUN_MAX_TASK_DEPTHS)
      luaL_error(L, "tasks: 'depths' must list 1 to %d depths", KVB_RUN_MAX_TASK_DEPTHS);
    for (lua_Integer i = 1; i <= n; i++) {
      lua_rawgeti(L, -1, i);
      double d = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : NAN;
      if (!(d >= 0 && d <= 1)) luaL_error(L, "tasks: 'depths' entry %d must be a number in [0, 1]", (int)i);
      t->depths[t->ndepths++] = d;
      for (size_t j = 0; j + 1 < t->ndepths; j++)
        if (t->depths[j] == d) {
          char num[32]; /* luaL_error formats no %g */
          snprintf(num, sizeof num, "%g", d);
          luaL_error(L, "tasks: 'depths' entry %d (%s) repeats entry %d", (int)i, num, (int)j + 1);
        }
      lua_pop(L, 1);
    }
  } else if (ty != LUA_TNIL) {
    luaL_error(L, "tasks: 'depths' must be a list of numbers in [0, 1] or \"spread\"");
  } else {
    t->depths[t->ndepths++] = 0.5;
  }
  lua_pop(L, 1);
  ty = raw_field(L, 1, "per_cell");
  if (ty != LUA_TNIL) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1 || lua_tointeger(L, -1) > KVB_RUN_MAX_TASKS)
      luaL_error(L, "tasks: 'per_cell' must be an integer in [1, %d]", KVB_RUN_MAX_TASKS);
    t->per_cell = (size_t)lua_tointeger(L, -1);
  }
  lua_pop(L, 1);
  ty = raw_field(L, 1, "seed");
  if (ty != LUA_TNIL) {
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 0)
      luaL_error(L, "tasks: 'seed' must be a non-negative integer");
    t->task_seed = (uint64_t)lua_tointeger(L, -1);
  }
  lua_pop(L, 1);
  size_t total = t->nlengths * (t->ndepths ? t->ndepths : 1) * t->per_cell;
  if (total > KVB_RUN_MAX_TASKS)
    luaL_error(L, "tasks: %d tasks in all (lengths x depths x per_cell); the limit is %d", (int)total,
               KVB_RUN_MAX_TASKS);
  /* no default: agnostic and aware measure different things (whether the method sees the
   * question while compressing), as `kvbound decode --task` requires --mode */
  if (!mode[0] && t->aware != KVB_TASK_AUTHORS) /* protocol = "authors" fixes what is prefilled */
    luaL_error(L, "tasks: 'mode' is required: \"agnostic\" (the question follows the compressed "
                  "context) or \"aware\" (the question is part of the compressed prompt), unless "
                  "protocol = \"authors\"");
  return 0;
}

static int l_plot(lua_State *L) {
  kvb_experiment *e = get_exp(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  if (e->nplots == KVB_RUN_MAX_PLOTS) luaL_error(L, "more than %d plots", KVB_RUN_MAX_PLOTS);
  kvb_run_plot *p = &e->plots[e->nplots];
  memset(p, 0, sizeof *p);
  opt_string(L, 1, "plot", "name", p->name, sizeof p->name);
  opt_string(L, 1, "plot", "x", p->x, sizeof p->x);
  opt_string(L, 1, "plot", "y", p->y, sizeof p->y);
  opt_string(L, 1, "plot", "bound", p->bound, sizeof p->bound);
  opt_string(L, 1, "plot", "bound_title", p->bound_title, sizeof p->bound_title);
  opt_string(L, 1, "plot", "bound2", p->bound2, sizeof p->bound2);
  opt_string(L, 1, "plot", "bound2_title", p->bound2_title, sizeof p->bound2_title);
  opt_string(L, 1, "plot", "title", p->title, sizeof p->title);
  opt_string(L, 1, "plot", "xlabel", p->xlabel, sizeof p->xlabel);
  opt_string(L, 1, "plot", "ylabel", p->ylabel, sizeof p->ylabel);
  p->logx = opt_bool(L, 1, "plot", "logx", 0);
  p->logy = opt_bool(L, 1, "plot", "logy", 0);
  p->bands = opt_bool(L, 1, "plot", "bands", 1);
  if (!p->name[0] || !label_ok(p->name) || p->name[0] == '.')
    luaL_error(L, "plot: 'name' is required (letters, digits, _ - . +): it names the image files");
  if (!p->x[0])
    luaL_error(L, "plot \"%s\": 'x' is required (a sweep parameter, \"j\" or a measure column)",
               p->name);
  if (kvb_run_column_find(p->y) < 0)
    luaL_error(L, "plot \"%s\": 'y' must name a measure column (e.g. \"rel_error\"), got '%s'",
               p->name, p->y);
  for (size_t i = 0; i < e->nplots; i++)
    if (strcmp(e->plots[i].name, p->name) == 0) luaL_error(L, "plot \"%s\" is declared twice", p->name);
  const char *exprs[2] = {p->bound, p->bound2}, *keys[2] = {"bound", "bound2"};
  for (int b = 0; b < 2; b++) {
    char why[256];
    if (exprs[b][0] && kvb_plot_expr_check(exprs[b], why, sizeof why))
      luaL_error(L, "plot \"%s\": '%s' = \"%s\": %s", p->name, keys[b], exprs[b], why);
  }
  p->line = caller_line(L);
  e->nplots++;
  return 0;
}

/* ---- checks needing the whole spec (finalize); messages carry the declaring line ---- */

/* At least one stream and one method or probe; the measure groups a probe-only spec records. */
static int check_declared(const char *path, kvb_experiment *e, char *err, size_t cap) {
  if (e->tasks.on) { /* the model/task stage: methods only, each on the CPU */
    const char *bad = e->nstreams ? "stream" : e->nsweeps ? "sweep" : e->nplots ? "plot{}" :
                      e->fail_col[0] ? "failure{}" : NULL;
    if (bad) {
      snprintf(err, cap, "%s:%d: a tasks{} spec answers generated tasks inside the model; it takes "
               "methods only, not a %s", path, e->tasks.line, bad);
      return KVB_EFORMAT;
    }
    if (e->queries_line) {
      snprintf(err, cap, "%s:%d: queries{} does not apply to a tasks{} spec (each task is asked "
               "once, by its question after the context)", path, e->queries_line);
      return KVB_EFORMAT;
    }
    if (e->nmethods == 0) {
      snprintf(err, cap, "%s: the spec declares no method (add e.g. method \"sink_recent\" { budget = 256 })", path);
      return KVB_EFORMAT;
    }
    for (size_t i = 0; i < e->nmethods; i++)
      if (e->methods[i].probe || (e->methods[i].backend[0] && strcmp(e->methods[i].backend, "cpu"))) {
        snprintf(err, cap, "%s:%d: a tasks{} spec runs methods on the CPU only (no probe, no "
                 "backend)", path, e->methods[i].line);
        return KVB_EFORMAT;
      }
    return KVB_OK;
  }
  if (e->nstreams == 0) {
    snprintf(err, cap, "%s: the spec declares no stream (add e.g. stream \"gaussian\" { n = 256 })", path);
    return KVB_EFORMAT;
  }
  if (e->nmethods == 0) {
    snprintf(err, cap, "%s: the spec declares no method or probe (add e.g. method \"exact\" {})", path);
    return KVB_EFORMAT;
  }
  size_t nprobes = 0;
  for (size_t i = 0; i < e->nmethods; i++) nprobes += e->methods[i].probe != 0;
  if (nprobes) e->measures |= KVB_MEASURE_PROBE;
  /* probes only: the method columns would be NaN in every row */
  if (nprobes == e->nmethods) e->measures &= KVB_MEASURE_PROBE | KVB_MEASURE_TIME;
  return KVB_OK;
}

/* measures{"decode"} (003 App. C): index_reduction streams only, scale 1/√d, no probes. */
static int check_decode(const char *path, const kvb_experiment *e, char *err, size_t cap) {
  if (!(e->measures & KVB_MEASURE_DECODE)) return KVB_OK;
  for (size_t i = 0; i < e->nstreams; i++)
    if (strcmp(e->streams[i].type, "index_reduction") != 0) {
      snprintf(err, cap, "%s:%d: measures{\"decode\"} decodes the INDEX reduction (003 App. C), "
               "so every stream must be \"index_reduction\"; stream '%s' is \"%s\"", path,
               e->streams[i].line, e->streams[i].label, e->streams[i].type);
      return KVB_EFORMAT;
    }
  if (e->scale != 0) {
    snprintf(err, cap, "%s: measures{\"decode\"}: the INDEX reduction scores <k,q>/sqrt(d) "
             "(003 App. C); add scale \"inv_sqrt_d\"", path);
    return KVB_EFORMAT;
  }
  for (size_t i = 0; i < e->nmethods; i++)
    if (e->methods[i].probe) {
      snprintf(err, cap, "%s: measures{\"decode\"} cannot be combined with probes", path);
      return KVB_EFORMAT;
    }
  return KVB_OK;
}

static int spec_has_param(const kvb_param_spec *sp, const char *name) {
  for (; sp && sp->name; sp++)
    if (strcmp(sp->name, name) == 0) return 1;
  return 0;
}

/* Every sweep moves a parameter some declared stream, method or probe has. */
static int check_sweeps_used(const char *path, const kvb_experiment *e, char *err, size_t cap) {
  for (size_t s = 0; s < e->nsweeps; s++) {
    int used = 0;
    for (size_t i = 0; i < e->nstreams; i++)
      used |= spec_has_param(kvb_experiment_item_spec(e, &e->streams[i]), e->sweeps[s].param);
    for (size_t i = 0; i < e->nmethods; i++)
      used |= spec_has_param(kvb_experiment_item_spec(e, &e->methods[i]), e->sweeps[s].param);
    if (!used) {
      snprintf(err, cap, "%s:%d: sweep \"%s\": no declared stream, method or probe has a parameter '%s'",
               path, e->sweeps[s].line, e->sweeps[s].param, e->sweeps[s].param);
      return KVB_EFORMAT;
    }
  }
  return KVB_OK;
}

/* The number of sweep points (into *points), within the limit on trials. */
static int check_units(const char *path, const kvb_experiment *e, size_t *points, char *err,
                       size_t cap) {
  size_t units = 0;
  if (kvb_experiment_units(e, points, &units) == 0 && units <= KVB_RUN_MAX_UNITS) return KVB_OK;
  double prod = (double)e->trials; /* shown as a real: the product may not fit in size_t */
  for (size_t s = 0; s < e->nsweeps; s++)
    if (e->sweeps[s].zip_with < 0) prod *= (double)e->sweeps[s].nvals;
  snprintf(err, cap, "%s: the sweeps and trials() ask for %.4g trials (sweep points x trials), "
           "more than the limit of 1e8", path, prod);
  return KVB_EFORMAT;
}

/* Every declaration's parameters at every sweep point, as the library will check them when it
 * creates the object (mutant included); the message names the point's sweep values. */
static int check_points(const char *path, const kvb_experiment *e, size_t points, char *err,
                        size_t cap) {
  for (size_t p = 0; p < points; p++)
    for (int k = 0; k < 2; k++) {
      const kvb_run_item *items = k ? e->methods : e->streams;
      size_t n = k ? e->nmethods : e->nstreams;
      for (size_t i = 0; i < n; i++) {
        kvb_params ps;
        kvb_experiment_item_params(e, &items[i], p, &ps);
        if (!check_item_params(&ps, item_kind(e, &items[i]), items[i].type, 0)) continue;
        char where[256] = "", msg[512];
        size_t o = 0;
        for (size_t s = 0; s < e->nsweeps && o < sizeof where; s++)
          o += (size_t)snprintf(where + o, sizeof where - o, "%s%s = %g (sweep at line %d)",
                                s ? ", " : " at ", e->sweeps[s].param,
                                kvb_experiment_sweep_value(e, s, p), e->sweeps[s].line);
        snprintf(err, cap, "%s:%d: %s%s (see `kvbound list`)", path, items[i].line,
                 lib_message(msg, sizeof msg), where);
        return KVB_EFORMAT;
      }
    }
  return KVB_OK;
}

/* Plot axes and the failure column are measured columns (or, for x, a sweep or j). */
static int check_columns(const char *path, const kvb_experiment *e, char *err, size_t cap) {
  for (size_t i = 0; i < e->nplots; i++) {
    const kvb_run_plot *p = &e->plots[i];
    int ok = strcmp(p->x, "j") == 0, xc = kvb_run_column_find(p->x);
    for (size_t s = 0; s < e->nsweeps; s++) ok |= strcmp(p->x, e->sweeps[s].param) == 0;
    if (!ok && xc >= 0 && !(kvb_run_column_group((size_t)xc) & e->measures)) {
      snprintf(err, cap, "%s:%d: plot \"%s\": x column '%s' is not measured (add its group to measures{})",
               path, p->line, p->name, p->x);
      return KVB_EFORMAT;
    }
    if (!ok && xc < 0) {
      snprintf(err, cap, "%s:%d: plot \"%s\": x = '%s' is neither a sweep parameter, \"j\" nor a "
               "measure column", path, p->line, p->name, p->x);
      return KVB_EFORMAT;
    }
    int c = kvb_run_column_find(p->y);
    if (!(kvb_run_column_group((size_t)c) & e->measures)) {
      snprintf(err, cap, "%s:%d: plot \"%s\": column '%s' is not measured (add its group to measures{})",
               path, p->line, p->name, p->y);
      return KVB_EFORMAT;
    }
  }
  if (e->fail_col[0] && !(kvb_run_column_group((size_t)kvb_run_column_find(e->fail_col)) & e->measures)) {
    snprintf(err, cap, "%s: failure column '%s' is not measured (add its group to measures{})", path,
             e->fail_col);
    return KVB_EFORMAT;
  }
  return KVB_OK;
}

/* Checks needing the whole spec, in the order a reader would fix them. */
static int finalize(const char *path, kvb_experiment *e, char *err, size_t cap) {
  size_t points = 0;
  int st = check_declared(path, e, err, cap);
  if (!st) st = check_decode(path, e, err, cap);
  if (!st) st = check_sweeps_used(path, e, err, cap);
  if (!st) st = check_units(path, e, &points, err, cap);
  if (!st) st = check_points(path, e, points, err, cap);
  if (!st) st = check_columns(path, e, err, cap);
  return st;
}

/* The message handler. It runs while the error is being raised, with Lua's debug hooks off
 * when the error came from the time hook (ldo.c restores them only once the error is caught),
 * so it runs no spec code: an error object that is not a string is named by its type, never
 * converted through its __tostring metamethod. */
static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* ---- the sandbox ---- */

typedef struct {
  size_t used;  /* bytes held by the Lua state */
  double start; /* when the chunk started (CLOCK_MONOTONIC seconds) */
  int expired;  /* the time limit was reached: the spec fails whatever it caught */
  double limit; /* the time limit (s): KVB_SPEC_TIME_LIMIT, less under the fuzzer */
} sandbox;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* lua_Alloc with a cap: a spec building a huge table or string fails with a memory error
 * instead of exhausting the machine. */
static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  sandbox *sb = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    free(ptr);
    sb->used -= old;
    return NULL;
  }
  if (nsize > old && nsize - old > KVB_SPEC_MEM_LIMIT - sb->used) return NULL;
  void *p = realloc(ptr, nsize);
  if (p) sb->used = sb->used - old + nsize;
  return p;
}

static int panic(lua_State *L) {
  const char *m = lua_tostring(L, -1);
  fprintf(stderr, "kvbound: unprotected Lua error: %s\n", m ? m : "?");
  return 0; /* Lua aborts */
}

/* Every KVB_SPEC_HOOK_COUNT instructions: a spec past its time limit is ended with the
 * file:line it was running. The limit cannot be caught: once it is reached the hook runs at
 * EVERY instruction of the thread and raises each time, so a pcall/xpcall (or a to-be-closed
 * variable, or a finalizer) that catches the error fails again at its next instruction and the
 * error unwinds to the top; and the load fails once `expired` is set, whatever the chunk did. */
static void time_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  void *ud;
  lua_getallocf(L, &ud);
  sandbox *sb = ud;
  if (!sb->expired && now_s() - sb->start <= sb->limit) return;
  if (!sb->expired) lua_sethook(L, time_hook, LUA_MASKCOUNT, 1);
  sb->expired = 1;
  lua_Debug d;
  int line = 0;
  const char *src = "?";
  if (lua_getstack(L, 0, &d) && lua_getinfo(L, "Sl", &d)) {
    line = d.currentline;
    src = d.short_src;
  }
  /* lua_pushfstring + lua_error, not luaL_error: the position is the running line's */
  lua_pushfstring(L, "%s:%d: the spec ran for more than %d s and was stopped (an endless "
                  "loop?); a spec only declares an experiment", src, line, (int)ceil(sb->limit));
  lua_error(L);
}

/* setmetatable as the base library's, refusing a metatable with a __gc field: Lua runs
 * finalizers with debug hooks off (lgc.c, GCTM), so a finalizer would run outside the time
 * limit — during a collection, or at lua_close. An object is marked for finalization only when
 * its metatable has the field as it is set, so refusing it then leaves nothing to finalize. */
static int l_setmetatable(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int t = lua_type(L, 2);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  if (t == LUA_TTABLE && raw_field(L, 2, "__gc") != LUA_TNIL)
    luaL_error(L, "setmetatable: a __gc finalizer is not allowed in a spec (it would run outside "
                  "the spec's time limit)");
  if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
    luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

/* base, math, string, table; nothing that reaches files, processes, other chunks or bytecode. */
static void open_sandbox(lua_State *L) {
  static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
                                  {LUA_MATHLIBNAME, luaopen_math},
                                  {LUA_STRLIBNAME, luaopen_string},
                                  {LUA_TABLIBNAME, luaopen_table},
                                  {NULL, NULL}};
  for (const luaL_Reg *l = libs; l->name; l++) {
    luaL_requiref(L, l->name, l->func, 1);
    lua_pop(L, 1);
  }
  /* xpcall's message handler would be spec code running with the hooks off (see traceback) */
  static const char *const removed[] = {"dofile", "loadfile", "load", "collectgarbage", "xpcall",
                                        NULL};
  for (size_t i = 0; removed[i]; i++) {
    lua_pushnil(L);
    lua_setglobal(L, removed[i]);
  }
  lua_pushcfunction(L, l_setmetatable);
  lua_setglobal(L, "setmetatable");
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);
}

static int spec_eval(const char *path, size_t len, double limit, kvb_experiment *e, char *err,
                     size_t cap);

#define KVB_SPEC_BACKSTOP 3 /* seconds past the limit before the process is ended */

static void spec_alarm(int sig) {
  (void)sig;
  static const char m[] = "kvbound: the spec ran more than 3 s past its time limit inside a "
                          "library call and the process was ended; a spec only declares an "
                          "experiment\n";
  ssize_t w = write(2, m, sizeof m - 1);
  (void)w;
  _exit(2);
}

int kvb_spec_load(const char *path, kvb_experiment *e, char *err, size_t cap) {
  kvb_experiment_init(e);
  err[0] = '\0';
  snprintf(e->spec_path, sizeof e->spec_path, "%s", path);
  size_t len = 0;
  int rst = kvb_read_file(path, KVB_SPEC_FILE_MAX, "spec", &e->spec_text, &len);
  if (rst) {
    snprintf(err, cap, "%s", kvb_strerror_last());
    return rst;
  }
  /* The backstop: the hook stops Lua code, but not a long library call (a pathological
   * string.find) or code Lua runs with its hooks off. SIGALRM a few seconds past the limit ends
   * the process with a message — `kvbound` is a command, and a spec is untrusted input. */
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = spec_alarm;
  sigemptyset(&sa.sa_mask);
  int armed = sigaction(SIGALRM, &sa, &old) == 0;
  if (armed) alarm((unsigned)ceil(KVB_SPEC_TIME_LIMIT) + KVB_SPEC_BACKSTOP);
  int st = spec_eval(path, len, KVB_SPEC_TIME_LIMIT, e, err, cap);
  if (armed) {
    alarm(0);
    sigaction(SIGALRM, &old, NULL);
  }
  return st;
}

int kvb_spec_load_text(const char *name, const char *text, size_t len, double limit,
                       kvb_experiment *e, char *err, size_t cap) {
  kvb_experiment_init(e);
  err[0] = '\0';
  snprintf(e->spec_path, sizeof e->spec_path, "%s", name);
  if (len > KVB_SPEC_FILE_MAX || !(limit > 0)) {
    snprintf(err, cap, "%s: %zu bytes (limit %zu), time limit %g s", name, len, KVB_SPEC_FILE_MAX, limit);
    return KVB_EINVAL;
  }
  e->spec_text = malloc(len + 1);
  if (!e->spec_text) {
    snprintf(err, cap, "%s: out of memory", name);
    return KVB_ENOMEM;
  }
  memcpy(e->spec_text, text, len);
  e->spec_text[len] = '\0';
  return spec_eval(name, len, limit > KVB_SPEC_TIME_LIMIT ? KVB_SPEC_TIME_LIMIT : limit, e, err, cap);
}

/* Evaluates e->spec_text (len bytes, read from `path`) in the sandbox under `limit` seconds. */
static int spec_eval(const char *path, size_t len, double limit, kvb_experiment *e, char *err,
                     size_t cap) {
  /* a NUL would end the text Lua reads and the text hashed into meta.json at different points */
  if (strlen(e->spec_text) != len) {
    snprintf(err, cap, "%s: the spec contains a NUL byte at offset %zu (a spec is text)", path,
             strlen(e->spec_text));
    kvb_experiment_free(e);
    return KVB_EFORMAT;
  }
  /* default name: the file's base name without .lua */
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  snprintf(e->name, sizeof e->name, "%s", b);
  char *dot = strstr(e->name, ".lua");
  if (dot) *dot = '\0';
  sandbox sb = {0, now_s(), 0, limit};
  lua_State *L = lua_newstate(capped_alloc, &sb);
  if (!L) {
    snprintf(err, cap, "cannot create a Lua state");
    kvb_experiment_free(e);
    return KVB_ENOMEM;
  }
  lua_atpanic(L, panic);
  open_sandbox(L);
  lua_pushlightuserdata(L, e);
  lua_setfield(L, LUA_REGISTRYINDEX, EXP_KEY);
  static const luaL_Reg fns[] = {{"name", l_name},       {"stream", l_stream},   {"method", l_method},
                                 {"sweep", l_sweep},     {"trials", l_trials},   {"seed", l_seed},
                                 {"scale", l_scale},     {"queries", l_queries}, {"measures", l_measures},
                                 {"failure", l_failure}, {"plot", l_plot},       {"probe", l_probe},
                                 {"tasks", l_tasks},     {NULL, NULL}};
  for (const luaL_Reg *r = fns; r->name; r++) {
    lua_pushcfunction(L, r->func);
    lua_setglobal(L, r->name);
  }
  int st = KVB_OK;
  lua_pushcfunction(L, traceback);
  char chunk[600]; /* '@' makes Lua print positions as file:line */
  snprintf(chunk, sizeof chunk, "@%s", path);
  if (luaL_loadbufferx(L, e->spec_text, strlen(e->spec_text), chunk, "t") != LUA_OK) {
    snprintf(err, cap, "%s", lua_tostring(L, -1));
    st = KVB_EFORMAT;
  }
  if (!st) {
    /* the hook stays set until lua_close has run the finalizers (__gc), which are spec code */
    lua_sethook(L, time_hook, LUA_MASKCOUNT, KVB_SPEC_HOOK_COUNT);
    int rc = lua_pcall(L, 0, 0, 1);
    if (sb.expired) {
      snprintf(err, cap, "%s: the spec ran for more than %d s and was stopped (an endless loop, "
               "or one under pcall?); a spec only declares an experiment", path,
               (int)ceil(limit));
      if (rc != LUA_OK && lua_tostring(L, -1) && strstr(lua_tostring(L, -1), "was stopped"))
        snprintf(err, cap, "%s", lua_tostring(L, -1));
      st = KVB_EFORMAT;
    } else if (rc == LUA_ERRMEM) { /* the message handler does not run for memory errors */
      snprintf(err, cap, "%s: the spec needs more than %u MiB of memory (the limit for a spec, "
               "which only declares an experiment)", path, KVB_SPEC_MEM_LIMIT >> 20);
      st = KVB_EFORMAT;
    } else if (rc != LUA_OK) {
      snprintf(err, cap, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)");
      st = KVB_EFORMAT;
    } else {
      st = finalize(path, e, err, cap);
    }
  }
  lua_close(L);
  if (!st && sb.expired) { /* a finalizer ran past the limit while the state closed */
    snprintf(err, cap, "%s: the spec's finalizers (__gc) ran for more than %d s and were "
             "stopped; a spec only declares an experiment", path, (int)ceil(limit));
    st = KVB_EFORMAT;
  }
  if (st) kvb_experiment_free(e);
  return st;
}

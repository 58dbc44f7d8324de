/* test_method_in_model.c — a method's behaviour inside a model is a field of its type
 * (method.h: in_model, observe), read by the model code (src/model/task_run.c,
 * decode_compressed.c kvb_dec_observe_default), never a comparison of its name.
 *   1. known answers: the built-ins' fields as their papers run them (SnapKV's observation
 *      window, H2O's and TOVA's accumulated attention over every prompt query, PyramidKV's
 *      per-layer budget, the one-shot compressors' "compress the prompt once");
 *   2. the default observation from the field, on hand-worked (n0, window) cases;
 *   3. types registered at run time under names no built-in has get the same treatment from
 *      their fields alone (a name-keyed implementation fails these: the mutant), and none from
 *      a built-in's name with the fields zero;
 *   4. the registry refuses unknown bits and values, naming them, and registers nothing. */
#include "unit.h"

#include "decode_compressed.h"
#include "kvb_error.h"
#include "plugin.h"
#include "registry.h"
#include "task_run.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A probe method: its init records whether the model passed "prompt" and its value. */
static int saw_prompt;
static double prompt_value;
static const kvb_param_spec probe_params[] = {
    {"prompt", KVB_PARAM_INT, 0, 0, 1e9, NULL, "compress once after this many tokens (0: never)"},
    {"window", KVB_PARAM_INT, 32, 1, 1e6, NULL, "observation window"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};
static int probe_init(kvb_method *m, const kvb_params *p) {
  saw_prompt = kvb_params_has(p, "prompt");
  prompt_value = kvb_params_get(p, probe_params, "prompt");
  kvb_method_set_state(m, calloc(1, 1));
  return KVB_OK;
}
static int probe_update(kvb_method *m, const double *k, const double *v) {
  (void)m, (void)k, (void)v;
  return KVB_OK;
}
static int probe_query(kvb_method *m, const double *q, double *z) {
  (void)q;
  memset(z, 0, kvb_method_d_value(m) * sizeof *z);
  return KVB_OK;
}
static void probe_memory(const kvb_method *m, kvb_memory *out) {
  (void)m;
  out->bytes = 0, out->vectors = 0;
}
static kvb_method_type probe_type(const char *name, unsigned in_model, unsigned observe) {
  kvb_method_type t = {.name = name, .summary = "in-model probe", .source = "test",
                       .params = probe_params, .init = probe_init, .update = probe_update,
                       .query = probe_query, .memory = probe_memory, .free_state = free,
                       .in_model = in_model, .observe = observe};
  return t;
}

/* Makes the method through the task factory (prompt n0 = 500, no model) and reports what its
 * init saw; the status of the factory. */
static int make_through_task(const kvb_method_type *t, const kvb_params *params) {
  kvb_task_method tm;
  kvb_task_method_init(&tm, t, params, NULL, 500);
  kvb_method_config cfg = {4, 4, 0.5, NULL};
  kvb_method *m = NULL;
  saw_prompt = 0, prompt_value = -1;
  int st = kvb_task_method_make(&tm, 3, 0, &cfg, &m);
  kvb_method_free(m);
  return st;
}

int main(void) {
  /* 1. the built-ins */
  static const struct {
    const char *name;
    unsigned in_model, observe;
  } want[] = {
      {"snapkv", KVB_IN_MODEL_ONCE_AT_PROMPT, KVB_OBSERVE_WINDOW},
      {"pyramidkv", KVB_IN_MODEL_ONCE_AT_PROMPT | KVB_IN_MODEL_PER_LAYER, KVB_OBSERVE_WINDOW},
      {"h2o", 0, KVB_OBSERVE_PROMPT},
      {"tova", 0, KVB_OBSERVE_PROMPT},
      {"balancekv_block", KVB_IN_MODEL_ONCE_AT_PROMPT, KVB_OBSERVE_NONE},
      {"uniform_sample", KVB_IN_MODEL_ONCE_AT_PROMPT, KVB_OBSERVE_NONE},
      {"recent_kcenter", KVB_IN_MODEL_ONCE_AT_PROMPT, KVB_OBSERVE_NONE},
      {"balancekv_augmented", KVB_IN_MODEL_ONCE_AT_PROMPT | KVB_IN_MODEL_SHARED_MASK, KVB_OBSERVE_NONE},
      {"exact", 0, KVB_OBSERVE_NONE},
      {"sink_recent", 0, KVB_OBSERVE_NONE},
      {"subgen", 0, KVB_OBSERVE_NONE},
      {"kivi", 0, KVB_OBSERVE_NONE},
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const kvb_method_type *t = kvb_method_lookup(want[i].name);
    char nm[96];
    snprintf(nm, sizeof nm, "in_model.builtin.%s", want[i].name);
    CHECK(t && t->in_model == want[i].in_model && t->observe == want[i].observe, nm,
          "%s: in_model %u observe %u, want %u %u", want[i].name, t ? t->in_model : 99u,
          t ? t->observe : 99u, want[i].in_model, want[i].observe);
  }

  /* 2. the default observation, hand-worked: PROMPT reads all n0; WINDOW min(window, n0) */
  const kvb_method_type *h2o = kvb_method_lookup("h2o"), *snap = kvb_method_lookup("snapkv");
  const kvb_method_type *bk = kvb_method_lookup("balancekv_block");
  CHECK(kvb_dec_observe_default(h2o, 700, 32) == 700 && kvb_dec_observe_default(snap, 700, 32) == 32 &&
            kvb_dec_observe_default(snap, 20, 32) == 20 && kvb_dec_observe_default(bk, 700, 32) == 0 &&
            kvb_dec_observe_default(NULL, 700, 32) == 0,
        "in_model.observe_default.known_answers", "h2o %zu snapkv %zu / %zu balancekv_block %zu NULL %zu",
        kvb_dec_observe_default(h2o, 700, 32), kvb_dec_observe_default(snap, 700, 32),
        kvb_dec_observe_default(snap, 20, 32), kvb_dec_observe_default(bk, 700, 32),
        kvb_dec_observe_default(NULL, 700, 32));

  /* 3. new names: the fields alone decide */
  static kvb_method_type once, windowed, layered, plain_named_snapkv;
  once = probe_type("inmodel_probe_once", KVB_IN_MODEL_ONCE_AT_PROMPT, KVB_OBSERVE_NONE);
  windowed = probe_type("inmodel_probe_window", 0, KVB_OBSERVE_WINDOW);
  layered = probe_type("inmodel_probe_layers", KVB_IN_MODEL_PER_LAYER, KVB_OBSERVE_PROMPT);
  int st = kvb_method_register(&once, sizeof once);
  if (!st) st = kvb_method_register(&windowed, sizeof windowed);
  if (!st) st = kvb_method_register(&layered, sizeof layered);
  CHECK(st == KVB_OK, "in_model.register_probes", "%s", kvb_strerror_last());
  const kvb_method_type *t_once = kvb_method_lookup("inmodel_probe_once");
  const kvb_method_type *t_win = kvb_method_lookup("inmodel_probe_window");
  const kvb_method_type *t_lay = kvb_method_lookup("inmodel_probe_layers");
  if (t_once && t_win && t_lay) {
    st = make_through_task(t_once, NULL);
    CHECK(st == KVB_OK && saw_prompt && prompt_value == 500, "in_model.once_at_prompt.by_field",
          "status %d, prompt passed %d (= %g, want 500)", st, saw_prompt, prompt_value);
    kvb_params given;
    kvb_params_init(&given);
    kvb_params_set(&given, "prompt", 7);
    st = make_through_task(t_once, &given);
    CHECK(st == KVB_OK && prompt_value == 7, "in_model.once_at_prompt.spec_wins",
          "status %d, prompt %g (want the spec's 7)", st, prompt_value);
    st = make_through_task(t_win, NULL);
    CHECK(st == KVB_OK && !saw_prompt, "in_model.once_at_prompt.not_without_the_bit",
          "status %d, prompt passed %d (want none)", st, saw_prompt);
    /* the per-layer budget needs the model's compressed layers: without a model it is refused,
     * naming the method — the branch is taken by the bit, for a name pyramidkv never had */
    st = make_through_task(t_lay, NULL);
    CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "inmodel_probe_layers"),
          "in_model.per_layer.by_field", "status %d (%s), want KVB_EINVAL naming the method", st,
          kvb_strerror_last());
    kvb_task_method tm;
    kvb_task_method_init(&tm, t_win, NULL, NULL, 500);
    size_t o_win = kvb_task_method_observe(&tm, 500);
    kvb_task_method_init(&tm, t_lay, NULL, NULL, 500);
    size_t o_lay = kvb_task_method_observe(&tm, 500);
    kvb_task_method_init(&tm, t_once, NULL, NULL, 500);
    size_t o_once = kvb_task_method_observe(&tm, 500);
    CHECK(o_win == 32 && o_lay == 500 && o_once == 0, "in_model.observe.by_field",
          "window type %zu (want 32), prompt type %zu (want 500), none %zu (want 0)", o_win, o_lay,
          o_once);
  }
  /* a type whose name is a built-in's but whose fields are zero is treated as its fields say
   * (registered under a free name: names are unique; the test asks the model directly) */
  plain_named_snapkv = *snap;
  plain_named_snapkv.in_model = 0, plain_named_snapkv.observe = 0;
  CHECK(kvb_dec_observe_default(&plain_named_snapkv, 700, 32) == 0, "in_model.name_is_not_read",
        "a type named snapkv with observe 0 observed %zu queries (want 0)",
        kvb_dec_observe_default(&plain_named_snapkv, 700, 32));

  /* 4. bad fields are refused, naming them; nothing is registered */
  static kvb_method_type bad_bits, bad_observe;
  bad_bits = probe_type("inmodel_bad_bits", 8u, 0);
  bad_observe = probe_type("inmodel_bad_observe", 0, 3u);
  st = kvb_method_register(&bad_bits, sizeof bad_bits);
  CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "in_model bits 0x8") &&
            !kvb_method_lookup("inmodel_bad_bits"),
        "in_model.register_refuses_unknown_bits", "status %d: %s", st, kvb_strerror_last());
  st = kvb_method_register(&bad_observe, sizeof bad_observe);
  CHECK(st == KVB_EINVAL && strstr(kvb_strerror_last(), "observe 3") && !kvb_method_lookup("inmodel_bad_observe"),
        "in_model.register_refuses_unknown_observe", "status %d: %s", st, kvb_strerror_last());
  /* a registrant built before these members existed (type_size ends at equivalence_tol) gets
   * zero: no model behaviour */
  static kvb_method_type old;
  old = probe_type("inmodel_old_abi", KVB_IN_MODEL_ONCE_AT_PROMPT, KVB_OBSERVE_WINDOW);
  st = kvb_method_register(&old, offsetof(kvb_method_type, in_model));
  const kvb_method_type *t_old = kvb_method_lookup("inmodel_old_abi");
  CHECK(st == KVB_OK && t_old && t_old->in_model == 0 && t_old->observe == 0, "in_model.older_abi_is_zero",
        "status %d, in_model %u observe %u (want 0 0)", st, t_old ? t_old->in_model : 99u,
        t_old ? t_old->observe : 99u);
  UNIT_EXIT();
}

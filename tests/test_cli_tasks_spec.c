/* test_cli_tasks_spec.c — the spec runner's model/task stage (tasks{}; runner.h, runner_tasks.c)
 * end to end through the kvbound command: every field of tasks{} is checked and a bad one is
 * refused with file:line and what was expected (unknown field, family, lengths, depths, per_cell,
 * mode, protocol (and protocol = "authors" with a mode), seed, model, the task count limit, a
 * second tasks{}, a stream or sweep beside it, no method, a repeated length or depth, queries{}
 * beside it, no mode), and --shard is a usage error (exit 2, no directory made); with the model
 * (SKIP without it) a one-task spec writes results.csv (exact first,
 * delta 0; a method keeping every token: |delta| ≤ 1e-3), the summary, meta.json with "stage":
 * "tasks" and "model": "smollm2", and `kvbound plot` accepts the directory; --shard is refused.
 * With Gemma 3 270M (SKIP without it) the same one-task spec with model = "gemma3": the same
 * results rules, meta.json and the summary name the model (check-full only: KVB_TIER, unit.h). */
#include "kvbound.h"
#include "model.h"
#include "lm.h"
#include "unit.h"
#include "cli_harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bad(const char *label, const char *text, const char *want_line, const char *want_msg) {
  char spec[128], cmd[2048], out[16384], name[200], where[200];
  snprintf(spec, sizeof spec, "%s/bad.lua", tmp);
  write_file(spec, text);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/bad --jobs 1", kvbound, spec, tmp);
  int rc = sh(cmd, out, sizeof out);
  if (want_line[0]) snprintf(where, sizeof where, "%s:%s:", spec, want_line);
  else snprintf(where, sizeof where, "%s", spec);
  snprintf(name, sizeof name, "tasks_spec.refused.%s", label);
  CHECK(rc == 2 && strstr(out, where) && strstr(out, want_msg), name,
        "rc %d, wanted '%s' and '%s' in: %s", rc, where, want_msg, out);
}

static void spec_errors(void) {
  const char *m = "method \"sink_recent\" { budget = 64 }\n";
  char t[2048];
#define BAD(label, body, line, msg)                          \
  do {                                                       \
    snprintf(t, sizeof t, "%s%s", m, body);                  \
    bad(label, t, line, msg);                                \
  } while (0)
  BAD("unknown_field", "tasks { family = \"niah_single\", lengths = { 1024 }, colour = 1 }\n", "2",
      "unknown field 'colour'");
  BAD("family", "tasks { family = \"niah_double\", lengths = { 1024 } }\n", "2", "niah_single");
  BAD("no_family", "tasks { lengths = { 1024 } }\n", "2", "'family' is required");
  BAD("short", "tasks { family = \"vt\", lengths = { 512 } }\n", "2", "'lengths' entry 1");
  BAD("lengths_type", "tasks { family = \"vt\", lengths = 1024 }\n", "2", "'lengths' must be a list");
  BAD("too_many_lengths",
      "tasks { family = \"vt\", lengths = { 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024 } }\n",
      "2", "1 to 8");
  BAD("depth", "tasks { family = \"vt\", lengths = { 1024 }, depths = { 0.5, 1.5 } }\n", "2",
      "'depths' entry 2");
  BAD("depth_word", "tasks { family = \"vt\", lengths = { 1024 }, depths = \"middle\" }\n", "2",
      "\"spread\"");
  BAD("per_cell", "tasks { family = \"vt\", lengths = { 1024 }, per_cell = 0 }\n", "2", "'per_cell'");
  BAD("mode", "tasks { family = \"vt\", lengths = { 1024 }, mode = \"blind\" }\n", "2", "'mode'");
  BAD("protocol", "tasks { family = \"vt\", lengths = { 1024 }, protocol = \"paper\" }\n", "2",
      "'protocol'");
  BAD("protocol_with_mode",
      "tasks { family = \"vt\", lengths = { 1024 }, protocol = \"authors\", mode = \"aware\" }\n",
      "2", "takes no 'mode'");
  BAD("seed", "tasks { family = \"vt\", lengths = { 1024 }, seed = -3 }\n", "2", "'seed'");
  BAD("model", "tasks { family = \"vt\", lengths = { 1024 }, model = \"llama\" }\n", "2",
      "'model' must be \"smollm2\" or \"gemma3\", got \"llama\"");
  BAD("model_type", "tasks { family = \"vt\", lengths = { 1024 }, model = 3 }\n", "2",
      "field 'model' must be a string");
  BAD("total", "tasks { family = \"vt\", lengths = { 1024, 2048 }, depths = { 0, 1 }, per_cell = 5000 }\n",
      "2", "the limit is 10000");
  BAD("twice", "tasks { family = \"vt\", lengths = { 1024 }, mode = \"aware\" }\n"
      "tasks { family = \"vt\", lengths = { 1024 }, mode = \"aware\" }\n", "3", "declared twice");
  BAD("stream", "stream \"gaussian\" { n = 64 }\ntasks { family = \"vt\", lengths = { 1024 }, mode = \"aware\" }\n",
      "3", "not a stream");
  bad("no_method", "tasks { family = \"vt\", lengths = { 1024 }, mode = \"aware\" }\n", "", "declares no method");
  /* a repeated length or depth ran its cell twice; queries{} beside tasks{} was ignored; a
   * missing mode silently meant "agnostic" */
  BAD("repeated_length", "tasks { family = \"vt\", lengths = { 1024, 2048, 1024 }, mode = \"aware\" }\n",
      "2", "'lengths' entry 3 (1024) repeats entry 1");
  BAD("repeated_depth",
      "tasks { family = \"vt\", lengths = { 1024 }, depths = { 0.5, 0.5 }, mode = \"aware\" }\n", "2",
      "'depths' entry 2 (0.5) repeats entry 1");
  BAD("queries_beside", "tasks { family = \"vt\", lengths = { 1024 }, mode = \"aware\" }\n"
      "queries { every = 4 }\n", "3", "queries{} does not apply to a tasks{} spec");
  BAD("no_mode", "tasks { family = \"vt\", lengths = { 1024 } }\n", "2", "'mode' is required");
#undef BAD
  /* --shard with a tasks{} spec: a usage error (exit 2, nothing written), not a failed shard */
  char spec[128], cmd[2048], out[16384], dir[160];
  snprintf(spec, sizeof spec, "%s/shard.lua", tmp);
  snprintf(dir, sizeof dir, "%s/shard-out", tmp);
  snprintf(t, sizeof t, "%stasks { family = \"vt\", lengths = { 1024 }, mode = \"aware\" }\n", m);
  write_file(spec, t);
  snprintf(cmd, sizeof cmd, "%s run %s --out %s --shard 0/2", kvbound, spec, dir);
  int rc = sh(cmd, out, sizeof out);
  FILE *f = fopen(dir, "r");
  CHECK(rc == 2 && strstr(out, "no --shard") && strstr(out, ":2:") && !f,
        "tasks_spec.shard_is_a_usage_error", "rc %d (want 2), directory made %d: %s", rc, f != NULL, out);
  if (f) fclose(f);
}

/* model NULL: the default (no model field, SmolLM2); else tasks{}'s model = "...". */
static void one_task(const char *model) {
  char spec[128], cmd[2048], out[16384], path[256], text[1024], field[64] = "", pre[64];
  const char *key = model ? model : "smollm2";
  const char *dir = model ? model : "one";
  snprintf(pre, sizeof pre, "tasks_spec%s%s", model ? "." : "", model ? model : "");
  if (model) snprintf(field, sizeof field, ", model = \"%s\"", model);
  snprintf(spec, sizeof spec, "%s/%s.lua", tmp, dir);
  snprintf(text, sizeof text, "name \"one\"\n"
           "tasks { family = \"niah_single\", lengths = { 1024 }, depths = { 0.5 }, "
           "mode = \"agnostic\", seed = 5%s }\n"
           "method \"sink_recent\" { budget = 4096, label = \"all\" }\n"
           "method \"sink_recent\" { budget = 64, label = \"small\" }\n", field);
  write_file(spec, text);
  snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 %s run %s --out %s/%s --jobs 1", kvbound, spec,
           tmp, dir);
  int rc = sh(cmd, out, sizeof out);
  char name[128];
#define NAME(s) (snprintf(name, sizeof name, "%s.%s", pre, s), name)
  CHECK(rc == 0 && strstr(out, "all") && strstr(out, "small") &&
            strstr(out, model ? "Gemma 3 270M" : "SmolLM2-135M"),
        NAME("run"), "rc %d: %s", rc, out);
  snprintf(path, sizeof path, "%s/%s/results.csv", tmp, dir);
  char *csv = read_file(path);
  int ok = csv && !strncmp(csv, "family,length,depth,task_seed,mode,method,right,score,loglik,delta", 66);
  double d_exact = NAN, d_all = NAN, d_small = NAN;
  for (char *l = csv ? strchr(csv, '\n') : NULL; l && l[1]; l = strchr(l + 1, '\n')) {
    char meth[32] = "";
    double delta = NAN;
    /* family,length,depth,seed,mode,method,right,score,loglik,delta,... */
    if (sscanf(l + 1, "%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%31[^,],%*[^,],%*[^,],%*[^,],%lf", meth, &delta) == 2) {
      if (!strcmp(meth, "exact")) d_exact = delta;
      if (!strcmp(meth, "all")) d_all = delta;
      if (!strcmp(meth, "small")) d_small = delta;
    }
  }
  CHECK(ok && d_exact == 0 && fabs(d_all) <= 1e-3 && d_small < -1, NAME("results"),
        "header %d, delta exact %g, keep-all %g, budget 64 %g", ok, d_exact, d_all, d_small);
  free(csv);
  snprintf(path, sizeof path, "%s/%s/meta.json", tmp, dir);
  char *meta = read_file(path), want[64];
  snprintf(want, sizeof want, "\"model\": \"%s\"", key);
  CHECK(meta && strstr(meta, "\"stage\": \"tasks\"") && strstr(meta, "\"name\": \"one\"") &&
            strstr(meta, want),
        NAME("meta"), "%s", meta ? meta : "(missing)");
  free(meta);
  snprintf(cmd, sizeof cmd, "%s plot %s/%s", kvbound, tmp, dir);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 0, NAME("plot_accepts"), "rc %d: %s", rc, out);
  if (model) return;
  snprintf(cmd, sizeof cmd, "%s run %s --out %s/sh --shard 0/2", kvbound, spec, tmp);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc != 0 && strstr(out, "no --shard"), "tasks_spec.shard_refused", "rc %d: %s", rc, out);
#undef NAME
}

int main(int argc, char **argv) {
  (void)argc;
  if (cli_harness_init(argv[0], "/tmp/kvb-tasks-spec-XXXXXX", "test_cli_tasks_spec")) return 1;
  spec_errors();
  if (kvb_model_available() != KVB_OK) printf("SKIP tasks_spec.model: %s\n", kvb_strerror_last());
  else one_task(NULL);
  if (!unit_full_tier()) /* the same spec stage as SmolLM2's above; Gemma's runner in test_task_gemma3 */
    printf("SKIP tasks_spec.gemma3: check-full only (make check: the smollm2 spec, test_task_gemma3)\n");
  else if (kvb_lm_available(KVB_LM_GEMMA3) != KVB_OK) printf("SKIP tasks_spec.gemma3: %s\n", kvb_strerror_last());
  else one_task("gemma3");
  char cmd[128], out[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
  sh(cmd, out, sizeof out);
  UNIT_EXIT();
}

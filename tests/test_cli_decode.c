/* test_cli_decode.c — `kvbound decode` (src/app/decode_cli.c): --help, every usage error with
 * a clear message and exit status 2 before the model loads, and (with the model) one short text
 * run whose exact method reports zero KL and full top-1 agreement, and a too-short text; the
 * task mode (src/model/tasks.h) at 1024 tokens with the method exact, question-agnostic and
 * question-aware: both run, exact attention's delta log-lik is 0 and its greedy answer is
 * printed; a length above the model's context is refused. With Gemma 3 270M (SKIP without it)
 * the task and pass-key modes run through --model gemma3 (gemma3_modes); --mode authors (the
 * authors' needle protocol) prefills the whole prompt and feeds nothing after it. In `make
 * check` (KVB_TIER=check, unit.h) only the question-aware task run and no Gemma run: the rest
 * repeats paths that test_task_run, test_task_authors and test_task_gemma3 cover there. */
#include "cli_harness.h"
#include "kvb_error.h"
#include "model.h"
#include "lm.h"

#include <math.h>

/* Gemma 3 270M (SKIP without it): the task mode through kvb_lm — sink_recent keeping every
 * token on the global layers (delta within rounding of exact attention, BOS first), the pass-key
 * mode with exact, and a length above Gemma's 32768-token context refused. */
static void gemma3_modes(void) {
  char out[16384], cmd[2048];
  if (!unit_full_tier()) { /* the same decode path as SmolLM2's below; Gemma's own in test_task_gemma3 */
    printf("SKIP cli_decode.gemma3_task: check-full only (make check: test_task_gemma3, test_decode_gemma3)\n");
    return;
  }
  if (kvb_lm_available(KVB_LM_GEMMA3) != KVB_OK) {
    printf("SKIP cli_decode.gemma3_task: %s\n", kvb_strerror_last());
    return;
  }
  snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 %s decode --model gemma3 --method sink_recent "
           "--param budget=2048 --task niah_single --length 1024 --depth 0.5 --task-seed 1 "
           "--mode agnostic", kvbound);
  int rc = sh(cmd, out, sizeof out);
  const char *d = strstr(out, "delta log-lik ");
  double delta = d ? atof(d + 14) : 1e9;
  CHECK(rc == 0 && strstr(out, "model Gemma 3 270M") && strstr(out, "global layers (5, 11, 17)") &&
            strstr(out, "mode agnostic") && strstr(out, "exact: \"") && fabs(delta) <= 1e-3 &&
            strstr(out, "summary niah_single agnostic length 1024"),
        "cli_decode.gemma3_task", "rc %d, delta %g: %s", rc, delta, out);
  printf("    %s", out);
  snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 %s decode --model gemma3 --method exact "
           "--passkey 1 --reps 4", kvbound);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 0 && strstr(out, "model Gemma 3 270M") && strstr(out, "pass-key accuracy: exact"),
        "cli_decode.gemma3_passkey", "rc %d: %s", rc, out);
  snprintf(cmd, sizeof cmd, "%s decode --model gemma3 --method exact --task niah_single --length "
           "40000 --mode aware", kvbound);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "gemma3.context_length") && strstr(out, "32768"),
        "cli_decode.gemma3_task_too_long", "rc %d: %s", rc, out);
}

int main(int argc, char **argv) {
  (void)argc;
  if (cli_harness_init(argv[0], "/tmp/kvb-decode-XXXXXX", "cli_decode")) return 1;
  char out[16384], cmd[2048];
  snprintf(cmd, sizeof cmd, "%s decode --help", kvbound);
  int rc = sh(cmd, out, sizeof out);
  CHECK(rc == 0 && strstr(out, "--passkey") && strstr(out, "--n0") && strstr(out, "--task FAMILY") &&
            strstr(out, "--mode agnostic") && strstr(out, "niah_multivalue") &&
            strstr(out, "in all three modes (text,") && strstr(out, "32768 for Gemma 3 270M"),
        "cli_decode.help", "rc %d: %s", rc, out);
  static const struct {
    const char *args, *msg, *name;
  } bad[] = {
      {"--passkey 2", "--method NAME is required", "cli_decode.no_method"},
      {"--method nope --passkey 2", "unknown method 'nope'", "cli_decode.unknown_method"},
      {"--method h2o --param budget=x --passkey 2", "budget", "cli_decode.bad_param_value"},
      {"--method h2o --param bogus=3 --passkey 2", "bogus", "cli_decode.unknown_param"},
      {"--method exact", "either --text FILE", "cli_decode.no_mode"},
      {"--method exact --text /x --passkey 2", "either --text FILE", "cli_decode.two_modes"},
      {"--method exact --text /x --n0 5", "--n0 N and --n1 N", "cli_decode.missing_n1"},
      {"--method exact --text /x --n0 5 --n1 0", "--n0 N and --n1 N", "cli_decode.zero_n1"},
      {"--method exact --passkey -3", "--passkey needs", "cli_decode.negative_tasks"},
      {"--method exact --passkey 2 --observe lots", "a count or 'all'", "cli_decode.bad_observe"},
      {"--method exact --passkey 2 --frobnicate 1", "unknown option", "cli_decode.unknown_option"},
      {"--method exact --n0", "--n0 needs", "cli_decode.option_without_value"},
      /* beyond 2^64 − 1: refused, never clamped to 2^64 − 1 (strtoull's ERANGE) */
      {"--method exact --seed 18446744073709551616", "--seed needs a non-negative integer below 2^64",
       "cli_decode.seed_beyond_2_64"},
      {"--method exact --task-seed 99999999999999999999", "--task-seed needs",
       "cli_decode.task_seed_beyond_2_64"},
      {"--method exact --task haystack --length 1024 --mode agnostic", "unknown task family 'haystack'",
       "cli_decode.task_unknown_family"},
      {"--method exact --task niah_single --length 1024", "--mode agnostic|aware", "cli_decode.task_no_mode"},
      {"--method exact --task niah_single --mode aware", "--length N", "cli_decode.task_no_length"},
      {"--method exact --task niah_single --length 1024 --mode sideways", "'aware' or 'authors'",
       "cli_decode.task_bad_mode"},
      {"--method exact --task vt --length 1024 --mode aware --depth 1.5", "--depth needs a number in [0, 1]",
       "cli_decode.task_bad_depth"},
      {"--method exact --task vt --length 512 --mode aware", "at least 1024", "cli_decode.task_short"},
      {"--method exact --task vt --length 1024 --mode aware --passkey 2", "either --text FILE",
       "cli_decode.task_and_passkey"},
      {"--method exact --task cwe --length 1024 --mode aware --tasks 0", "--tasks needs",
       "cli_decode.task_zero_tasks"},
      {"--method exact --model gemma3 --text /x --passkey 2", "either --text FILE",
       "cli_decode.gemma3_two_modes"},
      {"--method exact --model gemma3 --task niah_single --length 1024", "--mode agnostic|aware",
       "cli_decode.gemma3_task_no_mode"},
      {"--method exact --model gemma3 --task niah_single --length 1000 --mode aware", "at least 1024",
       "cli_decode.gemma3_task_short"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(cmd, sizeof cmd, "%s decode %s", kvbound, bad[i].args);
    rc = sh(cmd, out, sizeof out);
    CHECK(rc == 2 && strstr(out, bad[i].msg), bad[i].name, "rc %d, wanted 2 and \"%s\": %s", rc,
          bad[i].msg, out);
  }
  gemma3_modes();
  if (kvb_model_available() != KVB_OK) {
    printf("SKIP cli_decode.text_exact: %s\n", kvb_strerror_last());
    return unit_failed ? 1 : 0;
  }
  snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 %s decode --method exact --text "
           "/usr/share/common-licenses/GPL-3 --n0 24 --n1 4", kvbound);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 0 && (strstr(out, "increase +0.0000") || strstr(out, "increase -0.0000")) &&
            strstr(out, "top-1 agreement 4/4") &&
            strstr(out, "KL(exact || method) 0.00000"),
        "cli_decode.text_exact", "rc %d: %s", rc, out);
  /* task mode at 1024 tokens, the three forms: the method exact (exact attention's own run, delta
   * 0 by construction) question-agnostic, and sink_recent keeping every token (exact attention by
   * another code path: delta within rounding) question-aware and under the authors' protocol
   * (nothing fed after the compressed prompt); exact's greedy answer printed */
  static const char *const mode[3] = {"agnostic", "aware", "authors"};
  static const char *const meth[3] = {"exact", "sink_recent --param budget=2048",
                                      "sink_recent --param budget=2048"};
  for (int i = 0; i < 3; i++) {
    if (i != 1 && !unit_full_tier()) { /* make check: the aware form; the others' runner paths in
                                          test_task_run and test_task_authors */
      printf("SKIP cli_decode.task_%s: check-full only (make check: cli_decode.task_aware, "
             "test_task_run, test_task_authors)\n", mode[i]);
      continue;
    }
    snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 %s decode --method %s --task niah_single "
             "--length 1024 --depth 0.5 --task-seed 3 --mode %s", kvbound, meth[i], mode[i]);
    rc = sh(cmd, out, sizeof out);
    char name[64];
    snprintf(name, sizeof name, "cli_decode.task_%s", mode[i]);
    const char *d = strstr(out, "delta log-lik ");
    double delta = d ? atof(d + 14) : 1e9;
    CHECK(rc == 0 && strstr(out, mode[i]) && strstr(out, "exact: \"") && strstr(out, "match") &&
              (i ? fabs(delta) <= 1e-3 : (strstr(out, "delta log-lik +0.0000") != NULL)) &&
              strstr(out, "summary niah_single") &&
              (i < 2 || (strstr(out, "mode authors: compressed prompt") && strstr(out, "fed after it 0;"))),
          name, "rc %d, delta %g: %s", rc, delta, out);
    printf("    %s", out); /* exact attention's greedy answer, for the log */
  }
  snprintf(cmd, sizeof cmd, "%s decode --method exact --task niah_single --length 9000 --mode aware", kvbound);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "llama.context_length") && strstr(out, "8192"), "cli_decode.task_too_long",
        "rc %d: %s", rc, out);
  char path[128];
  snprintf(path, sizeof path, "%s/short.txt", tmp);
  write_file(path, "Too short.");
  snprintf(cmd, sizeof cmd, "%s decode --method exact --text %s --n0 24 --n1 4", kvbound, path);
  rc = sh(cmd, out, sizeof out);
  CHECK(rc == 2 && strstr(out, "the text has"), "cli_decode.text_too_short", "rc %d: %s", rc, out);
  char *back = read_file(path); /* the run left the input as it was */
  CHECK(back && strcmp(back, "Too short.") == 0, "cli_decode.input_untouched", "%s", back ? back : "(gone)");
  free(back);
  remove(path);
  rmdir(tmp);
  return unit_failed ? 1 : 0;
}

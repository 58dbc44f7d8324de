/* fuzz_spec.c — libFuzzer harness for the spec reader (src/app/lua_spec.c): arbitrary Lua text
 * runs in the sandbox, under a 0.05 s time limit (the limit is the same code path as the 5 s
 * one), and must load into a consistent experiment or be refused with a message — never a
 * crash, an out-of-bounds write, a leak or a hang. Built only by `make fuzz-spec` (clang
 * -fsanitize=fuzzer,address,undefined); seed corpus: scripts/specs/ and the hostile fragments
 * of tests/fuzz_corpus/spec/ (metamethods re-entering readers, pcall around endless loops, __gc). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lua_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char err[8192];
  kvb_experiment e;
  int st = kvb_spec_load_text("fuzz.lua", (const char *)data, size, 0.05, &e, err, sizeof err);
  if (st == 0) {
    /* what the readers guarantee: bounds kept, every sweep non-empty and finite */
    if (e.nsweeps > KVB_RUN_MAX_SWEEPS || e.nq_at > KVB_RUN_MAX_QUERIES || e.nstreams == 0 ||
        e.nstreams > KVB_RUN_MAX_STREAMS || e.nmethods == 0 || e.nmethods > KVB_RUN_MAX_METHODS ||
        e.nplots > KVB_RUN_MAX_PLOTS)
      abort();
    for (size_t i = 0; i < e.nsweeps; i++)
      if (e.sweeps[i].nvals == 0 || !e.sweeps[i].vals) abort();
    for (size_t i = 1; i < e.nq_at; i++)
      if (e.q_at[i] <= e.q_at[i - 1]) abort();
    kvb_experiment_free(&e);
  } else if (err[0] == '\0') {
    abort(); /* an error must say what is wrong */
  }
  return 0;
}

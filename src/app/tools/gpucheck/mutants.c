/* mutants.c — kvb-gpucheck: the mutant kernels (each a -D define of the kernel text) and the
 * kernel whose grid must reject each, the barrier-race mutants (Oclgrind's alone), and the mutant
 * loop of `test`. */
#include "gpucheck.h"
#include "kvb_error.h"

#include <stdio.h>
#include <string.h>

/* Each mutant kernel (a -D define) and the kernel whose grid must reject it. KVB_MUT_SCALE_5E4
 * (every score 0.05% too high) is listed once per kernel it changes: each of those grids must see
 * it, which is what the running-error tolerances are for. */
static const char *MUTANTS[] = {"KVB_MUT_NO_RESCALE",     "KVB_MUT_DROP_PARTIAL",
                                "KVB_MUT_WALK_SIGN_FLIP", "KVB_MUT_WQ_NO_MAX",  "KVB_MUT_SG_OLD_COUNT",
                                "KVB_MUT_SG_NO_COUNT",    "KVB_MUT_SG_CLUSTER_LT", "KVB_MUT_SCALE_5E4",
                                "KVB_MUT_SCALE_5E4",      "KVB_MUT_SCALE_5E4", "KVB_MUT_SCALE_5E4",
                                "KVB_MUT_APPEND_DROP_LAST", "KVB_MUT_GRAM_SKIP_CHUNK", "KVB_MUT_HALVE_PAR_OFF",
                                "KVB_MUT_SGB_TIE_NEW",    "KVB_MUT_SGP_TIE_LATER"};
static const char *MUTANT_KERNEL[] = {"attn_decode", "attn_decode", "bkvb_compress",
                                      "bkvb_query",  "subgen",      "subgen",      "subgen",
                                      "attn_decode", "bkvb_query",  "subgen",      "bkvb_compress",
                                      "resident",    "bkvb_gram",   "bkvb_gram",   "resident",
                                      "tiny_sgbatch"};
/* Barrier races: work-items of a group read what another wrote without a barrier between. PoCL
 * (and any device that runs a group's items one after another) computes the right answer, so these
 * are not in the mutant loop of `test`; scripts/oclgrind-check runs `test --grid tiny --mutant NAME`
 * under Oclgrind's race detector, which must report each of them. */
static const char *RACE_MUTANTS[] = {"KVB_MUT_WALK_NO_SJ_BARRIER",      "KVB_MUT_WQ_NO_CHUNK_BARRIER",
                                     "KVB_MUT_SG_NO_T0_BARRIER",        "KVB_MUT_SGQ_NO_CHUNK_BARRIER",
                                     "KVB_MUT_NO_BARRIER",              "KVB_MUT_COOP_NO_TILE_BARRIER",
                                     "KVB_MUT_GRAM_NO_STAGE_BARRIER",   "KVB_MUT_GRAM_NO_TILE_BARRIER",
                                     "KVB_MUT_HALVE_NO_PREFIX_BARRIER", "KVB_MUT_SGP_NO_LOAD_BARRIER",
                                     "KVB_MUT_SGB_NO_T0_BARRIER"};
/* the kernel group whose cases run each one, and the first case that reaches its barrier (the
 * reshaped kernels' one-launch cases: scripts/oclgrind-check starts there) */
static const char *RACE_KERNEL[] = {"bkvb_compress", "bkvb_query", "subgen",    "subgen",    "attn_decode", "tiny_coop",
                                    "tiny_gram",     "tiny_gram",  "tiny_gram", "tiny_sgbatch", "tiny_sgbatch"};
static const int RACE_FIRST_CASE[] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1};
_Static_assert(sizeof MUTANTS / sizeof *MUTANTS == sizeof MUTANT_KERNEL / sizeof *MUTANT_KERNEL, "one kernel per mutant");
_Static_assert(sizeof RACE_MUTANTS / sizeof *RACE_MUTANTS == sizeof RACE_KERNEL / sizeof *RACE_KERNEL &&
                   sizeof RACE_KERNEL / sizeof *RACE_KERNEL == sizeof RACE_FIRST_CASE / sizeof *RACE_FIRST_CASE,
               "one kernel and first case per race mutant");

/* A race mutant in the device loop would make `test` fail on a GPU whose kernels are all right (a
 * missing barrier there usually still gives the right answer): 1 when none is, with its PASS line. */
static int device_mutants_have_no_race(void) {
  for (size_t i = 0; i < sizeof MUTANTS / sizeof *MUTANTS; i++)
    for (size_t j = 0; j < sizeof RACE_MUTANTS / sizeof *RACE_MUTANTS; j++)
      if (!strcmp(MUTANTS[i], RACE_MUTANTS[j])) {
        printf("FAIL mutant lists: race mutant %s is in the device loop (Oclgrind's alone)\n", MUTANTS[i]);
        return 0;
      }
  /* the Makefile builds a CUDA fatbin for every mutant define but *_BARRIER (the race mutants) */
  for (size_t i = 0; i < sizeof MUTANTS / sizeof *MUTANTS; i++) {
    size_t n = strlen(MUTANTS[i]);
    if (n >= 8 && !strcmp(MUTANTS[i] + n - 8, "_BARRIER")) {
      printf("FAIL mutant lists: device mutant %s is named *_BARRIER (the Makefile builds no CUDA fatbin for those)\n", MUTANTS[i]);
      return 0;
    }
  }
  for (size_t j = 0; j < sizeof RACE_MUTANTS / sizeof *RACE_MUTANTS; j++) {
    size_t n = strlen(RACE_MUTANTS[j]);
    if (n < 8 || strcmp(RACE_MUTANTS[j] + n - 8, "_BARRIER")) {
      printf("FAIL mutant lists: race mutant %s is not named *_BARRIER (the Makefile would build it for devices)\n", RACE_MUTANTS[j]);
      return 0;
    }
  }
  printf("PASS mutant lists: none of the %zu race mutants (*_BARRIER) is in the device loop (they run under Oclgrind)\n",
         sizeof RACE_MUTANTS / sizeof *RACE_MUTANTS);
  return 1;
}


/* The mutant loop of `test` (after the grid ran on the kernels as they are): each mutant of MUTANTS
 * built on its own and run on its kernel's cases of the same grid G (ag: the attention cases, na
 * of them); returns the number of failures (a mutant not rejected, a build that failed). */
int run_mutants(kvb_gpu_backend be, int dev, const char *filter, grid G, attn_case *ag, size_t na) {
  kvb_gpu *g;
  int fails = 0;
  char def[128], why[800];
  /* mutants: each must fail at least one case of the same grid */
  if (!device_mutants_have_no_race()) fails++;
  for (size_t mi = 0; mi < sizeof MUTANTS / sizeof *MUTANTS; mi++) {
      if (!matches(filter, MUTANT_KERNEL[mi])) continue;
      const char *mk = MUTANT_KERNEL[mi];
      if (!strncmp(mk, "tiny_", 5)) { /* a tiny group: each case against its exact answer or the kernel it replaces */
        size_t gi = 0, badt = 0;
        char first[800] = "";
        while (gi < N_OF(TINY_GROUP) && strcmp(TINY_GROUP[gi], mk)) gi++;
        snprintf(def, sizeof def, "-D%s", MUTANTS[mi]);
        if (gi == N_OF(TINY_GROUP) || kvb_gpu_open(be, dev, def, &g)) {
          printf("FAIL mutant %s: build failed: %s\n", MUTANTS[mi], gi == N_OF(TINY_GROUP) ? "no such group" : kvb_strerror_last());
          fails++;
          continue;
        }
        for (size_t ci = 0; ci < TINY_NCASE[gi]; ci++)
          if (!run_tiny(g, be, dev, gi, (int)ci, why, sizeof why) && !badt++) snprintf(first, sizeof first, "%s", why);
        if (badt) printf("PASS mutant %s rejected: %zu of %zu cases fail (first: %s)\n", MUTANTS[mi], badt, TINY_NCASE[gi], first);
        else printf("FAIL mutant %s not rejected: all %zu cases pass\n", MUTANTS[mi], TINY_NCASE[gi]), fails++;
        kvb_gpu_close(g);
        continue;
      }
      if (!strcmp(mk, "resident") || !strcmp(mk, "bkvb_gram")) { /* cases with their own known answers */
        char def[128], first[600] = "";
        size_t nc = 0, badr;
        snprintf(def, sizeof def, "-D%s", MUTANTS[mi]);
        if (kvb_gpu_open(be, dev, def, &g)) {
          printf("FAIL mutant %s: build failed: %s\n", MUTANTS[mi], kvb_strerror_last());
          fails++;
          continue;
        }
        badr = !strcmp(mk, "resident") ? run_resident_all(g, 1, &nc, first, sizeof first)
                                       : run_gram_all(g, 1, &nc, first, sizeof first);
        if (badr) printf("PASS mutant %s rejected: %zu of %zu cases fail (first: %s)\n", MUTANTS[mi], badr, nc, first);
        else printf("FAIL mutant %s not rejected: all %zu cases pass\n", MUTANTS[mi], nc), fails++;
        kvb_gpu_close(g);
        continue;
      }
      int bk = !strcmp(mk, "bkvb_compress"), wq = !strcmp(mk, "bkvb_query"), sg = !strcmp(mk, "subgen");
      size_t ncase = bk ? G.nbk : wq ? G.nwq : sg ? G.nsg : na;
      snprintf(def, sizeof def, "-D%s", MUTANTS[mi]);
      if (kvb_gpu_open(be, dev, def, &g)) {
        printf("FAIL mutant %s: build failed: %s\n", MUTANTS[mi], kvb_strerror_last());
        fails++;
        continue;
      }
      size_t bad = 0;
      char first[800] = "";
      for (size_t i = 0; ag && i < ncase; i++)
        if ((bk ? run_bkvb(g, &G.bk[i], 1, why, sizeof why)
             : wq ? run_wquery(g, &G.wq[i], 1, why, sizeof why)
             : sg ? run_subgen(g, &G.sg[i], 1, why, sizeof why)
                  : run_attn(g, &ag[i], 1, why, sizeof why)) != 1) {
          if (!bad++) snprintf(first, sizeof first, "%s", why);
        }
      if (sg) { /* the exact-tie case too (its own known answer) */
        ncase++;
        if (run_subgen_tie(g, 1, why, sizeof why) != 1 && !bad++) snprintf(first, sizeof first, "%s", why);
      }
      if (bad) printf("PASS mutant %s rejected: %zu of %zu cases fail (first: %s)\n", MUTANTS[mi], bad, ncase, first);
      else printf("FAIL mutant %s not rejected: all %zu cases pass\n", MUTANTS[mi], ncase), fails++;
      kvb_gpu_close(g);
    }
  return fails;
}

/* The mutant lines of `list`. */
void list_mutants(void) {
  printf("mutants:");
  for (size_t i = 0; i < sizeof MUTANTS / sizeof *MUTANTS; i++) printf(" %s (%s)", MUTANTS[i], MUTANT_KERNEL[i]);
  printf("\nrace mutants:");
  for (size_t i = 0; i < sizeof RACE_MUTANTS / sizeof *RACE_MUTANTS; i++) {
    printf(" %s (%s", RACE_MUTANTS[i], RACE_KERNEL[i]);
    if (RACE_FIRST_CASE[i]) printf(", from case %d", RACE_FIRST_CASE[i]);
    printf(")");
  }
  printf("\n");
}

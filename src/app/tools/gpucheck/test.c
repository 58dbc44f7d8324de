/* test.c — kvb-gpucheck test: every case of the grid on one device (one PASS/FAIL line each), the
 * checks that bad input is rejected before launch, then the mutant loop (mutants.c). */
#include "gpucheck.h"
#include "gpu_ops.h"
#include "kvb_error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --case N: only the N-th case (from 0) of each kernel's list (scripts/oclgrind-check runs one case
 * per process); -1 all. --no-mutants: no mutant loop. */
long only_case = -1;
int no_mutants = 0;
static size_t cases_run = 0;
static int want_case(size_t i) {
  if (only_case >= 0 && (long)i != only_case) return 0;
  cases_run++;
  return 1;
}

/* test on one device: the grid (tiny: --grid tiny), then each mutant of MUTANTS must fail a case.
 * mutant != NULL (--mutant NAME): the grid on the program built with -DNAME, no mutant loop (the
 * caller judges: scripts/oclgrind-check wants Oclgrind's report, not a FAIL line). */
int do_test(kvb_gpu_backend be, int dev, int full, int tiny, const char *filter, const char *mutant) {
  kvb_gpu *g;
  int fails = 0;
  char def[128] = "";
  if (mutant) snprintf(def, sizeof def, "-D%s", mutant);
  int orc = kvb_gpu_open(be, dev, mutant ? def : NULL, &g);
  if (orc) {
    printf("%s gpu open: %s\n", orc == KVB_ENOTFOUND ? "NO-DEVICE" : "FAIL", kvb_strerror_last());
    return orc == KVB_ENOTFOUND ? EXIT_NO_DEVICE : EXIT_FAIL;
  }
  printf("device: %s (%s)%s%s\n", kvb_gpu_device_name(g), be == KVB_GPU_CUDA ? "cuda" : "opencl",
         mutant ? ", kernels built with " : "", def);
  grid G = grid_of(tiny);
  size_t na;
  attn_case *ag = tiny ? NULL : attn_grid(full, &na);
  if (tiny) {
    ag = malloc(sizeof ATTN_TINY), na = G.nattn;
    if (ag) memcpy(ag, ATTN_TINY, sizeof ATTN_TINY);
  }
  char why[800];
  if (matches(filter, "attn_decode")) {
    for (size_t i = 0; ag && i < na; i++)
      if (want_case(i)) fails += run_attn(g, &ag[i], 0, why, sizeof why) != 1;
    /* bad input: a NaN key is rejected before launch */
    attn_data a;
    attn_case c = {1, 8, 64, 64, 1, 64, 0, 0, 0};
    if (!attn_data_make(&c, 3, &a)) {
      float Z[64];
      a.Kf[5] = NAN;
      int rc = kvb_gpu_attention(g, 1, 8, 64, 64, 1, 0.125, 0, a.Q, a.Kf, a.Vf, NULL, 64, Z, NULL);
      printf("%s attn_decode rejects a NaN key before launch (status %d, want KVB_EDOM)\n", rc == KVB_EDOM ? "PASS" : "FAIL", rc);
      fails += rc != KVB_EDOM;
      a.Kf[5] = 0, a.Kh[5] = 0x7c00;
      rc = kvb_gpu_attention(g, 1, 8, 64, 64, 1, 0.125, 1, a.Q, a.Kh, a.Vh, NULL, 64, Z, NULL);
      printf("%s attn_decode rejects an infinite float16 key before launch (status %d, want KVB_EDOM)\n", rc == KVB_EDOM ? "PASS" : "FAIL", rc);
      fails += rc != KVB_EDOM;
    }
    attn_data_free(&a);
  }
  if (matches(filter, "bkvb_compress"))
    for (size_t i = 0; i < G.nbk; i++)
      if (want_case(i)) fails += run_bkvb(g, &G.bk[i], 0, why, sizeof why) != 1;
  if (matches(filter, "bkvb_query"))
    for (size_t i = 0; i < G.nwq; i++)
      if (want_case(i)) fails += run_wquery(g, &G.wq[i], 0, why, sizeof why) != 1;
  if (matches(filter, "usample"))
    for (size_t i = 0; i < G.nus; i++)
      if (want_case(i)) fails += run_usample(g, &G.us[i], 0) != 1;
  if (matches(filter, "subgen"))
    for (size_t i = 0; i < G.nsg; i++)
      if (want_case(i)) fails += run_subgen(g, &G.sg[i], 0, why, sizeof why) != 1;
  if (matches(filter, "subgen") && want_case(G.nsg)) fails += run_subgen_tie(g, 0, why, sizeof why) != 1;
  /* the resident and Gram cases chain launches in one context, which Oclgrind 21.10 misreads as
   * uninitialized reads (scripts/oclgrind-check): they stay out of the tiny grid and --case */
  if (!tiny && only_case < 0 && matches(filter, "resident")) fails += (int)run_resident_all(g, 0, NULL, NULL, 0);
  if (!tiny && only_case < 0 && matches(filter, "bkvb_gram")) fails += (int)run_gram_all(g, 0, NULL, NULL, 0);
  /* the reshaped kernels one launch each (their Oclgrind cases; on both grids) */
  for (size_t gi = 0; gi < N_OF(TINY_GROUP); gi++)
    for (size_t i = 0; matches(filter, TINY_GROUP[gi]) && i < TINY_NCASE[gi]; i++)
      if (want_case(i)) {
        int ok = run_tiny(g, be, dev, gi, (int)i, why, sizeof why);
        printf("%s %s\n", ok ? "PASS" : "FAIL", why);
        fails += !ok;
      }
  if (only_case >= 0 && cases_run == 0) { /* nothing left to run at this index */
    kvb_gpu_close(g);
    free(ag);
    printf("NO-CASE: no kernel matching the filter has a case %ld\n", only_case);
    return EXIT_NO_CASE;
  }
  if (full && matches(filter, "bkvb_query"))
    for (size_t i = 0; i < sizeof WQ_FULL / sizeof *WQ_FULL; i++) fails += run_wquery(g, &WQ_FULL[i], 0, why, sizeof why) != 1;
  if (full && matches(filter, "subgen"))
    for (size_t i = 0; i < sizeof SG_FULL / sizeof *SG_FULL; i++) fails += run_subgen(g, &SG_FULL[i], 0, why, sizeof why) != 1;
  if (matches(filter, "subgen")) { /* bad input: rejected before launch, the state unchanged */
    kvb_gpu_subgen st;
    float k[4] = {0, 1, NAN, 0}, v[4] = {1, 1, 1, 1}, u[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    int rc = kvb_gpu_subgen_init(&st, 1, 4, 4, 2, 2, 1.0);
    if (!rc) rc = kvb_gpu_subgen_update(g, &st, 1, k, v, u, NULL);
    printf("%s subgen_update rejects a NaN key before launch (status %d, want KVB_EDOM; state n = %zu, want 0)\n",
           rc == KVB_EDOM && st.n == 0 ? "PASS" : "FAIL", rc, st.n);
    fails += rc != KVB_EDOM || st.n != 0;
    k[2] = 0, u[1] = 1.0f;
    rc = kvb_gpu_subgen_update(g, &st, 1, k, v, u, NULL);
    printf("%s subgen_update rejects a uniform outside [0, 1) (status %d, want KVB_EDOM)\n", rc == KVB_EDOM ? "PASS" : "FAIL", rc);
    fails += rc != KVB_EDOM;
    kvb_gpu_subgen_free(&st);
  }
  if (matches(filter, "bkvb_query")) {
    float q[4] = {1, 0, 0, 0}, K[8] = {0}, V[8] = {0}, ln[2] = {0, INFINITY}, ld[2] = {0, 0}, Z[4];
    int idx[2] = {0, 1};
    int rc = kvb_gpu_wquery(g, 1, 2, 4, 4, 2, idx, ln, ld, 1, 1.0, q, K, V, Z, NULL);
    printf("%s bkvb_query rejects an infinite log-weight before launch (status %d, want KVB_EDOM)\n", rc == KVB_EDOM ? "PASS" : "FAIL", rc);
    fails += rc != KVB_EDOM;
  }
  kvb_gpu_close(g);
  if (!mutant && !no_mutants) fails += run_mutants(be, dev, filter, G, ag, na);
  free(ag);
  return fails ? EXIT_FAIL : EXIT_PASS;
}

/* main.c — kvb-gpucheck: cross-validation of the device kernels (gpu.h, k_*.cl) against
 * the double-precision CPU reference, their mutants, and a performance model.
 *
 *   kvb-gpucheck test [--full] [--kernel SUBSTR] [--backend opencl|cuda] [--device N] [--all-devices]
 *   kvb-gpucheck perf [--kernel SUBSTR] [--backend ...] [--device N]
 *   kvb-gpucheck list [--full]        the kernel × shape table (no device needed)
 *   kvb-gpucheck devices              platforms and devices of every backend
 *
 * test prints one line per case, "PASS kernel(params): OK (metric v <= tol)" or "FAIL ...", and
 * one "PASS mutant NAME rejected ..." line per mutant kernel (built with a -D define) that fails at
 * least one case; scripts/run-checks counts them.
 *
 * The jobs live in one file each (gpucheck.h lists them); this one reads the command line. */
#include "gpucheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
  fprintf(f,
          "usage: kvb-gpucheck test [--full] [--grid tiny] [--kernel SUBSTR] [--backend opencl|cuda] [--device N]\n"
          "                         [--all-devices] [--mutant KVB_MUT_NAME] [--case N] [--no-mutants]\n"
          "       kvb-gpucheck perf [--kernel SUBSTR] [--backend opencl|cuda] [--device N]\n"
          "       kvb-gpucheck list [--full]      the kernel x shape table and the mutants\n"
          "       kvb-gpucheck devices            platforms and devices of every backend\n"
          "test checks every kernel against the CPU reference (one PASS/FAIL line per case) and that each\n"
          "mutant kernel fails a case; --mutant runs the grid on that mutant's build only (no mutant loop;\n"
          "scripts/oclgrind-check uses it under Oclgrind); --grid tiny: the small shapes for Oclgrind;\n"
          "--case N: only the N-th case (from 0) of each kernel's list; --no-mutants: no mutant loop.\n"
          "exit status of test: 0  every case passed (and every mutant was rejected) on a device that ran;\n"
          "                     1  a case failed, a mutant survived or a device error;\n"
          "                     2  usage error;\n"
          "                     3  no device of the backend: nothing ran, which is not a pass;\n"
          "                     4  --case N beyond every matching kernel's list (nothing ran).\n"
          "perf exits 3 when the backend has no device (the model is printed, nothing is measured).\n");
}


int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "test", *filter = NULL, *mutant = NULL;
  int full = 0, dev = 0, all = 0, tiny = 0;
  if (!strcmp(mode, "--help") || !strcmp(mode, "-h") || !strcmp(mode, "help")) {
    usage(stdout);
    return EXIT_PASS;
  }
  kvb_gpu_backend be = KVB_GPU_OPENCL;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--full")) full = 1;
    else if (!strcmp(argv[i], "--all-devices")) all = 1;
    else if (!strcmp(argv[i], "--kernel") && i + 1 < argc) filter = argv[++i];
    else if (!strcmp(argv[i], "--device") && i + 1 < argc) dev = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) {
      i++;
      if (!strcmp(argv[i], "cuda")) be = KVB_GPU_CUDA;
      else if (strcmp(argv[i], "opencl")) { fprintf(stderr, "kvb-gpucheck: backend opencl or cuda\n"); return 2; }
    } else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
      only_case = atol(argv[++i]);
    } else if (!strcmp(argv[i], "--no-mutants")) {
      no_mutants = 1;
    } else if (!strcmp(argv[i], "--grid") && i + 1 < argc) {
      if (strcmp(argv[++i], "tiny")) { fprintf(stderr, "kvb-gpucheck: --grid tiny is the only other grid\n"); return EXIT_USAGE; }
      tiny = 1;
    } else if (!strcmp(argv[i], "--mutant") && i + 1 < argc) {
      mutant = argv[++i];
      if (strncmp(mutant, "KVB_MUT_", 8) || strspn(mutant, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(mutant)) {
        fprintf(stderr, "kvb-gpucheck: --mutant takes a KVB_MUT_* define name\n");
        return EXIT_USAGE;
      }
    } else {
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (!strcmp(mode, "list")) return do_list(full);
  if (!strcmp(mode, "devices")) return do_devices();
  if (!strcmp(mode, "perf")) return do_perf(be, dev, filter);
  if (!strcmp(mode, "test")) {
    if (!all) return do_test(be, dev, full, tiny, filter, mutant);
    int n = kvb_gpu_count(be), rc = EXIT_PASS;
    if (n == 0) {
      printf("NO-DEVICE no %s device found: nothing was run on a device (this is not a pass; exit %d)\n",
             be == KVB_GPU_CUDA ? "CUDA" : "OpenCL", EXIT_NO_DEVICE);
      return EXIT_NO_DEVICE;
    }
    for (int d = 0; d < n; d++) {
      int r = do_test(be, d, full, tiny, filter, mutant);
      if (r != EXIT_PASS) rc = EXIT_FAIL; /* a device that vanished mid-run is a failure too */
    }
    return rc;
  }
  fprintf(stderr, "kvb-gpucheck: unknown mode %s\n", mode);
  return 2;
}

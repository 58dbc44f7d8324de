/* kvbound_main.c — the kvbound command (grows into the experiment runner of issue 5):
 * `kvbound list` prints the registered methods and streams with their parameters. */
#include "kvbound.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f) {
  fprintf(f,
          "usage: kvbound COMMAND [options]\n"
          "  list        the available methods and streams, with parameters and defaults\n"
          "  version     print the version\n"
          "  --help      this text (COMMAND --help for a command's own)\n");
}

static void print_params(const kvb_param_spec *p) {
  for (; p && p->name; p++) {
    if (p->kind == KVB_PARAM_STRING)
      printf("      %-14s string  default '%s'  %s\n", p->name, p->sdef ? p->sdef : "", p->help);
    else if (isnan(p->def))
      printf("      %-14s %-7s required, in [%g, %g]  %s\n", p->name,
             p->kind == KVB_PARAM_INT ? "int" : "real", p->min, p->max, p->help);
    else
      printf("      %-14s %-7s default %g, in [%g, %g]  %s\n", p->name,
             p->kind == KVB_PARAM_INT ? "int" : "real", p->def, p->min, p->max, p->help);
  }
}

static int cmd_list(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("usage: kvbound list\n  prints every registered method and stream generator with its "
           "parameters, defaults, ranges and source\n");
    return 0;
  }
  printf("methods:\n");
  for (size_t i = 0; kvb_method_type_at(i); i++) {
    const kvb_method_type *t = kvb_method_type_at(i);
    printf("  %-20s %s\n      source: %s\n", t->name, t->summary, t->source);
    print_params(t->params);
    if (t->mutants && t->mutants[0].name) {
      printf("      mutants (test-only deliberate faults):");
      for (size_t k = 0; t->mutants[k].name; k++) printf(" %s", t->mutants[k].name);
      printf("\n");
    }
  }
  printf("streams:\n");
  for (size_t i = 0; kvb_stream_type_at(i); i++) {
    const kvb_stream_type *t = kvb_stream_type_at(i);
    printf("  %-20s %s\n", t->name, t->summary);
    if (t->attacks) printf("      attacks: %s\n", t->attacks);
    print_params(t->params);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
    printf("kvbound %s\n", KVBOUND_VERSION);
    return 0;
  }
  if (strcmp(cmd, "list") == 0) return cmd_list(argc - 1, argv + 1);
  fprintf(stderr, "kvbound: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}

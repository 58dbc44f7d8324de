/* prop_main.c — kvb-props: runs the claims, each faithfully (must HOLD, or be VACUOUS at
 * practical parameters) and once per listed mutant (must FAIL), printing one PASS/FAIL line
 * per run for scripts/run-checks, and optionally a markdown verdict table.
 *
 *   kvb-props [--list] [--only PREFIX] [--full] [--shard K/N] [--seed S] [--mutant M]
 *             [--no-mutants] [--report FILE]
 *
 * Seeds: fixed (DEFAULT_SEED) unless KVBOUND_SEED is set — a number to reproduce a run, or
 * "fresh" to draw one from /dev/urandom. Every failure prints the command that reproduces it. */
#include "claims.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_SEED 20261123u

static void usage(FILE *f) {
  fprintf(f,
          "usage: kvb-props [options]\n"
          "  --list            list the claims (id, source, kind, mutants) and exit\n"
          "  --only PREFIX     run only claims whose id starts with PREFIX (repeatable)\n"
          "  --full            the long statistical battery (make check-full)\n"
          "  --shard K/N       run every N-th claim starting at K (0-based)\n"
          "  --seed S          base seed (default %u, or $KVBOUND_SEED; 'fresh' draws one)\n"
          "  --mutant M        run only mutant M (method:name) of the selected claims\n"
          "  --no-mutants      skip the mutant runs\n"
          "  --report FILE     write a markdown verdict table\n"
          "  --help            this text\n",
          DEFAULT_SEED);
}

static uint64_t fresh_seed(void) {
  uint64_t s = 0;
  FILE *f = fopen("/dev/urandom", "rb");
  if (!f || fread(&s, sizeof s, 1, f) != 1) s = (uint64_t)time(NULL);
  if (f) fclose(f);
  return s;
}

static int parse_seed(const char *txt, uint64_t *out) {
  if (strcmp(txt, "fresh") == 0) {
    *out = fresh_seed();
    return 0;
  }
  char *end;
  unsigned long long v = strtoull(txt, &end, 0);
  if (*txt == '\0' || *end != '\0') return -1;
  *out = v;
  return 0;
}

static const char *verdict_name(prop_verdict v) {
  switch (v) {
    case PROP_HOLDS: return "HOLDS";
    case PROP_FAILS: return "FAILS";
    case PROP_VACUOUS: return "VACUOUS-AT-PRACTICAL-PARAMETERS";
    default: return "SKIPPED";
  }
}

static prop_verdict run_claim(const prop_claim *c, uint64_t seed, int full, const char *mutant,
                              FILE *log, prop_ctx *ctx) {
  memset(ctx, 0, sizeof *ctx);
  ctx->seed = seed;
  ctx->id = c->id;
  ctx->mutant = mutant;
  ctx->full = full;
  ctx->log = log;
  kvb_error_clear();
  c->run(ctx);
  if (ctx->failures) return PROP_FAILS;
  return ctx->vacuous ? PROP_VACUOUS : PROP_HOLDS;
}

static int selected(const char *id, const char **only, int nonly) {
  if (nonly == 0) return 1;
  for (int i = 0; i < nonly; i++)
    if (strncmp(id, only[i], strlen(only[i])) == 0) return 1;
  return 0;
}

static void md_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputs("\\|", f);
    else fputc(*s, f);
  }
}

int main(int argc, char **argv) {
  const char *only[64];
  int nonly = 0, full = 0, list = 0, no_mut = 0, shard_k = 0, shard_n = 1;
  const char *report = NULL, *only_mutant = NULL;
  uint64_t seed = DEFAULT_SEED;
  const char *env = getenv("KVBOUND_SEED");
  if (env && *env && parse_seed(env, &seed)) {
    fprintf(stderr, "kvb-props: KVBOUND_SEED='%s' is neither a number nor 'fresh'\n", env);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--list") == 0) list = 1;
    else if (strcmp(a, "--full") == 0) full = 1;
    else if (strcmp(a, "--no-mutants") == 0) no_mut = 1;
    else if (strcmp(a, "--only") == 0 && more && nonly < 64) only[nonly++] = argv[++i];
    else if (strcmp(a, "--mutant") == 0 && more) only_mutant = argv[++i];
    else if (strcmp(a, "--report") == 0 && more) report = argv[++i];
    else if (strcmp(a, "--seed") == 0 && more) {
      if (parse_seed(argv[++i], &seed)) {
        fprintf(stderr, "kvb-props: --seed '%s' is neither a number nor 'fresh'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--shard") == 0 && more) {
      if (sscanf(argv[++i], "%d/%d", &shard_k, &shard_n) != 2 || shard_n < 1 || shard_k < 0 ||
          shard_k >= shard_n) {
        fprintf(stderr, "kvb-props: --shard wants K/N with 0 <= K < N, got '%s'\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "kvb-props: unknown or incomplete option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }

  FILE *rep = NULL;
  if (report) {
    rep = fopen(report, "w");
    if (!rep) {
      fprintf(stderr, "kvb-props: cannot write report '%s'\n", report);
      return 2;
    }
    fprintf(rep,
            "| claim | source | kind | verdict | mutants caught | measured |\n"
            "|---|---|---|---|---|---|\n");
  }
  FILE *devnull = fopen("/dev/null", "w");
  if (!list) printf("# kvb-props seed %" PRIu64 "%s\n", seed, full ? " (full)" : "");
  int failed = 0, index = -1;
  for (size_t t = 0; prop_claim_tables[t]; t++) {
    for (const prop_claim *c = prop_claim_tables[t]; c->id; c++) {
      if (!selected(c->id, only, nonly)) continue;
      index++;
      if (index % shard_n != shard_k) continue;
      if (list) {
        printf("%-40s %-28s %-12s", c->id, c->source, c->kind);
        for (int k = 0; k < 8 && c->mutants[k]; k++) printf(" %s", c->mutants[k]);
        printf("\n    %s\n", c->statement);
        continue;
      }
      prop_ctx ctx;
      int caught = 0, nmut = 0;
      prop_verdict v = PROP_SKIPPED;
      if (!only_mutant) {
        printf("## %s (%s, %s)\n", c->id, c->source, c->kind);
        fflush(stdout);
        clock_t t0 = clock();
        v = run_claim(c, seed, full, NULL, stdout, &ctx);
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        if (v == PROP_FAILS) {
          failed++;
          printf("FAIL %s: %s [%.1fs]\n    reproduce: KVBOUND_SEED=%" PRIu64
                 " build/kvb-props --only %s%s\n",
                 c->id, verdict_name(v), secs, seed, c->id, full ? " --full" : "");
        } else {
          printf("PASS %s: %s [%.1fs]\n", c->id, verdict_name(v), secs);
        }
      }
      char notes[sizeof ctx.notes];
      snprintf(notes, sizeof notes, "%s", only_mutant ? "" : ctx.notes);
      for (int k = 0; k < 8 && c->mutants[k] && !no_mut; k++) {
        if (only_mutant && strcmp(only_mutant, c->mutants[k]) != 0) continue;
        nmut++;
        prop_ctx mctx;
        prop_verdict mv = run_claim(c, seed, full, c->mutants[k], only_mutant ? stdout : devnull,
                                    &mctx);
        if (mv == PROP_FAILS) {
          caught++;
          printf("PASS %s caught mutant %s\n", c->id, c->mutants[k]);
        } else {
          failed++;
          printf("FAIL %s let mutant %s survive (verdict %s)\n    reproduce: KVBOUND_SEED=%" PRIu64
                 " build/kvb-props --only %s --mutant %s%s\n",
                 c->id, c->mutants[k], verdict_name(mv), seed, c->id, c->mutants[k],
                 full ? " --full" : "");
        }
        fflush(stdout);
      }
      if (rep) {
        fprintf(rep, "| `%s` | %s | %s | %s | %d/%d | ", c->id, c->source, c->kind,
                verdict_name(v), caught, nmut);
        md_escape(rep, notes);
        fprintf(rep, " |\n");
      }
    }
  }
  if (devnull) fclose(devnull);
  if (rep) fclose(rep);
  return failed ? 1 : 0;
}

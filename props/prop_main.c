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
#include "paper_claims.h"

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
          "  --mutant M        run only mutant M of the selected claims: method:TYPE:NAME,\n"
          "                    stream:TYPE:NAME, probe:TYPE:NAME, check:NAME or control:z_zero\n"
          "  --no-mutants      skip the mutant runs\n"
          "  --report FILE     write the markdown report: a verdict per paper claim, then the checks\n"
          "  --claims-list FILE  check that the compiled list of the papers' claims has exactly\n"
          "                    the ids of FILE (the project's CLAIMS.md) and exit\n"
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
  return prop_verdict_of(ctx);
}

/* A bound, scaling or comparison claim must run a control through its assertion, or say why
 * none applies; otherwise its HOLDS could not have come out otherwise (README, Verdicts: controls). */
static int lacks_control(const prop_claim *c, const prop_ctx *ctx) {
  int needs = strcmp(c->kind, "bound") == 0 || strcmp(c->kind, "scaling") == 0 ||
              strcmp(c->kind, "comparison") == 0;
  return needs && ctx->controls_run == 0 && !ctx->controls_na;
}

/* Every id a check covers must be a row of the papers' claim list. */
static int check_covers(void) {
  int bad = 0;
  for (size_t t = 0; prop_claim_tables[t]; t++)
    for (const prop_claim *c = prop_claim_tables[t]; c->id; c++)
      for (int k = 0; k < 8 && c->covers[k]; k++)
        if (paper_claim_index(c->covers[k]) < 0) {
          fprintf(stderr, "kvb-props: claim %s covers unknown paper claim '%s'\n", c->id,
                  c->covers[k]);
          bad = 1;
        }
  return bad;
}

/* Every mutant a claim lists must resolve (prop.h, Mutants): a misspelt name would otherwise
 * be a run that injects nothing. */
static int check_mutant_names(void) {
  int bad = 0;
  char why[256];
  for (size_t t = 0; prop_claim_tables[t]; t++)
    for (const prop_claim *c = prop_claim_tables[t]; c->id; c++)
      for (int k = 0; k < 8 && c->mutants[k]; k++)
        if (!prop_mutant_resolves(c->mutants[k], why, sizeof why)) {
          fprintf(stderr, "kvb-props: claim %s lists mutant %s\n", c->id, why);
          bad = 1;
        }
  return bad;
}

/* What one check contributed to the report. */
typedef struct {
  const prop_claim *c;
  prop_verdict v;
  int caught, nmut;
  char notes[sizeof ((prop_ctx *)0)->notes];
} check_result;

static int covers(const prop_claim *c, const char *id) {
  for (int k = 0; k < 8 && c->covers[k]; k++)
    if (strcmp(c->covers[k], id) == 0) return 1;
  return 0;
}

static void md_escape(FILE *f, const char *s);

/* The compiled paper-claim list against the project's CLAIMS.md: the same ids, in the same
 * order (rows are "| ID | source | kind | claim |"; header and rule rows skipped). */
static int check_claims_list(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    printf("FAIL claims-list: cannot read %s\n", path);
    return 1;
  }
  char line[4096];
  int i = 0, bad = 0;
  while (fgets(line, sizeof line, f)) {
    char id[128];
    if (sscanf(line, "| %127[^ |] |", id) != 1 || strcmp(id, "id") == 0 || id[0] == '-') continue;
    if (!paper_claims[i].id || strcmp(paper_claims[i].id, id) != 0) {
      printf("FAIL claims-list: row %d of %s is %s, compiled list has %s\n", i + 1, path, id,
             paper_claims[i].id ? paper_claims[i].id : "(end)");
      bad = 1;
      break;
    }
    i++;
  }
  fclose(f);
  if (!bad && paper_claims[i].id) {
    printf("FAIL claims-list: %s ends after %d rows; compiled list goes on with %s\n", path, i,
           paper_claims[i].id);
    bad = 1;
  }
  if (!bad) printf("PASS claims-list: the %d ids of %s are the report's rows\n", i, path);
  return bad;
}

/* The report: one row per paper claim (the denominator is the papers), its verdict combined
 * from the checks that cover it — UNCHECKED with none; theirs when they agree; FAILS if any
 * fails; MIXED otherwise — then one row per check with its measured numbers. */
static void write_report(FILE *rep, const check_result *res, size_t nres) {
  int count[PROP_SKIPPED + 1] = {0};
  fprintf(rep, "### The papers' claims\n\n"
               "| id | source | kind | verdict | checks (verdict, mutants caught) |\n"
               "|---|---|---|---|---|\n");
  for (int i = 0; paper_claims[i].id; i++) {
    const paper_claim *pc = &paper_claims[i];
    prop_verdict v = PROP_UNCHECKED;
    int any = 0, fails = 0, agree = 1;
    for (size_t r = 0; r < nres; r++) {
      if (!covers(res[r].c, pc->id)) continue;
      if (any && res[r].v != v) agree = 0;
      if (!any) v = res[r].v;
      fails |= res[r].v == PROP_FAILS;
      any = 1;
    }
    if (fails) v = PROP_FAILS;
    else if (!agree) v = PROP_MIXED;
    count[v]++;
    fprintf(rep, "| %s | %s | %s | **%s** | ", pc->id, pc->source, pc->kind, prop_verdict_name(v));
    int first = 1;
    for (size_t r = 0; r < nres; r++) {
      if (!covers(res[r].c, pc->id)) continue;
      fprintf(rep, "%s`%s` %s, %d/%d", first ? "" : "; ", res[r].c->id,
              prop_verdict_name(res[r].v), res[r].caught, res[r].nmut);
      first = 0;
    }
    fprintf(rep, "%s |\n", first ? "—" : "");
  }
  fprintf(rep, "\nTotals:");
  for (int v = 0; v < PROP_SKIPPED; v++)
    if (count[v]) fprintf(rep, " %s %d;", prop_verdict_name((prop_verdict)v), count[v]);
  fprintf(rep, "\n\n### The checks\n\n"
               "| check | source | kind | covers | verdict | mutants caught | measured |\n"
               "|---|---|---|---|---|---|---|\n");
  for (size_t r = 0; r < nres; r++) {
    const prop_claim *c = res[r].c;
    fprintf(rep, "| `%s` | %s | %s | ", c->id, c->source, c->kind);
    for (int k = 0; k < 8 && c->covers[k]; k++) fprintf(rep, "%s%s", k ? ", " : "", c->covers[k]);
    if (!c->covers[0]) fprintf(rep, "(supporting)");
    fprintf(rep, " | %s | %d/%d | ", prop_verdict_name(res[r].v), res[r].caught, res[r].nmut);
    md_escape(rep, res[r].notes);
    fprintf(rep, " |\n");
  }
}

static int selected(const char *id, const char **only, int nonly) {
  if (nonly == 0) return 1;
  for (int i = 0; i < nonly; i++)
    if (strncmp(id, only[i], strlen(only[i])) == 0) return 1;
  return 0;
}

static void md_escape(FILE *f, const char *s) {
  if (!s) return;
  for (; *s; s++) {
    if (*s == '|') fputs("\\|", f);
    else fputc(*s, f);
  }
}

/* The command line. */
typedef struct {
  const char *only[64];
  int nonly, full, list, no_mut, shard_k, shard_n;
  const char *report, *only_mutant;
  uint64_t seed;
} options;

/* Parses argv into o; returns -1 to go on, else the exit status (help, errors, --claims-list). */
static int parse_args(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->shard_n = 1;
  o->seed = DEFAULT_SEED;
  const char *env = getenv("KVBOUND_SEED");
  if (env && *env && parse_seed(env, &o->seed)) {
    fprintf(stderr, "kvb-props: KVBOUND_SEED='%s' is neither a number nor 'fresh'\n", env);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--list") == 0) o->list = 1;
    else if (strcmp(a, "--full") == 0) o->full = 1;
    else if (strcmp(a, "--no-mutants") == 0) o->no_mut = 1;
    else if (strcmp(a, "--only") == 0 && more && o->nonly < 64) o->only[o->nonly++] = argv[++i];
    else if (strcmp(a, "--mutant") == 0 && more) o->only_mutant = argv[++i];
    else if (strcmp(a, "--report") == 0 && more) o->report = argv[++i];
    else if (strcmp(a, "--claims-list") == 0 && more) return check_claims_list(argv[++i]);
    else if (strcmp(a, "--seed") == 0 && more) {
      if (parse_seed(argv[++i], &o->seed)) {
        fprintf(stderr, "kvb-props: --seed '%s' is neither a number nor 'fresh'\n", argv[i]);
        return 2;
      }
    } else if (strcmp(a, "--shard") == 0 && more) {
      if (sscanf(argv[++i], "%d/%d", &o->shard_k, &o->shard_n) != 2 || o->shard_n < 1 ||
          o->shard_k < 0 || o->shard_k >= o->shard_n) {
        fprintf(stderr, "kvb-props: --shard wants K/N with 0 <= K < N, got '%s'\n", argv[i]);
        return 2;
      }
    } else {
      fprintf(stderr, "kvb-props: unknown or incomplete option '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  return -1;
}

static void list_claim(const prop_claim *c) {
  printf("%-40s %-28s %-12s", c->id, c->source, c->kind);
  for (int k = 0; k < 8 && c->mutants[k]; k++) printf(" %s", c->mutants[k]);
  printf("\n    covers:");
  for (int k = 0; k < 8 && c->covers[k]; k++) printf(" %s", c->covers[k]);
  printf("%s\n    %s\n", c->covers[0] ? "" : " (supporting check)", c->statement);
}

/* The faithful run: its verdict into *v and its context into ctx (quietly under --mutant, when
 * only the verdict is needed to judge the mutant). Returns the number of FAIL lines printed. */
static int run_faithful(const prop_claim *c, const options *o, FILE *devnull, prop_ctx *ctx,
                        prop_verdict *v) {
  if (o->only_mutant) {
    *v = run_claim(c, o->seed, o->full, NULL, devnull, ctx);
    return 0;
  }
  printf("## %s (%s, %s)\n", c->id, c->source, c->kind);
  fflush(stdout);
  clock_t t0 = clock();
  *v = run_claim(c, o->seed, o->full, NULL, stdout, ctx);
  double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  if (lacks_control(c, ctx)) {
    ctx->failures++;
    printf("    %s claim ran no control through its assertion and gave no reason\n", c->kind);
  }
  if (!ctx->failures) {
    printf("PASS %s: %s [%.1fs]\n", c->id, prop_verdict_name(*v), secs);
    return 0;
  }
  *v = PROP_FAILS;
  printf("FAIL %s: %s [%.1fs]\n    reproduce: KVBOUND_SEED=%" PRIu64
         " build/kvb-props --only %s%s\n",
         c->id, prop_verdict_name(*v), secs, o->seed, c->id, o->full ? " --full" : "");
  return 1;
}

/* Every listed mutant (or the one of --mutant) against the faithful verdict v and cells of ctx:
 * caught when it fails an assertion, changes the verdict, or moves a pre-registered cell (a
 * MIXED claim stays MIXED under a mutant that moves cells). Returns the FAIL lines printed. */
static int run_mutants(const prop_claim *c, const options *o, FILE *devnull, const prop_ctx *ctx,
                       prop_verdict v, int *caught, int *nmut) {
  int failed = 0;
  for (int k = 0; k < 8 && c->mutants[k] && !o->no_mut; k++) {
    if (o->only_mutant && strcmp(o->only_mutant, c->mutants[k]) != 0) continue;
    (*nmut)++;
    prop_ctx mctx;
    prop_verdict mv = run_claim(c, o->seed, o->full, c->mutants[k],
                                o->only_mutant ? stdout : devnull, &mctx);
    int cells_moved = mctx.ncells != ctx->ncells;
    for (int q = 0; !cells_moved && q < ctx->ncells; q++)
      cells_moved = mctx.cells[q] != ctx->cells[q];
    if (!mctx.mutant_applied) {
      /* the claim never injected it: whatever changed, it was not the mutant */
      failed++;
      printf("FAIL %s never applied mutant %s (no helper of prop.h injected it, so it is "
             "not credited)\n", c->id, c->mutants[k]);
    } else if (mv == PROP_FAILS || mv != v || cells_moved) {
      (*caught)++;
      printf("PASS %s caught mutant %s (verdict %s)\n", c->id, c->mutants[k],
             prop_verdict_name(mv));
    } else {
      failed++;
      printf("FAIL %s let mutant %s survive (verdict %s)\n    reproduce: KVBOUND_SEED=%" PRIu64
             " build/kvb-props --only %s --mutant %s%s\n",
             c->id, c->mutants[k], prop_verdict_name(mv), o->seed, c->id, c->mutants[k],
             o->full ? " --full" : "");
    }
    fflush(stdout);
  }
  return failed;
}

int main(int argc, char **argv) {
  options o;
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0) return rc;
  if (check_covers() || check_mutant_names()) return 2;
  char why[256];
  if (o.only_mutant && !prop_mutant_resolves(o.only_mutant, why, sizeof why)) {
    fprintf(stderr, "kvb-props: --mutant %s\n", why);
    return 2;
  }
  FILE *rep = NULL;
  if (o.report && !(rep = fopen(o.report, "w"))) {
    fprintf(stderr, "kvb-props: cannot write report '%s'\n", o.report);
    return 2;
  }
  static check_result res[512];
  size_t nres = 0;
  FILE *devnull = fopen("/dev/null", "w");
  if (!o.list) printf("# kvb-props seed %" PRIu64 "%s\n", o.seed, o.full ? " (full)" : "");
  int failed = 0, index = -1;
  for (size_t t = 0; prop_claim_tables[t]; t++) {
    for (const prop_claim *c = prop_claim_tables[t]; c->id; c++) {
      if (!selected(c->id, o.only, o.nonly)) continue;
      index++;
      if (index % o.shard_n != o.shard_k) continue;
      if (o.list) {
        list_claim(c);
        continue;
      }
      prop_ctx ctx;
      memset(&ctx, 0, sizeof ctx);
      prop_verdict v = PROP_SKIPPED;
      int caught = 0, nmut = 0;
      failed += run_faithful(c, &o, devnull, &ctx, &v);
      failed += run_mutants(c, &o, devnull, &ctx, v, &caught, &nmut);
      if (nres < sizeof res / sizeof *res) {
        check_result *r = &res[nres++];
        r->c = c, r->v = v, r->caught = caught, r->nmut = nmut;
        snprintf(r->notes, sizeof r->notes, "%s", o.only_mutant ? "" : ctx.notes);
      }
    }
  }
  if (devnull) fclose(devnull);
  if (rep) {
    write_report(rep, res, nres);
    fclose(rep);
  }
  return failed ? 1 : 0;
}

/* prop_main.c — kvb-props: runs the claims, each faithfully (must HOLD, or be VACUOUS at
 * practical parameters) and once per listed mutant (must FAIL), printing one PASS/FAIL line
 * per run for scripts/run-checks, and optionally a markdown verdict table.
 *
 *   kvb-props [--list] [--only PREFIX] [--full] [--shard K/N [--out DIR]] [--seed S]
 *             [--mutant M] [--no-mutants] [--report FILE] [--findings FILE]
 *   kvb-props --merge DIR... [--report FILE] [--findings FILE]
 *
 * Seeds: fixed (DEFAULT_SEED) unless KVBOUND_SEED is set — a number to reproduce a run, or
 * "fresh" to draw one from /dev/urandom. Every failure prints the command that reproduces it. */
#include "claims.h"
#include "findings.h"
#include "paper_claims.h"
#include "paper_protocols.h"
#include "prop_expect.h"
#include "prop_shard.h"
#include "progress.h"
#include "method_battery.h"
#include "read_file.h"

#include <cblas.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define DEFAULT_SEED 20261123u

/* The checks this process runs: the papers' claims, or under --method the battery for one
 * method (method_battery.c) instead. */
static const prop_claim *const battery_tables[] = {props_method_battery, NULL};
static const prop_claim *const *claim_tables = prop_claim_tables;

static void usage(FILE *f) {
  fprintf(f,
          "usage: kvb-props [options]\n"
          "  --list            list the claims (id, source, kind, mutants, the paper rows they\n"
          "                    cover and, for an empirical row, its differences from the paper)\n"
          "                    and exit\n"
          "  --only PREFIX     run only claims whose id starts with PREFIX (repeatable)\n"
          "  --full            the long statistical battery (make check-full)\n"
          "  --shard K/N       run every N-th claim starting at K (0-based), judged here; with\n"
          "                    --out DIR, run shard K of the sweep's runs instead (every claim's\n"
          "                    faithful and mutant runs dealt out one by one; a long claim's\n"
          "                    trials by block; with $KVB_SHARD_COSTS, a costs table, longest\n"
          "                    first to the least-loaded shard) and leave them in DIR for --merge\n"
          "  --out DIR         with --shard: the shard directory (created)\n"
          "  --merge DIR...    judge and report the runs of shard directories 0..N-1 of one\n"
          "                    sweep, exactly as one process running them all would; it loads\n"
          "                    no plugin a shard names: a plugin method needs --plugin PATH here,\n"
          "                    the file whose SHA-256 the shards recorded\n"
          "  --seed S          base seed (default %u, or $KVBOUND_SEED; 'fresh' draws one)\n"
          "  --mutant M        run only mutant M of the selected claims: method:TYPE:NAME,\n"
          "                    stream:TYPE:NAME, probe:TYPE:NAME, check:NAME or control:z_zero\n"
          "  --no-mutants      skip the mutant runs (the report says \"mutants not run\")\n"
          "  --defer PREFIX    do not run the selected claims whose id starts with PREFIX here\n"
          "                    (repeatable; also with --merge): each prints a SKIP line and\n"
          "                    has a SKIPPED row in the report; make check defers some claims\n"
          "                    to make run and check-full, make run some to make run-full and\n"
          "                    check-full (props/tiers.tsv; props/README.md, Where each check\n"
          "                    runs)\n"
          "  --deferred-to TEXT  where the deferred claims run, for their SKIP lines and rows\n"
          "                    (default \"`make run` and `make check-full`\")\n"
          "  --quiet           no progress lines on stderr (by default each check prints\n"
          "                    \"[k/N] id (elapsed, ~left)\" there, the estimate from the costs\n"
          "                    table $KVB_CHECK_COSTS, e.g. props/check-costs.tsv, else from\n"
          "                    the mean so far, and \"# cost TIER ID SECONDS\" when it ends)\n"
          "  --report FILE     write the markdown report: the findings, a verdict per paper claim\n"
          "                    (an empirical row's from the papers' empirical family, Holm at\n"
          "                    0.05; props/README.md), the family, then the checks\n"
          "  --findings FILE   write the report's opening findings to FILE instead of atop it\n"
          "  --method NAME[,k=v,...]  run the battery for one registered method (built-in, plugin or\n"
          "                    Python) instead of the papers' claims: contract, accuracy at equal\n"
          "                    memory against the controls, its declared properties (README,\n"
          "                    \"Your own method\")\n"
          "  --long-context    with --method: also run method.long_context (needle tasks inside\n"
          "                    the real model; ~1 min per task; opt-in: its 3 tasks have power 0\n"
          "                    at alpha = 1e-6, --full's 33 have 0.9)\n"
          "  --plugin PATH     load a method plugin first (repeatable; also $KVBOUND_PLUGINS);\n"
          "                    a plugin is trusted native code run in this process\n"
          "  --claims-list FILE  check that the compiled list of the papers' claims has exactly\n"
          "                    the ids of FILE (the project's CLAIMS.md) and exit\n"
          "  --help            this text\n"
          "\n"
          "Output: the papers' claims print one PASS/FAIL line per run (faithful, then each\n"
          "mutant). Under --method the battery's report lines start with the verdict (HOLDS,\n"
          "FAILS, VACUOUS, NOT-OBSERVED, INCONCLUSIVE, MIXED, SKIPPED); its own regression lines\n"
          "(a mutant caught or not, the statistical budget) keep PASS/FAIL.\n"
          "Exit status: 0 when nothing failed; 1 when a check FAILS (an assertion rejected: for\n"
          "--method, the method is wrong on that check), a mutant survived, a record is missing\n"
          "in a merge, or the statistical budget is exceeded; 2 for a usage error (bad option,\n"
          "unknown method or parameter, a plugin that does not load, an unwritable --out).\n"
          "VACUOUS, NOT-OBSERVED, INCONCLUSIVE and SKIPPED are not failures (exit 0): read them.\n",
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
  /* a sign, or a value beyond 2^64 − 1 (strtoull clamps it), is an error, not another seed */
  if (*txt == '-' || *txt == '+' || *txt == ' ') return -1;
  errno = 0;
  unsigned long long v = strtoull(txt, &end, 0);
  if (*txt == '\0' || *end != '\0' || errno == ERANGE) return -1;
  *out = v;
  return 0;
}


/* Trial-block mode of one run (prop.h, Trial blocks): this shard's blocks, or a merge. */
typedef struct {
  int k, n, merge;
  FILE *out;
  const char *const *in;
} trial_mode;

static prop_verdict run_claim(const prop_claim *c, uint64_t seed, int full, const char *mutant,
                              FILE *log, const trial_mode *tm, prop_ctx *ctx) {
  memset(ctx, 0, sizeof *ctx);
  ctx->seed = seed;
  ctx->id = c->id;
  ctx->mutant = mutant;
  ctx->full = full;
  ctx->log = log;
  if (tm) ctx->tb_k = tm->k, ctx->tb_n = tm->n, ctx->tb_merge = tm->merge, ctx->tb_out = tm->out,
          ctx->tb_in = tm->in;
  kvb_error_clear();
  c->run(ctx);
  return prop_verdict_of(ctx);
}

/* A bound, scaling or comparison claim must run a control through its assertion, or say why
 * none applies; otherwise its HOLDS could not have come out otherwise (props/README.md, Verdicts: controls). */
static int lacks_control(const prop_claim *c, const prop_ctx *ctx) {
  int needs = strcmp(c->kind, "bound") == 0 || strcmp(c->kind, "scaling") == 0 ||
              strcmp(c->kind, "comparison") == 0;
  return needs && ctx->controls_run == 0 && !ctx->controls_na && !ctx->skipped;
}


/* Every pre-registered verdict names a check of the registry (a typo would silently expect
 * nothing). */
static int check_expectations(void) {
  int bad = 0;
  for (const prop_expectation *e = prop_expectations; e->id; e++) {
    int found = 0;
    for (size_t t = 0; prop_claim_tables[t] && !found; t++)
      for (const prop_claim *c = prop_claim_tables[t]; c->id && !found; c++)
        found = strcmp(c->id, e->id) == 0;
    if (!found) {
      fprintf(stderr, "kvb-props: props/prop_expect.c pre-registers a verdict for unknown check "
                      "'%s'\n", e->id);
      bad = 1;
    }
  }
  return bad;
}

/* Every id a check covers must be a row of the papers' claim list. */
static int check_covers(void) {
  int bad = 0;
  for (size_t t = 0; claim_tables[t]; t++)
    for (const prop_claim *c = claim_tables[t]; c->id; c++)
      for (int k = 0; k < 8 && c->covers[k]; k++)
        if (paper_claim_index(c->covers[k]) < 0) {
          fprintf(stderr, "kvb-props: claim %s covers unknown paper claim '%s'\n", c->id,
                  c->covers[k]);
          bad = 1;
        }
  /* a question of kvbound's own is never folded into a paper claim's verdict */
  for (size_t t = 0; claim_tables[t]; t++)
    for (const prop_claim *c = claim_tables[t]; c->id; c++)
      if (c->question && c->covers[0]) {
        fprintf(stderr, "kvb-props: claim %s asks kvbound's own question but also covers paper "
                        "claim '%s'\n", c->id, c->covers[0]);
        bad = 1;
      }
  return bad;
}

/* Every mutant a claim lists must resolve (prop.h, Mutants): a misspelt name would otherwise
 * be a run that injects nothing. */
static int check_mutant_names(void) {
  int bad = 0;
  char why[256];
  for (size_t t = 0; claim_tables[t]; t++)
    for (const prop_claim *c = claim_tables[t]; c->id; c++)
      for (int k = 0; k < 8 && c->mutants[k]; k++)
        if (!prop_mutant_resolves(c->mutants[k], why, sizeof why)) {
          fprintf(stderr, "kvb-props: claim %s lists mutant %s\n", c->id, why);
          bad = 1;
        }
  return bad;
}

/* How a mutant run's miss probability is known (prop_run_rec.miss_kind). */
enum { PROP_MISS_NONE = 0, PROP_MISS_STATED, PROP_MISS_EXACT, PROP_MISS_PLUGIN };

/* What one check contributed to the report. */
typedef struct {
  const prop_claim *c;
  prop_verdict v;
  int caught, nmut; /* nmut < 0: no mutant ran in this sweep (--no-mutants) */
  int deferred;     /* --defer: not run here; notes say where it runs */
  double flip;      /* the verdict's flip chance on a fresh seed (prop_check_flip) */
  int flip_unknown; /* voting cells with no flip estimate */
  int ctl_unknown;  /* controls with no flip estimate (prop_control_flip) */
  char notes[sizeof ((prop_ctx *)0)->notes];
} check_result;

/* A verdict whose flip chance reaches this is printed as seed-fragile; the report's expected
 * number of verdict flips per fresh seed should stay at or below PROP_FLIP_TARGET. */
#define PROP_FRAGILE 0.01
#define PROP_FLIP_TARGET 0.05

/* A check's mutant column: "caught/run", or why there is none. */
static void mutant_cell(FILE *rep, const check_result *r) {
  if (r->deferred) fprintf(rep, "deferred");
  else if (r->nmut < 0) fprintf(rep, "mutants not run");
  else fprintf(rep, "%d/%d", r->caught, r->nmut);
}

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

/* The run's chance of a wrong PASS/FAIL line (props/README.md, Verdicts: the per-run budget): a faithful
 * run raises a false alarm with probability at most the sum of its tests' α (Bonferroni over
 * every prop_pvalue), and a statistical mutant survives with the probability its check states
 * (prop_miss); mutants caught by exact assertions count zero. The sum must stay <= 0.01. */
#define PROP_RUN_BUDGET 0.01
typedef struct {
  int faithful, tests;   /* faithful runs and their hypothesis tests (cells and controls included) */
  double alpha_sum;      /* their α, summed */
  int mutants, exact;    /* mutant runs; those caught by an exact assertion (miss 0) */
  int stated, plugin;    /* those whose miss the check stated / the predictive estimate gave */
  double stated_sum, plugin_sum;
  double worst;          /* the largest single miss probability, and whose */
  char worst_name[300];
  int nundeclared;       /* statistical mutant runs with no estimate: names listed */
  char names[512][300];
} budget;

static void budget_add(budget *b, const prop_run_rec *r) {
  if (!r->mutant[0]) {
    b->faithful++, b->tests += r->ntests, b->alpha_sum += r->alpha_sum;
    return;
  }
  b->mutants++;
  if (r->miss_kind == PROP_MISS_EXACT) b->exact++;
  else if (r->miss_kind == PROP_MISS_STATED) b->stated++, b->stated_sum += r->miss;
  else if (r->miss_kind == PROP_MISS_PLUGIN) b->plugin++, b->plugin_sum += r->miss;
  else if (b->nundeclared < 512)
    snprintf(b->names[b->nundeclared++], sizeof b->names[0], "%s <- %s", r->id, r->mutant);
  if (r->miss_kind != PROP_MISS_NONE && r->miss > b->worst) {
    b->worst = r->miss;
    snprintf(b->worst_name, sizeof b->worst_name, "%s <- %s", r->id, r->mutant);
  }
}

static double budget_used(const budget *b) { return b->alpha_sum + b->stated_sum + b->plugin_sum; }

static void budget_print(FILE *f, const budget *b) {
  fprintf(f, "Faithful runs: %d, making %d hypothesis tests (every cell and control counted as "
             "one); family-wise false-alarm probability <= %.3g (the sum of their alpha).\n",
          b->faithful, b->tests, b->alpha_sum);
  fprintf(f, "Mutant runs: %d: %d caught by an exact assertion (miss probability 0), %d with a "
             "miss probability stated by the check (sum %.3g), %d with the predictive estimate of "
             "their rejected tests (sum %.3g), %d statistical without an estimate.\n",
          b->mutants, b->exact, b->stated, b->stated_sum, b->plugin, b->plugin_sum,
          b->nundeclared);
  if (b->worst > 0) fprintf(f, "The largest single miss probability: %.3g (%s).\n", b->worst, b->worst_name);
  fprintf(f, "Budget: %.3g of %.2g per run (false alarms + misses)%s\n", budget_used(b),
          PROP_RUN_BUDGET,
          b->nundeclared ? "; the misses without an estimate are measured by scripts/fresh-seeds" : "");
  for (int i = 0; i < b->nundeclared; i++)
    fprintf(f, "%s%s", i ? ", " : "Statistical mutants without an estimate: ", b->names[i]);
  if (b->nundeclared) fprintf(f, ".\n");
}

/* A paper claim's verdict from the checks of that claim only (DESIGN, Claims; prop_roll_up):
 * UNCHECKED with none; FAILS if any fails; ERRATUM if any is (the text is wrong whatever the
 * runs say); VACUOUS if any is VACUOUS (a bound a trivial control meets says nothing about the
 * claim, whatever else agrees); theirs when they agree; MIXED otherwise. Skipped checks (an
 * absent input) do not vote. */
static prop_verdict roll_up(const check_result *res, size_t nres, const char *id) {
  prop_verdict v[512];
  size_t n = 0;
  for (size_t r = 0; r < nres && n < sizeof v / sizeof *v; r++)
    if (covers(res[r].c, id) && res[r].v != PROP_SKIPPED) v[n++] = res[r].v;
  return prop_roll_up(v, n);
}

/* "Totals: HOLDS a; FAILS b; ..." with every verdict named, zeros included, so no verdict can
 * hide by being absent from the line. */
static void write_totals(FILE *rep, const char *what, const int *count, int with_unchecked) {
  fprintf(rep, "\n%s:", what);
  for (int v = 0; v <= PROP_SKIPPED; v++) {
    if (v == PROP_UNCHECKED && !with_unchecked) continue;
    if (v == PROP_SKIPPED && with_unchecked) continue;
    fprintf(rep, " %s %d;", prop_verdict_name((prop_verdict)v), count[v]);
  }
  fprintf(rep, "\n");
}

/* Expected verdict flips per fresh seed: Σ over checks of each verdict's flip chance (an upper
 * bound: each check's bounds its verdict's from its voting cells, prop_check_flip), with the
 * seed-fragile verdicts named. */
static double total_flips(const check_result *res, size_t nres, int *fragile, int *unknown,
                          int *ctl_unknown) {
  double t = 0;
  *fragile = 0, *unknown = 0, *ctl_unknown = 0;
  for (size_t r = 0; r < nres; r++) {
    t += res[r].flip;
    *fragile += res[r].flip >= PROP_FRAGILE;
    *unknown += res[r].flip_unknown;
    *ctl_unknown += res[r].ctl_unknown;
  }
  return t;
}

static void write_flips(FILE *rep, const check_result *res, size_t nres) {
  int fragile, unknown, ctl_unknown;
  double t = total_flips(res, nres, &fragile, &unknown, &ctl_unknown);
  fprintf(rep, "\n### Verdicts that reproduce\n\n"
               "A voting cell's flip p is the chance that its outcome comes out the other way on a "
               "fresh seed (the predictive probability of its test, src/core/flip.h); a check's "
               "bounds its verdict's: the sum over its voting cells when they agree; for MIXED, "
               "the chance that all come to agree. A control that passes makes the verdict "
               "VACUOUS, so its test's flip is the verdict's too: when one passed, the least likely "
               "passing control's flip; otherwise the cells' bound plus every control's. Verdicts with "
               "flip p >= %.2g are marked seed-fragile above.\n\n"
               "Expected verdict flips per fresh seed: %.3g (target <= %.2g); %d seed-fragile "
               "verdict%s", PROP_FRAGILE, t, PROP_FLIP_TARGET, fragile, fragile == 1 ? "" : "s");
  for (size_t r = 0, k = 0; r < nres; r++)
    if (res[r].flip >= PROP_FRAGILE)
      fprintf(rep, "%s`%s` %.2g", k++ ? ", " : ": ", res[r].c->id, res[r].flip);
  fprintf(rep, "; %d voting cell%s and %d control%s without a flip estimate (not counted).\n",
          unknown, unknown == 1 ? "" : "s", ctl_unknown, ctl_unknown == 1 ? "" : "s");
}

/* The report: one row per paper claim (the denominator is the papers), its verdict rolled up
 * from the checks of that claim (roll_up); one row per question of kvbound's own (checks with
 * a `question`: never folded into a paper claim); then one row per check with its numbers, and
 * the run's statistical budget. */
static void write_report(FILE *rep, FILE *findings, const check_result *res, size_t nres,
                         const budget *b, const prop_family_outcome *fam, size_t m,
                         const char *fam_problems) {
  int count[PROP_SKIPPED + 1] = {0};
  if (method_battery_target()) { /* --method: the battery's checks, no paper rows */
    fprintf(rep, "### The battery for method `%s`\n\n", method_battery_target());
    goto questions;
  }
  /* The rows' verdicts first (the findings open the report): the checks' roll-up, or for an
   * empirical row with a member of the family that ran, the family's decision — unless the
   * checks found the row FAILS, ERRATUM or VACUOUS, which no p-value of the family can undo
   * (props/README.md, The papers' empirical claims as one family). */
  static prop_verdict row_v[512], checks_v[512];
  static int by_family[512];
  static prop_finding_row frows[1024];
  size_t nf = 0;
  for (int i = 0; paper_claims[i].id && i < 512; i++) {
    const paper_claim *pc = &paper_claims[i];
    prop_verdict v = roll_up(res, nres, pc->id), fv;
    checks_v[i] = row_v[i] = v;
    by_family[i] = v != PROP_FAILS && v != PROP_ERRATUM && v != PROP_VACUOUS &&
                   prop_family_row(fam, m, pc->id, &fv);
    if (by_family[i]) row_v[i] = fv;
    const check_result *num = NULL; /* the covering check that gives the row its verdict */
    for (size_t r = 0; r < nres; r++)
      if (covers(res[r].c, pc->id) && (!num || (res[r].v == v && num->v != v))) num = &res[r];
    /* a family row's findings are its members' sentences */
    if (!by_family[i])
      frows[nf++] = (prop_finding_row){pc->id, pc->source, pc->claim, v, 0, 0,
                                       num ? num->c->id : NULL, num ? num->notes : NULL};
  }
  for (size_t r = 0; r < nres && nf < 1024; r++)
    if (res[r].c->question || (!res[r].c->covers[0] && res[r].v == PROP_FAILS))
      frows[nf++] = (prop_finding_row){res[r].c->id, res[r].c->source,
                                       res[r].c->question ? res[r].c->question : res[r].c->statement,
                                       res[r].v, res[r].c->question ? 1 : 2, 0, res[r].c->id,
                                       res[r].notes};
  prop_findings_write(findings ? findings : rep, frows, nf, fam, m);
  if (findings) fprintf(rep, "The findings: see the report's opening.\n\n");
  fprintf(rep, "### The papers' claims\n\n"
               "| id | source | kind | verdict | checks (verdict, mutants caught) |\n"
               "|---|---|---|---|---|\n");
  for (int i = 0; paper_claims[i].id; i++) {
    const paper_claim *pc = &paper_claims[i];
    prop_verdict v = i < 512 ? row_v[i] : roll_up(res, nres, pc->id);
    count[v]++;
    fprintf(rep, "| %s | %s | %s | **%s** | ", pc->id, pc->source, pc->kind, prop_verdict_name(v));
    int first = 1;
    for (size_t r = 0; r < nres; r++) {
      if (!covers(res[r].c, pc->id)) continue;
      fprintf(rep, "%s`%s` %s, ", first ? "" : "; ", res[r].c->id, prop_verdict_name(res[r].v));
      mutant_cell(rep, &res[r]);
      first = 0;
    }
    if (first && pc->unchecked_why) { /* why no check can cover it here, and what to run */
      fprintf(rep, "— unchecked: ");
      md_escape(rep, pc->unchecked_why);
    }
    for (size_t r = 0; r < nres; r++) { /* an ERRATUM's corrected statement and evidence */
      const char *a = covers(res[r].c, pc->id) && res[r].v == PROP_ERRATUM
                          ? strstr(res[r].notes, "ERRATUM ⟦") : NULL;
      const char *b = a ? strstr(a, "⟧") : NULL;
      if (!b) continue;
      fprintf(rep, " — ");
      for (; a < b + strlen("⟧"); a++) fputs(*a == '|' ? "\\|" : (char[2]){*a, 0}, rep);
    }
    if (i < 512 && by_family[i]) { /* the family decided it; the regression view beside it */
      fprintf(rep, "%sverdict by the papers' empirical family (below); the checks at α = 1e-6: "
                   "%s", first && !pc->unchecked_why ? "" : " — ", prop_verdict_name(checks_v[i]));
      first = 0;
    }
    const paper_protocol *pp = paper_protocol_of(pc->id);
    if (pp) { /* an empirical row: what the paper ran, what kvbound runs, and the differences */
      fprintf(rep, "%s**paper ran:** ", first && !pc->unchecked_why ? "" : " — ");
      md_escape(rep, pp->paper);
      fprintf(rep, "; **kvbound runs:** ");
      md_escape(rep, pp->kvbound);
      fprintf(rep, "; **differences:** ");
      md_escape(rep, pp->differences);
      first = 0;
    }
    fprintf(rep, "%s |\n", first && !pc->unchecked_why ? "—" : "");
  }
  fprintf(rep, "\nUNCHECKED: no check covers the claim; where the row says why (a model or data "
               "set kvbound does not have), it also says what a user would run.\n"
               "ERRATUM: the text's statement is wrong whatever any run gives (an exponent, a "
               "direction, prose against the paper's own table); the check's notes give the "
               "corrected statement and the evidence, and what the run found for the corrected "
               "one. It is never a finding about an implementation.\n"
               "Every empirical row (comparison, empirical-measurement) says what the paper ran, "
               "what kvbound runs, and each difference: its verdict is about kvbound's run.\n");
  write_totals(rep, "Totals (the papers' claims)", count, 1);
  memset(count, 0, sizeof count);
  prop_family_write(rep, fam, m, fam_problems);
questions:
  fprintf(rep, "\n### kvbound's additional questions\n\n"
               "Statements the papers do not make, asked by kvbound beside the claims they "
               "accompany; their verdicts are not the papers' claims' verdicts.\n\n"
               "| question | check | source | verdict | mutants caught |\n"
               "|---|---|---|---|---|\n");
  for (size_t r = 0; r < nres; r++) {
    const prop_claim *c = res[r].c;
    if (!c->question) continue;
    count[res[r].v]++;
    fprintf(rep, "| ");
    md_escape(rep, c->question);
    fprintf(rep, " | `%s` | %s | **%s** | ", c->id, c->source, prop_verdict_name(res[r].v));
    mutant_cell(rep, &res[r]);
    fprintf(rep, " |\n");
  }
  write_totals(rep, "Totals (kvbound's questions)", count, 0);
  memset(count, 0, sizeof count);
  for (size_t r = 0; r < nres; r++) count[res[r].v]++;
  write_totals(rep, "Totals (every check)", count, 0);
  fprintf(rep, "\n### The checks\n\n"
               "| check | source | kind | covers | verdict | mutants caught | measured |\n"
               "|---|---|---|---|---|---|---|\n");
  for (size_t r = 0; r < nres; r++) {
    const prop_claim *c = res[r].c;
    fprintf(rep, "| `%s` | %s | %s | ", c->id, c->source, c->kind);
    for (int k = 0; k < 8 && c->covers[k]; k++) fprintf(rep, "%s%s", k ? ", " : "", c->covers[k]);
    if (!c->covers[0]) fprintf(rep, c->question ? "(kvbound's question)" : "(supporting)");
    fprintf(rep, " | %s", prop_verdict_name(res[r].v));
    if (res[r].flip >= PROP_FRAGILE) fprintf(rep, " — seed-fragile (flip p = %.2g)", res[r].flip);
    else if (res[r].flip > 0) fprintf(rep, " (flip p = %.2g)", res[r].flip);
    fprintf(rep, " | ");
    mutant_cell(rep, &res[r]);
    fprintf(rep, " | ");
    prop_family_md_notes(rep, res[r].notes); /* md_escape, family records made readable */
    fprintf(rep, " |\n");
  }
  write_flips(rep, res, nres);
  fprintf(rep, "\n### The run's statistical budget\n\n");
  budget_print(rep, b);
}

static int selected(const char *id, const char *const *only, int nonly) {
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
  const char *defer[16]; /* --defer: selected claims left to the other tiers (SKIP lines) */
  int ndefer;
  const char *deferred_to; /* --deferred-to: where they run, for the SKIP lines and rows */
  int nonly, full, list, no_mut, shard_k, shard_n, quiet;
  const char *report, *only_mutant, *out, *method, *findings;
  const char *merge[1024];
  int nmerge;
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
    else if (strcmp(a, "--quiet") == 0) o->quiet = 1;
    else if (strcmp(a, "--only") == 0 && more && o->nonly < 64) o->only[o->nonly++] = argv[++i];
    else if (strcmp(a, "--defer") == 0 && more && o->ndefer < 16) o->defer[o->ndefer++] = argv[++i];
    else if (strcmp(a, "--deferred-to") == 0 && more) o->deferred_to = argv[++i];
    else if (strcmp(a, "--mutant") == 0 && more) o->only_mutant = argv[++i];
    else if (strcmp(a, "--report") == 0 && more) o->report = argv[++i];
    else if (strcmp(a, "--findings") == 0 && more) o->findings = argv[++i];
    else if (strcmp(a, "--out") == 0 && more) o->out = argv[++i];
    else if (strcmp(a, "--claims-list") == 0 && more) return check_claims_list(argv[++i]);
    else if (strcmp(a, "--plugin") == 0 && more) {
      if (kvb_plugin_load(argv[++i])) {
        fprintf(stderr, "kvb-props: %s\n", kvb_strerror_last());
        return 2;
      }
    } else if (strcmp(a, "--method") == 0 && more) o->method = argv[++i];
    else if (strcmp(a, "--long-context") == 0) method_battery_set_long_context(1);
    else if (strcmp(a, "--merge") == 0 && more) {
      while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0 && o->nmerge < 1024)
        o->merge[o->nmerge++] = argv[++i];
    } else if (strcmp(a, "--seed") == 0 && more) {
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
  if (o->method && !o->nmerge) { /* a merge takes the method from the shards (load_shards) */
    char why[512];
    if (method_battery_set_target(o->method, why, sizeof why)) {
      fprintf(stderr, "kvb-props: --method %s\n", why);
      return 2;
    }
    claim_tables = battery_tables;
  }
  if (o->out && o->shard_n < 1) o->shard_n = 1;
  /* --defer is the merge's too: the shards ran none of the deferred claims, and the merge
   * must not look for their runs (a claim deferred here but run by the shards is reported
   * deferred; one run here but deferred by the shards is missing, and named) */
  if (o->nmerge && (o->out || o->list || o->nonly || o->only_mutant || o->full || o->no_mut)) {
    fprintf(stderr, "kvb-props: --merge takes the sweep's options from the shard directories; "
                    "give only --report and --defer\n");
    return 2;
  }
  return -1;
}

static void list_claim(const prop_claim *c) {
  printf("%-40s %-28s %-12s", c->id, c->source, c->kind);
  for (int k = 0; k < 8 && c->mutants[k]; k++) printf(" %s", c->mutants[k]);
  printf("\n    covers:");
  for (int k = 0; k < 8 && c->covers[k]; k++) printf(" %s", c->covers[k]);
  printf("%s\n    %s\n", c->covers[0] ? "" : c->question ? " (kvbound's own question)" :
         " (supporting check)", c->statement);
  if (c->question) printf("    question: %s\n", c->question);
  for (int k = 0; k < 8 && c->covers[k]; k++) {
    const paper_protocol *pp = paper_protocol_of(c->covers[k]);
    if (pp) printf("    vs paper (%s): %s\n", c->covers[k], pp->differences);
  }
}


/* ---- runs: one claim, faithful or under a mutant, into a record ---- */

static void run_into(const prop_claim *c, const options *o, const char *mutant, FILE *log,
                     const trial_mode *tm, prop_run_rec *r) {
  static prop_ctx ctx; /* 9 KiB of notes and cells: not on the stack of every caller */
  clock_t t0 = clock();
  r->v = run_claim(c, o->seed, o->full, mutant, log, tm, &ctx);
  r->secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
  snprintf(r->id, sizeof r->id, "%s", c->id);
  snprintf(r->mutant, sizeof r->mutant, "%s", mutant ? mutant : "");
  r->failures = ctx.failures;
  r->lacks_control = !mutant ? (lacks_control(c, &ctx) ? PROP_LACKS_CONTROL : 0) |
                                   (prop_lacks_unit(&ctx) ? PROP_LACKS_UNIT : 0) : 0;
  r->applied = ctx.mutant_applied;
  r->ntests = ctx.ntests, r->alpha_sum = ctx.alpha_sum;
  /* a mutant's chance to survive: stated by its check (prop_miss); 0 when an exact assertion
   * caught it; else the predictive estimate of its rejected tests (src/core/flip.h); else unknown */
  r->miss_kind = PROP_MISS_NONE, r->miss = 0;
  if (mutant && ctx.miss_set) r->miss_kind = PROP_MISS_STATED, r->miss = ctx.miss;
  else if (mutant && (ctx.check_failures || (ctx.exact && !ctx.ntests))) r->miss_kind = PROP_MISS_EXACT;
  else if (mutant && ctx.rejected) r->miss_kind = PROP_MISS_PLUGIN, r->miss = ctx.reject_miss;
  r->ncells = ctx.ncells;
  memcpy(r->cells, ctx.cells, sizeof r->cells);
  memcpy(r->cell_detail, ctx.cell_detail, sizeof r->cell_detail);
  memcpy(r->cell_flip, ctx.cell_flip, sizeof r->cell_flip);
  memcpy(r->cell_flip_holds, ctx.cell_flip_holds, sizeof r->cell_flip_holds);
  r->nctl = ctx.nctl;
  memcpy(r->ctl_passed, ctx.ctl_passed, sizeof r->ctl_passed);
  memcpy(r->ctl_flip, ctx.ctl_flip, sizeof r->ctl_flip);
  snprintf(r->notes, sizeof r->notes, "%s", ctx.notes);
}

/* ---- judging: the same lines whether the runs were made here or merged from shards ---- */

/* The voting cells' outcomes and flip chances in cell order ("VERDICT:flip", "?" unknown;
 * scripts/fresh-seeds compares them across seeds), and the verdict's flip chance when > 0. */
static void print_cell_flips(const prop_run_rec *r) {
  int unknown, any = 0;
  for (int q = 0; q < r->ncells; q++) {
    if (r->cell_detail[q]) continue;
    printf("%s%s:", any++ ? " " : "    voting cells: ", prop_verdict_name(r->cells[q]));
    if (isnan(r->cell_flip[q])) printf("?");
    else printf("%.3g", r->cell_flip[q]);
  }
  if (any) printf("\n");
  double flip = prop_verdict_flip(prop_check_flip(r->cells, r->cell_flip, r->cell_flip_holds,
                                                  r->cell_detail, r->ncells, &unknown),
                                  r->nctl, r->ctl_passed, r->ctl_flip, NULL);
  if (flip >= PROP_FRAGILE) printf("    seed-fragile (flip p = %.2g)\n", flip);
  else if (flip > 0) printf("    verdict flip p = %.2g\n", flip);
}

/* The faithful run's line; returns the FAIL lines printed (0 or 1). */
static int judge_faithful(const prop_claim *c, const options *o, prop_run_rec *r) {
  if (r->lacks_control & PROP_LACKS_CONTROL) {
    r->failures++;
    printf("    %s claim ran no control through its assertion and gave no reason\n", c->kind);
  }
  if (r->lacks_control & PROP_LACKS_UNIT) {
    r->failures++;
    printf("    made a hypothesis test but stated no unit (prop_unit: \"unit = ..., N = ...\")\n");
  }
  /* the verdict itself, where one is pre-registered (prop_expect.c): at make check's tier and
   * fixed seed, where the expectations were read (a fresh seed's verdict flips are counted by
   * scripts/fresh-seeds, not failed here), for the paper claims (a --method battery has its own) */
  int want = o->full || o->method || o->seed != DEFAULT_SEED ? -1 : prop_expected_verdict(c->id);
  if (!r->failures && want >= 0 && r->v != PROP_SKIPPED && r->v != (prop_verdict)want) {
    printf("FAIL %s: verdict %s, pre-registered %s (props/prop_expect.c) [%.1fs]\n    reproduce: "
           "KVBOUND_SEED=%" PRIu64 " build/kvb-props --only %s\n", c->id, prop_verdict_name(r->v),
           prop_verdict_name((prop_verdict)want), r->secs, o->seed, c->id);
    fflush(stdout);
    return 1;
  }
  /* the battery for one method reports what it found: the verdict first (its mutant and
   * budget lines, checks of the battery itself, keep PASS/FAIL) */
  int verdict_first = o->method != NULL;
  if (!r->failures && r->v == PROP_SKIPPED) {
    const char *why = r->notes;
    if (verdict_first && strncmp(why, "skipped: ", 9) == 0) why += 9; /* the verdict says it */
    printf("%s %s: %s\n", verdict_first ? "SKIPPED" : "SKIP", c->id, why);
    fflush(stdout);
    return 0;
  }
  if (!r->failures) {
    if (verdict_first) printf("%s %s [%.1fs]\n", prop_verdict_name(r->v), c->id, r->secs);
    else printf("PASS %s: %s [%.1fs]\n", c->id, prop_verdict_name(r->v), r->secs);
    print_cell_flips(r);
    fflush(stdout);
    return 0;
  }
  r->v = PROP_FAILS;
  if (verdict_first) printf("FAILS %s [%.1fs]\n    reproduce: KVBOUND_SEED=%" PRIu64
         " build/kvb-props --only %s%s%s%s\n",
         c->id, r->secs, o->seed, c->id, o->full ? " --full" : "",
         o->method ? " --method " : "", o->method ? o->method : "");
  else printf("FAIL %s: %s [%.1fs]\n    reproduce: KVBOUND_SEED=%" PRIu64
         " build/kvb-props --only %s%s%s%s\n",
         c->id, prop_verdict_name(r->v), r->secs, o->seed, c->id, o->full ? " --full" : "",
         o->method ? " --method " : "", o->method ? o->method : "");
  fflush(stdout);
  return 1;
}

/* A mutant run m against the faithful run f: caught when it fails an assertion, changes the
 * verdict, or moves a pre-registered cell (a MIXED claim stays MIXED under a mutant that moves
 * cells). Returns the FAIL lines printed. */
static int judge_mutant(const prop_claim *c, const options *o, const prop_run_rec *f,
                        prop_run_rec *m, int *caught) {
  prop_verdict mv = m->failures ? PROP_FAILS : m->v;
  int cells_moved = m->ncells != f->ncells;
  double flip = NAN; /* the smallest chance that a moved cell moves back (prop_cell_pvalue) */
  for (int q = 0; m->ncells == f->ncells && q < f->ncells; q++)
    if (m->cells[q] != f->cells[q] || m->cell_detail[q] != f->cell_detail[q]) {
      cells_moved = 1;
      if (!isnan(m->cell_flip[q]) && !(flip <= m->cell_flip[q])) flip = m->cell_flip[q];
    }
  /* a catch by moved cells alone: the mutant survives a fresh draw only if every moved cell
   * moves back, which is at most as likely as the likeliest of them doing so */
  if (m->applied && cells_moved && m->miss_kind == PROP_MISS_NONE && !isnan(flip))
    m->miss_kind = PROP_MISS_PLUGIN, m->miss = flip;
  int failed = 0;
  if (!m->applied) {
    /* the claim never injected it: whatever changed, it was not the mutant */
    failed++;
    printf("FAIL %s never applied mutant %s (no helper of prop.h injected it, so it is "
           "not credited)\n", c->id, m->mutant);
  } else if (mv == PROP_FAILS || mv != f->v || cells_moved) {
    (*caught)++;
    printf("PASS %s caught mutant %s (verdict %s)\n", c->id, m->mutant, prop_verdict_name(mv));
    if (m->miss_kind != PROP_MISS_NONE && m->miss > 1e-4)
      printf("    its miss probability is %.3g (%s): the catch rests on a test near its "
             "threshold\n", m->miss, m->miss_kind == PROP_MISS_STATED ? "stated by the check"
                                                                    : "predictive estimate");
  } else {
    failed++;
    printf("FAIL %s let mutant %s survive (verdict %s)\n    reproduce: KVBOUND_SEED=%" PRIu64
           " build/kvb-props --only %s --mutant %s%s\n",
           c->id, m->mutant, prop_verdict_name(mv), o->seed, c->id, m->mutant,
           o->full ? " --full" : "");
  }
  fflush(stdout);
  return failed;
}

static int mutant_selected(const options *o, const char *name) {
  return !o->no_mut && (!o->only_mutant || strcmp(o->only_mutant, name) == 0);
}

static int is_trial_block_claim(const char *id) {
  for (int i = 0; prop_trial_block_claims[i]; i++)
    if (strcmp(prop_trial_block_claims[i], id) == 0) return 1;
  return 0;
}

/* ---- where a judged run comes from: made here, or found among the shards' records ---- */

typedef struct {
  const options *o;
  FILE *devnull;
  prop_run_rec *recs; /* merge: every shard's records */
  size_t nrecs;
  const char *const *trial_files; /* merge: the shards' trials.txt */
  FILE *findings;                 /* --findings: the report's opening goes there */
} source;

/* The record of (c, mutant): run now (single process; or a merge re-deciding a trial-block
 * claim from the shards' trials), or looked up. Returns 0, or -1 when a shard lacks it. */
static int get_run(const source *src, const prop_claim *c, const char *mutant, prop_run_rec *r) {
  const options *o = src->o;
  if (!src->recs || (!mutant && is_trial_block_claim(c->id))) {
    trial_mode tm = {0, 1, src->recs != NULL, NULL, src->trial_files};
    FILE *log = mutant ? (o->only_mutant ? stdout : src->devnull) : stdout;
    if (!mutant && o->only_mutant) log = src->devnull;
    run_into(c, o, mutant, log, src->recs ? &tm : NULL, r);
    return 0;
  }
  for (size_t i = 0; i < src->nrecs; i++)
    if (strcmp(src->recs[i].id, c->id) == 0 &&
        strcmp(src->recs[i].mutant, mutant ? mutant : "") == 0) {
      *r = src->recs[i];
      return 0;
    }
  return -1;
}

/* Judges every selected claim (index % shard_n == shard_k) and writes the report. Returns the
 * process's exit status. */
static int judge_all(const source *src, FILE *rep) {
  const options *o = src->o;
  static check_result res[512];
  static prop_run_rec f, m;
  static budget b;
  memset(&b, 0, sizeof b);
  size_t nres = 0;
  int failed = 0, index = -1;
  /* Progress on stderr for runs that compute (not lists, not merges, which only read): the
   * selected checks first, so "[k/N]" knows N; costs from $KVB_CHECK_COSTS (progress.h). */
  prop_progress pg;
  prop_progress_init(&pg, o->list || o->nmerge || o->quiet ? NULL : stderr,
                     getenv("KVB_CHECK_COSTS"), o->full ? "full" : "check");
  for (size_t t = 0; claim_tables[t] && pg.to; t++)
    for (const prop_claim *c = claim_tables[t]; c->id; c++)
      if (selected(c->id, o->only, o->nonly) && ++index % o->shard_n == o->shard_k &&
          !(o->ndefer && selected(c->id, o->defer, o->ndefer)))
        prop_progress_add(&pg, c->id);
  index = -1;
  for (size_t t = 0; claim_tables[t]; t++) {
    for (const prop_claim *c = claim_tables[t]; c->id; c++) {
      if (!selected(c->id, o->only, o->nonly)) continue;
      index++;
      if (index % o->shard_n != o->shard_k) continue;
      if (o->list) {
        list_claim(c);
        continue;
      }
      if (o->ndefer && selected(c->id, o->defer, o->ndefer)) {
        const char *where = o->deferred_to ? o->deferred_to : "`make run` and `make check-full`";
        printf("SKIP %s: deferred here (--defer): %s run it (props/tiers.tsv; props/README.md, "
               "Where each check runs)\n", c->id, where);
        fflush(stdout);
        if (nres < sizeof res / sizeof *res) {
          check_result *r = &res[nres++];
          r->c = c, r->v = PROP_SKIPPED, r->caught = 0, r->nmut = 0, r->deferred = 1;
          r->flip = 0, r->flip_unknown = 0, r->ctl_unknown = 0;
          snprintf(r->notes, sizeof r->notes, "deferred: not run here; %s run it (props/tiers.tsv)",
                   where);
        }
        continue;
      }
      prop_progress_start(&pg, c->id);
      double t_claim = prop_progress_now();
      int caught = 0, nmut = 0;
      if (!o->only_mutant) {
        printf("## %s (%s, %s)\n", c->id, c->source, c->kind);
        fflush(stdout);
      }
      if (get_run(src, c, NULL, &f)) {
        printf("FAIL %s: its faithful run is in none of the shards\n", c->id);
        failed++;
        continue;
      }
      if (!o->only_mutant) failed += judge_faithful(c, o, &f);
      if (!o->only_mutant) budget_add(&b, &f);
      /* a skipped check's mutants are not run: there is no faithful verdict to compare with */
      for (int k = 0; k < 8 && c->mutants[k] && !(f.v == PROP_SKIPPED && !f.failures); k++) {
        if (!mutant_selected(o, c->mutants[k])) continue;
        nmut++;
        if (get_run(src, c, c->mutants[k], &m)) {
          printf("FAIL %s: its run under mutant %s is in none of the shards\n", c->id,
                 c->mutants[k]);
          failed++;
          continue;
        }
        failed += judge_mutant(c, o, &f, &m, &caught);
        budget_add(&b, &m);
      }
      prop_progress_done(&pg, c->id, prop_progress_now() - t_claim);
      if (nres < sizeof res / sizeof *res) {
        check_result *r = &res[nres++];
        r->c = c, r->v = f.failures ? PROP_FAILS : f.v, r->caught = caught;
        r->nmut = o->no_mut ? -1 : nmut, r->deferred = 0;
        /* a failed assertion or a skipped check has no cell-level flip chance */
        r->flip = 0, r->flip_unknown = 0, r->ctl_unknown = 0;
        if (!f.failures && f.v != PROP_SKIPPED && !o->only_mutant)
          r->flip = prop_verdict_flip(prop_check_flip(f.cells, f.cell_flip, f.cell_flip_holds,
                                                      f.cell_detail, f.ncells, &r->flip_unknown),
                                      f.nctl, f.ctl_passed, f.ctl_flip, &r->ctl_unknown);
        snprintf(r->notes, sizeof r->notes, "%s", o->only_mutant ? "" : f.notes);
      }
    }
  }
  prop_progress_free(&pg);
  /* The papers' empirical family from the faithful runs' notes (family.h): a record that names
   * no member of the table, or a member recorded twice, is a FAIL line, never silence. */
  static const char *fam_ids[512], *fam_notes[512];
  static char fam_problems[4096];
  size_t fam_m = prop_family_size();
  prop_family_outcome *fam = calloc(fam_m ? fam_m : 1, sizeof *fam);
  if (!fam) {
    fprintf(stderr, "kvb-props: out of memory for the family's %zu members\n", fam_m);
    return 1;
  }
  /* a SKIPPED check (its input absent) ran nothing: its members enter as not run */
  for (size_t r = 0; r < nres; r++)
    fam_ids[r] = res[r].c->id, fam_notes[r] = res[r].v == PROP_SKIPPED ? NULL : res[r].notes;
  fam_problems[0] = 0;
  if (!o->list && !method_battery_target() &&
      prop_family_collect(fam_ids, fam_notes, nres, fam, fam_problems, sizeof fam_problems)) {
    printf("FAIL family: the family's records do not match its table (props/family.c): %s\n",
           fam_problems);
    failed++;
  }
  if (rep) write_report(rep, src->findings, res, nres, &b, fam, fam_m, fam_problems);
  free(fam);
  if (!o->list && !o->only_mutant && nres > 0) {
    int fragile, unknown, ctl_unknown;
    double t = total_flips(res, nres, &fragile, &unknown, &ctl_unknown);
    printf("# expected verdict flips per fresh seed: %.3g (target <= %.2g; %d seed-fragile "
           "verdict%s, %d voting cell%s without an estimate, %d control%s without an estimate)%s\n",
           t, PROP_FLIP_TARGET, fragile, fragile == 1 ? "" : "s", unknown, unknown == 1 ? "" : "s",
           ctl_unknown, ctl_unknown == 1 ? "" : "s",
           o->shard_n > 1 ? " in this shard" : "");
  }
  if (!o->list && b.faithful + b.mutants > 0) {
    /* The budget is a check of the battery itself: false alarms and stated misses must fit
     * 0.01 per run. A process judging one of several shards prints its part, which
     * scripts/run-checks adds up into the battery's PASS/FAIL line. */
    double used = budget_used(&b);
    char tag[64];
    if (o->shard_n > 1) snprintf(tag, sizeof tag, "# statistical budget (shard %d/%d)", o->shard_k, o->shard_n);
    else snprintf(tag, sizeof tag, "%s statistical budget", used <= PROP_RUN_BUDGET ? "PASS" : "FAIL");
    printf("%s: %.6g of %.2g (faithful alpha %.3g over %d tests; mutant misses: stated %.3g, "
           "predictive %.3g, largest %.3g; %d of %d mutant runs statistical without an estimate)\n",
           tag, used, PROP_RUN_BUDGET, b.alpha_sum, b.tests, b.stated_sum, b.plugin_sum, b.worst,
           b.nundeclared, b.mutants);
    if (o->shard_n == 1 && used > PROP_RUN_BUDGET) failed++;
  }
  return failed ? 1 : 0;
}

/* ---- shard K of N into a directory ---- */

static void join_only(const options *o, char *buf, size_t cap) {
  buf[0] = 0;
  for (int i = 0; i < o->nonly; i++)
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? "," : "", o->only[i]);
}

/* The sweep's runs in one fixed order — per selected claim its faithful run (a trial-block
 * claim's faithful run instead goes to every shard, each doing its own trial blocks), then its
 * mutants — are dealt out run u to shard u mod N; or, with $KVB_SHARD_COSTS naming a costs
 * table (props/check-costs.tsv: tier "run" under --no-mutants, else "check", a claim's cost
 * spread over its runs), longest first to the shard with the least recorded work (ties: the
 * lower shard, then the earlier run; a run without a record as the mean one), so that the
 * shards end together. Every shard computes the
 * same dealing from the same table; the merge looks records up, whoever made them. Returns
 * owner[u] (NULL: u mod N) and sets *nruns. */
static int *shard_owners(const options *o, long *nruns) {
  const char *path = getenv("KVB_SHARD_COSTS");
  *nruns = 0;
  if (!path || !*path) return NULL;
  prop_progress pg; /* its cost table only: nothing is printed */
  prop_progress_init(&pg, stderr, path, o->full ? "full" : o->no_mut ? "run" : "check");
  size_t cap = 256;
  double *cost = malloc(cap * sizeof *cost);
  for (size_t t = 0; cost && claim_tables[t]; t++)
    for (const prop_claim *c = claim_tables[t]; c->id; c++) {
      if (!selected(c->id, o->only, o->nonly) || (o->ndefer && selected(c->id, o->defer, o->ndefer)))
        continue;
      int runs = !is_trial_block_claim(c->id);
      for (int k = 0; k < 8 && c->mutants[k]; k++) runs += mutant_selected(o, c->mutants[k]);
      double each = runs ? prop_progress_cost(&pg, c->id) / runs : 0; /* < 0: no record */
      for (int r = 0; r < runs && cost; r++) {
        if ((size_t)*nruns == cap) {
          double *g = realloc(cost, 2 * cap * sizeof *g);
          if (!g) free(cost);
          cost = g, cap *= 2;
        }
        if (cost) cost[(*nruns)++] = each;
      }
    }
  prop_progress_free(&pg);
  /* a run without a record counts as the mean recorded run (1 s if none): unknown runs spread
   * over the shards rather than all going to the least-loaded one */
  double sum = 0;
  long known = 0;
  for (long u = 0; cost && u < *nruns; u++)
    if (cost[u] >= 0) sum += cost[u], known++;
  for (long u = 0; cost && u < *nruns; u++)
    if (cost[u] < 0) cost[u] = known && sum > 0 ? sum / known : 1;
  int *owner = cost ? malloc((size_t)(*nruns ? *nruns : 1) * sizeof *owner) : NULL;
  double *load = owner ? calloc((size_t)o->shard_n, sizeof *load) : NULL;
  char *done = load ? calloc((size_t)(*nruns ? *nruns : 1), 1) : NULL;
  for (long n = 0; done && n < *nruns; n++) {
    long best = -1; /* the longest run not dealt yet (the earliest among equals) */
    for (long u = 0; u < *nruns; u++)
      if (!done[u] && (best < 0 || cost[u] > cost[best])) best = u;
    int s = 0;
    for (int k = 1; k < o->shard_n; k++)
      if (load[k] < load[s]) s = k;
    owner[best] = s, load[s] += cost[best], done[best] = 1;
  }
  if (!done) free(owner), owner = NULL;
  free(done), free(load), free(cost);
  return owner;
}

static int run_shard(const options *o) {
  if (mkdir(o->out, 0777) && errno != EEXIST) {
    fprintf(stderr, "kvb-props: cannot create shard directory '%s': %s\n", o->out,
            strerror(errno));
    return 2;
  }
  char path[4096];
  prop_shard_meta meta = {.k = o->shard_k, .n = o->shard_n, .full = o->full,
                          .no_mut = o->no_mut, .seed = o->seed};
  snprintf(meta.only_mutant, sizeof meta.only_mutant, "%s", o->only_mutant ? o->only_mutant : "");
  join_only(o, meta.only, sizeof meta.only);
  snprintf(meta.version, sizeof meta.version, "%s", KVBOUND_VERSION);
  /* the method under test and every plugin loaded, by identity (path, size, SHA-256, ABI
   * version), so the merge judges the same battery on the same method: it loads no plugin a
   * shard names, only those of its own command line whose identities match (a Python method
   * is registered by the merging process itself: python3 -m kvbound props --register FILE.py
   * --merge DIR...) */
  snprintf(meta.method, sizeof meta.method, "%s", o->method ? o->method : "");
  kvb_plugin_identity pid;
  for (size_t i = 0; kvb_plugin_identity_at(i, &pid) == KVB_OK; i++) {
    size_t l = strlen(meta.plugins);
    int k = snprintf(meta.plugins + l, sizeof meta.plugins - l, "%s%s %llu %u %s", l ? "\n" : "",
                     pid.sha256, pid.size, (unsigned)pid.abi_version, pid.path);
    if (k < 0 || (size_t)k >= sizeof meta.plugins - l || strchr(pid.path, '\n')) {
      fprintf(stderr, "kvb-props: too many plugins (or a path with a line break) to record in "
                      "the shard metadata\n");
      return 2;
    }
  }
  if (method_battery_target_type() &&
      kvb_plugin_identity_of(method_battery_target_type(), &pid) == KVB_OK)
    memcpy(meta.method_plugin, pid.sha256, sizeof meta.method_plugin);
  /* The marker of a finished shard is its meta.txt, written last: a shard that died leaves
   * none, and the merge names it. */
  snprintf(path, sizeof path, "%s/meta.txt", o->out);
  remove(path);
  FILE *runs, *trials, *log, *tbsecs;
  snprintf(path, sizeof path, "%s/runs.txt", o->out);
  runs = fopen(path, "w");
  /* a trial-block claim's share of CPU seconds (it has no run record here; scripts/full-report
   * adds these to runs.txt's for the CPU-hours) */
  snprintf(path, sizeof path, "%s/trial-secs.txt", o->out);
  tbsecs = fopen(path, "w");
  snprintf(path, sizeof path, "%s/trials.txt", o->out);
  trials = fopen(path, "w");
  snprintf(path, sizeof path, "%s/log.txt", o->out);
  log = fopen(path, "w");
  if (!runs || !trials || !log || !tbsecs) {
    fprintf(stderr, "kvb-props: cannot write in shard directory '%s'\n", o->out);
    if (tbsecs) fclose(tbsecs);
    if (runs) fclose(runs);
    if (trials) fclose(trials);
    if (log) fclose(log);
    return 2;
  }
  printf("# kvb-props shard %d/%d seed %" PRIu64 "%s\n", o->shard_k, o->shard_n, o->seed,
         o->full ? " (full)" : "");
  static prop_run_rec r;
  long u = -1, nruns = 0;
  int bad = 0;
  int *owner = shard_owners(o, &nruns);
#define MINE(u) (owner && (u) < nruns ? owner[u] == o->shard_k : (u) % o->shard_n == o->shard_k)
  for (size_t t = 0; claim_tables[t]; t++) {
    for (const prop_claim *c = claim_tables[t]; c->id; c++) {
      if (!selected(c->id, o->only, o->nonly)) continue;
      if (o->ndefer && selected(c->id, o->defer, o->ndefer)) continue; /* the merge's SKIP */
      if (is_trial_block_claim(c->id)) {
        trial_mode tm = {o->shard_k, o->shard_n, 0, trials, NULL};
        run_into(c, o, NULL, log, &tm, &r);
        printf("ran %s: its trial blocks %d mod %d [%.1fs]\n", c->id, o->shard_k, o->shard_n,
               r.secs);
        fprintf(tbsecs, "%s\t%.3f\n", c->id, r.secs);
      } else if (++u, MINE(u)) {
        run_into(c, o, NULL, log, NULL, &r);
        bad |= prop_rec_write(runs, &r);
        printf("ran %s: %s [%.1fs]\n", c->id, prop_verdict_name(r.v), r.secs);
      }
      for (int k = 0; k < 8 && c->mutants[k]; k++) {
        if (!mutant_selected(o, c->mutants[k]) || (++u, !MINE(u))) continue;
        run_into(c, o, c->mutants[k], log, NULL, &r);
        bad |= prop_rec_write(runs, &r);
        printf("ran %s under %s: %s [%.1fs]\n", c->id, c->mutants[k], prop_verdict_name(r.v),
               r.secs);
      }
      fflush(stdout);
    }
  }
#undef MINE
  free(owner);
  bad |= fclose(runs) != 0, bad |= fclose(trials) != 0, bad |= fclose(log) != 0;
  bad |= fclose(tbsecs) != 0;
  snprintf(path, sizeof path, "%s/meta.txt", o->out);
  if (bad || prop_meta_write(path, &meta)) {
    fprintf(stderr, "kvb-props: writing shard directory '%s' failed\n", o->out);
    return 2;
  }
  return 0;
}

/* ---- merge ---- */

/* The plugins the shards recorded, on stderr, with what to pass. */
static void merge_name_plugins(const prop_shard_meta *m) {
  fprintf(stderr, "kvb-props: --merge loads no code a shard directory names; the shards ran "
                  "with these plugins (pass each one the method needs as --plugin PATH; its "
                  "SHA-256 must match):\n");
  for (const char *p = m->plugins; *p;) {
    size_t l = strcspn(p, "\n");
    char sha[65];
    unsigned long long size = 0;
    unsigned abi = 0;
    int at = 0;
    if (sscanf(p, "%64s %llu %u %n", sha, &size, &abi, &at) == 3 && at > 0 && (size_t)at <= l)
      fprintf(stderr, "  %.*s  (%llu bytes, SHA-256 %s, plugin ABI %u)%s\n", (int)(l - (size_t)at),
              p + at, size, sha, abi, strcmp(sha, m->method_plugin) ? "" : "  <- the method's");
    p += l + (p[l] == '\n');
  }
}

/* A merge runs no code a data file names: the plugins this process loaded (its own --plugin
 * and $KVBOUND_PLUGINS) must each be one whose identity the shards recorded; a shard that names
 * a plugin by path only (a kvb-props before identities) is refused. Returns 0 or 2. */
static int merge_check_plugins(const prop_shard_meta *m) {
  if (m->path_only_plugin) {
    fprintf(stderr, "kvb-props: --merge: the shards name a plugin by path only (\"plugin PATH\" "
                    "in meta.txt, no SHA-256): merge loads no code a shard names and cannot "
                    "verify this one; run the shards again with this kvb-props\n");
    return 2;
  }
  char ids[4096];
  prop_meta_plugin_ids(m, ids, sizeof ids);
  kvb_plugin_identity pid;
  for (size_t i = 0; kvb_plugin_identity_at(i, &pid) == KVB_OK; i++) {
    char one[128];
    snprintf(one, sizeof one, "%s %llu %u", pid.sha256, pid.size, (unsigned)pid.abi_version);
    int found = 0;
    for (const char *p = ids; *p && !found;) {
      size_t l = strcspn(p, "\n");
      found = l == strlen(one) && strncmp(p, one, l) == 0;
      p += l + (p[l] == '\n');
    }
    if (!found) {
      fprintf(stderr, "kvb-props: --merge: --plugin %s (%llu bytes, SHA-256 %s) is not a plugin "
                      "the shards ran with\n", pid.path, pid.size, pid.sha256);
      if (m->plugins[0]) merge_name_plugins(m);
      else fprintf(stderr, "kvb-props: --merge: the shards ran with no plugin\n");
      return 2;
    }
  }
  return 0;
}

/* Checks that the directories are shards 0..N-1 of one sweep (each once), sets o's sweep
 * options from them, and loads their records. Returns 0 or 2 with a message. */
static int load_shards(options *o, source *src, char **trial_files, char *only_buf) {
  static prop_shard_meta meta[1024];
  char path[4096], why[512];
  int n = -1;
  for (int i = 0; i < o->nmerge; i++) {
    snprintf(path, sizeof path, "%s/meta.txt", o->merge[i]);
    if (prop_meta_read(path, &meta[i], why, sizeof why)) {
      fprintf(stderr, "kvb-props: --merge: %s (a shard that did not finish leaves no meta.txt: "
                      "run it again)\n", why);
      return 2;
    }
    if (i == 0) n = meta[0].n;
    const prop_shard_meta *a = &meta[0], *b = &meta[i];
    char ida[4096], idb[4096];
    prop_meta_plugin_ids(a, ida, sizeof ida);
    prop_meta_plugin_ids(b, idb, sizeof idb);
    if (b->n != a->n || b->seed != a->seed || b->full != a->full || b->no_mut != a->no_mut ||
        strcmp(b->only_mutant, a->only_mutant) || strcmp(b->only, a->only) ||
        strcmp(b->version, a->version) || strcmp(b->method, a->method) ||
        strcmp(b->method_plugin, a->method_plugin) || strcmp(ida, idb) ||
        b->path_only_plugin != a->path_only_plugin) {
      fprintf(stderr, "kvb-props: --merge: %s and %s are not shards of one sweep (shard count, "
                      "seed, tier, selection, method, plugin identities (SHA-256) or kvbound "
                      "version differ)\n",
              o->merge[0], o->merge[i]);
      return 2;
    }
  }
  if (merge_check_plugins(&meta[0])) return 2;
  if (o->method && strcmp(o->method, meta[0].method)) {
    fprintf(stderr, "kvb-props: --merge: --method %s, but the shards ran %s\n", o->method,
            meta[0].method[0] ? meta[0].method : "the papers' claims (no --method)");
    return 2;
  }
  if (meta[0].method[0]) {
    o->method = meta[0].method;
    if (method_battery_set_target(o->method, why, sizeof why)) {
      fprintf(stderr, "kvb-props: --merge: the shards ran --method %s: %s\n", o->method, why);
      if (meta[0].plugins[0]) merge_name_plugins(&meta[0]);
      return 2;
    }
    /* the method must come from the plugin the shards ran it from, not another file that
     * registers the same name */
    kvb_plugin_identity pid;
    int from = kvb_plugin_identity_of(method_battery_target_type(), &pid) == KVB_OK;
    if (strcmp(from ? pid.sha256 : "", meta[0].method_plugin)) {
      fprintf(stderr, "kvb-props: --merge: the shards ran --method %s from %s%s, this process "
                      "has it from %s%s\n", o->method,
              meta[0].method_plugin[0] ? "the plugin with SHA-256 " : "kvbound itself (no plugin)",
              meta[0].method_plugin, from ? "the plugin with SHA-256 " : "kvbound itself",
              from ? pid.sha256 : "");
      return 2;
    }
    claim_tables = battery_tables;
  }
  for (int k = 0; k < n; k++) {
    int seen = 0;
    for (int i = 0; i < o->nmerge; i++) seen += meta[i].k == k;
    if (seen != 1) {
      fprintf(stderr, "kvb-props: --merge: shard %d/%d is %s\n", k, n,
              seen ? "given more than once" : "missing");
      return 2;
    }
  }
  o->shard_k = 0, o->shard_n = 1;
  o->seed = meta[0].seed, o->full = meta[0].full, o->no_mut = meta[0].no_mut;
  o->only_mutant = meta[0].only_mutant[0] ? meta[0].only_mutant : NULL;
  strcpy(only_buf, meta[0].only);
  for (char *tok = strtok(only_buf, ","); tok && o->nonly < 64; tok = strtok(NULL, ","))
    o->only[o->nonly++] = tok;
  size_t cap = 64;
  src->recs = malloc(cap * sizeof *src->recs);
  if (!src->recs) return 2;
  for (int i = 0; i < o->nmerge; i++) {
    snprintf(path, sizeof path, "%s/runs.txt", o->merge[i]);
    FILE *f = NULL; /* a regular file only (read_file.h): a FIFO would block forever */
    if (kvb_open_regular(path, KVB_ROWS_FILE_MAX, "shard runs", &f)) {
      fprintf(stderr, "kvb-props: --merge: cannot read %s: %s\n", path, kvb_strerror_last());
      return 2;
    }
    int st;
    for (;;) {
      if (src->nrecs == cap) {
        prop_run_rec *g = realloc(src->recs, 2 * cap * sizeof *g);
        if (!g) return fclose(f), 2;
        src->recs = g, cap *= 2;
      }
      if ((st = prop_rec_read(f, &src->recs[src->nrecs])) != 1) break;
      src->nrecs++;
    }
    fclose(f);
    if (st < 0) {
      fprintf(stderr, "kvb-props: --merge: %s has a malformed record after %zu\n", path,
              src->nrecs);
      return 2;
    }
    size_t len = strlen(o->merge[i]) + 16;
    trial_files[i] = malloc(len);
    if (!trial_files[i]) return 2;
    snprintf(trial_files[i], len, "%s/trials.txt", o->merge[i]);
  }
  trial_files[o->nmerge] = NULL;
  src->trial_files = (const char *const *)trial_files;
  return 0;
}

/* Every --only prefix must select a claim: a misspelt one would run nothing and pass. */
static int check_only(const options *o) {
  int bad = 0;
  for (int i = 0; i < o->nonly; i++) {
    int hit = 0;
    for (size_t t = 0; claim_tables[t] && !hit; t++)
      for (const prop_claim *c = claim_tables[t]; c->id && !hit; c++)
        hit = strncmp(c->id, o->only[i], strlen(o->only[i])) == 0;
    if (!hit) {
      fprintf(stderr, "kvb-props: --only %s matches no claim (kvb-props --list)\n", o->only[i]);
      bad = 1;
    }
  }
  return bad;
}

/* The battery's entry point (build/libkvbound-props.so; build/kvb-props is a main over it):
 * argv as for kvb-props, argv[0] ignored. */
int kvb_props_main(int argc, char **argv);
int kvb_props_main(int argc, char **argv) {
  static options o;
  /* One OpenBLAS thread whatever the environment says (as kvb_cli_main): the checks' numbers
   * must not depend on $OPENBLAS_NUM_THREADS or the machine's core count. */
  openblas_set_num_threads(1);
  claim_tables = prop_claim_tables;
  method_battery_reset();
  if (kvb_plugins_load_env()) {
    fprintf(stderr, "kvb-props: %s\n", kvb_strerror_last());
    return 2;
  }
  int rc = parse_args(argc, argv, &o);
  if (rc >= 0) return rc;
  if (!o.nmerge && check_only(&o)) return 2;
  if (check_covers() || check_mutant_names() || check_expectations()) return 2;
  char why[256];
  if (o.only_mutant && !prop_mutant_resolves(o.only_mutant, why, sizeof why)) {
    fprintf(stderr, "kvb-props: --mutant %s\n", why);
    return 2;
  }
  if (o.out && !o.list) return run_shard(&o);
  source src = {.o = &o};
  static char *trial_files[1025];
  static char only_buf[1024];
  if (o.nmerge && (rc = load_shards(&o, &src, trial_files, only_buf)) != 0) return rc;
  FILE *rep = NULL;
  if (o.report && !(rep = fopen(o.report, "w"))) {
    fprintf(stderr, "kvb-props: cannot write report '%s'\n", o.report);
    return 2;
  }
  if (o.findings && !(src.findings = fopen(o.findings, "w"))) {
    fprintf(stderr, "kvb-props: cannot write findings '%s'\n", o.findings);
    if (rep) fclose(rep);
    return 2;
  }
  src.devnull = fopen("/dev/null", "w");
  if (!o.list) printf("# kvb-props seed %" PRIu64 "%s\n", o.seed, o.full ? " (full)" : "");
  rc = judge_all(&src, rep);
  if (src.devnull) fclose(src.devnull);
  if (rep) fclose(rep);
  if (src.findings) fclose(src.findings);
  free(src.recs);
  for (int i = 0; trial_files[i]; i++) free(trial_files[i]);
  return rc;
}

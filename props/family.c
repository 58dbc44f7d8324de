/* family.c — the papers' empirical family (family.h): the pre-registered member table, the
 * members' records in the faithful runs' notes, Holm's step-down and the report section.
 *
 * A member's record is one note, "family ⟦ROW|CELL|KIND|P_CLAIM|P_CONTRA|POWER|UNIT|N|NUMBERS⟧",
 * doubles with %.17g (an exact round trip), so a merged sweep decides the family on the bytes a
 * single process would (prop_shard.c carries the notes). */
#include "family.h"
#include "lm.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The members, fixed before any run (DESIGN, Two families). A cell is MODEL:METHOD>CONTENDER
 * for superiority (the paper claims METHOD above CONTENDER), MODEL:A~B for equivalence (the
 * paper calls A competitive with B); methods by the papers' names (uniform = uniform sampling,
 * subgen / clustergen = 000/001's method, run by kvbound as recent window + k-center,
 * streamingllm = sink + recent window). Models: every model of lm.h's registry, by its key
 * (smollm2: SmolLM2-135M; Gemma 3 270M's), each cell once per model.
 * The checks that report them and their outcomes: props/FAMILY-CELLS.txt. Rows:
 *   B-FIG4        003 §4.3, Fig. 4: augmented BalanceKV (0.99) above uniform (0.90), PyramidKV
 *                 (0.90), SnapKV (0.83) and StreamingLLM (0.31) on the needle;
 *   B-TAB1        003 Table 1: block BalanceKV's average above uniform, PyramidKV, SnapKV and
 *                 StreamingLLM;
 *   S-TAB1.acc    000 Table 1 = 001 Table 2: SubGen above H2O and Sink on line retrieval;
 *   S-CG-TAB3     001 Table 3: ClusterGen above AttentionSink (the same test as S-TAB1.acc's
 *                 SubGen-vs-StreamingLLM member, counted twice: conservative under Holm);
 *   B-TAB5        003 Table 5: BalanceKV above uniform at mild compression;
 *   B-TAB6        003 Table 6: BalanceKV above ClusterGen;
 *   B-TAB1.trivia 003 App. B.2: uniform sampling competitive with BalanceKV (TOST). */
typedef struct {
  const char *row, *cell;
  prop_family_kind kind;
} member_t;

#define S PROP_FAM_SUPERIORITY
#define E PROP_FAM_EQUIVALENCE
static const member_t CELLS[] = {
    {"B-FIG4", "balancekv_augmented>uniform", S},
    {"B-FIG4", "balancekv_augmented>pyramidkv", S},
    {"B-FIG4", "balancekv_augmented>snapkv", S},
    {"B-FIG4", "balancekv_augmented>streamingllm", S},
    {"B-TAB1", "balancekv_block>uniform", S},
    {"B-TAB1", "balancekv_block>pyramidkv", S},
    {"B-TAB1", "balancekv_block>snapkv", S},
    {"B-TAB1", "balancekv_block>streamingllm", S},
    {"S-TAB1.acc", "subgen>h2o", S},
    {"S-TAB1.acc", "subgen>streamingllm", S},
    {"S-CG-TAB3", "clustergen>streamingllm", S},
    {"B-TAB5", "balancekv_block>uniform", S},
    {"B-TAB6", "balancekv_block>clustergen", S},
    {"B-TAB1.trivia", "uniform~balancekv_block", E},
};
#undef S
#undef E
#define NCELLS (sizeof CELLS / sizeof *CELLS)
#define NMEMBERS (NCELLS * KVB_LM_N_KINDS)

/* The members: each cell once per model of the registry, the models in its order within a cell
 * ("smollm2:balancekv_augmented>uniform", then the next model's), filled when the library loads. */
static member_t MEMBERS[NMEMBERS];
static char member_cell[NMEMBERS][96];
__attribute__((constructor)) static void members_build(void) {
  for (size_t c = 0; c < NCELLS; c++)
    for (int k = 0; k < KVB_LM_N_KINDS; k++) {
      size_t i = c * KVB_LM_N_KINDS + (size_t)k;
      snprintf(member_cell[i], sizeof member_cell[i], "%s:%s", kvb_lm_kind_key((kvb_lm_kind)k),
               CELLS[c].cell);
      MEMBERS[i] = CELLS[c], MEMBERS[i].cell = member_cell[i];
    }
}

size_t prop_family_size(void) { return NMEMBERS; }

const char *prop_family_member(size_t i, const char **cell) {
  if (i >= NMEMBERS) {
    if (cell) *cell = NULL;
    return NULL;
  }
  if (cell) *cell = MEMBERS[i].cell;
  return MEMBERS[i].row;
}

static long member_index(const char *row, const char *cell) {
  for (size_t i = 0; i < NMEMBERS; i++)
    if (strcmp(MEMBERS[i].row, row) == 0 && strcmp(MEMBERS[i].cell, cell) == 0) return (long)i;
  return -1;
}

static const char *const KIND[] = {"superiority", "equivalence"};

/* s without the record's separators: '|' becomes '/', the closing bracket ⟧ becomes ']' */
static void clean(char *s) {
  static const char close[] = "⟧";
  for (char *c = s; *c; c++) {
    if (*c == '|') *c = '/';
    else if (strncmp(c, close, sizeof close - 1) == 0) {
      *c = ']';
      memmove(c + 1, c + sizeof close - 1, strlen(c + sizeof close - 1) + 1);
    }
  }
}

static int bad_p(double p) { return !(p >= 0 && p <= 1); }

void prop_family(prop_ctx *ctx, const char *row, const char *cell, prop_family_kind kind,
                 double p_claim, double p_contra, double power, const char *unit, size_t n,
                 const char *fmt, ...) {
  char numbers[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(numbers, sizeof numbers, fmt, ap);
  va_end(ap);
  clean(numbers);
  char u[128];
  snprintf(u, sizeof u, "%s", unit ? unit : "");
  clean(u);
  if (!prop_check(ctx, row && cell && member_index(row, cell) >= 0,
                  "family member (%s, %s) is not in the pre-registered table (props/family.c)",
                  row ? row : "(null)", cell ? cell : "(null)"))
    return;
  long i = member_index(row, cell);
  if (!prop_check(ctx, kind == MEMBERS[i].kind,
                  "family member (%s, %s) is pre-registered as %s, reported as kind %d", row,
                  cell, KIND[MEMBERS[i].kind], (int)kind))
    return;
  /* N = 0: the member does not run at this tier (recorded so, entering the family with p = 1) */
  if (!prop_check(ctx, !bad_p(p_claim) && !bad_p(p_contra) && !bad_p(power) && u[0],
                  "family member (%s, %s): p_claim %g, p_contra %g and power %g must lie in "
                  "[0, 1], with a unit (unit '%s', N = %zu)",
                  row, cell, p_claim, p_contra, power, u, n))
    return;
  size_t used = strlen(ctx->notes);
  char rec[1400];
  snprintf(rec, sizeof rec, "family ⟦%s|%s|%s|%.17g|%.17g|%.17g|%s|%zu|%s⟧", row, cell,
           KIND[kind], p_claim, p_contra, power, u, n, numbers);
  prop_note(ctx, "%s", rec);
  /* prop_note drops a note that no longer fits; a member lost that way would enter the family
   * as "not run" silently, so the loss is a failed check instead */
  prop_check(ctx, strlen(ctx->notes) > used,
             "family member (%s, %s) could not be recorded: the check's notes are full", row, cell);
}

/* ---- Holm ---- */

static const double *sort_p;
static int by_p(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  double x = sort_p[i], y = sort_p[j];
  if (x < y) return -1;
  if (x > y) return 1;
  return i < j ? -1 : i > j; /* ties in index order: the sort is then deterministic */
}

void prop_holm(const double *p, size_t m, double *adj) {
  if (m == 0) return;
  size_t *ord = malloc(m * sizeof *ord);
  double *q = malloc(m * sizeof *q);
  if (!ord || !q) { /* no memory: nothing rejected (adjusted p = 1) rather than a wrong rejection */
    for (size_t i = 0; i < m; i++) adj[i] = 1;
    free(ord), free(q);
    return;
  }
  for (size_t i = 0; i < m; i++) ord[i] = i, q[i] = isnan(p[i]) ? 1 : p[i];
  sort_p = q;
  qsort(ord, m, sizeof *ord, by_p);
  double run = 0;
  for (size_t k = 0; k < m; k++) { /* rank k + 1: multiplier m − k */
    double a = fmin(1, (double)(m - k) * q[ord[k]]);
    if (a > run) run = a; /* step-down: once a rank is not rejected, no later one is */
    adj[ord[k]] = run;
  }
  free(ord), free(q);
}

/* ---- the report ---- */

const char *prop_family_decision_name(prop_family_decision d) {
  switch (d) {
    case PROP_FAMD_NOT_RUN: return "not run at this tier";
    case PROP_FAMD_SUPPORTED: return "CLAIM SUPPORTED";
    case PROP_FAMD_CONTRADICTED: return "CONTRADICTED";
    case PROP_FAMD_NOT_OBSERVED: return "NOT-OBSERVED";
    case PROP_FAMD_INCONCLUSIVE: return "INCONCLUSIVE";
  }
  return "?";
}

static void add_why(char *why, size_t cap, int *problems, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_why(char *why, size_t cap, int *problems, const char *fmt, ...) {
  (*problems)++;
  if (!why || !cap) return;
  size_t o = strlen(why);
  if (o + 4 >= cap) return;
  if (o) o += (size_t)snprintf(why + o, cap - o, "; ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why + o, cap - o, fmt, ap);
  va_end(ap);
}

/* Parses one record body "ROW|CELL|KIND|PC|PK|POW|UNIT|N|NUMBERS" (s is modified). */
static int parse_rec(char *s, char **f) {
  for (int i = 0; i < 8; i++) {
    char *bar = strchr(s, '|');
    if (!bar) return -1;
    *bar = 0, f[i] = s, s = bar + 1;
  }
  f[8] = s;
  return 0;
}

int prop_family_collect(const char *const *ids, const char *const *notes, size_t nruns,
                        prop_family_outcome *out, char *why, size_t cap) {
  int problems = 0;
  if (why && cap) why[0] = 0;
  for (size_t i = 0; i < NMEMBERS; i++) {
    memset(&out[i], 0, sizeof out[i]);
    out[i].row = MEMBERS[i].row, out[i].cell = MEMBERS[i].cell, out[i].kind = MEMBERS[i].kind;
    out[i].p_claim = out[i].p_contra = out[i].p = 1;
  }
  static const char open[] = "family ⟦", close[] = "⟧";
  for (size_t r = 0; r < nruns; r++) {
    for (const char *a = notes[r] ? strstr(notes[r], open) : NULL; a; a = strstr(a, open)) {
      a += sizeof open - 1;
      const char *b = strstr(a, close);
      if (!b) {
        add_why(why, cap, &problems, "%s: an unterminated family record", ids[r]);
        break;
      }
      char body[1400], *f[9];
      size_t len = (size_t)(b - a);
      if (len >= sizeof body) len = sizeof body - 1;
      memcpy(body, a, len), body[len] = 0;
      a = b;
      char *e1, *e2, *e3, *e4;
      if (parse_rec(body, f)) {
        add_why(why, cap, &problems, "%s: a malformed family record", ids[r]);
        continue;
      }
      long i = member_index(f[0], f[1]);
      if (i < 0) {
        add_why(why, cap, &problems, "%s recorded (%s, %s), which is no member of the table",
                ids[r], f[0], f[1]);
        continue;
      }
      prop_family_outcome *o = &out[i];
      if (o->recorded) {
        add_why(why, cap, &problems, "(%s, %s) recorded twice (%s and %s)", f[0], f[1],
                o->check, ids[r]);
        continue;
      }
      int kind = strcmp(f[2], KIND[0]) == 0 ? 0 : strcmp(f[2], KIND[1]) == 0 ? 1 : -1;
      double pc = strtod(f[3], &e1), pk = strtod(f[4], &e2), pw = strtod(f[5], &e3);
      unsigned long long n = strtoull(f[7], &e4, 10);
      if (kind < 0 || *e1 || *e2 || *e3 || *e4 || bad_p(pc) || bad_p(pk) || bad_p(pw)) {
        add_why(why, cap, &problems, "%s: a malformed family record for (%s, %s)", ids[r],
                f[0], f[1]);
        continue;
      }
      o->recorded = 1;
      o->ran = n > 0;
      snprintf(o->check, sizeof o->check, "%s", ids[r]);
      o->kind = (prop_family_kind)kind;
      o->p_claim = pc, o->p_contra = pk, o->power = pw, o->n = (size_t)n;
      snprintf(o->unit, sizeof o->unit, "%s", f[6]);
      snprintf(o->numbers, sizeof o->numbers, "%s", f[8]);
    }
  }
  /* the members' p: superiority two-sided from the two one-sided ones (the direction is the
   * smaller one's), equivalence the TOST p; not run: 1 */
  double p[NMEMBERS], adj[NMEMBERS];
  for (size_t i = 0; i < NMEMBERS; i++) {
    prop_family_outcome *o = &out[i];
    if (!o->ran) o->p = 1, o->p_claim = o->p_contra = 1;
    else if (o->kind == PROP_FAM_SUPERIORITY) o->p = fmin(1, 2 * fmin(o->p_claim, o->p_contra));
    else o->p = o->p_claim;
    p[i] = o->p;
  }
  prop_holm(p, NMEMBERS, adj);
  for (size_t i = 0; i < NMEMBERS; i++) {
    prop_family_outcome *o = &out[i];
    o->p_holm = adj[i];
    if (!o->ran) o->d = PROP_FAMD_NOT_RUN;
    else if (adj[i] <= PROP_FAMILY_ALPHA)
      o->d = o->kind == PROP_FAM_EQUIVALENCE || o->p_claim <= o->p_contra ? PROP_FAMD_SUPPORTED
                                                                          : PROP_FAMD_CONTRADICTED;
    else o->d = o->power >= 0.9 ? PROP_FAMD_NOT_OBSERVED : PROP_FAMD_INCONCLUSIVE;
  }
  return problems;
}

static void md(FILE *f, const char *s) {
  for (; *s; s++) fputs(*s == '|' ? "\\|" : (char[2]){*s, 0}, f);
}

void prop_family_write(FILE *rep, const prop_family_outcome *out, size_t m, const char *problems) {
  fprintf(rep,
          "\n### The papers' empirical claims as one family\n\n"
          "Rule (pre-registered, props/family.c): the %zu members below — every comparison on "
          "real models or tasks the papers' empirical rows make, per model — form one family, "
          "judged by Holm's step-down procedure at family-wise level %.2g. A superiority "
          "member's p is min(1, 2·min(p_claim, p_contra)) (two-sided; the direction is the "
          "smaller one's: CLAIM SUPPORTED or CONTRADICTED); an equivalence member's is its TOST "
          "p (SUPPORTED: within the stated margin). A member not rejected is NOT-OBSERVED when "
          "the design's power at its pre-registered effect at level %.2g/m = %.3g was >= 0.9, "
          "INCONCLUSIVE otherwise. A member that did not run at this tier enters with p = 1. "
          "The paper rows named here take the family's verdict (their members' decisions: "
          "SUPPORTED → HOLDS, CONTRADICTED → FAILS, NOT-OBSERVED, INCONCLUSIVE; MIXED when "
          "they differ), unless their checks' roll-up is FAILS, ERRATUM or VACUOUS; the "
          "checks' lines at α = 1e-6 are the regression view.\n\n"
          "m = %zu, α = %.2g.\n\n"
          "| row | cell | kind | unit | N | p | Holm-adjusted p | power at α/m | decision | "
          "outcome (check) |\n|---|---|---|---|---|---|---|---|---|---|\n",
          m, PROP_FAMILY_ALPHA, PROP_FAMILY_ALPHA, PROP_FAMILY_ALPHA / (double)m, m,
          PROP_FAMILY_ALPHA);
  for (size_t i = 0; i < m; i++) {
    const prop_family_outcome *o = &out[i];
    fprintf(rep, "| %s | %s | %s | ", o->row, o->cell, KIND[o->kind]);
    if (!o->ran) {
      fprintf(rep, "— | — | 1 | %.3g | — | **%s** | %s%s%s |\n", o->p_holm,
              prop_family_decision_name(o->d), o->recorded ? "(`" : "—",
              o->recorded ? o->check : "", o->recorded ? "`)" : "");
      continue;
    }
    md(rep, o->unit);
    fprintf(rep, " | %zu | %.3g | %.3g | %.3f | **%s** | ", o->n, o->p, o->p_holm, o->power,
            prop_family_decision_name(o->d));
    md(rep, o->numbers);
    fprintf(rep, "%s(`%s`) |\n", o->numbers[0] ? " " : "", o->check);
  }
  if (problems && problems[0]) {
    fprintf(rep, "\n**The family's records do not match its table** (the lead fixes the table or "
                 "the call): ");
    md(rep, problems);
    fprintf(rep, "\n");
  }
}

void prop_family_md_notes(FILE *f, const char *notes) {
  static const char open[] = "family ⟦", close[] = "⟧";
  while (notes && *notes) {
    const char *a = strstr(notes, open), *b = a ? strstr(a, close) : NULL;
    if (!b) { /* no more records: the rest as it is */
      md(f, notes);
      return;
    }
    for (const char *c = notes; c < a; c++) fputs(*c == '|' ? "\\|" : (char[2]){*c, 0}, f);
    char body[1400], *fl[9];
    size_t len = (size_t)(b - a) - (sizeof open - 1);
    if (len >= sizeof body) len = sizeof body - 1;
    memcpy(body, a + sizeof open - 1, len), body[len] = 0;
    if (parse_rec(body, fl)) {
      md(f, "family record (malformed)");
    } else {
      double pc = strtod(fl[3], NULL), pk = strtod(fl[4], NULL), pw = strtod(fl[5], NULL);
      fprintf(f, "family member [%s %s, %s]: p_claim %.3g, p_contra %.3g, power at α/m %.3f, "
                 "unit = ", fl[0], fl[1], fl[2], pc, pk, pw);
      md(f, fl[6]);
      fprintf(f, ", N = %s%s", fl[7], fl[8][0] ? ": " : "");
      md(f, fl[8]);
    }
    notes = b + sizeof close - 1;
  }
}

int prop_family_row(const prop_family_outcome *out, size_t m, const char *row, prop_verdict *v) {
  int any = 0;
  prop_verdict common = PROP_HOLDS;
  for (size_t i = 0; i < m; i++) {
    if (strcmp(out[i].row, row) != 0 || !out[i].ran) continue;
    prop_verdict x = out[i].d == PROP_FAMD_SUPPORTED      ? PROP_HOLDS
                     : out[i].d == PROP_FAMD_CONTRADICTED ? PROP_FAILS
                     : out[i].d == PROP_FAMD_NOT_OBSERVED ? PROP_NOT_OBSERVED
                                                          : PROP_INCONCLUSIVE;
    if (!any) common = x;
    else if (x != common) common = PROP_MIXED;
    any = 1;
  }
  if (any) *v = common;
  return any;
}

/* prop.h — the property-check harness: one registry of claims, each a function that returns
 * a verdict, run once faithfully and once per mutant it must catch (props/README.md, Verdicts).
 *
 * Conventions every claim follows:
 *   - randomness only from prop_rng(ctx, i): PCG32 substream i of (seed, claim id), so a
 *     claim's numbers do not depend on which other claims ran or in which order;
 *   - every stochastic assertion is a hypothesis test at false-alarm probability
 *     <= PROP_ALPHA (1e-6), made through prop_pvalue() so the p-value and α are printed;
 *   - exact invariants go through prop_check();
 *   - a claim applies ctx->mutant through the helpers below (Mutants);
 *   - measured numbers for the report go through prop_note() (one line each). */
#ifndef KVB_PROP_H
#define KVB_PROP_H

#include <stdint.h>
#include <stdio.h>

#include <gsl/gsl_rng.h>

#include "kvbound.h"

#define PROP_ALPHA 1e-6

/* The verdict vocabulary (props/README.md, Verdicts). A verdict must be able to
 * come out otherwise: HOLDS is given only when every assertion passed AND a control (z ≡ 0,
 * uniform sampling at equal memory, random signs — or, for an exact invariant, the mutants)
 * shows that the same assertion can fail. */
typedef enum {
  PROP_HOLDS = 0,          /* asserted, and a control shows the assertion could fail */
  PROP_FAILS,              /* an assertion was rejected (α ≤ 1e-6), or every cell contradicts */
  PROP_MIXED,              /* pre-registered cells disagree (the cell table is in the notes) */
  PROP_VACUOUS,            /* a trivial control passes the same assertion at the tested parameters */
  PROP_VACUOUS_PRACTICAL,  /* the guarantee demands parameters no real run uses (from its inputs) */
  PROP_NOT_OBSERVED,       /* a claimed rate or advantage not seen although the design had power
                              >= 0.9 to see the stated effect */
  PROP_INCONCLUSIVE,       /* the design could not detect the stated effect with power >= 0.9 */
  PROP_ERRATUM,            /* the text's statement is wrong whatever any run gives (an exponent, a
                              direction, prose against the paper's own table): printed with the
                              corrected statement and the evidence (prop_erratum) */
  PROP_UNCHECKED,          /* a paper claim no check covers */
  PROP_SKIPPED             /* the check's input is absent here (prop_skip): never a pass */
} prop_verdict;

const char *prop_verdict_name(prop_verdict v);

#define PROP_MAX_CELLS 256

typedef struct {
  uint64_t seed;        /* base seed (fixed in make check; KVBOUND_SEED overrides) */
  const char *id;       /* claim id */
  const char *mutant;   /* mutant being injected (Mutants below: "method:subgen:mu_norm"), or NULL */
  int mutant_applied;   /* times a helper below injected it (a mutant run that never does fails) */
  int full;             /* 1 in make check-full: more trials, larger grids */
  int failures;         /* assertions failed so far */
  int vacuous_practical;/* set by prop_vacuous_practical() */
  int not_observed;     /* set by prop_not_observed() */
  int inconclusive;     /* set by prop_inconclusive(): the design lacked power 0.9 */
  int ntests;           /* hypothesis tests made (prop_pvalue) ... */
  double alpha_sum;     /* ... and the sum of their α: this run's false-alarm bound */
  int miss_set;         /* a mutant run stated its miss probability (prop_miss) */
  double miss;          /* that probability */
  int check_failures;   /* of `failures`, those of exact assertions (prop_check) */
  int exact;            /* set by prop_exact(): no decision of this check is a test */
  int rejected;         /* of `failures`, hypothesis tests rejected (prop_pvalue) ... */
  double reject_miss;   /* ... and the smallest chance that one of them would not have been:
                           the predictive Φ(−(z_obs − z_α)/√2) at its p (src/core/flip.h) */
  int controls_run;     /* controls run through the claim's assertion (prop_control) */
  int controls_passed;  /* of those, how many passed it (then the verdict is VACUOUS) */
  int controls_na;      /* set by prop_control_na(): no trivial control applies, with the reason */
  int ptests;           /* tests that produced a p-value (prop_pvalue, prop_cell_pvalue,
                           prop_control_test): such a check must state its unit (prop_unit) */
  int units;            /* prop_unit notes made */
  int skipped;          /* set by prop_skip(): the input (the real model) is absent here */
  int erratum;          /* set by prop_erratum(): the text's statement is wrong as written */
  int ncells;           /* pre-registered cells reported with prop_cell() */
  prop_verdict cells[PROP_MAX_CELLS];
  unsigned char cell_detail[PROP_MAX_CELLS]; /* 1: a within-unit finding (prop_detail) */
  double cell_flip[PROP_MAX_CELLS]; /* the chance that the cell's outcome comes out the other
                                       way on a fresh draw (prop_cell_pvalue, src/core/flip.h);
                                       0 in an exact check; NaN when unknown */
  double cell_flip_holds[PROP_MAX_CELLS]; /* of a cell that is not HOLDS: the chance that it comes
                                       out HOLDS (its HOLDS test's flip, prop_cell_pvalues);
                                       NaN when not known apart (cell_flip stands for it) */
  int nctl;             /* controls run through prop_control, in order (at most PROP_MAX_CELLS) */
  unsigned char ctl_passed[PROP_MAX_CELLS]; /* whether control i passed the assertion */
  double ctl_flip[PROP_MAX_CELLS]; /* the chance that control i's outcome comes out the other
                                      way on a fresh seed (prop_control_flip); NaN when unknown */
  FILE *log;            /* details (stdout for faithful runs, /dev/null-like for mutants) */
  char notes[8192];     /* measured numbers for the report */
  /* Trial blocks (prop_gather): a long claim's trials split over shards. tb_n <= 1: every
   * trial runs here. tb_merge: no trial runs; prop_gather reads them from tb_dir's shards. */
  int tb_k, tb_n, tb_merge, tb_partial;
  FILE *tb_out;         /* shard run: where prop_gather writes this shard's trials */
  const char *const *tb_in; /* merge run: the shards' trial files (NULL-terminated) */
} prop_ctx;

typedef struct {
  const char *id;        /* "subgen.lemma1.mu" */
  const char *source;    /* "000 Lemma 1" */
  const char *kind;      /* invariant | distribution | bound | scaling | practicality | comparison */
  const char *statement; /* what is checked, with α */
  const char *mutants[8];/* mutants this claim must reject (verdict changed); at least one */
  void (*run)(prop_ctx *ctx);
  const char *covers[8]; /* ids of the papers' claims (paper_claims.c) this check bears on */
  /* Non-NULL: the check asks kvbound's OWN question, one the papers do not state (e.g. "the walk
   * beats random signs" beside a theorem that only bounds the error). Such a check covers no
   * paper row (covers[0] == NULL); the report gives it its own row under that question, so its
   * verdict is never folded into a paper claim's. */
  const char *question;
} prop_claim;

/* A generator on substream i of this claim. Caller frees with gsl_rng_free. */
gsl_rng *prop_rng(const prop_ctx *ctx, uint64_t i);
/* ---- Mutants ----
 * A claim's mutants (prop_claim.mutants, `kvb-props --mutant M`) have one form for every kind
 * (src/core/mutant.h; README "Mutants"):
 *   method:TYPE:NAME  mutant NAME of method type TYPE — the "mutant" parameter, applied wherever
 *                     the claim builds TYPE (prop_method, prop_subgen, prop_apply_mutant); a
 *                     walk-level name of merge_reduce or balancekv (walk_sign, walk_nofail,
 *                     keep_larger, random_signs) also reaches a claim that calls the walk
 *                     itself, through prop_walk_flags
 *   stream:TYPE:NAME  mutant NAME of stream type TYPE (prop_stream, prop_stream_mutant)
 *   probe:TYPE:NAME   mutant NAME of probe type TYPE, or of the function it runs
 *                     (prop_probe_mutant)
 *   check:NAME        a check mutant: a wrong variant of the check's own arithmetic (a bound
 *                     constant, a closed form, the adversary's model), not of any type; the
 *                     claim's file implements it behind prop_check_mutant(ctx, NAME)
 *   control:z_zero    the method under test replaced by the z ≡ 0 control (prop_method,
 *                     prop_zero_control), so a check shows it rejects a trivial estimator
 * kvb-props refuses (exit 2) a listed name that does not resolve — TYPE not registered, NAME not
 * in its table — and fails a mutant run in which no helper applied the mutant, so a mutant is
 * never credited for a run that did not contain it. */

/* Whether `mutant` resolves (the form above, the type registered and listing NAME). On failure
 * writes the reason to why. */
int prop_mutant_resolves(const char *mutant, char *why, size_t cap);
/* Sets "mutant" in p when ctx runs method:METHOD:NAME. */
void prop_apply_mutant(prop_ctx *ctx, const char *method, kvb_params *p);
/* KVB_WALK_MUT_* flags for a claim that calls the walk (or SoftmaxBalance) directly: those of
 * NAME when ctx runs method:merge_reduce:NAME or method:balancekv:NAME and NAME is walk-level
 * (kvb_walk_flags_for); else 0. */
unsigned prop_walk_flags(prop_ctx *ctx);
/* NAME when ctx runs stream:TYPE:NAME (or probe:TYPE:NAME), else NULL. For a claim that builds
 * the type's object itself (an INDEX instance, a k-center run). */
const char *prop_stream_mutant(prop_ctx *ctx, const char *type);
const char *prop_probe_mutant(prop_ctx *ctx, const char *type);
/* Whether ctx runs the check mutant check:NAME. */
int prop_check_mutant(prop_ctx *ctx, const char *name);
/* Whether ctx runs control:z_zero (for a claim that forms the z ≡ 0 answer itself). */
int prop_zero_control(prop_ctx *ctx);
/* Creates method `name` with ctx's mutant applied; under control:z_zero the method under test is
 * replaced by the z ≡ 0 control. NULL, with a failed check naming the error, when creation
 * fails. */
kvb_method *prop_method(prop_ctx *ctx, const char *name, const kvb_method_config *cfg,
                        kvb_params *p);
/* Exact assertion. Returns cond. */
int prop_check(prop_ctx *ctx, int cond, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Hypothesis test: fails when pvalue < alpha (alpha must be <= PROP_ALPHA). Returns 1 if it held. */
int prop_pvalue(prop_ctx *ctx, double pvalue, double alpha, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records a measured number for the report (and the log). */
void prop_note(prop_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A hypothesis test made inside a control beyond the one prop_control counts: a control whose
 * assertion is several tests (each can pass or fail by chance), or a control's test decided
 * inside a cell without prop_control (the z ≡ 0 arm of a comparison cell, a control that makes a
 * cell VACUOUS). Its α (PROP_ALPHA) is added to the run's false-alarm bound. Returns whether it
 * rejected (p < PROP_ALPHA). */
int prop_control_test(prop_ctx *ctx, double p);
/* A control — "z_zero", "uniform" (at equal memory), "random_signs" — run through the SAME
 * assertion as the claim. `passed` says whether the control met it; a control that passes makes
 * the verdict VACUOUS (the assertion cannot tell the method from a trivial one). The note says
 * what the control scored. Returns passed. */
int prop_control(prop_ctx *ctx, const char *control, int passed, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The flip chance of the control just reported with prop_control: the chance that a fresh seed
 * moves its outcome (passes where it failed, or fails where it passed), from the test that decided
 * it (src/core/flip.h), or 0 with a stated reason where the outcome is fixed by design. A control
 * decides VACUOUS, so its flip is part of the verdict's (prop_verdict_flip); a control with no
 * recorded flip is counted apart in the report as one without an estimate. */
void prop_control_flip(prop_ctx *ctx, double flip);
/* States why no trivial control applies (an exact invariant checked against its mutants, a
 * deterministic inequality, a computed practicality verdict). Required for a bound, scaling or
 * comparison claim that runs no prop_control, so the omission is visible. */
void prop_control_na(prop_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The guarantee demands parameters no real run uses, computed from the inputs it names
 * (changing them can change the verdict): VACUOUS-AT-PRACTICAL-PARAMETERS. */
void prop_vacuous_practical(prop_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A claimed rate or advantage not seen although the design had power >= 0.9 at the stated
 * effect (say the CI and the power): NOT-OBSERVED. A design without that power calls
 * prop_inconclusive instead. */
void prop_not_observed(prop_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The design could not detect the stated effect with power >= 0.9 (`power` is its power at that
 * effect, computed before reading the outcome): INCONCLUSIVE, never NOT-OBSERVED. */
void prop_inconclusive(prop_ctx *ctx, double power, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Power, at `effect`, of a one-sided test at PROP_ALPHA whose smallest effect detected with
 * power 0.9 is `detectable` (the normal approximation: the test's se is
 * detectable/(z_α + z_0.9)). */
double prop_power_at(double detectable, double effect);
/* A pre-registered one-sided advantage cell over independent units (streams, trials): HOLDS
 * when p < PROP_ALPHA; otherwise NOT-OBSERVED if the design had power >= 0.9 at the stated
 * `effect` (described by effect_what), else INCONCLUSIVE. The note gives the numbers (fmt),
 * the effect and the power there. Returns the verdict. */
prop_verdict prop_advantage_cell(prop_ctx *ctx, const char *cell, double p, double detectable,
                                 double effect, const char *effect_what, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* The unit of replication of a comparison or rate (DESIGN, The sampling unit): notes
 * "unit = UNIT, N = n; powered for: ...". Required of a check that makes a test with a p-value
 * (prop_lacks_unit). α, p and power are those of this unit: queries that
 * share one compressed cache, tokens of one text, the (layer, head) caches of one text are
 * aggregated to one number per unit before any test. */
void prop_unit(prop_ctx *ctx, const char *unit, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether the run made a test with a p-value (prop_pvalue, prop_cell_pvalue, prop_control_test)
 * but stated no unit (prop_unit) while not exact and not skipped: kvb-props fails such a
 * faithful run (DESIGN, The sampling unit: every comparison prints "unit = …, N = …"). */
int prop_lacks_unit(const prop_ctx *ctx);
/* The check decides nothing by a hypothesis test (exact arithmetic, exact invariants): its
 * cells add no α to the run's false-alarm bound and a mutant it catches misses with
 * probability 0. Call before the first prop_cell. */
void prop_exact(prop_ctx *ctx);
/* In a mutant run: the probability that this mutant survives the check (from the check's power
 * at the mutant's effect). kvb-props adds these over the battery with the faithful runs'
 * false-alarm bounds (props/README.md, Verdicts: the per-run budget). Exact checks need not call it. */
void prop_miss(prop_ctx *ctx, double p);
/* One pre-registered cell's outcome (HOLDS, NOT_OBSERVED, INCONCLUSIVE, VACUOUS or FAILS) with
 * its numbers. Cells are fixed in the claim before it runs; all are reported by the same rule. When cells
 * disagree the claim's verdict is MIXED; when all agree, theirs. A cell's FAILS is an empirical
 * finding, not an assertion failure (use prop_check/prop_pvalue for those). */
void prop_cell(prop_ctx *ctx, prop_verdict v, const char *cell, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The one-sided p-value (against PROP_ALPHA) of the test that decided the cell just reported
 * with prop_cell or prop_detail (prop_advantage_cell does this itself). It records the cell's
 * flip probability: the chance that its outcome comes out the other way on a fresh draw, by the
 * predictive estimator of src/core/flip.h (Φ(−|z_p − z_α|/√2) for a z test; _t for a t test
 * with df degrees of freedom; _binom for an exact binomial/sign/McNemar test of k successes in
 * n against p0). The report adds the voting cells' flips into the check's flip chance
 * (prop_check_flip); a mutant caught by moving this cell gets the smallest flip over the cells
 * it moved as its miss estimate in the run's statistical budget. A two-sided cell (HOLDS on
 * one test, FAILS on the other) passes the smaller p: the nearer threshold dominates. */
void prop_cell_pvalue(prop_ctx *ctx, double p);
void prop_cell_pvalue_t(prop_ctx *ctx, double p, double df);
void prop_cell_binom(prop_ctx *ctx, unsigned k, unsigned n, double p0);
/* A cell whose outcome is decided by n one-sided tests at PROP_ALPHA (HOLDS on one, FAILS on
 * the opposite one, a control's test that makes it VACUOUS): it changes when any of them
 * crosses its threshold, so its flip p is min(1, Σ flip(p_i)) (the union bound), each a t test
 * with df degrees of freedom (INFINITY: z tests). */
void prop_cell_pvalues(prop_ctx *ctx, double df, int n, const double *p);
/* The power gate of the cell just reported (call after its tests' flip, prop_cell_pvalue*):
 * a cell its tests did not decide is NOT-OBSERVED when the smallest difference the design
 * resolves with power 0.9, det (proportional to a t test's se, df degrees of freedom), is at
 * most `effect`, else INCONCLUSIVE; a fresh seed can move it across that gate too. For such a
 * cell (not HOLDS, FAILS or VACUOUS) adds the gate's predictive flip (kvb_flip_gate,
 * src/core/flip.h) to its flip p (the union bound: either its tests or its gate move it). */
void prop_cell_gate(prop_ctx *ctx, double det, double effect, double df);
/* The flip chance of a count test over n runs, "runs whose largest error w_i exceeds the bound",
 * exact, rejecting at >= kcrit runs (kvb_binom_crit): kvb_flip_exceed on the runs' log w against
 * log bound (their margin; src/core/flip.h), or the count's beta-binomial predictive
 * (kvb_flip_binom) where the logs are degenerate (a zero or infinite w, all equal) or n > 256. */
double prop_runs_flip(const double *w, unsigned n, double bound, unsigned kcrit);
/* The controls that decide the cell just reported (a cell that is VACUOUS when any of them meets
 * the bound, otherwise its method's; their tests counted with prop_control_test): passed[i] and
 * the flip chance of control i's test, flip[i] (0 where fixed by design). A VACUOUS cell's flip is
 * kvb_flip_controls (src/core/flip.h: the least likely of the passing controls to fail); any other
 * cell adds it to its own tests' flip (any control passing makes it VACUOUS). Call after the
 * cell's own flip (prop_cell_pvalue*, prop_cell_binom, prop_cell_flip; a VACUOUS cell needs none). */
void prop_cell_controls(prop_ctx *ctx, int n, const int *passed, const double *flip);
/* The cell's flip p computed by the check itself from src/core/flip.h (e.g. the sum over the
 * exact sign tests that decide it). */
void prop_cell_flip(prop_ctx *ctx, double flip);
/* A check's verdict flip chance from its voting cells (prop_detail findings excluded), an upper
 * bound on P[the verdict changes on a fresh seed]: when the cells agree, the verdict changes
 * only if some cell does, so <= Σ flip_i (the union bound); when they disagree (MIXED) it
 * changes only if all come to agree on one value v, so <= Σ over the values v present of
 * min_{i: cell i != v} flip_i (toward HOLDS, the cells' flip_holds where known), plus min_i flip_i
 * (a value no cell has), if smaller than Σ flip_i. flip_holds may be NULL.
 * Capped at 1. Cells with no recorded flip (NaN) are counted in *unknown and add nothing (a
 * MIXED check with one of them gets the union bound). */
double prop_check_flip(const prop_verdict *cells, const double *flip, const double *flip_holds,
                       const unsigned char *detail, int ncells, int *unknown);
/* A check's verdict flip chance from its voting cells' bound (prop_check_flip) and its n
 * controls (prop_control with prop_control_flip): a control that passes makes the verdict
 * VACUOUS whatever the cells say, so when one passed the verdict changes only if every passing
 * control fails (<= the least likely of them, kvb_flip_controls; the cells do not enter), and
 * otherwise if the cells move or any control comes to pass (<= cells + Σ control flips). Capped
 * at 1. Controls with no flip (NaN) are counted in *unknown (may be NULL) and add nothing; when
 * every passing control is unknown the result is cells_flip (what the report gave before controls
 * counted). */
double prop_verdict_flip(double cells_flip, int n, const unsigned char *passed, const double *flip,
                         int *unknown);
/* A finding within one unit (e.g. the sign test over one text's caches, valid given that text,
 * when the claim's unit is the text): reported like a cell, compared between the faithful and
 * every mutant run (a mutant that moves it is caught), but never part of the verdict — the
 * claim's cells decide that on the unit of replication. */
void prop_detail(prop_ctx *ctx, prop_verdict v, const char *cell, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The check cannot run here because an input it needs is absent (the real model before
 * scripts/fetch-model): the claim returns at once, its verdict is SKIPPED (printed as a SKIP
 * line, counted apart, never as passed), its mutants are not run, and the report's paper-claim
 * rows ignore it. The reason goes to the notes. Only for a missing input, never for a result. */
void prop_skip(prop_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The statement of the text this check covers is wrong regardless of any run — an exponent, a
 * direction, prose contradicting the paper's own table — as exact evidence (computed here, so
 * the check's mutant can remove it) shows: the verdict is ERRATUM, not FAILS, so the row is never
 * read against an implementation. `corrected` is the statement that is right; the evidence
 * (fmt) is what shows the written one wrong. The rule (props/README.md, Verdicts): a row whose written
 * statement is wrong is ERRATUM even where the run confirms the corrected statement — the
 * corrected statement's own result (an assertion of the check) is in the notes, and an
 * assertion that fails still makes the check FAILS (failures come first). */
void prop_erratum(prop_ctx *ctx, const char *corrected, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The claim's verdict from what it recorded (failures, cells, controls, flags). Precedence:
 * FAILS (a failed assertion), SKIPPED, ERRATUM, VACUOUS, VACUOUS-AT-PRACTICAL-PARAMETERS, then
 * the voting cells (MIXED when they disagree), INCONCLUSIVE, NOT-OBSERVED, HOLDS. */
prop_verdict prop_verdict_of(const prop_ctx *ctx);
/* A paper claim's verdict from the verdicts of the n checks that cover it (SKIPPED ones
 * excluded by the caller; props/README.md, Verdicts: roll-up): UNCHECKED when n = 0; FAILS if any fails;
 * else ERRATUM if any is ERRATUM (the text is wrong whatever else agrees; a FAILS is never hidden
 * behind it); else VACUOUS if any is VACUOUS; their common verdict when all agree; MIXED
 * otherwise. */
prop_verdict prop_roll_up(const prop_verdict *v, size_t n);
/* ---- Trial blocks: one claim's trials over many shards (kvb-props --shard, --merge) ----
 * A long trial loop is written as: for every trial i, `if (!prop_trial_mine(ctx, i))
 * continue;`, draw only from prop_trial_rng(ctx, r, stream, i), store trial i's numbers in row
 * i of an array, then `if (!prop_gather(ctx, name, x, N, w))` skip the decision that needs x (later trial loops
 * of the claim still run, each gathering under its own name) before deciding. Trial i's
 * numbers depend on (seed, claim, stream, i) alone, so the gathered array — and so the verdict,
 * notes and report — are the same bytes whether one process ran every trial or N shards did. */
#define PROP_TRIAL_BLOCK 256
/* Whether trial i runs in this process (its block is this shard's; never in a merge run). */
int prop_trial_mine(const prop_ctx *ctx, uint64_t i);
/* The same with blocks of `block` trials: 1 deals trials round-robin, for loops of few long
 * trials (long_context's tasks, each tens of CPU seconds). The merge reads rows by index, so
 * any block size gathers the same array. */
int prop_trial_mine_block(const prop_ctx *ctx, uint64_t i, uint64_t block);
/* Re-seeds r onto trial i's own substream of `stream` (stream < 2^16, i < 2^40). */
void prop_trial_rng(const prop_ctx *ctx, gsl_rng *r, uint64_t stream, uint64_t i);
/* x: N rows of w doubles, row i trial i's numbers. Plain run: returns 1 (decide). Shard run:
 * writes this shard's rows, marks the run partial (its verdict is discarded) and returns 0.
 * Merge run: fills every row from the shards (a failed check names a missing or duplicated
 * trial) and returns 1. */
int prop_gather(prop_ctx *ctx, const char *name, double *x, size_t N, size_t w);
/* The same for a loop dealt by prop_trial_mine_block(ctx, i, block): a shard writes exactly the
 * rows it ran. (With prop_gather's 256-trial blocks under a block-1 loop, each shard wrote the
 * other's rows as zeros and the merge, seeing every row once, took them: a 2-shard full run of
 * long_context.families, 2026-11-28, merged 576 tasks of which half were empty.) */
int prop_gather_block(prop_ctx *ctx, const char *name, double *x, size_t N, size_t w,
                      uint64_t block);

/* Trials scaled by tier. */
unsigned prop_trials(const prop_ctx *ctx, unsigned check, unsigned full);

/* Helpers shared by many claims. */
/* Generates stream `name` with "k=v" assignments (NULL-terminated), substream i; ctx's
 * stream:NAME:MUT applies unless the assignments set "mutant" themselves (a control). */
kvb_stream *prop_stream(prop_ctx *ctx, uint64_t i, const char *name, const char *const *assign);
/* SubGen (000 Alg. 1) with ctx's mutant applied when it targets "subgen"; NULL (and a failed
 * check naming the error) when creation fails. */
kvb_method *prop_subgen(prop_ctx *ctx, gsl_rng *rng, size_t d_key, size_t d_value, double scale,
                        double delta, double t, double s);
/* Sample mean, and mean with sample standard deviation (n - 1), of n >= 2 numbers. */
double prop_mean(const double *x, size_t n);
void prop_mean_sd(const double *x, size_t n, double *mu, double *sd);

/* A least-squares slope with its standard error, df (n − 2) and 95% CI, for slope claims. */
typedef struct {
  double slope, se, df, lo, hi;
} prop_slope;
prop_slope prop_fit_slope(size_t n, const double *x, const double *y);
/* One-sided: slope a below slope b (kvb_slope_less at PROP_ALPHA, power 0.9); returns p, and
 * the t statistic and the smallest detectable difference. */
double prop_slope_less(prop_slope a, prop_slope b, double *t_stat, double *detectable);

/* Binomial bound test: F failures in N trials against claimed failure probability p. Notes the
 * Clopper–Pearson interval and the power: the smallest failure rate detected with power 0.9. */
int prop_binomial_bound(prop_ctx *ctx, unsigned F, unsigned N, double p, const char *what);

/* The papers' empirical family (prop_family, Holm at PROP_FAMILY_ALPHA): family.h. */
#include "family.h"

#endif

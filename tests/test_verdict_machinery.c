/* test_verdict_machinery.c — the verdict machinery of props/ on hand-worked cases (DESIGN,
 * statistical policy): the power-gated three-way rule of a comparison cell (comparison_gate.h),
 * and what each kind of decision adds to the run's false-alarm count (prop.h): a pre-registered
 * cell 2α (two one-sided tests), a control α, a p-value its α capped at the policy's 1e-6, an
 * exact check nothing, a test inside a control its α (prop_control_test); the flips of the cells
 * and of the controls that decide VACUOUS (prop_cell_controls, prop_verdict_flip); when a check must state
 * its unit (prop_lacks_unit); the power gate of an advantage cell and the binomial bound. A
 * mutant of any of these (thresholds, the tally, α for 2α, a control's test uncounted) fails
 * here. */
#include "comparison_gate.h"
#include "prop.h"
#include "prop_shard.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void ctx_init(prop_ctx *c, FILE *log) {
  memset(c, 0, sizeof *c);
  c->log = log;
  c->id = "test";
}

int main(void) {
  FILE *log = fopen("/dev/null", "w");
  /* ---- the gate: (v, vz, power) → verdict, and the tally ---- */
  struct { int v, vz; double power; prop_verdict want; } g[] = {
      {+1, 0, 0.10, PROP_HOLDS},        /* a rejection toward the claim holds at any power */
      {+1, 1, 0.99, PROP_VACUOUS},      /* … unless z ≡ 0 rejected the same way */
      {-1, 0, 0.99, PROP_FAILS},        /* a rejection against it fails */
      {-1, 1, 0.10, PROP_FAILS},        /* whatever the control did */
      {0, 0, 0.90, PROP_NOT_OBSERVED},  /* no rejection at power exactly 0.9: NOT-OBSERVED */
      {0, 0, 0.8999999, PROP_INCONCLUSIVE}, /* just below: INCONCLUSIVE */
      {0, 1, 0.30, PROP_INCONCLUSIVE}};
  prop_gate_tally tl = {0};
  int ok = 1;
  for (size_t i = 0; i < sizeof g / sizeof *g; i++) {
    prop_verdict v = prop_gated(g[i].v, g[i].vz, g[i].power, &tl);
    if (v != g[i].want) {
      ok = 0;
      printf("    case %zu: (%d, %d, %.7g) gave %s, want %s\n", i, g[i].v, g[i].vz, g[i].power,
             prop_verdict_name(v), prop_verdict_name(g[i].want));
    }
  }
  CHECK(ok, "verdict.gate.rule", "see the cases above");
  CHECK(tl.wins == 2 && tl.zero_too == 1 && tl.inconclusive == 2 && tl.power_max == 0.8999999,
        "verdict.gate.tally", "wins %d zero_too %d inconclusive %d power_max %.7g (want 2 1 2 0.8999999)",
        tl.wins, tl.zero_too, tl.inconclusive, tl.power_max);

  /* ---- the false-alarm count ---- */
  prop_ctx c;
  ctx_init(&c, log);
  prop_cell(&c, PROP_HOLDS, "a", "x");
  prop_cell(&c, PROP_FAILS, "b", "x");
  CHECK(c.ntests == 2 && fabs(c.alpha_sum - 4 * PROP_ALPHA) < 1e-18 && c.ncells == 2,
        "verdict.alpha.cell_is_2alpha", "%d tests, alpha %.3g (want 2, 4e-06)", c.ntests, c.alpha_sum);
  ctx_init(&c, log);
  prop_exact(&c);
  prop_cell(&c, PROP_HOLDS, "a", "x");
  CHECK(c.ntests == 0 && c.alpha_sum == 0 && c.cell_flip[0] == 0, "verdict.alpha.exact_cell_free",
        "%d tests, alpha %.3g, flip %g", c.ntests, c.alpha_sum, c.cell_flip[0]);
  ctx_init(&c, log);
  prop_control(&c, "z_zero", 0, "x");
  prop_control(&c, "uniform", 1, "x");
  CHECK(c.ntests == 2 && fabs(c.alpha_sum - 2 * PROP_ALPHA) < 1e-18 && c.controls_run == 2 &&
            c.controls_passed == 1,
        "verdict.alpha.control", "%d tests, alpha %.3g, run %d passed %d", c.ntests, c.alpha_sum,
        c.controls_run, c.controls_passed);
  ctx_init(&c, log);
  int r1 = prop_pvalue(&c, 0.5, 1e-3, "x"); /* α above the policy's ceiling is capped */
  int r2 = prop_pvalue(&c, 5e-7, 1e-6, "x");
  CHECK(r1 == 1 && r2 == 0 && c.ntests == 2 && fabs(c.alpha_sum - 2e-6) < 1e-18 && c.rejected == 1,
        "verdict.alpha.pvalue_capped", "accept %d reject %d, %d tests, alpha %.3g, rejected %d", r1, r2,
        c.ntests, c.alpha_sum, c.rejected);
  /* a cell's flip chance from its p: the predictive Φ(−|z_p − z_α|/√2) of src/core/flip.h on
   * both sides of the threshold (z_1e-9 = 5.997807, z_0.2 = 0.841621, z_1e-6 = 4.753424) */
  ctx_init(&c, log);
  prop_cell(&c, PROP_HOLDS, "a", "x");
  prop_cell_pvalue(&c, 1e-9);
  double want = 0.5 * erfc((5.997807 - 4.753424) / 2);
  CHECK(fabs(c.cell_flip[0] - want) < 1e-6 && want > 0 && want < 0.5, "verdict.flip.rejected",
        "flip %g want %g", c.cell_flip[0], want);
  prop_cell(&c, PROP_INCONCLUSIVE, "b", "x");
  prop_cell_pvalue(&c, 0.2);
  want = 0.5 * erfc((4.753424 - 0.841621) / 2);
  CHECK(fabs(c.cell_flip[1] - want) < 1e-6, "verdict.flip.not_rejected", "flip %g want %g",
        c.cell_flip[1], want);
  /* the plug-in (the estimator replaced) is not what is recorded: it is about half as large */
  CHECK(c.cell_flip[0] > 1.5 * kvb_plugin_miss(1e-9, PROP_ALPHA), "verdict.flip.not_plugin",
        "flip %g, plug-in %g", c.cell_flip[0], kvb_plugin_miss(1e-9, PROP_ALPHA));
  /* t and binomial cells; a detail cell does not vote; the check's flip is the voting cells' sum */
  prop_cell(&c, PROP_HOLDS, "t", "x");
  prop_cell_pvalue_t(&c, 1e-9, 9);
  prop_detail(&c, PROP_HOLDS, "d", "x");
  prop_cell_pvalue(&c, 1e-7);
  prop_cell(&c, PROP_HOLDS, "s", "x");
  prop_cell_binom(&c, 29, 30, 0.5);
  prop_cell(&c, PROP_HOLDS, "u", "x"); /* no p: unknown */
  int unknown = -1;
  double sum = prop_check_flip(c.cells, c.cell_flip, c.cell_flip_holds, c.cell_detail,
                               c.ncells, &unknown);
  double want_sum = c.cell_flip[0] + c.cell_flip[1] + kvb_flip_t(1e-9, 9, PROP_ALPHA) +
                    kvb_flip_binom(29, 30, 28);
  CHECK(fabs(c.cell_flip[2] - kvb_flip_t(1e-9, 9, PROP_ALPHA)) < 1e-15 &&
            fabs(c.cell_flip[4] - kvb_flip_binom(29, 30, 28)) < 1e-15 && unknown == 1 &&
            fabs(sum - fmin(1, want_sum)) < 1e-12,
        "verdict.flip.check_sum", "sum %g want %g, unknown %d", sum, fmin(1, want_sum), unknown);
  /* MIXED (hand-worked): cells HOLDS 0.3, HOLDS 0.2, FAILS 0.05, INCONCLUSIVE 0.4. All HOLDS
   * needs the FAILS and INCONCLUSIVE cells to move: <= min(0.05, 0.4) = 0.05; all FAILS: <=
   * min(0.3, 0.2, 0.4) = 0.2; all INCONCLUSIVE: <= 0.05; another value: <= 0.05. Bound 0.35,
   * below the sum 0.95. With the cells agreeing (all HOLDS) the union bound, 0.95. */
  ctx_init(&c, log);
  prop_verdict mv[4] = {PROP_HOLDS, PROP_HOLDS, PROP_FAILS, PROP_INCONCLUSIVE};
  double mf[4] = {0.3, 0.2, 0.05, 0.4};
  for (int i = 0; i < 4; i++) prop_cell(&c, mv[i], "m", "x"), prop_cell_flip(&c, mf[i]);
  double mixed = prop_check_flip(c.cells, c.cell_flip, NULL, c.cell_detail, c.ncells, NULL);
  for (int i = 0; i < 4; i++) c.cells[i] = PROP_HOLDS;
  double agree = prop_check_flip(c.cells, c.cell_flip, NULL, c.cell_detail, c.ncells, NULL);
  CHECK(fabs(mixed - 0.35) < 1e-12 && fabs(agree - 0.95) < 1e-12, "verdict.flip.mixed",
        "mixed %g (want 0.35), agreeing %g (want 0.95)", mixed, agree);
  /* toward HOLDS through the HOLDS test only: an INCONCLUSIVE cell with p = 0.5 for the
   * advantage and 1e-6 against it flips with 0.5 + Φ(−4.753424/√2) (to FAILS, mostly) but comes
   * out HOLDS with Φ(−4.753424/√2) = 3.88e-4 only; beside a HOLDS cell of flip 1e-3 the MIXED
   * verdict changes with at most 3.88e-4 (all HOLDS) + 1e-3 (all INCONCLUSIVE) + 1e-3 */
  ctx_init(&c, log);
  prop_cell(&c, PROP_HOLDS, "h", "x");
  prop_cell_flip(&c, 1e-3);
  prop_cell(&c, PROP_INCONCLUSIVE, "i", "x");
  prop_cell_pvalues(&c, INFINITY, 2, (double[]){0.5, 1e-6});
  double ph = 0.5 * erfc(4.753424 / 2), dir = prop_check_flip(c.cells, c.cell_flip,
                                                              c.cell_flip_holds, c.cell_detail,
                                                              c.ncells, NULL);
  CHECK(fabs(c.cell_flip[1] - (0.5 + ph)) < 1e-6 && fabs(c.cell_flip_holds[1] - ph) < 1e-6 &&
            fabs(dir - (ph + 2e-3)) < 1e-6,
        "verdict.flip.mixed_toward_holds", "flip %g, toward HOLDS %g, bound %g (want %g)",
        c.cell_flip[1], c.cell_flip_holds[1], dir, ph + 2e-3);
  /* the power gate (hand-worked, F(2, 2) has CDF x/(1 + x)): an INCONCLUSIVE cell whose tests
   * flip with 0.01 and whose gate misses (det 2 against an effect 1: F <= ¼ passes, 1/5) flips
   * with 0.21; a NOT-OBSERVED cell (det 1 against 2: F > 4 fails it, 1/5) likewise; a HOLDS
   * cell keeps its tests' flip (the gate cannot move a decided cell); a cell with no recorded
   * test stays unknown */
  ctx_init(&c, log);
  prop_cell(&c, PROP_INCONCLUSIVE, "g1", "x"), prop_cell_flip(&c, 0.01), prop_cell_gate(&c, 2, 1, 2);
  prop_cell(&c, PROP_NOT_OBSERVED, "g2", "x"), prop_cell_flip(&c, 0.01), prop_cell_gate(&c, 1, 2, 2);
  prop_cell(&c, PROP_HOLDS, "g3", "x"), prop_cell_flip(&c, 0.01), prop_cell_gate(&c, 2, 1, 2);
  prop_cell(&c, PROP_INCONCLUSIVE, "g4", "x"), prop_cell_gate(&c, 2, 1, 2);
  CHECK(fabs(c.cell_flip[0] - 0.21) < 1e-12 && fabs(c.cell_flip[1] - 0.21) < 1e-12 &&
            fabs(c.cell_flip[2] - 0.01) < 1e-15 && isnan(c.cell_flip[3]),
        "verdict.flip.gate", "flips %g %g %g %g (want 0.21 0.21 0.01 nan)", c.cell_flip[0],
        c.cell_flip[1], c.cell_flip[2], c.cell_flip[3]);

  /* ---- controls' flips count (prop_cell_controls, prop_control_flip, prop_verdict_flip) ----
   * Hand-worked. A cell VACUOUS because control 0 (flip 0.04) passed while control 1 (flip 0.3)
   * failed: it leaves VACUOUS only if control 0 fails, 0.04 (not the sum 0.34, not 0 as before
   * the controls counted). Two passing controls (0.04, 0.01): both must fail, <= 0.01. A HOLDS
   * cell with its own flip 0.02 beside two failing controls (0.03, 0.05): 0.10. */
  ctx_init(&c, log);
  prop_cell(&c, PROP_VACUOUS, "v1", "x"), prop_cell_controls(&c, 2, (int[]){1, 0}, (double[]){0.04, 0.3});
  prop_cell(&c, PROP_VACUOUS, "v2", "x"), prop_cell_controls(&c, 2, (int[]){1, 1}, (double[]){0.04, 0.01});
  prop_cell(&c, PROP_HOLDS, "h", "x"), prop_cell_flip(&c, 0.02);
  prop_cell_controls(&c, 2, (int[]){0, 0}, (double[]){0.03, 0.05});
  CHECK(fabs(c.cell_flip[0] - 0.04) < 1e-15 && fabs(c.cell_flip[1] - 0.01) < 1e-15 &&
            fabs(c.cell_flip[2] - 0.10) < 1e-15,
        "verdict.flip.cell_controls", "flips %g %g %g (want 0.04 0.01 0.1)", c.cell_flip[0],
        c.cell_flip[1], c.cell_flip[2]);
  /* Check-level controls. Cells agreeing with bound 0.01; controls failing with flips 0.02 and
   * 0.03: any may come to pass (VACUOUS), so 0.06. One of them passing (flip 0.005) beside a
   * failing one (0.5): VACUOUS whatever the cells, leaving only if it fails: 0.005. A control
   * with no flip is counted unknown and adds nothing. */
  ctx_init(&c, log);
  prop_control(&c, "z_zero", 0, "x"), prop_control_flip(&c, 0.02);
  prop_control(&c, "uniform", 0, "x"), prop_control_flip(&c, 0.03);
  prop_control(&c, "random_signs", 0, "x"); /* no flip */
  int cu = -1;
  double vf = prop_verdict_flip(0.01, c.nctl, c.ctl_passed, c.ctl_flip, &cu);
  static prop_ctx cv;
  ctx_init(&cv, log);
  prop_control(&cv, "z_zero", 1, "x"), prop_control_flip(&cv, 0.005);
  prop_control(&cv, "uniform", 0, "x"), prop_control_flip(&cv, 0.5);
  double vv = prop_verdict_flip(0.01, cv.nctl, cv.ctl_passed, cv.ctl_flip, NULL);
  CHECK(fabs(vf - 0.06) < 1e-15 && cu == 1 && fabs(vv - 0.005) < 1e-15 && c.nctl == 3 &&
            c.ctl_passed[0] == 0 && isnan(c.ctl_flip[2]) && cv.ctl_passed[0] == 1,
        "verdict.flip.controls", "failing controls %g (want 0.06), unknown %d (want 1), passing "
        "control %g (want 0.005)", vf, cu, vv);
  /* the controls travel in the shard record (kvb-props --shard / --merge) */
  prop_run_rec rec, back;
  memset(&rec, 0, sizeof rec);
  snprintf(rec.id, sizeof rec.id, "x.y");
  rec.nctl = 3, rec.ctl_passed[1] = 1, rec.ctl_flip[0] = 0.25, rec.ctl_flip[1] = 1e-7,
  rec.ctl_flip[2] = NAN;
  FILE *tf = tmpfile();
  int rt = tf && prop_rec_write(tf, &rec) == 0 && (rewind(tf), prop_rec_read(tf, &back) == 1) &&
           back.nctl == 3 && back.ctl_passed[0] == 0 && back.ctl_passed[1] == 1 &&
           back.ctl_flip[0] == 0.25 && back.ctl_flip[1] == 1e-7 && isnan(back.ctl_flip[2]);
  if (tf) fclose(tf);
  CHECK(rt, "verdict.flip.controls_shard", "the controls did not survive a shard record");

  /* ---- tests inside controls count (prop_control_test) ----
   * Hand-worked: a bound cell of the form of balancekv.thm31.error when a control meets the
   * bound — the method's binomial test (1 test, α), the z ≡ 0 and random-halving controls'
   * binomial tests decided inside the cell without prop_control (2 tests, 2α), the VACUOUS cell
   * (2α, counted as one decision): 4 counted decisions, 5e-6. Before the controls' tests were
   * counted: 2 decisions, 3e-6. */
  ctx_init(&c, log);
  prop_pvalue(&c, 0.3, PROP_ALPHA, "method");
  int z_rej = prop_control_test(&c, 0.8), r_rej = prop_control_test(&c, 1e-9);
  prop_cell(&c, PROP_VACUOUS, "t = 64", "x");
  CHECK(z_rej == 0 && r_rej == 1 && c.ntests == 4 && fabs(c.alpha_sum - 5e-6) < 1e-18 &&
            c.ptests == 3 && c.failures == 0 && c.controls_run == 0,
        "verdict.alpha.control_tests", "rejected %d %d, %d tests, alpha %.3g, p-tests %d, failures %d "
        "(want 0 1, 4, 5e-06, 3, 0)", z_rej, r_rej, c.ntests, c.alpha_sum, c.ptests, c.failures);
  /* a control whose assertion is two tests (balancekv.mr.levels' arms): prop_control counts
   * one, prop_control_test the other — 2 tests, 2e-6, one control run */
  ctx_init(&c, log);
  prop_control(&c, "z_zero", !prop_control_test(&c, 0.5), "x");
  CHECK(c.ntests == 2 && fabs(c.alpha_sum - 2e-6) < 1e-18 && c.controls_run == 1 &&
            c.controls_passed == 1,
        "verdict.alpha.control_two_tests", "%d tests, alpha %.3g, run %d passed %d", c.ntests,
        c.alpha_sum, c.controls_run, c.controls_passed);

  /* ---- the unit: a check that made a test with a p-value must state it ---- */
  ctx_init(&c, log);
  prop_cell(&c, PROP_HOLDS, "a", "x"); /* a cell alone (no p-value): no unit required */
  int none = prop_lacks_unit(&c);
  prop_pvalue(&c, 0.5, PROP_ALPHA, "x");
  int lacks = prop_lacks_unit(&c);
  prop_unit(&c, "stream", 24, "x");
  int stated = prop_lacks_unit(&c);
  prop_ctx e;
  ctx_init(&e, log);
  prop_exact(&e);
  prop_cell(&e, PROP_HOLDS, "a", "x");
  prop_cell_pvalue(&e, 0.5); /* ignored in an exact check */
  prop_ctx k;
  ctx_init(&k, log);
  prop_cell(&k, PROP_HOLDS, "a", "x");
  prop_cell_pvalue(&k, 1e-9);
  prop_ctx sk;
  ctx_init(&sk, log);
  prop_control_test(&sk, 0.5);
  prop_skip(&sk, "no model");
  CHECK(!none && lacks && !stated && !prop_lacks_unit(&e) && prop_lacks_unit(&k) &&
            !prop_lacks_unit(&sk) && c.units == 1 && strstr(c.notes, "unit = stream, N = 24"),
        "verdict.unit.required", "cell only %d, p-value %d, stated %d, exact %d, cell p %d, "
        "skipped %d (want 0 1 0 0 1 0)", none, lacks, stated, prop_lacks_unit(&e),
        prop_lacks_unit(&k), prop_lacks_unit(&sk));

  /* ---- the power gate of an advantage cell (prop_advantage_cell) ----
   * With the detectable effect d (power 0.9 at d by construction), effect = d has power 0.9
   * exactly → NOT-OBSERVED when p ≥ α; effect = d·(1 − 1e-3) just below → INCONCLUSIVE; p < α →
   * HOLDS at any power; effect 0 has power α. */
  ctx_init(&c, log);
  prop_verdict a1 = prop_advantage_cell(&c, "a", 0.2, 2.0, 2.0, "x", "x");
  prop_verdict a2 = prop_advantage_cell(&c, "b", 0.2, 2.0, 2.0 * (1 - 1e-3), "x", "x");
  prop_verdict a3 = prop_advantage_cell(&c, "c", 5e-7, 2.0, 0.1, "x", "x");
  CHECK(a1 == PROP_NOT_OBSERVED && a2 == PROP_INCONCLUSIVE && a3 == PROP_HOLDS &&
            fabs(prop_power_at(2.0, 2.0) - 0.9) < 1e-12 &&
            fabs(prop_power_at(2.0, 0.0) - PROP_ALPHA) < 1e-15 && c.ntests == 3 &&
            fabs(c.alpha_sum - 6e-6) < 1e-18 && c.ptests == 3,
        "verdict.gate.advantage_power", "%s %s %s, power %.15g / %.3g, %d tests alpha %.3g (want "
        "NOT-OBSERVED INCONCLUSIVE HOLDS, 0.9 / 1e-06, 3 tests 6e-06)", prop_verdict_name(a1),
        prop_verdict_name(a2), prop_verdict_name(a3), prop_power_at(2.0, 2.0),
        prop_power_at(2.0, 0.0), c.ntests, c.alpha_sum);
  /* the binomial bound: 0 failures in 24 trials at p = 0.01 accepts (P = 1), 6 of 24 rejects
   * (P[Bin(24, 0.01) ≥ 6] = 1.15e-7 < 1e-6; its first term C(24,6)·1e-12·0.99^18 = 1.13e-7) */
  ctx_init(&c, log);
  int b0 = prop_binomial_bound(&c, 0, 24, 0.01, "x"), b6 = prop_binomial_bound(&c, 6, 24, 0.01, "x");
  CHECK(b0 == 1 && b6 == 0 && c.ntests == 2 && c.rejected == 1 && fabs(c.alpha_sum - 2e-6) < 1e-18,
        "verdict.gate.binomial_bound", "0/24 %d, 6/24 %d, %d tests, %d rejected", b0, b6, c.ntests,
        c.rejected);
  /* ---- trial blocks of one task (prop_trial_mine_block, prop_gather_block): two shards of a
   * block-1 loop each write exactly the rows they ran, and the merge reads every row back; with
   * prop_gather's 256-trial blocks under that loop, shard 0 wrote the odd rows as zeros ---- */
  {
    enum { NT = 6, W = 2 };
    char path[2][64];
    int gather_ok = 1;
    for (int k = 0; k < 2; k++) {
      snprintf(path[k], sizeof path[k], "/tmp/kvb-gather-%d-%d.txt", (int)getpid(), k);
      ctx_init(&c, log);
      c.tb_k = k, c.tb_n = 2, c.tb_out = fopen(path[k], "w");
      double x[NT * W] = {0};
      for (size_t i = 0; i < NT; i++)
        if (prop_trial_mine_block(&c, i, 1)) x[i * W] = 10.0 + (double)i, x[i * W + 1] = -(double)i;
      int r = c.tb_out ? prop_gather_block(&c, "tasks", x, NT, W, 1) : 1;
      if (c.tb_out) fclose(c.tb_out);
      gather_ok &= r == 0 && c.tb_partial == 1;
    }
    const char *in[3] = {path[0], path[1], NULL};
    ctx_init(&c, log);
    c.tb_merge = 1, c.tb_in = in;
    double y[NT * W];
    for (size_t i = 0; i < NT * W; i++) y[i] = NAN;
    int r = prop_gather_block(&c, "tasks", y, NT, W, 1);
    int rows_ok = 1;
    for (size_t i = 0; i < NT; i++)
      rows_ok &= y[i * W] == 10.0 + (double)i && y[i * W + 1] == -(double)i;
    CHECK(gather_ok && r == 1 && rows_ok && c.failures == 0, "verdict.trials.block1_round_trip",
          "shards %d, merge %d, rows %s (want every row i as (10 + i, −i))", gather_ok, r,
          rows_ok ? "right" : "wrong");
    remove(path[0]), remove(path[1]);
  }
  fclose(log);
  UNIT_EXIT();
}

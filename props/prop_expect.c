/* prop_expect.c — pre-registered verdicts (prop_expect.h). Only checks whose verdict is a theorem
 * or exact statement asserted before any run: an exact invariant (its mutants show it can fail),
 * exact arithmetic on a paper's numbers (an ERRATUM included), a theorem's bound or law asserted
 * to hold — the checks of kind invariant, distribution and bound, less the real-model ones (their
 * verdict is an empirical finding). Filled from the verdicts at make check's fixed seed
 * (20261123); a VACUOUS or MIXED here is the pre-registered cells' and controls' outcome at those
 * parameters, deterministic at that seed. A deliberate change of a check's verdict updates its
 * line here in the same commit. */
#include "prop_expect.h"

#include "claims.h"

#include <stdio.h>
#include <string.h>

const prop_expectation prop_expectations[] = {
    /* adversarial.c */
    {"adversarial.collinear.walk", PROP_VACUOUS}, /* bound */
    {"adversarial.duplicates.tau", PROP_HOLDS}, /* invariant */
    {"adversarial.ties.le", PROP_HOLDS}, /* invariant */
    {"adversarial.values.balancekv", PROP_HOLDS}, /* invariant */
    {"adversarial.values.law", PROP_HOLDS}, /* distribution */
    /* balancekv_block.c */
    {"bkvb.invariants", PROP_HOLDS}, /* invariant */
    {"usample.unbiased", PROP_HOLDS}, /* distribution */
    {"usample.uniform", PROP_HOLDS}, /* distribution */
    /* balancekv_error.c */
    {"balancekv.mr.thm34.error", PROP_VACUOUS}, /* bound */
    {"balancekv.thm31.error", PROP_VACUOUS}, /* bound */
    /* balancekv_invariants.c */
    {"balancekv.alg1.buckets", PROP_HOLDS}, /* invariant */
    {"balancekv.mr.invariants", PROP_HOLDS}, /* invariant */
    /* balancekv_mr_proof.c */
    {"balancekv.mr.levels", PROP_VACUOUS}, /* bound */
    {"balancekv.mr.tail", PROP_HOLDS}, /* invariant */
    {"balancekv.sb.eq9", PROP_VACUOUS}, /* bound */
    /* balancekv_proof_steps.c */
    {"balancekv.thm31.eq7", PROP_HOLDS}, /* invariant */
    {"balancekv.thm33.phi", PROP_HOLDS}, /* invariant */
    /* balancekv_sb.c */
    {"balancekv.sb.halving", PROP_HOLDS}, /* invariant */
    {"balancekv.sb.thm33", PROP_VACUOUS}, /* bound */
    /* balancekv_scaling.c */
    {"balancekv.scaling.eqnorm", PROP_VACUOUS}, /* bound */
    /* balancekv_thm31_proof.c */
    {"balancekv.thm31.proof.comb", PROP_VACUOUS}, /* bound */
    {"balancekv.thm31.proof.eq3", PROP_HOLDS}, /* bound */
    {"balancekv.thm31.proof.eq4", PROP_VACUOUS}, /* bound */
    {"balancekv.thm31.proof.eq5", PROP_ERRATUM}, /* bound */
    {"balancekv.thm31.proof.eq6", PROP_VACUOUS}, /* bound */
    {"balancekv.thm31.proof.eq8", PROP_VACUOUS}, /* bound */
    {"balancekv.thm31.proof.num", PROP_VACUOUS}, /* bound */
    /* balancekv_walk.c */
    {"balancekv.walk.a1.discrepancy", PROP_MIXED}, /* bound */
    {"balancekv.walk.fail_reported", PROP_HOLDS}, /* invariant */
    /* baselines.c */
    {"baselines.h2o.rule", PROP_HOLDS}, /* invariant */
    {"baselines.knorm.rule", PROP_HOLDS}, /* invariant */
    {"baselines.pyramidkv.rule", PROP_HOLDS}, /* invariant */
    {"baselines.sink_recent.rule", PROP_HOLDS}, /* invariant */
    {"baselines.snapkv.rule", PROP_HOLDS}, /* invariant */
    {"baselines.tova.rule", PROP_HOLDS}, /* invariant */
    /* kcenter.c */
    {"kcenter.greedy.2approx", PROP_HOLDS}, /* bound */
    {"kcenter.profile.mprime", PROP_HOLDS}, /* invariant */
    {"recent_kcenter.exact_budget", PROP_HOLDS}, /* invariant */
    /* lowerbound.c */
    {"lowerbound.c3.bounds", PROP_HOLDS}, /* invariant */
    {"lowerbound.c3.closed_form", PROP_HOLDS}, /* distribution */
    {"lowerbound.c4.noise", PROP_HOLDS}, /* distribution */
    {"lowerbound.c5.partition", PROP_HOLDS}, /* invariant */
    {"lowerbound.c6", PROP_HOLDS}, /* bound */
    {"lowerbound.decode.exact", PROP_MIXED}, /* bound */
    {"lowerbound.pi.uniform", PROP_HOLDS}, /* distribution */
    /* paper_arith.c */
    {"balancekv.mean_shift", PROP_HOLDS}, /* invariant */
    {"balancekv.sb.rounds", PROP_ERRATUM}, /* invariant */
    {"paper.tab1.cache", PROP_HOLDS}, /* invariant */
    /* stats_calibration.c */
    {"stats.calibration", PROP_HOLDS}, /* distribution */
    /* subgen_lemma1.c */
    {"subgen.lemma1.law", PROP_HOLDS}, /* distribution */
    {"subgen.lemma1.mu", PROP_HOLDS}, /* invariant */
    {"subgen.lemma1.order", PROP_HOLDS}, /* distribution */
    /* subgen_lemma2.c */
    {"subgen.alg1.rule", PROP_HOLDS}, /* invariant */
    {"subgen.lemma2.invariants", PROP_HOLDS}, /* invariant */
    {"subgen.lemma2.ties", PROP_HOLDS}, /* invariant */
    {"subgen.lemma2.uniform", PROP_HOLDS}, /* distribution */
    /* subgen_memory.c */
    {"subgen.memory.bytes", PROP_HOLDS}, /* invariant */
    /* subgen_theorem1.c */
    {"subgen.theorem1.bound", PROP_HOLDS}, /* bound */
    {"subgen.theorem1.diam", PROP_HOLDS}, /* bound */
    {NULL, PROP_HOLDS}};

int prop_expected_verdict(const char *id) {
  for (const prop_expectation *e = prop_expectations; e->id; e++)
    if (strcmp(e->id, id) == 0) return (int)e->expect;
  return -1;
}

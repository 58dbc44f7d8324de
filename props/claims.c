/* claims.c — every claim table, one line each. Adding a claim family: one new props/ file,
 * one line here. */
#include "claims.h"

extern const prop_claim props_subgen_lemma1[];
extern const prop_claim props_lowerbound[];
extern const prop_claim props_subgen_lemma2[];
extern const prop_claim props_balancekv_invariants[];
extern const prop_claim props_subgen_theorem1[];
extern const prop_claim props_subgen_memory[];
extern const prop_claim props_balancekv_block[];
extern const prop_claim props_kcenter[];
extern const prop_claim props_balancekv_walk[];
extern const prop_claim props_balancekv_sb[];
extern const prop_claim props_balancekv_error[];
extern const prop_claim props_adversarial[];
extern const prop_claim props_subgen_practicality[];
extern const prop_claim props_stats_calibration[];
extern const prop_claim props_baselines[];
extern const prop_claim props_baselines_tables[];
extern prop_claim props_real_cache[]; /* filled when the library loads (per_model.h) */
extern prop_claim props_real_model_e2e[]; /* filled when the library loads (per_model.h) */
extern const prop_claim props_paper_arith[];
extern const prop_claim props_balancekv_proof_steps[];
extern const prop_claim props_balancekv_mr_proof[];
extern const prop_claim props_subgen_amm[];
extern const prop_claim props_balancekv_thm31_proof[];
extern const prop_claim props_timing_ratios[];
extern prop_claim props_real_proxies[]; /* filled when the library loads (per_model.h) */
extern const prop_claim props_balancekv_scaling[];
extern prop_claim props_long_context[]; /* filled when the library loads (per_model.h) */

const prop_claim *const prop_claim_tables[] = {
    props_subgen_lemma1,
    props_lowerbound,
    props_subgen_lemma2,
    props_balancekv_invariants,
    props_subgen_theorem1,
    props_subgen_memory,
    props_balancekv_block,
    props_kcenter,
    props_balancekv_walk,
    props_balancekv_sb,
    props_balancekv_error,
    props_adversarial,
    props_subgen_practicality,
    props_stats_calibration,
    props_baselines,
    props_baselines_tables,
    props_real_cache,
    props_real_model_e2e,
    props_paper_arith,
    props_balancekv_proof_steps,
    props_balancekv_mr_proof,
    props_subgen_amm,
    props_balancekv_thm31_proof,
    props_timing_ratios,
    props_real_proxies,
    props_balancekv_scaling,
    props_long_context,
    NULL,
};

/* Claims whose long trial loops go through prop_gather: `kvb-props --shard` runs their faithful
 * run in every shard, each doing its own trial blocks, and `--merge` decides from all of them. */
const char *const prop_trial_block_claims[] = {
    "subgen.theorem1.bound",
    "long_context.families", /* 2×288 tasks in --full: B-TAB1 over the shards (long_context.c) */
    NULL,
};

/* registry_methods.c — every method, one line each (registry.h). Adding a method: one new
 * file in its family folder, one line here. */
#include "registry.h"

extern const kvb_method_type kvb_method_exact;
extern const kvb_method_type kvb_method_subgen;
extern const kvb_method_type kvb_method_merge_reduce;
extern const kvb_method_type kvb_method_balancekv;
extern const kvb_method_type kvb_method_balancekv_block;
extern const kvb_method_type kvb_method_balancekv_augmented;
extern const kvb_method_type kvb_method_uniform_sample;
extern const kvb_method_type kvb_method_recent_kcenter;
extern const kvb_method_type kvb_method_z_zero;
extern const kvb_method_type kvb_method_sink_recent;
extern const kvb_method_type kvb_method_h2o;
extern const kvb_method_type kvb_method_snapkv;
extern const kvb_method_type kvb_method_pyramidkv;
extern const kvb_method_type kvb_method_tova;
extern const kvb_method_type kvb_method_knorm;
extern const kvb_method_type kvb_method_kivi;
extern const kvb_method_type kvb_method_q8_0;
extern const kvb_method_type kvb_method_q4_0;

const kvb_method_type *const kvb_method_registry[] = {
    &kvb_method_exact,
    &kvb_method_subgen,
    &kvb_method_merge_reduce,
    &kvb_method_balancekv,
    &kvb_method_balancekv_block,
    &kvb_method_balancekv_augmented,
    &kvb_method_uniform_sample,
    &kvb_method_recent_kcenter,
    &kvb_method_z_zero,
    &kvb_method_sink_recent,
    &kvb_method_h2o,
    &kvb_method_snapkv,
    &kvb_method_pyramidkv,
    &kvb_method_tova,
    &kvb_method_knorm,
    &kvb_method_kivi,
    &kvb_method_q8_0,
    &kvb_method_q4_0,
    NULL,
};

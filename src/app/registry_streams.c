/* registry_streams.c — every stream generator, one line each (adversarial/ and lowerbound/
 * ones included; registry.h). */
#include "registry.h"

extern const kvb_stream_type kvb_stream_gaussian;
extern const kvb_stream_type kvb_stream_clusterable;
extern const kvb_stream_type kvb_stream_index_reduction;
extern const kvb_stream_type kvb_stream_ties_at_delta;
extern const kvb_stream_type kvb_stream_npy;
extern const kvb_stream_type kvb_stream_model;
extern const kvb_stream_type kvb_stream_adv_sphere;
extern const kvb_stream_type kvb_stream_adv_ties;
extern const kvb_stream_type kvb_stream_adv_duplicates;
extern const kvb_stream_type kvb_stream_adv_large_q;
extern const kvb_stream_type kvb_stream_adv_values;
extern const kvb_stream_type kvb_stream_adv_collinear;
extern const kvb_stream_type kvb_stream_adv_markov;

const kvb_stream_type *const kvb_stream_registry[] = {
    &kvb_stream_gaussian,
    &kvb_stream_clusterable,
    &kvb_stream_index_reduction,
    &kvb_stream_ties_at_delta,
    &kvb_stream_npy,
    &kvb_stream_model,
    &kvb_stream_adv_sphere,
    &kvb_stream_adv_ties,
    &kvb_stream_adv_duplicates,
    &kvb_stream_adv_large_q,
    &kvb_stream_adv_values,
    &kvb_stream_adv_collinear,
    &kvb_stream_adv_markov,
    NULL,
};

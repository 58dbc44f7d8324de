/* stream_registry.c — every stream generator, one line each (adversarial/ ones included). */
#include "stream_registry.h"

extern const kvb_stream_type kvb_stream_gaussian;
extern const kvb_stream_type kvb_stream_clusterable;
extern const kvb_stream_type kvb_stream_index_reduction;

const kvb_stream_type *const kvb_stream_registry[] = {
    &kvb_stream_gaussian,
    &kvb_stream_clusterable,
    &kvb_stream_index_reduction,
    NULL,
};

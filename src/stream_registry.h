/* stream_registry.h — the list of registered stream generators (stream_registry.c). */
#ifndef KVB_STREAM_REGISTRY_H
#define KVB_STREAM_REGISTRY_H
#include "stream.h"
extern const kvb_stream_type *const kvb_stream_registry[];
#endif

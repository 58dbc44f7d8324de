/* method_registry.h — the list of registered method types (method_registry.c). */
#ifndef KVB_METHOD_REGISTRY_H
#define KVB_METHOD_REGISTRY_H
#include "method.h"
extern const kvb_method_type *const kvb_method_registry[];
#endif

/* kvbound.h — the public header of libkvbound: a C11 reference library for streaming
 * attention approximation (KV-cache compression), implementing exactly and in double precision
 * the papers README.md lists (SubGen, arXiv:2402.06082; BalanceKV, arXiv:2502.07861). */
#ifndef KVBOUND_H
#define KVBOUND_H

#define KVBOUND_VERSION "0.1.0"

/* core (src/core/) */
#include "kvb_error.h"
#include "pcg32.h"
#include "params.h"
#include "attention.h"
#include "attention_batch.h"
#include "stats.h"
#include "power.h"
#include "flip.h"
#include "paired.h"
#include "ewc.h"
#include "parallel.h"
#include "npy.h"
#include "kv_store.h"
#include "fp16.h"
#include "method.h"
#include "plugin.h"
#include "stream.h"
#include "probe.h"
/* the algorithms (src/subgen/, src/balancekv/, src/baselines/) */
#include "subgen.h"
#include "subgen_bounds.h"
#include "kcenter.h"
#include "recent_kcenter.h"
#include "walk.h"
#include "softmax_balance.h"
#include "merge_reduce.h"
#include "balancekv.h"
#include "balancekv_block.h"
#include "uniform_sample.h"
#include "quant_cache.h"
/* names to types (src/app/registry.h) */
#include "registry.h"

#endif

/* real_method_error.h — one method's mean relative attention error on one real (layer, KV
 * head) cache of the model: the method reads the cache's first P keys/values in position order,
 * then answers the group's query heads (3 for SmolLM2, 4 for Gemma 3) at the next nq positions; the error of each answer is
 * measured against exact attention prepared by the caller (props/real_cache.c,
 * props/real_proxies.c share this so both run a method on a cache the same way). */
#ifndef KVB_PROPS_REAL_METHOD_ERROR_H
#define KVB_PROPS_REAL_METHOD_ERROR_H

#include "measures.h"
#include "prop.h"

typedef struct {
  size_t d;                /* head dimension (keys = values = queries) */
  double scale;            /* the model's 1/√d */
  size_t P, nq;            /* cache length; queries per head, at positions P..P+nq−1 */
  const double *K, *V;     /* [P+…][d] of the KV head */
  const double *Q[4];      /* the group's query heads, [P+nq…][d] each */
  const kvb_exact_side *xs;/* head h's query j at xs[h·xs_stride + j] */
  size_t xs_stride;        /* >= nq */
  int nh;                  /* query heads in the group (0 means 3, SmolLM2's; Gemma 3: 4) */
} rme_cache;

/* Mean of ‖z − Attn‖/‖Attn‖ over the nh·nq queries for method `name` with the "k=v" settings of
 * the NULL-terminated list `settings` (NULL entries end it), its coins from prop_rng(ctx, sub).
 * under_test: ctx's mutant (and control:z_zero) apply (prop_method); else the method as named.
 * NAN (with a failed check for a creation error) when the method fails. */
double rme_mean_error(prop_ctx *ctx, const char *name, int under_test,
                      const char *const *settings, uint64_t sub, const rme_cache *c);

#endif

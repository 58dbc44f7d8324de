/* snap_core.h — internal: the SnapKV selection shared by snapkv.c and pyramidkv.c (PyramidKV is
 * SnapKV's selection with a per-layer budget). Not part of the public interface. */
#ifndef KVB_SNAP_CORE_H
#define KVB_SNAP_CORE_H

#include "baselines.h"
#include "kv_store.h"

typedef struct {
  kvb_tcache c;      /* first member (baselines.h): the set the last query attended to */
  kvb_kv_store kv;   /* the raw stream (not counted as memory: method.h, as recent_kcenter) */
  size_t budget, window, kernel;
  int maxpool;
  size_t layers, layer; /* PyramidKV; layers = 0 for SnapKV */
  double beta;
  double *Qw;        /* the last `window` queries asked (ring), window × d_key */
  size_t *qpos;      /* each one's stream position: tokens 0..qpos−1 were absorbed */
  size_t nq, qhead;  /* queries held, next slot */
  int fresh;         /* selection made since the last update */
  size_t prompt;     /* parameter `prompt` (0: off): once a selection is made with at least this
                        many tokens, it is kept and later tokens are appended to it */
  int sealed;        /* that selection has been made */
  const char *who;
} kvb_snap_state;

int kvb_snap_init(kvb_method *m, size_t budget, size_t window, size_t kernel, int maxpool,
                  size_t layers, size_t layer, double beta, const char *who);
int kvb_snap_update(kvb_method *m, const double *k, const double *v);
int kvb_snap_query(kvb_method *m, const double *q, double *z);
void kvb_snap_memory(const kvb_method *m, kvb_memory *out);
void kvb_snap_free(void *state);
/* Parses the pooling parameter ("avg" | "max"). */
int kvb_snap_pooling(const char *s, int *maxpool, const char *who);

#endif

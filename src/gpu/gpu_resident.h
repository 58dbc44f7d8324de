/* gpu_resident.h — state that lives on the device between calls: a KV cache that
 * tokens are appended to and decode queries read in place, SubGen's clusters, samples and slots,
 * and block BalanceKV's sequences and query lists. Host <-> device traffic is only the new tokens
 * (and the caller's uniforms, which are inputs like the tokens), the queries, and the results
 * (outputs; kept indices and weights; SubGen's cluster counts, H ints per update). Growth,
 * appends and bookkeeping run as kernels (k_resident.cl); kvb_gpu_transfer_counts (gpu.h)
 * measures the traffic, and kvb-gpucheck's `resident` cases assert it byte for byte.
 *
 * Results are the same numbers as the host-mirrored calls of gpu_ops.h, bit for bit on the same
 * device: the same kernels run on the same values (the decode through k_decode_coop.cl, whose
 * partials equal kvb_attn_split's), so the CPU reference comparisons of kvb-gpucheck hold for
 * these paths exactly where they hold for gpu_ops.h.
 *
 * A failed device call leaves a structure unusable (KVB_ESTATE afterwards) unless the error was
 * found before any launch (arguments, non-finite inputs: then nothing changed). */
#ifndef KVB_GPU_RESIDENT_H
#define KVB_GPU_RESIDENT_H

#include <stddef.h>

#include "gpu.h"

/* ---- the KV cache ---- */
typedef struct {
  kvb_gpu *g;
  size_t Hkv, dk, dv, n, cap; /* KV heads, dims (multiples of 4), tokens per head, row capacity */
  int half;                   /* binary16 K/V (1) or float32 (0) */
  kvb_gpu_buf *K, *V;         /* Hkv×cap×dk, Hkv×cap×dv */
  kvb_gpu_buf *stK, *stV;     /* staging of appended tokens */
  size_t st_cap;
  kvb_gpu_buf *Q, *M, *L, *O, *Z; /* decode scratch, kept between calls */
  size_t q_cap, part_cap, z_cap;
  int broken;
} kvb_gpu_kvcache;

/* Errors: KVB_ENULL, KVB_EINVAL (a size 0; dk or dv not a multiple of 4 or > KVB_GPU_DMAX). */
int kvb_gpu_kvcache_init(kvb_gpu_kvcache *c, kvb_gpu *g, size_t Hkv, size_t dk, size_t dv, int half);
void kvb_gpu_kvcache_free(kvb_gpu_kvcache *c);
/* Appends nt tokens to every head: K: Hkv×nt×dk, V: Hkv×nt×dv (row h·nt + i), float or binary16
 * bits as the cache. Uploads exactly Hkv·nt·(dk + dv)·element bytes. KVB_EDOM: non-finite. */
int kvb_gpu_kvcache_append(kvb_gpu_kvcache *c, size_t nt, const void *K, const void *V);
/* Decode attention of nq queries × H query heads (H a multiple of Hkv; query head h reads KV head
 * h / (H/Hkv)) over the cache's n tokens: Q: nq×H×dk, Z: nq×H×dv, chunk tokens per split
 * (1..KVB_GPU_CHUNK_MAX). Uploads Q, downloads Z, nothing else. */
int kvb_gpu_kvcache_attend(kvb_gpu_kvcache *c, size_t H, size_t nq, double scale, const float *Q, size_t chunk,
                           float *Z, double *kernel_s);
/* Reads the cache's rows [0, n) back (tests only): K: Hkv×n×dk, V: Hkv×n×dv, as stored. */
int kvb_gpu_kvcache_download(kvb_gpu_kvcache *c, void *K, void *V);

/* ---- SubGen (000 Alg. 1; the layout of k_subgen.cl) with its state on the device ---- */
typedef struct {
  kvb_gpu *g;
  size_t H, dk, dv, t, s, cap, n;
  double delta;
  int *mc; /* host copy of m′ per head (downloaded after each update: H ints) */
  kvb_gpu_buf *b_mc, *rep, *rep_pos, *cnt, *S, *S_pos, *mu, *Mk, *Mv, *M_pos;
  kvb_gpu_buf *stK, *stV, *stU, *Q, *Z;
  size_t st_cap, q_cap;
  kvb_gpu_buf *cK, *cV, *cU, *pd, *pi, *pv; /* one chunk of the batched update (k_subgen_batch.cl) */
  size_t c_cap;
  int broken;
  int old_kernel; /* 1: k_subgen.cl's token-by-token kernel over the whole call; 0 (default): chunks
                     of KVB_SG_CHUNK tokens through k_subgen_batch.cl */
} kvb_gpu_subgen_dev;

/* Tokens per launch of the batched update: the old representatives are found in parallel for a
 * chunk, the chunk's own new ones sequentially (k_subgen_batch.cl). */
#define KVB_SG_CHUNK 256

int kvb_gpu_subgen_dev_init(kvb_gpu_subgen_dev *st, kvb_gpu *g, size_t H, size_t dk, size_t dv, size_t t,
                            size_t s, double delta);
void kvb_gpu_subgen_dev_free(kvb_gpu_subgen_dev *st);
/* As kvb_gpu_subgen_update (gpu_ops.h), the same state bit for bit: uploads K, V, u of the nt new
 * tokens, downloads m′. */
int kvb_gpu_subgen_dev_update(kvb_gpu_subgen_dev *st, size_t nt, const float *K, const float *V, const float *u,
                              double *kernel_s);
/* As kvb_gpu_subgen_query: uploads Q, downloads Z. */
int kvb_gpu_subgen_dev_query(kvb_gpu_subgen_dev *st, size_t nq, double scale, const float *Q, float *Z,
                             double *kernel_s);
/* Reads the state (tests only) into arrays laid out as kvb_gpu_subgen's with the same cap:
 * any pointer may be NULL. */
int kvb_gpu_subgen_dev_download(kvb_gpu_subgen_dev *st, float *rep, int *rep_pos, int *cnt, float *S, int *S_pos,
                                float *mu, float *Mk, float *Mv, int *M_pos);

/* ---- block BalanceKV over a resident cache ---- */
typedef struct {
  kvb_gpu *g;
  size_t ld;                    /* the cache capacity the buffers were sized for */
  kvb_gpu_buf *cur[2], *cw[2], *S, *P, *U, *lntab, *ridx, *rw;
  size_t u_cap, r_cap;
  /* the query list of the last compression (kvb_bkvb_qlist), on the device */
  kvb_gpu_buf *idx, *ln, *ldn, *Q, *Z;
  size_t kk, l_cap, q_cap;
  int have_list, broken;
  int old_kernels; /* 1: k_bkvb.cl's walk and one-thread halving; 0 (default): k_bkvb_gram.cl */
} kvb_gpu_bkvb_dev;

void kvb_gpu_bkvb_dev_init(kvb_gpu_bkvb_dev *bk, kvb_gpu *g);
void kvb_gpu_bkvb_dev_free(kvb_gpu_bkvb_dev *bk);
/* Compresses rows [f, f + mid) of every head of cache c (float32 only) in T rounds of blocks of b,
 * as kvb_gpu_bkvb_compress does for those rows (u[r]: Hkv·⌊mid/2^r⌋ uniforms of round r; uploaded,
 * as inputs), writes idx (cache rows) and w, Hkv×⌊mid/2^T⌋, and builds on the device the weighted
 * query's list: rows [0, f), the recent rows [f + mid, n), then the kept ones with log-weights
 * (denominator: consistent = 1 the kept weights, 0 the paper's 2^T). Downloads idx and w only
 * (and, when P is not NULL, every round's walk probabilities, as kvb_gpu_bkvb_compress: tests).
 * The round runs k_bkvb_gram.cl (Gram tiles in local memory, parallel halving) unless
 * bk->old_kernels; both give the same bits. */
int kvb_gpu_bkvb_dev_compress(kvb_gpu_bkvb_dev *bk, const kvb_gpu_kvcache *c, size_t f, size_t mid, size_t b,
                              unsigned T, double gamma, double c0, double tau, double beta, int consistent,
                              const double *const *u, size_t *idx, double *w, float *P, double *kernel_s);
/* Block BalanceKV's weighted query (kvb_wquery) of nq × Hkv queries over the last compression's
 * list and cache c (unchanged since). Uploads Q, downloads Z. */
int kvb_gpu_bkvb_dev_query(kvb_gpu_bkvb_dev *bk, const kvb_gpu_kvcache *c, size_t nq, double scale, const float *Q,
                           float *Z, double *kernel_s);

/* ---- uniform sampling over a resident cache (float32 only) ---- */
typedef struct {
  kvb_gpu *g;
  size_t H, kk, dk, dv;                  /* heads, rows per head of the last compression */
  kvb_gpu_buf *pos, *lw, *Kc, *Vc;       /* the sample's rows and log-weights, gathered on the device */
  kvb_gpu_buf *Q, *M, *L, *O, *Z;        /* query scratch */
  size_t p_cap, c_cap, q_cap, part_cap, z_cap;
  int have, broken;
} kvb_gpu_usample_dev;

void kvb_gpu_usample_dev_init(kvb_gpu_usample_dev *us, kvb_gpu *g);
void kvb_gpu_usample_dev_free(kvb_gpu_usample_dev *us);
/* Uniform sampling's compressed cache (as kvb_gpu_usample_compress, gpu_ops.h), built on the
 * device from cache c's rows: pos (Hkv×kk cache rows < c->n) gathered by kvb_usample_gather, rows
 * [0, nexact) of each head with weight 1 and the rest with wmid (log-weights rounded to float as
 * kvb_gpu_usample_query rounds them). Uploads pos and the kk·Hkv log-weights; downloads nothing. */
int kvb_gpu_usample_dev_compress(kvb_gpu_usample_dev *us, const kvb_gpu_kvcache *c, size_t kk, const int *pos,
                                 size_t nexact, double wmid);
/* The estimator over the last compression (as kvb_gpu_usample_query: kvb_attn_split with the
 * log-weights, then kvb_attn_combine; the same bits): Q: nq×Hkv×dk, Z: nq×Hkv×dv. Uploads Q,
 * downloads Z. */
int kvb_gpu_usample_dev_query(kvb_gpu_usample_dev *us, size_t nq, double scale, const float *Q, size_t chunk, float *Z,
                              double *kernel_s);

#endif

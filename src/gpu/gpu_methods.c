/* gpu_methods.c — device-backed methods (gpu_methods.h). */
#include "gpu_methods.h"
#include "balancekv_block.h"
#include "gpu.h"
#include "gpu_ops.h"
#include "gpu_resident.h"
#include "kv_store.h"
#include "kvb_error.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const kvb_method_type kvb_method_exact;
extern const kvb_method_type kvb_method_balancekv_block;
extern const kvb_method_type kvb_method_uniform_sample;

/* ---- the shared device of each backend ---- */
static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static kvb_gpu *dev_of[3];

static int backend_of(const char *name, kvb_gpu_backend *be) {
  if (!strcmp(name, "opencl")) *be = KVB_GPU_OPENCL;
  else if (!strcmp(name, "cuda")) *be = KVB_GPU_CUDA;
  else return KVB_ERROR(KVB_EINVAL, "backend \"%s\" is not one of \"cpu\", \"opencl\", \"cuda\"", name);
  if (*be == KVB_GPU_CUDA && !kvb_gpu_cuda_vtable())
    return KVB_ERROR(KVB_ENOTFOUND, "backend \"cuda\": this build has no CUDA backend (built without nvcc, or with "
                                    "WITH_CUDA=0)");
  if (*be == KVB_GPU_CUDA && kvb_gpu_count(KVB_GPU_CUDA) == 0) { /* refused before anything runs */
    char why[256];
    snprintf(why, sizeof why, "%s", kvb_gpu_list(KVB_GPU_CUDA, NULL, 0) < 0 ? kvb_strerror_last() : "no CUDA device");
    return KVB_ERROR(KVB_ENOTFOUND, "backend \"cuda\": %s on this machine (the CUDA backend is built in; nothing ran)", why);
  }
  return KVB_OK;
}

/* Opens the backend's device 0 once (under dev_lock). */
static int shared_device(kvb_gpu_backend be, kvb_gpu **out) {
  pthread_mutex_lock(&dev_lock);
  int rc = KVB_OK;
  if (!dev_of[be]) rc = kvb_gpu_open(be, 0, NULL, &dev_of[be]);
  *out = dev_of[be];
  pthread_mutex_unlock(&dev_lock);
  return rc;
}

/* ---- common state: the stream in double (for memory accounting) and float (for the device) ---- */
typedef struct {
  kvb_gpu *g;
  kvb_kv_store kv;
  float *Kf, *Vf;
  size_t capf;
  /* balancekv_block */
  size_t f, wr;
  kvb_bkvb_opts o;
  int consistent, fresh;
  size_t kept;
  int *pos;
  double *w;
  /* uniform_sample: the gathered cache (exact rows first, then the sample) */
  float *Kc, *Vc;
  size_t kc;
  /* exact and balancekv_block: the stream also lives on the device (gpu_resident.h), appended
   * to lazily at the next query; rc_state 0 not set up, 1 in use, -1 unusable (d not a multiple
   * of 4: the upload-per-call path of gpu_ops.h serves instead) */
  int rc_state;
  kvb_gpu_kvcache cache;
  kvb_gpu_bkvb_dev bkd;
  kvb_gpu_usample_dev usd; /* uniform_sample's gathered rows on the device (resident path) */
  int us_resident;         /* the last sample lives in usd (1) or in Kc/Vc on the host (0) */
} dev_state;

static void dev_free(void *p) {
  dev_state *st = p;
  if (!st) return;
  if (st->rc_state == 1) {
    pthread_mutex_lock(&dev_lock);
    kvb_gpu_bkvb_dev_free(&st->bkd);
    kvb_gpu_usample_dev_free(&st->usd);
    kvb_gpu_kvcache_free(&st->cache);
    pthread_mutex_unlock(&dev_lock);
  }
  kvb_kv_free(&st->kv);
  free(st->Kf), free(st->Vf), free(st->pos), free(st->w), free(st->Kc), free(st->Vc);
  free(st);
}

static int dev_update(kvb_method *m, const double *k, const double *v) {
  dev_state *st = m->state;
  size_t n = st->kv.n, dk = m->d_key, dv = m->d_value;
  if (n == st->capf) {
    size_t cap = st->capf ? 2 * st->capf : 64;
    float *K = realloc(st->Kf, cap * dk * sizeof *K);
    if (K) st->Kf = K;
    float *V = realloc(st->Vf, cap * dv * sizeof *V);
    if (V) st->Vf = V;
    if (!K || !V) return KVB_ERROR(KVB_ENOMEM, "%s (device): out of memory", m->type->name);
    st->capf = cap;
  }
  int rc = kvb_kv_append(&st->kv, k, v, m->type->name);
  if (rc) return rc;
  for (size_t a = 0; a < dk; a++) st->Kf[n * dk + a] = (float)k[a];
  for (size_t a = 0; a < dv; a++) st->Vf[n * dv + a] = (float)v[a];
  st->fresh = 0;
  return KVB_OK;
}

/* Under dev_lock: the device cache set up (once) and holding every token streamed so far (only
 * the new ones cross to the device). Returns 1 when the resident path is usable, 0 when not
 * (dimensions), or a negative status. */
static int resident_sync(kvb_method *m, dev_state *st) {
  if (st->rc_state == 0) {
    if (m->d_key % 4 || m->d_value % 4) {
      st->rc_state = -1;
    } else {
      int rc = kvb_gpu_kvcache_init(&st->cache, st->g, 1, m->d_key, m->d_value, 0);
      if (rc) return -rc;
      kvb_gpu_bkvb_dev_init(&st->bkd, st->g);
      kvb_gpu_usample_dev_init(&st->usd, st->g);
      st->rc_state = 1;
    }
  }
  if (st->rc_state < 0) return 0;
  size_t have = st->cache.n, n = st->kv.n;
  if (n > have) {
    int rc = kvb_gpu_kvcache_append(&st->cache, n - have, st->Kf + have * m->d_key, st->Vf + have * m->d_value);
    if (rc) return -rc;
  }
  return 1;
}

static int float_query(const kvb_method *m, const double *q, float *qf) {
  for (size_t a = 0; a < m->d_key; a++) qf[a] = (float)q[a];
  return KVB_OK;
}

/* ---- exact ---- */
static int ex_init(kvb_method *m, const kvb_params *p) {
  (void)p;
  dev_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "exact (device): out of memory");
  kvb_kv_init(&st->kv, m->d_key, m->d_value);
  m->state = st;
  return KVB_OK;
}

static int ex_query(kvb_method *m, const double *q, double *z) {
  dev_state *st = m->state;
  size_t n = st->kv.n, dk = m->d_key, dv = m->d_value;
  float *qf = malloc(dk * sizeof *qf), *zf = malloc(dv * sizeof *zf);
  if (!qf || !zf) {
    free(qf), free(zf);
    return KVB_ERROR(KVB_ENOMEM, "exact (device): out of memory");
  }
  float_query(m, q, qf);
  pthread_mutex_lock(&dev_lock);
  int rc = resident_sync(m, st);
  if (rc == 1) /* the device cache: the new tokens and the query up, the output down */
    rc = kvb_gpu_kvcache_attend(&st->cache, 1, 1, m->scale, qf, KVB_GPU_CHUNK_MAX, zf, NULL);
  else if (rc == 0)
    rc = kvb_gpu_attention(st->g, 1, n, dk, dv, 1, m->scale, 0, qf, st->Kf, st->Vf, NULL, KVB_GPU_CHUNK_MAX, zf, NULL);
  else
    rc = -rc;
  pthread_mutex_unlock(&dev_lock);
  for (size_t a = 0; !rc && a < dv; a++) z[a] = zf[a];
  free(qf), free(zf);
  if (!rc) m->work.dots += n, m->work.exps += n; /* as exact.c counts */
  return rc;
}

static void ex_memory(const kvb_method *m, kvb_memory *out) {
  const dev_state *st = m->state;
  out->vectors = 2 * st->kv.n;
  out->bytes = st->kv.n * (m->d_key + m->d_value) * sizeof(double);
}

/* ---- balancekv_block (balancekv_block_method.c's method, the walk and query on the device) ---- */
static int bk_init(kvb_method *m, const kvb_params *p) {
  const kvb_param_spec *ps = kvb_method_balancekv_block.params;
  const char *den = kvb_params_get_str(p, ps, "denominator");
  if (strcmp(den, "paper") && strcmp(den, "consistent"))
    return KVB_ERROR(KVB_EINVAL, "balancekv_block: denominator=\"%s\" is not paper|consistent", den);
  dev_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "balancekv_block (device): out of memory");
  kvb_kv_init(&st->kv, m->d_key, m->d_value);
  st->consistent = !strcmp(den, "consistent");
  st->f = (size_t)kvb_params_get(p, ps, "f");
  st->wr = (size_t)kvb_params_get(p, ps, "w");
  kvb_bkvb_opts_from_params(p, &st->o); /* the CPU method's reading of its parameters */
  m->state = st;
  return KVB_OK;
}

static size_t bk_middle(const dev_state *st) {
  return st->kv.n > st->f + st->wr ? st->kv.n - st->f - st->wr : 0;
}

/* The compression of the middle [f, n − w): the uniforms drawn from m->rng exactly as
 * kvb_bkvb_compress draws them (round by round, position by position, block starts included). */
static int bk_compress(kvb_method *m) {
  dev_state *st = m->state;
  if (st->fresh) return KVB_OK;
  size_t mid = bk_middle(st), dk = m->d_key, dv = m->d_value;
  unsigned T = st->o.T;
  if (mid == 0) {
    st->kept = 0, st->fresh = 1;
    return KVB_OK;
  }
  size_t kept = kvb_bkvb_kept(mid, T);
  if (kept == 0)
    return KVB_ERROR(KVB_EINVAL, "balancekv_block: T = %u larger than log2 of the middle length %zu (n = %zu, f = %zu, w = %zu)",
                     T, mid, st->kv.n, st->f, st->wr);
  size_t utot = 0;
  for (unsigned r = 0; r < T; r++) utot += mid >> r;
  double *ub = malloc((utot ? utot : 1) * sizeof *ub), *w = malloc(kept * sizeof *w);
  size_t *idx = malloc(kept * sizeof *idx);
  int *pos = malloc(kept * sizeof *pos);
  const double *u[64];
  if (!ub || !w || !idx || !pos) {
    free(ub), free(w), free(idx), free(pos);
    return KVB_ERROR(KVB_ENOMEM, "balancekv_block (device): out of memory");
  }
  for (size_t i = 0; i < utot; i++) ub[i] = gsl_rng_uniform(m->rng);
  for (unsigned r = 0, o = 0; r < T; o += (unsigned)(mid >> r), r++) u[r] = ub + o;
  pthread_mutex_lock(&dev_lock);
  int rc = resident_sync(m, st), resident = rc == 1;
  if (resident) /* on the device cache: the uniforms up, the kept rows and weights down */
    rc = kvb_gpu_bkvb_dev_compress(&st->bkd, &st->cache, st->f, mid, st->o.b, T, st->o.gamma, st->o.c0, st->o.tau,
                                   st->o.beta, st->consistent, u, idx, w, NULL, NULL);
  else if (rc == 0)
    rc = kvb_gpu_bkvb_compress(st->g, 1, mid, dk, dv, st->Kf + st->f * dk, st->Vf + st->f * dv, st->o.b, T,
                               st->o.gamma, st->o.c0, st->o.tau, st->o.beta, u, idx, w, NULL, NULL);
  else
    rc = -rc;
  pthread_mutex_unlock(&dev_lock);
  if (rc) {
    free(ub), free(w), free(idx), free(pos);
    return rc;
  }
  uint64_t steps = 0, exps = 0;
  for (unsigned r = 0; r < T; r++) /* the CPU's counters: steps j >= 1 of each block, j exps each */
    for (size_t s0 = 0, mr = mid >> r; s0 < mr; s0 += st->o.b) {
      uint64_t len = mr - s0 < st->o.b ? mr - s0 : st->o.b;
      steps += len - 1, exps += len * (len - 1) / 2;
    }
  m->work.coins += steps, m->work.exps += exps;
  for (size_t i = 0; i < kept; i++) pos[i] = (int)(resident ? idx[i] : idx[i] + st->f); /* resident: cache rows */
  free(st->pos), free(st->w), free(ub), free(idx);
  st->pos = pos, st->w = w, st->kept = kept, st->fresh = 1;
  return KVB_OK;
}

static int bk_query(kvb_method *m, const double *q, double *z) {
  int rc = bk_compress(m);
  if (rc) return rc;
  dev_state *st = m->state;
  size_t n = st->kv.n, mid = bk_middle(st), dk = m->d_key, dv = m->d_value, kk = n - mid + st->kept;
  int *idx = malloc(kk * sizeof *idx);
  float *ln = malloc(kk * sizeof *ln), *ld = malloc(kk * sizeof *ld), *qf = malloc(dk * sizeof *qf),
        *zf = malloc(dv * sizeof *zf);
  if (!idx || !ln || !ld || !qf || !zf) {
    free(idx), free(ln), free(ld), free(qf), free(zf);
    return KVB_ERROR(KVB_ENOMEM, "balancekv_block (device): out of memory");
  }
  size_t j = 0;
  float lT = (float)(st->o.T * log(2.0)); /* the paper's denominator weight 2^T */
  for (size_t i = 0; i < n; i++) /* first and recent tokens: weight 1 */
    if (i < st->f || i >= st->f + mid) idx[j] = (int)i, ln[j] = 0, ld[j] = 0, j++;
  for (size_t k = 0; k < st->kept; k++, j++) {
    idx[j] = st->pos[k], ln[j] = (float)log(st->w[k]);
    ld[j] = st->consistent ? ln[j] : lT;
  }
  float_query(m, q, qf);
  pthread_mutex_lock(&dev_lock);
  if (st->rc_state == 1 && st->kept > 0 && st->bkd.have_list) /* the list built on the device at compression */
    rc = kvb_gpu_bkvb_dev_query(&st->bkd, &st->cache, 1, m->scale, qf, zf, NULL);
  else
    rc = kvb_gpu_wquery(st->g, 1, n, dk, dv, kk, idx, ln, ld, 1, m->scale, qf, st->Kf, st->Vf, zf, NULL);
  pthread_mutex_unlock(&dev_lock);
  for (size_t a = 0; !rc && a < dv; a++) z[a] = zf[a];
  if (!rc) m->work.dots += kk, m->work.exps += kk; /* as balancekv_block_method.c counts */
  free(idx), free(ln), free(ld), free(qf), free(zf);
  return rc;
}

static void bk_memory(const kvb_method *m, kvb_memory *out) {
  const dev_state *st = m->state;
  size_t mid = bk_middle(st), cache = st->kv.n - mid + (st->fresh ? st->kept : mid);
  out->vectors = 2 * cache;
  out->bytes = cache * (m->d_key + m->d_value) * sizeof(double) + (st->fresh ? st->kept : mid) * sizeof(double);
}

/* ---- uniform_sample (uniform_sample.c's sampler, its draws from m->rng in the same order; the
 * gather and the weighted query on the device) ---- */
static int us_init(kvb_method *m, const kvb_params *p) {
  const kvb_param_spec *ps = kvb_method_uniform_sample.params;
  dev_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "uniform_sample (device): out of memory");
  kvb_kv_init(&st->kv, m->d_key, m->d_value);
  st->f = (size_t)kvb_params_get(p, ps, "f");
  st->wr = (size_t)kvb_params_get(p, ps, "w");
  st->o.T = (unsigned)kvb_params_get(p, ps, "T");
  m->state = st;
  return KVB_OK;
}

static int us_sample(kvb_method *m) {
  dev_state *st = m->state;
  if (st->fresh) return KVB_OK;
  size_t n = st->kv.n, mid = bk_middle(st), kept = kvb_bkvb_kept(mid, st->o.T), dk = m->d_key, dv = m->d_value;
  if (mid > 0 && kept == 0)
    return KVB_ERROR(KVB_EINVAL, "uniform_sample: T = %u larger than log2 of the middle length %zu", st->o.T, mid);
  size_t kk = n - mid + kept, j = 0;
  int *perm = malloc((mid ? mid : 1) * sizeof *perm), *pos = malloc(kk * sizeof *pos);
  float *Kc = malloc(kk * dk * sizeof *Kc), *Vc = malloc(kk * dv * sizeof *Vc);
  if (!perm || !pos || !Kc || !Vc) {
    free(perm), free(pos), free(Kc), free(Vc);
    return KVB_ERROR(KVB_ENOMEM, "uniform_sample (device): out of memory");
  }
  /* partial Fisher–Yates exactly as uniform_sample.c: the first `kept` entries are the sample */
  for (size_t i = 0; i < mid; i++) perm[i] = (int)(st->f + i);
  for (size_t i = 0; i < kept; i++) {
    size_t r = i + (size_t)gsl_rng_uniform_int(m->rng, (unsigned long)(mid - i));
    int t = perm[i];
    perm[i] = perm[r], perm[r] = t;
    m->work.coins++;
  }
  for (size_t i = 0; i < n; i++) /* exact rows first: the first f and the last w */
    if (i < st->f || i >= st->f + mid) pos[j++] = (int)i;
  for (size_t i = 0; i < kept; i++) pos[j++] = perm[i];
  /* on the device cache (only the new tokens cross; the sample is gathered where it is used and
   * stays there), or, where the dimensions rule the cache out, the upload-per-call path */
  double wmid = kept ? (double)mid / (double)kept : 1.0; /* m/k (Horvitz–Thompson) */
  pthread_mutex_lock(&dev_lock);
  int res = resident_sync(m, st), rc = res < 0 ? -res : KVB_OK;
  if (res == 1) rc = kvb_gpu_usample_dev_compress(&st->usd, &st->cache, kk, pos, kk - kept, wmid);
  else if (res == 0) rc = kvb_gpu_usample_compress(st->g, 1, n, dk, dv, st->Kf, st->Vf, kk, pos, Kc, Vc, NULL);
  pthread_mutex_unlock(&dev_lock);
  free(perm), free(pos);
  if (rc || res == 1) free(Kc), free(Vc), Kc = Vc = NULL;
  if (rc) return rc;
  free(st->Kc), free(st->Vc);
  st->Kc = Kc, st->Vc = Vc, st->kc = kk, st->kept = kept, st->fresh = 1, st->us_resident = res == 1;
  return KVB_OK;
}

static int us_query(kvb_method *m, const double *q, double *z) {
  int rc = us_sample(m);
  if (rc) return rc;
  dev_state *st = m->state;
  size_t mid = bk_middle(st), dk = m->d_key, dv = m->d_value;
  float *qf = malloc(dk * sizeof *qf), *zf = malloc(dv * sizeof *zf);
  if (!qf || !zf) {
    free(qf), free(zf);
    return KVB_ERROR(KVB_ENOMEM, "uniform_sample (device): out of memory");
  }
  float_query(m, q, qf);
  double wmid = st->kept ? (double)mid / (double)st->kept : 1.0; /* m/k (Horvitz–Thompson) */
  pthread_mutex_lock(&dev_lock);
  rc = st->us_resident ? kvb_gpu_usample_dev_query(&st->usd, 1, m->scale, qf, KVB_GPU_CHUNK_MAX, zf, NULL)
                       : kvb_gpu_usample_query(st->g, 1, st->kc, st->kc - st->kept, wmid, dk, dv, 1, m->scale, qf, st->Kc,
                                               st->Vc, KVB_GPU_CHUNK_MAX, zf, NULL);
  pthread_mutex_unlock(&dev_lock);
  for (size_t a = 0; !rc && a < dv; a++) z[a] = zf[a];
  if (!rc) m->work.dots += st->kc, m->work.exps += st->kc; /* as uniform_sample.c counts */
  free(qf), free(zf);
  return rc;
}

static void us_memory(const kvb_method *m, kvb_memory *out) {
  const dev_state *st = m->state;
  size_t mid = bk_middle(st), cache = st->kv.n - mid + (st->fresh ? st->kept : mid);
  out->vectors = 2 * cache;
  out->bytes = cache * (m->d_key + m->d_value) * sizeof(double);
}

/* ---- the types (filled at first use: the parameter tables are the CPU types') ---- */
static kvb_method_type dev_types[3];
static pthread_once_t types_once = PTHREAD_ONCE_INIT;
static void types_init(void) {
  kvb_method_type ex = {"exact", "exact attention on a device (k_attention.cl)", kvb_method_exact.source,
                        kvb_method_exact.params, NULL, 0, ex_init, dev_update, ex_query, ex_memory, dev_free};
  kvb_method_type bk = {"balancekv_block", "block BalanceKV on a device (k_bkvb.cl)",
                        kvb_method_balancekv_block.source, kvb_method_balancekv_block.params, NULL, 1, bk_init,
                        dev_update, bk_query, bk_memory, dev_free};
  kvb_method_type us = {"uniform_sample", "uniform sampling on a device (k_attention.cl)",
                        kvb_method_uniform_sample.source, kvb_method_uniform_sample.params, NULL, 1, us_init,
                        dev_update, us_query, us_memory, dev_free};
  bk.in_model = kvb_method_balancekv_block.in_model, us.in_model = kvb_method_uniform_sample.in_model;
  dev_types[0] = ex, dev_types[1] = bk, dev_types[2] = us;
}

static const kvb_method_type *dev_type(const char *name) {
  pthread_once(&types_once, types_init);
  for (size_t i = 0; i < 3; i++)
    if (!strcmp(dev_types[i].name, name)) return &dev_types[i];
  return NULL;
}

int kvb_gpu_method_check(const char *type, const char *backend) {
  if (!type || !backend) return KVB_ERROR(KVB_ENULL, "backend check: NULL argument");
  if (!strcmp(backend, "cpu")) return KVB_OK;
  kvb_gpu_backend be;
  int rc = backend_of(backend, &be);
  if (rc) return rc;
  if (!dev_type(type))
    return KVB_ERROR(KVB_ENOTFOUND, "method \"%s\" has no %s implementation (device methods: exact, balancekv_block, uniform_sample; "
                     "the others run with backend = \"cpu\")", type, backend);
  return KVB_OK;
}

int kvb_gpu_method_alloc(const char *type, const char *backend, const kvb_method_config *cfg,
                         const kvb_params *p, kvb_method **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "gpu method: NULL output");
  *out = NULL;
  int rc = kvb_gpu_method_check(type, backend);
  if (rc) return rc;
  kvb_gpu_backend be;
  backend_of(backend, &be);
  kvb_gpu *g;
  rc = shared_device(be, &g);
  if (rc) return rc;
  rc = kvb_method_alloc_type(dev_type(type), cfg, p, out);
  if (!rc) ((dev_state *)(*out)->state)->g = g;
  return rc;
}

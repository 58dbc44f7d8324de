/* balancekv_block_core.h — the compression core of balancekv_block.c, written once and
 * instantiated twice there: double (the reference) and float (the float32 path, for speed).
 * Not a public header: include only from balancekv_block.c with REAL (float or double) and S
 * (f32 or f64) defined; the per-type helpers (block_gram.h's, finite_S, exprow_S, krow_fast_S)
 * are named from S, and everything is undefined again at the end. See balancekv_block.h for what every line implements (003 App. B; the
 * authors' src/balanced_walk.py).
 *
 * Work decomposition (why it is deterministic). Round r of head h walks ⌈m_r/b⌉ independent
 * blocks: a block reads only its own tokens (gathered by the order cur_h of the previous round)
 * and its own uniforms u_r[h·m_r + start + j], and writes only its own signs s_h[start..start+len).
 * So one round of all heads is H·⌈m_r/b⌉ independent items, run by kvb_parallel_for on any
 * number of workers; each item computes exactly what the one-worker loop computes (same
 * operations on the same numbers in the same order: the per-worker scratch is fully rewritten by
 * every item before it is read), so indices, weights and counters are identical for any thread
 * count. The halving of a head needs all its signs of the round, and round r + 1 gathers by the
 * order the halving produced: rounds are therefore sequential (one barrier per round), and the
 * parallelism is over (head, block) within a round rather than over heads across rounds — this
 * keeps every core busy also for H = 1 (the method compresses one head) and for H not a multiple
 * of the thread count, at the cost of T pool start-ups per call (microseconds).
 *
 * Per item the phases are: gather the keys (with their sum) and the values scaled by their
 * weights into packed blocks (block_gram.h), center the keys there; the two upper-triangle Gram
 * products (block_gram.h, prefetching the next block's rows meanwhile); the kernel factors
 * F_ij = exp(τ⟨k̃_i,k̃_j⟩/√d − β)·(⟨w_i v_i, w_j v_j⟩ + c₀), i < j, computed row by row in place
 * of the key Gram; the walk. The arithmetic of every entry is fixed: F_ij is exp(ks·G_ij − β)
 * rounded, times (Gv_ij + c₀) rounded, and the walk adds F_ij·s_i (exact: s = ±1) in the order
 * i = 0..j−1, so the result depends neither on the thread count nor on the SIMD level
 * (tests/test_balancekv_block.c). */

#define BKC_CAT2(a, b) a##b
#define BKC_CAT(a, b) BKC_CAT2(a, b)
#define SFX(name) BKC_CAT(BKC_CAT(name, _), S)
#define GRAM SFX(kvb_gram_upper)
#define PACK SFX(kvb_gram_pack)
#define CENTER SFX(kvb_gram_center)
#define FINITE SFX(finite)
#define EXPROW SFX(exprow)
#define KROW_FAST SFX(krow_fast)

/* ---- elementwise loops on GCC/Clang vector types (the build's -O2 does not auto-vectorize
 * loops of unknown length). Each lane does the scalar operation: results are those of the
 * scalar loops, bit for bit. ---- */
#define VL (32 / sizeof(REAL))
typedef REAL SFX(vec) __attribute__((vector_size(32)));
/* unaligned load / store as macros (a 32-byte vector argument would change the ABI on SSE2) */
#define VLD(v, p) memcpy(&(v), (p), sizeof(v))
#define VST(p, v) memcpy((p), &(v), sizeof(v))

/* g = ks·g − β */
static void SFX(affine)(REAL *restrict g, REAL ks, REAL beta, size_t n) {
  size_t a = 0;
  for (; a + VL <= n; a += VL) {
    SFX(vec) v;
    VLD(v, g + a);
    v = ks * v - beta;
    VST(g + a, v);
  }
  for (; a < n; a++) g[a] = ks * g[a] - beta;
}
/* g = g·(gv + c₀) */
static void SFX(times_offset)(REAL *restrict g, const REAL *restrict gv, REAL c0, size_t n) {
  size_t a = 0;
  for (; a + VL <= n; a += VL) {
    SFX(vec) v, w;
    VLD(v, g + a), VLD(w, gv + a);
    v = v * (w + c0);
    VST(g + a, v);
  }
  for (; a < n; a++) g[a] = g[a] * (gv[a] + c0);
}

/* ---- per-worker scratch: allocated once per call, rewritten by every item ---- */
typedef struct {
  REAL *Pk, *Pv, *Gk, *Gv, *mean, *sg, *wr; /* packed keys d×ld and values dv×ld (block_gram.h),
                                               Grams rows×ld (Gk then F), d, b (signs), b (w) */
  const REAL **rk, **rv;                    /* the block's key and value rows */
  const void **nk, **nv;                    /* the next block's (prefetched during the Grams) */
  kvb_bkvb_stats st;
  char pad[64]; /* workers' counters on different cache lines */
} SFX(worker);

static void SFX(workers_free)(SFX(worker) *w, int nw) {
  if (!w) return;
  for (int i = 0; i < nw; i++)
    free(w[i].Pk), free(w[i].Pv), free(w[i].Gk), free(w[i].Gv), free(w[i].mean), free(w[i].sg),
        free(w[i].wr), free(w[i].rk), free(w[i].rv), free(w[i].nk), free(w[i].nv);
  free(w);
}

/* The packed blocks and Grams on cache-line boundaries: their rows are whole lines apart
 * (kvb_gram_ld), so every 64-byte vector load of the Gram kernel is then one line, not two
 * (malloc's 16-byte alignment made most of them split loads: 15.5 vs 13 µs per b = 128 Gram). */
static REAL *SFX(alloc64)(size_t count) {
  size_t bytes = (count * sizeof(REAL) + 63) / 64 * 64;
  return aligned_alloc(64, bytes ? bytes : 64);
}

static SFX(worker) *SFX(workers_alloc)(int nw, size_t n, size_t d, size_t dv, size_t b) {
  SFX(worker) *w = calloc((size_t)nw, sizeof *w);
  if (!w) return NULL;
  size_t bb = b < n ? b : n, ld = kvb_gram_ld(bb), rows = kvb_gram_rows(bb);
  for (int i = 0; i < nw; i++) {
    w[i].Pk = SFX(alloc64)(d * ld);
    w[i].Pv = SFX(alloc64)(dv * ld);
    w[i].Gk = SFX(alloc64)(rows * ld);
    w[i].Gv = SFX(alloc64)(rows * ld);
    w[i].mean = malloc(d * sizeof(REAL));
    w[i].sg = malloc(bb * sizeof(REAL));
    w[i].wr = malloc(bb * sizeof(REAL));
    w[i].rk = malloc(bb * sizeof(REAL *));
    w[i].rv = malloc(bb * sizeof(REAL *));
    w[i].nk = malloc(bb * sizeof(void *));
    w[i].nv = malloc(bb * sizeof(void *));
    if (!w[i].Pk || !w[i].Pv || !w[i].Gk || !w[i].Gv || !w[i].mean || !w[i].sg || !w[i].wr ||
        !w[i].rk || !w[i].rv || !w[i].nk || !w[i].nv) {
      SFX(workers_free)(w, nw);
      return NULL;
    }
  }
  return w;
}

/* ---- one round of every head: the items ---- */
typedef struct {
  size_t H, n, d, dv, m, nb; /* heads, tokens per head, dims, length m_r, blocks per head */
  size_t ld;              /* leading dimension of the packed blocks and Grams */
  int threads;            /* workers: a worker's next item is probably item + threads */
  int vexp;               /* the SIMD level of the vector expf in use, 0 = the library's */
  const REAL *K, *V;
  const kvb_bkvb_opts *o;
  const double *ur;       /* this round's H·m_r uniforms */
  const size_t *cur;      /* H×n: order of the current round (head h at h·n) */
  const double *cw;       /* H×n: its weights */
  int8_t *s;              /* H×n: signs written by the walk */
  int check;              /* round 0: check every key/value row is finite while gathering */
  int ident;              /* round 0: the order is the identity and every weight 1 (cur and
                             cw are not read: they are written by round 0's halving) */
  SFX(worker) *w;
} SFX(round);

/* Gathers block [start, start+len) of head h, packed (block_gram.h): the keys as they are, with
 * their sum in token order (the reference's order) into mean, and the values as w_i v_i (in
 * round 0 w = 1 and they are packed as they are). Each row is read once here. Returns 0, or 1
 * when a row is not finite (only when R->check). */
static int SFX(gather)(const SFX(round) *R, size_t h, size_t start, size_t len, SFX(worker) *W) {
  size_t d = R->d, dv = R->dv;
  const REAL *K = R->K + h * R->n * d, *V = R->V + h * R->n * dv;
  const size_t *cur = R->cur + h * R->n + start;
  const double *cw = R->cw + h * R->n + start;
  REAL *mean = W->mean;
  if (R->ident) /* round 0: token start + i, weight 1 (cur and cw are not yet written) */
    for (size_t i = 0; i < len; i++)
      W->rk[i] = K + (start + i) * d, W->rv[i] = V + (start + i) * dv, W->wr[i] = 1;
  else
    for (size_t i = 0; i < len; i++)
      W->rk[i] = K + cur[i] * d, W->rv[i] = V + cur[i] * dv, W->wr[i] = (REAL)cw[i];
  for (size_t a = 0; a < d; a++) mean[a] = 0;
  PACK(len, d, W->rk, NULL, mean, W->Pk, R->ld);
  /* Keys: a non-finite entry makes its lane's sum non-finite (Inf + x is Inf or NaN, NaN stays),
   * so a finite sum proves every key finite; a non-finite sum (also reached when finite keys
   * overflow) is resolved row by row. */
  if (R->check && !FINITE(mean, d))
    for (size_t i = 0; i < len; i++)
      if (!FINITE(W->rk[i], d)) return 1;
  PACK(len, dv, W->rv, R->ident ? NULL : W->wr, NULL, W->Pv, R->ld); /* w = 1: w·v = v */
  /* Values: checked in round 0 only (R->check), where w = 1 and the packed block holds the
   * values themselves (and zero padding). */
  if (R->check && !FINITE(W->Pv, dv * R->ld)) return 1;
  return 0;
}

/* Keys centered by the block mean (of the real tokens), in the packed block. */
static void SFX(center)(const SFX(round) *R, size_t len, SFX(worker) *W) {
  if (R->o->mutant & KVB_BKVB_MUT_NO_CENTER) return;
  REAL *mean = W->mean;
  for (size_t a = 0; a < R->d; a++) mean[a] /= (REAL)len;
  CENTER(len, R->d, W->Pk, R->ld, mean);
}

/* F_ij = exp(ks·Gk_ij − β)·(Gv_ij + c₀) for i < j (ks = τ/√d; the kernel of 003 App. B with the
 * offset c₀ of the authors' balanced_walk.py), in place of Gk (row i at i·ld: the upper triangle,
 * block_gram.h). */
static void SFX(kernel_rows)(size_t len, size_t ld, size_t d, const kvb_bkvb_opts *o, REAL *Gk,
                             const REAL *Gv, int vexp) {
  REAL ks = (REAL)(o->tau / sqrt((double)d)), beta = (REAL)o->beta, c0 = (REAL)o->c0;
  for (size_t i = 0; i + 1 < len; i++) {
    REAL *g = Gk + i * ld + i + 1;
    const REAL *gv = Gv + i * ld + i + 1;
    size_t n = len - 1 - i;
    if (KROW_FAST(g, gv, ks, beta, c0, n, vexp)) continue; /* one pass, same operations */
    SFX(affine)(g, ks, beta, n);
    EXPROW(g, n);
    SFX(times_offset)(g, gv, c0, n);
  }
}

/* The sign of step j from its sum acc = Σ_{i<j} F_ij s_i. */
static inline void SFX(step)(size_t j, REAL acc, const kvb_bkvb_opts *o, REAL *sg,
                             const double *u, int8_t *s, kvb_bkvb_stats *st) {
  double p = (o->mutant & KVB_BKVB_MUT_SIGN_FLIP) ? 0.5 + o->gamma * (double)acc
                                                  : 0.5 - o->gamma * (double)acc;
  if (o->mutant & KVB_BKVB_MUT_RANDOM_SIGNS) p = 0.5;
  if (isnan(p)) st->nan_p++;
  else if (p <= 0) st->clipped0++;
  else if (p >= 1) st->clipped1++;
  int plus = u[j] < p; /* NaN p: comparison false, −1 */
  s[j] = plus ? 1 : -1, sg[j] = plus ? 1 : -1;
}

/* The walk of one block (003 App. B; balanced_walk.py) over the factors F (F_ij at i·ld + j,
 * i < j): s_0 = +1, then
 * s_j = +1 iff u_j < ½ − γ·Σ_{i<j} F_ij s_i, each j's sum in the order i = 0..j−1.
 * A sum is one dependent chain of additions; the WL sums of j = j0 … j0+WL−1 run their common
 * part i < j0 side by side as the lanes of one vector (lane r: F_{i,j0+r}·s_i added in the order
 * i = 0, 1, …; F's row i holds them contiguously), then each finishes i = j0 … j−1 alone, as the
 * signs s_j0 … become known. */
#define WL 16
#define WN (WL * sizeof(REAL) / 16) /* 16-byte vectors (native on every x86-64) per group */
typedef REAL SFX(wvec) __attribute__((vector_size(16)));
static void SFX(walk)(size_t len, size_t ld, const kvb_bkvb_opts *o, const REAL *F, REAL *sg,
                      const double *u, int8_t *s, kvb_bkvb_stats *st) {
  s[0] = 1, sg[0] = 1; /* s_0 = +1 */
  for (size_t j0 = 0; j0 < len; j0 += WL) {
    size_t nr = len - j0 < WL ? len - j0 : WL;
    REAL a[WL] = {0};
    if (nr == WL) {
      SFX(wvec) acc[WN];
      _Pragma("GCC unroll 8") for (size_t v = 0; v < WN; v++) acc[v] = (SFX(wvec)){0};
      for (size_t i = 0; i < j0; i++) {
        const REAL *f = F + i * ld + j0;
        REAL si = sg[i];
        _Pragma("GCC unroll 8") for (size_t v = 0; v < WN; v++) {
          SFX(wvec) x;
          VLD(x, f + v * (16 / sizeof(REAL)));
          acc[v] += x * si;
        }
      }
      memcpy(a, acc, sizeof a);
    } else { /* the last, partial group: only its real columns */
      for (size_t i = 0; i < j0; i++)
        for (size_t r = 0; r < nr; r++) a[r] += F[i * ld + j0 + r] * sg[i];
    }
    for (size_t r = j0 ? 0 : 1; r < nr; r++) {
      size_t j = j0 + r;
      REAL x = a[r];
      for (size_t i = j0; i < j; i++) x += F[i * ld + j] * sg[i];
      SFX(step)(j, x, o, sg, u, s, st);
    }
  }
  st->steps += len - 1;
  st->exps += (uint64_t)len * (len - 1) / 2;
}
#undef WL
#undef WN

static int SFX(block_item)(size_t item, void *arg, int worker) {
  const SFX(round) *R = arg;
  SFX(worker) *W = &R->w[worker];
  size_t h = item / R->nb, blk = item % R->nb, b = R->o->b;
  size_t start = blk * b, len = R->m - start < b ? R->m - start : b;
  double t0 = bkvb_now();
  if (SFX(gather)(R, h, start, len, W))
    return KVB_ERROR(KVB_EDOM, "balancekv_block compress: non-finite key or value");
  double t1 = bkvb_now();
  SFX(center)(R, len, W);
  double t2 = bkvb_now();
  /* Key and value Gram products, upper triangle (the walk reads K_ij for i < j), while the rows
   * of the block this worker probably does next come from memory (items are claimed in order,
   * so with equal items that is item + threads; a wrong guess costs only the prefetches). */
  kvb_gram_pf pk = {NULL, 0, 0}, pv = {NULL, 0, 0};
  size_t nx = item + (size_t)R->threads;
  if (R->threads > 0 && nx < R->nb * R->H) {
    size_t nh = nx / R->nb, ns = (nx % R->nb) * b, nl = R->m - ns < b ? R->m - ns : b;
    const size_t *nc = R->cur + nh * R->n + ns;
    const REAL *K = R->K + nh * R->n * R->d, *V = R->V + nh * R->n * R->dv;
    for (size_t i = 0; i < nl; i++) {
      size_t t = R->ident ? ns + i : nc[i];
      W->nk[i] = K + t * R->d, W->nv[i] = V + t * R->dv;
    }
    pk = (kvb_gram_pf){(const void *const *)W->nk, nl, R->d * sizeof(REAL)};
    pv = (kvb_gram_pf){(const void *const *)W->nv, nl, R->dv * sizeof(REAL)};
  }
  GRAM(len, R->d, W->Pk, R->ld, W->Gk, R->ld, &pk);
  GRAM(len, R->dv, W->Pv, R->ld, W->Gv, R->ld, &pv);
  double t3 = bkvb_now();
  SFX(kernel_rows)(len, R->ld, R->d, R->o, W->Gk, W->Gv, R->vexp);
  double t4 = bkvb_now();
  SFX(walk)(len, R->ld, R->o, W->Gk, W->sg, R->ur + h * R->m + start, R->s + h * R->n + start,
            &W->st);
  double t5 = bkvb_now();
  W->st.t_gather += t1 - t0, W->st.t_center += t2 - t1, W->st.t_gram += t3 - t2;
  W->st.t_exp += t4 - t3, W->st.t_walk += t5 - t4;
  return KVB_OK;
}

/* ---- the halving of every head after a round: H independent items ---- */
typedef struct {
  size_t n, m;       /* tokens per head, this round's length */
  int mutant, ident; /* ident: round 0, cur and cw not yet written (the identity, weights 1) */
  const int8_t *s;   /* H×n signs of the round */
  size_t *cur;       /* H×n order, rewritten with the survivors' order */
  double *cw;        /* H×n weights, likewise */
  size_t **keep;     /* per worker: n/2 positions */
  double **mult;     /* per worker: n/2 multipliers */
  SFX(worker) *w;    /* for the time counter (t_walk) */
} SFX(halving);

static int SFX(halve_item)(size_t h, void *arg, int worker) {
  const SFX(halving) *A = arg;
  double t0 = bkvb_now();
  size_t *keep = A->keep[worker], half = A->m / 2;
  double *mult = A->mult[worker];
  size_t got = kvb_bkvb_halve(A->m, A->s + h * A->n, A->mutant, keep, mult);
  if (got != half)
    return KVB_ERROR(KVB_ESTATE, "balancekv_block: halving kept %zu of %zu", got, A->m);
  size_t *ch = A->cur + h * A->n;
  double *wh = A->cw + h * A->n;
  /* Survivors in the new order; weights multiply. In place: the kept positions are strictly
   * increasing (the ×2 group lies at or before c, the ×1 group after it; each in position
   * order), so keep[k] >= k and entry keep[k] is read before anything overwrites it. */
  if (A->ident)
    for (size_t k = 0; k < half; k++) ch[k] = keep[k], wh[k] = mult[k]; /* 1·mult */
  else
    for (size_t k = 0; k < half; k++) ch[k] = ch[keep[k]], wh[k] = wh[keep[k]] * mult[k];
  A->w[worker].st.t_walk += bkvb_now() - t0;
  return KVB_OK;
}

int SFX(kvb_bkvb_compress)(size_t H, size_t n, size_t d, size_t dv, const REAL *K, const REAL *V,
                      const kvb_bkvb_opts *o, const double *const *u, gsl_rng *rng, size_t *idx,
                      double *w, kvb_bkvb_stats *st) {
  if (!K || !V || !o || !idx || !w || (!u && !rng && o->T > 0))
    return KVB_ERROR(KVB_ENULL, "balancekv_block compress: NULL argument");
  if (H == 0 || d == 0 || dv == 0 || n == 0)
    return KVB_ERROR(KVB_EINVAL, "balancekv_block compress: H, n, d, dv must be >= 1");
  int rc = check_opts(o, n);
  if (rc) return rc;
  /* Finiteness of keys and values: checked up front when the generator is drawn from (nothing
   * may be drawn on bad input) or when no round runs; otherwise while round 0 gathers, which
   * reads every row exactly once (the error is the same, and nothing is written on it). */
  int check_early = !u || o->T == 0;
  if (check_early && (!FINITE(K, H * n * d) || !FINITE(V, H * n * dv)))
    return KVB_ERROR(KVB_EDOM, "balancekv_block compress: non-finite key or value");
  /* Uniforms: supplied arrays are checked; otherwise drawn now in the documented order. */
  double **drawn = NULL;
  if (u) {
    for (unsigned r = 0; r < o->T; r++) {
      size_t len = H * (n >> r);
      if (!u[r]) return KVB_ERROR(KVB_ENULL, "balancekv_block compress: uniforms of round %u", r);
      for (size_t i = 0; i < len; i++)
        if (!(u[r][i] >= 0 && u[r][i] < 1))
          return KVB_ERROR(KVB_EDOM, "balancekv_block compress: u[%u][%zu] = %g not in [0, 1)",
                           r, i, u[r][i]);
    }
  } else if (o->T > 0) {
    drawn = calloc(o->T, sizeof *drawn);
    if (!drawn) return KVB_ERROR(KVB_ENOMEM, "balancekv_block compress: out of memory");
    for (unsigned r = 0; r < o->T; r++) {
      size_t len = H * (n >> r);
      drawn[r] = malloc(len * sizeof(double));
      if (!drawn[r]) {
        for (unsigned q = 0; q < r; q++) free(drawn[q]);
        free(drawn);
        return KVB_ERROR(KVB_ENOMEM, "balancekv_block compress: out of memory for uniforms");
      }
      for (size_t i = 0; i < len; i++) drawn[r][i] = gsl_rng_uniform(rng);
    }
    u = (const double *const *)drawn;
  }
  int threads = o->threads > 0 ? o->threads : kvb_threads_default();
  if (threads > KVB_MAX_THREADS) threads = KVB_MAX_THREADS;
  size_t max_items = H * ((n + o->b - 1) / o->b);
  if ((size_t)threads > max_items) threads = (int)max_items;
  SFX(worker) *wk = o->T > 0 ? SFX(workers_alloc)(threads, n, d, dv, o->b) : NULL;
  /* the halving's scratch, for the workers that halve (at most one per head) */
  int hthreads = (size_t)threads < H ? threads : (int)H;
  size_t *keep[KVB_MAX_THREADS] = {NULL};
  double *mult[KVB_MAX_THREADS] = {NULL};
  int scratch_ok = 1;
  for (int i = 0; o->T > 0 && i < hthreads; i++) {
    keep[i] = malloc((n / 2 + 1) * sizeof *keep[i]);
    mult[i] = malloc((n / 2 + 1) * sizeof *mult[i]);
    scratch_ok &= keep[i] && mult[i];
  }
  size_t *cur = malloc(H * n * sizeof *cur);
  double *cw = malloc(H * n * sizeof *cw);
  int8_t *s = malloc(H * n);
  if ((o->T > 0 && (!wk || !scratch_ok)) || !cur || !cw || !s)
    rc = KVB_ERROR(KVB_ENOMEM, "balancekv_block: out of memory for n = %zu, b = %zu", n, o->b);
  /* cur and cw start as the identity with weights 1 (w_i = 1 at first); round 0 reads them as
   * such without their being written (R.ident), and its halving writes them. */
  if (!rc && o->T == 0)
    for (size_t h = 0; h < H; h++)
      for (size_t i = 0; i < n; i++) cur[h * n + i] = i, cw[h * n + i] = 1.0;
  int vexp = sizeof(REAL) == sizeof(float) ? kvb_vexpf_level() : 0; /* once per call */
  size_t m = n;
  for (unsigned r = 0; !rc && r < o->T; r++) {
    SFX(round) R = {H, n, d, dv, m, (m + o->b - 1) / o->b, kvb_gram_ld(o->b < n ? o->b : n),
                    threads, vexp, K, V, o, u[r], cur, cw, s,
                    r == 0 && !check_early, r == 0, wk};
    rc = kvb_parallel_for(H * R.nb, threads, SFX(block_item), &R);
    SFX(halving) A = {n, m, o->mutant, r == 0, s, cur, cw, keep, mult, wk};
    if (!rc) rc = kvb_parallel_for(H, hthreads, SFX(halve_item), &A);
    m /= 2;
  }
  size_t kept = n >> o->T;
  if (!rc)
    for (size_t h = 0; h < H; h++)
      for (size_t k = 0; k < kept; k++)
        idx[h * kept + k] = cur[h * n + k], w[h * kept + k] = cw[h * n + k];
  if (!rc && st)
    for (int i = 0; wk && i < threads; i++) {
      const kvb_bkvb_stats *l = &wk[i].st;
      st->steps += l->steps, st->clipped0 += l->clipped0, st->clipped1 += l->clipped1;
      st->nan_p += l->nan_p, st->exps += l->exps;
      st->t_center += l->t_center, st->t_gram += l->t_gram, st->t_exp += l->t_exp;
      st->t_walk += l->t_walk, st->t_gather += l->t_gather;
    }
  SFX(workers_free)(wk, threads);
  for (int i = 0; i < hthreads; i++) free(keep[i]), free(mult[i]);
  free(cur), free(cw), free(s);
  if (drawn) {
    for (unsigned r = 0; r < o->T; r++) free(drawn[r]);
    free(drawn);
  }
  return rc;
}

#undef SFX
#undef GRAM
#undef PACK
#undef CENTER
#undef FINITE
#undef EXPROW
#undef KROW_FAST
#undef VL
#undef VLD
#undef VST
#undef REAL
#undef S

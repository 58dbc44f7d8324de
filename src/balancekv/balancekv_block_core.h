/* balancekv_block_core.h — the compression core of balancekv_block.c, written once and
 * instantiated twice there: double (the reference) and float (the float32 path, for speed).
 * Not a public header: include only from balancekv_block.c with REAL, SYRK, EXP and SFX defined.
 * See balancekv_block.h for what every line implements (003 App. B; the authors' src/balanced_walk.py). */

/* ---- one round of one head ---- */
typedef struct {
  REAL *Kc, *Vw, *Gk, *Gv, *mean, *row; /* b×d, b×dv, b×b, b×b, d, b */
} SFX(block_scratch);

/* Walks one block of len tokens (rows of Kc/Vw already gathered). Signs into s[0..len). */
static void SFX(walk_block)(size_t len, size_t d, size_t dv, const kvb_bkvb_opts *o,
                       SFX(block_scratch) *bs, const double *u, int8_t *s, kvb_bkvb_stats *st) {
  size_t b = o->b;
  /* Key and value Gram products, lower triangle (the walk reads K_ij, i < j). */
  SYRK(CblasRowMajor, CblasLower, CblasNoTrans, (int)len, (int)d, 1.0, bs->Kc, (int)d,
              0.0, bs->Gk, (int)b);
  SYRK(CblasRowMajor, CblasLower, CblasNoTrans, (int)len, (int)dv, 1.0, bs->Vw, (int)dv,
              0.0, bs->Gv, (int)b);
  REAL ks = (REAL)(o->tau / sqrt((double)d)), beta = (REAL)o->beta, c0 = (REAL)o->c0;
  s[0] = 1; /* s_0 = +1 */
  for (size_t j = 1; j < len; j++) {
    const REAL *gk = bs->Gk + j * b, *gv = bs->Gv + j * b;
    REAL *kr = bs->row; /* row j of the kernel, i < j (each entry is used once, here) */
    for (size_t i = 0; i < j; i++) kr[i] = ks * gk[i] - beta;
    for (size_t i = 0; i < j; i++) kr[i] = EXP(kr[i]);
    REAL acc = 0;
    for (size_t i = 0; i < j; i++) /* Σ_{i<j} K_ij s_i, in order */
      acc += kr[i] * (gv[i] + c0) * (REAL)s[i];
    st->exps += j;
    double p = (o->mutant & KVB_BKVB_MUT_SIGN_FLIP) ? 0.5 + o->gamma * (double)acc
                                                    : 0.5 - o->gamma * (double)acc;
    if (o->mutant & KVB_BKVB_MUT_RANDOM_SIGNS) p = 0.5;
    st->steps++;
    if (isnan(p)) st->nan_p++;
    else if (p <= 0) st->clipped0++;
    else if (p >= 1) st->clipped1++;
    s[j] = (u[j] < p) ? 1 : -1; /* NaN p: comparison false, −1 */
  }
}

/* Gathers block [start, start+len) of the current order into the scratch. */
static void SFX(gather_block)(size_t start, size_t len, size_t d, size_t dv, const REAL *K,
                         const REAL *V, const size_t *cur, const double *cw, int mutant,
                         SFX(block_scratch) *bs) {
  for (size_t a = 0; a < d; a++) bs->mean[a] = 0;
  for (size_t i = 0; i < len; i++) {
    const REAL *k = K + cur[start + i] * d;
    memcpy(bs->Kc + i * d, k, d * sizeof *k);
    for (size_t a = 0; a < d; a++) bs->mean[a] += k[a];
    const REAL *v = V + cur[start + i] * dv;
    for (size_t a = 0; a < dv; a++) bs->Vw[i * dv + a] = (REAL)cw[start + i] * v[a]; /* w_i v_i */
  }
  if (mutant & KVB_BKVB_MUT_NO_CENTER) return;
  for (size_t a = 0; a < d; a++) bs->mean[a] /= (REAL)len; /* mean of the real tokens */
  for (size_t i = 0; i < len; i++)
    for (size_t a = 0; a < d; a++) bs->Kc[i * d + a] -= bs->mean[a];
}

typedef struct {
  SFX(block_scratch) bs;
  size_t *cur, *nxt, *keep;
  double *cw, *nw, *mult;
  int8_t *s;
} SFX(head_scratch);

static void SFX(scratch_free)(SFX(head_scratch) *hs) {
  free(hs->bs.Kc), free(hs->bs.Vw), free(hs->bs.Gk), free(hs->bs.Gv), free(hs->bs.mean);
  free(hs->bs.row);
  free(hs->cur), free(hs->nxt), free(hs->keep), free(hs->cw), free(hs->nw), free(hs->mult);
  free(hs->s);
}

static int SFX(scratch_alloc)(SFX(head_scratch) *hs, size_t n, size_t d, size_t dv, size_t b) {
  memset(hs, 0, sizeof *hs);
  size_t bb = b < n ? b : n;
  hs->bs.Kc = malloc(bb * d * sizeof(REAL));
  hs->bs.Vw = malloc(bb * dv * sizeof(REAL));
  hs->bs.Gk = malloc(bb * b * sizeof(REAL));
  hs->bs.Gv = malloc(bb * b * sizeof(REAL));
  hs->bs.mean = malloc(d * sizeof(REAL));
  hs->bs.row = malloc(bb * sizeof(REAL));
  hs->cur = malloc(n * sizeof(size_t));
  hs->nxt = malloc(n * sizeof(size_t));
  hs->keep = malloc(n * sizeof(size_t));
  hs->cw = malloc(n * sizeof(double));
  hs->nw = malloc(n * sizeof(double));
  hs->mult = malloc(n * sizeof(double));
  hs->s = malloc(n);
  if (!hs->bs.Kc || !hs->bs.Vw || !hs->bs.Gk || !hs->bs.Gv || !hs->bs.mean || !hs->bs.row || !hs->cur ||
      !hs->nxt || !hs->keep || !hs->cw || !hs->nw || !hs->mult || !hs->s) {
    SFX(scratch_free)(hs);
    return KVB_ERROR(KVB_ENOMEM, "balancekv_block: out of memory for n = %zu, b = %zu", n, b);
  }
  return KVB_OK;
}

/* All T rounds of one head; final order in hs->cur[0..kept), weights hs->cw. */
static int SFX(compress_head)(size_t h, size_t n, size_t d, size_t dv, const REAL *K,
                         const REAL *V, const kvb_bkvb_opts *o, const double *const *u,
                         SFX(head_scratch) *hs, kvb_bkvb_stats *st) {
  size_t m = n, b = o->b;
  for (size_t i = 0; i < n; i++) hs->cur[i] = i, hs->cw[i] = 1.0; /* w_i = 1 at the start */
  for (unsigned r = 0; r < o->T; r++) {
    const double *ur = u[r] + h * m; /* head h's uniforms of round r */
    for (size_t start = 0; start < m; start += b) { /* blocks; the tail block is the padded one */
      size_t len = m - start < b ? m - start : b;
      SFX(gather_block)(start, len, d, dv, K, V, hs->cur, hs->cw, o->mutant, &hs->bs);
      SFX(walk_block)(len, d, dv, o, &hs->bs, ur + start, hs->s + start, st);
    }
    size_t half = kvb_bkvb_halve(m, hs->s, o->mutant, hs->keep, hs->mult);
    if (half != m / 2)
      return KVB_ERROR(KVB_ESTATE, "balancekv_block: halving kept %zu of %zu", half, m);
    for (size_t k = 0; k < half; k++) { /* survivors in the new order; weights multiply */
      hs->nxt[k] = hs->cur[hs->keep[k]];
      hs->nw[k] = hs->cw[hs->keep[k]] * hs->mult[k];
    }
    memcpy(hs->cur, hs->nxt, half * sizeof *hs->cur);
    memcpy(hs->cw, hs->nw, half * sizeof *hs->cw);
    m = half;
  }
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
  if (!SFX(all_finite)(K, H * n * d) || !SFX(all_finite)(V, H * n * dv))
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
  SFX(head_scratch) hs;
  int arc = SFX(scratch_alloc)(&hs, n, d, dv, o->b);
  rc = arc;
  kvb_bkvb_stats local = {0};
  size_t kept = n >> o->T;
  for (size_t h = 0; !rc && h < H; h++) {
    rc = SFX(compress_head)(h, n, d, dv, K + h * n * d, V + h * n * dv, o, u, &hs, &local);
    if (!rc)
      for (size_t k = 0; k < kept; k++) idx[h * kept + k] = hs.cur[k], w[h * kept + k] = hs.cw[k];
  }
  if (!arc) SFX(scratch_free)(&hs);
  if (drawn) {
    for (unsigned r = 0; r < o->T; r++) free(drawn[r]);
    free(drawn);
  }
  if (!rc && st) {
    st->steps += local.steps, st->clipped0 += local.clipped0, st->clipped1 += local.clipped1;
    st->nan_p += local.nan_p, st->exps += local.exps;
  }
  return rc;
}

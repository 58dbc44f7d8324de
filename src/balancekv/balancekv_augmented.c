/* balancekv_augmented.c — augmented BalanceKV (003 §4.3; the authors' src/balanced_walk.py,
 * balanced_walk_needle_detection, and src/llama_forward.py, manual_forward_llama_needle_detection):
 * the detector, the masked walk, the protected-first halving, and the method
 * "balancekv_augmented". See balancekv_augmented.h for every rule and its source line. */
#include "balancekv_augmented.h"
#include "attention.h"
#include "block_gram.h"
#include "kv_store.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int kvb_bkva_flags_for(const char *name) {
  static const struct {
    const char *name;
    int flag;
  } t[] = {{"threshold_strict", KVB_BKVA_MUT_STRICT},   {"no_dilation", KVB_BKVA_MUT_NO_DILATION},
           {"dilation_24", KVB_BKVA_MUT_DILATE_24},     {"flagged_in_sums", KVB_BKVA_MUT_FLAGGED_IN_SUMS},
           {"no_protect", KVB_BKVA_MUT_NO_PROTECT},     {"mask_per_layer", KVB_BKVA_MUT_MASK_PER_LAYER}};
  for (size_t i = 0; name && i < sizeof t / sizeof t[0]; i++)
    if (!strcmp(name, t[i].name)) return t[i].flag;
  return 0;
}

/* ---- the detector (BWND, `layer==1 and t==0`) ---- */
int kvb_bkva_detect(size_t n, size_t d, const double *K, size_t b, int mutant, unsigned char *flag,
                    size_t *nflag) {
  return kvb_bkva_detect_stat(n, d, K, b, mutant, flag, nflag, NULL);
}

int kvb_bkva_detect_stat(size_t n, size_t d, const double *K, size_t b, int mutant,
                         unsigned char *flag, size_t *nflag, double *mu_min) {
  if (!K || !flag) return KVB_ERROR(KVB_ENULL, "balancekv_augmented detect: NULL argument");
  if (n == 0 || d == 0 || b == 0)
    return KVB_ERROR(KVB_EINVAL, "balancekv_augmented detect: n, d and b must be >= 1");
  for (size_t i = 0; i < n * d; i++)
    if (!isfinite(K[i])) return KVB_ERROR(KVB_EDOM, "balancekv_augmented detect: non-finite key");
  unsigned char *raw = malloc(n);
  if (!raw) return KVB_ERROR(KVB_ENOMEM, "balancekv_augmented detect: out of memory");
  double lo = INFINITY;
  for (size_t s = 0; s < n; s += b) {
    size_t len = n - s < b ? n - s : b;
    for (size_t i = 0; i < len; i++) {
      const double *ki = K + (s + i) * d;
      /* Σ over the b slots of the block (zero-padded tail slots add 1e-8 + 0), then / b */
      double acc = 0;
      for (size_t j = 0; j < b; j++) {
        double dot = 0;
        if (j < len) {
          const double *kj = K + (s + j) * d;
          for (size_t a = 0; a < d; a++) dot += ki[a] * kj[a];
        }
        acc += KVB_BKVA_OFFSET + dot;
      }
      double mu = acc / (double)b;
      lo = mu < lo ? mu : lo;
      raw[s + i] = (mutant & KVB_BKVA_MUT_STRICT) ? mu < 0 : !(mu > 0);
    }
  }
  size_t D = (mutant & KVB_BKVA_MUT_NO_DILATION) ? 0
             : (mutant & KVB_BKVA_MUT_DILATE_24) ? KVB_BKVA_DILATE - 1
                                                 : KVB_BKVA_DILATE;
  /* dilation: i flagged iff some raw flag lies in [i − D, i + D] ∩ [0, n) — a running count of
   * the raw flags in the window */
  size_t cnt = 0, nf = 0;
  for (size_t j = 0; j <= D && j < n; j++) cnt += raw[j];
  for (size_t i = 0; i < n; i++) {
    flag[i] = cnt > 0, nf += cnt > 0;
    if (i + D + 1 < n) cnt += raw[i + D + 1];
    if (i >= D) cnt -= raw[i - D];
  }
  free(raw);
  if (nflag) *nflag = nf;
  if (mu_min) *mu_min = lo;
  return KVB_OK;
}

/* ---- the protected-first halving (BWND's `else` branch) ---- */
size_t kvb_bkva_halve_protected(size_t m, const int8_t *s, size_t *keep, double *mult) {
  if (m < 2 || !s || !keep || !mult) return 0;
  for (size_t p = 0; p < m; p++)
    if (s[p] != 1 && s[p] != -1 && s[p] != 0) return 0;
  size_t h = m / 2, k = 0;
  /* key 3 (flagged, multiplier 1), 2 (+1, ×2), 0 (−1, ×0): a stable sort by decreasing key */
  static const int8_t order[3] = {0, 1, -1};
  static const double mul[3] = {1.0, 2.0, 0.0};
  for (int g = 0; g < 3; g++)
    for (size_t p = 0; p < m && k < h; p++)
      if (s[p] == order[g]) keep[k] = p, mult[k] = mul[g], k++;
  return k == h ? h : 0;
}

/* ---- compression ---- */

typedef struct {
  double *Pk, *Pv, *Gk, *Gv, *mean;
  const double **rk, **rv;
  double *wr;
} scratch_t;

/* The walk of one block: round's order cur (len tokens from `start`), weights cw, flags fl; u the
 * block's uniforms; writes s (±1, 0 for flagged). Kernel as balancekv_block's core (same Gram
 * products, block_gram.h; same centering by the real tokens' mean). */
static void walk_block(size_t len, size_t d, size_t dv, const double *K, const double *V,
                       const size_t *cur, const double *cw, const unsigned char *fl, int ident,
                       const kvb_bkvb_opts *o, int mutant, const double *u, int8_t *s,
                       scratch_t *W) {
  size_t ld = kvb_gram_ld(len);
  for (size_t i = 0; i < len; i++) {
    W->rk[i] = K + cur[i] * d, W->rv[i] = V + cur[i] * dv;
    W->wr[i] = ident ? 1.0 : cw[i];
  }
  for (size_t a = 0; a < d; a++) W->mean[a] = 0;
  kvb_gram_pack_f64(len, d, W->rk, NULL, W->mean, W->Pk, ld);
  kvb_gram_pack_f64(len, dv, W->rv, ident ? NULL : W->wr, NULL, W->Pv, ld);
  for (size_t a = 0; a < d; a++) W->mean[a] /= (double)len;
  kvb_gram_center_f64(len, d, W->Pk, ld, W->mean);
  kvb_gram_upper_f64(len, d, W->Pk, ld, W->Gk, ld, NULL);
  kvb_gram_upper_f64(len, dv, W->Pv, ld, W->Gv, ld, NULL);
  double ks = o->tau / sqrt((double)d);
  for (size_t i = 0; i + 1 < len; i++)
    for (size_t j = i + 1; j < len; j++) {
      double g = ks * W->Gk[i * ld + j] - o->beta;
      g = exp(g);
      W->Gk[i * ld + j] = g * (W->Gv[i * ld + j] + o->c0);
    }
  /* s_0 = +1; s_j = +1 iff u_j < ½ − γ·Σ_{i<j, i unflagged} F_ij s_i (BWND: kernel·signs·mask) */
  double *sg = W->wr; /* reused: the signs as doubles */
  sg[0] = 1, s[0] = 1;
  for (size_t j = 1; j < len; j++) {
    double acc = 0;
    for (size_t i = 0; i < j; i++)
      if (!fl[i] || (mutant & KVB_BKVA_MUT_FLAGGED_IN_SUMS)) acc += W->Gk[i * ld + j] * sg[i];
    double p = 0.5 - o->gamma * acc;
    int plus = u[j] < p;
    s[j] = plus ? 1 : -1, sg[j] = plus ? 1 : -1;
  }
  for (size_t j = 0; j < len; j++)
    if (fl[j]) s[j] = 0; /* BWND: signs = signs * needle_mask_bw */
}

int kvb_bkva_compress(size_t H, size_t n, size_t d, size_t dv, const double *K, const double *V,
                      const kvb_bkvb_opts *o, const unsigned char *flags, int model_any,
                      int mutant, const double *const *u, gsl_rng *rng, size_t *idx, double *w,
                      unsigned char *kflag) {
  if (!K || !V || !o || !idx || !w || (!u && !rng && o->T > 0))
    return KVB_ERROR(KVB_ENULL, "balancekv_augmented compress: NULL argument");
  if (H == 0 || d == 0 || dv == 0 || n == 0 || o->b == 0)
    return KVB_ERROR(KVB_EINVAL, "balancekv_augmented compress: H, n, d, dv, b must be >= 1");
  if (o->T >= 64 || (n >> o->T) == 0)
    return KVB_ERROR(KVB_EINVAL, "balancekv_augmented compress: T = %u larger than log2 n = %zu",
                     o->T, n);
  if (!(o->c0 >= 0) || !isfinite(o->c0) || !isfinite(o->gamma) || !isfinite(o->tau) ||
      !isfinite(o->beta))
    return KVB_ERROR(KVB_EINVAL, "balancekv_augmented compress: c0 >= 0 and finite γ, τ, β");
  for (size_t i = 0; i < H * n * d; i++)
    if (!isfinite(K[i])) return KVB_ERROR(KVB_EDOM, "balancekv_augmented compress: non-finite key");
  for (size_t i = 0; i < H * n * dv; i++)
    if (!isfinite(V[i])) return KVB_ERROR(KVB_EDOM, "balancekv_augmented compress: non-finite value");
  if (u)
    for (unsigned r = 0; r < o->T; r++) {
      if (!u[r]) return KVB_ERROR(KVB_ENULL, "balancekv_augmented compress: uniforms of round %u", r);
      for (size_t i = 0; i < H * (n >> r); i++)
        if (!(u[r][i] >= 0 && u[r][i] < 1))
          return KVB_ERROR(KVB_EDOM, "balancekv_augmented compress: u[%u][%zu] = %g not in [0, 1)",
                           r, i, u[r][i]);
    }
  size_t bb = o->b < n ? o->b : n, ld = kvb_gram_ld(bb), rows = kvb_gram_rows(bb);
  scratch_t W = {malloc(d * ld * sizeof(double)), malloc(dv * ld * sizeof(double)),
                 malloc(rows * ld * sizeof(double)), malloc(rows * ld * sizeof(double)),
                 malloc(d * sizeof(double)), malloc(bb * sizeof(double *)),
                 malloc(bb * sizeof(double *)), malloc(bb * sizeof(double))};
  size_t *cur = malloc(H * n * sizeof *cur), *keep = malloc((n / 2 + 1) * sizeof *keep);
  double *cw = malloc(H * n * sizeof *cw), *mult = malloc((n / 2 + 1) * sizeof *mult);
  double *ur = malloc(H * n * sizeof *ur);
  unsigned char *fl = malloc(H * n);
  int8_t *s = malloc(n);
  int8_t *sall = malloc(H * n);
  size_t *ti = malloc((n / 2 + 1) * sizeof *ti);
  int rc = KVB_OK;
  if (!W.Pk || !W.Pv || !W.Gk || !W.Gv || !W.mean || !W.rk || !W.rv || !W.wr || !cur || !keep ||
      !cw || !mult || !ur || !fl || !s || !sall || !ti)
    rc = KVB_ERROR(KVB_ENOMEM, "balancekv_augmented: out of memory for n = %zu", n);
  for (size_t h = 0; !rc && h < H; h++)
    for (size_t i = 0; i < n; i++)
      cur[h * n + i] = i, cw[h * n + i] = 1.0, fl[h * n + i] = flags ? flags[h * n + i] != 0 : 0;
  size_t m = n;
  for (unsigned r = 0; !rc && r < o->T; r++) {
    /* this round's uniforms: supplied, or drawn in balancekv_block's order (head by head,
     * position by position, the block starts included) */
    const double *u_r = u ? u[r] : ur;
    if (!u)
      for (size_t i = 0; i < H * m; i++) ur[i] = gsl_rng_uniform(rng);
    int any = model_any != 0; /* BWND: not torch.all(needle_mask_bw), over every head */
    for (size_t i = 0; i < H; i++)
      for (size_t p = 0; p < m; p++) any |= fl[i * n + p];
    if (mutant & KVB_BKVA_MUT_NO_PROTECT) any = 0;
    for (size_t h = 0; h < H; h++) {
      const double *Kh = K + h * n * d, *Vh = V + h * n * dv;
      for (size_t st = 0; st < m; st += o->b) {
        size_t len = m - st < o->b ? m - st : o->b;
        walk_block(len, d, dv, Kh, Vh, cur + h * n + st, cw + h * n + st, fl + h * n + st, r == 0, o,
                   mutant, u_r + h * m + st, sall + h * n + st, &W);
      }
    }
    for (size_t h = 0; !rc && h < H; h++) {
      int8_t *sh = sall + h * n;
      size_t got;
      if (any) {
        got = kvb_bkva_halve_protected(m, sh, keep, mult);
      } else {
        /* no flag anywhere (or the no_protect mutant): balancekv_block's rule; a flagged token's
         * sign 0 is then its drawn sign, not reconstructible here, so no_protect reads it +1 */
        for (size_t p = 0; p < m; p++) s[p] = sh[p] ? sh[p] : 1;
        got = kvb_bkvb_halve(m, s, 0, keep, mult);
      }
      if (got != m / 2) {
        rc = KVB_ERROR(KVB_ESTATE, "balancekv_augmented: halving kept %zu of %zu", got, m);
        break;
      }
      size_t *ch = cur + h * n;
      double *wh = cw + h * n;
      unsigned char *fh = fl + h * n;
      /* the groups interleave in position, so gather through scratch (ur is free after the walk) */
      for (size_t k = 0; k < m / 2; k++) ti[k] = ch[keep[k]];
      for (size_t k = 0; k < m / 2; k++) ch[k] = ti[k];
      for (size_t k = 0; k < m / 2; k++) ur[k] = wh[keep[k]] * mult[k];
      for (size_t k = 0; k < m / 2; k++) wh[k] = ur[k];
      for (size_t k = 0; k < m / 2; k++) s[k] = (int8_t)fh[keep[k]];
      for (size_t k = 0; k < m / 2; k++) fh[k] = (unsigned char)s[k];
    }
    m /= 2;
  }
  size_t kept = n >> o->T;
  if (!rc)
    for (size_t h = 0; h < H; h++)
      for (size_t k = 0; k < kept; k++) {
        idx[h * kept + k] = cur[h * n + k], w[h * kept + k] = cw[h * n + k];
        if (kflag) kflag[h * kept + k] = fl[h * n + k];
      }
  free(W.Pk), free(W.Pv), free(W.Gk), free(W.Gv), free(W.mean), free(W.rk), free(W.rv), free(W.wr);
  free(cur), free(keep), free(cw), free(mult), free(ur), free(fl), free(s), free(sall), free(ti);
  return rc;
}

/* ---- the method "balancekv_augmented" ---- */

typedef struct {
  size_t f, wr;          /* first f and last wr tokens kept exactly (MFND: sink 32, window 32) */
  kvb_bkvb_opts o;
  int detect;            /* 1: detect on this head's own middle (no shared mask given) */
  int mutant;            /* KVB_BKVA_MUT_* */
  kvb_kv_store kv;       /* the raw stream (not counted as memory: method.h) */
  int fresh;
  size_t prompt, sealed; /* compress once (balancekv_block's parameter prompt) */
  unsigned char *share;  /* the shared mask (kvb_bkva_share), n_share flags */
  size_t n_share;
  int share_any, shared;
  unsigned char *mask;   /* the mask the last compression used, n_mask flags */
  size_t n_mask, nflag;
  int any;
  size_t kept, *pos;
  double *w;
  double *scratch;
} bkva_state;

static const kvb_param_spec bkva_params[] = {
    {"f", KVB_PARAM_INT, 32, 0, 1e9, NULL,
     "first tokens kept exactly (authors' run_needle_in_haystack.py: sink_size 32)"},
    {"w", KVB_PARAM_INT, 32, 0, 1e9, NULL,
     "recent tokens kept exactly (authors' run_needle_in_haystack.py: window_size 32)"},
    {"b", KVB_PARAM_INT, 128, 1, 1e9, NULL,
     "block length of the walk and of the detector (authors' needle script: block_size 128)"},
    {"T", KVB_PARAM_INT, 2, 0, 62, NULL,
     "halving rounds (authors' needle script: itrs 2; 003 §4.3: compression ≈ 0.25)"},
    {"gamma", KVB_PARAM_REAL, 4, 0, 1e300, NULL, "walk strength γ (authors' needle script: 4)"},
    {"c0", KVB_PARAM_REAL, 0.025, 0, 1e300, NULL, "kernel offset c₀ (balanced_walk.py: 0.025)"},
    {"tau", KVB_PARAM_REAL, 1, -1e300, 1e300, NULL, "key temperature τ (needle script: 1)"},
    {"beta", KVB_PARAM_REAL, 0, -1e300, 1e300, NULL, "kernel shift β (needle script: 0)"},
    {"detect", KVB_PARAM_INT, 1, 0, 1, NULL,
     "1: run the detector on this head's own middle keys when no mask is shared (the layer-1 "
     "role; the task runner shares layer 1's mask with every later layer); 0: no detector (the "
     "plain walk, layer 0's role)"},
    {"prompt", KVB_PARAM_INT, 0, 0, 1e12, NULL,
     "compress once: the first compression of a stream of >= prompt tokens is frozen and later "
     "tokens are kept exactly (0: recompress after every update)"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

static const kvb_mutant_spec bkva_mutants[] = {
    {"threshold_strict", "the detector flags μ < 0 instead of μ ≤ 0"},
    {"no_dilation", "flags not dilated"},
    {"dilation_24", "flags dilated ±24 instead of ±25"},
    {"flagged_in_sums", "flagged tokens' signs enter the walk's partial sums"},
    {"no_protect", "the halving ignores the flags (balancekv_block's rule)"},
    {"mask_per_layer", "every layer detects on its own keys (the task runner's shared mask off)"},
    {"first_not_exact", "the first f tokens are compressed with the middle (f ignored)"},
    {NULL, NULL}};

static const kvb_method_type *bkva_type(void);
static int is_bkva(const kvb_method *m) { return m && m->type == bkva_type(); }

static int bkva_init(kvb_method *m, const kvb_params *p) {
  bkva_state *st = calloc(1, sizeof *st);
  if (!st) return KVB_ERROR(KVB_ENOMEM, "balancekv_augmented: out of memory");
  kvb_kv_init(&st->kv, m->d_key, m->d_value);
  st->scratch = malloc(2 * (m->d_value + 1) * sizeof(double));
  if (!st->scratch) {
    free(st);
    return KVB_ERROR(KVB_ENOMEM, "balancekv_augmented: out of memory");
  }
  kvb_bkvb_opts_default(&st->o);
  st->f = (size_t)kvb_params_get(p, bkva_params, "f");
  st->wr = (size_t)kvb_params_get(p, bkva_params, "w");
  st->o.b = (size_t)kvb_params_get(p, bkva_params, "b");
  st->o.T = (unsigned)kvb_params_get(p, bkva_params, "T");
  st->o.gamma = kvb_params_get(p, bkva_params, "gamma");
  st->o.c0 = kvb_params_get(p, bkva_params, "c0");
  st->o.tau = kvb_params_get(p, bkva_params, "tau");
  st->o.beta = kvb_params_get(p, bkva_params, "beta");
  st->o.threads = 1;
  st->detect = (int)kvb_params_get(p, bkva_params, "detect");
  st->prompt = (size_t)kvb_params_get(p, bkva_params, "prompt");
  st->mutant = kvb_bkva_flags_for(kvb_method_mutant_name(m));
  if (kvb_method_is_mutant(m, "first_not_exact")) st->f = 0;
  m->state = st;
  return KVB_OK;
}

static void bkva_free(void *state) {
  bkva_state *st = state;
  if (!st) return;
  kvb_kv_free(&st->kv);
  free(st->share), free(st->mask), free(st->pos), free(st->w), free(st->scratch);
  free(st);
}

static int bkva_update(kvb_method *m, const double *k, const double *v) {
  bkva_state *st = m->state;
  int rc = kvb_kv_append(&st->kv, k, v, "balancekv_augmented");
  if (rc) return rc;
  if (!st->sealed) st->fresh = 0;
  return KVB_OK;
}

static size_t middle_len(const bkva_state *st) {
  size_t n = st->sealed ? st->sealed : st->kv.n;
  return n > st->f + st->wr ? n - st->f - st->wr : 0;
}

static int compress(kvb_method *m) {
  bkva_state *st = m->state;
  if (st->fresh) return KVB_OK;
  size_t mid = middle_len(st);
  if (mid == 0) {
    st->kept = 0, st->fresh = 1, st->n_mask = 0, st->nflag = 0, st->any = 0;
    return KVB_OK;
  }
  size_t kept = kvb_bkvb_kept(mid, st->o.T);
  if (kept == 0)
    return KVB_ERROR(KVB_EINVAL, "balancekv_augmented: T = %u larger than log2 of the middle "
                     "length %zu (n = %zu, f = %zu, w = %zu)", st->o.T, mid, st->kv.n, st->f, st->wr);
  if (st->shared && st->n_share != mid)
    return KVB_ERROR(KVB_ESTATE, "balancekv_augmented: the shared mask has %zu flags, the middle "
                     "%zu tokens", st->n_share, mid);
  size_t *pos = malloc(kept * sizeof *pos);
  double *w = malloc(kept * sizeof *w);
  unsigned char *mask = malloc(mid);
  if (!pos || !w || !mask) {
    free(pos), free(w), free(mask);
    return KVB_ERROR(KVB_ENOMEM, "balancekv_augmented: out of memory");
  }
  const double *K = st->kv.K + st->f * m->d_key, *V = st->kv.V + st->f * m->d_value;
  size_t nflag = 0;
  int any = 0, rc = KVB_OK;
  if (st->shared) {
    memcpy(mask, st->share, mid);
    for (size_t i = 0; i < mid; i++) nflag += mask[i] != 0;
    any = st->share_any;
  } else if (st->detect) {
    rc = kvb_bkva_detect(mid, m->d_key, K, st->o.b, st->mutant, mask, &nflag);
    any = nflag > 0;
  } else {
    memset(mask, 0, mid);
  }
  /* the halving branch is the model's ("any head flagged", BWND's torch.all over every head): a
   * head without flags of its own takes the protected branch when another head has one */
  if (!rc)
    rc = kvb_bkva_compress(1, mid, m->d_key, m->d_value, K, V, &st->o, mask, any, st->mutant,
                           NULL, m->rng, pos, w, NULL);
  if (rc) {
    free(pos), free(w), free(mask);
    return rc;
  }
  for (size_t i = 0; i < kept; i++) pos[i] += st->f;
  free(st->pos), free(st->w), free(st->mask);
  st->pos = pos, st->w = w, st->kept = kept, st->fresh = 1;
  st->mask = mask, st->n_mask = mid, st->nflag = nflag, st->any = any;
  if (st->prompt && st->kv.n >= st->prompt) st->sealed = st->kv.n;
  m->work.coins += mid;
  return KVB_OK;
}

/* z = [Σ_fr e^a v + Σ_S w e^a v] / [Σ_fr e^a + Σ_S w e^a] (MFND: bias log w, values unweighted,
 * w = 0 dropped) */
static int bkva_query(kvb_method *m, const double *q, double *z) {
  int rc = compress(m);
  if (rc) return rc;
  bkva_state *st = m->state;
  size_t dk = m->d_key, dv = m->d_value, mid = middle_len(st);
  kvb_expsum num, den;
  double ad;
  kvb_expsum_init(&num, st->scratch, dv);
  kvb_expsum_init(&den, &ad, 1);
  for (size_t i = 0; i < st->kv.n; i++) {
    if (i >= st->f && i < st->f + mid) continue;
    double a = m->scale * kvb_dot(q, st->kv.K + i * dk, dk);
    kvb_expsum_add(&num, 1.0, a, st->kv.V + i * dv);
    kvb_expsum_add(&den, 1.0, a, NULL);
  }
  for (size_t k = 0; k < st->kept; k++) {
    if (st->w[k] == 0) continue;
    size_t i = st->pos[k];
    double a = m->scale * kvb_dot(q, st->kv.K + i * dk, dk);
    kvb_expsum_add(&num, st->w[k], a, st->kv.V + i * dv);
    kvb_expsum_add(&den, st->w[k], a, NULL);
  }
  m->work.dots += st->kv.n - mid + st->kept;
  m->work.exps += st->kv.n - mid + st->kept;
  if (kvb_expsum_ratio(&num, &den, z))
    return KVB_ERROR(KVB_ESTATE, "balancekv_augmented query: zero denominator");
  return KVB_OK;
}

static void bkva_memory(const kvb_method *m, kvb_memory *out) {
  const bkva_state *st = m->state;
  size_t mid = middle_len(st);
  size_t cache = st->kv.n - mid + (st->fresh ? st->kept : mid);
  out->vectors = 2 * cache;
  out->bytes = cache * (m->d_key + m->d_value) * sizeof(double) +
               (st->fresh ? st->kept : mid) * sizeof(double);
}

int kvb_bkva_share(kvb_method *m, const unsigned char *flags, size_t n, int any) {
  if (!is_bkva(m)) return KVB_ERROR(KVB_EINVAL, "not a balancekv_augmented method");
  if (!flags && n) return KVB_ERROR(KVB_ENULL, "kvb_bkva_share: NULL flags");
  bkva_state *st = m->state;
  unsigned char *c = malloc(n ? n : 1);
  if (!c) return KVB_ERROR(KVB_ENOMEM, "kvb_bkva_share: out of memory");
  if (n) memcpy(c, flags, n);
  free(st->share);
  st->share = c, st->n_share = n, st->share_any = any != 0, st->shared = 1;
  if (!st->sealed) st->fresh = 0;
  return KVB_OK;
}

int kvb_bkva_mask(const kvb_method *m, const unsigned char **flags, size_t *n, size_t *nflag,
                  int *any) {
  if (!is_bkva(m)) return KVB_ERROR(KVB_EINVAL, "not a balancekv_augmented method");
  const bkva_state *st = m->state;
  if (flags) *flags = st->mask;
  if (n) *n = st->mask ? st->n_mask : 0;
  if (nflag) *nflag = st->mask ? st->nflag : 0;
  if (any) *any = st->mask ? st->any : 0;
  return KVB_OK;
}

int kvb_bkva_kept_set(const kvb_method *m, size_t *count, const size_t **pos, const double **w) {
  if (!is_bkva(m)) return KVB_ERROR(KVB_EINVAL, "not a balancekv_augmented method");
  const bkva_state *st = m->state;
  if (!st->fresh) return KVB_ERROR(KVB_ESTATE, "balancekv_augmented: not compressed since last update");
  if (count) *count = st->kept;
  if (pos) *pos = st->pos;
  if (w) *w = st->w;
  return KVB_OK;
}

const kvb_method_type kvb_method_balancekv_augmented = {
    "balancekv_augmented",
    "augmented BalanceKV of 003's needle test: anti-correlated key tokens detected at layer 1, "
    "kept with weight 1 in every later layer, the rest by the block walk (first/recent exact)",
    "003 §4.3, Fig. 4; github.com/ksheth96/BalanceKV src/balanced_walk.py "
    "(balanced_walk_needle_detection), src/llama_forward.py (manual_forward_llama_needle_detection)",
    bkva_params,
    bkva_mutants,
    1,
    bkva_init,
    bkva_update,
    bkva_query,
    bkva_memory,
    bkva_free,
    .in_model = KVB_IN_MODEL_ONCE_AT_PROMPT | KVB_IN_MODEL_SHARED_MASK};

static const kvb_method_type *bkva_type(void) { return &kvb_method_balancekv_augmented; }

/* index_reduction.c — 003 Appendix C's INDEX reduction: instance, Alice, Bob (see the header). */
#include "index_reduction.h"
#include "kvb_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

const kvb_mutant_spec kvb_index_mutants[] = {
    {"threshold_flip", "Bob reports 1 iff ⟨z, v_i⟩ < T (the rule's sign flipped; 003 App. C)"},
    {"no_sign", "Bob reads z[π(i)₂] without σ_i (003 App. C reads ⟨z, v_i⟩)"},
    {"shared_key", "group 1 reuses group 0's key k̃_1: two groups, one key (003 App. C draws "
                   "n/d independent keys)"},
    {"coord_collide", "π(i)₂ drawn independently: a group may repeat a coordinate (003 App. C: "
                      "π is a bijection; Corollary C.5)"},
    {"identity_pi", "π(i) = (i / d, i mod d): not a uniformly random partition (003 App. C)"},
    {NULL, NULL}};

int kvb_index_is_mutant(const kvb_index_instance *I, const char *name) {
  const char *cur = I ? kvb_mutant_name(kvb_index_mutants, I->mutant) : NULL;
  return cur && name && strcmp(cur, name) == 0;
}

int kvb_index_stream_mutant(const kvb_stream *s) {
  return s && s->type && s->type->mutants == kvb_index_mutants ? s->mutant : KVB_INDEX_FAITHFUL;
}

int kvb_index_check_premises(size_t n, size_t d, double r, double eps) {
  if (d == 0) return KVB_ERROR(KVB_EINVAL, "index reduction: d must be >= 1");
  if (!isfinite(r) || r <= 0)
    return KVB_ERROR(KVB_EINVAL, "index reduction: r must be finite and > 0 (got %g)", r);
  /* 003 Theorem 3.2: "Suppose that r² ≤ d" (used in Lemma C.3's bound exp(C²)). */
  /* relative 1e-12 slack so that r = √d computed in floating point counts as r² = d */
  if (r * r > (double)d * (1 + 1e-12))
    return KVB_ERROR(KVB_EINVAL,
                     "index reduction: 003 Theorem 3.2 requires r^2 <= d (got r^2 = %g > d = %zu)",
                     r * r, d);
  if (!isnan(eps) && !(eps > 0 && eps < 1))
    return KVB_ERROR(KVB_EINVAL, "index reduction: epsilon must lie in (0, 1) (got %g)", eps);
  if (n != 0 && n % d != 0)
    return KVB_ERROR(KVB_EINVAL,
                     "index reduction: n = %zu is not a multiple of d = %zu (003 App. C "
                     "partitions the n bits into groups of size d)",
                     n, d);
  return KVB_OK;
}

int kvb_index_theorem_n(size_t d, double r, double eps, size_t *n) {
  if (!n) return KVB_ERROR(KVB_ENULL, "index reduction: n output pointer is NULL");
  if (isnan(eps)) return KVB_ERROR(KVB_EINVAL, "index reduction: epsilon is required");
  int st = kvb_index_check_premises(0, d, r, eps);
  if (st) return st;
  /* n = min{1/ε², d·exp(2r²/√d)} (003 Theorem 3.2 and App. C "The reduction"). */
  double lim = fmin(1.0 / (eps * eps), (double)d * exp(2 * r * r / sqrt((double)d)));
  if (lim > 1e12)
    return KVB_ERROR(KVB_EINVAL, "index reduction: n = %g is beyond what can be materialized",
                     lim);
  size_t g = (size_t)floor(lim / (double)d);
  *n = (g ? g : 1) * d;
  return KVB_OK;
}

void kvb_index_free(kvb_index_instance *inst) {
  if (!inst) return;
  free(inst->key);
  free(inst->group);
  free(inst->coord);
  free(inst->sigma);
  free(inst);
}

int kvb_index_alloc(size_t n, size_t d, double r, int mutant, gsl_rng *coins,
                    kvb_index_instance **out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "index reduction: output pointer is NULL");
  *out = NULL;
  if (!coins) return KVB_ERROR(KVB_ENULL, "index reduction: needs the public-coin generator");
  if (n == 0) return KVB_ERROR(KVB_EINVAL, "index reduction: n must be >= 1");
  int st = kvb_index_check_premises(n, d, r, NAN);
  if (st) return st;
  if (mutant < 0 || (size_t)mutant > kvb_mutant_count(kvb_index_mutants))
    return KVB_ERROR(KVB_EINVAL, "index reduction: unknown mutant %d", mutant);
  kvb_index_instance *I = calloc(1, sizeof *I);
  if (!I) return KVB_ERROR(KVB_ENOMEM, "index reduction: out of memory");
  I->n = n;
  I->d = d;
  I->groups = n / d;
  I->r = r;
  I->mutant = mutant;
  I->key = malloc(I->groups * d * sizeof *I->key);
  I->group = malloc(n * sizeof *I->group);
  I->coord = malloc(n * sizeof *I->coord);
  I->sigma = malloc(n);
  size_t *perm = malloc(n * sizeof *perm);
  if (!I->key || !I->group || !I->coord || !I->sigma || !perm) {
    free(perm);
    kvb_index_free(I);
    return KVB_ERROR(KVB_ENOMEM, "index reduction: out of memory for n = %zu", n);
  }
  /* k̃_1..k̃_{n/d} ~ Unif{−r/√d, r/√d}^d (003 App. C, "The reduction"). */
  double a = r / sqrt((double)d);
  for (size_t g = 0; g < I->groups; g++)
    for (size_t c = 0; c < d; c++) I->key[g * d + c] = gsl_rng_uniform_int(coins, 2) ? a : -a;
  if (kvb_index_is_mutant(I, "shared_key") && I->groups >= 2)
    memcpy(I->key + d, I->key, d * sizeof *I->key);
  /* π: a uniformly random bijection [n] → [n/d]×[d]; slot s = g·d + c of a uniform random
   * permutation gives bit i its (group, coordinate) = (s / d, s mod d). */
  for (size_t i = 0; i < n; i++) perm[i] = i;
  if (!kvb_index_is_mutant(I, "identity_pi")) gsl_ran_shuffle(coins, perm, n, sizeof *perm);
  for (size_t i = 0; i < n; i++) {
    I->group[i] = perm[i] / d;
    I->coord[i] = perm[i] % d;
    if (kvb_index_is_mutant(I, "coord_collide"))
      I->coord[i] = (size_t)gsl_rng_uniform_int(coins, (unsigned long)d);
  }
  /* σ_1..σ_n ~ Unif{−1, 1}. */
  for (size_t i = 0; i < n; i++) I->sigma[i] = gsl_rng_uniform_int(coins, 2) ? 1 : -1;
  free(perm);
  *out = I;
  return KVB_OK;
}

int kvb_index_pair(const kvb_index_instance *I, size_t i, double *k, double *v) {
  if (!I || !k || !v) return KVB_ERROR(KVB_ENULL, "index reduction: NULL argument");
  if (i >= I->n) return KVB_ERROR(KVB_EINVAL, "index reduction: bit %zu >= n = %zu", i, I->n);
  /* k_i = k̃_{π(i)₁}, v_i = σ_i·e_{π(i)₂}. */
  memcpy(k, I->key + I->group[i] * I->d, I->d * sizeof *k);
  memset(v, 0, I->d * sizeof *v);
  v[I->coord[i]] = I->sigma[i];
  return KVB_OK;
}

size_t kvb_index_count(const kvb_index_instance *I, const unsigned char *x) {
  size_t u = 0;
  if (!I || !x) return 0;
  for (size_t i = 0; i < I->n; i++) u += x[i] != 0;
  return u;
}

static int check_method(const kvb_index_instance *I, const kvb_method *m) {
  if (m->d_key != I->d || m->d_value != I->d)
    return KVB_ERROR(KVB_EDIM,
                     "index reduction: the method has d_key = %zu, d_value = %zu; the instance "
                     "needs both = d = %zu",
                     m->d_key, m->d_value, I->d);
  return KVB_OK;
}

int kvb_index_alice(const kvb_index_instance *I, const unsigned char *x, kvb_method *m,
                    size_t *u_size) {
  if (!I || !x || !m || !u_size) return KVB_ERROR(KVB_ENULL, "index reduction: NULL argument");
  int st = check_method(I, m);
  if (st) return st;
  double *k = malloc(2 * I->d * sizeof *k);
  if (!k) return KVB_ERROR(KVB_ENOMEM, "index reduction: out of memory");
  double *v = k + I->d;
  size_t u = 0;
  for (size_t i = 0; i < I->n && !st; i++) {
    if (!x[i]) continue;
    kvb_index_pair(I, i, k, v);
    st = kvb_method_update(m, k, I->d, v, I->d);
    u++;
  }
  free(k);
  *u_size = u;
  return st;
}

double kvb_index_threshold_for(size_t d, double r, size_t u_size) {
  double a = r * r / sqrt((double)d); /* r²/√d */
  /* log T = a − log 40 − max{log d + a, log |U|} (never overflows for large a). */
  double lm = log((double)d) + a;
  if (u_size > 0) lm = fmax(lm, log((double)u_size));
  return exp(a - log(40.0) - lm);
}

double kvb_index_threshold(const kvb_index_instance *I, size_t u_size) {
  return kvb_index_threshold_for(I->d, I->r, u_size);
}

int kvb_index_decide(const kvb_index_instance *I, size_t i, size_t u_size, const double *z,
                     int *bit, double *value) {
  if (!I || !z || !bit) return KVB_ERROR(KVB_ENULL, "index reduction: NULL argument");
  if (i >= I->n) return KVB_ERROR(KVB_EINVAL, "index reduction: bit %zu >= n = %zu", i, I->n);
  if (u_size == 0) {
    *bit = 0;
    if (value) *value = 0;
    return KVB_OK;
  }
  double val = z[I->coord[i]];
  if (!kvb_index_is_mutant(I, "no_sign")) val *= I->sigma[i]; /* ⟨z, v_i⟩ */
  double T = kvb_index_threshold(I, u_size);
  *bit = kvb_index_is_mutant(I, "threshold_flip") ? (val < T) : (val > T);
  if (value) *value = val;
  return KVB_OK;
}

int kvb_index_bob(const kvb_index_instance *I, kvb_method *m, size_t i, size_t u_size, int *bit,
                  double *value) {
  if (!I || !m || !bit) return KVB_ERROR(KVB_ENULL, "index reduction: NULL argument");
  if (i >= I->n) return KVB_ERROR(KVB_EINVAL, "index reduction: bit %zu >= n = %zu", i, I->n);
  int st = check_method(I, m);
  if (st) return st;
  if (u_size == 0 || m->n == 0) {
    *bit = 0;
    if (value) *value = 0;
    return KVB_OK;
  }
  double *buf = malloc(2 * I->d * sizeof *buf);
  if (!buf) return KVB_ERROR(KVB_ENOMEM, "index reduction: out of memory");
  double *q = buf, *z = buf + I->d;
  memcpy(q, I->key + I->group[i] * I->d, I->d * sizeof *q); /* q_i = k_i */
  st = kvb_method_query(m, q, I->d, z, I->d);
  if (!st) st = kvb_index_decide(I, i, u_size, z, bit, value);
  free(buf);
  return st;
}

int kvb_index_attention(const kvb_index_instance *I, const unsigned char *x, size_t i,
                        double *z, double *softmax_l2, size_t *u_size) {
  if (!I || !x || !z) return KVB_ERROR(KVB_ENULL, "index reduction: NULL argument");
  if (i >= I->n) return KVB_ERROR(KVB_EINVAL, "index reduction: bit %zu >= n = %zu", i, I->n);
  size_t d = I->d, u = 0;
  const double *q = I->key + I->group[i] * d;
  double inv = 1.0 / sqrt((double)d), mx = -INFINITY;
  /* Scores ⟨k̃_g, q⟩/√d depend only on the group g: one dot product per group. */
  double *score = malloc(I->groups * sizeof *score);
  if (!score) return KVB_ERROR(KVB_ENOMEM, "index reduction: out of memory");
  for (size_t g = 0; g < I->groups; g++) {
    double s = 0;
    for (size_t c = 0; c < d; c++) s += I->key[g * d + c] * q[c];
    score[g] = s * inv;
  }
  for (size_t j = 0; j < I->n; j++)
    if (x[j]) {
      mx = fmax(mx, score[I->group[j]]);
      u++;
    }
  memset(z, 0, d * sizeof *z);
  double den = 0, sq = 0;
  /* softmax_j = e^{s_j − mx}/Σ e^{s − mx}; z = Σ softmax_j v_j with v_j = σ_j e_{π(j)₂}. */
  for (size_t j = 0; u && j < I->n; j++) {
    if (!x[j]) continue;
    double w = exp(score[I->group[j]] - mx);
    den += w;
    sq += w * w;
    z[I->coord[j]] += I->sigma[j] * w;
  }
  free(score);
  if (u) {
    for (size_t c = 0; c < d; c++) z[c] /= den;
  }
  if (softmax_l2) *softmax_l2 = u ? sqrt(sq) / den : 0;
  if (u_size) *u_size = u;
  return KVB_OK;
}

typedef struct {
  double cost;
  size_t coord;
  double dir; /* the sign the error must have in `coord` to flip Bob's decision */
} flip_cost;

static int by_cost(const void *a, const void *b) {
  double x = ((const flip_cost *)a)->cost, y = ((const flip_cost *)b)->cost;
  return (x > y) - (x < y);
}

int kvb_index_eq2_error(const kvb_index_instance *I, const unsigned char *x, size_t i,
                        size_t u_size, const double *z, double budget, kvb_index_err_kind kind,
                        gsl_rng *rng, double *err) {
  if (!I || !x || !z || !err) return KVB_ERROR(KVB_ENULL, "index reduction: NULL argument");
  if (i >= I->n) return KVB_ERROR(KVB_EINVAL, "index reduction: bit %zu >= n = %zu", i, I->n);
  if (!(budget >= 0) || !isfinite(budget))
    return KVB_ERROR(KVB_EINVAL, "index reduction: error budget must be finite and >= 0 (got %g)",
                     budget);
  if (kind != KVB_INDEX_ERR_RANDOM && kind != KVB_INDEX_ERR_ADVERSARIAL &&
      kind != KVB_INDEX_ERR_CLAIRVOYANT)
    return KVB_ERROR(KVB_EINVAL, "index reduction: unknown error kind %d", (int)kind);
  if (kind == KVB_INDEX_ERR_RANDOM && !rng)
    return KVB_ERROR(KVB_ENULL, "index reduction: a random error needs a generator");
  size_t d = I->d;
  memset(err, 0, d * sizeof *err);
  double T = kvb_index_threshold(I, u_size);
  if (kind == KVB_INDEX_ERR_CLAIRVOYANT) {
    /* the whole budget against bit i's own decision, in its own coordinate (knows b) */
    err[I->coord[i]] = (x[i] ? -1.0 : 1.0) * I->sigma[i] * budget;
    return KVB_OK;
  }
  if (kind == KVB_INDEX_ERR_RANDOM) {
    double nn = 0;
    while (nn == 0) {
      nn = 0;
      for (size_t c = 0; c < d; c++) {
        err[c] = gsl_ran_gaussian(rng, 1.0);
        nn += err[c] * err[c];
      }
    }
    for (size_t c = 0; c < d; c++) err[c] *= budget / sqrt(nn);
    return KVB_OK;
  }
  flip_cost *fc = malloc(d * sizeof *fc);
  if (!fc) return KVB_ERROR(KVB_ENOMEM, "index reduction: out of memory");
  size_t k = 0, g = I->group[i];
  /* The bits of group g (found by scanning π): Bob's decision on bit j reads σ_j·z[π(j)₂]. */
  for (size_t j = 0; j < I->n && k < d; j++) {
    if (I->group[j] != g) continue;
    double v = I->sigma[j] * z[I->coord[j]], slack = 1e-9 * T;
    if (x[j] && v > T) /* decoded 1: push ⟨z, v_j⟩ down to <= T */
      fc[k++] = (flip_cost){v - T + slack, I->coord[j], -I->sigma[j]};
    else if (!x[j] && v <= T) /* decoded 0: push it above T */
      fc[k++] = (flip_cost){T - v + slack, I->coord[j], I->sigma[j]};
  }
  qsort(fc, k, sizeof *fc, by_cost);
  double spent = 0;
  for (size_t t = 0; t < k; t++) {
    if (spent + fc[t].cost * fc[t].cost > budget * budget) break;
    spent += fc[t].cost * fc[t].cost;
    err[fc[t].coord] += fc[t].dir * fc[t].cost;
  }
  free(fc);
  return KVB_OK;
}

double kvb_index_noise(const kvb_index_instance *I, const unsigned char *x, size_t i,
                       size_t *ui) {
  const double *q = I->key + I->group[i] * I->d;
  double inv = 1.0 / sqrt((double)I->d), X = 0;
  size_t cnt = 0;
  for (size_t j = 0; j < I->n; j++) {
    if (j == i || !x[j] || I->coord[j] != I->coord[i]) continue;
    const double *k = I->key + I->group[j] * I->d;
    double s = 0;
    for (size_t c = 0; c < I->d; c++) s += k[c] * q[c];
    X += I->sigma[j] * I->sigma[i] * exp(s * inv);
    cnt++;
  }
  if (ui) *ui = cnt;
  return X;
}

double kvb_index_c3_log_closed_form(double C, double r, size_t d) {
  double dd = (double)d;
  /* 003 Lemma C.3: E exp(C⟨x,y⟩/√d) = ((e^{Cr²/d^{3/2}} + e^{−Cr²/d^{3/2}})/2)^d: the d
   * coordinates of x∘y are independent ±r²/d, each scaled by C/√d. */
  double arg = C * r * r / (dd * sqrt(dd));
  /* log cosh(t) = |t| + log1p(e^{−2|t|}) − log 2, stable for large |t|. */
  double t = fabs(arg);
  return dd * (t + log1p(exp(-2 * t)) - log(2.0));
}

/* attention.h — exact attention, the shared weighted-exponential sum, and the norms the
 * error bounds are stated in. This is the reference: plain C, double precision.
 *
 * Layout: K is n×d_key and V is n×d_value, row-major, one token per row.
 * Scores are scale·<q, k_i> (kvb_score: correct even when a product k_i·q_i alone overflows);
 * every exponential is taken after subtracting the maximum score, so scores up to 1e4 (and
 * beyond) never overflow (log-sum-exp). A score beyond double range (|score| > 1.8e308) cannot
 * be represented: kvb_attention_exact reports it as KVB_ERANGE, never as a NaN answer. */
#ifndef KVB_ATTENTION_H
#define KVB_ATTENTION_H

#include <stddef.h>

/* A sum S = Σ_i w_i·exp(a_i)·x_i held as exp(shift)·acc, so it never overflows. */
typedef struct {
  double shift;  /* -INFINITY while empty */
  double *acc;   /* dim entries, caller-owned */
  size_t dim;
} kvb_expsum;

/* acc must hold dim doubles; sets it to the empty sum. */
void kvb_expsum_init(kvb_expsum *s, double *acc, size_t dim);
/* S += w·exp(a)·x  (x may be NULL for dim == 1 meaning x = 1; w >= 0). */
void kvb_expsum_add(kvb_expsum *s, double w, double a, const double *x);
/* S += exp(a)·acc_other·... merges another sum. */
void kvb_expsum_merge(kvb_expsum *s, const kvb_expsum *other);
/* Writes out = S_num / S_den (a scalar denominator), exact in the shifted domain.
 * Returns 0, or -1 when the denominator is zero (empty or all weights zero). */
int kvb_expsum_ratio(const kvb_expsum *num, const kvb_expsum *den, double *out);

/* The weighted sketch estimator shared by SubGen (000 Alg. 1 lines 29-31) and BalanceKV
 * (003 Alg. 4 estimator): num = Σ_i w_i exp(scale<q,k_i>) v_i over n stored rows.
 * w may be NULL (all ones); V may be NULL when d_value == 1 (all-ones values). */
void kvb_expsum_rows(kvb_expsum *s, size_t n, size_t d_key, size_t d_value, const double *K,
                     const double *V, const double *w, const double *q, double scale);

/* scale·<k, q>, finite whenever the true score is within double range (plain product first,
 * power-of-two rescaled when that overflows); ±Inf only when |score| > 1.8e308. */
double kvb_score(const double *k, const double *q, size_t d, double scale);

/* Exact attention z = softmax(scale·K q)ᵀ V (d_value outputs). Returns log Σ exp(scale<q,k_i>)
 * through *lse when lse is not NULL. Returns KVB_OK; KVB_EINVAL when n = 0; KVB_ERANGE (with a
 * message; z unspecified) when the largest score or the output lies beyond double range —
 * finite inputs never give a NaN/Inf answer with KVB_OK. Sums of values near 1.8e308 are
 * rescaled, so a representable answer is always returned. */
int kvb_attention_exact(size_t n, size_t d_key, size_t d_value, const double *K, const double *V,
                        const double *q, double scale, double *z, double *lse);

/* p = softmax(scale·K q) (n entries). Returns ‖p‖₂ (NaN, and p NaN, when the largest score is
 * beyond double range). */
double kvb_softmax(size_t n, size_t d_key, const double *K, const double *q, double scale,
                   double *p);
/* ‖softmax(scale·K q)‖₂ without keeping the vector (NaN as kvb_softmax). */
double kvb_softmax_norm2(size_t n, size_t d_key, const double *K, const double *q, double scale);

/* ‖V‖_F. */
double kvb_frobenius_norm(size_t n, size_t d, const double *V);
/* ‖V‖_op, the largest singular value, by GSL's one-sided Jacobi SVD. Returns a KVB status; the
 * norm through *out. */
int kvb_operator_norm(size_t n, size_t d, const double *V, double *out);

double kvb_dot(const double *a, const double *b, size_t d);
/* 1 when all n entries are finite (the one finiteness check every entry point uses). */
int kvb_all_finite(const double *x, size_t n);
double kvb_norm2(const double *a, size_t d);
double kvb_dist2(const double *a, const double *b, size_t d); /* ‖a-b‖₂ */

#endif

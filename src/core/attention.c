/* attention.c — exact attention and norms (see attention.h). The CPU reference. */
#include "attention.h"
#include "kvb_error.h"
#include "gsl_quiet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

int kvb_all_finite(const double *x, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

double kvb_dot(const double *a, const double *b, size_t d) {
  double s = 0;
  for (size_t i = 0; i < d; i++) s += a[i] * b[i];
  return s;
}

double kvb_norm2(const double *a, size_t d) { return sqrt(kvb_dot(a, a, d)); }

/* score = scale·<k, q>. The plain product is tried first (bit-identical to scale·kvb_dot);
 * only when it is not finite — a product k_i q_i or the running sum overflowed although every
 * input is finite, e.g. entries ~1e200, or Inf − Inf gave NaN — is it recomputed with k and q
 * scaled by powers of two (exact) so that every partial sum stays within [−d, d], and the
 * scale put back through the exponent. The result is then ±Inf only when the score itself lies
 * beyond double range (|score| > 1.8e308), which no double can hold. */
double kvb_score(const double *k, const double *q, size_t d, double scale) {
  double s = scale * kvb_dot(k, q, d);
  if (isfinite(s)) return s;
  double a = 0, b = 0;
  for (size_t i = 0; i < d; i++) {
    a = fmax(a, fabs(k[i]));
    b = fmax(b, fabs(q[i]));
  }
  if (!isfinite(a) || !isfinite(b) || !isfinite(scale)) return s; /* not finite inputs */
  if (a == 0 || b == 0) return 0;
  int ea, eb, es;
  frexp(a, &ea);
  frexp(b, &eb);
  double ms = frexp(scale, &es), t = 0;
  for (size_t i = 0; i < d; i++) t += ldexp(k[i], -ea) * ldexp(q[i], -eb); /* |terms| < 1 */
  return ldexp(t * ms, ea + eb + es);
}

double kvb_dist2(const double *a, const double *b, size_t d) {
  double s = 0;
  for (size_t i = 0; i < d; i++) {
    double t = a[i] - b[i];
    s += t * t;
  }
  return sqrt(s);
}

void kvb_expsum_init(kvb_expsum *s, double *acc, size_t dim) {
  s->shift = -INFINITY;
  s->acc = acc;
  s->dim = dim;
  memset(acc, 0, dim * sizeof *acc);
}

static void rescale(kvb_expsum *s, double new_shift) {
  /* new_shift > s->shift: scale the accumulated sum down so it is relative to new_shift. */
  double f = isinf(s->shift) ? 0.0 : exp(s->shift - new_shift);
  for (size_t j = 0; j < s->dim; j++) s->acc[j] *= f;
  s->shift = new_shift;
}

void kvb_expsum_add(kvb_expsum *s, double w, double a, const double *x) {
  if (w == 0) return;
  if (a > s->shift) rescale(s, a);
  double f = w * exp(a - s->shift);
  if (x)
    for (size_t j = 0; j < s->dim; j++) s->acc[j] += f * x[j];
  else
    s->acc[0] += f;
}

void kvb_expsum_merge(kvb_expsum *s, const kvb_expsum *o) {
  if (isinf(o->shift)) return;
  if (o->shift > s->shift) rescale(s, o->shift);
  double f = exp(o->shift - s->shift);
  for (size_t j = 0; j < s->dim; j++) s->acc[j] += f * o->acc[j];
}

int kvb_expsum_ratio(const kvb_expsum *num, const kvb_expsum *den, double *out) {
  if (isinf(den->shift) || den->acc[0] == 0) return -1;
  if (isinf(num->shift)) {
    memset(out, 0, num->dim * sizeof *out);
    return 0;
  }
  /* exp(num.shift - den.shift) can only overflow if the estimator itself is astronomically
   * larger than its normalizer; both shifts come from the same query's scores. */
  double f = exp(num->shift - den->shift) / den->acc[0];
  for (size_t j = 0; j < num->dim; j++) out[j] = f * num->acc[j];
  return 0;
}

void kvb_expsum_rows(kvb_expsum *s, size_t n, size_t d_key, size_t d_value, const double *K,
                     const double *V, const double *w, const double *q, double scale) {
  for (size_t i = 0; i < n; i++) {
    double a = kvb_score(K + i * d_key, q, d_key, scale);
    kvb_expsum_add(s, w ? w[i] : 1.0, a, V ? V + i * d_value : NULL);
  }
}

/* One pass of Σ_i e_i·v_i/den with e_i = exp(score_i − mx); values multiplied by vscale (a
 * power of two, so exact) to keep the running sums finite. */
static void exact_pass(size_t n, size_t d_key, size_t d_value, const double *K, const double *V,
                       const double *q, double scale, double mx, double vscale, double *z,
                       double *den_out) {
  double den = 0;
  memset(z, 0, d_value * sizeof *z);
  for (size_t i = 0; i < n; i++) {
    double e = exp(kvb_score(K + i * d_key, q, d_key, scale) - mx);
    den += e;
    const double *v = V + i * d_value;
    for (size_t j = 0; j < d_value; j++) z[j] += e * (v[j] * vscale);
  }
  for (size_t j = 0; j < d_value; j++) z[j] /= den;
  *den_out = den;
}

int kvb_attention_exact(size_t n, size_t d_key, size_t d_value, const double *K, const double *V,
                        const double *q, double scale, double *z, double *lse) {
  if (n == 0) return KVB_ERROR(KVB_EINVAL, "exact attention over an empty context (n = 0)");
  /* Two passes: the max score first, then one exp per token. */
  double mx = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    double a = kvb_score(K + i * d_key, q, d_key, scale);
    if (a > mx || isnan(a)) mx = a;
    if (isnan(a)) break;
  }
  if (!isfinite(mx))
    return KVB_ERROR(KVB_ERANGE, "exact attention: the largest score scale·<q,k> is %s (beyond "
                     "double range, |score| > 1.8e308, or a NaN/Inf input); softmax cannot be "
                     "formed", isnan(mx) ? "NaN" : mx > 0 ? "+Inf" : "-Inf");
  /* Scores of −Inf (below −1.8e308 while the largest is finite) get weight exp(−Inf) = 0,
   * which is the correctly rounded softmax weight. */
  double den = 0;
  exact_pass(n, d_key, d_value, K, V, q, scale, mx, 1.0, z, &den);
  int finite = 1;
  for (size_t j = 0; j < d_value; j++) finite &= isfinite(z[j]);
  if (!finite) {
    /* Σ e_i v_i overflowed (values near 1.8e308 summed over tokens): z is a convex combination
     * of the v_i, so |z_j| <= max|v|; sum v/2^e with 2^e >= max|v| and scale back. */
    double vmax = 0;
    for (size_t i = 0; i < n * d_value; i++) vmax = fmax(vmax, fabs(V[i]));
    int ev;
    frexp(vmax, &ev);
    exact_pass(n, d_key, d_value, K, V, q, scale, mx, ldexp(1.0, -ev), z, &den);
    finite = 1;
    for (size_t j = 0; j < d_value; j++) {
      z[j] = ldexp(z[j], ev);
      finite &= isfinite(z[j]);
    }
    if (!finite)
      return KVB_ERROR(KVB_ERANGE, "exact attention: the output is beyond double range "
                       "(values near 1.8e308, or a NaN/Inf value)");
  }
  if (lse) *lse = mx + log(den);
  return KVB_OK;
}

double kvb_softmax(size_t n, size_t d_key, const double *K, const double *q, double scale,
                   double *p) {
  double mx = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    p[i] = kvb_score(K + i * d_key, q, d_key, scale);
    if (p[i] > mx) mx = p[i];
  }
  if (!isfinite(mx)) { /* a score beyond double range: see kvb_attention_exact */
    for (size_t i = 0; i < n; i++) p[i] = NAN;
    return NAN;
  }
  double den = 0;
  for (size_t i = 0; i < n; i++) {
    p[i] = exp(p[i] - mx);
    den += p[i];
  }
  double ss = 0;
  for (size_t i = 0; i < n; i++) {
    p[i] /= den;
    ss += p[i] * p[i];
  }
  return sqrt(ss);
}

double kvb_softmax_norm2(size_t n, size_t d_key, const double *K, const double *q, double scale) {
  /* ‖p‖₂ = sqrt(Σ e_i²)/Σ e_i with e_i = exp(a_i - max). */
  double mx = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    double a = kvb_score(K + i * d_key, q, d_key, scale);
    if (a > mx) mx = a;
  }
  if (!isfinite(mx)) return NAN; /* a score beyond double range: see kvb_attention_exact */
  double s1 = 0, s2 = 0;
  for (size_t i = 0; i < n; i++) {
    double e = exp(kvb_score(K + i * d_key, q, d_key, scale) - mx);
    s1 += e;
    s2 += e * e;
  }
  return sqrt(s2) / s1;
}

double kvb_frobenius_norm(size_t n, size_t d, const double *V) {
  /* Scaled accumulation: value norms in the suite span 2^-30..2^30. */
  double scale = 0, ssq = 1;
  for (size_t i = 0; i < n * d; i++) {
    double a = fabs(V[i]);
    if (a == 0) continue;
    if (scale < a) {
      ssq = 1 + ssq * (scale / a) * (scale / a);
      scale = a;
    } else {
      ssq += (a / scale) * (a / scale);
    }
  }
  return scale * sqrt(ssq);
}

static int operator_norm(size_t n, size_t d, const double *V, double *out);

int kvb_operator_norm(size_t n, size_t d, const double *V, double *out) {
  if (!V || !out) return KVB_ERROR(KVB_ENULL, "operator norm: NULL argument");
  if (n == 0 || d == 0) {
    *out = 0;
    return KVB_OK;
  }
  kvb_gsl_quiet_begin(); /* GSL's abort-on-error handler off only while GSL runs */
  int st = operator_norm(n, d, V, out);
  kvb_gsl_quiet_end();
  return st;
}

static int operator_norm(size_t n, size_t d, const double *V, double *out) {
  /* ‖V‖_op = sqrt(λ_max(G)) with G the Gram matrix of V's smaller side (VᵀV or VVᵀ). The largest
   * eigenvalue of a symmetric matrix is computed to an absolute error of a few ε·‖G‖ (symmetric QR),
   * i.e. a relative one for λ_max, and forming G costs at most (rows)·ε relative: both far below what
   * any check resolves. GSL's one-sided Jacobi SVD, used here before, stopped short on real-model
   * caches at d = 256 (‖V‖_op low by up to 1.8e-3 relative at 2048 tokens; 1.3e-6 on a 2048×256
   * random matrix against power iteration, which is a lower bound) — tests/test_attention.c keeps
   * that matrix as a known answer. */
  size_t cols = n >= d ? d : n, rows = n >= d ? n : d;
  gsl_matrix *G = gsl_matrix_alloc(cols, cols);
  gsl_vector *E = gsl_vector_alloc(cols);
  gsl_eigen_symm_workspace *w = gsl_eigen_symm_alloc(cols);
  double *A = malloc(rows * cols * sizeof *A);
  int st = KVB_OK;
  if (!G || !E || !w || !A) {
    st = KVB_ERROR(KVB_ENOMEM, "operator norm: out of memory for a %zux%zu Gram matrix", cols, cols);
    goto out;
  }
  /* Scale by the largest entry so squares neither overflow nor underflow. */
  double mx = 0;
  for (size_t i = 0; i < n * d; i++) mx = fmax(mx, fabs(V[i]));
  if (mx == 0) {
    *out = 0;
    goto out;
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < d; j++) {
      double x = V[i * d + j] / mx;
      if (n >= d) A[i * cols + j] = x;
      else A[j * cols + i] = x;
    }
  /* G = AᵀA (rows × cols A, row-major): the lower triangle is all gsl_eigen_symm reads */
  cblas_dsyrk(CblasRowMajor, CblasLower, CblasTrans, (int)cols, (int)rows, 1.0, A, (int)cols, 0.0, G->data,
              (int)G->tda);
  if (gsl_eigen_symm(G, E, w)) {
    st = KVB_ERROR(KVB_EFAIL, "operator norm: GSL symmetric eigensolver failed");
    goto out;
  }
  *out = mx * sqrt(fmax(0.0, gsl_vector_max(E)));
out:
  free(A);
  gsl_eigen_symm_free(w);
  gsl_vector_free(E);
  gsl_matrix_free(G);
  return st;
}

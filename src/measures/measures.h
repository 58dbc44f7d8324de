/* measures.h — the measures shared by the runner (`kvbound run`), the property checks and the
 * plots: what an answer z is compared with, every error ratio, the INDEX decode, and the
 * quantiles a summary or a plot shows. One definition each, so a number in results.csv, in a
 * claim's note and on a plot means the same thing.
 *
 * The exact side of a query (kvb_exact_side): for the prefix K, V (n rows) and query q with
 * scores s_j = scale·⟨k_j, q⟩,
 *   Attn = softmax(s)ᵀ V,  ‖Attn‖₂,  ‖softmax(s)‖₂,  ‖V‖_op,  ‖V‖_F,
 *   M = max_j s_j,  log Σ_j exp(s_j),  log ‖exp(s)‖₂ (log domain: exp(s) overflows long before
 *   the attention does).
 *
 * The error ratios of an answer z (kvb_errors):
 *   err_abs   = ‖z − Attn‖₂
 *   rel_error = ‖z − Attn‖₂ / ‖Attn‖₂
 *   ratio_op  = ‖z − Attn‖₂ / (‖softmax‖₂ ‖V‖_op)   000 eq. (3) is ratio_op <= ε
 *   ratio_f   = ‖z − Attn‖₂ / (‖softmax‖₂ ‖V‖_F)    003 eq. (2) is ratio_f <= ε
 * A ratio with a zero denominator is 0 when the numerator is 0 and +Inf otherwise
 * (kvb_measure_ratio); a denominator that was not computed (NaN) gives NaN.
 *
 * Bad input (NULL, zero or mismatched dimensions, non-finite entries) returns a KVB status with
 * a message, and nothing is written to any output. */
#ifndef KVB_MEASURES_H
#define KVB_MEASURES_H

#include <stddef.h>

#include "index_reduction.h"
#include "method.h"
#include "stream.h"

/* ---- the exact side ---- */

typedef struct {
  size_t n, d_value;    /* prefix length; components of attn */
  const double *attn;   /* Attn (d_value values, the caller's buffer) */
  double attn_norm;     /* ‖Attn‖₂ */
  double log_sum;       /* log Σ_j exp(s_j) (the attention's normalizer, log domain) */
  /* Filled when asked for (the flags below), NaN otherwise: */
  double softmax_norm;  /* ‖softmax(s)‖₂                                  KVB_EXACT_SOFTMAX */
  double max_score;     /* M = max_j s_j                                   KVB_EXACT_SOFTMAX */
  double log_exp_norm;  /* log ‖exp(s)‖₂ = M + ½ log Σ_j exp(2(s_j − M))   KVB_EXACT_SOFTMAX */
  double v_op;          /* ‖V‖_op (largest singular value; an SVD, O(n·d_value²)) KVB_EXACT_V_OP */
  double v_f;           /* ‖V‖_F                                           KVB_EXACT_V_F */
} kvb_exact_side;

enum {
  KVB_EXACT_SOFTMAX = 1,
  KVB_EXACT_V_OP = 2,
  KVB_EXACT_V_F = 4,
  KVB_EXACT_NORMS = 7 /* all of them: the denominators of ratio_op and ratio_f */
};

/* The exact side of query q against the first n rows of K (n × d_key) and V (n × d_value), into
 * *out, with Attn written to attn (d_value values; *out points at it). what: 0 or an OR of the
 * KVB_EXACT_ flags. KVB_ERANGE (the message says why) when Attn is not representable (a score
 * beyond double range): *out is untouched, attn unspecified. */
int kvb_exact_side_compute(size_t n, size_t d_key, size_t d_value, const double *K,
                           const double *V, const double *q, double scale, unsigned what,
                           double *attn, kvb_exact_side *out);

/* ---- error ratios ---- */

typedef struct {
  double err_abs, rel_error, ratio_op, ratio_f;
} kvb_errors;

/* num/den, with 0/0 = 0 and x/0 = +Inf for x > 0; NaN when either is NaN. */
double kvb_measure_ratio(double num, double den);

/* The errors of answer z (d_value values, finite) against the exact side x (d_value must match
 * x->d_value). ratio_op (ratio_f) is NaN when x was computed without KVB_EXACT_SOFTMAX and
 * KVB_EXACT_V_OP (KVB_EXACT_V_F). */
int kvb_measure_errors(const kvb_exact_side *x, const double *z, size_t d_value, kvb_errors *out);

/* ---- the INDEX decode (003 Theorem 3.2, App. C) ---- */

/* The instance behind an "index_reduction" stream (lowerbound/index_stream.c), for
 * kvb_index_alice / kvb_index_bob / kvb_index_decide: row i of the stream is bit i, k_i = K_i
 * = Q_i, v_i = V_i = σ_i·e_{π(i)₂}, r = s->r. The stream does not record the partition into
 * groups, so every bit is its own group (groups = n, key row i = k_i): Alice, Bob and the
 * direct attention read only k_i, π(i)₂ and σ_i, and are exact on this view; only
 * kvb_index_eq2_error's adversary, which spends its budget across a group, needs the real
 * groups. KVB_EINVAL when s is not such a stream (d_key ≠ d_value, Q ≠ K, a value row that is
 * not ±e_c, r not finite and positive). Free with kvb_index_free. */
int kvb_measure_index_view(const kvb_stream *s, kvb_index_instance **out);

typedef struct {
  size_t n;          /* bits decoded */
  size_t u_size;     /* |U|, the tokens Alice streamed */
  size_t correct;    /* bits Bob decoded right */
  double accuracy;   /* correct / n */
  double update_s, query_s; /* wall-clock seconds in Alice's updates and Bob's queries */
} kvb_decode;

/* One INDEX game: Alice (kvb_index_alice) feeds U = {i : x_i = 1} into m, Bob
 * (kvb_index_bob) decodes every bit i from m's answer to q_i. On a method failure the status
 * is returned (kvb_strerror_last has the method's message) and *out is untouched. */
int kvb_measure_decode(const kvb_index_instance *inst, const unsigned char *x, kvb_method *m,
                       kvb_decode *out);

/* ---- quantiles ---- */

/* The quantiles a summary line or a plot point shows, over one sample; NaN entries are left
 * out (n counts the rest; ±Inf are kept and sort to the ends). Linear interpolation between
 * order statistics as kvb_quantile (stats.h, GSL), identical on finite data; a level that falls
 * on an order statistic returns it, so a +Inf in the sample does not make the median NaN. */
typedef struct {
  size_t n;
  double q10, q25, median, q75, q90, q99, max;
} kvb_quantiles;

/* The quantiles of x[0..n) into *out. x is scratch: reordered (NaN moved past the rest and the
 * rest sorted). n = 0, or all NaN, gives out->n = 0 and NaN quantiles. */
int kvb_quantiles_of(double *x, size_t n, kvb_quantiles *out);

#endif

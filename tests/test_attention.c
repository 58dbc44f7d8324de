/* test_attention.c — exact attention (000 eq. (1), 003 eq. (1)) against a naive long-double
 * computation, log-sum-exp stability for scores up to 1e4, the score scale (1 in 000, 1/√d in
 * 003), and the norms the bounds are stated in (‖softmax‖₂, ‖V‖_F, ‖V‖_op) on matrices whose
 * values are known in closed form. */
#include "kvbound.h"
#include "unit.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Naive softmax(scale·Kq)ᵀV in long double with the max subtracted (exact up to long-double
 * rounding for the moderate scores used here). */
static void naive(size_t n, size_t dk, size_t dv, const double *K, const double *V,
                  const double *q, double scale, long double *z, long double *lse) {
  long double a[64], mx = -INFINITY, den = 0;
  for (size_t i = 0; i < n; i++) {
    long double s = 0;
    for (size_t c = 0; c < dk; c++) s += (long double)K[i * dk + c] * q[c];
    a[i] = (long double)scale * s;
    if (a[i] > mx) mx = a[i];
  }
  for (size_t j = 0; j < dv; j++) z[j] = 0;
  for (size_t i = 0; i < n; i++) {
    long double e = expl(a[i] - mx);
    den += e;
    for (size_t j = 0; j < dv; j++) z[j] += e * V[i * dv + j];
  }
  for (size_t j = 0; j < dv; j++) z[j] /= den;
  *lse = mx + logl(den);
}

static double max_abs(const double *x, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}

int main(void) {
  gsl_rng *rng = kvb_rng_alloc_substream(2026, 1);
  char name[128];

  /* 1. Small random cases against the naive long-double computation. */
  {
    double worst = 0;
    int ok = 1;
    for (int trial = 0; trial < 200; trial++) {
      size_t n = 1 + gsl_rng_uniform_int(rng, 20), dk = 1 + gsl_rng_uniform_int(rng, 5),
             dv = 1 + gsl_rng_uniform_int(rng, 4);
      double K[20 * 5], V[20 * 4], q[5], z[4], lse;
      kvb_rand_gaussian_vec(rng, K, n * dk, 1.0);
      kvb_rand_gaussian_vec(rng, V, n * dv, 1.0);
      kvb_rand_gaussian_vec(rng, q, dk, 2.0);
      double scale = (trial & 1) ? 1.0 : 1.0 / sqrt((double)dk);
      long double zr[4], lr;
      ok &= kvb_attention_exact(n, dk, dv, K, V, q, scale, z, &lse) == 0;
      naive(n, dk, dv, K, V, q, scale, zr, &lr);
      double vmax = max_abs(V, n * dv);
      for (size_t j = 0; j < dv; j++)
        worst = fmax(worst, (double)fabsl((long double)z[j] - zr[j]) / vmax);
      worst = fmax(worst, (double)fabsl((long double)lse - lr) / fmax(1.0, fabs((double)lr)));
    }
    CHECK(ok && worst <= 1e-13, "attention.exact_vs_naive_long_double",
          "worst relative error %.3g > 1e-13", worst);
  }

  /* 2. Stability: scores up to 1e4 (exp(1e4) overflows double; log-sum-exp must not). */
  {
    /* d_key = 1, q = 1: the scores are the keys. */
    double K[4] = {1e4, 1e4 - 1, 0, -1e4}, V[4 * 2] = {1, 0, 0, 1, 5, 5, -7, 3}, q = 1, z[2],
           lse;
    int rc = kvb_attention_exact(4, 1, 2, K, V, &q, 1.0, z, &lse);
    long double zr[2], lr;
    naive(4, 1, 2, K, V, &q, 1.0, zr, &lr);
    CHECK(rc == 0 && isfinite(z[0]) && isfinite(z[1]) && isfinite(lse),
          "attention.scores_1e4_finite", "z = (%g, %g), lse = %g", z[0], z[1], lse);
    CHECK(fabsl(z[0] - zr[0]) <= 1e-15L && fabsl(z[1] - zr[1]) <= 1e-15L &&
              fabsl(lse - lr) <= 1e-12L * 1e4L,
          "attention.scores_1e4_match_naive", "z = (%.17g, %.17g) vs (%.17Lg, %.17Lg)", z[0], z[1],
          zr[0], zr[1]);
    /* One score dominates by 5000: the answer is that token's value, exactly. */
    double K2[3] = {1e4, 0, 5e3}, V2[3] = {2.5, -1e3, 7}, z2, l2;
    kvb_attention_exact(3, 1, 1, K2, V2, &q, 1.0, &z2, &l2);
    CHECK(z2 == 2.5 && l2 == 1e4, "attention.dominant_score", "z = %.17g, lse = %.17g", z2, l2);
    /* All scores -1e4 (equal): plain mean, no 0/0. */
    double K3[3] = {-1e4, -1e4, -1e4}, V3[3] = {1, 2, 6}, z3;
    kvb_attention_exact(3, 1, 1, K3, V3, &q, 1.0, &z3, NULL);
    CHECK(fabs(z3 - 3.0) <= 1e-15, "attention.equal_negative_scores", "z = %.17g", z3);
    double p[4];
    double pn = kvb_softmax(4, 1, K, &q, 1.0, p), pn2 = kvb_softmax_norm2(4, 1, K, &q, 1.0);
    double e1 = exp(-1.0), ref = sqrt(1 + e1 * e1) / (1 + e1);
    CHECK(isfinite(pn) && fabs(pn - ref) <= 1e-15 && fabs(pn2 - ref) <= 1e-15 &&
              fabs(p[0] + p[1] + p[2] + p[3] - 1) <= 1e-15 && p[3] == 0,
          "attention.softmax_norm_scores_1e4", "‖p‖ = %.17g / %.17g, expected %.17g", pn, pn2,
          ref);
  }

  /* 3. Scale: 1/√d on q equals scale 1 on q/√d; the exact method honors cfg.scale. */
  {
    enum { N = 9, DK = 16, DV = 3 };
    double K[N * DK], V[N * DV], q[DK], qs[DK], z1[DV], z2[DV], zm[DV];
    kvb_rand_gaussian_vec(rng, K, N * DK, 1.0);
    kvb_rand_gaussian_vec(rng, V, N * DV, 1.0);
    kvb_rand_gaussian_vec(rng, q, DK, 3.0);
    for (int c = 0; c < DK; c++) qs[c] = q[c] / 4.0; /* √16 = 4: exact */
    kvb_attention_exact(N, DK, DV, K, V, q, 0.25, z1, NULL);
    kvb_attention_exact(N, DK, DV, K, V, qs, 1.0, z2, NULL);
    double d = 0;
    for (int j = 0; j < DV; j++) d = fmax(d, fabs(z1[j] - z2[j]));
    CHECK(d <= 1e-14, "attention.scale_inv_sqrt_d", "max difference %.3g", d);
    double z0[DV];
    kvb_attention_exact(N, DK, DV, K, V, q, 1.0, z0, NULL);
    double diff = 0;
    for (int j = 0; j < DV; j++) diff = fmax(diff, fabs(z0[j] - z1[j]));
    CHECK(diff > 1e-3, "attention.scale_matters", "scale 1 and 1/4 gave the same answer");
    kvb_method_config cfg = {DK, DV, 0.25, NULL};
    kvb_method *m = NULL;
    int rc = kvb_method_alloc("exact", &cfg, NULL, &m);
    for (int i = 0; rc == 0 && i < N; i++) rc = kvb_method_update(m, K + i * DK, DK, V + i * DV, DV);
    if (rc == 0) rc = kvb_method_query(m, q, DK, zm, DV);
    d = 0;
    for (int j = 0; j < DV; j++) d = fmax(d, fabs(zm[j] - z1[j]));
    CHECK(rc == 0 && d <= 1e-14, "attention.exact_method_scale", "rc %d, difference %.3g", rc, d);
    kvb_method_free(m);
  }

  /* 4. Norms on matrices with known values. */
  {
    double op;
    double D[2 * 2] = {3, 0, 0, 4}; /* diagonal: ‖·‖_F = 5, ‖·‖_op = 4 */
    int rc = kvb_operator_norm(2, 2, D, &op);
    CHECK(rc == 0 && fabs(op - 4) <= 1e-14 && fabs(kvb_frobenius_norm(2, 2, D) - 5) <= 1e-15,
          "norms.diagonal", "op %.17g F %.17g", op, kvb_frobenius_norm(2, 2, D));
    /* rank one u vᵀ, ‖u‖ = 3, ‖v‖ = 5: ‖·‖_op = ‖·‖_F = 15; as 3×2 (n > d) and 2×3 (n < d). */
    double u[3] = {1, 2, 2}, v[2] = {3, 4}, R1[6], R1t[6];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++) R1[i * 2 + j] = R1t[j * 3 + i] = u[i] * v[j];
    double op1, op2;
    kvb_operator_norm(3, 2, R1, &op1);
    kvb_operator_norm(2, 3, R1t, &op2);
    CHECK(fabs(op1 - 15) <= 1e-13 && fabs(op2 - 15) <= 1e-13 &&
              fabs(kvb_frobenius_norm(3, 2, R1) - 15) <= 1e-14,
          "norms.rank_one", "op %.17g / %.17g", op1, op2);
    /* n < d and n > d with orthogonal rows: singular values are the row norms 2 and 1. */
    double W[2 * 5] = {0, 2, 0, 0, 0, 1, 0, 0, 0, 0}, Wt[5 * 2];
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 5; j++) Wt[j * 2 + i] = W[i * 5 + j];
    kvb_operator_norm(2, 5, W, &op1);
    kvb_operator_norm(5, 2, Wt, &op2);
    CHECK(fabs(op1 - 2) <= 1e-14 && fabs(op2 - 2) <= 1e-14 &&
              fabs(kvb_frobenius_norm(2, 5, W) - sqrt(5.0)) <= 1e-15,
          "norms.n_lt_d_and_n_gt_d", "op %.17g / %.17g", op1, op2);
    /* Extreme magnitudes: neither overflow nor underflow in F or op. */
    double B[2] = {3e200, 4e200}, T[2] = {3e-200, 4e-200};
    kvb_operator_norm(1, 2, B, &op1);
    kvb_operator_norm(2, 1, T, &op2);
    CHECK(fabs(kvb_frobenius_norm(1, 2, B) / 5e200 - 1) <= 1e-15 &&
              fabs(kvb_frobenius_norm(2, 1, T) / 5e-200 - 1) <= 1e-15 &&
              fabs(op1 / 5e200 - 1) <= 1e-14 && fabs(op2 / 5e-200 - 1) <= 1e-14,
          "norms.extreme_magnitudes", "op %.17g / %.17g", op1, op2);
    /* ‖V‖_op² is the top eigenvalue of VᵀV: compare with long-double power iteration on a
     * random 7×3 matrix; and ‖V‖_op ≤ ‖V‖_F ≤ √rank·‖V‖_op. */
    double G[7 * 3];
    kvb_rand_gaussian_vec(rng, G, 21, 1.0);
    long double A[3][3] = {{0}}, x[3] = {1, 1, 1}, lam = 0;
    for (int i = 0; i < 7; i++)
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) A[a][b] += (long double)G[i * 3 + a] * G[i * 3 + b];
    for (int it = 0; it < 2000; it++) {
      long double y[3] = {0}, nn = 0;
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) y[a] += A[a][b] * x[b];
      for (int a = 0; a < 3; a++) nn += y[a] * y[a];
      nn = sqrtl(nn);
      for (int a = 0; a < 3; a++) x[a] = y[a] / nn;
      lam = nn;
    }
    kvb_operator_norm(7, 3, G, &op);
    double F = kvb_frobenius_norm(7, 3, G);
    CHECK(fabs(op - (double)sqrtl(lam)) <= 1e-12 * op && op <= F && F <= sqrt(3.0) * op,
          "norms.op_vs_power_iteration", "op %.17g, power iteration %.17Lg, F %.17g", op,
          sqrtl(lam), F);
    double Z[6] = {0};
    kvb_operator_norm(3, 2, Z, &op);
    CHECK(op == 0 && kvb_frobenius_norm(3, 2, Z) == 0, "norms.zero_matrix", "op %g", op);
    rc = kvb_operator_norm(3, 2, NULL, &op);
    CHECK(rc == KVB_ENULL, "norms.op_null_is_error", "rc %d", rc);
    /* A 2048×256 known answer at a real-model shape: orthonormal Walsh columns h_j (entries
     * ±1/√2048) scaled by σ_j = 50·(1 − j/512), then mixed by 2000 Givens rotations of column pairs
     * (right-multiplying by an orthogonal matrix keeps the singular values), so ‖V‖_op = σ_0 = 50.
     * GSL's one-sided Jacobi SVD, the previous implementation, stopped short on such shapes. */
    {
      size_t nn2 = 2048, dd = 256;
      double *W = malloc(nn2 * dd * sizeof *W);
      if (!W) {
        CHECK(0, "norms.op_2048x256_known", "out of memory");
      } else {
        for (size_t i = 0; i < nn2; i++)
          for (size_t j = 0; j < dd; j++)
            W[i * dd + j] = (__builtin_popcountl(i & j) % 2 ? -1.0 : 1.0) / sqrt((double)nn2) * 50.0 *
                            (1.0 - (double)j / 512.0);
        uint64_t lc = 12345;
        for (int r = 0; r < 2000; r++) {
          lc = lc * 6364136223846793005ull + 1442695040888963407ull;
          size_t a = (lc >> 33) % dd, b = (lc >> 13) % dd;
          if (a == b) continue;
          double th = (double)(lc % 1000) / 1000.0 * 6.283185307179586, c = cos(th), sn = sin(th);
          for (size_t i = 0; i < nn2; i++) {
            double x = W[i * dd + a], y = W[i * dd + b];
            W[i * dd + a] = c * x - sn * y, W[i * dd + b] = sn * x + c * y;
          }
        }
        double opw = 0;
        rc = kvb_operator_norm(nn2, dd, W, &opw);
        CHECK(rc == KVB_OK && fabs(opw - 50.0) <= 1e-12 * 50.0, "norms.op_2048x256_known",
              "op %.17g, want 50 (rel %.3g)", opw, fabs(opw - 50.0) / 50.0);
        free(W);
      }
    }
  }

  /* 5. Degenerate: the empty context is an error, not a NaN. */
  {
    double z, q = 1;
    CHECK(kvb_attention_exact(0, 1, 1, NULL, NULL, &q, 1.0, &z, NULL) == KVB_EINVAL,
          "attention.empty_is_error", "n = 0 accepted");
    snprintf(name, sizeof name, "attention.expsum_empty_ratio");
    kvb_expsum a, b;
    double aa, bb, out;
    kvb_expsum_init(&a, &aa, 1);
    kvb_expsum_init(&b, &bb, 1);
    CHECK(kvb_expsum_ratio(&a, &b, &out) == -1, name, "0/0 accepted");
  }
  /* 6. Finite inputs whose products overflow: computed where the answer is representable,
   * KVB_ERANGE with a message where it is not — never NaN/Inf with KVB_OK. */
  {
    /* scores: (1e200,1e200)·(1e200,-1e200) = 0 exactly, though each product is 1e400 */
    double k2[2] = {1e200, 1e200}, q2[2] = {1e200, -1e200};
    double sc = kvb_score(k2, q2, 2, 1.0);
    CHECK(sc == 0, "overflow.score_cancels", "score %g (products overflow)", sc);
    double k1 = 1e160, q1 = 2e160;
    sc = kvb_score(&k1, &q1, 1, 1e-20);
    CHECK(fabs(sc - 2e300) <= 1e-15 * 2e300, "overflow.score_rescaled", "score %.17g, want 2e300", sc);
    sc = kvb_score(&k1, &q1, 1, 1.0);
    CHECK(isinf(sc) && sc > 0, "overflow.score_beyond_range_is_inf", "score %g", sc);
    /* exact attention where products overflow but scores fit: row 1 wins (2e300 vs 0) */
    double K[4] = {1e160, -1e160, 1e160, 1e160}, V[4] = {1, 2, 3, 4}, q[2] = {1e160, 1e160}, z[2];
    int rc = kvb_attention_exact(2, 2, 2, K, V, q, 1e-20, z, NULL);
    CHECK(rc == KVB_OK && z[0] == 3 && z[1] == 4, "overflow.exact_products_overflow_scores_fit",
          "rc %d z (%g, %g), want (3, 4)", rc, z[0], z[1]);
    /* values near DBL_MAX: Σ e_i v_i overflows; z is their mean (equal scores) */
    double K0[3] = {0, 0, 0}, Vb[3] = {1.5e308, 1.7e308, 1.6e308}, qz = 1, zb = 0;
    rc = kvb_attention_exact(3, 1, 1, K0, Vb, &qz, 1.0, &zb, NULL);
    CHECK(rc == KVB_OK && fabs(zb - 1.6e308) <= 1e-15 * 1.6e308, "overflow.exact_value_sum_rescaled",
          "rc %d z %.17g, want 1.6e308", rc, zb);
    /* a score beyond double range: KVB_ERANGE naming the problem */
    double Kb[2] = {1e200, -1e200}, qb = 1e200;
    kvb_error_clear();
    rc = kvb_attention_exact(2, 1, 1, Kb, V, &qb, 1.0, &zb, NULL);
    CHECK(rc == KVB_ERANGE && strstr(kvb_strerror_last(), "beyond double range"),
          "overflow.exact_score_beyond_range_is_erange", "rc %d: %s", rc, kvb_strerror_last());
    double p2[2];
    CHECK(isnan(kvb_softmax(2, 1, Kb, &qb, 1.0, p2)) && isnan(kvb_softmax_norm2(2, 1, Kb, &qb, 1.0)),
          "overflow.softmax_beyond_range_is_nan", "softmax of +-1e400 scores");
    /* methods through the validating interface: keys ~1e200, values ~1, query 1e200·k-ish */
    const char *names[3] = {"exact", "recent_kcenter", "subgen"};
    for (int mi = 0; mi < 3; mi++) {
      kvb_params p;
      kvb_params_init(&p);
      if (mi == 1) {
        kvb_params_set(&p, "window", 2);
        kvb_params_set(&p, "centers", 2);
      } else if (mi == 2) {
        kvb_params_set(&p, "delta", 0.5);
        kvb_params_set(&p, "t", 2);
        kvb_params_set(&p, "s", 4);
      }
      kvb_method_config cfg = {2, 2, 1.0, rng};
      kvb_method *m = NULL;
      int ok = kvb_method_alloc(names[mi], &cfg, &p, &m) == KVB_OK;
      for (int i = 0; ok && i < 12; i++) {
        double k[2] = {(i % 3 - 1) * 1e200, (i % 2 ? 1 : -1) * 3e199}, v[2] = {1 + i, 2 - i};
        ok = kvb_method_update(m, k, 2, v, 2) == KVB_OK;
      }
      double qq[2] = {1e200, 1e200}, zz[2] = {0, 0}, q0[2] = {0, 0};
      int qrc = ok ? kvb_method_query(m, qq, 2, zz, 2) : -1;
      char msg[600];
      snprintf(msg, sizeof msg, "%s", kvb_strerror_last());
      /* state unchanged: a representable query still answers finitely */
      int rc0 = ok ? kvb_method_query(m, q0, 2, zz, 2) : -1;
      char nm[96];
      snprintf(nm, sizeof nm, "overflow.method_%s_scores_beyond_range_is_erange", names[mi]);
      CHECK(ok && qrc == KVB_ERANGE && strstr(msg, "beyond double range") && rc0 == KVB_OK &&
                isfinite(zz[0]) && isfinite(zz[1]),
            nm, "alloc/update ok %d, query rc %d (%s), then q = 0: rc %d z (%g, %g)", ok, qrc, msg,
            rc0, zz[0], zz[1]);
      kvb_method_free(m);
    }
  }
  gsl_rng_free(rng);
  UNIT_EXIT();
}

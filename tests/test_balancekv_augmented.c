/* test_balancekv_augmented.c — hand-worked cases of augmented BalanceKV (balancekv_augmented.h;
 * the authors' src/balanced_walk.py, balanced_walk_needle_detection), each with the mutant it
 * rejects:
 *   - detector: the threshold is μ ≤ 0 (a token whose μ is exactly 0 is flagged; mutant
 *     threshold_strict is not), the ±25 dilation (no_dilation, dilation_24), the raw (uncentered)
 *     keys;
 *   - the masked walk: flagged tokens stay out of the partial sums (flagged_in_sums);
 *   - the protected-first halving: flagged, then +1, then −1, multipliers 1, 2, 0; and with no
 *     flag anywhere balancekv_block's rule (bit for bit the same kept set as kvb_bkvb_compress);
 *   - the method: compresses the middle [f, n − w) once, its mask and kept set as the core's;
 *     bad input leaves no state. */
#include "balancekv_augmented.h"
#include "balancekv_block.h"
#include "kvb_error.h"
#include "method.h"
#include "pcg32.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const kvb_method_type kvb_method_balancekv_augmented;

static void detector_cases(void) {
  /* μ exactly 0: keys (d = 1) 1 and k1 = −1.0000000199999999, one block of b = 2. Token 0:
   * ((0 + (1e-8 + 1·1)) + (1e-8 + 1·k1)) = 0 exactly in double (the authors' sum of 1e-8 + ⟨k_i,
   * k_j⟩ over the block's slots), so μ_0 = 0 → flagged under ≤; token 1: μ_1 ≈ 1e-8 > 0. Both end
   * up flagged by the dilation (n = 2 < 25). Under < nothing is flagged. */
  double K0[2] = {1.0, -1.0000000199999999};
  unsigned char f[2];
  size_t nf = 9;
  int st = kvb_bkva_detect(2, 1, K0, 2, 0, f, &nf);
  CHECK(st == 0 && nf == 2 && f[0] && f[1], "bkva.detect.threshold_le",
        "st %d, %zu flagged (%d %d); want 2 (μ_0 = 0 is flagged)", st, nf, f[0], f[1]);
  st = kvb_bkva_detect(2, 1, K0, 2, KVB_BKVA_MUT_STRICT, f, &nf);
  CHECK(st == 0 && nf == 0, "bkva.detect.rejects_mutant.threshold_strict",
        "the strict threshold flagged %zu (want 0: it must differ from ≤)", nf);

  /* dilation: n = 80, b = 16, d = 1, every key 1 except token 40 = −2. Block 2 (32..47): token 40
   * has Σ_j ⟨k40, k_j⟩ = 15·(−2) + 4 = −26 → flagged; every other token 14·1 − 2 + 1 = 13 > 0
   * (blocks without token 40: 16 > 0). Raw flags {40}; dilated ±25: 15..65, 51 tokens. */
  double K[80];
  for (int i = 0; i < 80; i++) K[i] = 1.0;
  K[40] = -2.0;
  unsigned char fl[80];
  st = kvb_bkva_detect(80, 1, K, 16, 0, fl, &nf);
  int ok = st == 0 && nf == 51;
  for (int i = 0; i < 80; i++) ok &= fl[i] == (i >= 15 && i <= 65);
  CHECK(ok, "bkva.detect.dilation_25", "st %d, %zu flagged; want exactly 15..65 (51)", st, nf);
  st = kvb_bkva_detect(80, 1, K, 16, KVB_BKVA_MUT_NO_DILATION, fl, &nf);
  CHECK(st == 0 && nf != 51, "bkva.detect.rejects_mutant.no_dilation", "%zu flagged", nf);
  st = kvb_bkva_detect(80, 1, K, 16, KVB_BKVA_MUT_DILATE_24, fl, &nf);
  CHECK(st == 0 && nf != 51, "bkva.detect.rejects_mutant.dilation_24", "%zu flagged", nf);
  /* raw keys, not centered: adding a constant c to every key changes the flags (a centered
   * statistic would be shift-invariant). With K + 3: token 40 = 1, others 4: nothing flagged. */
  double Ks[80];
  for (int i = 0; i < 80; i++) Ks[i] = K[i] + 3.0;
  st = kvb_bkva_detect(80, 1, Ks, 16, 0, fl, &nf);
  CHECK(st == 0 && nf == 0, "bkva.detect.raw_keys", "%zu flagged after a shift (want 0)", nf);
  /* bad input */
  double Kn[2] = {1.0, NAN};
  CHECK(kvb_bkva_detect(2, 1, Kn, 2, 0, f, &nf) == KVB_EDOM &&
            kvb_bkva_detect(0, 1, K0, 2, 0, f, &nf) == KVB_EINVAL &&
            kvb_bkva_detect(2, 1, K0, 0, 0, f, &nf) == KVB_EINVAL &&
            kvb_bkva_detect(2, 1, NULL, 2, 0, f, &nf) == KVB_ENULL,
        "bkva.detect.bad_input", "expected EDOM, EINVAL, EINVAL, ENULL");
}

static void halving_cases(void) {
  /* s = + F − + F − − +, h = 4: flagged 1, 4 (×1), then +1 at 0, 3 (×2) */
  int8_t s[8] = {1, 0, -1, 1, 0, -1, -1, 1};
  size_t keep[8];
  double mult[8];
  size_t h = kvb_bkva_halve_protected(8, s, keep, mult);
  CHECK(h == 4 && keep[0] == 1 && keep[1] == 4 && keep[2] == 0 && keep[3] == 3 && mult[0] == 1 &&
            mult[1] == 1 && mult[2] == 2 && mult[3] == 2,
        "bkva.halve.flagged_then_plus", "h %zu keep %zu %zu %zu %zu mult %g %g %g %g", h, keep[0],
        keep[1], keep[2], keep[3], mult[0], mult[1], mult[2], mult[3]);
  /* s = − F − − − +, h = 3: flagged 1 (×1), +1 at 5 (×2), then −1 at 0 with multiplier 0 */
  int8_t s2[6] = {-1, 0, -1, -1, -1, 1};
  h = kvb_bkva_halve_protected(6, s2, keep, mult);
  CHECK(h == 3 && keep[0] == 1 && keep[1] == 5 && keep[2] == 0 && mult[0] == 1 && mult[1] == 2 &&
            mult[2] == 0,
        "bkva.halve.minus_weight_zero", "h %zu keep %zu %zu %zu mult %g %g %g", h, keep[0],
        keep[1], keep[2], mult[0], mult[1], mult[2]);
  /* more flagged than h: the first h flagged, in position order */
  int8_t s3[4] = {0, 1, 0, 0};
  h = kvb_bkva_halve_protected(4, s3, keep, mult);
  CHECK(h == 2 && keep[0] == 0 && keep[1] == 2 && mult[0] == 1 && mult[1] == 1,
        "bkva.halve.flagged_beyond_h", "keep %zu %zu", keep[0], keep[1]);
  int8_t bad[2] = {2, 1};
  CHECK(kvb_bkva_halve_protected(2, bad, keep, mult) == 0 &&
            kvb_bkva_halve_protected(1, s, keep, mult) == 0,
        "bkva.halve.bad_input", "a sign 2 or m = 1 must give 0");
}

/* The masked walk, by hand. n = 6, one block (b = 6), T = 1, d = 1, every key 0 (so the centered
 * keys are 0 and F_ij = exp(0)·(v_i v_j + 0.025)), v = 1 1 1 0 0 0, token 1 flagged, γ = 4,
 * u = ·, .3, .3, .7, .7, .65. Faithful (token 1 left out of the sums):
 *   j=1: Σ = F01 = 1.025 → p < 0 → −1 (then 0: flagged)
 *   j=2: Σ = F02 = 1.025 → −1
 *   j=3: Σ = F03 − F23 = 0 → p = .5 < .7 → −1
 *   j=4: Σ = .025 − .025 − .025 = −.025 → p = .6 → −1
 *   j=5: Σ = −.05 → p = .7 > .65 → +1
 * signs + F − − − +, halving (h = 3): flagged 1 (×1), +1 at 0, 5 (×2).
 * flagged_in_sums (token 1's drawn −1 enters): j=2: Σ = 1.025 − 1.025 = 0 → p = .5 > .3 → +1;
 * j=3: .025 → p = .4 → −1; j=4: 0 → −1; j=5: −.025 → p = .6 < .65 → −1: keeps 1, 0, 2.
 * no_protect (balancekv_block's rule, the flagged token read +1): + + − − − +, c = 5, keeps the
 * −1 at 2, 3, 4 with ×2. */
static void walk_cases(void) {
  double K[6] = {0, 0, 0, 0, 0, 0}, V[6] = {1, 1, 1, 0, 0, 0};
  double u0[6] = {0.5, 0.3, 0.3, 0.7, 0.7, 0.65};
  const double *u[1] = {u0};
  unsigned char fl[6] = {0, 1, 0, 0, 0, 0};
  kvb_bkvb_opts o;
  kvb_bkvb_opts_default(&o);
  o.b = 6, o.T = 1, o.gamma = 4, o.c0 = 0.025;
  size_t idx[3];
  double w[3];
  unsigned char kf[3];
  int st = kvb_bkva_compress(1, 6, 1, 1, K, V, &o, fl, 0, 0, u, NULL, idx, w, kf);
  CHECK(st == 0 && idx[0] == 1 && idx[1] == 0 && idx[2] == 5 && w[0] == 1 && w[1] == 2 &&
            w[2] == 2 && kf[0] == 1 && kf[1] == 0,
        "bkva.walk.flagged_out_of_sums", "st %d keep %zu %zu %zu w %g %g %g", st, idx[0], idx[1],
        idx[2], w[0], w[1], w[2]);
  st = kvb_bkva_compress(1, 6, 1, 1, K, V, &o, fl, 0, KVB_BKVA_MUT_FLAGGED_IN_SUMS, u, NULL, idx,
                         w, NULL);
  CHECK(st == 0 && idx[0] == 1 && idx[1] == 0 && idx[2] == 2,
        "bkva.walk.rejects_mutant.flagged_in_sums", "keep %zu %zu %zu (want 1 0 2: differs)",
        idx[0], idx[1], idx[2]);
  st = kvb_bkva_compress(1, 6, 1, 1, K, V, &o, fl, 0, KVB_BKVA_MUT_NO_PROTECT, u, NULL, idx, w, NULL);
  CHECK(st == 0 && idx[0] == 2 && idx[1] == 3 && idx[2] == 4 && w[0] == 2,
        "bkva.walk.rejects_mutant.no_protect", "keep %zu %zu %zu w %g", idx[0], idx[1], idx[2], w[0]);
  /* the model-wide branch: no flag in this head, model_any = 1 → protected halving
   * (+1 first, −1 with weight 0) instead of balancekv_block's rule */
  unsigned char none[6] = {0};
  st = kvb_bkva_compress(1, 6, 1, 1, K, V, &o, none, 1, 0, u, NULL, idx, w, NULL);
  int zero = 0;
  for (int i = 0; i < 3; i++) zero += w[i] == 0;
  size_t idx2[3];
  double w2[3];
  int st2 = kvb_bkva_compress(1, 6, 1, 1, K, V, &o, none, 0, 0, u, NULL, idx2, w2, NULL);
  CHECK(st == 0 && st2 == 0 && (zero > 0 || w[0] == 2) && w2[0] != 0,
        "bkva.walk.model_any_branch", "protected branch weights %g %g %g", w[0], w[1], w[2]);
}

/* No flag anywhere: the same kept set and weights as balancekv_block's core, bit for bit
 * (kvbound's own cross-check; tests/test_authors_replay.c checks both against the authors). */
static void plain_equals_block(void) {
  enum { H = 3, N = 300, D = 8 };
  static double K[H * N * D], V[H * N * D];
  gsl_rng *g = kvb_rng_alloc_substream(7, 1);
  for (size_t i = 0; i < H * N * D; i++) K[i] = gsl_rng_uniform(g) - 0.5, V[i] = gsl_rng_uniform(g);
  kvb_bkvb_opts o;
  kvb_bkvb_opts_default(&o);
  o.b = 32, o.T = 2, o.threads = 1;
  size_t kept = N >> 2;
  size_t ia[H * (N >> 2)], ib[H * (N >> 2)];
  double wa[H * (N >> 2)], wb[H * (N >> 2)];
  gsl_rng *r1 = kvb_rng_alloc_substream(9, 2), *r2 = kvb_rng_alloc_substream(9, 2);
  int s1 = kvb_bkvb_compress(H, N, D, D, K, V, &o, NULL, r1, ia, wa, NULL);
  int s2 = kvb_bkva_compress(H, N, D, D, K, V, &o, NULL, 0, 0, NULL, r2, ib, wb, NULL);
  int same = s1 == 0 && s2 == 0;
  for (size_t i = 0; same && i < H * kept; i++) same = ia[i] == ib[i] && wa[i] == wb[i];
  CHECK(same, "bkva.no_flags_equals_balancekv_block", "st %d %d: kept sets differ", s1, s2);
  gsl_rng_free(g), gsl_rng_free(r1), gsl_rng_free(r2);
}

/* The method: middle [f, n − w) compressed once with its own detector (detect = 1, one head),
 * the mask and kept set those of the core on the middle. */
static void method_cases(void) {
  enum { N = 200, D = 4 };
  gsl_rng *g = kvb_rng_alloc_substream(11, 3);
  kvb_method_config cfg = {D, D, 0.5, g};
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "f", 8), kvb_params_set(&p, "w", 8), kvb_params_set(&p, "b", 16);
  kvb_method *m = NULL;
  int st = kvb_method_alloc_type(&kvb_method_balancekv_augmented, &cfg, &p, &m);
  CHECK(st == 0 && m, "bkva.method.alloc", "status %d", st);
  if (!m) return;
  double k[D], v[D];
  for (int i = 0; i < N; i++) {
    for (int a = 0; a < D; a++) k[a] = 1.0 + 0.1 * a, v[a] = (double)((i * 7 + a) % 5) / 5.0;
    if (i == 100) for (int a = 0; a < D; a++) k[a] = -2.0; /* anti-correlated: flagged ±25 */
    st |= kvb_method_update(m, k, D, v, D);
  }
  double q[D] = {0.1, 0.2, 0.3, 0.4}, z[D];
  st |= kvb_method_query(m, q, D, z, D);
  const unsigned char *mask;
  size_t n, nf, cnt;
  int any;
  const size_t *pos;
  const double *w;
  st |= kvb_bkva_mask(m, &mask, &n, &nf, &any);
  st |= kvb_bkva_kept_set(m, &cnt, &pos, &w);
  /* token 100 is middle position 92: flags 67..117 */
  int ok = st == 0 && n == N - 16 && nf == 51 && any && cnt == (N - 16) / 4;
  for (size_t i = 0; ok && i < n; i++) ok = mask[i] == (i >= 67 && i <= 117);
  /* the flagged tokens come first with weight 1 (51 > kept = 46: the first 46 of them) */
  for (size_t i = 0; ok && i < cnt; i++) ok = pos[i] == 8 + 67 + i && w[i] == 1;
  CHECK(ok, "bkva.method.mask_and_kept", "st %d: middle %zu, %zu flagged, any %d, %zu kept", st,
        n, nf, any, cnt);
  kvb_memory mem;
  kvb_method_memory(m, &mem);
  CHECK(mem.vectors == 2 * (16 + cnt), "bkva.method.memory", "%zu vectors, want %zu", mem.vectors,
        2 * (16 + cnt));
  /* a shared mask of the wrong length is refused at compression, naming both lengths */
  unsigned char sh[10] = {0};
  st = kvb_bkva_share(m, sh, 10, 0);
  int st2 = kvb_method_query(m, q, D, z, D);
  CHECK(st == 0 && st2 == KVB_ESTATE, "bkva.method.share_length", "share %d, query %d", st, st2);
  kvb_method_free(m);
  gsl_rng_free(g);
}

int main(void) {
  detector_cases();
  halving_cases();
  walk_cases();
  plain_equals_block();
  method_cases();
  UNIT_EXIT();
}

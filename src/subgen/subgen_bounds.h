/* subgen_bounds.h — the explicit constants kvbound derives for 000 Theorem 1
 * (= 001 Theorem 2.4), whose statement only says t = Ω(ε⁻²e^{2δr} log n), s = Ω(ε⁻²d).
 * Derivation: props/subgen_theorem1_constants.md (from the proof in 001 Appendix A.3).
 *
 *   t = ⌈27 ε⁻² e^{2δ·r·scale} ln(400 m)⌉   gives eq. (5): τ ∈ (1 ± ε/3)Σ_j exp(scale⟨k_j,q⟩)
 *                                          with probability ≥ 0.995, m ≥ m′ (m′ ≤ n always;
 *                                          m′ ≤ m on (m, δ)-clusterable keys);
 *   s = ⌈1800 ε⁻² ρ⌉                       gives eq. (6) with probability ≥ 0.995, where ρ is
 *                                          the stable rank ‖V‖_F²/‖V‖_op² or any upper bound
 *                                          on it (the value dimension d, as the theorem says);
 *   together (union bound, ε ≤ 1) eq. (3) with probability ≥ 0.99.
 *
 * The property checks (props/subgen_theorem1.c), the practicality table and the CLI all use
 * these functions, so there is one formula. Both return a KVB_* status; the requirement is a
 * double because it can exceed any integer type (it is +Inf past DBL_MAX). */
#ifndef KVB_SUBGEN_BOUNDS_H
#define KVB_SUBGEN_BOUNDS_H

/* Failure probability each half of the proof is given (001 A.3: 0.995 each). */
#define KVB_SUBGEN_FAIL_TAU 0.005
#define KVB_SUBGEN_FAIL_Z 0.005

/* t for accuracy ε ∈ (0, 1], threshold δ > 0, query norm bound r ≥ 0, score scale > 0
 * (1 in 000; scores are scale·⟨q, k⟩) and cluster count bound m ≥ 1. */
int kvb_subgen_required_t(double eps, double delta, double r, double scale, double m,
                          double *t_out);
/* ln of the unrounded t (finite even where t overflows). Same validation. */
int kvb_subgen_required_log_t(double eps, double delta, double r, double scale, double m,
                              double *log_t_out);
/* s for accuracy ε ∈ (0, 1] and stable rank (or dimension) rho ≥ 1. */
int kvb_subgen_required_s(double eps, double rho, double *s_out);

#endif

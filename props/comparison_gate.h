/* comparison_gate.h — the three-way rule of a pre-registered comparison cell with its power gate
 * (DESIGN, statistical policy): a test that rejects toward the claim gives HOLDS (VACUOUS when the
 * z ≡ 0 control rejected the same way), one that rejects against it FAILS, and no rejection is
 * NOT-OBSERVED only with power ≥ 0.9 at the stated effect, INCONCLUSIVE below (its power kept for
 * the check's summary). props/real_model_e2e.c and props/long_context.c judge their cells with it. */
#ifndef KVB_PROPS_COMPARISON_GATE_H
#define KVB_PROPS_COMPARISON_GATE_H

#include "prop.h"

typedef struct {
  int wins, zero_too, inconclusive;
  double power_max; /* the largest power among the INCONCLUSIVE cells */
} prop_gate_tally;

/* v: +1 the test rejected toward the claim, −1 against it, 0 neither; vz: the z ≡ 0 control
 * rejected toward it too; power: the design's power at the stated effect. */
prop_verdict prop_gated(int v, int vz, double power, prop_gate_tally *tl);

#endif

/* comparison_gate.c — the power-gated three-way rule (comparison_gate.h). */
#include "comparison_gate.h"

#include <math.h>

prop_verdict prop_gated(int v, int vz, double power, prop_gate_tally *tl) {
  if (v > 0) {
    tl->wins++, tl->zero_too += vz;
    return vz ? PROP_VACUOUS : PROP_HOLDS;
  }
  if (v < 0) return PROP_FAILS;
  if (power >= 0.9) return PROP_NOT_OBSERVED;
  tl->inconclusive++, tl->power_max = fmax(tl->power_max, power);
  return PROP_INCONCLUSIVE;
}

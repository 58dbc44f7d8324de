/* method_z_zero.c — the trivial estimator z ≡ 0: keeps nothing and answers the zero vector.
 *
 * It is a *control*, not an algorithm of the papers: every error bound checked by kvbound is
 * also run on z ≡ 0 through the same assertion (props/README.md, Verdicts: controls). Its error is exactly
 * ‖Attn‖₂ (or, for an unnormalized target, ‖exp(scale·Kq)ᵀV‖₂), so a bound that z ≡ 0 meets
 * says nothing about the method it is stated for, and the verdict is VACUOUS. */
#include "kvb_error.h"
#include "method.h"

#include <string.h>

static const kvb_param_spec z_zero_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

static int z_zero_init(kvb_method *m, const kvb_params *p) {
  (void)p;
  m->state = NULL;
  return KVB_OK;
}

static int z_zero_update(kvb_method *m, const double *k, const double *v) {
  (void)m, (void)k, (void)v;
  return KVB_OK;
}

static int z_zero_query(kvb_method *m, const double *q, double *z) {
  (void)q;
  memset(z, 0, m->d_value * sizeof *z);
  return KVB_OK;
}

static void z_zero_memory(const kvb_method *m, kvb_memory *out) {
  (void)m;
  out->vectors = 0;
  out->bytes = 0;
}

static void z_zero_free(void *state) { (void)state; }

const kvb_method_type kvb_method_z_zero = {
    "z_zero", "control: answers z = 0 and keeps nothing (a bound it meets is vacuous)",
    "kvbound control (props/README.md, Verdicts: controls)", z_zero_params, NULL, 0, z_zero_init, z_zero_update,
    z_zero_query, z_zero_memory, z_zero_free};

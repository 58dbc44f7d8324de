/* fp16.c — see fp16.h. */
#include "fp16.h"

#include <math.h>

/* Round a nonnegative double r (< 2^53) to the nearest integer, ties to the even one, without
 * reading the current rounding mode. */
static double round_half_even(double r) {
  double f = floor(r), diff = r - f; /* exact: r and f share the exponent range */
  if (diff > 0.5) return f + 1;
  if (diff < 0.5) return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1;
}

uint16_t kvb_fp16_from_double(double x) {
  uint16_t sign = signbit(x) ? 0x8000u : 0u;
  if (isnan(x)) return (uint16_t)(sign | 0x7E00u);
  double a = fabs(x);
  if (a >= 65520.0) return (uint16_t)(sign | 0x7C00u); /* Inf, and everything rounding to 2^16 */
  /* The spacing of fp16 numbers near a: 2^(E−10) for a normal a = 1.f·2^E (E ≥ −14), 2^-24 for
   * the subnormals (a < 2^-14). a/quantum is exact (a power-of-two scaling). */
  int e;
  (void)frexp(a, &e); /* a = m·2^e, m ∈ [0.5, 1): E = e − 1 */
  int E = e - 1;
  if (a == 0.0 || E < -14) E = -14;
  double quantum = ldexp(1.0, E - 10);
  double k = round_half_even(a / quantum); /* the rounded value is k·quantum */
  if (k == 0.0) return sign;
  if (E == -14 && k < 1024.0) return (uint16_t)(sign | (uint16_t)k); /* subnormal */
  if (k == 2048.0) k = 1024.0, E++;          /* rounding carried into the next binade */
  if (E > 15) return (uint16_t)(sign | 0x7C00u); /* unreachable below 65520; kept for safety */
  /* normal: k ∈ [1024, 2047], value = (k/1024)·2^E */
  return (uint16_t)(sign | (uint16_t)((E + 15) << 10) | (uint16_t)((int)k - 1024));
}

double kvb_fp16_to_double(uint16_t h) {
  double s = (h & 0x8000u) ? -1.0 : 1.0;
  int ex = (h >> 10) & 0x1F, fr = h & 0x3FF;
  if (ex == 0) return s * ldexp((double)fr, -24);
  if (ex == 31) return fr ? NAN : s * INFINITY;
  return s * ldexp((double)(1024 + fr), ex - 25);
}

double kvb_fp16_round(double x) { return kvb_fp16_to_double(kvb_fp16_from_double(x)); }

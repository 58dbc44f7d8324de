/* fp16.h — IEEE 754 binary16 ("half precision") conversion, written for the quantized caches
 * (src/baselines/quant_cache.h): llama.cpp's q8_0 and q4_0 blocks store their scale as an fp16
 * number, so the scale a block dequantizes with is the fp16 rounding of max|x|/127 (or of
 * max/−8), not the exact quotient.
 *
 * binary16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. Normal numbers
 * 2^-14 ≤ |x| ≤ 65504 = (2 − 2^-10)·2^15, subnormals k·2^-24 (k = 1..1023), ±0, ±Inf, NaN.
 * kvb_fp16_from_double rounds to nearest with ties to even in one step from the double (no
 * intermediate float, so there is no double rounding): |x| ≥ 65520 (the midpoint between 65504
 * and 2^16) becomes ±Inf (65520 itself ties to the even neighbour 2^16, which overflows), |x| ≤
 * 2^-25 becomes ±0 (2^-25 itself ties to the even neighbour 0), NaN becomes the quiet NaN 0x7E00
 * (sign kept). The arithmetic does not depend on the floating-point rounding mode. */
#ifndef KVB_FP16_H
#define KVB_FP16_H

#include <stdint.h>

/* The binary16 bit pattern nearest to x (ties to even). */
uint16_t kvb_fp16_from_double(double x);
/* The value of a binary16 bit pattern (exact: every fp16 value is a double). */
double kvb_fp16_to_double(uint16_t h);
/* kvb_fp16_to_double(kvb_fp16_from_double(x)): x rounded to the nearest fp16 value. */
double kvb_fp16_round(double x);

#endif

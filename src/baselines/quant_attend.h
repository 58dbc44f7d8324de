/* quant_attend.h — attention over a quantized cache with the dequantization fused into the two
 * products (internal to q_block_cache.c and kivi.c).
 *
 * Why fused. A quantized cache read through a dequantized copy writes and re-reads 8 bytes per
 * number on every query — more traffic than the exact cache it is meant to undercut — and in
 * the model (one method per layer and kv head, one query per attention head of the group) it
 * did so once per query. Here each score is the dot of q with the codes turned into doubles on
 * the fly, and each value row is added to the output straight from its codes: the query reads
 * the packed store once for the keys and once for the values (KIVI §4.2 fuses dequantization
 * into the matrix product the same way).
 *
 * Bit for bit. Every element is dequantized with the expression the format's dequantizer uses
 * (q8_0 code·d, q4_0 (code − offset)·d, KIVI code·s + z), every score is accumulated in kvb_dot's
 * order (element 0 first, one running sum) and scaled as kvb_score scales it, and the output is
 * kvb_attention_exact's second pass (max score, then Σ e_i·v_i and Σ e_i in token order, then
 * one division). The project compiles with -std=c11, so no multiply-add is contracted into an
 * FMA either. The answers are therefore those of kvb_attention_exact on the dequantized copy,
 * to the last bit, as long as every score and the output are finite; when one is not, the caller
 * falls back to that copy so that kvb_attention_exact's overflow handling and errors apply
 * unchanged. Speed comes from not materializing the copy, from computing each score once (the
 * reference computes it twice), from independent running sums of several tokens at a time and,
 * on x86-64 with AVX2, from vector kernels whose lanes are tokens (scores) or channels (value
 * sums), so that no lane's sum changes order (quant_attend.c). */
#ifndef KVB_QUANT_ATTEND_H
#define KVB_QUANT_ATTEND_H

#include <stddef.h>
#include <stdint.h>

/* Grows *buf to at least n doubles (ENOMEM names `who`; *buf unchanged then). */
int kvb_qa_reserve(double **buf, size_t *cap, size_t n, const char *who);

/* Wrong variants of the kernels, for tests/test_quant_fused.c alone (0 everywhere else):
 * SCALE_NEXT reads a block's (or KIVI group's, or key channel's) scale — and zero point — from
 * the next one (a wrong scale index); NIBBLE_INTERLEAVE unpacks q4_0 element 2k from the low and
 * 2k + 1 from the high nibble of byte k (ggml's q4_0 keeps j and j + 16 in byte j). */
#define KVB_QA_MUT_SCALE_NEXT 1u
#define KVB_QA_MUT_NIBBLE_INTERLEAVE 2u

/* sc[i] = scale·<q, row i> for the n rows of nb blocks each (row i at K + i·row_bytes), d
 * numbers per row (the last block padded). dex: the unrounded scales (mutant scale_fp32; row i's
 * at dex + i·nb) or NULL for the stored fp16 scales. */
void kvb_qa_q8_0_scores(size_t n, size_t d, const uint8_t *K, size_t row_bytes, const double *dex,
                        size_t nb, const double *q, double scale, unsigned mut, double *sc);
void kvb_qa_q4_0_scores(size_t n, size_t d, const uint8_t *K, size_t row_bytes, const double *dex,
                        size_t nb, int offset, const double *q, double scale, unsigned mut,
                        double *sc);
/* z[0..d) += e·row (one row of blocks; dex its unrounded scales or NULL). */
void kvb_qa_q8_0_axpy(size_t d, const uint8_t *row, const double *dex, unsigned mut, double e,
                      double *z);
void kvb_qa_q4_0_axpy(size_t d, const uint8_t *row, const double *dex, int offset, unsigned mut,
                      double e, double *z);
/* z[0..d) += Σ_i e[i]·row i over the n rows in order (each z[j] adds its tokens 0..n−1 in
 * order, as kvb_attention_exact does); dex as for the scores (row i's at dex + i·nb). */
void kvb_qa_q8_0_values(size_t n, size_t d, const uint8_t *V, size_t row_bytes, const double *dex,
                        size_t nb, const double *e, unsigned mut, double *z);
void kvb_qa_q4_0_values(size_t n, size_t d, const uint8_t *V, size_t row_bytes, const double *dex,
                        size_t nb, int offset, const double *e, unsigned mut, double *z);

/* KIVI's per-token rows (values; keys under the mutant keys_per_token): row i has ng groups of
 * G channels (the last m_g = d − g·G when shorter), codes at c + i·row_bytes + g·gbytes, zero
 * points z[i·ng + g] (0 when no_zero) and scales s[i·ng + g]; x = code·s + z. */
typedef struct {
  size_t d, G, ng, gbytes, row_bytes;
  unsigned bits;
  int no_zero;
  const double *z, *s;
  const uint8_t *c;
  unsigned mut; /* KVB_QA_MUT_*, 0 */
} kvb_qa_asym_rows;
void kvb_qa_asym_rows_scores(const kvb_qa_asym_rows *r, size_t n, const double *q, double scale,
                             double *sc);
void kvb_qa_asym_rows_axpy(const kvb_qa_asym_rows *r, size_t i, double e, double *z);
/* z += Σ_i e[i]·row i over rows 0..n−1 in order. */
void kvb_qa_asym_rows_values(const kvb_qa_asym_rows *r, size_t n, const double *e, double *z);

/* KIVI's keys quantized per channel: ngroups groups of G tokens, channel c of group g with
 * (z, s) at [g·d + c] and its G codes at c + (g·d + c)·gbytes. sc[g·G + j] = scale·<q, key of
 * token j of group g>. */
void kvb_qa_asym_chan_scores(size_t ngroups, size_t G, size_t d, size_t gbytes, unsigned bits,
                             int no_zero, unsigned mut, const double *z, const double *s,
                             const uint8_t *c, const double *q, double scale, double *sc);

/* kvb_attention_exact's second pass, split around the value sums. _weights: mx = max sc, then
 * in token order sc[i] ← e_i = exp(sc_i − mx), *den = Σ e_i; returns 1 (sc unchanged) when a
 * score is not finite or n = 0, else 0. The caller zeroes z, adds Σ e_i·v_i with the _values
 * kernels (tokens in order), then _normalize divides by den: 1 when an output is not finite.
 * On a 1 the caller answers through kvb_attention_exact on the dequantized copy. */
int kvb_qa_softmax_weights(size_t n, double *sc, double *den);
int kvb_qa_normalize(size_t d_value, double den, double *z);

#endif

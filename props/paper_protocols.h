/* paper_protocols.h — for every empirical row of the papers' claims (kind comparison or
 * empirical-measurement, props/paper_claims.c), what the paper ran against what kvbound runs:
 * model, method settings, protocol, lengths, what counts as the budget, and each difference
 * (other rows may have one too: B-T3.2, whose verdict rests on a search of stated power).
 * The report prints it in the row and `kvb-props --list` under every check covering the row
 * (DESIGN, What is compared: a verdict is about the method and protocol the paper ran, so a row
 * must say where kvbound's differ). tests/test_verdict_rollup.c fails when an empirical row has
 * no entry or an empty difference note, so a new row cannot omit it. */
#ifndef KVB_PAPER_PROTOCOLS_H
#define KVB_PAPER_PROTOCOLS_H

typedef struct {
  const char *id;          /* a paper_claims id */
  const char *paper;       /* what the paper ran: model, method settings, protocol, lengths, budget */
  const char *kvbound;     /* what kvbound runs for it (the checks covering the row) */
  const char *differences; /* every difference, and what was fixed; never empty */
} paper_protocol;

extern const paper_protocol paper_protocols[]; /* NULL-id terminated */

/* The entry of paper claim `id`, or NULL. */
const paper_protocol *paper_protocol_of(const char *id);
/* Whether a paper claim of this kind must have an entry (comparison, empirical-measurement). */
int paper_protocol_required(const char *kind);

#endif

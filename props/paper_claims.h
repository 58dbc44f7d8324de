/* paper_claims.h — the fixed list of the papers' checkable claims (paper_claims.c). */
#ifndef KVB_PAPER_CLAIMS_H
#define KVB_PAPER_CLAIMS_H
#include <stddef.h>

typedef struct {
  const char *id;     /* stable id, e.g. "B-TA.1" */
  const char *source; /* paper file and the paper's own numbering */
  const char *kind;   /* invariant | distribution | bound | scaling | practicality | comparison | ... */
  const char *claim;  /* the claim in one sentence */
  /* Non-NULL for a row no check can cover with what kvbound has (SmolLM2-135M, a RoPE model, and
   * text only): why, and what a user would run to check it. The report prints it in the row. */
  const char *unchecked_why;
} paper_claim;

extern const paper_claim paper_claims[]; /* NULL-id terminated */

/* Index of `id` in paper_claims, or -1. */
int paper_claim_index(const char *id);
#endif

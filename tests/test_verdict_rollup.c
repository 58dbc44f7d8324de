/* test_verdict_rollup.c — the verdict vocabulary's roll-up (props/prop.c prop_roll_up,
 * prop_verdict_of) on hand-worked cases, ERRATUM included, and the completeness of the
 * empirical rows' paper-vs-kvbound notes (props/paper_protocols.c): every row of kind comparison
 * or empirical-measurement has one with a non-empty difference note, so a new row cannot omit
 * it. Links the battery's library (build/libkvbound-props.so). */
#include "paper_claims.h"
#include "paper_protocols.h"
#include "prop.h"
#include "unit.h"

#include <stdarg.h>
#include <string.h>

static prop_verdict roll(int n, ...) {
  prop_verdict v[16];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) v[i] = (prop_verdict)va_arg(ap, int);
  va_end(ap);
  return prop_roll_up(v, (size_t)n);
}

static void test_roll_up(void) {
  /* hand-worked: precedence FAILS > ERRATUM > VACUOUS > agreement > MIXED */
  CHECK(roll(0) == PROP_UNCHECKED, "rollup: no check: UNCHECKED", "wrong verdict");
  CHECK(roll(1, PROP_ERRATUM) == PROP_ERRATUM, "rollup: one ERRATUM check: ERRATUM", "wrong verdict");
  CHECK(roll(2, PROP_ERRATUM, PROP_HOLDS) == PROP_ERRATUM, "rollup: ERRATUM beside HOLDS: ERRATUM (the text is wrong whatever else agrees)", "wrong verdict");
  CHECK(roll(2, PROP_HOLDS, PROP_ERRATUM) == PROP_ERRATUM, "rollup: order does not matter", "wrong verdict");
  CHECK(roll(3, PROP_ERRATUM, PROP_VACUOUS, PROP_HOLDS) == PROP_ERRATUM, "rollup: ERRATUM outranks VACUOUS", "wrong verdict");
  CHECK(roll(2, PROP_ERRATUM, PROP_FAILS) == PROP_FAILS, "rollup: FAILS is never hidden behind an ERRATUM", "wrong verdict");
  CHECK(roll(2, PROP_ERRATUM, PROP_INCONCLUSIVE) == PROP_ERRATUM, "rollup: ERRATUM beside INCONCLUSIVE", "wrong verdict");
  CHECK(roll(2, PROP_HOLDS, PROP_VACUOUS) == PROP_VACUOUS, "rollup: VACUOUS beside HOLDS: VACUOUS", "wrong verdict");
  CHECK(roll(2, PROP_HOLDS, PROP_HOLDS) == PROP_HOLDS, "rollup: agreeing HOLDS: HOLDS", "wrong verdict");
  CHECK(roll(2, PROP_HOLDS, PROP_INCONCLUSIVE) == PROP_MIXED, "rollup: HOLDS and INCONCLUSIVE: MIXED", "wrong verdict");
  CHECK(roll(2, PROP_NOT_OBSERVED, PROP_NOT_OBSERVED) == PROP_NOT_OBSERVED, "rollup: agreeing NOT-OBSERVED", "wrong verdict");
  CHECK(strcmp(prop_verdict_name(PROP_ERRATUM), "ERRATUM") == 0, "rollup: the name is ERRATUM", "wrong verdict");
  /* the totals line iterates 0..PROP_SKIPPED: ERRATUM must lie inside that range */
  CHECK(PROP_ERRATUM < PROP_UNCHECKED && PROP_ERRATUM > PROP_HOLDS, "rollup: ERRATUM inside the totals' range", "wrong verdict");
}

static void test_verdict_of(void) {
  static prop_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.log = fopen("/dev/null", "w");
  prop_exact(&ctx);
  prop_cell(&ctx, PROP_HOLDS, "a", "x");
  prop_cell(&ctx, PROP_ERRATUM, "b", "y");
  CHECK(prop_verdict_of(&ctx) == PROP_MIXED, "rollup: cells HOLDS and ERRATUM without prop_erratum: MIXED", "wrong verdict");
  prop_erratum(&ctx, "the corrected statement", "evidence %d", 1);
  CHECK(prop_verdict_of(&ctx) == PROP_ERRATUM, "rollup: prop_erratum: ERRATUM over the cells", "wrong verdict");
  CHECK(strstr(ctx.notes, "corrected: the corrected statement") != NULL &&
            strstr(ctx.notes, "evidence 1") != NULL, "rollup: the note carries the corrected statement and the evidence", "wrong verdict");
  ctx.controls_passed = 1;
  CHECK(prop_verdict_of(&ctx) == PROP_ERRATUM, "rollup: ERRATUM outranks a passing control", "wrong verdict");
  prop_check(&ctx, 0, "an assertion of the corrected statement fails");
  CHECK(prop_verdict_of(&ctx) == PROP_FAILS, "rollup: a failed assertion outranks ERRATUM", "wrong verdict");
  fclose(ctx.log);
}

static void test_protocol_notes(void) {
  int need = 0, bad = 0;
  for (int i = 0; paper_claims[i].id; i++) {
    if (!paper_protocol_required(paper_claims[i].kind)) continue;
    need++;
    const paper_protocol *pp = paper_protocol_of(paper_claims[i].id);
    if (!pp || !pp->paper || !*pp->paper || !pp->kvbound || !*pp->kvbound || !pp->differences ||
        !*pp->differences) {
      printf("    %s (%s) lacks its paper/kvbound/differences note\n", paper_claims[i].id,
             paper_claims[i].kind);
      bad++;
    }
  }
  CHECK(need >= 21 && bad == 0, "protocol notes: every empirical row has a paper-vs-kvbound note "
        "with a non-empty difference", "%d empirical rows, %d lack one", need, bad);
  int stray = 0;
  for (int i = 0; paper_protocols[i].id; i++)
    stray += paper_claim_index(paper_protocols[i].id) < 0;
  CHECK(stray == 0, "protocol notes: every note names a row of the papers' claims", "%d do not", stray);
}

int main(void) {
  test_roll_up();
  test_verdict_of();
  test_protocol_notes();
  UNIT_EXIT();
}

/* test_progress.c — the progress lines' remaining-time estimate and costs table (props/progress.h):
 * hand-worked estimates, the table's tier filter and malformed rows, and quiet mode. */
#include "progress.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int close_to(double a, double b) { return fabs(a - b) <= 1e-12 * (1 + fabs(b)); }

int main(void) {
  /* table: 10 s done took 20 s of wall (a machine at half speed), 30 s recorded left → 60 s */
  CHECK(close_to(prop_progress_estimate(3, 10, 20, 1, 10, 30), 60), "progress.estimate.table",
        "%g", prop_progress_estimate(3, 10, 20, 1, 10, 30));
  /* under 1 s of recorded work done: the table as it is, not a ratio of two tiny numbers */
  CHECK(close_to(prop_progress_estimate(1, 10, 5, 1, 0.5, 30), 30), "progress.estimate.table_early",
        "%g", prop_progress_estimate(1, 10, 5, 1, 0.5, 30));
  /* 2 s done of 100 recorded: under a twentieth, still the table (98 s left), not ×speed */
  CHECK(close_to(prop_progress_estimate(1, 10, 40, 1, 2, 98), 98), "progress.estimate.table_small_fraction",
        "%g", prop_progress_estimate(1, 10, 40, 1, 2, 98));
  /* no table: the mean so far, 4 of 10 in 8 s → 12 s; before the first, unknown (-1) */
  CHECK(close_to(prop_progress_estimate(4, 10, 8, 0, 0, 0), 12), "progress.estimate.mean", "%g",
        prop_progress_estimate(4, 10, 8, 0, 0, 0));
  CHECK(prop_progress_estimate(0, 10, 0, 0, 0, 0) < 0, "progress.estimate.unknown", "%g",
        prop_progress_estimate(0, 10, 0, 0, 0, 0));
  CHECK(prop_progress_estimate(10, 10, 8, 1, 5, 0) == 0, "progress.estimate.done", "%g",
        prop_progress_estimate(10, 10, 8, 1, 5, 0));

  char path[] = "/tmp/kvb-progress-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    CHECK(0, "progress.table", "cannot create %s", path);
    UNIT_EXIT();
  }
  fputs("# tier id seconds\ncheck a.one 2.5\nfull a.one 99\ncheck b.two 4\ncheck broken\n"
        "check c.neg -1\n", f);
  fclose(f);
  FILE *sink = fopen("/dev/null", "w");
  prop_progress p;
  prop_progress_init(&p, sink, path, "check");
  CHECK(p.nrec == 2 && close_to(prop_progress_cost(&p, "a.one"), 2.5) &&
            close_to(prop_progress_cost(&p, "b.two"), 4) && prop_progress_cost(&p, "c.neg") < 0,
        "progress.table.tier_and_malformed", "%zu rows, a.one %g", p.nrec,
        prop_progress_cost(&p, "a.one"));
  prop_progress_add(&p, "a.one");
  prop_progress_add(&p, "b.two");
  CHECK(p.have_table && p.n == 2 && close_to(p.left_cost, 6.5), "progress.table.add",
        "have %d n %zu left %g", p.have_table, p.n, p.left_cost);
  prop_progress_start(&p, "a.one");
  prop_progress_done(&p, "a.one", 3);
  CHECK(close_to(p.done_cost, 2.5) && close_to(p.left_cost, 4) && p.k == 1, "progress.table.done",
        "done %g left %g", p.done_cost, p.left_cost);
  prop_progress_add(&p, "unknown.id");
  CHECK(!p.have_table, "progress.table.unknown_falls_back", "have_table %d", p.have_table);
  prop_progress_free(&p);
  prop_progress_init(&p, NULL, path, "check"); /* quiet: nothing read, nothing counted */
  prop_progress_add(&p, "a.one");
  CHECK(p.n == 0 && p.nrec == 0, "progress.quiet", "n %zu nrec %zu", p.n, p.nrec);
  prop_progress_free(&p);
  prop_progress_init(&p, sink, "/nonexistent/costs.tsv", "check");
  CHECK(!p.have_table && p.nrec == 0, "progress.table.missing", "have %d", p.have_table);
  prop_progress_free(&p);
  fclose(sink);
  unlink(path);
  UNIT_EXIT();
}

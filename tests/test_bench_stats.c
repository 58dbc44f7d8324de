/* test_bench_stats.c — the benches' limit statistics and ratio checks (tests/bench_stats.h) on
 * hand-worked numbers, and the ratios a unit slip produces, which the checks must reject. No
 * timing: the numbers are made up so that every figure can be worked by hand. */
#include "bench_stats.h"
#include "unit.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

int main(void) {
  /* An SGEMM rate sampled four times through a run (GFLOP/s): the start, before two lengths,
   * the end. The best is not the last sample, nor the first. */
  kvb_bs_series s = {{0}, 0};
  kvb_bs_add(&s, 120), kvb_bs_add(&s, 95), kvb_bs_add(&s, 180), kvb_bs_add(&s, 150);
  kvb_bs_add(&s, NAN), kvb_bs_add(&s, 0), kvb_bs_add(&s, -3); /* failed measurements: dropped */
  CHECK(s.n == 4, "bench_stats: failed samples (NaN, 0, negative) are dropped", "n = %zu", s.n);
  CHECK(kvb_bs_best(&s) == 180 && kvb_bs_worst(&s) == 95,
        "bench_stats: best = 180 and worst = 95 of {120, 95, 180, 150}", "best %g worst %g",
        kvb_bs_best(&s), kvb_bs_worst(&s));
  double sp = kvb_bs_spread(&s);
  CHECK(near(sp, 180.0 / 95.0), "bench_stats: spread = 180/95 = 1.8947", "spread %.17g", sp);
  kvb_bs_series one = {{0}, 0}, none = {{0}, 0};
  kvb_bs_add(&one, 42);
  CHECK(kvb_bs_spread(&one) == 1 && isnan(kvb_bs_spread(&none)) && isnan(kvb_bs_best(&none)),
        "bench_stats: one sample has spread 1, none has NaN", "%g %g", kvb_bs_spread(&one),
        kvb_bs_spread(&none));

  /* A prefill of 300 GFLOP taking 2.0 CPU seconds: at the run's best rate (180 GFLOP per CPU
   * second) its bound is 300/180 = 1.667 s and time/bound = 2.0·180/300 = 1.2; paired with the
   * 95 sampled just before it, 2.0·95/300 = 0.6333 — below 1, but by less than the spread. */
  double xb = kvb_bs_x_bound(2.0, 300, kvb_bs_best(&s)), xp = kvb_bs_x_bound(2.0, 300, 95);
  CHECK(near(xb, 1.2) && near(xp, 0.6333333333333333),
        "bench_stats: time/bound 1.2 at the run's best, 0.6333 paired", "%.17g %.17g", xb, xp);
  CHECK(kvb_bs_x_ok(xb, sp) && kvb_bs_x_ok(xp, sp) && kvb_bs_x_ok(1 / sp, sp),
        "bench_stats: 1.2, 0.6333 and exactly 1/spread are within the spread", "%g %g", xb, xp);
  CHECK(!kvb_bs_x_ok(0.5, sp) && !kvb_bs_x_ok(NAN, sp),
        "bench_stats: 0.5 is below 1 by more than the spread (0.5·1.8947 = 0.947 < 1)", "ok");

  /* Mutant: the prefill's WALL seconds (1.0 s: two threads busy) against a rate in flop per CPU
   * second, on a quieter run (samples 170, 180, 175, 160: spread 1.125). time/bound comes out
   * 1.0·180/300 = 0.6, and 0.6·1.125 = 0.675 < 1 — the check must reject it. */
  kvb_bs_series q = {{0}, 0};
  kvb_bs_add(&q, 170), kvb_bs_add(&q, 180), kvb_bs_add(&q, 175), kvb_bs_add(&q, 160);
  double xr = kvb_bs_x_bound(2.0, 300, kvb_bs_best(&q)), xw = kvb_bs_x_bound(1.0, 300, kvb_bs_best(&q));
  CHECK(kvb_bs_x_ok(xr, kvb_bs_spread(&q)) && !kvb_bs_x_ok(xw, kvb_bs_spread(&q)),
        "bench_stats: mutant wall seconds against a per-CPU-second rate (0.6 at spread 1.125) "
        "is rejected, CPU against CPU (1.2) accepted", "%g %g spread %g", xr, xw,
        kvb_bs_spread(&q));

  /* Fractions of a bandwidth. Copy samples 24, 25.6, 22 GB/s (spread 25.6/22 = 1.1636); a
   * decode reading 1.0 GB in 0.05 s = 20 GB/s is 20/25.6 = 0.78125 of the best. Mutant: its
   * bytes counted twice (as if it wrote what it read, the copy's read + write accounting): 1.5625,
   * above 1 by more than the spread. */
  kvb_bs_series c = {{0}, 0};
  kvb_bs_add(&c, 24e9), kvb_bs_add(&c, 25.6e9), kvb_bs_add(&c, 22e9);
  double cs = kvb_bs_spread(&c), f = 1.0e9 / 0.05 / kvb_bs_best(&c), fm = 2.0e9 / 0.05 / kvb_bs_best(&c);
  CHECK(near(cs, 25.6 / 22) && near(f, 0.78125), "bench_stats: 0.78125 of the copy's best, spread "
        "1.1636", "%.17g %.17g", f, cs);
  CHECK(kvb_bs_fraction_ok(f, cs) && kvb_bs_fraction_ok(cs, cs) && !kvb_bs_fraction_ok(fm, cs),
        "bench_stats: mutant bytes counted twice (1.5625 > spread 1.1636) is rejected", "%g %g",
        f, fm);
  UNIT_EXIT();
}

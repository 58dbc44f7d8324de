/* test_bench_stats.c — the benches' limit statistics and ratio checks (tests/bench_stats.h) on
 * hand-worked numbers, and the ratios a unit slip produces, which the checks must reject; then
 * the rules that turn a limit's passes into samples (tests/bench_limit.h: warm-up never kept,
 * a bandwidth pass with a thread off its core dropped, a compute pass in thread CPU time) on
 * hand-made passes, with the mutants of each rule, and one tiny real measurement (its
 * bookkeeping only). No timed assertion: the passes are made up so every figure can be worked
 * by hand. */
#define _GNU_SOURCE 1 /* bench_limit.h pins its threads */
#include "bench_limit.h"
#include "bench_stats.h"
#include "unit.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b); }

/* The samples and spread that kvb_lim_collect makes of `passes` passes of 2 threads. */
static int collect(const kvb_lim_part *p, int passes, int bw, kvb_bs_series *s, int *dropped) {
  double rate[KVB_LIM_MAXP];
  int fb, k = kvb_lim_collect(p, passes, 2, 1, bw, rate, dropped, &fb);
  if (fb) *dropped = -1; /* a fallback is not what these passes expect */
  memset(s, 0, sizeof *s);
  for (int i = 0; i < k; i++) kvb_bs_add(s, rate[i]);
  return k;
}

/* Hand-made passes (1 warm-up + 5) through the rules, and each rule's mutant. */
static void limit_passes(void) {
  /* STREAM copy on 2 threads, 1e8 bytes each per pass (work, CPU s, start, end):
   *   warm-up: 0.05 s (pages, TLB)             → 4e9 B/s, never kept;
   *   pass 1: both 0.010 s                      → 2e8/0.010  = 20e9;
   *   pass 2: both 0.0095 s                     → 2e8/0.0095 = 21.0526e9;
   *   pass 3: thread 1 off its core 35 ms (CPU 0.0095 of 0.045 s wall) → dropped (would be 4.44e9);
   *   pass 4: thread 1 scheduled 30 ms late (starts 4.030, span 0.0398) → dropped (would be 5.03e9);
   *   pass 5: both 0.0098 s                     → 20.4082e9.
   * Kept: 3 samples, spread 21.0526/20 = 1.0526; dropped 2. */
  kvb_lim_part cp[12] = {{1e8, .05, 0, .05},        {1e8, .05, 0, .05},
                         {1e8, .0099, 1, 1.010},    {1e8, .0099, 1, 1.010},
                         {1e8, .0095, 2, 2.0095},   {1e8, .0095, 2, 2.0095},
                         {1e8, .0095, 3, 3.0095},   {1e8, .0095, 3, 3.045},
                         {1e8, .0098, 4, 4.0098},   {1e8, .0098, 4.030, 4.0398},
                         {1e8, .0098, 5, 5.0098},   {1e8, .0098, 5, 5.0098}};
  kvb_bs_series s;
  int dropped, k = collect(cp, 6, 1, &s, &dropped);
  CHECK(k == 3 && dropped == 2 && near(kvb_bs_best(&s), 2e8 / .0095) &&
            near(kvb_bs_worst(&s), 20e9) && near(kvb_bs_spread(&s), 2e8 / .0095 / 20e9),
        "bench_limit: copy passes: warm-up not kept, a thread off its core and a late start "
        "dropped: 3 samples 20–21.05 GB/s, spread 1.0526",
        "kept %d dropped %d best %.17g worst %.17g", k, dropped, kvb_bs_best(&s), kvb_bs_worst(&s));
  static const struct {
    int mut;
    const char *name;
    int kept;
    double spread;
  } cm[] = {{KVB_LIM_MUT_KEEP_WARMUP, "KEEP_WARMUP (the warm-up pass kept)", 4, 2e8 / .0095 / 4e9},
            {KVB_LIM_MUT_NO_COVER, "NO_COVER (passes with a thread off its core kept)", 5,
             2e8 / .0095 / (2e8 / .045)}};
  for (size_t m = 0; m < sizeof cm / sizeof *cm; m++) {
    kvb_lim_mutant = cm[m].mut;
    kvb_bs_series ms;
    int md, mk = collect(cp, 6, 1, &ms, &md);
    kvb_lim_mutant = KVB_LIM_MUT_NONE;
    char nm[200];
    snprintf(nm, sizeof nm, "bench_limit: mutant %s is rejected: %d samples, spread %.3f, not 3 "
             "and 1.053", cm[m].name, cm[m].kept, cm[m].spread);
    CHECK(mk == cm[m].kept && near(kvb_bs_spread(&ms), cm[m].spread) &&
              !(mk == 3 && near(kvb_bs_spread(&ms), kvb_bs_spread(&s))),
          nm, "kept %d spread %.17g", mk, kvb_bs_spread(&ms));
  }

  /* SGEMM on 2 cores, 2e9 flops per product (work, thread CPU s, start, end):
   *   warm-up: 0.06 s each (OpenBLAS's buffers)  → 2·2e9/0.06 = 66.7e9, never kept;
   *   pass 1: 0.040 s each                        → 50e9 + 50e9 = 100e9;
   *   pass 2: thread 1 off its core half the pass (CPU 0.040 of 0.080 s) → still 100e9: its
   *           core did its product in 0.040 s of its own time;
   *   pass 3: 0.041 and 0.040 s                   → 48.78e9 + 50e9 = 98.78e9;
   *   passes 4, 5: 0.040 s each                   → 100e9.
   * Kept: 5, spread 100/98.78 = 1.0125. Mutant WALL_GEMM (a pass on its wall span, as one
   * OpenBLAS call timed whole was): pass 2 is 4e9/0.080 = 50e9 — spread 2. */
  kvb_lim_part gp[12] = {{2e9, .06, 0, .06},   {2e9, .06, 0, .06},   {2e9, .04, 1, 1.04},
                         {2e9, .04, 1, 1.04},  {2e9, .04, 2, 2.04},  {2e9, .04, 2, 2.08},
                         {2e9, .041, 3, 3.041}, {2e9, .04, 3, 3.04}, {2e9, .04, 4, 4.04},
                         {2e9, .04, 4, 4.04},  {2e9, .04, 5, 5.04},  {2e9, .04, 5, 5.04}};
  double r2 = kvb_lim_rate_cpu(gp + 4, 2);
  k = collect(gp, 6, 0, &s, &dropped);
  CHECK(near(r2, 100e9) && k == 5 && dropped == 0 && near(kvb_bs_best(&s), 100e9) &&
            near(kvb_bs_spread(&s), 100e9 / (2e9 / .041 + 50e9)),
        "bench_limit: SGEMM passes: per-core rates in thread CPU time summed (100 GFLOP/s with a "
        "thread off its core half the pass), warm-up not kept, spread 1.0125",
        "pass 2 %.17g kept %d best %.17g spread %.17g", r2, k, kvb_bs_best(&s), kvb_bs_spread(&s));
  kvb_lim_mutant = KVB_LIM_MUT_WALL_GEMM;
  kvb_bs_series ws;
  int wd, wk = collect(gp, 6, 0, &ws, &wd);
  kvb_lim_mutant = KVB_LIM_MUT_NONE;
  CHECK(wk == 5 && near(kvb_bs_worst(&ws), 50e9) && near(kvb_bs_spread(&ws), 2.0),
        "bench_limit: mutant WALL_GEMM (a compute pass on its wall span) is rejected: the pass "
        "with a thread off its core reads 50 GFLOP/s, spread 2, not 1.0125",
        "kept %d worst %.17g spread %.17g", wk, kvb_bs_worst(&ws), kvb_bs_spread(&ws));
  /* A copy measurement with every pass after the warm-up off its core (a thread ran a fifth of
   * the pass, as on a machine whose cores other processes hold): nothing is clean, so the passes
   * count in CPU time, 1e8/0.01 + 1e8/0.0125 = 18e9, and the fallback is flagged. */
  kvb_lim_part dp[6] = {{1e8, .05, 0, .05},   {1e8, .05, 0, .05},  {1e8, .01, 1, 1.05},
                        {1e8, .0125, 1, 1.06}, {1e8, .01, 2, 2.05}, {1e8, .0125, 2, 2.0625}};
  double dr[KVB_LIM_MAXP];
  int dd, dfb, dk = kvb_lim_collect(dp, 3, 2, 1, 1, dr, &dd, &dfb);
  CHECK(dk == 2 && dd == 2 && dfb == 1 && near(dr[0], 18e9) && near(dr[1], 18e9),
        "bench_limit: a copy measurement with no clean pass falls back to CPU-time rates "
        "(18 GB/s), flagged", "kept %d dropped %d fallback %d rate %g", dk, dd, dfb, dr[0]);
  kvb_lim_part bad[2] = {{2e9, 0, 0, 0}, {2e9, .04, 0, .04}};
  CHECK(isnan(kvb_lim_rate_cpu(bad, 2)) && isnan(kvb_lim_rate_wall(bad, 2, KVB_LIM_COVER)),
        "bench_limit: a part with no time measured makes the pass NaN (dropped), not infinite",
        "%g %g", kvb_lim_rate_cpu(bad, 2), kvb_lim_rate_wall(bad, 2, KVB_LIM_COVER));
}

/* One tiny real measurement of each kind: the bookkeeping (threads, pins, passes kept or
 * dropped, samples into the series), never the speed. */
static void limit_measured(void) {
  int cpu[KVB_LIM_MAXT], nc = kvb_lim_cores(cpu, KVB_LIM_MAXT);
  kvb_lim_spec g = {KVB_LIM_SGEMM, 64, 2, 1, 3};
  kvb_lim_result r;
  int rc = kvb_lim_measure(&g, &r), want = nc < 2 ? nc : 2;
  CHECK(rc == 0 && r.threads == want && r.pinned == (cpu[0] >= 0 ? want : 0) && r.kept == 3 &&
            r.dropped == 0 && r.best >= r.worst && r.worst > 0,
        "bench_limit: a 64³ SGEMM measurement on 2 threads: min(2, cores) threads, each pinned, "
        "3 passes kept after the warm-up", "rc %d threads %d (cores %d) pinned %d kept %d "
        "dropped %d best %g worst %g", rc, r.threads, nc, r.pinned, r.kept, r.dropped, r.best,
        r.worst);
  kvb_bs_series one = {{0}, 0};
  kvb_lim_spec g1 = {KVB_LIM_DGEMM, 64, 1, 1, 2};
  int turn0 = kvb_lim_turn;
  double b1 = 0;
  for (int k = 0; k < nc; k++) b1 = fmax(b1, kvb_lim_sample(&g1, &one));
  CHECK(one.n == (size_t)(2 * nc) && b1 == kvb_bs_best(&one) && kvb_lim_turn == turn0 + nc,
        "bench_limit: a 1-thread limit is sampled on the next core each time (2 kept passes "
        "each; one round of samples covers every core)", "samples %zu for %d cores, turns %d, "
        "best %g vs %g", one.n, nc, kvb_lim_turn - turn0, b1, kvb_bs_best(&one));
  kvb_lim_spec c = {KVB_LIM_COPY, 0, 2, 1, 2};
  rc = kvb_lim_measure(&c, &r);
  CHECK((r.fallback ? r.dropped == 2 && r.kept == 2 : r.kept + r.dropped == 2) &&
            r.threads == want && (r.kept == 0 || r.best > 0),
        "bench_limit: a STREAM copy measurement accounts for every pass after the warm-up (kept, "
        "or dropped and then kept in CPU time when none was clean)", "rc %d kept %d dropped %d "
        "fallback %d threads %d", rc, r.kept, r.dropped, r.fallback, r.threads);
}

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
  limit_passes();
  limit_measured();
  UNIT_EXIT();
}

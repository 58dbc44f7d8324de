/* bench_stats.h — a limit measured several times through one bench run, and the ratios formed
 * against it (kvb-bench and the single-purpose benches; tests/README.md, Benchmarks).
 *
 * Why. On a shared machine one measurement of a limit (SGEMM's flop rate, STREAM copy's
 * bandwidth) moves with the other processes' load: within one run on two cores the 2-thread
 * SGEMM rate was seen anywhere in 95–180 GFLOP/s. A ratio formed against whichever measurement
 * came last moves with it — a prefill came out below its own flop bound (0.99) because its
 * SGEMM sample was a slow one. So every bench samples its limit at the start, beside each timed
 * run and at the end, and forms every ratio against the best sample of the whole run (the
 * machine's limit as nearly as this run saw it, as STREAM itself reports the best of its
 * passes), printing beside it the paired ratio (against the sample taken right before that
 * run) and the spread best/worst of the samples.
 *
 * What a ratio may do. A kernel cannot beat its limit: time/bound is ≥ 1 and a fraction of the
 * copy bandwidth ≤ 1 when both are measured alike. A printed ratio may still fall on the wrong
 * side of 1 when the limit's best sample was itself slowed by load, but not by more than the
 * spread: x ≥ 1/spread for a time/bound ratio, f ≤ spread for a fraction of a limit. Beyond
 * that the ratio compares unlike things (wall against CPU seconds, read+write bytes against
 * read bytes, one thread against two) — kvb_bs_x_ok and kvb_bs_fraction_ok flag it, and
 * tests/test_bench_stats.c checks them on hand-worked numbers. */
#ifndef KVB_BENCH_STATS_H
#define KVB_BENCH_STATS_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#define KVB_BS_MAX 512

/* The samples of one limit, a rate (higher is better: flop/s, bytes/s). */
typedef struct {
  double v[KVB_BS_MAX];
  size_t n;
} kvb_bs_series;

/* Records one sample (a non-finite or non-positive rate — a failed measurement — is dropped;
 * past KVB_BS_MAX samples the best is still kept up to date in the last slot). */
static inline void kvb_bs_add(kvb_bs_series *s, double rate) {
  if (!(rate > 0) || !isfinite(rate)) return;
  if (s->n < KVB_BS_MAX) s->v[s->n++] = rate;
  else if (rate > s->v[KVB_BS_MAX - 1]) s->v[KVB_BS_MAX - 1] = rate;
}

/* The best (largest) sample; NaN when there is none. */
static inline double kvb_bs_best(const kvb_bs_series *s) {
  double b = NAN;
  for (size_t i = 0; i < s->n; i++)
    if (!(s->v[i] <= b)) b = s->v[i];
  return b;
}

/* The worst (smallest) sample; NaN when there is none. */
static inline double kvb_bs_worst(const kvb_bs_series *s) {
  double w = NAN;
  for (size_t i = 0; i < s->n; i++)
    if (!(s->v[i] >= w)) w = s->v[i];
  return w;
}

/* best / worst (≥ 1; 1 with a single sample, NaN with none). */
static inline double kvb_bs_spread(const kvb_bs_series *s) {
  return s->n ? kvb_bs_best(s) / kvb_bs_worst(s) : NAN;
}

/* time / bound with bound = work / rate: seconds·rate/work (1 = as fast as the limit). */
static inline double kvb_bs_x_bound(double seconds, double work, double rate) {
  return seconds * rate / work;
}

/* A time/bound ratio against the run's best: plausible when not below 1 by more than the
 * spread, x·spread ≥ 1 (a relative 1e-12 of slack for the rounding of the two products). */
static inline int kvb_bs_x_ok(double x, double spread) {
  return isfinite(x) && isfinite(spread) && x * spread >= 1 - 1e-12;
}

/* A fraction of a limit (achieved rate / the run's best rate): plausible when not above 1 by
 * more than the spread, f ≤ spread. */
static inline int kvb_bs_fraction_ok(double f, double spread) {
  return isfinite(f) && isfinite(spread) && f <= spread * (1 + 1e-12);
}

/* ---- the JSON lines every bench prints for its closing table (scripts/check-bench-ratios
 * recomputes each ratio from them; scripts/bench-tables tabulates them) ----
 *
 * {"bench":"limit_series","source":S,"commit":C,"limit":NAME,"samples":N,"best":..,"worst":..,
 *  "spread":..}  — one per limit, printed before the ratios formed against it;
 * {"bench":"ratio","source":S,"commit":C,"what":..,"series":NAME,"kind":"x_bound"|"fraction",
 *  "time_basis":"wall"|"cpu","seconds":..,"cpu_seconds":..,"work":..,"limit_best":..,
 *  "ratio_run_best":..,"ratio_paired":..,"limit_spread":..,"within_spread":0|1}
 * where the ratio is (seconds or cpu_seconds, as time_basis says)·limit_best/work for x_bound
 * and work/seconds/limit_best for a fraction, and limit_best is the rate the ratio was formed
 * against — the best sample of the series NAME when the bench is right. */
/* ,"key":v with %.6g (JSON's null for a non-finite v). */
static inline void kvb_bs_jnum(const char *key, double v) {
  if (isfinite(v)) printf(",\"%s\":%.6g", key, v);
  else printf(",\"%s\":null", key);
}

static inline void kvb_bs_json_series(const char *source, const char *commit, const char *name,
                                      const kvb_bs_series *s) {
  printf("{\"bench\":\"limit_series\",\"source\":\"%s\",\"commit\":\"%s\",\"limit\":\"%s\"",
         source, commit, name);
  kvb_bs_jnum("samples", (double)s->n), kvb_bs_jnum("best", kvb_bs_best(s));
  kvb_bs_jnum("worst", kvb_bs_worst(s)), kvb_bs_jnum("spread", kvb_bs_spread(s));
  printf("}\n");
}

/* One ratio of a closing table; x_bound (fraction 0) or fraction of the limit (fraction 1),
 * formed on CPU seconds when cpu_basis, else on wall seconds. */
static inline void kvb_bs_json_ratio(const char *source, const char *commit, const char *what,
                                     const char *series, int fraction, int cpu_basis,
                                     double seconds, double cpu_seconds, double work,
                                     double limit_best, double ratio, double paired,
                                     double spread) {
  int ok = fraction ? kvb_bs_fraction_ok(ratio, spread) : kvb_bs_x_ok(ratio, spread);
  printf("{\"bench\":\"ratio\",\"source\":\"%s\",\"commit\":\"%s\",\"what\":\"%s\","
         "\"series\":\"%s\",\"kind\":\"%s\",\"time_basis\":\"%s\"", source, commit, what, series,
         fraction ? "fraction" : "x_bound", cpu_basis ? "cpu" : "wall");
  kvb_bs_jnum("seconds", seconds), kvb_bs_jnum("cpu_seconds", cpu_seconds);
  kvb_bs_jnum("work", work), kvb_bs_jnum("limit_best", limit_best);
  kvb_bs_jnum("ratio_run_best", ratio), kvb_bs_jnum("ratio_paired", paired);
  kvb_bs_jnum("limit_spread", spread);
  printf(",\"within_spread\":%d}\n", ok);
}

#endif

/* subgen_memory.c — 000 Theorem 1 (001 Theorem 2.4) efficiency part and 000 Corollary 1
 * (001 Corollary 2.5): on (m, δ)-clusterable keys SubGen's memory and per-step work are
 * O(d(mt + s)), independent of the stream length n except through m and t.
 *   subgen.memory.bytes: m′ ≤ m after every step (exact); what the sketch holds, counted by the
 *     allocator (not by the accounting of src/subgen/subgen.c subgen_memory, which it checks),
 *     is ≥ the bytes kvb_method_memory reports and ≤ D's m′(1+t) key vectors, M's s (k, v) pairs
 *     and the bookkeeping listed at heap_allowance, hence O(d(mt + s)) (constant stated there).
 *     The accounting's own constant, 8·(m′(1+t)d_k + s(d_k+d_v) + 1) + 8m′ ≤ 32·d·(mt + s)
 *     (m′(1+t) ≤ 2mt, s(d_k+d_v) ≤ 2sd, 8 + 8m′ ≤ 16·mtd), is reported.
 *   subgen.memory.work: per-step work from the instrumentation (src/method.h kvb_work) —
 *     update: distances ≤ m′, coins ≤ t + s; query: exponentials ≤ s + m′t — checked at
 *     every step, and the log–log slope of work per step against n = 2^8…2^13 is ≈ 0
 *     (95% CI upper end ≤ 0.05); exact attention (slope ≈ 1) is the control through the same
 *     assertion.
 *   subgen.memory.cor1: Corollary 1 at its own parameters (t from Theorem 1 with δr fixed, m
 *     fixed or m = ⌈√n⌉), one-sided slope tests with exact attention as the control (below).
 * The counters and m′ are deterministic functions of the stream and the coins; the fitted
 * slopes and their CIs are reported. */
#include "prop.h"

#include <malloc.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

typedef struct {
  int m, d, t, s, n;
  double delta, skew;
} mem_case;

static kvb_stream *mem_stream(prop_ctx *ctx, uint64_t i, const mem_case *c) {
  char a[7][48];
  snprintf(a[0], 48, "n=%d", c->n);
  snprintf(a[1], 48, "d_key=%d", c->d);
  snprintf(a[2], 48, "d_value=%d", c->d);
  snprintf(a[3], 48, "m=%d", c->m);
  snprintf(a[4], 48, "delta=%.17g", c->delta);
  snprintf(a[5], 48, "cluster_skew=%.17g", c->skew);
  snprintf(a[6], 48, "key_norm=%.17g", 4.0 * c->delta);
  const char *const assign[] = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL};
  return prop_stream(ctx, i, "clusterable", assign);
}

static kvb_method *mem_method(prop_ctx *ctx, const char *name, gsl_rng *rng, const kvb_stream *s,
                              const mem_case *c) {
  kvb_params p;
  kvb_params_init(&p);
  if (name[0] == 's') {
    kvb_params_set(&p, "delta", s->delta); /* the stream's cluster diameter */
    kvb_params_set(&p, "t", c->t);
    kvb_params_set(&p, "s", c->s);
    prop_apply_mutant(ctx, "subgen", &p);
  }
  kvb_method_config cfg = {s->d_key, s->d_value, 1.0, rng};
  kvb_method *m = NULL;
  if (kvb_method_alloc(name, &cfg, &p, &m))
    prop_check(ctx, 0, "alloc %s: %s", name, kvb_strerror_last());
  return m;
}

static const mem_case bytes_cases[] = {
    {8, 4, 16, 32, 4096, 0.5, 0},  {3, 2, 5, 7, 2048, 2.0, 2.0},
    {32, 8, 4, 64, 4096, 1.0, 1.0}, {1, 3, 2, 1, 1024, 0.25, 0},
};

/* Heap bytes this process holds (glibc: arena chunks in use + mmapped chunks), the allocator's
 * own count: an independent route to what a sketch holds, which kvb_method_memory's accounting
 * (src/subgen/subgen.c subgen_memory) cannot influence. */
static size_t heap_in_use(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

/* glibc counts chunks parked in the per-thread cache (≤ 7 per size class up to 1032 bytes) as in
 * use, so a sketch that reuses one would look smaller than it is. Holding 7 chunks of every
 * cached size for the duration of the measurement empties that cache first. */
enum { TC_CLASSES = 64, TC_COUNT = 7 };
static void tcache_drain(void **held) {
  for (int c = 0; c < TC_CLASSES; c++)
    for (int k = 0; k < TC_COUNT; k++) held[c * TC_COUNT + k] = malloc((size_t)(16 * c + 8));
}
static void tcache_release(void **held) {
  for (int i = 0; i < TC_CLASSES * TC_COUNT; i++) free(held[i]);
}

/* What the sketch may hold beyond the bytes it accounts for (every term from what the state
 * stores, src/subgen/subgen.c, not from subgen_memory): one 8-byte stream position per stored
 * vector (x_i, the t samples, the s slots); D's arrays grow by doubling from 16 clusters, so
 * up to max(16, 2m′) clusters of (1+t) key vectors + positions + a count are allocated (and,
 * under glibc, the small arrays' previous sizes may sit in the thread cache, ≤ the current
 * size again); the scratch (d_v + 1), the two structs and the allocator's chunk headers, a fixed
 * HEAP_FIXED bytes. */
#define HEAP_FIXED 4096
static size_t heap_allowance(size_t mc, size_t t, size_t dk, size_t dv, size_t s) {
  size_t capc = mc > 8 ? 2 * mc : 16;
  size_t per_cluster = 8 * ((1 + t) * (dk + 1) + 1);
  return 2 * capc * per_cluster + 8 * s * (dk + dv + 1) + 8 * (dv + 1) + HEAP_FIXED;
}

/* subgen.memory.bytes. Per step: m′ ≤ m (exact); what the sketch HOLDS, counted by the
 * allocator (heap bytes in use after the update minus before the sketch was created: nothing
 * else allocates in between), against the accounting kvb_method_memory reports:
 *   held ≥ reported bytes (the vectors it says it stores are really there), and
 *   held ≤ heap_allowance (no vector stored beyond D's m′(1+t) key vectors, M's s (k, v) pairs
 *   and µ, up to the growth slack and bookkeeping listed there);
 * and the theorem's form on what is held, O(d(mt + s)) with d = max(d_k, d_v): capc <= 16m
 * (m′ <= m, m >= 1), (1+t)(d_k+1) + 1 <= 5td, s(d_k+d_v+1) <= 3sd, so heap_allowance <=
 * 2·16m·8·5td + 24sd + 8(d_v+1) + HEAP_FIXED <= 1280·d·(mt+s) + 8(d+1) + HEAP_FIXED: a loose
 * constant, asserted as such; the measured held/(d(mt+s)) is reported.
 * The formula's own constant (32·d·(mt+s), header) is reported, not re-derived here.
 * Mutant method:subgen:keep_every_key keeps a copy of every key (memory grows with n) that the
 * accounting does not count: the allocator sees it, the accounting does not. */
static void memory_bytes(prop_ctx *ctx) {
  size_t nc = sizeof bytes_cases / sizeof *bytes_cases;
  for (size_t ci = 0; ci < nc; ci++) {
    const mem_case *c = &bytes_cases[ci];
    kvb_stream *s = mem_stream(ctx, ci, c);
    gsl_rng *rng = prop_rng(ctx, 100 + ci);
    void *drain[TC_CLASSES * TC_COUNT];
    tcache_drain(drain);
    size_t base = heap_in_use();
    kvb_method *m = s ? mem_method(ctx, "subgen", rng, s, c) : NULL;
    size_t over_m = 0, under = 0, over = 0, over_thm = 0, first = 0, first_over = 0,
           worst_mc = 0, steps = 0;
    double worst_ratio = 0, worst_acc = 0, lo_ratio = INFINITY, hi_ratio = 0, hi_allow = 0;
    size_t d = (size_t)c->d, t = (size_t)c->t, sl = (size_t)c->s, mm = (size_t)c->m;
    for (size_t i = 0; m && i < s->n; i++) {
      if (kvb_method_update(m, s->K + i * d, d, s->V + i * d, d)) {
        prop_check(ctx, 0, "update: %s", kvb_strerror_last());
        break;
      }
      size_t held = heap_in_use() - base;
      size_t mc = kvb_subgen_num_clusters(m);
      kvb_memory mem;
      kvb_method_memory(m, &mem);
      steps++;
      if (mc > mm && !over_m++) first = i;
      if (held < mem.bytes) under++;
      size_t allow = heap_allowance(mc, t, d, d, sl);
      if (held > allow && !over++) first_over = i;
      hi_allow = fmax(hi_allow, (double)held / (double)allow);
      if (held > 1280 * d * (mm * t + sl) + HEAP_FIXED + 8 * (d + 1)) over_thm++;
      if (mc > worst_mc) worst_mc = mc;
      lo_ratio = fmin(lo_ratio, (double)held / (double)mem.bytes);
      hi_ratio = fmax(hi_ratio, (double)held / (double)mem.bytes);
      worst_ratio = fmax(worst_ratio, (double)held / (double)(d * (mm * t + sl)));
      worst_acc = fmax(worst_acc, (double)mem.bytes / (double)(d * (mm * t + sl)));
    }
    prop_check(ctx, over_m == 0, "case m=%d δ=%g: m′ > m at %zu steps (first at step %zu)", c->m,
               c->delta, over_m, first);
    prop_check(ctx, under == 0,
               "case m=%d: the heap holds fewer bytes than the accounting reports at %zu of %zu "
               "steps", c->m, under, steps);
    prop_check(ctx, over == 0,
               "case m=%d: the heap holds more than D (m′(1+t) keys), M (s pairs) and the "
               "listed bookkeeping at %zu of %zu steps (first at step %zu)", c->m, over, steps,
               first_over);
    prop_check(ctx, over_thm == 0, "case m=%d: held bytes > 1280·d·(mt+s) + fixed at %zu steps",
               c->m, over_thm);
    prop_note(ctx, "m=%d d=%d t=%d s=%d n=%d: max m′ = %zu; held (allocator) / reported bytes "
              "in [%.2f, %.2f], held / allowance <= %.2f; max held/(d(mt+s)) = %.1f, reported/(d(mt+s)) "
              "= %.2f (its C = 32)", c->m, c->d, c->t, c->s, c->n, worst_mc, lo_ratio, hi_ratio,
              hi_allow, worst_ratio, worst_acc);
    kvb_method_free(m);
    tcache_release(drain);
    gsl_rng_free(rng);
    kvb_stream_free(s);
  }
  prop_control_na(ctx, "exact invariants (no estimator to replace by z ≡ 0); that they can fail "
                  "is shown by method:subgen:cluster_never_join (m′ > m) and "
                  "method:subgen:keep_every_key (a stored copy the accounting misses)");
}

static uint64_t work_total(const kvb_method *m) {
  return m->work.distances + m->work.exps + m->work.coins + m->work.dots;
}

/* Work of step n (update of token n, then the query q_n), at n = 2^8 … 2^13; returns the slope
 * of log work against log n (with its 95% CI) through slope, lo, hi. Also checks the per-step caps for subgen. */
static int work_slope(prop_ctx *ctx, const char *name, const kvb_stream *s, const mem_case *c,
                      uint64_t sub, double *slope, double *lo, double *hi, double *last) {
  gsl_rng *rng = prop_rng(ctx, sub);
  kvb_method *m = mem_method(ctx, name, rng, s, c);
  int is_sg = name[0] == 's', ok = m != NULL;
  size_t d = (size_t)c->d, over = 0, first = 0;
  double x[6], y[6], z[16];
  size_t np = 0;
  for (size_t i = 0; ok && i < s->n; i++) {
    kvb_work w0 = m->work;
    uint64_t before = work_total(m);
    if (kvb_method_update(m, s->K + i * d, d, s->V + i * d, d)) {
      ok = prop_check(ctx, 0, "update: %s", kvb_strerror_last());
      break;
    }
    size_t mc = is_sg ? kvb_subgen_num_clusters(m) : 0;
    if (is_sg && (m->work.distances - w0.distances > (uint64_t)c->m ||
                  m->work.coins - w0.coins > (uint64_t)(c->t + c->s)) &&
        !over++)
      first = i;
    size_t n = i + 1;
    if (n >= 256 && (n & (n - 1)) == 0) {
      kvb_work w1 = m->work;
      if (kvb_method_query(m, s->Q + i * d, d, z, d)) {
        ok = prop_check(ctx, 0, "query: %s", kvb_strerror_last());
        break;
      }
      if (is_sg && m->work.exps - w1.exps > (uint64_t)c->s + (uint64_t)mc * (uint64_t)c->t &&
          !over++)
        first = i;
      x[np] = log2((double)n);
      y[np] = log2((double)(work_total(m) - before));
      *last = (double)(work_total(m) - before);
      np++;
    }
  }
  if (is_sg)
    prop_check(ctx, over == 0,
               "per-step work above distances ≤ m, coins ≤ t+s, exps ≤ s+m′t at %zu steps "
               "(first at step %zu)", over, first);
  kvb_method_free(m);
  gsl_rng_free(rng);
  if (!ok || np < 3) return 0;
  kvb_linear_fit(np, x, y, 0.95, slope, lo, hi, NULL);
  return 1;
}

static void memory_work(prop_ctx *ctx) {
  static const mem_case cases[] = {{8, 4, 8, 32, 8192, 0.5, 0}, {4, 4, 32, 128, 8192, 1.0, 1}};
  for (size_t ci = 0; ci < 2; ci++) {
    const mem_case *c = &cases[ci];
    kvb_stream *s = mem_stream(ctx, ci, c);
    if (!s) return;
    double b, lo, hi, last, eb, elo, ehi, elast;
    if (work_slope(ctx, "subgen", s, c, 10 + ci, &b, &lo, &hi, &last)) {
      /* Exact fits can have zero residual; then the CI collapses onto the slope. */
      if (!isfinite(lo)) lo = hi = b;
      prop_check(ctx, hi <= 0.05,
                 "m=%d t=%d s=%d: work per step grows with n: log-log slope %.3f, 95%% CI "
                 "[%.3f, %.3f]", c->m, c->t, c->s, b, lo, hi);
      prop_note(ctx,
                "work/step slope vs n (m=%d,t=%d,s=%d): subgen %.3f [%.3f, %.3f], work at "
                "n=8192 %.0f = %.2f·(mt+s)", c->m, c->t, c->s, b, lo, hi, last,
                last / (double)(c->m * c->t + c->s));
    }
    /* Control: exact attention's work per step through the SAME assertion (95% CI upper end
     * <= 0.05); its work is linear in n, so the assertion must reject it. */
    if (ci == 0 && work_slope(ctx, "exact", s, c, 20, &eb, &elo, &ehi, &elast)) {
      if (!isfinite(elo)) elo = ehi = eb;
      prop_control(ctx, "exact attention", ehi <= 0.05,
                   "work/step log-log slope %.3f [%.3f, %.3f]", eb, elo, ehi);
      /* the instrumentation itself: exact attention does n dot products per query */
      prop_check(ctx, eb > 0.9, "exact attention's work slope %.3f is not ≈ 1 (counters broken)",
                 eb);
    }
    kvb_stream_free(s);
  }
}

/* ---- 000 Corollary 1 (001 Corollary 2.5) ---- */

/* One-sided t test of H1 "slope < theta" for a fitted slope b with standard error se, df
 * degrees of freedom: P[T_df <= (b − theta)/se]. A fit exact to rounding (se <= 1e-9, e.g. exact
 * attention's 2n vectors) is decided by b < theta − 1e-9, so a slope of 1 − 1e-16 does not count
 * as below 1. */
static double slope_below_p(double b, double se, double df, double theta) {
  if (!(se > 1e-9)) return b < theta - 1e-9 ? 0.0 : 1.0;
  return gsl_cdf_tdist_P((b - theta) / se, df);
}

/* Corollary 1 read at its own parameters: ε = 1, δ·r = 1 held fixed as n grows (so
 * δr = o(log n)), t = ⌈ε⁻²·e^{2δr}·ln n⌉ and s = ⌈ε⁻²·d⌉ as Theorem 1 asks (constant 1), keys
 * (m, δ)-clusterable. Two pre-registered regimes, n = ⌊2^{8+j/2}⌉, j = 0…10 (2^8 … 2^13, 11
 * sizes, one stream per n):
 *   "m fixed = 8"   — first sentence: memory and per-step work O(ε⁻²·d·m·n^{o(1)}); the n^{o(1)}
 *                     factor here is t ∝ e^{2δr} ln n, so log(memory) vs log n must have a slope
 *                     significantly below 0.25 (ln ln n grows with local slope 1/ln n ≈ 0.11-0.16
 *                     on this range; exact attention's slope is 1);
 *   "m = ⌈√n⌉"      — second sentence: m = n^{1−Ω(1)} ⇒ memory and work n^{1−Ω(1)}: slope
 *                     significantly below 1 (prediction ≈ 1/2 + 1/ln n).
 * Measured after the n-th token: memory in vectors (kvb_method_memory) and the work of step n
 * (update + query, the instrumentation of src/method.h). Each slope is tested one-sided
 * (t test on the 16-point log-log fit, df = 14, alpha = 1e-6) and its power printed. 16 sizes,
 * a third of an octave apart (11 half-octaves before): at df = 9 the m-fixed cells' slopes, 31 se
 * below θ, still had a flip chance of 0.003–0.0045 each on a fresh seed (the predictive t
 * estimate, flip.h), most of the check tier's 0.05 target left. Control: exact
 * attention (memory 2n vectors, n dot products per query) through the same tests. */
typedef struct {
  double mem, work;
} cor1_point;

static int cor1_run(prop_ctx *ctx, const char *name, size_t n, int m, uint64_t sub,
                    cor1_point *out) {
  const int d = 4;
  const double eps = 1, delta = 0.5, r = 2; /* δ·r = 1 */
  int t = (int)ceil(exp(2 * delta * r) * log((double)n) / (eps * eps));
  int sl = (int)ceil(d / (eps * eps));
  char a[6][48];
  snprintf(a[0], 48, "n=%zu", n);
  snprintf(a[1], 48, "d_key=%d", d);
  snprintf(a[2], 48, "d_value=%d", d);
  snprintf(a[3], 48, "m=%d", m);
  snprintf(a[4], 48, "delta=%.17g", delta);
  snprintf(a[5], 48, "r=%.17g", r);
  const char *const assign[] = {a[0], a[1], a[2], a[3], a[4], a[5], "key_norm=4", NULL};
  kvb_stream *s = prop_stream(ctx, sub, "clusterable", assign);
  if (!s) return -1;
  mem_case c = {m, d, t, sl, (int)n, delta, 0};
  gsl_rng *rng = prop_rng(ctx, 1000 + sub);
  kvb_method *meth = mem_method(ctx, name, rng, s, &c);
  int rc = meth ? 0 : -1;
  double z[4];
  for (size_t i = 0; meth && i + 1 < n; i++)
    kvb_method_update(meth, s->K + i * d, d, s->V + i * d, d);
  if (meth) {
    uint64_t before = work_total(meth);
    kvb_method_update(meth, s->K + (n - 1) * d, d, s->V + (n - 1) * d, d);
    kvb_method_query(meth, s->Q + (n - 1) * d, d, z, d);
    kvb_memory mem;
    kvb_method_memory(meth, &mem);
    out->mem = (double)mem.vectors;
    out->work = (double)(work_total(meth) - before);
  }
  kvb_method_free(meth);
  gsl_rng_free(rng);
  kvb_stream_free(s);
  return rc;
}

static void corollary1(prop_ctx *ctx) {
  static const char *const regime[2] = {"m fixed = 8", "m = ⌈√n⌉"};
  static const double theta[2] = {0.25, 1.0};
  const char *methods[2] = {"subgen", "exact"};
  for (int g = 0; g < 2; g++) {
    enum { NS = 16 };
    double lx[NS], ly[2][2][NS]; /* [method][mem/work][size] */
    int ok = 1;
    for (int j = 0; j < NS && ok; j++) {
      size_t n = (size_t)lround(pow(2.0, 8 + j / 3.0));
      int m = g == 0 ? 8 : (int)ceil(sqrt((double)n));
      lx[j] = log((double)n);
      for (int k = 0; k < 2 && ok; k++) {
        cor1_point pt;
        ok = cor1_run(ctx, methods[k], n, m, (uint64_t)(100 * g + j), &pt) == 0;
        if (!ok) break;
        ly[k][0][j] = log(pt.mem);
        ly[k][1][j] = log(pt.work);
        if (k == 0 && (j == 0 || j == NS - 1))
          prop_note(ctx, "Cor. 1 [%s] n=%zu m=%d: SubGen memory %.0f vectors, step work %.0f "
                    "(exact: %zu vectors)", regime[g], n, m, pt.mem, pt.work, 2 * n);
      }
    }
    if (!ok) return;
    static const char *const what[2] = {"memory", "per-step work"};
    for (int w = 0; w < 2; w++) {
      double b, se, df, eb, ese, edf;
      kvb_linear_fit_se(NS, lx, ly[0][w], &b, &se, &df);
      kvb_linear_fit_se(NS, lx, ly[1][w], &eb, &ese, &edf);
      double p = slope_below_p(b, se, df, theta[g]), ep = slope_below_p(eb, ese, edf, theta[g]);
      prop_note(ctx, "Cor. 1 [%s] %s: log-log slope %.3f (se %.3g, df %.0f) vs %.2f: one-sided "
                "p = %.3g; alpha = 1e-6 detects a slope <= %.3f with power 0.9", regime[g],
                what[w], b, se, df, theta[g], p,
                theta[g] - (se > 0 ? kvb_t_detectable(se, df, PROP_ALPHA, 0.9) : 0));
      /* One rule for every cell: significantly below θ → HOLDS; significantly above it (the
       * opposite one-sided test) → FAILS; neither → NOT-OBSERVED. Not reaching α = 1e-6 with 16
       * sizes is a lack of power, not evidence against the corollary. */
      prop_unit(ctx, "stream size (a fresh stream and run at each of the n = 2^8..2^13 sizes: the "
                "regression's points)", NS, "[%s] %s: a slope below %.2f by the detectable amount "
                "in the note", regime[g], what[w], theta[g]);
      double p_above = 1 - p;
      char cell[96];
      snprintf(cell, sizeof cell, "%s, %s", regime[g], what[w]);
      prop_cell(ctx, p < PROP_ALPHA ? PROP_HOLDS : p_above < PROP_ALPHA ? PROP_FAILS : PROP_NOT_OBSERVED,
                cell, "slope %.3f vs %.2f, p(below) = %.3g, p(above) = %.3g", b, theta[g], p,
                p_above);
      prop_cell_pvalues(ctx, df, 2, (double[]){p, p_above}); /* the slope's t test each way */
      prop_control(ctx, "exact attention", ep < PROP_ALPHA, "[%s] %s slope %.3f, p = %.3g",
                   regime[g], what[w], eb, ep);
    }
  }
}

const prop_claim props_subgen_memory[] = {
    {"subgen.memory.bytes", "000 Thm. 1 (memory) = 001 Thm. 2.4", "invariant",
     "on (m,δ)-clusterable streams, after every step: m′ ≤ m; the heap bytes the sketch holds, "
     "counted by the allocator (mallinfo2), are ≥ the bytes kvb_method_memory reports and ≤ "
     "D's m′(1+t) key vectors + M's s (k, v) pairs + the listed bookkeeping, and ≤ 1280·d·(mt+s) "
     "+ fixed (exact)",
     {"method:subgen:cluster_never_join", "method:subgen:keep_every_key"}, memory_bytes, {"S-T1.mem", "S-T1.mcount"}},
    {"subgen.memory.work", "000 Thm. 1 (runtime) = 001 Thm. 2.4", "scaling",
     "per-step work counters: distances ≤ m, coins ≤ t+s, query exps ≤ s+m′t at every step; "
     "log-log slope of work per step vs n = 2^8..2^13 has 95% CI upper end ≤ 0.05 (control: "
     "exact attention through the same assertion, slope ≈ 1)",
     {"method:subgen:cluster_never_join"}, memory_work, {"S-T1.time"}},
    {"subgen.memory.cor1", "000 Cor. 1 = 001 Cor. 2.5", "scaling",
     "ε = 1, δr = 1 fixed (= o(log n)), t = ⌈e^{2δr} ln n⌉, s = d, 11 n in 2^8..2^13: m = 8 "
     "fixed the log-log slopes of memory and per-step work are significantly below 0.25 (the "
     "n^{o(1)} factor); with m = ⌈√n⌉ significantly below 1 (sublinear); one-sided t tests at "
     "alpha = 1e-6, 4 pre-registered cells (HOLDS below, FAILS significantly above, else "
     "NOT-OBSERVED); control: exact attention through the same tests",
     {"method:subgen:cluster_never_join"}, corollary1, {"S-C1.1", "S-C1.2"}},
    {NULL, NULL, NULL, NULL, {NULL}, NULL, {NULL}}};

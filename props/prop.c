/* prop.c — claim harness helpers (see prop.h). */
#include "prop.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

static uint64_t hash_id(const char *s) {
  /* FNV-1a: a fixed, documented map from claim id to substream family. */
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

gsl_rng *prop_rng(const prop_ctx *ctx, uint64_t i) {
  return kvb_rng_alloc_substream(ctx->seed ^ hash_id(ctx->id), i);
}

const char *prop_verdict_name(prop_verdict v) {
  switch (v) {
    case PROP_HOLDS: return "HOLDS";
    case PROP_FAILS: return "FAILS";
    case PROP_MIXED: return "MIXED";
    case PROP_VACUOUS: return "VACUOUS";
    case PROP_VACUOUS_PRACTICAL: return "VACUOUS-AT-PRACTICAL-PARAMETERS";
    case PROP_NOT_OBSERVED: return "NOT-OBSERVED";
    case PROP_INCONCLUSIVE: return "INCONCLUSIVE";
    case PROP_ERRATUM: return "ERRATUM";
    case PROP_UNCHECKED: return "UNCHECKED";
    default: return "SKIPPED";
  }
}

/* A claim mutant split at its colons: kind ("method", "stream", "probe", "check", "control"),
 * type (empty for check and control) and name. 0 when the form is wrong. */
typedef struct {
  char kind[16], type[64], name[64];
} mutant_parts;

static int split_mutant(const char *m, mutant_parts *out) {
  memset(out, 0, sizeof *out);
  if (!m) return 0;
  const char *c1 = strchr(m, ':');
  if (!c1 || (size_t)(c1 - m) >= sizeof out->kind) return 0;
  memcpy(out->kind, m, (size_t)(c1 - m));
  int typed = strcmp(out->kind, "method") == 0 || strcmp(out->kind, "stream") == 0 ||
              strcmp(out->kind, "probe") == 0;
  const char *rest = c1 + 1, *c2 = strchr(rest, ':');
  if (typed) {
    if (!c2 || c2 == rest || (size_t)(c2 - rest) >= sizeof out->type) return 0;
    memcpy(out->type, rest, (size_t)(c2 - rest));
    rest = c2 + 1;
  } else if (c2 || (strcmp(out->kind, "check") != 0 && strcmp(out->kind, "control") != 0)) {
    return 0;
  }
  if (!*rest || strlen(rest) >= sizeof out->name) return 0;
  strcpy(out->name, rest);
  return 1;
}

static const kvb_mutant_spec *type_mutants(const char *kind, const char *type, int *found) {
  *found = 1;
  if (strcmp(kind, "method") == 0 && kvb_method_lookup(type)) return kvb_method_lookup(type)->mutants;
  if (strcmp(kind, "stream") == 0 && kvb_stream_lookup(type)) return kvb_stream_lookup(type)->mutants;
  if (strcmp(kind, "probe") == 0 && kvb_probe_lookup(type)) return kvb_probe_lookup(type)->mutants;
  *found = 0;
  return NULL;
}

int prop_mutant_resolves(const char *mutant, char *why, size_t cap) {
  mutant_parts mp;
  if (!split_mutant(mutant, &mp)) {
    snprintf(why, cap, "'%s' is not of the form method|stream|probe:TYPE:NAME, check:NAME or "
             "control:z_zero", mutant ? mutant : "(null)");
    return 0;
  }
  if (strcmp(mp.kind, "check") == 0) return 1;
  if (strcmp(mp.kind, "control") == 0) {
    if (strcmp(mp.name, "z_zero") == 0) return 1;
    snprintf(why, cap, "'%s': the only control substitution is control:z_zero", mutant);
    return 0;
  }
  int found;
  const kvb_mutant_spec *t = type_mutants(mp.kind, mp.type, &found);
  if (!found) {
    snprintf(why, cap, "'%s': no %s type '%s' is registered", mutant, mp.kind, mp.type);
    return 0;
  }
  if (kvb_mutant_find(t, mp.name) < 0) {
    snprintf(why, cap, "'%s': %s '%s' lists no mutant '%s' (`kvbound list`)", mutant, mp.kind,
             mp.type, mp.name);
    return 0;
  }
  return 1;
}

/* NAME (the tail of ctx->mutant) when ctx runs KIND:TYPE:NAME, counted as applied. */
static const char *typed_mutant(prop_ctx *ctx, const char *kind, const char *type) {
  mutant_parts mp;
  if (!split_mutant(ctx->mutant, &mp) || strcmp(mp.kind, kind) != 0 || strcmp(mp.type, type) != 0)
    return NULL;
  ctx->mutant_applied++;
  return strrchr(ctx->mutant, ':') + 1;
}

void prop_apply_mutant(prop_ctx *ctx, const char *method, kvb_params *p) {
  const char *name = typed_mutant(ctx, "method", method);
  if (name) kvb_params_set_str(p, KVB_MUTANT_PARAM, name);
}

unsigned prop_walk_flags(prop_ctx *ctx) {
  mutant_parts mp;
  if (!split_mutant(ctx->mutant, &mp) || strcmp(mp.kind, "method") != 0) return 0;
  /* the methods whose mutant tables own the walk-level names (README "Mutants") */
  if (strcmp(mp.type, "merge_reduce") != 0 && strcmp(mp.type, "balancekv") != 0) return 0;
  unsigned flags = kvb_walk_flags_for(mp.name);
  if (flags) ctx->mutant_applied++;
  return flags;
}

const char *prop_stream_mutant(prop_ctx *ctx, const char *type) {
  return typed_mutant(ctx, "stream", type);
}

const char *prop_probe_mutant(prop_ctx *ctx, const char *type) {
  return typed_mutant(ctx, "probe", type);
}

int prop_check_mutant(prop_ctx *ctx, const char *name) {
  mutant_parts mp;
  if (!split_mutant(ctx->mutant, &mp) || strcmp(mp.kind, "check") != 0 ||
      strcmp(mp.name, name) != 0)
    return 0;
  ctx->mutant_applied++;
  return 1;
}

int prop_zero_control(prop_ctx *ctx) {
  if (!ctx->mutant || strcmp(ctx->mutant, "control:z_zero") != 0) return 0;
  ctx->mutant_applied++;
  return 1;
}

kvb_method *prop_method(prop_ctx *ctx, const char *name, const kvb_method_config *cfg,
                        kvb_params *p) {
  kvb_method *m = NULL;
  if (prop_zero_control(ctx)) {
    kvb_params none;
    kvb_params_init(&none);
    if (kvb_method_alloc("z_zero", cfg, &none, &m))
      prop_check(ctx, 0, "z_zero alloc: %s", kvb_strerror_last());
    return m;
  }
  prop_apply_mutant(ctx, name, p);
  if (kvb_method_alloc(name, cfg, p, &m))
    prop_check(ctx, 0, "%s alloc: %s", name, kvb_strerror_last());
  return m;
}

static void vlog(prop_ctx *ctx, const char *tag, const char *fmt, va_list ap) {
  fprintf(ctx->log, "    %s ", tag);
  vfprintf(ctx->log, fmt, ap);
  fprintf(ctx->log, "\n");
}

int prop_check(prop_ctx *ctx, int cond, const char *fmt, ...) {
  if (!cond) {
    ctx->failures++;
    ctx->check_failures++;
    va_list ap;
    va_start(ap, fmt);
    vlog(ctx, "violated:", fmt, ap);
    va_end(ap);
  }
  return cond;
}

int prop_pvalue(prop_ctx *ctx, double pvalue, double alpha, const char *fmt, ...) {
  if (alpha > PROP_ALPHA) alpha = PROP_ALPHA; /* the policy's ceiling */
  int ok = pvalue >= alpha;
  va_list ap;
  va_start(ap, fmt);
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(ctx->log, "    %s %s: p = %.3g (alpha = %.0e)\n", ok ? "test:" : "REJECTED:", buf,
          pvalue, alpha);
  if (!ok) {
    /* How robust a mutant's catch by this rejection is: the chance that a fresh draw of the
     * experiment would not reject, by the predictive Φ(−(z_obs − z_α)/√2) (src/core/flip.h:
     * calibrated by simulation, where the plug-in Φ(−(z_obs − z_α)) was below a tenth of the
     * true miss in a fifth of the catches). */
    double m = kvb_flip_normal(pvalue, alpha);
    if (!ctx->rejected || m < ctx->reject_miss) ctx->reject_miss = m;
    ctx->rejected++;
    ctx->failures++;
  }
  ctx->ntests++, ctx->ptests++;
  ctx->alpha_sum += alpha;
  return ok;
}

void prop_note(prop_ctx *ctx, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(ctx->log, "    note: %s\n", buf);
  size_t used = strlen(ctx->notes);
  if (used + strlen(buf) + 3 < sizeof ctx->notes)
    snprintf(ctx->notes + used, sizeof ctx->notes - used, "%s%s", used ? "; " : "", buf);
}

#define FORMAT(buf, fmt)          \
  char buf[1024];                 \
  do {                            \
    va_list ap;                   \
    va_start(ap, fmt);            \
    vsnprintf(buf, sizeof buf, fmt, ap); \
    va_end(ap);                   \
  } while (0)

int prop_control(prop_ctx *ctx, const char *control, int passed, const char *fmt, ...) {
  FORMAT(buf, fmt);
  ctx->controls_run++;
  ctx->controls_passed += passed != 0;
  if (ctx->nctl < PROP_MAX_CELLS) {
    ctx->ctl_passed[ctx->nctl] = passed != 0;
    ctx->ctl_flip[ctx->nctl++] = NAN;
  }
  /* a control decided by a test at α can pass by chance: counted in the false-alarm bound */
  ctx->ntests++, ctx->alpha_sum += PROP_ALPHA;
  prop_note(ctx, "control %s %s the assertion: %s", control, passed ? "PASSES" : "fails", buf);
  return passed;
}

void prop_control_flip(prop_ctx *ctx, double flip) {
  if (ctx->nctl < 1 || isnan(flip)) return;
  ctx->ctl_flip[ctx->nctl - 1] = flip < 0 ? 0 : flip > 1 ? 1 : flip;
}

double prop_verdict_flip(double cells_flip, int n, const unsigned char *passed, const double *flip,
                         int *unknown) {
  int u = 0, any = 0;
  double lo = INFINITY, sum = 0;
  for (int i = 0; i < n; i++) {
    if (isnan(flip[i])) {
      u++;
      continue;
    }
    if (passed[i]) any = 1, lo = fmin(lo, flip[i]);
    else sum += flip[i];
  }
  if (unknown) *unknown = u;
  /* VACUOUS by a control: only the passing controls can move it (the cells are overruled) */
  if (any) return fmin(1, lo);
  return fmin(1, cells_flip + sum);
}

int prop_control_test(prop_ctx *ctx, double p) {
  ctx->ntests++, ctx->ptests++, ctx->alpha_sum += PROP_ALPHA;
  return p < PROP_ALPHA;
}

void prop_control_na(prop_ctx *ctx, const char *fmt, ...) {
  FORMAT(buf, fmt);
  ctx->controls_na = 1;
  fprintf(ctx->log, "    no trivial control: %s\n", buf);
}

void prop_vacuous_practical(prop_ctx *ctx, const char *fmt, ...) {
  FORMAT(buf, fmt);
  ctx->vacuous_practical = 1;
  prop_note(ctx, "VACUOUS-AT-PRACTICAL-PARAMETERS: %s", buf);
}

void prop_not_observed(prop_ctx *ctx, const char *fmt, ...) {
  FORMAT(buf, fmt);
  ctx->not_observed = 1;
  prop_note(ctx, "NOT-OBSERVED: %s", buf);
}

void prop_inconclusive(prop_ctx *ctx, double power, const char *fmt, ...) {
  FORMAT(buf, fmt);
  ctx->inconclusive = 1;
  prop_note(ctx, "INCONCLUSIVE: the design could not detect the stated effect with power >= 0.9; "
                 "power = %.3g: %s", power, buf);
}

void prop_unit(prop_ctx *ctx, const char *unit, size_t n, const char *fmt, ...) {
  FORMAT(buf, fmt);
  ctx->units++;
  prop_note(ctx, "unit = %s, N = %zu; powered for: %s", unit, n, buf);
}

void prop_exact(prop_ctx *ctx) { ctx->exact = 1; }

int prop_lacks_unit(const prop_ctx *ctx) {
  return !ctx->exact && ctx->ptests > 0 && ctx->units == 0 && !ctx->skipped;
}

void prop_miss(prop_ctx *ctx, double p) {
  if (!ctx->mutant) return;
  if (!ctx->miss_set || p > ctx->miss) ctx->miss = p;
  ctx->miss_set = 1;
  fprintf(ctx->log, "    mutant miss probability: %.3g\n", p);
}

void prop_cell(prop_ctx *ctx, prop_verdict v, const char *cell, const char *fmt, ...) {
  FORMAT(buf, fmt);
  if (ctx->ncells < PROP_MAX_CELLS) {
    ctx->cell_flip[ctx->ncells] = ctx->exact ? 0 : NAN;
    ctx->cell_flip_holds[ctx->ncells] = NAN;
    ctx->cells[ctx->ncells++] = v;
  } else {
    prop_check(ctx, 0, "more than %d cells", PROP_MAX_CELLS);
  }
  /* a cell is decided by at most two one-sided tests at α (HOLDS or FAILS): counted as 2α in
   * the false-alarm bound, whether or not this cell's decision was a test (an upper bound) */
  if (!ctx->exact) ctx->ntests++, ctx->alpha_sum += 2 * PROP_ALPHA;
  prop_note(ctx, "cell [%s] %s: %s", cell, prop_verdict_name(v), buf);
}

double prop_power_at(double detectable, double effect) {
  return kvb_normal_power_at(detectable, effect, PROP_ALPHA, 0.9);
}

/* The flip chance of the cell just reported (src/core/flip.h: the predictive probability that
 * a fresh draw lands on the other side of the test's threshold, whichever side it is on). */
static void set_flip(prop_ctx *ctx, double flip) {
  if (ctx->ncells < 1 || ctx->exact || isnan(flip)) return;
  ctx->cell_flip[ctx->ncells - 1] = flip;
}

void prop_cell_flip(prop_ctx *ctx, double flip) { set_flip(ctx, flip); }

void prop_cell_pvalue(prop_ctx *ctx, double p) {
  if (ctx->ncells < 1 || ctx->exact || isnan(p)) return;
  ctx->ptests++;
  set_flip(ctx, kvb_flip_normal(p, PROP_ALPHA));
}

void prop_cell_pvalue_t(prop_ctx *ctx, double p, double df) {
  if (ctx->ncells < 1 || ctx->exact || isnan(p)) return;
  ctx->ptests++;
  set_flip(ctx, kvb_flip_t(p, df, PROP_ALPHA));
}

void prop_cell_pvalues(prop_ctx *ctx, double df, int n, const double *p) {
  double s = 0, f0 = NAN;
  if (ctx->ncells >= 1 && !ctx->exact && n > 0) ctx->ptests++;
  for (int i = 0; i < n; i++) {
    if (isnan(p[i])) continue;
    double f = isinf(df) ? kvb_flip_normal(p[i], PROP_ALPHA) : kvb_flip_t(p[i], df, PROP_ALPHA);
    s += f;
    if (i == 0) f0 = f;
  }
  set_flip(ctx, s > 1 ? 1 : s);
  /* a cell that is neither HOLDS nor VACUOUS comes out HOLDS only through its HOLDS test */
  int k = ctx->ncells - 1;
  if (k >= 0 && !ctx->exact && ctx->cells[k] != PROP_HOLDS && ctx->cells[k] != PROP_VACUOUS)
    ctx->cell_flip_holds[k] = f0;
}

void prop_cell_gate(prop_ctx *ctx, double det, double effect, double df) {
  int k = ctx->ncells - 1;
  if (k < 0 || ctx->exact || isnan(ctx->cell_flip[k])) return;
  prop_verdict v = ctx->cells[k];
  if (v != PROP_NOT_OBSERVED && v != PROP_INCONCLUSIVE) return;
  double g = kvb_flip_gate(det, effect, df);
  if (!isnan(g)) ctx->cell_flip[k] = fmin(1, ctx->cell_flip[k] + g);
}

void prop_cell_controls(prop_ctx *ctx, int n, const int *passed, const double *flip) {
  int k = ctx->ncells - 1;
  if (k < 0 || ctx->exact) return;
  double c = kvb_flip_controls(n, passed, flip);
  if (isnan(c)) return;
  /* VACUOUS: the controls alone decide it; otherwise either its tests or a control moves it */
  if (ctx->cells[k] == PROP_VACUOUS) ctx->cell_flip[k] = c;
  else if (!isnan(ctx->cell_flip[k])) ctx->cell_flip[k] = fmin(1, ctx->cell_flip[k] + c);
}

double prop_runs_flip(const double *w, unsigned n, double bound, unsigned kcrit) {
  double y[256];
  unsigned k = 0;
  for (unsigned i = 0; i < n; i++) k += w[i] > bound;
  if (n > 256) return kvb_flip_binom(k, n, kcrit);
  for (unsigned i = 0; i < n; i++) y[i] = log(w[i]);
  double f = kvb_flip_exceed(y, n, log(bound), kcrit);
  return isnan(f) ? kvb_flip_binom(k, n, kcrit) : f;
}

void prop_cell_binom(prop_ctx *ctx, unsigned k, unsigned n, double p0) {
  if (ctx->ncells >= 1 && !ctx->exact) ctx->ptests++;
  set_flip(ctx, kvb_flip_binom(k, n, kvb_binom_crit(n, p0, PROP_ALPHA)));
}

double prop_check_flip(const prop_verdict *cells, const double *flip, const double *flip_holds,
                       const unsigned char *detail, int ncells, int *unknown) {
  double s = 0, lo = INFINITY;
  int u = 0, first = -1, mixed = 0;
  for (int i = 0; i < ncells; i++) {
    if (detail[i]) continue;
    if (isnan(flip[i])) u++;
    else s += flip[i], lo = fmin(lo, flip[i]);
    if (first < 0) first = i;
    else mixed |= cells[i] != cells[first];
  }
  if (unknown) *unknown = u;
  if (mixed && u == 0) {
    /* MIXED changes only when every cell ends up agreeing on one value v: on a value some cell
     * has now, every cell without it must move (at most the least likely of them), on any other
     * value every cell must (at most the least likely of all) */
    double m = lo;
    for (int i = 0; i < ncells; i++) {
      if (detail[i]) continue;
      int seen = 0;
      for (int j = 0; j < i && !seen; j++) seen = !detail[j] && cells[j] == cells[i];
      if (seen) continue;
      double mv = INFINITY; /* toward HOLDS: a cell's HOLDS test's flip where it is known */
      for (int j = 0; j < ncells; j++)
        if (!detail[j] && cells[j] != cells[i])
          mv = fmin(mv, cells[i] == PROP_HOLDS && flip_holds && !isnan(flip_holds[j]) ? flip_holds[j]
                                                                                   : flip[j]);
      m += mv;
    }
    s = fmin(s, m);
  }
  return s > 1 ? 1 : s;
}

prop_verdict prop_advantage_cell(prop_ctx *ctx, const char *cell, double p, double detectable,
                                 double effect, const char *effect_what, const char *fmt, ...) {
  FORMAT(buf, fmt);
  double power = prop_power_at(detectable, effect);
  prop_verdict v = p < PROP_ALPHA ? PROP_HOLDS : power >= 0.9 ? PROP_NOT_OBSERVED : PROP_INCONCLUSIVE;
  prop_cell(ctx, v, cell, "%s; powered for %s = %.3g: power there %.3g%s", buf, effect_what,
            effect, power, v == PROP_INCONCLUSIVE ? " < 0.9, so INCONCLUSIVE" : "");
  prop_cell_pvalue(ctx, p);
  return v;
}

void prop_detail(prop_ctx *ctx, prop_verdict v, const char *cell, const char *fmt, ...) {
  FORMAT(buf, fmt);
  if (ctx->ncells < PROP_MAX_CELLS) {
    ctx->cell_detail[ctx->ncells] = 1;
    ctx->cell_flip[ctx->ncells] = ctx->exact ? 0 : NAN;
    ctx->cell_flip_holds[ctx->ncells] = NAN;
    ctx->cells[ctx->ncells++] = v;
  } else {
    prop_check(ctx, 0, "more than %d cells", PROP_MAX_CELLS);
  }
  prop_note(ctx, "within the unit [%s] %s: %s", cell, prop_verdict_name(v), buf);
}

void prop_skip(prop_ctx *ctx, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  ctx->skipped = 1;
  prop_note(ctx, "skipped: %s", buf);
}

void prop_erratum(prop_ctx *ctx, const char *corrected, const char *fmt, ...) {
  FORMAT(buf, fmt);
  ctx->erratum = 1;
  /* one bracketed span, so the report can print it in the paper claim's row (prop_main.c) */
  prop_note(ctx, "ERRATUM ⟦the text, wrong whatever the run: %s — corrected: %s⟧", buf, corrected);
}

prop_verdict prop_verdict_of(const prop_ctx *ctx) {
  if (ctx->failures) return PROP_FAILS;
  if (ctx->skipped) return PROP_SKIPPED;
  if (ctx->erratum) return PROP_ERRATUM;
  if (ctx->controls_passed) return PROP_VACUOUS;
  if (ctx->vacuous_practical) return PROP_VACUOUS_PRACTICAL;
  int first = -1; /* the cells that vote: within-unit findings (prop_detail) do not */
  for (int i = 0; i < ctx->ncells; i++) {
    if (ctx->cell_detail[i]) continue;
    if (first < 0) first = i;
    else if (ctx->cells[i] != ctx->cells[first]) return PROP_MIXED;
  }
  if (first >= 0 && ctx->cells[first] != PROP_HOLDS) return ctx->cells[first];
  if (ctx->inconclusive) return PROP_INCONCLUSIVE;
  if (ctx->not_observed) return PROP_NOT_OBSERVED;
  return PROP_HOLDS;
}

prop_verdict prop_roll_up(const prop_verdict *v, size_t n) {
  if (n == 0) return PROP_UNCHECKED;
  int fails = 0, erratum = 0, vacuous = 0, agree = 1;
  for (size_t i = 0; i < n; i++) {
    fails |= v[i] == PROP_FAILS;
    erratum |= v[i] == PROP_ERRATUM;
    vacuous |= v[i] == PROP_VACUOUS;
    agree &= v[i] == v[0];
  }
  if (fails) return PROP_FAILS;
  if (erratum) return PROP_ERRATUM;
  if (vacuous) return PROP_VACUOUS;
  return agree ? v[0] : PROP_MIXED;
}

unsigned prop_trials(const prop_ctx *ctx, unsigned check, unsigned full) {
  return ctx->full ? full : check;
}

kvb_stream *prop_stream(prop_ctx *ctx, uint64_t i, const char *name, const char *const *assign) {
  kvb_params p;
  kvb_params_init(&p);
  for (; assign && *assign; assign++) kvb_params_parse(&p, *assign);
  if (!kvb_params_has(&p, KVB_MUTANT_PARAM)) {
    const char *mut = prop_stream_mutant(ctx, name);
    if (mut) kvb_params_set_str(&p, KVB_MUTANT_PARAM, mut);
  }
  gsl_rng *r = prop_rng(ctx, i);
  kvb_stream *s = NULL;
  int st = kvb_stream_generate(name, &p, r, &s);
  gsl_rng_free(r);
  if (st) prop_check(ctx, 0, "stream %s: %s", name, kvb_strerror_last());
  return s;
}

int prop_binomial_bound(prop_ctx *ctx, unsigned F, unsigned N, double p, const char *what) {
  double lo, hi;
  unsigned crit;
  kvb_clopper_pearson(F, N, 0.95, &lo, &hi);
  double p1 = kvb_binom_detectable_rate(N, p, PROP_ALPHA, 0.9, &crit);
  prop_note(ctx, "%s: %u/%u failures (rate %.4f, 95%% CP [%.4f, %.4f]) vs claimed <= %g; "
            "N = %u, alpha = %.0e rejects at >= %u failures, detecting a rate >= %.3g with power 0.9",
            what, F, N, (double)F / N, lo, hi, p, N, PROP_ALPHA, crit, p1);
  return prop_pvalue(ctx, kvb_binom_tail_ge(F, p, N), PROP_ALPHA,
                     "%s: P[Bin(%u, %g) >= %u]", what, N, p, F);
}

kvb_method *prop_subgen(prop_ctx *ctx, gsl_rng *rng, size_t d_key, size_t d_value, double scale,
                        double delta, double t, double s) {
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "delta", delta);
  kvb_params_set(&p, "t", t);
  kvb_params_set(&p, "s", s);
  kvb_method_config cfg = {d_key, d_value, scale, rng};
  return prop_method(ctx, "subgen", &cfg, &p);
}

prop_slope prop_fit_slope(size_t n, const double *x, const double *y) {
  prop_slope f = {0, 0, 0, 0, 0};
  double ic;
  kvb_linear_fit_se(n, x, y, &f.slope, &f.se, &f.df);
  kvb_linear_fit(n, x, y, 0.95, &f.slope, &f.lo, &f.hi, &ic);
  return f;
}

double prop_slope_less(prop_slope a, prop_slope b, double *t_stat, double *detectable) {
  return kvb_slope_less(a.slope, a.se, a.df, b.slope, b.se, b.df, PROP_ALPHA, 0.9, t_stat,
                        detectable);
}

double prop_mean(const double *x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return s / (double)n;
}

void prop_mean_sd(const double *x, size_t n, double *mu, double *sd) {
  double a = prop_mean(x, n), q = 0;
  for (size_t i = 0; i < n; i++) q += (x[i] - a) * (x[i] - a);
  *mu = a, *sd = sqrt(q / (double)(n - 1));
}

/* ---- trial blocks ---- */

int prop_trial_mine(const prop_ctx *ctx, uint64_t i) {
  return prop_trial_mine_block(ctx, i, PROP_TRIAL_BLOCK);
}

int prop_trial_mine_block(const prop_ctx *ctx, uint64_t i, uint64_t block) {
  if (ctx->tb_merge) return 0;
  if (ctx->tb_n <= 1) return 1;
  return (int)((i / (block ? block : 1)) % (uint64_t)ctx->tb_n) == ctx->tb_k;
}

void prop_trial_rng(const prop_ctx *ctx, gsl_rng *r, uint64_t stream, uint64_t i) {
  /* Above every prop_rng index a claim uses (small integers): bit 62 set, stream, trial. */
  kvb_rng_set_substream(r, ctx->seed ^ hash_id(ctx->id),
                        (UINT64_C(1) << 62) | ((stream & 0xffff) << 40) | (i & ((UINT64_C(1) << 40) - 1)));
}

/* One shard's rows of `name` into x; seen[i] counts each trial. Lines: "name i v0 v1 ...",
 * values in %.17g (exact round trip). Returns 0, or -1 on a malformed line. */
static int read_trials(FILE *f, const char *name, double *x, size_t N, size_t w,
                       unsigned char *seen) {
  char tag[256];
  unsigned long long i;
  while (fscanf(f, "%255s %llu", tag, &i) == 2) {
    int mine = strcmp(tag, name) == 0;
    if (mine && i >= N) return -1;
    for (size_t c = 0; c < w; c++) {
      double v;
      if (fscanf(f, "%lf", &v) != 1) return -1;
      if (mine) x[i * w + c] = v;
    }
    if (mine && seen[i] < 255) seen[i]++;
  }
  return feof(f) ? 0 : -1;
}

int prop_gather(prop_ctx *ctx, const char *name, double *x, size_t N, size_t w) {
  return prop_gather_block(ctx, name, x, N, w, PROP_TRIAL_BLOCK);
}

int prop_gather_block(prop_ctx *ctx, const char *name, double *x, size_t N, size_t w,
                      uint64_t block) {
  if (ctx->tb_merge) {
    unsigned char *seen = calloc(N ? N : 1, 1);
    if (!seen) return prop_check(ctx, 0, "gather %s: out of memory", name), 0;
    for (const char *const *p = ctx->tb_in; p && *p; p++) {
      FILE *f = fopen(*p, "r");
      if (!f) continue; /* a shard with no trial of this claim has no file */
      char tag[256]; /* the claim's id qualifies the name: one trial file holds every claim's */
      snprintf(tag, sizeof tag, "%s:%s", ctx->id, name);
      int bad = read_trials(f, tag, x, N, w, seen);
      fclose(f);
      if (bad) {
        free(seen);
        return prop_check(ctx, 0, "gather %s: malformed trial file %s", name, *p), 0;
      }
    }
    size_t missing = 0, dup = 0, first = N;
    for (size_t i = 0; i < N; i++) {
      if (!seen[i] && first == N) first = i;
      missing += !seen[i], dup += seen[i] > 1;
    }
    free(seen);
    if (missing || dup)
      return prop_check(ctx, 0, "gather %s: %zu trials missing (first %zu, block %zu), %zu "
                                "duplicated across the shards", name, missing, first,
                        first / PROP_TRIAL_BLOCK, dup), 0;
    return 1;
  }
  if (ctx->tb_n <= 1 || !ctx->tb_out) return 1;
  for (size_t i = 0; i < N; i++) {
    if (!prop_trial_mine_block(ctx, i, block)) continue; /* the rows this shard ran, no other */
    fprintf(ctx->tb_out, "%s:%s %zu", ctx->id, name, i);
    for (size_t c = 0; c < w; c++) fprintf(ctx->tb_out, " %.17g", x[i * w + c]);
    fputc('\n', ctx->tb_out);
  }
  ctx->tb_partial = 1;
  return 0;
}

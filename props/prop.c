/* prop.c — claim harness helpers (see prop.h). */
#include "prop.h"

#include <stdarg.h>
#include <string.h>

static uint64_t hash_id(const char *s) {
  /* FNV-1a: a fixed, documented map from claim id to substream family. */
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

gsl_rng *prop_rng(const prop_ctx *ctx, uint64_t i) {
  return kvb_rng_alloc_substream(ctx->seed ^ hash_id(ctx->id), i);
}

void prop_apply_mutant(const prop_ctx *ctx, const char *method, kvb_params *p) {
  if (!ctx->mutant) return;
  size_t len = strlen(method);
  if (strncmp(ctx->mutant, method, len) == 0 && ctx->mutant[len] == ':')
    kvb_params_set_str(p, "mutant", ctx->mutant + len + 1);
}

static void vlog(prop_ctx *ctx, const char *tag, const char *fmt, va_list ap) {
  fprintf(ctx->log, "    %s ", tag);
  vfprintf(ctx->log, fmt, ap);
  fprintf(ctx->log, "\n");
}

int prop_check(prop_ctx *ctx, int cond, const char *fmt, ...) {
  if (!cond) {
    ctx->failures++;
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
  if (!ok) ctx->failures++;
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

void prop_vacuous(prop_ctx *ctx, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  ctx->vacuous = 1;
  prop_note(ctx, "VACUOUS: %s", buf);
}

unsigned prop_trials(const prop_ctx *ctx, unsigned check, unsigned full) {
  return ctx->full ? full : check;
}

kvb_stream *prop_stream(prop_ctx *ctx, uint64_t i, const char *name, const char *const *assign) {
  kvb_params p;
  kvb_params_init(&p);
  for (; assign && *assign; assign++) kvb_params_parse(&p, *assign);
  gsl_rng *r = prop_rng(ctx, i);
  kvb_stream *s = NULL;
  int st = kvb_stream_generate(name, &p, r, &s);
  gsl_rng_free(r);
  if (st) prop_check(ctx, 0, "stream %s: %s", name, kvb_strerror_last());
  return s;
}

int prop_binomial_bound(prop_ctx *ctx, unsigned F, unsigned N, double p, const char *what) {
  double lo, hi;
  kvb_clopper_pearson(F, N, 0.95, &lo, &hi);
  prop_note(ctx, "%s: %u/%u failures (rate %.4f, 95%% CP [%.4f, %.4f]) vs claimed <= %g", what,
            F, N, (double)F / N, lo, hi, p);
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
  prop_apply_mutant(ctx, "subgen", &p);
  kvb_method_config cfg = {d_key, d_value, scale, rng};
  kvb_method *m = NULL;
  if (kvb_method_alloc("subgen", &cfg, &p, &m))
    prop_check(ctx, 0, "subgen alloc: %s", kvb_strerror_last());
  return m;
}

/* test_task_run.c — the long-context task runner (src/model/task_run.h) and the "compress once"
 * parameter it sets (prompt = P of balancekv_block, uniform_sample, recent_kcenter):
 *   - compress once, on a synthetic stream (no model): the selection made at the first query
 *     with >= P tokens is the one every later query uses, the tokens after it are kept exactly
 *     (memory = selection + tail; the answer after the tail equals exact attention over the
 *     frozen selection plus the tail, computed here by hand for recent_kcenter), and prompt = 0
 *     keeps the old streaming behaviour (a later query re-selects);
 *   - with the model (SKIP without it): the agnostic and aware splits of a task; exact attention
 *     through the method factory gives the exact pass's answer and log-likelihood to the bit
 *     (Δ = 0), kvb_task_run with exact gives Δ = 0 by construction; sink_recent keeping every
 *     token gives |Δ| ≤ 1e-3; a method that drops most of the prompt (sink_recent, budget 64)
 *     gives Δ < 0 and fewer bytes; bad input is refused with nothing allocated. */
#include "attention.h"
#include "kvb_error.h"
#include "model.h"
#include "pcg32.h"
#include "recent_kcenter.h"
#include "registry.h"
#include "task_run.h"
#include "tasks.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { D = 8, N0 = 64, NT = 80 };

static void stream(double *K, double *V, size_t n) {
  gsl_rng *r = kvb_rng_alloc_substream(7, 1);
  for (size_t i = 0; i < n * D; i++) K[i] = gsl_rng_uniform(r) * 2 - 1, V[i] = gsl_rng_uniform(r);
  gsl_rng_free(r);
}

static kvb_method *make(const char *name, double prompt, const char *k1, double v1,
                        const char *k2, double v2, gsl_rng *r) {
  kvb_params p;
  kvb_params_init(&p);
  if (k1) kvb_params_set(&p, k1, v1);
  if (k2) kvb_params_set(&p, k2, v2);
  kvb_params_set(&p, "prompt", prompt);
  kvb_method_config cfg = {D, D, 1.0 / sqrt((double)D), r};
  kvb_method *m = NULL;
  kvb_method_alloc(name, &cfg, &p, &m);
  return m;
}

/* memory (vectors) after N0 tokens + a query, then after NT tokens + a query */
static void feed(kvb_method *m, const double *K, const double *V, size_t from, size_t to,
                 double *z) {
  for (size_t i = from; i < to; i++) kvb_method_update(m, K + i * D, D, V + i * D, D);
  kvb_method_query(m, K + (to - 1) * D, D, z, D);
}

static void test_compress_once(void) {
  double K[NT * D], V[NT * D], z[D];
  stream(K, V, NT);
  const char *names[] = {"balancekv_block", "uniform_sample", "recent_kcenter"};
  for (int a = 0; a < 3; a++) {
    for (int once = 0; once < 2; once++) {
      gsl_rng *r = kvb_rng_alloc_substream(3, (uint64_t)a);
      kvb_method *m = a == 2 ? make(names[a], once ? N0 : 0, "window", 8, "centers", 8, r)
                             : make(names[a], once ? N0 : 0, "T", 2, "f", 4, r);
      char name[96];
      snprintf(name, sizeof name, "task_run.compress_once.%s%s", names[a], once ? "" : ".off");
      if (!m) {
        CHECK(0, name, "alloc: %s", kvb_strerror_last());
        gsl_rng_free(r);
        continue;
      }
      kvb_memory m0, m1;
      feed(m, K, V, 0, N0, z);
      kvb_method_memory(m, &m0);
      feed(m, K, V, N0, NT, z);
      kvb_method_memory(m, &m1);
      /* once: the selection stays and the NT − N0 later tokens are added exactly; off: the
       * streaming reading recompresses the whole stream (memory of a fresh compression of NT) */
      size_t want = once ? m0.vectors + 2 * (NT - N0) : (size_t)-1;
      if (!once) {
        gsl_rng *r2 = kvb_rng_alloc_substream(3, 100 + (uint64_t)a);
        kvb_method *f = a == 2 ? make(names[a], 0, "window", 8, "centers", 8, r2)
                               : make(names[a], 0, "T", 2, "f", 4, r2);
        kvb_memory mf;
        feed(f, K, V, 0, NT, z);
        kvb_method_memory(f, &mf);
        want = mf.vectors;
        kvb_method_free(f);
        gsl_rng_free(r2);
      }
      CHECK(m1.vectors == want && (!once || m1.vectors > m0.vectors), name,
            "memory %zu after %d tokens, %zu after %d (want %zu)", m0.vectors, N0, m1.vectors, NT,
            want);
      kvb_method_free(m);
      gsl_rng_free(r);
    }
  }
  /* recent_kcenter once: the answer after the tail is exact attention over the frozen selection
   * (read after the first query) plus the tail, by hand */
  kvb_method *m = make("recent_kcenter", N0, "window", 8, "centers", 8, NULL);
  size_t sel[64], ns;
  double z1[D], Kb[NT * D], Vb[NT * D], zr[D];
  feed(m, K, V, 0, N0, z1);
  ns = kvb_recent_kcenter_kept(m, sel, 64);
  feed(m, K, V, N0, NT, z1);
  size_t nb = 0;
  for (size_t j = 0; j < ns; j++, nb++)
    memcpy(Kb + nb * D, K + sel[j] * D, sizeof(double) * D), memcpy(Vb + nb * D, V + sel[j] * D, sizeof(double) * D);
  for (size_t i = N0; i < NT; i++, nb++)
    memcpy(Kb + nb * D, K + i * D, sizeof(double) * D), memcpy(Vb + nb * D, V + i * D, sizeof(double) * D);
  kvb_attention_exact(nb, D, D, Kb, Vb, K + (NT - 1) * D, 1.0 / sqrt((double)D), zr, NULL);
  double err = 0;
  for (int a = 0; a < D; a++) err = fmax(err, fabs(zr[a] - z1[a]));
  CHECK(ns == 16 && err <= 1e-12, "task_run.compress_once.recent_kcenter_by_hand",
        "selection %zu (want 16), max |z − hand| %.3g", ns, err);
  kvb_method_free(m);
  /* bad input: prompt must be a non-negative integer */
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "prompt", -1);
  kvb_method_config cfg = {D, D, 1, NULL};
  kvb_method *bad = NULL;
  int st = kvb_method_alloc("balancekv_block", &cfg, &p, &bad);
  CHECK(st != KVB_OK && bad == NULL, "task_run.compress_once.negative_refused", "status %d", st);
}

static int exact_by_factory(void *vc, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  return kvb_task_method_make(vc, layer, g, cfg, out);
}

static void test_with_model(void) {
  kvb_model m;
  if (kvb_model_load(NULL, &m)) {
    CHECK(0, "task_run.model_load", "%s", kvb_strerror_last());
    return;
  }
  kvb_task t;
  const kvb_lm lm = kvb_lm_view_smollm2(&m);
  int st = kvb_task_make(&lm, KVB_TASK_NIAH_SINGLE, 1024, 0.5, 11, &t);
  CHECK(st == KVB_OK, "task_run.task_make", "%s", kvb_strerror_last());
  if (st) {
    kvb_model_free(&m);
    return;
  }
  kvb_task_prep pa, pw;
  /* the two forms' splits */
  st = kvb_task_prepare(&lm, &t, 0, &pa);
  CHECK(!st && pa.n0 == t.n_context && pa.n_tail == t.n_question + t.n_cue &&
            !memcmp(pa.tokens + pa.n0, t.question, t.n_question * sizeof(int32_t)),
        "task_run.agnostic_split", "status %d: n0 %zu tail %zu", st, pa.n0, pa.n_tail);
  if (!st) kvb_task_prep_free(&pa);
  st = kvb_task_prepare(&lm, &t, 1, &pw);
  CHECK(!st && pw.n0 == t.n_context + t.n_question && pw.n_tail == t.n_cue &&
            pw.prefill_cpu > 0,
        "task_run.aware_split", "status %d: n0 %zu tail %zu", st, pw.n0, pw.n_tail);
  if (st) {
    kvb_task_free(&t);
    kvb_model_free(&m);
    return;
  }
  /* exact through the factory = the exact pass, to the bit */
  kvb_task_pass e, f;
  kvb_dec_opts o = {0, 1, 0};
  kvb_task_method tm;
  kvb_task_method_init(&tm, kvb_method_lookup("exact"), NULL, &lm, pw.n0);
  int s1 = kvb_task_pass_run(&lm, &pw, NULL, NULL, &o, &e);
  int s2 = kvb_task_pass_run(&lm, &pw, exact_by_factory, &tm, &o, &f);
  CHECK(!s1 && !s2 && e.loglik == f.loglik && !strcmp(e.text, f.text) && e.right == f.right &&
            e.bytes == f.bytes && e.loglik < 0,
        "task_run.exact_factory_equals_exact", "status %d/%d: log-lik %.17g vs %.17g", s1, s2,
        e.loglik, f.loglik);
  CHECK(!s1 && e.right && e.score == 1 && fabs(e.vectors - 2.0 * (double)pw.n0) < 1e-9 &&
            fabs(e.bytes - 8.0 * 128 * (double)pw.n0) < 1e-6,
        "task_run.exact_answers", "exact \"%s\" right %d, %.1f vectors, %.0f bytes", e.text ? e.text : "",
        e.right, e.vectors, e.bytes);
  /* kvb_task_run: exact gives Δ = 0 by construction */
  kvb_task_result r;
  st = kvb_task_run(&lm, &pw, NULL, 1, &r);
  CHECK(!st && r.delta == 0 && r.exact.loglik == e.loglik && !strcmp(r.method.text, r.exact.text),
        "task_run.exact_delta_zero", "status %d, Δ %g", st, r.delta);
  if (!st) kvb_task_result_free(&r);
  /* sink_recent keeping every token: Δ within float rounding of the method path */
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "budget", 4096);
  kvb_task_method_init(&tm, kvb_method_lookup("sink_recent"), &p, &lm, pw.n0);
  st = kvb_task_run(&lm, &pw, &tm, 1, &r);
  CHECK(!st && fabs(r.delta) <= 1e-3 && r.method.right, "task_run.keep_all_delta_zero",
        "status %d, Δ %g, \"%s\"", st, r.delta, st ? "" : r.method.text);
  if (!st) kvb_task_result_free(&r);
  /* a method that drops most of the prompt: fewer bytes and a lower answer log-lik */
  kvb_params_init(&p);
  kvb_params_set(&p, "budget", 64);
  kvb_task_method_init(&tm, kvb_method_lookup("sink_recent"), &p, &lm, pw.n0);
  st = kvb_task_run(&lm, &pw, &tm, 1, &r);
  CHECK(!st && r.delta < -1 && r.method.bytes == 64.0 * 128 * 8 && r.method.vectors == 128,
        "task_run.small_budget_loses", "status %d, Δ %g, %.0f bytes", st, r.delta, r.method.bytes);
  if (!st) kvb_task_result_free(&r);
  /* bad input */
  kvb_task_prep bad;
  st = kvb_task_prepare(&lm, NULL, 1, &bad);
  CHECK(st == KVB_ENULL && bad.tokens == NULL, "task_run.null_task_refused", "status %d", st);
  st = kvb_task_prepare(&lm, &t, 3, &bad); /* 2 is the authors' protocol */
  CHECK(st == KVB_EINVAL && bad.tokens == NULL, "task_run.bad_form_refused", "status %d", st);
  kvb_task_method none;
  kvb_task_method_init(&none, NULL, NULL, &lm, pw.n0);
  st = kvb_task_run(&lm, &pw, &none, 1, &r);
  CHECK(st != KVB_OK && r.method.text == NULL && r.exact.text == NULL, "task_run.no_method_refused",
        "status %d", st);
  kvb_task_pass_free(&e), kvb_task_pass_free(&f);
  kvb_task_prep_free(&pw);
  kvb_task_free(&t);
  kvb_model_free(&m);
}

int main(void) {
  test_compress_once();
  if (kvb_model_available() != KVB_OK) printf("SKIP task_run.model: %s\n", kvb_strerror_last());
  else test_with_model();
  UNIT_EXIT();
}

/* test_task_protocol.c — known answers that pin the task runner's protocol (task_run.h,
 * decode_compressed.h) on one small hand-built task inside SmolLM2-135M (SKIP without the
 * model). The task (a needle sentence among a few filler sentences, question-aware: the
 * compressed prompt is context + question, n0 = 100 tokens; the 9-token cue and the 9-token
 * answer follow; one greedy token) keeps each forward pass cheap. Pinned:
 *   - the answer log-likelihood, ABSOLUTELY: kvb_task_run's exact pass, Σ log p(answer token),
 *     against the model's own full forward over prompt + cue + answer (kvb_lm_reference:
 *     model.c's prefill, not the compressed-decoding path), within 1e-4; a sum that skips an
 *     answer token moves by at least the smallest per-token |log p| (printed; asserted ≥ 1e-3,
 *     the check's power);
 *   - the prompt freeze at n0: snapkv through kvb_task_run, and every other compress-once method
 *     (balancekv_block, uniform_sample, recent_kcenter) and budgeted or quantized cache
 *     (sink_recent, h2o, tova, knorm, q8_0, q4_0) in a pass opened as kvb_task_run opens it
 *     (kvb_task_method_make, prompt = n0, observe = kvb_task_method_observe), hold after the
 *     prompt the vectors and bytes worked out by hand below from the method's rule at n = n0 (a
 *     freeze at n0 − 1 would keep the last prompt token exactly on top: one token more);
 *   - PyramidKV's per-layer budgets over SmolLM2's 30 compressed layers (2406.02069 §3.2 with
 *     the authors' integer divisions, worked by hand for B = 38, w = 8, β = 20: layer l keeps
 *     67 − 2l tokens; told 31 layers the step would be 1, not 2), read per (layer, kv head);
 *   - h2o and tova observing every prompt query by default (H2O 2306.14048 Alg. 1 accumulates
 *     the attention of every query; TOVA 2401.06104 §3.3 evicts by each step's query; both
 *     methods' files read them per step): the default is n0, h2o's pass through kvb_task_run
 *     equals to the bit a pass with observe = n0 given explicitly, and for both a pass with
 *     observe = 0 differs (the control: on this task the default matters). */
#include "kvb_error.h"
#include "lm.h"
#include "model.h"
#include "registry.h"
#include "task_run.h"
#include "tasks.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The hand-built task: SmolLM2's tokenizer gives 100 prompt tokens, a 9-token cue and a 9-token
 * answer (checked in main: the hand-worked counts below assume them). */
static const char CONTEXT[] =
    "Some secret numbers are hidden in the text below. The garden was quiet in the morning, and "
    "the old clock ticked on the wall of the kitchen. The secret number of apple is 4821973. "
    "Nobody came to the door that day, and the letters stayed unopened on the table. Rain fell "
    "over the hills in the evening while the lamps were lit one by one along the road.";
static const char QUESTION[] = "\n\nQuestion: What is the secret number of apple in the text above?";
static const char CUE[] = "\nAnswer: The secret number of apple is";
static const char ANSWER[] = " 4821973.";

static int encode(const kvb_lm *lm, const char *s, int32_t **ids, size_t *n) {
  return kvb_lm_encode(lm, s, strlen(s), ids, n);
}

static int build_task(const kvb_lm *lm, kvb_task *t) {
  memset(t, 0, sizeof *t);
  t->family = KVB_TASK_NIAH_SINGLE;
  int st = encode(lm, CONTEXT, &t->context, &t->n_context);
  if (!st) st = encode(lm, QUESTION, &t->question, &t->n_question);
  if (!st) st = encode(lm, CUE, &t->cue, &t->n_cue);
  if (!st) st = encode(lm, ANSWER, &t->answer_ids, &t->n_answer);
  if (!st && !(t->answer = malloc(sizeof ANSWER))) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (st) {
    kvb_task_free(t);
    return st;
  }
  strcpy(t->answer, ANSWER);
  t->max_new = 1; /* one greedy token: each pass is two forward calls (the log-lik is the pin) */
  t->n_expected = 1;
  strcpy(t->expected[0], "4821973");
  t->text = "";
  t->needle_at = (size_t)-1;
  t->length = t->n_context + t->n_question + t->n_cue + t->max_new;
  return KVB_OK;
}

/* ---- the absolute answer log-likelihood ---- */

static void test_loglik(const kvb_lm *lm, const kvb_task_prep *p) {
  const kvb_task *t = p->task;
  size_t n0 = p->n0, nt = p->n_tail, na = t->n_answer, V = (size_t)lm->n_vocab;
  /* prompt + tail + answer; the reference's rows n0+nt−1 .. n0+nt+na−2 predict the answer */
  int32_t *all = malloc((n0 + nt + na) * sizeof *all);
  float *lp = NULL;
  int st = all ? KVB_OK : KVB_ENOMEM;
  if (!st) {
    memcpy(all, p->tokens, (n0 + nt) * sizeof *all);
    memcpy(all + n0 + nt, t->answer_ids, na * sizeof *all);
    st = kvb_lm_reference(lm, all, n0 + nt - 1, na, &lp);
  }
  kvb_task_result r;
  int sr = st ? st : kvb_task_run(lm, p, NULL, 1, &r);
  double ref = 0, least = INFINITY;
  for (size_t i = 0; !st && i < na; i++) {
    double l = lp[i * V + (size_t)t->answer_ids[i]];
    ref += l, least = fmin(least, fabs(l));
  }
  printf("  answer %zu tokens after n0 %zu + tail %zu: reference log-lik %.6f (smallest |log p| of "
         "a token %.4f), exact pass %.6f\n", na, n0, nt, ref, least, sr ? NAN : r.exact.loglik);
  CHECK(!st && !sr && fabs(r.exact.loglik - ref) <= 1e-4 && r.delta == 0,
        "task_protocol.exact_loglik_absolute", "status %d/%d: exact pass %.9g, reference %.9g",
        st, sr, sr ? NAN : r.exact.loglik, ref);
  CHECK(!st && least >= 1e-3, "task_protocol.loglik_pin_has_power",
        "the smallest per-token |log p| %.4g: skipping that token would move the sum by less than "
        "the pin can see", least);
  if (!sr) kvb_task_result_free(&r);
  free(all), free(lp);
}

/* ---- memory after the prompt, by hand ---- */

typedef struct {
  const char *method;
  const char *k[4];
  double v[4];
  double vectors, bytes; /* per (layer, kv head) cache after the prompt, worked by hand */
} mem_case;

static void set_params(kvb_params *p, const mem_case *c) {
  kvb_params_init(p);
  for (int i = 0; i < 4 && c->k[i]; i++) kvb_params_set(p, c->k[i], c->v[i]);
}

/* The method's pass as kvb_task_run opens it (prompt = n0, observe = kvb_task_method_observe),
 * without its forward passes: the memory right after the prompt is what the pass reports. */
static int open_as_run(const kvb_lm *lm, const kvb_task_prep *p, kvb_task_method *tm,
                       kvb_dec_session **s) {
  tm->prompt = p->n0;
  kvb_dec_opts o = {kvb_task_method_observe(tm, p->n0), 1, 0};
  return kvb_lm_dec_open(lm, &p->pre, kvb_task_method_make, tm, &o, s);
}

static void test_memory(const kvb_lm *lm, const kvb_task_prep *p) {
  const double n0 = (double)p->n0, hd = 64, tok = 2 * hd * 8; /* an exact token: K and V, float64 */
  /* balancekv_block / uniform_sample: f + w exact, the middle n0 − f − w halved T times
   * (⌊m/2^T⌋ kept, one weight each for balancekv_block); recent_kcenter: window + centers;
   * snapkv: B; the budgeted caches: B (h2o and knorm a double per kept token, tova its last
   * query); q8_0 / q4_0: every token, 2 blocks of 32 per vector at 34 / 18 bytes (llama.cpp's
   * block formats) */
  const double mid = n0 - 16, kb = floor(mid / 4);
  const mem_case cases[] = {
      {"snapkv", {"budget", "window"}, {38, 8}, 2 * 38, 38 * tok},
      {"balancekv_block", {"f", "w", "b", "T"}, {8, 8, 32, 2}, 2 * (16 + kb), (16 + kb) * tok + kb * 8},
      {"uniform_sample", {"f", "w", "T"}, {8, 8, 2}, 2 * (16 + kb), (16 + kb) * tok},
      {"recent_kcenter", {"window", "centers"}, {8, 8}, 2 * 16, 16 * tok},
      {"sink_recent", {"budget", "sink"}, {24, 4}, 2 * 24, 24 * tok},
      {"h2o", {"budget"}, {24}, 2 * 24, 24 * (tok + 8)},
      {"tova", {"budget"}, {24}, 2 * 24, 24 * tok + hd * 8},
      {"knorm", {"budget"}, {24}, 2 * 24, 24 * (tok + 8)},
      {"q8_0", {NULL}, {0}, 2 * n0, n0 * 4 * 34},
      {"q4_0", {NULL}, {0}, 2 * n0, n0 * 4 * 18},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const mem_case *c = &cases[i];
    kvb_params pr;
    set_params(&pr, c);
    kvb_task_method tm;
    kvb_task_method_init(&tm, kvb_method_lookup(c->method), &pr, lm, 0);
    char name[96];
    double vec = NAN, by = NAN;
    int st;
    if (i == 0) {
      /* snapkv through kvb_task_run itself: the freeze the runner sets is the one pinned */
      kvb_task_result r;
      st = kvb_task_run(lm, p, &tm, 1, &r);
      if (!st) vec = r.method.vectors, by = r.method.bytes, kvb_task_result_free(&r);
    } else {
      kvb_dec_session *s = NULL;
      st = tm.type ? open_as_run(lm, p, &tm, &s) : KVB_ENOTFOUND;
      if (!st) vec = kvb_dec_memory_prefill(s), by = kvb_dec_bytes_prefill(s);
      kvb_dec_close(s);
    }
    snprintf(name, sizeof name, "task_protocol.prompt_memory.%s", c->method);
    CHECK(!st && vec == c->vectors && by == c->bytes, name,
          "status %d: %.2f vectors, %.1f bytes per cache after n0 = %.0f (by hand %.0f, %.0f)", st,
          vec, by, n0, c->vectors, c->bytes);
  }
}

/* PyramidKV per layer: B = 38, w = 8, β = 20 over the 30 compressed layers. c = B − w = 30,
 * top c/β → ⌊1.5⌋ = 1, bottom 2c − 1 = 59 (below n0 − w: no clamp), step ⌊(59 − 1)/29⌋ = 2:
 * layer l keeps 59 − 2l + 8 = 67 − 2l tokens (67 … 9, mean 38 = B). */
static void test_pyramid(const kvb_lm *lm, const kvb_task_prep *p) {
  kvb_params pr;
  kvb_params_init(&pr);
  kvb_params_set(&pr, "budget", 38);
  kvb_params_set(&pr, "window", 8);
  kvb_task_method tm;
  kvb_task_method_init(&tm, kvb_method_lookup("pyramidkv"), &pr, lm, 0);
  kvb_dec_session *s = NULL;
  int st = open_as_run(lm, p, &tm, &s);
  int bad = 0, first_bad = -1;
  size_t got_bad = 0;
  for (int l = 0; !st && l < lm->n_layer; l++)
    for (int g = 0; g < lm->n_head_kv; g++) {
      size_t want = 2 * (size_t)(67 - 2 * l), got = kvb_dec_memory_of(s, l, g);
      if (got != want && !bad++) first_bad = l, got_bad = got;
    }
  CHECK(!st && bad == 0 && kvb_dec_memory_prefill(s) == 2 * 38.0,
        "task_protocol.pyramidkv_layer_budgets",
        "status %d: %d (layer, head) caches off the hand-worked 2·(67 − 2l) vectors (first: layer "
        "%d holds %zu), mean %.4f (by hand 2·38)", st, bad, first_bad, got_bad,
        st ? NAN : kvb_dec_memory_prefill(s));
  kvb_dec_close(s);
}

/* ---- the prefill queries h2o and tova observe by default ---- */

/* The teacher-forced answer log-lik of a session opened with `observe` prompt queries. */
static int loglik_observing(const kvb_lm *lm, const kvb_task_prep *p, kvb_task_method *tm,
                            size_t observe, double *ll) {
  const kvb_task *t = p->task;
  size_t nt = p->n_tail, na = t->n_answer, n1 = nt + na - 1;
  int32_t cont[256];
  double nll[256];
  if (nt + na > 256) return KVB_EINVAL;
  memcpy(cont, p->tokens + p->n0, nt * sizeof *cont);
  memcpy(cont + nt, t->answer_ids, na * sizeof *cont);
  tm->prompt = p->n0;
  kvb_dec_opts o = {observe, 1, 0};
  kvb_dec_session *s = NULL;
  int st = kvb_lm_dec_open(lm, &p->pre, kvb_task_method_make, tm, &o, &s);
  if (!st) st = kvb_dec_score(s, cont, n1, NULL, nll, NULL, NULL, NULL);
  kvb_dec_close(s);
  *ll = 0;
  for (size_t i = n1 - na; !st && i < n1; i++) *ll -= nll[i];
  return st;
}

static void test_observe(const kvb_lm *lm, const kvb_task_prep *p) {
  static const char *const names[] = {"h2o", "tova"};
  for (int a = 0; a < 2; a++) {
    kvb_params pr;
    kvb_params_init(&pr);
    kvb_params_set(&pr, "budget", 24);
    kvb_task_method tm;
    kvb_task_method_init(&tm, kvb_method_lookup(names[a]), &pr, lm, 0);
    size_t obs = kvb_task_method_observe(&tm, p->n0);
    /* by hand: every prompt query observed (observe = n0) against none (the control: the
     * default matters for this task, or the check could not fail) */
    double all = NAN, none = NAN, run = NAN;
    int sa = loglik_observing(lm, p, &tm, p->n0, &all);
    int sz = loglik_observing(lm, p, &tm, 0, &none);
    int st = KVB_OK;
    if (a == 0) { /* h2o end to end: kvb_task_run's pass observes what the default says */
      kvb_task_result r;
      tm.prompt = 0;
      st = kvb_task_run(lm, p, &tm, 1, &r);
      if (!st) run = r.method.loglik, kvb_task_result_free(&r);
    }
    char name[96];
    snprintf(name, sizeof name, "task_protocol.observe_every_prompt_query.%s", names[a]);
    CHECK(!st && !sa && !sz && obs == p->n0 && all != none && (a == 1 || run == all), name,
          "status %d/%d/%d: default observe %zu (n0 %zu); log-lik through kvb_task_run %.9g, "
          "observe = n0 %.9g, observe = 0 %.9g", st, sa, sz, obs, p->n0, run, all, none);
  }
  /* the defaults of the others: the observation window for snapkv / pyramidkv, none otherwise */
  kvb_task_method tm;
  kvb_task_method_init(&tm, kvb_method_lookup("snapkv"), NULL, lm, 0);
  size_t os = kvb_task_method_observe(&tm, p->n0);
  kvb_task_method_init(&tm, kvb_method_lookup("balancekv_block"), NULL, lm, 0);
  size_t ob = kvb_task_method_observe(&tm, p->n0);
  CHECK(os == 32 && ob == 0, "task_protocol.observe_defaults",
        "snapkv observes %zu prompt queries (its window 32), balancekv_block %zu (none)", os, ob);
}

int main(void) {
  if (kvb_model_available() != KVB_OK) {
    printf("SKIP task_protocol.model: %s\n", kvb_strerror_last());
    return 0;
  }
  kvb_model m;
  if (kvb_model_load(NULL, &m)) {
    CHECK(0, "task_protocol.model_load", "%s", kvb_strerror_last());
    UNIT_EXIT();
  }
  const kvb_lm lm = kvb_lm_view_smollm2(&m);
  kvb_task t;
  kvb_task_prep p;
  int st = build_task(&lm, &t);
  if (!st) st = kvb_task_prepare(&lm, &t, 1, &p);
  CHECK(!st && p.n0 == 100 && p.n_tail == 9 && t.n_answer == 9, "task_protocol.task",
        "status %d (%s): n0 %zu (pinned 100), tail %zu (9), answer %zu tokens (9)", st,
        st ? kvb_strerror_last() : "", st ? 0 : p.n0, st ? 0 : p.n_tail, t.n_answer);
  if (!st) {
    test_loglik(&lm, &p);
    test_memory(&lm, &p);
    test_pyramid(&lm, &p);
    test_observe(&lm, &p);
    kvb_task_prep_free(&p);
    kvb_task_free(&t);
  }
  kvb_model_free(&m);
  UNIT_EXIT();
}

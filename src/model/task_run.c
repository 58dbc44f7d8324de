/* task_run.c — one long-context task through the compressed model (task_run.h). */
#include "task_run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kvb_error.h"

static double secs(const struct timespec *a, const struct timespec *b) {
  return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

int kvb_task_prepare(const kvb_lm *lm, const kvb_task *t, int aware, kvb_task_prep *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "kvb_task_prepare: out is NULL");
  memset(out, 0, sizeof *out);
  if (!lm || !(lm->smol || lm->gemma) || !t || !t->context || !t->cue || !t->answer_ids || !t->n_answer)
    return KVB_ERROR(KVB_ENULL, "kvb_task_prepare: NULL argument or an empty task");
  if (aware != 0 && aware != 1) return KVB_ERROR(KVB_EINVAL, "kvb_task_prepare: aware is 0 or 1");
  /* agnostic: the context is the compressed prompt, question + cue follow; aware: context +
   * question are compressed, the cue follows */
  size_t n0 = t->n_context + (aware ? t->n_question : 0);
  size_t nt = t->n_cue + (aware ? 0 : t->n_question);
  if (n0 == 0 || nt == 0) return KVB_ERROR(KVB_EINVAL, "kvb_task_prepare: empty prompt or tail");
  if (n0 + nt + t->n_answer > (size_t)lm->n_ctx && t->n_answer <= t->max_new)
    return KVB_ERROR(KVB_EINVAL, "kvb_task_prepare: the task's %zu tokens exceed %s's context %d",
                     n0 + nt + t->n_answer, lm->name, lm->n_ctx);
  int32_t *all = malloc((n0 + nt) * sizeof *all);
  if (!all) return KVB_ERROR(KVB_ENOMEM, "kvb_task_prepare: out of memory");
  memcpy(all, t->context, t->n_context * sizeof *all);
  if (t->n_question) memcpy(all + t->n_context, t->question, t->n_question * sizeof *all);
  memcpy(all + t->n_context + t->n_question, t->cue, t->n_cue * sizeof *all);
  struct timespec a, b, ca, cb;
  clock_gettime(CLOCK_MONOTONIC, &a);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
  int st = kvb_lm_prefix_build(lm, all, n0, &out->pre);
  clock_gettime(CLOCK_MONOTONIC, &b);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
  if (st) {
    free(all);
    memset(out, 0, sizeof *out);
    return st;
  }
  out->task = t, out->aware = aware, out->n0 = n0, out->n_tail = nt, out->tokens = all;
  out->prefill_wall = secs(&a, &b), out->prefill_cpu = secs(&ca, &cb);
  return KVB_OK;
}

void kvb_task_prep_free(kvb_task_prep *p) {
  if (!p) return;
  kvb_dec_prefix_free(&p->pre);
  free(p->tokens);
  memset(p, 0, sizeof *p);
}

/* exact attention (src/baselines/exact.c; the registry sits above this layer) */
extern const kvb_method_type kvb_method_exact;

static int make_exact(void *vc, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  (void)vc, (void)layer, (void)g;
  kvb_params p;
  kvb_params_init(&p);
  return kvb_method_alloc_type(&kvb_method_exact, cfg, &p, out);
}

static void one_line(char *s) {
  for (; s && *s; s++)
    if (*s == '\n' || *s == '\r' || *s == '\t') *s = ' ';
}

int kvb_task_pass_run(const kvb_lm *lm, const kvb_task_prep *p, kvb_dec_make_fn make, void *ctx,
                      const kvb_dec_opts *opts, kvb_task_pass *r) {
  if (!r) return KVB_ERROR(KVB_ENULL, "kvb_task_pass_run: out is NULL");
  memset(r, 0, sizeof *r);
  if (!lm || !p || !p->task || !p->tokens || !opts)
    return KVB_ERROR(KVB_ENULL, "kvb_task_pass_run: NULL argument");
  const kvb_task *t = p->task;
  if (!make) make = make_exact, ctx = NULL;
  kvb_dec_session *s = NULL;
  const int32_t *tail = p->tokens + p->n0;
  size_t nt = p->n_tail, na = t->n_answer, n1 = nt + na - 1;
  int32_t *gen = malloc((t->max_new ? t->max_new : 1) * sizeof *gen);
  int32_t *cont = malloc((nt + na) * sizeof *cont);
  double *nll = malloc(n1 * sizeof *nll);
  int st = gen && cont && nll ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "task pass: out of memory");
  /* greedy: the tail, then max_new generated tokens */
  if (!st) st = kvb_lm_dec_open(lm, &p->pre, make, ctx, opts, &s);
  if (!st) st = kvb_dec_greedy(s, tail, nt, t->max_new, gen);
  if (!st) r->vectors = kvb_dec_memory_prefill(s), r->bytes = kvb_dec_bytes_prefill(s);
  kvb_dec_close(s), s = NULL;
  size_t len = 0;
  if (!st) st = kvb_lm_decode(lm, gen, t->max_new, &r->text, &len);
  if (!st) {
    one_line(r->text);
    r->score = kvb_task_score(t, r->text, &r->right);
  }
  /* teacher-forced: feed tail + answer, score the answer's tokens (the last na targets) */
  if (!st) {
    memcpy(cont, tail, nt * sizeof *cont);
    memcpy(cont + nt, t->answer_ids, na * sizeof *cont);
    st = kvb_lm_dec_open(lm, &p->pre, make, ctx, opts, &s);
  }
  if (!st) st = kvb_dec_score(s, cont, n1, NULL, nll, NULL, NULL, NULL);
  if (!st) {
    r->loglik = 0;
    for (size_t i = n1 - na; i < n1; i++) r->loglik -= nll[i];
  }
  kvb_dec_close(s);
  free(gen), free(cont), free(nll);
  if (st) kvb_task_pass_free(r);
  return st;
}

void kvb_task_pass_free(kvb_task_pass *r) {
  if (!r) return;
  free(r->text);
  memset(r, 0, sizeof *r);
}

/* ---- a registered method as the factory ---- */

/* The methods that compress a prompt once when given prompt = n0 (their "Compress once"
 * parameter): the query-aware selectors (whose observation window a question fed after the
 * prompt would otherwise take over, snapkv.c) and the one-shot compressors (which would
 * otherwise recompress the whole stream, question included, at every new token — the streaming
 * reading of decode_compressed.h, and about 50 CPU seconds per 1k-token task for
 * balancekv_block; recent_kcenter re-ran greedy k-center at every query). 003 §4.2 states this
 * reading for its experiments ("compress the key-value cache in the prefill stage ... while
 * retaining all streamed embeddings during the decoding phase"), 001 §4.1 for ClusterGen ("apply
 * the greedy k-center clustering algorithm once"). */
static int compresses_once(const char *method) {
  static const char *const names[] = {"snapkv", "pyramidkv", "balancekv_block", "uniform_sample",
                                      "recent_kcenter"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(method, names[i])) return 1;
  return 0;
}

void kvb_task_method_init(kvb_task_method *tm, const kvb_method_type *type,
                          const kvb_params *params, const kvb_lm *lm, size_t n0) {
  memset(tm, 0, sizeof *tm);
  tm->type = type;
  if (params) tm->params = *params;
  else kvb_params_init(&tm->params);
  tm->lm = lm, tm->prompt = n0;
}

int kvb_task_method_make(void *vc, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  const kvb_task_method *c = vc;
  (void)g;
  if (!c || !c->type) return KVB_ERROR(KVB_ENULL, "task method: no method type");
  const char *name = c->type->name;
  kvb_params p = c->params;
  if (!strcmp(name, "pyramidkv")) {
    /* the pyramid spans the compressed layers only (Gemma 3's local layers keep their window) */
    int idx = kvb_lm_compressed_index(c->lm, layer);
    if (idx < 0)
      return KVB_ERROR(KVB_EINVAL, "task method pyramidkv: layer %d is not one the model "
                       "compresses (or no model given)", layer);
    if (!kvb_params_has(&p, "layer")) kvb_params_set(&p, "layer", idx);
    if (!kvb_params_has(&p, "layers")) kvb_params_set(&p, "layers", kvb_lm_n_compressed(c->lm));
  }
  if (c->prompt && compresses_once(name) && !kvb_params_has(&p, "prompt"))
    kvb_params_set(&p, "prompt", (double)c->prompt);
  if (c->mutant) {
    int st = kvb_params_set_str(&p, "mutant", c->mutant);
    if (st) return st;
  }
  return kvb_method_alloc_type(c->type, cfg, &p, out);
}

size_t kvb_task_method_observe(const kvb_task_method *tm, size_t n0) {
  if (!tm || !tm->type) return 0;
  size_t w = 32;
  if (kvb_params_has(&tm->params, "window"))
    w = (size_t)kvb_params_get(&tm->params, tm->type->params, "window");
  size_t o = kvb_dec_observe_default(tm->type->name, n0, w);
  return o < n0 ? o : n0;
}

static int is_plain_exact(const kvb_task_method *tm) {
  return !tm || (!strcmp(tm->type->name, "exact") && tm->params.n == 0 && !tm->mutant);
}

int kvb_task_run(const kvb_lm *lm, const kvb_task_prep *p, kvb_task_method *tm, uint64_t seed,
                 kvb_task_result *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "kvb_task_run: out is NULL");
  memset(out, 0, sizeof *out);
  if (!lm || !p || !p->task) return KVB_ERROR(KVB_ENULL, "kvb_task_run: NULL argument");
  if (tm && !tm->type) return KVB_ERROR(KVB_ENULL, "kvb_task_run: no method type");
  kvb_dec_opts oe = {0, seed, 0};
  int st = kvb_task_pass_run(lm, p, NULL, NULL, &oe, &out->exact);
  if (st) return st;
  if (is_plain_exact(tm)) {
    /* exact attention's own run (the same deterministic path): not run twice, Δ = 0 */
    out->method = out->exact;
    out->method.text = malloc(strlen(out->exact.text) + 1);
    if (!out->method.text) {
      kvb_task_result_free(out);
      return KVB_ERROR(KVB_ENOMEM, "kvb_task_run: out of memory");
    }
    strcpy(out->method.text, out->exact.text);
  } else {
    size_t keep = tm->prompt;
    tm->prompt = p->n0;
    kvb_dec_opts om = {kvb_task_method_observe(tm, p->n0), seed, 0};
    st = kvb_task_pass_run(lm, p, kvb_task_method_make, tm, &om, &out->method);
    tm->prompt = keep;
    if (st) {
      kvb_task_result_free(out);
      return st;
    }
  }
  out->delta = out->method.loglik - out->exact.loglik;
  return KVB_OK;
}

void kvb_task_result_free(kvb_task_result *r) {
  if (!r) return;
  kvb_task_pass_free(&r->exact);
  kvb_task_pass_free(&r->method);
}

/* task_run.c — one long-context task through the compressed model (task_run.h). */
#include "task_run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "balancekv_augmented.h"
#include "kvb_error.h"
#include "mutant.h"

static double secs(const struct timespec *a, const struct timespec *b) {
  return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

int kvb_task_prepare(const kvb_lm *lm, const kvb_task *t, int aware, kvb_task_prep *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "kvb_task_prepare: out is NULL");
  memset(out, 0, sizeof *out);
  if (!lm || !(lm->smol || lm->gemma) || !t || !t->context || !t->cue || !t->answer_ids || !t->n_answer)
    return KVB_ERROR(KVB_ENULL, "kvb_task_prepare: NULL argument or an empty task");
  if (aware != KVB_TASK_AGNOSTIC && aware != KVB_TASK_AWARE && aware != KVB_TASK_AUTHORS)
    return KVB_ERROR(KVB_EINVAL, "kvb_task_prepare: aware is 0 (agnostic), 1 (aware) or 2 (the "
                     "authors' protocol)");
  /* agnostic: the context is the compressed prompt, question + cue follow; aware: context +
   * question are compressed, the cue follows; authors: all of it is the prompt, nothing follows */
  size_t n0 = t->n_context + (aware ? t->n_question : 0) + (aware == KVB_TASK_AUTHORS ? t->n_cue : 0);
  size_t nt = aware == KVB_TASK_AUTHORS ? 0 : t->n_cue + (aware ? 0 : t->n_question);
  if (n0 == 0 || (nt == 0 && aware != KVB_TASK_AUTHORS))
    return KVB_ERROR(KVB_EINVAL, "kvb_task_prepare: empty prompt or tail");
  if (n0 + nt + t->n_answer > (size_t)lm->n_ctx && t->n_answer <= t->max_new)
    return KVB_ERROR(KVB_EINVAL, "kvb_task_prepare: the task's %zu tokens exceed %s's context %d",
                     n0 + nt + t->n_answer, lm->name, lm->n_ctx);
  int32_t *all = malloc((n0 + nt + 1) * sizeof *all);
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

/* ---- balancekv_augmented's shared layer-1 mask (balancekv_augmented.h) ----
 * The authors' manual_forward_llama_needle_detection (src/llama_forward.py) runs the detector
 * in the layer with 0-based index 1 over all KV heads at once and hands that mask to every later
 * layer; layer 0 runs the plain walk. Here the detector is a pure function of the prompt's keys
 * (kvb_bkva_detect), so the task runner computes the mask once per pass from the prefill of the
 * layer whose COMPRESSED index is 1 (SmolLM2: layer 1; Gemma 3: its second global layer, 11) and
 * the factory hands it to the methods of every compressed layer >= 1 with the model-wide
 * "any head flagged" bit (the authors' torch.all over all heads); the method of compressed layer
 * 0 gets detect = 0. One mask per pass, freed after it: the methods copy what they need. */

static size_t tm_param(const kvb_task_method *tm, const char *name) {
  return (size_t)kvb_params_get(&tm->params, tm->type->params, name);
}

/* The mutant the method runs (the factory's tm->mutant or the parameter "mutant"). */
static const char *tm_mutant(const kvb_task_method *tm) {
  if (tm->mutant) return tm->mutant;
  for (size_t i = 0; i < tm->params.n; i++)
    if (tm->params.items[i].is_string && !strcmp(tm->params.items[i].name, KVB_MUTANT_PARAM))
      return tm->params.items[i].str;
  return NULL;
}

static int is_aug(const kvb_task_method *tm) {
  return tm && tm->type && (tm->type->in_model & KVB_IN_MODEL_SHARED_MASK);
}

/* The model layer whose compressed index is idx, or −1. */
static int layer_at(const kvb_lm *lm, int n_layer, int idx) {
  for (int l = 0; l < n_layer; l++)
    if (kvb_lm_compressed_index(lm, l) == idx) return l;
  return -1;
}

/* The detector over the middle [f, f + mid) of every kv head of `layer` of the prefill into
 * mask (heads × mid); *any: some head has a flag. */
static int aug_detect_layer(const kvb_task_method *tm, const kvb_dec_prefix *pre, int layer,
                            size_t mid, unsigned char *mask, int *any, double *mu_min) {
  size_t f = tm_param(tm, "f"), b = tm_param(tm, "b"), hd = (size_t)pre->head_dim, n0 = pre->n0;
  int mut = kvb_bkva_flags_for(tm_mutant(tm));
  double *K = malloc(mid * hd * sizeof *K);
  if (!K) return KVB_ERROR(KVB_ENOMEM, "balancekv_augmented mask: out of memory");
  int st = KVB_OK;
  *any = 0;
  for (int g = 0; g < pre->n_head_kv && !st; g++) {
    const float *src = pre->k + (((size_t)layer * (size_t)pre->n_head_kv + (size_t)g) * n0 + f) * hd;
    for (size_t i = 0; i < mid * hd; i++) K[i] = src[i];
    size_t nf = 0;
    double lo = 0;
    st = kvb_bkva_detect_stat(mid, hd, K, b, mut, mask + (size_t)g * mid, &nf, &lo);
    if (mu_min && g < KVB_TASK_AUG_MAXH) mu_min[g] = lo;
    *any |= nf > 0;
  }
  free(K);
  return st;
}

void kvb_task_aug_end(kvb_task_method *tm) {
  free(tm->aug_mask);
  tm->aug_mask = NULL, tm->pre = NULL, tm->aug_mid = 0, tm->aug_heads = 0, tm->aug_any = 0;
}

/* Before a pass of balancekv_augmented: the shared mask from the prefill, and the pass's
 * diagnostics (flags per head; whether the needle's tokens are protected). */
int kvb_task_aug_begin(kvb_task_method *tm, const kvb_lm *lm, const kvb_task_prep *p,
                       kvb_task_pass *r) {
  r->needle_heads = -1;
  if (!is_aug(tm)) return KVB_OK;
  kvb_task_aug_end(tm);
  const kvb_dec_prefix *pre = &p->pre;
  tm->pre = pre;
  size_t f = tm_param(tm, "f"), w = tm_param(tm, "w");
  if (pre->n0 <= f + w) return KVB_OK; /* no middle: nothing to protect */
  size_t mid = pre->n0 - f - w;
  int l1 = layer_at(lm, pre->n_layer, 1);
  if (l1 < 0) return KVB_OK; /* one compressed layer only: it is "layer 0", no detector */
  tm->aug_mask = malloc((size_t)pre->n_head_kv * mid);
  if (!tm->aug_mask) return KVB_ERROR(KVB_ENOMEM, "balancekv_augmented mask: out of memory");
  int st = aug_detect_layer(tm, pre, l1, mid, tm->aug_mask, &tm->aug_any, r->aug_mu_min);
  if (st) {
    kvb_task_aug_end(tm);
    return st;
  }
  tm->aug_mid = mid, tm->aug_heads = pre->n_head_kv;
  r->aug_heads = pre->n_head_kv, r->aug_mid = mid;
  const kvb_task *t = p->task;
  size_t na = t->needle_at, ne = t->needle_end;
  /* the needle's tokens that lie in the middle (the rest are kept exactly by f / w) */
  size_t lo = na == (size_t)-1 ? 1 : (na > f ? na : f) - f;
  size_t hi = na == (size_t)-1 ? 0 : (ne < f + mid ? ne : f + mid) > f ? (ne < f + mid ? ne : f + mid) - f : 0;
  int heads = 0;
  for (int g = 0; g < pre->n_head_kv; g++) {
    const unsigned char *mk = tm->aug_mask + (size_t)g * mid;
    size_t nf = 0;
    for (size_t i = 0; i < mid; i++) nf += mk[i];
    if (g < KVB_TASK_AUG_MAXH) r->aug_flagged[g] = nf;
    int all = 1;
    for (size_t i = lo; i < hi; i++) all &= mk[i];
    heads += all;
  }
  r->needle_heads = lo < hi ? heads : -1;
  return KVB_OK;
}

/* The factory's part for balancekv_augmented: compressed layer 0 plain, the others the shared
 * mask (or, the mask_per_layer mutant, their own layer's). */
static int aug_make(const kvb_task_method *tm, int layer, int g, const kvb_method_config *cfg,
                    kvb_params *p, kvb_method **out) {
  if (!tm->pre)
    return KVB_ERROR(KVB_EINVAL, "balancekv_augmented needs the prompt's prefill for its shared "
                     "layer-1 mask: run it through kvb_task_pass_run");
  int idx = kvb_lm_compressed_index(tm->lm, layer);
  if (idx < 0) return KVB_ERROR(KVB_EINVAL, "balancekv_augmented: layer %d is not compressed", layer);
  if (idx == 0 && !kvb_params_has(p, "detect")) kvb_params_set(p, "detect", 0);
  int st = kvb_method_alloc_type(tm->type, cfg, p, out);
  if (st || idx == 0 || !tm->aug_mask) return st;
  const unsigned char *mask = tm->aug_mask + (size_t)g * tm->aug_mid;
  int any = tm->aug_any;
  unsigned char *own = NULL;
  if (kvb_bkva_flags_for(tm_mutant(tm)) & KVB_BKVA_MUT_MASK_PER_LAYER) {
    own = malloc((size_t)tm->aug_heads * tm->aug_mid);
    st = own ? aug_detect_layer(tm, tm->pre, layer, tm->aug_mid, own, &any, NULL)
             : KVB_ERROR(KVB_ENOMEM, "balancekv_augmented mask: out of memory");
    mask = own + (size_t)g * tm->aug_mid;
  }
  if (!st) st = kvb_bkva_share(*out, mask, tm->aug_mid, any);
  free(own);
  if (st) kvb_method_free(*out), *out = NULL;
  return st;
}

/* The authors' protocol (KVB_TASK_AUTHORS): nothing follows the prompt; the first answer token
 * and its log-probability come from the exact prefill's last logits. */
static int pass_authors(const kvb_lm *lm, const kvb_task_prep *p, kvb_dec_make_fn make, void *ctx,
                        const kvb_dec_opts *opts, kvb_task_pass *r) {
  const kvb_task *t = p->task;
  if (!p->pre.logits_last)
    return KVB_ERROR(KVB_EINVAL, "task pass (authors' protocol): the prefill kept no logits");
  kvb_task_method *tm = make == kvb_task_method_make ? ctx : NULL;
  int st = tm ? kvb_task_aug_begin(tm, lm, p, r) : KVB_OK;
  size_t V = (size_t)p->pre.n_vocab, na = t->n_answer, mx = t->max_new ? t->max_new : 1;
  double *lp = malloc(V * sizeof *lp);
  int32_t *gen = malloc(mx * sizeof *gen);
  double *nll = malloc(na * sizeof *nll);
  if (!st && (!lp || !gen || !nll)) st = KVB_ERROR(KVB_ENOMEM, "task pass: out of memory");
  kvb_dec_session *s = NULL;
  if (!st) {
    size_t am = kvb_dec_log_softmax(p->pre.logits_last, V, lp);
    gen[0] = (int32_t)am;
    r->loglik = lp[t->answer_ids[0]];
    st = kvb_lm_dec_open(lm, &p->pre, make, ctx, opts, &s);
  }
  if (!st) r->vectors = kvb_dec_memory_prefill(s), r->bytes = kvb_dec_bytes_prefill(s);
  if (!st && t->max_new > 1) st = kvb_dec_greedy(s, gen, 1, t->max_new - 1, gen + 1);
  kvb_dec_close(s), s = NULL;
  size_t len = 0;
  if (!st) st = kvb_lm_decode(lm, gen, t->max_new, &r->text, &len);
  if (!st) {
    one_line(r->text);
    r->score = kvb_task_score(t, r->text, &r->right);
  }
  /* teacher-forced: a_0 … a_{na−2} through the compressed cache score a_1 … a_{na−1} */
  if (!st && na > 1) st = kvb_lm_dec_open(lm, &p->pre, make, ctx, opts, &s);
  if (!st && na > 1) st = kvb_dec_score(s, t->answer_ids, na - 1, NULL, nll, NULL, NULL, NULL);
  if (!st && na > 1)
    for (size_t i = 0; i < na - 1; i++) r->loglik -= nll[i];
  kvb_dec_close(s);
  free(lp), free(gen), free(nll);
  if (tm) kvb_task_aug_end(tm);
  if (st) kvb_task_pass_free(r);
  return st;
}

int kvb_task_protocol_lookup(const char *name, int *aware) {
  if (!name || !aware) return KVB_ERROR(KVB_ENULL, "kvb_task_protocol_lookup: NULL argument");
  if (!strcmp(name, "kvbound")) *aware = KVB_TASK_AWARE;
  else if (!strcmp(name, "authors")) *aware = KVB_TASK_AUTHORS;
  else return KVB_ERROR(KVB_EINVAL, "protocol \"%s\": kvbound or authors", name);
  return KVB_OK;
}

int kvb_task_pass_run(const kvb_lm *lm, const kvb_task_prep *p, kvb_dec_make_fn make, void *ctx,
                      const kvb_dec_opts *opts, kvb_task_pass *r) {
  if (!r) return KVB_ERROR(KVB_ENULL, "kvb_task_pass_run: out is NULL");
  memset(r, 0, sizeof *r);
  if (!lm || !p || !p->task || !p->tokens || !opts)
    return KVB_ERROR(KVB_ENULL, "kvb_task_pass_run: NULL argument");
  const kvb_task *t = p->task;
  if (!make) make = make_exact, ctx = NULL;
  if (p->aware == KVB_TASK_AUTHORS) return pass_authors(lm, p, make, ctx, opts, r);
  kvb_task_method *tm = make == kvb_task_method_make ? ctx : NULL;
  int st0 = tm ? kvb_task_aug_begin(tm, lm, p, r) : KVB_OK;
  if (st0) return st0;
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
  if (tm) kvb_task_aug_end(tm);
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
  if (c->type->in_model & KVB_IN_MODEL_PER_LAYER) {
    /* the pyramid spans the compressed layers only (Gemma 3's local layers keep their window) */
    int idx = kvb_lm_compressed_index(c->lm, layer);
    if (idx < 0)
      return KVB_ERROR(KVB_EINVAL, "task method %s: layer %d is not one the model "
                       "compresses (or no model given)", name, layer);
    if (!kvb_params_has(&p, "layer")) kvb_params_set(&p, "layer", idx);
    if (!kvb_params_has(&p, "layers")) kvb_params_set(&p, "layers", kvb_lm_n_compressed(c->lm));
  }
  if (c->prompt && (c->type->in_model & KVB_IN_MODEL_ONCE_AT_PROMPT) && !kvb_params_has(&p, "prompt"))
    kvb_params_set(&p, "prompt", (double)c->prompt);
  if (c->mutant) {
    int st = kvb_params_set_str(&p, "mutant", c->mutant);
    if (st) return st;
  }
  if (is_aug(c)) return aug_make(c, layer, g, cfg, &p, out);
  return kvb_method_alloc_type(c->type, cfg, &p, out);
}

size_t kvb_task_method_observe(const kvb_task_method *tm, size_t n0) {
  if (!tm || !tm->type) return 0;
  size_t w = 32;
  if (kvb_params_has(&tm->params, "window"))
    w = (size_t)kvb_params_get(&tm->params, tm->type->params, "window");
  size_t o = kvb_dec_observe_default(tm->type, n0, w);
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

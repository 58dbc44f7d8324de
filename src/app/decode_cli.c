/* decode_cli.c — `kvbound decode`: compressed decoding inside SmolLM2-135M or Gemma 3 270M
 * (--model; lm.h) with any registered method (src/model/decode_compressed.h; src/model/README.md, Compressed
 * decoding inside the model). Gemma 3's text mode is decode_gemma3_cli.c's; its pass-key and
 * task modes are the same code as SmolLM2's, through kvb_lm.
 *
 *   kvbound decode --method NAME [--param k=v]... --text FILE [--start S] --n0 N --n1 N
 *   kvbound decode --method NAME [--param k=v]... --passkey TASKS [--reps R]
 *   kvbound decode --method NAME [--param k=v]... --task FAMILY --length N [--depth D]
 *                  [--task-seed S] [--tasks K] --mode agnostic|aware|authors
 *
 * Text mode: tokens S..S+n0 of FILE are the prompt (prefilled exactly, then handed to the
 * method), the next n1 tokens are scored teacher-forced; prints the exact and compressed
 * perplexity, its increase, the mean KL(exact ‖ method) per token, the top-1 agreement and the
 * stored vectors per (layer, kv head) cache. Pass-key mode: TASKS prompts (depths spread evenly
 * over [0.05, 0.95], keys from --seed), answered by greedy decoding with exact attention and with
 * the method; prints each answer and both accuracies. Task mode: a long-context task of
 * src/model/tasks.h; in the question-agnostic form the context alone is the compressed prompt and
 * the question and answer cue are fed after it through the compressed cache (the reading of
 * kvpress / SCBench, where a cache is compressed before its questions are known); in the
 * question-aware form the question is part of the compressed prompt and only the cue follows.
 * Both print the greedy answer's RULER string-match score and the answer's teacher-forced
 * log-likelihood relative to exact attention. Exit status 0, 1 on a run error, 2 on a
 * usage error. */
#include "kvbound.h"
#include "decode_compressed.h"
#include "decode_gemma3_cli.h"
#include "read_file.h"
#include "model.h"
#include "passkey.h"
#include "task_run.h"
#include "tasks.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void decode_usage(FILE *f) {
  fprintf(f,
          "usage: kvbound decode --method NAME [--param k=v]... --text FILE [--start S] --n0 N --n1 N\n"
          "       kvbound decode --method NAME [--param k=v]... --passkey TASKS [--reps R]\n"
          "       kvbound decode --method NAME [--param k=v]... --task FAMILY --length N\n"
          "                      [--depth D] [--task-seed S] [--tasks K] --mode agnostic|aware|authors\n"
          "  Compressed decoding inside SmolLM2-135M (or Gemma 3 270M: --model gemma3): the\n"
          "  prompt is prefilled exactly, every compressed (layer, key/value head) cache is\n"
          "  handed to method NAME (see `kvbound list`), and the following tokens are run with\n"
          "  the method's answer standing in for exact attention (new tokens are fed to the\n"
          "  method; src/model/README.md, Compressed decoding inside the model).\n"
          "  --method NAME     a registered method (exact, subgen, balancekv_block, balancekv_augmented,\n"
          "                    h2o, ...; kvbound list)\n"
          "  --param k=v       a method parameter (repeatable); pyramidkv gets layer = its layer's\n"
          "                    index among the compressed layers and layers = their count unless\n"
          "                    given (SmolLM2: its layer and 30; Gemma 3: 0..2 and 3)\n"
          "  --text FILE       text mode: score tokens [S+n0+1, S+n0+n1] of FILE teacher-forced\n"
          "  --start S         first token of the prompt (default 0)\n"
          "  --n0 N            prompt tokens (compressed)      --n1 N  scored tokens\n"
          "                    (text mode also prints the scored tokens' decode time, wall and\n"
          "                    CPU, and the bytes each query reads from a cache beside exact's)\n"
          "  --passkey TASKS   pass-key mode: TASKS retrieval prompts, greedy answers\n"
          "  --reps R          filler paragraphs per pass-key prompt (default 20, about 450 tokens)\n"
          "  --task FAMILY     task mode, a RULER-style task: niah_single, niah_multikey,\n"
          "                    niah_multivalue, niah_multiquery, vt, cwe, fwe (src/model/README.md, Long-context\n"
          "                    tasks); haystacks from /usr/share/common-licenses, hash-checked\n"
          "  --length N        the task's tokens (prompt + generation budget), 1024 to the model's\n"
          "                    context (8192 for SmolLM2-135M, 32768 for Gemma 3 270M)\n"
          "  --depth D|spread  where the needle goes, in [0, 1] (default 0.5); spread: task i of K\n"
          "                    at (i + 0.5)/K\n"
          "  --task-seed S     the task's seed (default 1); --tasks K runs seeds S..S+K-1\n"
          "  --mode agnostic   the context alone is compressed; question and cue are fed after it\n"
          "                    through the compressed cache (question-agnostic, as kvpress/SCBench)\n"
          "  --mode aware      context and question are compressed; only the answer cue follows\n"
          "  --mode authors    the BalanceKV authors' needle protocol: context, question and cue are\n"
          "                    prefilled exactly and compressed; the first answer token comes from\n"
          "                    the exact logits (pair with --method balancekv_augmented)\n"
          "                    (every mode: snapkv, pyramidkv, balancekv_block, balancekv_augmented,\n"
          "                    uniform_sample and recent_kcenter compress once, at the end of the\n"
          "                    compressed prompt, and keep the tokens fed after it exactly: prompt = n0)\n"
          "  --observe N|all   prompt tokens whose queries the method sees (default: all for h2o\n"
          "                    and tova, the window for snapkv/pyramidkv, none otherwise)\n"
          "  --seed S          the methods' random streams and the pass keys (default 1)\n"
          "  --model PATH|smollm2|gemma3  the model (default smollm2: SmolLM2-135M from\n"
          "                    scripts/fetch-model's cache; PATH: its GGUF file). gemma3: Gemma 3\n"
          "                    270M (scripts/fetch-model --model gemma3), in all three modes (text,\n"
          "                    --passkey, --task with --mode agnostic or aware): the method\n"
          "                    replaces attention on the 3 GLOBAL layers (5, 11, 17) and every LOCAL\n"
          "                    layer keeps its 512-token sliding window exactly, as the model does;\n"
          "                    memory is counted over the global caches; every prompt starts with\n"
          "                    BOS (text mode: BOS + n0 - 1 text tokens; tasks count it in --length)\n"
          "  Prints perplexity (exact and method, and the increase), mean KL(exact || method) per\n"
          "  token, top-1 agreement and stored vectors per cache; or the pass-key accuracies; or per\n"
          "  task the greedy answers of exact attention and of the method with their string-match\n"
          "  scores, and the answer's teacher-forced log-likelihood (sum over its tokens) with\n"
          "  delta log-lik = log p_method(answer) - log p_exact(answer).\n"
          "  Exit status 0, 1 on a run error, 2 on a usage error.\n");
}

typedef struct {
  const char *method;
  kvb_params params;
  int n_layer;
  const kvb_lm *lm; /* a per-layer budget's layer/layers count the compressed layers only (lm.h) */
} cli_mk;

static int cli_make(void *vc, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  cli_mk *c = vc;
  (void)g;
  kvb_params p = c->params;
  const kvb_method_type *t = kvb_method_lookup(c->method);
  if (t && (t->in_model & KVB_IN_MODEL_PER_LAYER)) { /* PyramidKV's budget per layer */
    int idx = c->lm ? kvb_lm_compressed_index(c->lm, layer) : layer;
    int n = c->lm ? kvb_lm_n_compressed(c->lm) : c->n_layer;
    if (!kvb_params_has(&p, "layer")) kvb_params_set(&p, "layer", idx);
    if (!kvb_params_has(&p, "layers")) kvb_params_set(&p, "layers", n);
  }
  return kvb_method_alloc(c->method, cfg, &p, out);
}

static int parse_size(const char *s, size_t *out) {
  char *e;
  if (!s || !*s || *s == '-') return 1;
  errno = 0;
  unsigned long long v = strtoull(s, &e, 10);
  /* strtoull clamps a value beyond 2^64 − 1 to 2^64 − 1 (ERANGE): refused, never clamped */
  if (*e || errno == ERANGE || v > SIZE_MAX) return 1;
  *out = (size_t)v;
  return 0;
}

static int mk_exact(void *vc, int layer, int g, const kvb_method_config *cfg, kvb_method **out) {
  (void)vc, (void)layer, (void)g;
  kvb_params p;
  kvb_params_init(&p);
  return kvb_method_alloc("exact", cfg, &p, out);
}

static int run_text(const kvb_model *m, cli_mk *mk, const char *text, size_t start, size_t n0,
                    size_t n1, size_t observe, uint64_t seed) {
  size_t len = 0, nt = 0;
  char *buf = NULL;
  if (kvb_read_file(text, KVB_TEXT_FILE_MAX, "--text", &buf, &len)) {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
    return 1;
  }
  int32_t *ids = NULL;
  int st = kvb_tok_encode(m->tok, buf, len, &ids, &nt);
  free(buf);
  if (st) {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
    return 1;
  }
  if (start + n0 + n1 + 1 > nt) {
    fprintf(stderr, "kvbound decode: the text has %zu tokens; --start %zu --n0 %zu --n1 %zu need %zu\n",
            nt, start, n0, n1, start + n0 + n1 + 1);
    free(ids);
    return 2;
  }
  const int32_t *t = ids + start;
  kvb_dec_prefix pre;
  float *ref = NULL;
  size_t V = (size_t)m->cfg.n_vocab;
  double *nll = malloc(n1 * sizeof *nll), *kl = malloc(n1 * sizeof *kl), mem1 = 0;
  int *ag = malloc(n1 * sizeof *ag);
  kvb_dec_session *s = NULL;
  kvb_dec_opts o = {observe == (size_t)-1 ? n0 : observe, seed, 0};
  if (!nll || !kl || !ag) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) st = kvb_dec_prefix_build(m, t, n0, &pre);
  if (!st) st = kvb_dec_reference(m, t, n0, n1, &ref);
  if (!st) st = kvb_dec_open(m, &pre, cli_make, mk, &o, &s);
  struct timespec w0, w1, c0, c1;
  clock_gettime(CLOCK_MONOTONIC, &w0), clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  if (!st) st = kvb_dec_score(s, t + n0, n1, ref, nll, kl, ag, &mem1);
  clock_gettime(CLOCK_MONOTONIC, &w1), clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  if (!st) {
    double se = 0, sm = 0, sk = 0;
    int agree = 0;
    for (size_t i = 0; i < n1; i++) {
      se -= ref[i * V + (size_t)t[n0 + 1 + i]], sm += nll[i], sk += kl[i], agree += ag[i];
    }
    double pe = exp(se / (double)n1), pm = exp(sm / (double)n1);
    printf("method %s  prompt %zu tokens (from %zu), scored %zu\n", mk->method, n0, start, n1);
    printf("perplexity exact %.4f  method %.4f  increase %+.4f (%+.2f%%)\n", pe, pm, pm - pe,
           100 * (pm / pe - 1));
    printf("mean KL(exact || method) %.5f nats/token  top-1 agreement %d/%zu\n", sk / (double)n1,
           agree, n1);
    printf("stored vectors per (layer, kv head) cache: %.1f after the prompt, %.1f after the "
           "scored tokens (exact: %zu, %zu)\n", kvb_dec_memory_prefill(s), mem1, 2 * n0,
           2 * (n0 + n1));
    /* Time of the scored tokens' forward passes (every layer's methods updated and queried, the
     * model's own matrix products beside them), and what each query reads: the cache as stored
     * (kvb_method_memory's bytes), against an exact cache's 8·2·head_dim bytes per token. */
    double ws = (double)(w1.tv_sec - w0.tv_sec) + 1e-9 * (double)(w1.tv_nsec - w0.tv_nsec),
           cs = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    printf("decode time: %zu scored tokens in %.3f s wall, %.3f s CPU (%.2f ms wall per token)\n",
           n1, ws, cs, 1e3 * ws / (double)n1);
    printf("bytes read per query per (layer, kv head) cache after the scored tokens: %.0f "
           "(exact: %.0f)\n", kvb_dec_bytes_now(s),
           8.0 * 2.0 * (double)m->cfg.head_dim * (double)(n0 + n1));
  } else {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
  }
  kvb_dec_close(s);
  kvb_dec_prefix_free(&pre);
  free(ref), free(ids), free(nll), free(kl), free(ag);
  return st ? 1 : 0;
}

static int run_passkey(const kvb_lm *lm, cli_mk *mk, size_t tasks, size_t reps, size_t observe,
                       uint64_t seed) {
  gsl_rng *r = kvb_rng_alloc_substream(seed, 999);
  if (!r) return 1;
  int ok_e = 0, ok_m = 0, st = KVB_OK;
  for (size_t i = 0; i < tasks && !st; i++) {
    unsigned key = 10000 + (unsigned)gsl_rng_uniform_int(r, 90000);
    double depth = tasks > 1 ? 0.05 + 0.9 * (double)i / (double)(tasks - 1) : 0.5;
    int32_t *ids = NULL, ge[8], gm[8];
    size_t n0 = 0, nt = 0;
    kvb_dec_prefix pre;
    memset(&pre, 0, sizeof pre);
    kvb_dec_session *se = NULL, *sm = NULL;
    st = kvb_dec_passkey_prompt(lm, key, depth, (unsigned)reps, &ids, &n0, &nt);
    if (!st) st = kvb_lm_prefix_build(lm, ids, n0, &pre);
    kvb_dec_opts oe = {0, seed, 0}, om = {observe == (size_t)-1 ? n0 : observe, seed, 0};
    if (om.observe > n0) om.observe = n0;
    if (!st) st = kvb_lm_dec_open(lm, &pre, mk_exact, NULL, &oe, &se);
    if (!st) st = kvb_dec_greedy(se, ids + n0, nt, 7, ge);
    if (!st) st = kvb_lm_dec_open(lm, &pre, cli_make, mk, &om, &sm);
    if (!st) st = kvb_dec_greedy(sm, ids + n0, nt, 7, gm);
    if (!st) {
      int ce = kvb_dec_passkey_correct(lm, ge, 7, key);
      int cm = kvb_dec_passkey_correct(lm, gm, 7, key);
      char *te = NULL, *tm = NULL;
      size_t l;
      kvb_lm_decode(lm, ge, 7, &te, &l);
      kvb_lm_decode(lm, gm, 7, &tm, &l);
      for (char *c = te; c && *c; c++) if (*c == '\n') *c = ' ';
      for (char *c = tm; c && *c; c++) if (*c == '\n') *c = ' ';
      printf("task %zu: key %u depth %.2f prompt %zu tokens  exact %s \"%s\"  %s %s \"%s\" "
             "(memory %.1f)\n", i, key, depth, n0 + nt, ce ? "right" : "wrong", te ? te : "",
             mk->method, cm ? "right" : "wrong", tm ? tm : "", kvb_dec_memory_prefill(sm));
      free(te), free(tm);
      ok_e += ce, ok_m += cm;
    }
    kvb_dec_close(se), kvb_dec_close(sm);
    kvb_dec_prefix_free(&pre);
    free(ids);
  }
  gsl_rng_free(r);
  if (st) {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
    return 1;
  }
  printf("pass-key accuracy: exact %d/%zu, %s %d/%zu\n", ok_e, tasks, mk->method, ok_m, tasks);
  return 0;
}

/* ---- task mode (the runner is the library's: src/model/task_run.h) ---- */

static int run_task(const kvb_lm *lm, cli_mk *mk, kvb_task_family fam, size_t length,
                    double depth, uint64_t tseed, size_t tasks, int aware, size_t observe,
                    uint64_t seed) {
  int st = KVB_OK;
  double right_e = 0, right_m = 0, all_e = 0, all_m = 0, dsum = 0;
  kvb_task_method tm;
  kvb_task_method_init(&tm, kvb_method_lookup(mk->method), &mk->params, lm, 0);
  for (size_t i = 0; i < tasks && !st; i++) {
    double d = depth < 0 ? ((double)i + 0.5) / (double)tasks : depth;
    kvb_task t;
    kvb_task_prep p;
    kvb_task_result r;
    memset(&p, 0, sizeof p), memset(&r, 0, sizeof r);
    st = kvb_task_make(lm, fam, length, d, tseed + i, &t);
    if (st) break;
    st = kvb_task_prepare(lm, &t, aware, &p);
    /* --observe N|all overrides the method's default prefill queries */
    if (!st && observe != (size_t)-2) {
      kvb_dec_opts oe = {0, seed, 0}, om = {observe == (size_t)-1 ? p.n0 : observe, seed, 0};
      if (om.observe > p.n0) om.observe = p.n0;
      tm.prompt = p.n0;
      st = kvb_task_pass_run(lm, &p, NULL, NULL, &oe, &r.exact);
      if (!st) st = kvb_task_pass_run(lm, &p, kvb_task_method_make, &tm, &om, &r.method);
      if (!st) r.delta = r.method.loglik - r.exact.loglik;
    } else if (!st) {
      st = kvb_task_run(lm, &p, &tm, seed, &r);
    }
    if (!st) {
      char ans[600];
      snprintf(ans, sizeof ans, "%s", t.answer);
      printf("task %s length %zu depth %.3f seed %llu (haystack %s): context %zu tokens, question "
             "%zu, cue %zu, answer \"%s\" (%zu tokens)\n", kvb_task_family_name(fam), length, d,
             (unsigned long long)(tseed + i), t.text[0] ? t.text : "none", t.n_context,
             t.n_question, t.n_cue, ans, t.n_answer);
      printf("mode %s: compressed prompt %zu tokens, fed after it %zu; prefill %.2f s (CPU %.2f s)\n",
             aware == 2 ? "authors" : aware ? "aware" : "agnostic", p.n0, p.n_tail, p.prefill_wall, p.prefill_cpu);
      printf("exact: \"%s\" match %.2f (%s)  answer log-lik %.4f\n", r.exact.text, r.exact.score,
             r.exact.right ? "right" : "wrong", r.exact.loglik);
      printf("%s: \"%s\" match %.2f (%s)  answer log-lik %.4f  delta log-lik %+.4f  memory %.1f "
             "per cache (%.0f bytes)\n", mk->method, r.method.text, r.method.score,
             r.method.right ? "right" : "wrong", r.method.loglik, r.delta, r.method.vectors,
             r.method.bytes);
      if (r.method.aug_heads > 0) { /* balancekv_augmented's detector (task_run.h) */
        printf("detector (layer with compressed index 1, middle %zu tokens): flagged", r.method.aug_mid);
        for (int h = 0; h < r.method.aug_heads && h < KVB_TASK_AUG_MAXH; h++)
          printf(" %zu", r.method.aug_flagged[h]);
        printf(" per kv head (smallest statistic");
        for (int h = 0; h < r.method.aug_heads && h < KVB_TASK_AUG_MAXH; h++)
          printf(" %.3g", r.method.aug_mu_min[h]);
        printf("; fires at <= 0); needle %s\n", r.method.needle_heads < 0 ? "not in the middle"
               : r.method.needle_heads ? "inside the protected set" : "not protected");
      }
      fflush(stdout);
      right_e += r.exact.score, right_m += r.method.score, all_e += r.exact.right;
      all_m += r.method.right, dsum += r.delta;
    }
    kvb_task_result_free(&r);
    kvb_task_prep_free(&p);
    kvb_task_free(&t);
  }
  if (st) {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
    return 1;
  }
  double K = (double)tasks;
  printf("summary %s %s length %zu, %zu tasks: exact match exact %.0f/%zu (mean string match "
         "%.3f), %s %.0f/%zu (%.3f); mean delta log-lik %+.4f\n", kvb_task_family_name(fam),
         aware == 2 ? "authors" : aware ? "aware" : "agnostic", length, tasks, all_e, tasks, right_e / K, mk->method, all_m,
         tasks, right_m / K, dsum / K);
  return 0;
}

int kvb_cmd_decode(int argc, char **argv) {
  cli_mk mk = {NULL, {0}, 30, NULL};
  kvb_params_init(&mk.params);
  const char *text = NULL, *model = NULL;
  size_t start = 0, n0 = 0, n1 = 0, tasks = 0, reps = 20, observe = (size_t)-2, seed = 1;
  int have_n0 = 0, have_n1 = 0, have_task = 0, mode = -1; /* mode: 0 agnostic, 1 aware, 2 the authors' protocol (task_run.h) */
  const char *task = NULL;
  size_t length = 0, tseed = 1, ntasks = 1;
  double depth = 0.5;
  for (int i = 1; i < argc; i += 2) { /* every option takes one value */
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      decode_usage(stdout);
      return 0;
    }
    int bad = 0;
    if (!v) bad = 1;
    else if (!strcmp(a, "--method")) mk.method = v;
    else if (!strcmp(a, "--param")) {
      if (kvb_params_parse(&mk.params, v)) {
        fprintf(stderr, "kvbound decode: --param %s: %s\n", v, kvb_strerror_last());
        return 2;
      }
    } else if (!strcmp(a, "--text")) text = v;
    else if (!strcmp(a, "--model")) model = v;
    else if (!strcmp(a, "--start")) bad = parse_size(v, &start);
    else if (!strcmp(a, "--n0")) bad = parse_size(v, &n0), have_n0 = 1;
    else if (!strcmp(a, "--n1")) bad = parse_size(v, &n1), have_n1 = 1;
    else if (!strcmp(a, "--passkey")) bad = parse_size(v, &tasks) || tasks == 0;
    else if (!strcmp(a, "--reps")) bad = parse_size(v, &reps) || reps > 10000;
    else if (!strcmp(a, "--seed")) bad = parse_size(v, &seed);
    else if (!strcmp(a, "--task")) task = v, have_task = 1;
    else if (!strcmp(a, "--length")) bad = parse_size(v, &length);
    else if (!strcmp(a, "--task-seed")) bad = parse_size(v, &tseed);
    else if (!strcmp(a, "--tasks")) bad = parse_size(v, &ntasks) || ntasks == 0 || ntasks > 100000;
    else if (!strcmp(a, "--depth")) {
      char *e;
      if (!strcmp(v, "spread")) depth = -1;
      else {
        depth = strtod(v, &e);
        if (*e || !*v || !(depth >= 0 && depth <= 1)) {
          fprintf(stderr, "kvbound decode: --depth needs a number in [0, 1] or 'spread', not '%s'\n", v);
          return 2;
        }
      }
    } else if (!strcmp(a, "--mode")) {
      if (!strcmp(v, "agnostic")) mode = 0;
      else if (!strcmp(v, "aware")) mode = 1;
      else if (!strcmp(v, "authors")) mode = 2;
      else {
        fprintf(stderr, "kvbound decode: --mode needs 'agnostic', 'aware' or 'authors', not '%s'\n", v);
        return 2;
      }
    }
    else if (!strcmp(a, "--observe")) {
      if (!strcmp(v, "all")) observe = (size_t)-1;
      else bad = parse_size(v, &observe);
    } else {
      fprintf(stderr, "kvbound decode: unknown option '%s' (see kvbound decode --help)\n", a);
      return 2;
    }
    if (bad) {
      fprintf(stderr, "kvbound decode: %s needs %s, not '%s'\n", a,
              !strcmp(a, "--observe") ? "a count or 'all'" : "a non-negative integer below 2^64 (TASKS >= 1)",
              v ? v : "(nothing)");
      return 2;
    }
  }
  if (!mk.method) {
    fprintf(stderr, "kvbound decode: --method NAME is required (see kvbound decode --help)\n");
    return 2;
  }
  const kvb_method_type *t = kvb_method_lookup(mk.method);
  if (!t) {
    fprintf(stderr, "kvbound decode: unknown method '%s' (see `kvbound list`)\n", mk.method);
    return 2;
  }
  if ((text != NULL) + (tasks != 0) + have_task != 1) {
    fprintf(stderr, "kvbound decode: give either --text FILE (with --n0, --n1), --passkey TASKS "
            "or --task FAMILY\n");
    return 2;
  }
  kvb_task_family fam = KVB_TASK_NIAH_SINGLE;
  if (have_task) {
    if (kvb_task_family_lookup(task, &fam)) {
      fprintf(stderr, "kvbound decode: --task: %s\n", kvb_strerror_last());
      return 2;
    }
    if (!length || mode < 0) {
      fprintf(stderr, "kvbound decode: --task needs --length N and --mode agnostic|aware|authors\n");
      return 2;
    }
    if (length < KVB_TASK_MIN_LENGTH) {
      fprintf(stderr, "kvbound decode: --length %zu: a task has at least %d tokens\n", length,
              KVB_TASK_MIN_LENGTH);
      return 2;
    }
  }
  if (text && (!have_n0 || !have_n1 || n0 == 0 || n1 == 0)) {
    fprintf(stderr, "kvbound decode: --text needs --n0 N and --n1 N, both >= 1\n");
    return 2;
  }
  /* parameters checked against the method's table before the model loads */
  if (kvb_params_validate(&mk.params, t->params, mk.method)) {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
    return 2;
  }
  if (observe == (size_t)-2 && !have_task) {
    double w = kvb_params_has(&mk.params, "window") ? kvb_params_get(&mk.params, t->params, "window") : 32;
    size_t big = text ? n0 : (size_t)-1;
    observe = kvb_dec_observe_default(t, big, (size_t)w);
  }
  kvb_lm_kind kind = KVB_LM_SMOLLM2;
  if (model && !strcmp(model, "smollm2")) model = NULL;
  if (model && !strcmp(model, "gemma3")) kind = KVB_LM_GEMMA3, model = NULL;
  kvb_lm lm;
  if (kvb_lm_load(kind, model, &lm)) {
    fprintf(stderr, "kvbound decode: %s\n", kvb_strerror_last());
    return 1;
  }
  mk.n_layer = lm.n_layer, mk.lm = &lm;
  if (have_task && length > (size_t)lm.n_ctx) {
    fprintf(stderr, "kvbound decode: --length %zu: %s's context (%s.context_length) is %d tokens\n",
            length, lm.name, kind == KVB_LM_GEMMA3 ? "gemma3" : "llama", lm.n_ctx);
    kvb_lm_free(&lm);
    return 2;
  }
  int rc;
  if (text) {
    rc = kind == KVB_LM_GEMMA3
             ? kvb_decode_text_gemma3(lm.gemma, cli_make, &mk, mk.method, text, start, n0, n1,
                                      observe, seed)
             : run_text(lm.smol, &mk, text, start, n0, n1, observe, seed);
  } else {
    if (kind == KVB_LM_GEMMA3) {
      char layers[128] = "";
      for (int l = 0, n = 0; l < lm.n_layer; l++)
        if (kvb_lm_compressed(&lm, l))
          n += snprintf(layers + n, sizeof layers - (size_t)n, "%s%d", n ? ", " : "", l);
      printf("model %s: method %s on the global layers (%s); the local layers keep their "
             "512-token window exactly; prompts start with BOS\n", lm.name, mk.method, layers);
    }
    rc = tasks ? run_passkey(&lm, &mk, tasks, reps, observe, seed)
               : run_task(&lm, &mk, fam, length, depth, (uint64_t)tseed, ntasks, mode, observe,
                          seed);
  }
  kvb_lm_free(&lm);
  return rc;
}

/* test_task_authors.c — the task runner's part of 003 §4.3 as the authors ran it (task_run.h):
 *   - balancekv_augmented's shared layer-1 mask (no model: a synthetic 3-layer, 2-head prefill):
 *     the methods of compressed layer 0 run no detector; layer 1's and layer 2's head 0 both get
 *     the mask detected on LAYER 1's keys (layer 2's own keys would flag nothing: the mutant
 *     mask_per_layer is rejected); head 1, without flags, still takes the protected branch
 *     because head 0 has one (the authors' torch.all over all heads); the needle diagnostics;
 *     the factory refuses the method without a prefill;
 *   - the authors' protocol with the model (SKIP without it): the whole prompt with the cue is
 *     prefilled (n_tail = 0); exact attention's greedy answer and answer log-likelihood equal
 *     kvbound's aware protocol's on the same task (the first answer token from the exact logits,
 *     the rest through the decode path: |Δ log-lik| ≤ 1e-3); bad protocol names are refused. */
#include "balancekv_augmented.h"
#include "kvb_error.h"
#include "lm.h"
#include "pcg32.h"
#include "registry.h"
#include "task_run.h"
#include "tasks.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { L = 3, HK = 2, HD = 4, N0 = 120, F = 4, W = 4, MID = N0 - F - W };

static void shared_mask(void) {
  static kvb_model fake; /* never read: the view only needs the layer count */
  fake.cfg.n_layer = L, fake.cfg.n_head_kv = HK, fake.cfg.head_dim = HD, fake.cfg.n_head = HK;
  kvb_lm lm = kvb_lm_view_smollm2(&fake);
  kvb_dec_prefix pre;
  memset(&pre, 0, sizeof pre);
  pre.n0 = N0, pre.n_layer = L, pre.n_head = HK, pre.n_head_kv = HK, pre.head_dim = HD;
  float *k = calloc((size_t)L * HK * N0 * HD, sizeof(float));
  pre.k = k;
  /* every key (1, 1, 1, 1) except, in LAYER 1 head 0, token F + 50 = −(2, 2, 2, 2): flagged (its
   * block of 16 sums to 15·(−8) + 16 < 0) and dilated ±25 → middle 25..75, 51 tokens */
  for (size_t i = 0; i < (size_t)L * HK * N0 * HD; i++) k[i] = 1.0f;
  for (int a = 0; a < HD; a++) k[((size_t)(1 * HK + 0) * N0 + F + 50) * HD + a] = -2.0f;
  kvb_task task;
  memset(&task, 0, sizeof task);
  task.needle_at = F + 40, task.needle_end = F + 60; /* inside 25..75 */
  kvb_task_prep p;
  memset(&p, 0, sizeof p);
  p.task = &task, p.n0 = N0, p.pre = pre;
  const kvb_method_type *ty = kvb_method_lookup("balancekv_augmented");
  for (int mutant = 0; mutant < 2; mutant++) {
    kvb_params par;
    kvb_params_init(&par);
    kvb_params_set(&par, "f", F), kvb_params_set(&par, "w", W), kvb_params_set(&par, "b", 16);
    kvb_params_set(&par, "T", 1);
    kvb_task_method tm;
    kvb_task_method_init(&tm, ty, &par, &lm, N0);
    tm.mutant = mutant ? "mask_per_layer" : NULL;
    kvb_task_pass r;
    memset(&r, 0, sizeof r);
    int st = kvb_task_aug_begin(&tm, &lm, &p, &r);
    if (!mutant)
      CHECK(st == 0 && r.aug_heads == HK && r.aug_mid == MID && r.aug_flagged[0] == 51 &&
                r.aug_flagged[1] == 0 && r.needle_heads == 1,
            "task_authors.mask_diagnostics", "st %d heads %d mid %zu flagged %zu %zu needle %d", st,
            r.aug_heads, r.aug_mid, r.aug_flagged[0], r.aug_flagged[1], r.needle_heads);
    size_t nf[L][HK];
    int any[L][HK], ok = st == 0;
    for (int l = 0; l < L && ok; l++)
      for (int g = 0; g < HK && ok; g++) {
        gsl_rng *rng = kvb_rng_alloc_substream(5, (uint64_t)(l * HK + g));
        kvb_method_config cfg = {HD, HD, 0.5, rng};
        kvb_method *m = NULL;
        ok = kvb_task_method_make(&tm, l, g, &cfg, &m) == 0 && m;
        double kd[HD], vd[HD], z[HD];
        for (int i = 0; ok && i < N0; i++) {
          for (int a = 0; a < HD; a++)
            kd[a] = k[((size_t)(l * HK + g) * N0 + (size_t)i) * HD + (size_t)a], vd[a] = 0.1 * a;
          ok = kvb_method_update(m, kd, HD, vd, HD) == 0;
        }
        ok = ok && kvb_method_query(m, kd, HD, z, HD) == 0;
        ok = ok && kvb_bkva_mask(m, NULL, NULL, &nf[l][g], &any[l][g]) == 0;
        kvb_method_free(m);
        gsl_rng_free(rng);
      }
    if (!mutant)
      CHECK(ok && nf[0][0] == 0 && !any[0][0] && nf[1][0] == 51 && nf[2][0] == 51 && nf[2][1] == 0 &&
                any[2][1] && any[1][1],
            "task_authors.layer1_mask_shared",
            "ok %d; flagged L0 %zu (any %d), L1 %zu, L2 %zu / head 1 %zu (any %d)", ok, nf[0][0],
            any[0][0], nf[1][0], nf[2][0], nf[2][1], any[2][1]);
    else
      CHECK(ok && nf[2][0] == 0, "task_authors.rejects_mutant.mask_per_layer",
            "layer 2 detected %zu flags on its own keys (want 0: a per-layer mask differs)", nf[2][0]);
    kvb_task_aug_end(&tm);
  }
  /* without a prefill the factory refuses (no silent per-layer detection) */
  kvb_task_method tm;
  kvb_task_method_init(&tm, ty, NULL, &lm, N0);
  kvb_method_config cfg = {HD, HD, 0.5, NULL};
  kvb_method *m = NULL;
  int st = kvb_task_method_make(&tm, 1, 0, &cfg, &m);
  CHECK(st == KVB_EINVAL && !m, "task_authors.needs_prefill", "status %d", st);
  free(k);
  int aw = -1;
  CHECK(kvb_task_protocol_lookup("authors", &aw) == 0 && aw == KVB_TASK_AUTHORS &&
            kvb_task_protocol_lookup("kvbound", &aw) == 0 && aw == KVB_TASK_AWARE &&
            kvb_task_protocol_lookup("paper", &aw) == KVB_EINVAL,
        "task_authors.protocol_names", "authors|kvbound accepted, others refused");
}

static void with_model(void) {
  if (kvb_lm_available(KVB_LM_SMOLLM2) != KVB_OK) {
    printf("SKIP task_authors.model: SmolLM2-135M not available (scripts/fetch-model)\n");
    return;
  }
  kvb_lm lm;
  if (kvb_lm_load(KVB_LM_SMOLLM2, NULL, &lm)) {
    CHECK(0, "task_authors.model_load", "%s", kvb_strerror_last());
    return;
  }
  kvb_task t;
  int st = kvb_task_make(&lm, KVB_TASK_NIAH_SINGLE, 1024, 0.5, 3, &t);
  kvb_task_prep pa, pw;
  memset(&pa, 0, sizeof pa), memset(&pw, 0, sizeof pw);
  if (!st) st = kvb_task_prepare(&lm, &t, KVB_TASK_AUTHORS, &pa);
  if (!st) st = kvb_task_prepare(&lm, &t, KVB_TASK_AWARE, &pw);
  CHECK(st == 0 && pa.n_tail == 0 && pa.n0 == t.n_context + t.n_question + t.n_cue &&
            pa.pre.logits_last != NULL,
        "task_authors.prepare", "st %d: n0 %zu tail %zu", st, pa.n0, pa.n_tail);
  kvb_task_pass ea, ew;
  memset(&ea, 0, sizeof ea), memset(&ew, 0, sizeof ew);
  kvb_dec_opts o = {0, 1, 0};
  if (!st) st = kvb_task_pass_run(&lm, &pa, NULL, NULL, &o, &ea);
  if (!st) st = kvb_task_pass_run(&lm, &pw, NULL, NULL, &o, &ew);
  CHECK(st == 0 && ea.text && ew.text && !strcmp(ea.text, ew.text) &&
            fabs(ea.loglik - ew.loglik) <= 1e-3,
        "task_authors.exact_equals_aware", "st %d: \"%s\" vs \"%s\", log-lik %.6f vs %.6f", st,
        ea.text ? ea.text : "", ew.text ? ew.text : "", ea.loglik, ew.loglik);
  kvb_task_pass_free(&ea), kvb_task_pass_free(&ew);
  kvb_task_prep bad;
  CHECK(kvb_task_prepare(&lm, &t, 3, &bad) == KVB_EINVAL, "task_authors.bad_protocol",
        "aware = 3 must be refused");
  kvb_task_prep_free(&pa), kvb_task_prep_free(&pw);
  kvb_task_free(&t);
  kvb_lm_free(&lm);
}

int main(void) {
  shared_mask();
  with_model();
  UNIT_EXIT();
}

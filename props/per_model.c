/* per_model.c — a real-model check written once, run on every model of the registry
 * (per_model.h). */
#include "per_model.h"

#include <stdio.h>
#include <string.h>

/* The ids and fallback statements made by prop_models_expand: a few hundred bytes a model. */
static char store[16384];
static size_t store_used;

static const char *keep(const char *s) {
  size_t len = strlen(s) + 1;
  if (len > sizeof store - store_used) return NULL;
  char *p = store + store_used;
  memcpy(p, s, len);
  store_used += len;
  return p;
}

void prop_model_id(const char *ref_id, kvb_lm_kind kind, char *buf, size_t cap) {
  const char *dot = strchr(ref_id, '.');
  if (kind == 0 || !dot) {
    snprintf(buf, cap, "%s", ref_id);
    return;
  }
  snprintf(buf, cap, "%.*s.%s.%s", (int)(dot - ref_id), ref_id, kvb_lm_kind_key(kind), dot + 1);
}

kvb_lm_kind prop_model_of(const prop_ctx *ctx) {
  const char *dot = ctx && ctx->id ? strchr(ctx->id, '.') : NULL;
  for (int k = 1; dot && k < KVB_LM_N_KINDS; k++) {
    const char *key = kvb_lm_kind_key((kvb_lm_kind)k);
    size_t len = strlen(key);
    if (!strncmp(dot + 1, key, len) && dot[1 + len] == '.') return (kvb_lm_kind)k;
  }
  return (kvb_lm_kind)0;
}

static int listed(const char *id, const char *const *ids) {
  for (size_t i = 0; ids && ids[i]; i++)
    if (!strcmp(id, ids[i])) return 1;
  return 0;
}

static const prop_model_wording *wording(const prop_model_wording *words, const char *ref_id,
                                         const char *model) {
  for (size_t i = 0; words && words[i].ref_id; i++)
    if (!strcmp(words[i].ref_id, ref_id) && !strcmp(words[i].model, model)) return &words[i];
  return NULL;
}

int prop_models_expand(prop_claim *out, size_t *n, size_t cap, const prop_claim *ref, size_t n_ref,
                       const char *const *ref_only, const prop_model_wording *words) {
  for (int k = 0; k < KVB_LM_N_KINDS; k++)
    for (size_t i = 0; i < n_ref; i++) {
      if (k > 0 && listed(ref[i].id, ref_only)) continue;
      if (*n + 1 >= cap) goto full;
      prop_claim c = ref[i];
      if (k > 0) {
        char buf[512];
        prop_model_id(ref[i].id, (kvb_lm_kind)k, buf, sizeof buf);
        if (!(c.id = keep(buf))) goto full;
        const prop_model_wording *w = wording(words, ref[i].id, kvb_lm_kind_name((kvb_lm_kind)k));
        if (w) {
          c.source = w->source ? w->source : c.source;
          c.statement = w->statement;
          if (w->mutants[0]) memcpy(c.mutants, w->mutants, sizeof c.mutants);
          if (w->question) c.question = w->question;
        } else {
          snprintf(buf, sizeof buf, "%s: as %s", kvb_lm_kind_name((kvb_lm_kind)k), ref[i].id);
          if (!(c.statement = keep(buf))) goto full;
        }
      }
      out[(*n)++] = c;
    }
  memset(&out[*n], 0, sizeof out[*n]);
  return 0;
full:
  memset(&out[*n], 0, sizeof out[*n]);
  return -1;
}

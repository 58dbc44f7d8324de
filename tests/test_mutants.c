/* test_mutants.c — the one mutant mechanism (src/core/mutant.h) from C: every mutant of every
 * registered method, stream and probe is selectable by name with the parameter "mutant" and
 * reported back by the generic layer; an unknown name (or a number) is refused with an error
 * that names the type and lists its mutants, and nothing is created. Also the maps from an
 * owning type's mutant names to the switches of the functions it runs (README "Mutants"), so a
 * renamed or reordered table cannot silently select nothing. */
#include "kvbound.h"
#include "index_reduction.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Parameters that satisfy a table: every required numeric one at 1 clamped into its range; a
 * token budget at 64, so the defaults that must fit inside it (a sink of 4, an observation
 * window of 32) do. */
static void required_params(const kvb_param_spec *sp, kvb_params *p) {
  kvb_params_init(p);
  for (; sp && sp->name; sp++)
    if (sp->kind != KVB_PARAM_STRING && isnan(sp->def)) {
      double v = strcmp(sp->name, "budget") == 0 ? 64.0 : 1.0;
      kvb_params_set(p, sp->name, fmin(fmax(v, sp->min), sp->max));
    }
}

/* The refusal every kind must give: status, no object, a message naming type and name. */
static void check_refusal(const char *kind, const char *type, int st, int created) {
  char name[160], want[160];
  snprintf(want, sizeof want, "%s '%s' has no mutant 'no_such_mutant' (", kind, type);
  snprintf(name, sizeof name, "mutant.%s.%s.unknown_refused", kind, type);
  CHECK(st == KVB_ENOTFOUND && !created && strstr(kvb_strerror_last(), want) &&
            (strstr(kvb_strerror_last(), "its mutants: ") ||
             strstr(kvb_strerror_last(), "it has none")),
        name, "st %d, created %d, message '%s'", st, created, kvb_strerror_last());
}

static void methods(gsl_rng *rng) {
  for (size_t i = 0; kvb_method_type_at(i); i++) {
    const kvb_method_type *t = kvb_method_type_at(i);
    kvb_method_config cfg = {4, 3, 1.0, rng};
    kvb_params p;
    for (size_t k = 0; k < kvb_mutant_count(t->mutants); k++) {
      const char *mn = t->mutants[k].name;
      required_params(t->params, &p);
      kvb_params_set_str(&p, "mutant", mn);
      kvb_method *m = NULL;
      int st = kvb_method_alloc(t->name, &cfg, &p, &m);
      char name[160];
      snprintf(name, sizeof name, "mutant.method.%s.%s.selected", t->name, mn);
      CHECK(st == KVB_OK && m && m->mutant == (int)k + 1 && kvb_method_is_mutant(m, mn) &&
                strcmp(kvb_method_mutant_name(m), mn) == 0 && t->mutants[k].help &&
                t->mutants[k].help[0],
            name, "st %d: %s", st, kvb_strerror_last());
      kvb_method_free(m);
    }
    /* faithful: no mutant reported */
    required_params(t->params, &p);
    kvb_method *m = NULL;
    int st = kvb_method_alloc(t->name, &cfg, &p, &m);
    char name[160];
    snprintf(name, sizeof name, "mutant.method.%s.faithful", t->name);
    CHECK(st == KVB_OK && m && m->mutant == 0 && !kvb_method_mutant_name(m), name, "st %d: %s",
          st, kvb_strerror_last());
    kvb_method_free(m);
    kvb_params_set_str(&p, "mutant", "no_such_mutant");
    m = (kvb_method *)&p; /* must come back NULL */
    st = kvb_method_alloc(t->name, &cfg, &p, &m);
    check_refusal("method", t->name, st, m != NULL);
  }
  /* a number is not a mutant name */
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "mutant", 1);
  kvb_method_config cfg = {4, 3, 1.0, rng};
  kvb_method *m = NULL;
  int st = kvb_method_alloc("exact", &cfg, &p, &m);
  CHECK(st == KVB_EINVAL && !m && strstr(kvb_strerror_last(), "mutant must be a name"),
        "mutant.method.numeric_refused", "st %d: %s", st, kvb_strerror_last());
}

static void streams(void) {
  for (size_t i = 0; kvb_stream_type_at(i); i++) {
    const kvb_stream_type *t = kvb_stream_type_at(i);
    kvb_params p;
    for (size_t k = 0; k < kvb_mutant_count(t->mutants); k++) {
      const char *mn = t->mutants[k].name;
      required_params(t->params, &p);
      kvb_params_set_str(&p, "mutant", mn);
      gsl_rng *rng = kvb_rng_alloc_substream(7, k);
      kvb_stream *s = NULL;
      int st = kvb_stream_generate(t->name, &p, rng, &s);
      gsl_rng_free(rng);
      char name[160];
      snprintf(name, sizeof name, "mutant.stream.%s.%s.selected", t->name, mn);
      CHECK(st == KVB_OK && s && s->type == t && s->mutant == (int)k + 1 &&
                kvb_stream_is_mutant(s, mn) && strcmp(kvb_stream_mutant_name(s), mn) == 0 &&
                t->mutants[k].help && t->mutants[k].help[0],
            name, "st %d: %s", st, kvb_strerror_last());
      kvb_stream_free(s);
    }
    required_params(t->params, &p);
    kvb_params_set_str(&p, "mutant", "no_such_mutant");
    gsl_rng *rng = kvb_rng_alloc_substream(7, 99);
    kvb_stream *s = (kvb_stream *)&p;
    int st = kvb_stream_generate(t->name, &p, rng, &s);
    gsl_rng_free(rng);
    check_refusal("stream", t->name, st, s != NULL);
  }
  /* the mutant changes what is generated: adv_sphere's "clustered" keys take 4 values */
  const char *base[] = {"n=64", "d_key=3", "d_value=2", NULL};
  kvb_stream *s[2] = {NULL, NULL};
  for (int v = 0; v < 2; v++) {
    kvb_params p;
    kvb_params_init(&p);
    for (size_t a = 0; base[a]; a++) kvb_params_parse(&p, base[a]);
    if (v) kvb_params_parse(&p, "mutant=clustered");
    gsl_rng *rng = kvb_rng_alloc_substream(3, 0);
    kvb_stream_generate("adv_sphere", &p, rng, &s[v]);
    gsl_rng_free(rng);
  }
  size_t distinct[2] = {0, 0};
  for (int v = 0; v < 2 && s[0] && s[1]; v++)
    for (size_t a = 0; a < 64; a++) {
      int seen = 0;
      for (size_t b = 0; b < a && !seen; b++)
        seen = memcmp(s[v]->K + a * 3, s[v]->K + b * 3, 3 * sizeof(double)) == 0;
      distinct[v] += !seen;
    }
  CHECK(distinct[0] == 64 && distinct[1] <= 4 && strcmp(s[1]->params.items[3].name, "mutant") == 0,
        "mutant.stream.adv_sphere.clustered_acts", "distinct keys %zu (faithful), %zu (mutant)",
        distinct[0], distinct[1]);
  kvb_stream_free(s[0]);
  kvb_stream_free(s[1]);
}

static void probes(void) {
  const char *sa[] = {"n=40", "d_key=3", "d_value=2", NULL};
  kvb_params sp;
  kvb_params_init(&sp);
  for (size_t a = 0; sa[a]; a++) kvb_params_parse(&sp, sa[a]);
  gsl_rng *srng = kvb_rng_alloc_substream(5, 0);
  kvb_stream *s = NULL;
  kvb_stream_generate("gaussian", &sp, srng, &s);
  gsl_rng_free(srng);
  size_t js[2] = {20, 40};
  double out[2 * KVB_PROBE_MAX_COLS], ref[2 * KVB_PROBE_MAX_COLS];
  for (size_t i = 0; s && kvb_probe_type_at(i); i++) {
    const kvb_probe_type *t = kvb_probe_type_at(i);
    kvb_params p;
    required_params(t->params, &p);
    for (const kvb_param_spec *q = t->params; q && q->name; q++)
      if (strcmp(q->name, "centers") == 0) kvb_params_set(&p, "centers", 3); /* k = 1: no choice */
    gsl_rng *rng = kvb_rng_alloc_substream(5, 1);
    int st0 = kvb_probe_run(t->name, s, &p, rng, 2, js, ref);
    gsl_rng_free(rng);
    for (size_t k = 0; k < kvb_mutant_count(t->mutants); k++) {
      const char *mn = t->mutants[k].name;
      kvb_params pm = p;
      kvb_params_set_str(&pm, "mutant", mn);
      rng = kvb_rng_alloc_substream(5, 1);
      int st = kvb_probe_run(t->name, s, &pm, rng, 2, js, out);
      gsl_rng_free(rng);
      int differs = 0;
      for (size_t c = 0; c < 2 * kvb_probe_ncols(t); c++) differs |= out[c] != ref[c];
      char name[160];
      snprintf(name, sizeof name, "mutant.probe.%s.%s.selected_and_acts", t->name, mn);
      CHECK(st0 == KVB_OK && st == KVB_OK && differs && t->mutants[k].help &&
                t->mutants[k].help[0],
            name, "st %d/%d, output differs %d: %s", st0, st, differs, kvb_strerror_last());
    }
    kvb_params pm = p;
    kvb_params_set_str(&pm, "mutant", "no_such_mutant");
    for (size_t c = 0; c < 2 * KVB_PROBE_MAX_COLS; c++) out[c] = -7;
    rng = kvb_rng_alloc_substream(5, 1);
    int st = kvb_probe_run(t->name, s, &pm, rng, 2, js, out);
    gsl_rng_free(rng);
    int written = 0;
    for (size_t c = 0; c < 2 * KVB_PROBE_MAX_COLS; c++) written |= out[c] != -7;
    check_refusal("probe", t->name, st, written);
  }
  kvb_stream_free(s);
}

/* Function-level switches reached through an owning type's mutant names (README "Mutants"). */
static void owner_maps(void) {
  static const char *const walk_names[] = {"walk_sign", "walk_nofail", "keep_larger",
                                           "random_signs"};
  static const char *const walk_owners[] = {"merge_reduce", "balancekv"};
  int ok = 1;
  for (size_t o = 0; o < 2; o++) {
    const kvb_method_type *t = kvb_method_lookup(walk_owners[o]);
    for (size_t k = 0; t && k < kvb_mutant_count(t->mutants); k++) {
      int walk_level = 0;
      for (size_t w = 0; w < 4; w++) walk_level |= strcmp(t->mutants[k].name, walk_names[w]) == 0;
      /* a walk-level name must map to a flag, any other name to none */
      if (walk_level != (kvb_walk_flags_for(t->mutants[k].name) != 0)) ok = 0;
    }
  }
  CHECK(ok, "mutant.map.walk_flags", "a walk-level mutant of merge_reduce/balancekv maps to no flag");
  const kvb_method_type *b = kvb_method_lookup("balancekv_block");
  ok = b != NULL;
  for (size_t k = 0; b && k < kvb_mutant_count(b->mutants); k++) {
    int own = strcmp(b->mutants[k].name, "first_not_exact") == 0; /* the method's, not the core's */
    if (own != (kvb_bkvb_flags_for(b->mutants[k].name) == 0)) ok = 0;
  }
  CHECK(ok, "mutant.map.bkvb_flags", "a balancekv_block mutant maps to the wrong core flags");
  CHECK(kvb_kcenter_variant_for("nearest") == KVB_KCENTER_MUT_NEAREST &&
            kvb_kcenter_variant_for("nearest_centers") == KVB_KCENTER_MUT_NEAREST &&
            kvb_kcenter_variant_for(NULL) == KVB_KCENTER_FAITHFUL &&
            kvb_mutant_find(kvb_probe_lookup("kcenter")->mutants, "nearest") >= 0 &&
            kvb_mutant_find(kvb_method_lookup("recent_kcenter")->mutants, "nearest_centers") >= 0,
        "mutant.map.kcenter_variant", "k-center variant map and owners disagree");
  CHECK(kvb_stream_lookup("index_reduction")->mutants == kvb_index_mutants,
        "mutant.map.index_stream_is_instance_table", "index_reduction lists another table");
}

/* The table helpers themselves. */
static void tables(void) {
  static const kvb_mutant_spec t[] = {{"a", "one"}, {"b", "two"}, {NULL, NULL}};
  kvb_params p, rest;
  kvb_params_init(&p);
  kvb_params_set(&p, "x", 2);
  kvb_params_set_str(&p, "mutant", "b");
  kvb_params_set(&p, "y", 3);
  int mut = -1, st = kvb_mutant_split(&p, t, "method", "demo", &rest, &mut);
  CHECK(st == KVB_OK && mut == 2 && rest.n == 2 && strcmp(rest.items[0].name, "x") == 0 &&
            strcmp(rest.items[1].name, "y") == 0 && kvb_mutant_count(t) == 2 &&
            kvb_mutant_count(NULL) == 0 && kvb_mutant_find(t, "a") == 0 &&
            kvb_mutant_find(NULL, "a") == -1 && strcmp(kvb_mutant_name(t, 1), "a") == 0 &&
            !kvb_mutant_name(t, 0) && !kvb_mutant_name(t, 3),
        "mutant.table.split_find_name", "st %d, mutant %d, rest %zu", st, mut, rest.n);
  st = kvb_mutant_split(NULL, t, "method", "demo", &rest, &mut);
  CHECK(st == KVB_OK && mut == 0 && rest.n == 0, "mutant.table.no_params", "st %d", st);
  kvb_params_set_str(&p, "mutant", "");
  st = kvb_mutant_split(&p, t, "stream", "demo", &rest, &mut);
  CHECK(st == KVB_ENOTFOUND && strstr(kvb_strerror_last(), "stream 'demo' has no mutant '' (its mutants: a, b)"),
        "mutant.table.empty_name_refused", "st %d: %s", st, kvb_strerror_last());
}

int main(void) {
  gsl_rng *rng = kvb_rng_alloc_substream(1, 0);
  tables();
  methods(rng);
  streams();
  probes();
  owner_maps();
  gsl_rng_free(rng);
  UNIT_EXIT();
}

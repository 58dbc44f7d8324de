/* prop_shard.h — what one run of a claim (faithful or under a mutant) produced, and its text
 * form, so `kvb-props --shard K/N --out DIR` can leave runs in a directory and `kvb-props
 * --merge DIR...` can judge and report them exactly as a single process would have. */
#ifndef KVB_PROP_SHARD_H
#define KVB_PROP_SHARD_H

#include <stdio.h>

#include "prop.h"

#define PROP_LACKS_CONTROL 1
#define PROP_LACKS_UNIT 2

typedef struct {
  char id[128];       /* claim id */
  char mutant[160];   /* "" for the faithful run */
  prop_verdict v;
  int failures;       /* assertions failed */
  int lacks_control;  /* PROP_LACKS_CONTROL: a bound/scaling/comparison claim that ran no control
                         and gave no reason; | PROP_LACKS_UNIT: a test with a p-value, no prop_unit */
  int applied;        /* times the mutant was injected */
  int ncells;
  prop_verdict cells[PROP_MAX_CELLS];
  unsigned char cell_detail[PROP_MAX_CELLS]; /* within-unit findings (written as verdict + 100) */
  double cell_flip[PROP_MAX_CELLS];          /* prop_ctx.cell_flip (written ":flip" when known) */
  double cell_flip_holds[PROP_MAX_CELLS];    /* prop_ctx.cell_flip_holds (then "/flip" after it) */
  int nctl;           /* controls (prop_control), written "passed:flip" (":flip" when known) */
  unsigned char ctl_passed[PROP_MAX_CELLS];
  double ctl_flip[PROP_MAX_CELLS];
  double secs;
  int ntests;         /* hypothesis tests made, and the sum of their α (the run's false-alarm bound) */
  double alpha_sum;
  int miss_kind;      /* a mutant run's miss probability: PROP_MISS_* (prop_main.c) */
  double miss;
  char notes[sizeof ((prop_ctx *)0)->notes];
} prop_run_rec;

/* One record as one line (tab-separated, notes escaped). Returns 0 or -1 on a write error. */
int prop_rec_write(FILE *f, const prop_run_rec *r);
/* Reads the next record; returns 1, 0 at end of file, -1 on a malformed line. */
int prop_rec_read(FILE *f, prop_run_rec *r);

/* A shard directory's identity: every shard of one sweep must agree on all but k. */
typedef struct {
  int k, n, full, no_mut;
  unsigned long long seed;
  char only_mutant[160];
  char only[1024];    /* the --only prefixes, comma-joined ("" for all) */
  char version[32];
  char method[256];   /* kvb-props --method NAME[,PARAMS] ("" for the papers' claims) */
  /* The plugins the shard had loaded, by identity (plugin.h, kvb_plugin_identity): one
   * "SHA256 SIZE ABI PATH" line each, '\n'-separated. Data only: the merge loads no code a shard
   * names; it compares these (the path aside: machines differ) and checks that the plugins of its
   * own command line are among them. */
  char plugins[4096];
  char method_plugin[65]; /* SHA-256 of the plugin the method under test came from ("" if none) */
  int path_only_plugin;   /* a "plugin PATH" line (a kvb-props before identities): unverifiable */
} prop_shard_meta;

/* The identity part ("SHA256 SIZE ABI" lines, paths dropped) of m->plugins into buf. */
void prop_meta_plugin_ids(const prop_shard_meta *m, char *buf, size_t cap);

int prop_meta_write(const char *path, const prop_shard_meta *m);
/* Returns 0, or -1 with a reason in why. */
int prop_meta_read(const char *path, prop_shard_meta *m, char *why, size_t cap);

#endif

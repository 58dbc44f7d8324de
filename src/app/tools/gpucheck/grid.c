/* grid.c — kvb-gpucheck: the kernel × shape grids of `test` (the small grid, --full, --grid tiny)
 * and `list`, which prints them with the mutants (no device needed). */
#include "gpucheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the grids ---- */
attn_case *attn_grid(int full, size_t *count) {
  if (!full) {
    *count = sizeof ATTN_SMALL / sizeof *ATTN_SMALL;
    attn_case *g = malloc(sizeof ATTN_SMALL);
    if (g) memcpy(g, ATTN_SMALL, sizeof ATTN_SMALL);
    return g;
  }
  static const size_t ds[] = {64, 128, 256}, ns[] = {1, 97, 1000}, Hs[] = {1, 8};
  attn_case *g = malloc(3 * 2 * 2 * 3 * 2 * sizeof *g + sizeof ATTN_SMALL);
  size_t k = 0;
  if (!g) return NULL;
  for (size_t di = 0; di < 3; di++)
    for (int half = 0; half < 2; half++)
      for (int us = 0; us < 2; us++)
        for (size_t ni = 0; ni < 3; ni++)
          for (size_t hi = 0; hi < 2; hi++) {
            attn_case c = {Hs[hi], ns[ni], ds[di], ds[(di + ni) % 3], 1 + hi, ni == 2 ? 256 : 64, half, us, us && half};
            g[k++] = c;
          }
  memcpy(g + k, ATTN_SMALL, sizeof ATTN_SMALL);
  *count = k + sizeof ATTN_SMALL / sizeof *ATTN_SMALL;
  return g;
}

/* --grid tiny: one or two small shapes per kernel, enough to reach every barrier (two chunks of
 * the weighted queries, walks of several steps, several tokens per SubGen group), cheap enough to
 * run under Oclgrind's instrumentation (scripts/oclgrind-check). */
const attn_case ATTN_TINY[] = {{1, 70, 8, 8, 1, 32, 0, 0, 0}, {2, 40, 8, 4, 1, 32, 1, 1, 0}};
static const us_case US_TINY[] = {{1, 40, 4, 4, 8, 8, 1, 32, 1}};
static const bk_case BK_TINY[] = {{1, 40, 8, 8, 16, 1, 0}};
static const wq_case WQ_TINY[] = {{1, 600, 4, 4, 300, 1, 1, 0, 0}};
static const sg_case SG_TINY[] = {{1, 20, 4, 4, 2, 4, 2, 20, 1.0, 1.0, 0.3, 0}, {1, 8, 4, 4, 2, 260, 2, 8, 1.0, 1.0, 0.3, 0}};
grid grid_of(int tiny) {
  grid g = {ATTN_SMALL, US_SMALL, BK_SMALL, WQ_SMALL, SG_SMALL, N_OF(ATTN_SMALL), N_OF(US_SMALL), N_OF(BK_SMALL),
            N_OF(WQ_SMALL), N_OF(SG_SMALL)};
  grid t = {ATTN_TINY, US_TINY, BK_TINY, WQ_TINY, SG_TINY, N_OF(ATTN_TINY), N_OF(US_TINY), N_OF(BK_TINY), N_OF(WQ_TINY),
            N_OF(SG_TINY)};
  return tiny ? t : g;
}

int do_list(int full) {
  size_t na;
  attn_case *ag = attn_grid(full, &na);
  if (!ag) return 1;
  printf("%-18s %-70s\n", "kernel", "shape");
  for (size_t i = 0; i < na; i++) {
    char name[200];
    attn_name(&ag[i], name, sizeof name);
    printf("%-18s %s\n", "attn_decode", name + 11);
  }
  for (size_t i = 0; i < sizeof US_SMALL / sizeof *US_SMALL; i++) {
    const us_case *c = &US_SMALL[i];
    printf("%-18s (H=%zu,n=%zu,f=%zu,w=%zu,T=%u,dk=%zu,dv=%zu,nq=%zu)\n", "usample_compress", c->H, c->n, c->f, c->w, c->T, c->dk, c->dv, c->nq);
    printf("%-18s (same shape, weighted query)\n", "usample_query");
  }
  for (size_t i = 0; i < sizeof BK_SMALL / sizeof *BK_SMALL; i++)
    printf("%-18s (H=%zu,n=%zu,d=%zu,dv=%zu,b=%zu,T=%u)\n", "bkvb_compress", BK_SMALL[i].H, BK_SMALL[i].n, BK_SMALL[i].d,
           BK_SMALL[i].dv, BK_SMALL[i].b, BK_SMALL[i].T);
  for (size_t i = 0; i < sizeof WQ_SMALL / sizeof *WQ_SMALL; i++) {
    char name[200];
    wq_name(&WQ_SMALL[i], name, sizeof name);
    printf("%-18s %s\n", "bkvb_query", name + 10);
  }
  for (size_t i = 0; full && i < sizeof WQ_FULL / sizeof *WQ_FULL; i++) {
    char name[200];
    wq_name(&WQ_FULL[i], name, sizeof name);
    printf("%-18s %s (--full)\n", "bkvb_query", name + 10);
  }
  for (size_t i = 0; i < sizeof SG_SMALL / sizeof *SG_SMALL + (full ? sizeof SG_FULL / sizeof *SG_FULL : 0); i++) {
    char name[200];
    size_t ns = sizeof SG_SMALL / sizeof *SG_SMALL;
    sg_name(i < ns ? &SG_SMALL[i] : &SG_FULL[i - ns], name, sizeof name);
    printf("%-18s %s\n%-18s (same shape, 2 queries on the device's state)\n", "subgen_update", name, "subgen_query");
  }
  printf("%-18s %s\n", "subgen_tie", "(H=2,dk=4,dv=4,t=2,s=2,delta=0.625; keys at distance exactly delta join, device and CPU)");
  for (size_t i = 0; i < sizeof RKV / sizeof *RKV; i++)
    printf("%-18s (Hkv=%zu,H=%zu,dk=%zu,dv=%zu,%s,appends=%zu+%zu+%zu; device KV cache vs kvb_gpu_attention, bytes moved)\n",
           "resident", RKV[i].Hkv, RKV[i].H, RKV[i].dk, RKV[i].dv, RKV[i].half ? "f16" : "f32", RKV[i].appends[0],
           RKV[i].appends[1], RKV[i].appends[2]);
  printf("%-18s (H=3,dk=16,dv=16,t=4,s=8,batches=50+1+600; resident SubGen, batched update, vs the host mirror)\n", "resident");
  printf("%-18s (H=1,dk=4,t=2,s=2,delta=1; an old/new representative tie inside a chunk)\n", "resident");
  printf("%-18s (H=2,d=64,dv=32,n=300,f=8,middle=256,b=64,T=2; resident block BalanceKV vs gpu_ops.h)\n", "resident");
  printf("%-18s (H=2,dk=32,dv=16,n=300,rows=40+64; uniform sampling gathered on the device vs gpu_ops.h)\n", "resident");
  for (size_t i = 0; i < sizeof GRAM_CASES / sizeof *GRAM_CASES; i++)
    printf("%-18s (H=%zu,n=%zu,d=%zu,dv=%zu,b=%zu,T=%u; k_bkvb_gram.cl vs k_bkvb.cl, bit for bit)\n", "bkvb_gram",
           GRAM_CASES[i].H, GRAM_CASES[i].n, GRAM_CASES[i].d, GRAM_CASES[i].dv, GRAM_CASES[i].b, GRAM_CASES[i].T);
  static const char *TINY_DESC[] = {
      "(kvb_attn_coop, one launch: f32 GQA 6 with log-weights / f16 GQA 2; vs kvb_attn_split, bit for bit)",
      "(kvb_bkvb_gram_walk / kvb_bkvb_halving_par, one launch; vs k_bkvb.cl, bit for bit)",
      "(kvb_subgen_prep exact on integer data / kvb_subgen_update_b vs kvb_subgen_update, one launch)",
      "(kvb_restride, kvb_fill_i32, kvb_bkvb_init, kvb_bkvb_qlist, kvb_copy_f4: one launch each, exact)"};
  for (size_t gi = 0; gi < N_OF(TINY_GROUP); gi++)
    printf("%-18s %zu cases %s\n", TINY_GROUP[gi], TINY_NCASE[gi], TINY_DESC[gi]);
  list_mutants();
  free(ag);
  return 0;
}

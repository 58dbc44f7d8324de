/* passkey.c — the pass-key retrieval prompt (passkey.h). */
#include "passkey.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvb_error.h"

static const char PK_INTRO[] =
    "There is an important pass key hidden inside a lot of irrelevant text. Find it and "
    "memorize it. I will quiz you about the pass key.\n";
static const char PK_FILLER[] =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ";
static const char PK_QUESTION[] = "\nWhat is the pass key?";
static const char PK_CUE[] = " The pass key is";

int kvb_dec_passkey_prompt(const kvb_lm *lm, unsigned key, double depth, unsigned reps,
                           int32_t **ids, size_t *n0, size_t *n_tail) {
  if (!lm || !ids || !n0 || !n_tail) return KVB_ERROR(KVB_ENULL, "kvb_dec_passkey_prompt: NULL argument");
  *ids = NULL;
  if (key < 10000 || key > 99999 || !(depth >= 0 && depth <= 1) || reps > 10000)
    return KVB_ERROR(KVB_EINVAL, "pass key: key %u must have 5 digits, depth %g lie in [0, 1], "
                     "repetitions %u at most 10000", key, depth, reps);
  size_t at = (size_t)floor(depth * (double)reps + 0.5), cap = sizeof PK_INTRO +
              (size_t)reps * sizeof PK_FILLER + 256 + sizeof PK_QUESTION;
  char *txt = malloc(cap), needle[128];
  if (!txt) return KVB_ERROR(KVB_ENOMEM, "out of memory");
  snprintf(needle, sizeof needle, "The pass key is %u. Remember it. %u is the pass key. ", key, key);
  size_t len = 0;
#define PUT(str) (memcpy(txt + len, (str), strlen(str)), len += strlen(str))
  PUT(PK_INTRO);
  for (size_t r = 0; r <= reps; r++) {
    if (r == at) PUT(needle);
    if (r < reps) PUT(PK_FILLER);
  }
  PUT(PK_QUESTION);
#undef PUT
  int32_t *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  int st = kvb_lm_encode(lm, txt, len, &a, &na);
  if (!st) st = kvb_lm_encode(lm, PK_CUE, strlen(PK_CUE), &b, &nb);
  free(txt);
  /* a model that takes a BOS (Gemma 3) gets it first, as every sequence it was trained on */
  int32_t bos = kvb_lm_bos(lm);
  size_t nbos = bos >= 0 ? 1 : 0;
  int32_t *all = st ? NULL : malloc((nbos + na + nb) * sizeof *all);
  if (!st && !all) st = KVB_ERROR(KVB_ENOMEM, "out of memory");
  if (!st) {
    if (nbos) all[0] = bos;
    memcpy(all + nbos, a, na * sizeof *a);
    memcpy(all + nbos + na, b, nb * sizeof *b);
    *ids = all, *n0 = nbos + na, *n_tail = nb;
  }
  free(a), free(b);
  return st;
}

int kvb_dec_passkey_correct(const kvb_lm *lm, const int32_t *gen, size_t n, unsigned key) {
  char *txt = NULL, want[16];
  size_t len = 0, k = 0;
  if (!lm || !gen || kvb_lm_decode(lm, gen, n, &txt, &len)) return 0;
  snprintf(want, sizeof want, "%u", key);
  int ok = 1;
  for (size_t i = 0; i < len && k < 5; i++)
    if (txt[i] >= '0' && txt[i] <= '9') ok &= txt[i] == want[k++];
  free(txt);
  return ok && k == 5;
}

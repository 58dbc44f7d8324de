/* stream_npy.c — the "npy" stream: Q, K, V read from .npy files dumped from a real model
 * (000 §3.1 and 003 §4 study real caches). Each file is [n, d] or [heads, n, d]; `head` picks the head of 3-d files.
 *
 * kvb_stream_generate allocates the stream from the n, d_key, d_value parameters before calling
 * the generator; here the sizes come from the files, so the generator replaces the arrays.
 * Given explicitly, n takes the first n tokens and d_key/d_value must match the files. */
#include "kvb_error.h"
#include "npy.h"
#include "stream.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kvb_param_spec npy_params[] = {
    {"n", KVB_PARAM_INT, 1, 1, 1e9, NULL, "use the first n tokens (default: every token in the files)"},
    {"d_key", KVB_PARAM_INT, 1, 1, 65536, NULL, "if given, must equal the files' key dimension"},
    {"d_value", KVB_PARAM_INT, 1, 1, 65536, NULL, "if given, must equal the value file's dimension"},
    {"q", KVB_PARAM_STRING, 0, 0, 0, "", "path of the queries .npy ([n, d_key] or [heads, n, d_key])"},
    {"k", KVB_PARAM_STRING, 0, 0, 0, "", "path of the keys .npy (same layout as q)"},
    {"v", KVB_PARAM_STRING, 0, 0, 0, "", "path of the values .npy ([n, d_value] or [heads, n, d_value])"},
    {"head", KVB_PARAM_INT, 0, 0, 1e6, NULL, "head index for 3-d files [heads, n, d]"},
    {NULL, 0, 0, 0, 0, NULL, NULL}};

/* Loads `which` and returns a pointer to the rows of head `head` with its n and d. */
static int load(const kvb_params *p, const kvb_param_spec *sp, const char *which,
                kvb_npy_array *a, const double **rows, size_t *n, size_t *d) {
  const char *path = kvb_params_get_str(p, sp, which);
  if (!path[0]) return KVB_ERROR(KVB_EINVAL, "npy stream: parameter '%s' (a .npy path) is required", which);
  int st = kvb_npy_read(path, a);
  if (st) return st;
  size_t head = (size_t)kvb_params_get(p, sp, "head");
  if (a->ndim == 2) {
    if (head != 0) {
      kvb_npy_free(a);
      return KVB_ERROR(KVB_EINVAL, "npy stream: %s is 2-d [n, d] but head = %zu was asked", path, head);
    }
    *n = a->shape[0];
    *d = a->shape[1];
    *rows = a->data;
  } else if (a->ndim == 3) {
    if (head >= a->shape[0]) {
      kvb_npy_free(a);
      return KVB_ERROR(KVB_EINVAL, "npy stream: %s has %zu heads, head = %zu asked", path,
                       a->shape[0], head);
    }
    *n = a->shape[1];
    *d = a->shape[2];
    *rows = a->data + head * a->shape[1] * a->shape[2];
  } else {
    kvb_npy_free(a);
    return KVB_ERROR(KVB_EFORMAT, "npy stream: %s has %zu dimension(s); expected [n, d] or [heads, n, d]",
                     path, a->ndim);
  }
  if (*n == 0 || *d == 0) {
    kvb_npy_free(a);
    return KVB_ERROR(KVB_EFORMAT, "npy stream: %s holds no tokens (n = %zu, d = %zu)", path, *n, *d);
  }
  return KVB_OK;
}

static int gen_npy(const kvb_params *p, const kvb_param_spec *sp, gsl_rng *rng, kvb_stream *s) {
  (void)rng;
  kvb_npy_array aq, ak, av;
  const double *q, *k, *v;
  size_t nq, dq, nk, dk, nv, dv;
  int st = load(p, sp, "q", &aq, &q, &nq, &dq);
  if (st) return st;
  st = load(p, sp, "k", &ak, &k, &nk, &dk);
  if (st) {
    kvb_npy_free(&aq);
    return st;
  }
  st = load(p, sp, "v", &av, &v, &nv, &dv);
  if (st) {
    kvb_npy_free(&aq);
    kvb_npy_free(&ak);
    return st;
  }
  size_t n = nq;
  if (nk != nq || nv != nq)
    st = KVB_ERROR(KVB_EDIM, "npy stream: q, k, v hold %zu, %zu, %zu tokens (must agree)", nq, nk, nv);
  else if (dq != dk)
    st = KVB_ERROR(KVB_EDIM, "npy stream: q has dimension %zu but k has %zu", dq, dk);
  else if (kvb_params_has(p, "d_key") && (size_t)kvb_params_get(p, sp, "d_key") != dk)
    st = KVB_ERROR(KVB_EDIM, "npy stream: d_key = %g given but the files have %zu",
                   kvb_params_get(p, sp, "d_key"), dk);
  else if (kvb_params_has(p, "d_value") && (size_t)kvb_params_get(p, sp, "d_value") != dv)
    st = KVB_ERROR(KVB_EDIM, "npy stream: d_value = %g given but the file has %zu",
                   kvb_params_get(p, sp, "d_value"), dv);
  else if (kvb_params_has(p, "n")) {
    size_t want = (size_t)kvb_params_get(p, sp, "n");
    if (want > n)
      st = KVB_ERROR(KVB_EINVAL, "npy stream: n = %zu asked but the files hold %zu tokens", want, n);
    else
      n = want;
  }
  if (!st) st = kvb_stream_set_data(s, n, dk, dv, q, k, v, "npy stream");
  kvb_npy_free(&aq);
  kvb_npy_free(&ak);
  kvb_npy_free(&av);
  return st;
}

const kvb_stream_type kvb_stream_npy = {
    "npy", "Q, K, V read from .npy files (e.g. dumped from a model), one head", NULL, npy_params, NULL,
    gen_npy};

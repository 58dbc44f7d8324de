/* runner.c — runs an experiment (see runner.h): work units on a pthread pool, rows kept per
 * unit and written in unit order so the CSV does not depend on the number of jobs. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "runner.h"

#include "measures.h"
#include "lua_spec.h"
#include "out_file.h"
#include "read_file.h"
#include "probe.h"
#ifdef KVB_WITH_OPENCL
#include "gpu.h"
#include "gpu_methods.h"
#endif

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- columns ---- */

enum {
  C_REL, C_ABS, C_ATTN, C_SM, C_VOP, C_VF, C_ROP, C_RF, C_MB, C_MV,
  C_DIST, C_EXPS, C_COINS, C_DOTS, C_FAILS, C_TU, C_TQ,
  C_DISC, C_DISCI, C_DISCB, C_WFAIL, C_RAD, C_RADR, C_DEC, C_USZ
};

static const char *const col_names[KVB_RUN_NCOLS] = {
    "rel_error", "err_abs", "attn_norm", "softmax_norm", "v_op", "v_f", "ratio_op", "ratio_f",
    "mem_bytes", "mem_vectors", "distances", "exps", "coins", "dots", "fails", "update_s",
    "query_s", "disc", "disc_inf", "disc_bound", "walk_fails", "radius", "radius_rel",
    "decode_acc", "u_size"};
static const unsigned col_groups[KVB_RUN_NCOLS] = {
    KVB_MEASURE_ERROR,  KVB_MEASURE_ERROR,  KVB_MEASURE_ERROR,  KVB_MEASURE_BOUND,
    KVB_MEASURE_BOUND,  KVB_MEASURE_BOUND,  KVB_MEASURE_BOUND,  KVB_MEASURE_BOUND,
    KVB_MEASURE_MEMORY, KVB_MEASURE_MEMORY, KVB_MEASURE_WORK,   KVB_MEASURE_WORK,
    KVB_MEASURE_WORK,   KVB_MEASURE_WORK,   KVB_MEASURE_WORK,   KVB_MEASURE_TIME,
    KVB_MEASURE_TIME,   KVB_MEASURE_PROBE,  KVB_MEASURE_PROBE,  KVB_MEASURE_PROBE,
    KVB_MEASURE_PROBE,  KVB_MEASURE_PROBE,  KVB_MEASURE_PROBE,  KVB_MEASURE_DECODE,
    KVB_MEASURE_DECODE};

const char *kvb_run_column_name(size_t i) { return i < KVB_RUN_NCOLS ? col_names[i] : NULL; }
unsigned kvb_run_column_group(size_t i) { return i < KVB_RUN_NCOLS ? col_groups[i] : 0; }
int kvb_run_column_find(const char *name) {
  for (size_t i = 0; name && i < KVB_RUN_NCOLS; i++)
    if (strcmp(col_names[i], name) == 0) return (int)i;
  return -1;
}

/* ---- experiment ---- */

void kvb_experiment_init(kvb_experiment *e) {
  memset(e, 0, sizeof *e);
  e->trials = 1;
  e->seed = 1;
  e->scale = 1;
  e->measures = KVB_MEASURE_DEFAULT;
  e->fail_above = NAN;
}

void kvb_experiment_free(kvb_experiment *e) {
  if (!e) return;
  free(e->spec_text);
  for (size_t i = 0; i < e->nsweeps; i++) free(e->sweeps[i].vals);
  memset(e, 0, sizeof *e);
}

size_t kvb_experiment_points(const kvb_experiment *e) {
  size_t p = 0;
  return kvb_experiment_units(e, &p, NULL) == 0 || p ? p : SIZE_MAX;
}

/* The first sweep varies slowest, as in nested loops written in declaration order; a zipped
 * sweep takes the index of the sweep it moves with. */
double kvb_experiment_sweep_value(const kvb_experiment *e, size_t s, size_t point) {
  size_t lead = e->sweeps[s].zip_with >= 0 ? (size_t)e->sweeps[s].zip_with : s, stride = 1;
  for (size_t i = e->nsweeps; i-- > lead + 1;)
    if (e->sweeps[i].zip_with < 0) stride *= e->sweeps[i].nvals;
  return e->sweeps[s].vals[(point / stride) % e->sweeps[lead].nvals];
}

const kvb_param_spec *kvb_experiment_item_spec(const kvb_experiment *e, const kvb_run_item *it) {
  int is_stream = it >= e->streams && it < e->streams + KVB_RUN_MAX_STREAMS;
  if (is_stream) {
    const kvb_stream_type *t = kvb_stream_lookup(it->type);
    return t ? t->params : NULL;
  }
  if (it->probe) {
    const kvb_probe_type *t = kvb_probe_lookup(it->type);
    return t ? t->params : NULL;
  }
  const kvb_method_type *t = kvb_method_lookup(it->type);
  return t ? t->params : NULL;
}

static int spec_has(const kvb_param_spec *sp, const char *name) {
  for (; sp && sp->name; sp++)
    if (strcmp(sp->name, name) == 0) return 1;
  return 0;
}

void kvb_experiment_item_params(const kvb_experiment *e, const kvb_run_item *it, size_t point,
                                kvb_params *out) {
  *out = it->params;
  const kvb_param_spec *sp = kvb_experiment_item_spec(e, it);
  for (size_t s = 0; s < e->nsweeps; s++)
    if (spec_has(sp, e->sweeps[s].param))
      kvb_params_set(out, e->sweeps[s].param, kvb_experiment_sweep_value(e, s, point));
}

/* ---- one work unit ---- */

typedef struct {
  size_t stream, method, j;
  int status;
  char *msg;                   /* owned; why the row failed ("spec:line: ..."), NULL when OK */
  double v[KVB_RUN_NCOLS];
} row;

typedef struct {
  row *rows;
  size_t nrows;
  int status;
  char msg[1400];
} unit_result;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The library's last message for the user: the status name and text, without the internal
 * " (file.c:line)" suffix, which says nothing to someone reading a spec. */
static void last_message(char *buf, size_t cap) {
  snprintf(buf, cap, "%s", kvb_strerror_last());
  size_t n = strlen(buf);
  if (n >= 4 && buf[n - 1] == ')') {
    char *open = strrchr(buf, '(');
    if (open && open > buf && open[-1] == ' ' && strstr(open, ".c:")) open[-1] = '\0';
  }
}

/* "SPEC:LINE: method 'label'" — where the spec declared the item, for messages. */
static void item_where(const kvb_experiment *e, const kvb_run_item *it, char *buf, size_t cap) {
  int is_stream = it >= e->streams && it < e->streams + KVB_RUN_MAX_STREAMS;
  snprintf(buf, cap, "%s:%d: %s '%s'", e->spec_path, it->line,
           is_stream ? "stream" : it->probe ? "probe" : "method", it->label);
}

/* A failure of the whole unit (stream generation, a probe, memory): the run stops. it may be
 * NULL when no declaration is at fault. */
static int unit_fail(unit_result *r, int st, const kvb_experiment *e, const kvb_run_item *it,
                     const char *what) {
  char where[700] = "", m[512];
  if (it) item_where(e, it, where, sizeof where);
  last_message(m, sizeof m);
  r->status = st;
  snprintf(r->msg, sizeof r->msg, "%s%s%s: %s", where, it && what[0] ? ": " : "", what, m);
  return st;
}

/* A failed row keeps the run going; its message goes to the CSV's error column and the
 * summary. */
static void row_fail(row *w, int st, const kvb_experiment *e, const kvb_run_item *it,
                     const char *what) {
  char where[700], buf[1400];
  item_where(e, it, where, sizeof where);
  snprintf(buf, sizeof buf, "%s: %s", where, what); /* j is the row's own column */
  w->status = st;
  free(w->msg);
  w->msg = strdup(buf); /* NULL on ENOMEM: the status still marks the row */
}

/* Query positions (1-based token counts) for a stream of n tokens. */
static size_t query_points(const kvb_experiment *e, size_t n, size_t *js) {
  size_t c = 0;
  if (e->nq_at) {
    for (size_t i = 0; i < e->nq_at; i++)
      if (e->q_at[i] <= n) js[c++] = e->q_at[i];
  } else if (e->q_every) {
    if ((n - 1) / e->q_every + 1 > KVB_RUN_MAX_QUERIES) return 0; /* caller reports it */
    for (size_t j = e->q_every; j < n; j += e->q_every) js[c++] = j;
    js[c++] = n;
  } else {
    js[c++] = n;
  }
  return c;
}

static row *new_row(unit_result *r, size_t stream, size_t method, size_t j) {
  row *w = &r->rows[r->nrows++];
  w->stream = stream;
  w->method = method;
  w->j = j;
  w->status = KVB_OK;
  w->msg = NULL;
  for (size_t c = 0; c < KVB_RUN_NCOLS; c++) w->v[c] = NAN;
  return w;
}

static void record_work(row *w, const kvb_method *m) {
  w->v[C_DIST] = (double)m->work.distances;
  w->v[C_EXPS] = (double)m->work.exps;
  w->v[C_COINS] = (double)m->work.coins;
  w->v[C_DOTS] = (double)m->work.dots;
  w->v[C_FAILS] = (double)m->work.fails;
}

static void record_memory(row *w, const kvb_method *m) {
  kvb_memory mem;
  kvb_method_memory(m, &mem);
  w->v[C_MB] = (double)mem.bytes;
  w->v[C_MV] = (double)mem.vectors;
}

/* A probe (probe.h) on stream si at its query points: one row per point. */
static int probe_rows(const kvb_experiment *e, size_t point, size_t si, size_t k,
                      const kvb_stream *s, const size_t *js, size_t q, gsl_rng *rng,
                      unit_result *r) {
  const kvb_run_item *it = &e->methods[k];
  const kvb_probe_type *t = kvb_probe_lookup(it->type);
  size_t nc = kvb_probe_ncols(t);
  int col[KVB_PROBE_MAX_COLS];
  for (size_t c = 0; c < nc; c++) col[c] = kvb_run_column_find(t->columns[c]);
  kvb_params p;
  kvb_experiment_item_params(e, it, point, &p);
  double *out = malloc(q * nc * sizeof *out);
  if (!out) return unit_fail(r, KVB_ERROR(KVB_ENOMEM, "out of memory"), e, it, "");
  int st = kvb_probe_run(it->type, s, &p, rng, q, js, out);
  if (st) {
    free(out);
    return unit_fail(r, st, e, it, "");
  }
  for (size_t a = 0; a < q; a++) {
    row *w = new_row(r, si, k, js[a]);
    for (size_t c = 0; c < nc; c++)
      if (col[c] >= 0) w->v[col[c]] = out[a * nc + c];
  }
  free(out);
  return KVB_OK;
}

/* A method on its spec's backend (README, GPU kernels): "cpu" (the default) or a device. */
#define NO_OPENCL_BUILD                                                                          \
  "this kvbound was built without OpenCL (install the Debian packages ocl-icd-opencl-dev "        \
  "opencl-c-headers pocl-opencl-icd, see scripts/install-deps, and rebuild)"
int kvb_run_backend_check(const char *type, const char *backend) {
  if (!backend[0] || !strcmp(backend, "cpu")) return KVB_OK;
#ifdef KVB_WITH_OPENCL
  return kvb_gpu_method_check(type, backend);
#else
  (void)type;
  if (strcmp(backend, "opencl") && strcmp(backend, "cuda"))
    return KVB_ERROR(KVB_EINVAL, "backend \"%s\" is not one of \"cpu\", \"opencl\", \"cuda\"", backend);
  return KVB_ERROR(KVB_ENOTFOUND, "backend \"%s\": %s", backend, NO_OPENCL_BUILD);
#endif
}

static int method_alloc(const kvb_run_item *it, const kvb_method_config *cfg, const kvb_params *p,
                        kvb_method **m) {
  if (!it->backend[0] || !strcmp(it->backend, "cpu")) return kvb_method_alloc(it->type, cfg, p, m);
  *m = NULL;
#ifdef KVB_WITH_OPENCL
  return kvb_gpu_method_alloc(it->type, it->backend, cfg, p, m);
#else
  return kvb_run_backend_check(it->type, it->backend);
#endif
}

int kvb_run_devices(void) {
#ifdef KVB_WITH_OPENCL
  char buf[8192];
  int n = kvb_gpu_list(KVB_GPU_OPENCL, buf, sizeof buf), total = n > 0 ? n : 0;
  if (n < 0) fprintf(stderr, "opencl: %s\n", kvb_strerror_last());
  else printf("%s", buf);
  n = kvb_gpu_list(KVB_GPU_CUDA, buf, sizeof buf);
  if (n < 0) printf("cuda: %s\n", kvb_strerror_last());
  else printf("%s", buf), total += n;
  return total > 0 ? 0 : 1;
#else
  fprintf(stderr, "kvbound devices: %s\n", NO_OPENCL_BUILD);
  return 1;
#endif
}

/* kvb_experiment.threads into the parameters of a method that has a "threads" parameter and
 * whose spec does not set it (runner.h). */
static void apply_threads(const kvb_experiment *e, const kvb_run_item *it, kvb_params *p) {
  const kvb_param_spec *ps = kvb_experiment_item_spec(e, it);
  if (!ps || kvb_params_has(p, "threads")) return;
  for (; ps->name; ps++)
    if (!strcmp(ps->name, "threads")) {
      kvb_params_set(p, "threads", e->threads > 0 ? e->threads : kvb_threads_default());
      return;
    }
}

/* The INDEX decoding pass (runner.h): Alice (kvb_index_alice) feeds U = {i : x_i = 1}, Bob
 * (kvb_index_bob) decodes every bit, on the stream's instance (kvb_measure_index_view). */
static int decode_rows(const kvb_experiment *e, size_t point, size_t si, size_t k,
                       const kvb_stream *s, const kvb_index_instance *inst,
                       const unsigned char *x, gsl_rng *rng, unit_result *r) {
  kvb_params p;
  kvb_experiment_item_params(e, &e->methods[k], point, &p);
  apply_threads(e, &e->methods[k], &p);
  kvb_method_config cfg = {s->d_key, s->d_value, 1.0 / sqrt((double)s->d_key), rng};
  kvb_method *m = NULL;
  int st = method_alloc(&e->methods[k], &cfg, &p, &m);
  if (st) return unit_fail(r, st, e, &e->methods[k], "");
  row *w = new_row(r, si, k, s->n);
  kvb_decode dec;
  int mst = kvb_measure_decode(inst, x, m, &dec);
  if (mst) {
    char m2[512];
    last_message(m2, sizeof m2);
    row_fail(w, mst, e, &e->methods[k], m2);
  } else {
    w->v[C_TU] = dec.update_s;
    w->v[C_TQ] = dec.query_s;
    w->v[C_DEC] = dec.accuracy;
    w->v[C_USZ] = (double)dec.u_size;
    record_memory(w, m);
  }
  record_work(w, m);
  kvb_method_free(m);
  return KVB_OK;
}

/* Exact attention at the q query points of a stream, shared by every method (measures.h):
 * x[a] is the exact side at query point a, st[a] its status (KVB_ERANGE when a score lies
 * beyond double range: the rows at that point fail with msg). */
typedef struct {
  kvb_exact_side *x;
  double *attn; /* q × d_value, the Attn vectors x[a].attn points into */
  int st[KVB_RUN_MAX_QUERIES];
  char msg[512];
} exact_ref;

static void exact_ref_free(exact_ref *ref) {
  free(ref->x);
  free(ref->attn);
}

static int exact_side(const kvb_experiment *e, const kvb_stream *s, const size_t *js, size_t q,
                      double scale, exact_ref *ref) {
  size_t dk = s->d_key, dv = s->d_value;
  memset(ref, 0, sizeof *ref);
  ref->x = calloc(q ? q : 1, sizeof *ref->x);
  ref->attn = malloc((q ? q : 1) * dv * sizeof *ref->attn);
  if (!ref->x || !ref->attn) {
    exact_ref_free(ref);
    return KVB_ERROR(KVB_ENOMEM, "out of memory");
  }
  unsigned what = (e->measures & KVB_MEASURE_BOUND) ? KVB_EXACT_NORMS : 0;
  for (size_t a = 0; a < q; a++) {
    size_t j = js[a];
    ref->st[a] = kvb_exact_side_compute(j, dk, dv, s->K, s->V, s->Q + (j - 1) * dk, scale, what,
                                        ref->attn + a * dv, &ref->x[a]);
    if (ref->st[a] && !ref->msg[0]) {
      char m[400];
      last_message(m, sizeof m);
      snprintf(ref->msg, sizeof ref->msg, "exact attention (the reference) failed: %s", m);
    }
  }
  return KVB_OK;
}

/* The measures of one answer z against the exact side (measures.h) into the row; a status
 * (an answer or an error outside double range) the caller turns into a failed row. */
static int record_errors(row *w, const kvb_exact_side *x, const double *z) {
  kvb_errors er;
  int st = kvb_measure_errors(x, z, x->d_value, &er);
  if (st) return st;
  if (!isfinite(er.err_abs))
    return KVB_ERROR(KVB_ERANGE, "the error ‖z − Attn‖ is outside double range");
  w->v[C_ABS] = er.err_abs;
  w->v[C_REL] = er.rel_error;
  w->v[C_ROP] = er.ratio_op;
  w->v[C_RF] = er.ratio_f;
  w->v[C_ATTN] = x->attn_norm;
  w->v[C_SM] = x->softmax_norm;
  w->v[C_VOP] = x->v_op;
  w->v[C_VF] = x->v_f;
  return KVB_OK;
}

/* A method on stream si: error against the exact side at every query point. */
static int method_rows(const kvb_experiment *e, size_t point, size_t si, size_t k,
                       const kvb_stream *s, const size_t *js, size_t q, const exact_ref *ref,
                       double scale, gsl_rng *rng, unit_result *r) {
  size_t dk = s->d_key, dv = s->d_value;
  kvb_params p;
  kvb_experiment_item_params(e, &e->methods[k], point, &p);
  apply_threads(e, &e->methods[k], &p);
  kvb_method_config cfg = {dk, dv, scale, rng};
  kvb_method *m = NULL;
  int st = method_alloc(&e->methods[k], &cfg, &p, &m);
  if (st) return unit_fail(r, st, e, &e->methods[k], "");
  double *zm = malloc(dv * sizeof *zm);
  if (!zm) {
    kvb_method_free(m);
    return unit_fail(r, KVB_ERROR(KVB_ENOMEM, "out of memory"), e, NULL, "query buffers");
  }
  size_t a = 0, n = s->n;
  double tu = 0;
  int mst = KVB_OK;
  char merr[640] = ""; /* the method's message, kept: later rows repeat it */
  for (size_t t = 0; t < n && a < q; t++) {
    if (!mst) {
      double t0 = now_s();
      mst = kvb_method_update(m, s->K + t * dk, dk, s->V + t * dv, dv);
      tu += now_s() - t0;
      if (mst) {
        char m2[480];
        last_message(m2, sizeof m2);
        snprintf(merr, sizeof merr, "update of token %zu failed: %s", t + 1, m2);
      }
    }
    if (t + 1 != js[a]) continue;
    row *w = new_row(r, si, k, t + 1);
    double t0 = now_s();
    int qst = KVB_OK;
    if (!mst) {
      qst = kvb_method_query(m, s->Q + t * dk, dk, zm, dv);
      if (qst) {
        char m2[480];
        last_message(m2, sizeof m2);
        snprintf(merr, sizeof merr, "query failed: %s", m2);
      }
    }
    w->v[C_TQ] = now_s() - t0;
    w->v[C_TU] = tu;
    /* a failed query leaves the method as it was: later query points are still asked */
    if (mst || qst) {
      row_fail(w, mst ? mst : qst, e, &e->methods[k], merr);
    } else if (ref->st[a]) { /* the reference itself is not representable at this point */
      row_fail(w, ref->st[a], e, &e->streams[si], ref->msg);
    } else if ((qst = record_errors(w, &ref->x[a], zm)) != KVB_OK) {
      char m2[480];
      last_message(m2, sizeof m2);
      snprintf(merr, sizeof merr, "measuring the answer failed: %s", m2);
      row_fail(w, qst, e, &e->methods[k], merr);
      merr[0] = '\0'; /* the method itself is fine: later rows do not repeat this */
    } else {
      record_memory(w, m);
    }
    record_work(w, m);
    a++;
  }
  free(zm);
  kvb_method_free(m);
  return KVB_OK;
}

/* Generates the unit's streams and their query points; sizes r->rows. */
static int unit_streams(const kvb_experiment *e, size_t point, gsl_rng *rng, kvb_stream **S,
                        size_t js[][KVB_RUN_MAX_QUERIES], size_t *nq, unit_result *r) {
  size_t total = 0;
  for (size_t i = 0; i < e->nstreams; i++) {
    kvb_params p;
    kvb_experiment_item_params(e, &e->streams[i], point, &p);
    int st = kvb_stream_generate(e->streams[i].type, &p, rng, &S[i]);
    if (st) return unit_fail(r, st, e, &e->streams[i], "");
    nq[i] = query_points(e, S[i]->n, js[i]);
    if (nq[i] == 0)
      return unit_fail(r, KVB_ERROR(KVB_EINVAL,
                                    "queries{}: no query point lies within the stream's %zu "
                                    "tokens, or more than %d would (raise 'every')",
                                    S[i]->n, KVB_RUN_MAX_QUERIES),
                       e, &e->streams[i], "");
    total += nq[i] * e->nmethods + e->nmethods;
  }
  r->rows = calloc(total ? total : 1, sizeof(row));
  if (!r->rows) return unit_fail(r, KVB_ERROR(KVB_ENOMEM, "out of memory"), e, NULL, "rows");
  return KVB_OK;
}

/* Every method and probe on stream si of the unit. */
static int stream_rows(const kvb_experiment *e, size_t point, size_t si, const kvb_stream *s,
                       const size_t *js, size_t nq, gsl_rng *rng, unit_result *r) {
  int st = KVB_OK, decode = (e->measures & KVB_MEASURE_DECODE) != 0;
  size_t nprobes = 0;
  for (size_t k = 0; k < e->nmethods; k++) nprobes += e->methods[k].probe != 0;
  double scale = e->scale > 0 ? e->scale : 1.0 / sqrt((double)s->d_key);
  exact_ref ref = {0};
  kvb_index_instance *inst = NULL;
  unsigned char *x = NULL;
  if (decode) {
    /* Alice's bits, one draw per bit, shared by every method of this trial */
    x = malloc(s->n);
    if (!x) return unit_fail(r, KVB_ERROR(KVB_ENOMEM, "out of memory"), e, NULL, "INDEX bits");
    for (size_t b = 0; b < s->n; b++) x[b] = gsl_rng_uniform(rng) < 0.5;
    st = kvb_measure_index_view(s, &inst);
    if (st) unit_fail(r, st, e, &e->streams[si], "");
  } else if (e->nmethods > nprobes) {
    st = exact_side(e, s, js, nq, scale, &ref);
    if (st) unit_fail(r, st, e, NULL, "exact attention");
  }
  for (size_t k = 0; k < e->nmethods && !st; k++) {
    if (e->methods[k].probe)
      st = probe_rows(e, point, si, k, s, js, nq, rng, r);
    else if (decode)
      st = decode_rows(e, point, si, k, s, inst, x, rng, r);
    else
      st = method_rows(e, point, si, k, s, js, nq, &ref, scale, rng, r);
  }
  exact_ref_free(&ref);
  kvb_index_free(inst);
  free(x);
  return st;
}

static int run_unit(const kvb_experiment *e, size_t u, unit_result *r) {
  size_t point = u / e->trials;
  gsl_rng *rng = kvb_rng_alloc_substream(e->seed, u);
  if (!rng) return unit_fail(r, KVB_ERROR(KVB_ENOMEM, "out of memory"), e, NULL, "generator");
  kvb_stream *S[KVB_RUN_MAX_STREAMS] = {0};
  size_t js[KVB_RUN_MAX_STREAMS][KVB_RUN_MAX_QUERIES], nq[KVB_RUN_MAX_STREAMS];
  int st = unit_streams(e, point, rng, S, js, nq, r);
  for (size_t i = 0; i < e->nstreams && !st; i++)
    st = stream_rows(e, point, i, S[i], js[i], nq[i], rng, r);
  for (size_t i = 0; i < e->nstreams; i++) kvb_stream_free(S[i]);
  gsl_rng_free(rng);
  return st;
}

/* ---- pool ---- */

/* The pool runs units first, first + stride, first + 2·stride, ... (nunits of them): every
 * unit of a run (0, 1), or the units of one shard (shard I of N: I, N) — res stays indexed by
 * the unit number either way. */
typedef struct {
  const kvb_experiment *e;
  unit_result *res;
  size_t nunits, next, done, first, stride;
  pthread_mutex_t mu;
} pool;

static void *worker(void *arg) {
  pool *P = arg;
  for (;;) {
    pthread_mutex_lock(&P->mu);
    size_t k = P->next++;
    pthread_mutex_unlock(&P->mu);
    if (k >= P->nunits) break;
    size_t u = P->first + k * P->stride;
    run_unit(P->e, u, &P->res[u]);
    pthread_mutex_lock(&P->mu);
    P->done++;
    pthread_mutex_unlock(&P->mu);
  }
  return NULL;
}

static void draw_progress(size_t done, size_t total, double elapsed) {
  int width = 30, fill = total ? (int)((double)width * (double)done / (double)total) : width;
  char bar[64];
  for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
  bar[width] = '\0';
  double eta = done ? elapsed * (double)(total - done) / (double)done : NAN;
  if (isnan(eta))
    fprintf(stderr, "\r[%s] %3d%% %zu/%zu trials  ETA --:--  ", bar,
            (int)(100.0 * (double)done / (double)(total ? total : 1)), done, total);
  else
    fprintf(stderr, "\r[%s] %3d%% %zu/%zu trials  ETA %d:%02d  ", bar,
            (int)(100.0 * (double)done / (double)total), done, total, (int)eta / 60,
            (int)eta % 60);
  fflush(stderr);
}

/* ---- output ---- */

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(f, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", f);
    else if (c == '\t')
      fputs("\\t", f);
    else if (c < 0x20)
      fprintf(f, "\\u%04x", c);
    else
      fputc(c, f);
  }
  fputc('"', f);
}

/* The parameters sorted by name: the spec's Lua table hands them over in its hash order, which
 * differs from one Lua state to the next, and meta.json must be the same for the same spec. */
static void params_str(const kvb_params *p, char *buf, size_t cap) {
  size_t o = 0, ord[KVB_PARAMS_MAX];
  buf[0] = '\0';
  size_t n = p->n < KVB_PARAMS_MAX ? p->n : KVB_PARAMS_MAX;
  for (size_t i = 0; i < n; i++) { /* insertion sort by name: a handful of parameters */
    size_t k = i;
    for (; k > 0 && strcmp(p->items[ord[k - 1]].name, p->items[i].name) > 0; k--) ord[k] = ord[k - 1];
    ord[k] = i;
  }
  for (size_t i = 0; i < n && o < cap; i++) {
    const kvb_param *it = &p->items[ord[i]];
    int w = it->is_string ? snprintf(buf + o, cap - o, "%s%s=%s", i ? " " : "", it->name, it->str)
                          : snprintf(buf + o, cap - o, "%s%s=%.17g", i ? " " : "", it->name, it->num);
    if (w < 0) break;
    o += (size_t)w;
  }
}

/* Outputs are written to hidden temporary files DIR/.NAME.tmp.XXXXXX (out_file.h: created
 * exclusively, so a planted link is never followed) and renamed over DIR/NAME
 * only once every output is complete (rename is atomic within a directory), meta.json last:
 * an interrupted run leaves either the previous complete set or temporary files, never a
 * truncated results.csv that looks whole. */
#define KVB_RUN_OUTPUTS 6
typedef struct {
  char tmp[KVB_RUN_OUTPUTS][1200], final[KVB_RUN_OUTPUTS][1200];
  size_t n;
} staged;

static FILE *stage_open(staged *sg, const char *dir, const char *name) {
  if (sg->n == KVB_RUN_OUTPUTS) return NULL;
  snprintf(sg->final[sg->n], sizeof sg->final[0], "%s/%s", dir, name);
  FILE *f = kvb_out_create(sg->tmp[sg->n], sizeof sg->tmp[0], dir, name);
  if (f) sg->n++;
  else KVB_ERROR(KVB_EIO, "%s/.%s.tmp.*: cannot create (%s)", dir, name, strerror(errno));
  return f;
}

/* Flushes to disk and closes; a write error (disk full) is reported, not hidden. */
static int stage_close(FILE *f, const char *what) {
  int bad = fflush(f) != 0;
  bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
  bad |= fclose(f) != 0;
  return bad ? KVB_ERROR(KVB_EIO, "%s: write error (%s)", what, strerror(errno)) : KVB_OK;
}

static void stage_discard(staged *sg) {
  for (size_t i = 0; i < sg->n; i++) unlink(sg->tmp[i]);
  sg->n = 0;
}

/* Removes the outputs of the run that DIR held before (its plot files, listed in its
 * plots.tsv, would otherwise sit beside the new results), meta.json first so that the
 * directory never claims a run that is half replaced. */
static void clear_previous(const char *dir) {
  char path[3400], line[2048];
  snprintf(path, sizeof path, "%s/meta.json", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/plots.tsv", dir);
  FILE *f = fopen(path, "r");
  while (f && fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = '\0';
    int ok = line[0] != '\0' && line[0] != '.';
    for (const char *c = line; *c; c++) ok &= strchr("/\\", *c) == NULL;
    static const char *const ext[] = {"png", "svg", "dat", "gp"};
    for (int x = 0; ok && x < 4; x++) {
      snprintf(path, sizeof path, "%s/%s.%s", dir, line, ext[x]);
      unlink(path);
    }
  }
  if (f) fclose(f);
}

/* Renames every staged file into place, the last one staged (meta.json) last. */
static int stage_commit(staged *sg, const char *dir) {
  clear_previous(dir);
  for (size_t i = 0; i < sg->n; i++)
    if (rename(sg->tmp[i], sg->final[i]) != 0) {
      int err = errno;
      for (size_t k = i; k < sg->n; k++) unlink(sg->tmp[k]);
      return KVB_ERROR(KVB_EIO, "%s: cannot rename into place (%s)", sg->final[i], strerror(err));
    }
  sg->n = 0;
  return KVB_OK;
}

/* 64-bit FNV-1a of the spec text, recorded in meta.json. */
static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; s && *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* real: the spec's real path to record (a merge records the shards' own), NULL: computed. */
static int write_meta(const kvb_experiment *e, FILE *f, int jobs, size_t units, size_t rows,
                      size_t failed, double wall, const char *real_given) {
  struct utsname un;
  memset(&un, 0, sizeof un);
  uname(&un);
  char when[64];
  time_t t = time(NULL);
  struct tm tmv;
  gmtime_r(&t, &tmv);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  fprintf(f, "{\n  \"kvbound_version\": \"%s\",\n  \"name\": ", KVBOUND_VERSION);
  json_str(f, e->name);
  fprintf(f, ",\n  \"spec_path\": ");
  json_str(f, e->spec_path);
  char real[4096];
  fprintf(f, ",\n  \"spec_realpath\": ");
  json_str(f, real_given ? real_given : realpath(e->spec_path, real) ? real : e->spec_path);
  fprintf(f, ",\n  \"spec_hash\": \"%016llx\"", (unsigned long long)text_hash(e->spec_text));
  fprintf(f, ",\n  \"failed_rows\": %zu", failed);
  fprintf(f, ",\n  \"seed\": %llu,\n  \"trials\": %zu,\n  \"sweep_points\": %zu,\n"
             "  \"units\": %zu,\n  \"rows\": %zu,\n  \"jobs\": %d,\n  \"wall_seconds\": %.3f,\n"
             "  \"finished_utc\": \"%s\",\n",
          (unsigned long long)e->seed, e->trials, kvb_experiment_points(e), units, rows, jobs,
          wall, when);
  fprintf(f, "  \"machine\": {\"sysname\": ");
  json_str(f, un.sysname);
  fprintf(f, ", \"release\": ");
  json_str(f, un.release);
  fprintf(f, ", \"version\": ");
  json_str(f, un.version);
  fprintf(f, ", \"machine\": ");
  json_str(f, un.machine);
  fprintf(f, ", \"cores\": %ld},\n", sysconf(_SC_NPROCESSORS_ONLN));
  if (e->scale > 0)
    fprintf(f, "  \"scale\": %.17g,\n", e->scale);
  else
    fprintf(f, "  \"scale\": \"1/sqrt(d_key)\",\n");
  const char *kinds[2] = {"streams", "methods"};
  for (int k = 0; k < 2; k++) {
    const kvb_run_item *items = k ? e->methods : e->streams;
    size_t n = k ? e->nmethods : e->nstreams;
    fprintf(f, "  \"%s\": [", kinds[k]);
    for (size_t i = 0; i < n; i++) {
      char ps[2048];
      params_str(&items[i].params, ps, sizeof ps);
      fprintf(f, "%s{\"label\": ", i ? ", " : "");
      json_str(f, items[i].label);
      fprintf(f, ", \"type\": ");
      json_str(f, items[i].type);
      fprintf(f, ", \"params\": ");
      json_str(f, ps);
      fprintf(f, "}");
    }
    fprintf(f, "],\n");
  }
  fprintf(f, "  \"sweeps\": [");
  for (size_t s = 0; s < e->nsweeps; s++) {
    fprintf(f, "%s{\"param\": ", s ? ", " : "");
    json_str(f, e->sweeps[s].param);
    fprintf(f, ", \"values\": [");
    for (size_t v = 0; v < e->sweeps[s].nvals; v++)
      fprintf(f, "%s%.17g", v ? ", " : "", e->sweeps[s].vals[v]);
    fprintf(f, "]");
    if (e->sweeps[s].zip_with >= 0) {
      fprintf(f, ", \"in_step_with\": ");
      json_str(f, e->sweeps[e->sweeps[s].zip_with].param);
    }
    fprintf(f, "}");
  }
  fprintf(f, "],\n  \"spec\": ");
  json_str(f, e->spec_text);
  fprintf(f, "\n}\n");
  return stage_close(f, "meta.json");
}

static void fmt_num(FILE *f, double x) {
  if (isnan(x))
    fputs("nan", f);
  else if (isinf(x))
    fputs(x > 0 ? "inf" : "-inf", f);
  else
    fprintf(f, "%.17g", x);
}

/* A CSV text field (RFC 4180): quoted, quotes doubled, line breaks flattened to spaces. */
static void csv_text(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
  }
  fputc('"', f);
}

static void free_results(unit_result *res, size_t units) {
  for (size_t u = 0; u < units && res; u++) {
    for (size_t i = 0; i < res[u].nrows; i++) free(res[u].rows[i].msg);
    free(res[u].rows);
  }
  free(res);
}

/* The run report's counts and its first failed row's message (in unit order over the units
 * u = first, first + step, ... a shard or the whole run holds). */
static void fill_report(kvb_run_report *rep, const unit_result *res, size_t first, size_t step,
                        size_t units, size_t rows, size_t failed) {
  rep->rows = rows;
  rep->failed_rows = failed;
  for (size_t u = first; u < units && failed && !rep->first_error[0]; u += step)
    for (size_t i = 0; i < res[u].nrows; i++)
      if (res[u].rows[i].status) {
        snprintf(rep->first_error, sizeof rep->first_error, "%s",
                 res[u].rows[i].msg ? res[u].rows[i].msg : kvb_status_name(res[u].rows[i].status));
        break;
      }
}

static int write_csv(const kvb_experiment *e, FILE *f, const unit_result *res, size_t units) {
  fprintf(f, "unit,point,trial");
  for (size_t s = 0; s < e->nsweeps; s++) fprintf(f, ",%s", e->sweeps[s].param);
  fprintf(f, ",stream,method,j,status");
  for (size_t c = 0; c < KVB_RUN_NCOLS; c++)
    if (col_groups[c] & e->measures) fprintf(f, ",%s", col_names[c]);
  fputs(",error\n", f); /* last, so the measure columns keep their positions */
  for (size_t u = 0; u < units; u++) {
    size_t point = u / e->trials, trial = u % e->trials;
    for (size_t i = 0; i < res[u].nrows; i++) {
      const row *w = &res[u].rows[i];
      fprintf(f, "%zu,%zu,%zu", u, point, trial);
      for (size_t s = 0; s < e->nsweeps; s++) {
        fputc(',', f);
        fmt_num(f, kvb_experiment_sweep_value(e, s, point));
      }
      fprintf(f, ",%s,%s,%zu,%d", e->streams[w->stream].label, e->methods[w->method].label, w->j,
              w->status);
      for (size_t c = 0; c < KVB_RUN_NCOLS; c++)
        if (col_groups[c] & e->measures) {
          fputc(',', f);
          fmt_num(f, w->v[c]);
        }
      fputc(',', f);
      if (w->status) csv_text(f, w->msg ? w->msg : kvb_status_name(w->status));
      fputc('\n', f);
    }
  }
  return stage_close(f, "results.csv");
}

/* ---- summary and quantiles ---- */

/* Whether column c is measured on the rows of item k: a probe's own columns; for a method the
 * measure groups it fills (decode rows carry no error or bound columns). */
static int column_applies(const kvb_experiment *e, size_t k, int c) {
  if (c < 0 || c >= KVB_RUN_NCOLS || !(col_groups[c] & e->measures)) return 0;
  if (e->methods[k].probe) {
    const kvb_probe_type *t = kvb_probe_lookup(e->methods[k].type);
    for (size_t i = 0; t && i < kvb_probe_ncols(t); i++)
      if (strcmp(t->columns[i], col_names[c]) == 0) return 1;
    return 0;
  }
  if (col_groups[c] == KVB_MEASURE_PROBE) return 0;
  if (e->measures & KVB_MEASURE_DECODE)
    return !(col_groups[c] & (KVB_MEASURE_ERROR | KVB_MEASURE_BOUND));
  return col_groups[c] != KVB_MEASURE_DECODE;
}

/* The headline column of item k's summary lines (runner.h): the spec's own measure — the y of
 * its first plot that the item measures, else its failure{} column — and otherwise the item's
 * natural one: a probe's first column, decode_acc under the decode measure, rel_error. */
static size_t headline_column(const kvb_experiment *e, size_t k) {
  for (size_t i = 0; i < e->nplots; i++) {
    int c = kvb_run_column_find(e->plots[i].y);
    if (column_applies(e, k, c)) return (size_t)c;
  }
  int fc = e->fail_col[0] ? kvb_run_column_find(e->fail_col) : -1;
  if (column_applies(e, k, fc)) return (size_t)fc;
  if (e->methods[k].probe) {
    int c = kvb_run_column_find(kvb_probe_lookup(e->methods[k].type)->columns[0]);
    return c >= 0 ? (size_t)c : C_REL;
  }
  return (e->measures & KVB_MEASURE_DECODE) ? C_DEC : C_REL;
}

/* Appends to a fixed buffer; never writes past cap, *o stays <= cap - 1. */
static void app(char *b, size_t cap, size_t *o, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void app(char *b, size_t cap, size_t *o, const char *fmt, ...) {
  if (*o + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(b + *o, cap - *o, fmt, ap);
  va_end(ap);
  if (w > 0) *o = *o + (size_t)w < cap ? *o + (size_t)w : cap - 1;
}

/* One (sweep point, stream, method): its rows, failures, and the quantiles of every column
 * pooled over trials and query points — computed once (measures.h), written to quantiles.csv
 * for the plots and shown by the summary. */
typedef struct {
  size_t rows, errs;        /* rows of the group, failed rows */
  unsigned fails, fvalid;   /* trials failing the failure rule; trials where its column is a number */
  kvb_quantiles q[KVB_RUN_NCOLS];
} group_stats;

static int cmp_row_j(const void *a, const void *b) {
  const row *p = *(const row *const *)a, *q = *(const row *const *)b;
  return (p->j > q->j) - (p->j < q->j);
}

/* The rows of group (p, si, mi) into out (sorted by j), with the row and failure counts. A
 * trial fails the failure{} rule when any of its query points does, so the Clopper–Pearson
 * interval counts independent trials. */
static size_t group_rows(const kvb_experiment *e, const unit_result *res, size_t p, size_t si,
                         size_t mi, const row **out, group_stats *g) {
  int fc = e->fail_col[0] ? kvb_run_column_find(e->fail_col) : -1;
  size_t n = 0;
  for (size_t t = 0; t < e->trials; t++) {
    const unit_result *r = &res[p * e->trials + t];
    int tvalid = 0, tfail = 0;
    for (size_t i = 0; i < r->nrows; i++) {
      const row *w = &r->rows[i];
      if (w->stream != si || w->method != mi) continue;
      g->rows++;
      if (w->status) {
        g->errs++;
        continue;
      }
      out[n++] = w;
      if (fc >= 0 && !isnan(w->v[fc])) {
        tvalid = 1;
        tfail |= w->v[fc] > e->fail_above;
      }
    }
    g->fvalid += (unsigned)tvalid;
    g->fails += (unsigned)tfail;
  }
  qsort(out, n, sizeof *out, cmp_row_j);
  return n;
}

static void quantiles_line(const kvb_experiment *e, FILE *fq, size_t p, size_t si, size_t mi,
                           size_t j, size_t c, const kvb_quantiles *q) {
  fprintf(fq, "%zu", p);
  for (size_t s = 0; s < e->nsweeps; s++) {
    fputc(',', fq);
    fmt_num(fq, kvb_experiment_sweep_value(e, s, p));
  }
  fprintf(fq, ",%s,%s,", e->streams[si].label, e->methods[mi].label);
  if (j) fprintf(fq, "%zu", j);
  else fputs("all", fq);
  fprintf(fq, ",%s,%zu", col_names[c], q->n);
  const double v[7] = {q->q10, q->q25, q->median, q->q75, q->q90, q->q99, q->max};
  for (int l = 0; l < 7; l++) {
    fputc(',', fq);
    fmt_num(fq, v[l]);
  }
  fputc('\n', fq);
}

/* The quantiles of group (p, si, mi): pooled (j = "all", kept in g for the summary) and per
 * query point, every measured column, into quantiles.csv. buf: scratch of n doubles. */
static void group_quantiles(const kvb_experiment *e, FILE *fq, size_t p, size_t si, size_t mi,
                            const row **rows, size_t n, double *buf, group_stats *g) {
  for (size_t c = 0; c < KVB_RUN_NCOLS; c++) {
    g->q[c] = (kvb_quantiles){0, NAN, NAN, NAN, NAN, NAN, NAN, NAN};
    if (!column_applies(e, mi, (int)c)) continue;
    for (size_t i = 0; i < n; i++) buf[i] = rows[i]->v[c];
    kvb_quantiles_of(buf, n, &g->q[c]);
    if (g->q[c].n) quantiles_line(e, fq, p, si, mi, 0, c, &g->q[c]);
    for (size_t a = 0, b; a < n; a = b) { /* the rows of one query point j */
      for (b = a; b < n && rows[b]->j == rows[a]->j; b++) buf[b - a] = rows[b]->v[c];
      kvb_quantiles q;
      kvb_quantiles_of(buf, b - a, &q);
      if (q.n) quantiles_line(e, fq, p, si, mi, rows[a]->j, c, &q);
    }
  }
}

static void summary_header(const kvb_experiment *e, FILE *ft, FILE *fm) {
  int fc = e->fail_col[0] ? kvb_run_column_find(e->fail_col) : -1;
  int bound = (e->measures & KVB_MEASURE_BOUND) != 0, mem = (e->measures & KVB_MEASURE_MEMORY) != 0;
  char hdr[1024];
  size_t o = 0;
  for (size_t s = 0; s < e->nsweeps; s++) app(hdr, sizeof hdr, &o, "%10s ", e->sweeps[s].param);
  app(hdr, sizeof hdr, &o, "%-14s %-16s %-10s %6s %5s %10s %10s %10s %10s", "stream", "method",
      "measure", "rows", "errs", "q10", "median", "q90", "max");
  if (bound) app(hdr, sizeof hdr, &o, " %10s %10s %10s", "rop_med", "rop_q99", "rf_med");
  if (mem) app(hdr, sizeof hdr, &o, " %10s", "mem_med");
  if (fc >= 0)
    app(hdr, sizeof hdr, &o, "  failed trials(%s>%g) [95%% CP]", e->fail_col, e->fail_above);
  fprintf(ft, "%s\n", hdr);
  printf("%s\n", hdr);
  fprintf(fm, "|");
  for (size_t s = 0; s < e->nsweeps; s++) fprintf(fm, " %s |", e->sweeps[s].param);
  fprintf(fm, " stream | method | measure | rows | errors | q10 | median | q90 | max |");
  if (bound) fprintf(fm, " ratio_op median | ratio_op q99 | ratio_f median |");
  if (mem) fprintf(fm, " memory bytes (median) |");
  if (fc >= 0)
    fprintf(fm, " failed trials (%s > %g at any query point) | 95%% Clopper–Pearson |", e->fail_col,
            e->fail_above);
  fprintf(fm, "\n|");
  size_t ncols = e->nsweeps + 9 + (bound ? 3 : 0) + (mem ? 1 : 0) + (fc >= 0 ? 2 : 0);
  for (size_t c = 0; c < ncols; c++) fprintf(fm, "---|");
  fprintf(fm, "\n");
}

/* One summary line (summary.txt, summary.md, stdout) from the group's quantiles. */
static void summary_line(const kvb_experiment *e, FILE *ft, FILE *fm, size_t p, size_t si,
                         size_t mi, const group_stats *g) {
  int fc = e->fail_col[0] ? kvb_run_column_find(e->fail_col) : -1;
  int bound = (e->measures & KVB_MEASURE_BOUND) != 0, mem = (e->measures & KVB_MEASURE_MEMORY) != 0;
  size_t pc = headline_column(e, mi), o = 0;
  const kvb_quantiles *h = &g->q[pc];
  char line[1024];
  fprintf(fm, "|");
  for (size_t s = 0; s < e->nsweeps; s++) {
    double v = kvb_experiment_sweep_value(e, s, p);
    app(line, sizeof line, &o, "%10g ", v);
    fprintf(fm, " %g |", v);
  }
  app(line, sizeof line, &o, "%-14s %-16s %-10s %6zu %5zu %10.3g %10.3g %10.3g %10.3g",
      e->streams[si].label, e->methods[mi].label, col_names[pc], g->rows, g->errs, h->q10,
      h->median, h->q90, h->max);
  fprintf(fm, " %s | %s | %s | %zu | %zu | %.3g | %.3g | %.3g | %.3g |", e->streams[si].label,
          e->methods[mi].label, col_names[pc], g->rows, g->errs, h->q10, h->median, h->q90, h->max);
  if (bound) {
    double a = g->q[C_ROP].median, b = g->q[C_ROP].q99, c = g->q[C_RF].median;
    app(line, sizeof line, &o, " %10.3g %10.3g %10.3g", a, b, c);
    fprintf(fm, " %.3g | %.3g | %.3g |", a, b, c);
  }
  if (mem) {
    app(line, sizeof line, &o, " %10.4g", g->q[C_MB].median);
    fprintf(fm, " %.4g |", g->q[C_MB].median);
  }
  if (fc >= 0 && g->fvalid) {
    double lo = NAN, hi = NAN;
    kvb_clopper_pearson(g->fails, g->fvalid, 0.95, &lo, &hi);
    app(line, sizeof line, &o, "  %u/%u [%.3g, %.3g]", g->fails, g->fvalid, lo, hi);
    fprintf(fm, " %u/%u | [%.3g, %.3g] |", g->fails, g->fvalid, lo, hi);
  } else if (fc >= 0) { /* the column is NaN on every row of this item (e.g. random signs) */
    app(line, sizeof line, &o, "  n/a");
    fprintf(fm, " n/a | n/a |");
  }
  fprintf(ft, "%s\n", line);
  fprintf(fm, "\n");
  printf("%s\n", line);
}

/* Summary: one line per (sweep point, stream, method), headed by the item's headline column;
 * quantiles pool trials and query points. quantiles.csv gets the same quantiles, pooled and per
 * query point, for every measured column: the plots read them from there. */
static int write_summary(const kvb_experiment *e, FILE *ft, FILE *fm, FILE *fq,
                         const unit_result *res, size_t units) {
  fprintf(fq, "point");
  for (size_t s = 0; s < e->nsweeps; s++) fprintf(fq, ",%s", e->sweeps[s].param);
  fprintf(fq, ",stream,method,j,column,n,q10,q25,median,q75,q90,q99,max\n");
  summary_header(e, ft, fm);
  size_t points = kvb_experiment_points(e), cap = 0;
  for (size_t u = 0; u < units; u++) cap = res[u].nrows > cap ? res[u].nrows : cap;
  cap = (cap ? cap : 1) * e->trials;
  const row **rows = malloc(cap * sizeof *rows);
  double *buf = malloc(cap * sizeof *buf);
  group_stats *g = malloc(sizeof *g);
  int st = rows && buf && g ? KVB_OK : KVB_ERROR(KVB_ENOMEM, "summary: out of memory");
  for (size_t p = 0; p < points && !st; p++)
    for (size_t si = 0; si < e->nstreams; si++)
      for (size_t mi = 0; mi < e->nmethods; mi++) {
        memset(g, 0, sizeof *g);
        size_t n = group_rows(e, res, p, si, mi, rows, g);
        group_quantiles(e, fq, p, si, mi, rows, n, buf, g);
        summary_line(e, ft, fm, p, si, mi, g);
      }
  free(rows);
  free(buf);
  free(g);
  return st;
}

/* Failed rows: their number and the first few distinct messages, after the table (summary
 * files and stdout), so a NaN row never goes unexplained. Returns the number of failed rows. */
static size_t write_failures(FILE *ft, FILE *fm, const unit_result *res, size_t units,
                             size_t rows) {
  enum { SHOWN = 3 };
  const char *first[SHOWN];
  size_t nfirst = 0, failed = 0;
  for (size_t u = 0; u < units; u++)
    for (size_t i = 0; i < res[u].nrows; i++) {
      const row *w = &res[u].rows[i];
      if (!w->status) continue;
      failed++;
      const char *m = w->msg ? w->msg : kvb_status_name(w->status);
      int seen = 0;
      for (size_t k = 0; k < nfirst; k++) seen |= strcmp(first[k], m) == 0;
      if (!seen && nfirst < SHOWN) first[nfirst++] = m;
    }
  if (!failed) return 0;
  FILE *outs[2] = {ft, stdout};
  for (int o = 0; o < 2; o++) {
    fprintf(outs[o], "\n%zu of %zu rows failed (status != 0; their measures are NaN; the error "
            "column of results.csv says why). First distinct messages:\n", failed, rows);
    for (size_t k = 0; k < nfirst; k++) fprintf(outs[o], "  %s\n", first[k]);
  }
  fprintf(fm, "\n**%zu of %zu rows failed** (status ≠ 0; their measures are NaN; the `error` "
          "column of results.csv says why). First distinct messages:\n\n", failed, rows);
  for (size_t k = 0; k < nfirst; k++) {
    fputs("- `", fm);
    for (const char *c = first[k]; *c; c++) fputc(*c == '`' ? '\'' : *c, fm);
    fputs("`\n", fm);
  }
  return failed;
}

static void tsv_field(FILE *f, const char *s, int last) {
  fputs(s[0] ? s : "-", f);
  fputc(last ? '\n' : '\t', f);
}

static int write_plots(const kvb_experiment *e, FILE *f) {
  fprintf(f, "# name\tx\ty\tlogx\tlogy\tbands\tbound\tbound_title\ttitle\txlabel\tylabel\t"
             "bound2\tbound2_title\tin_step\n");
  for (size_t i = 0; i < e->nplots; i++) {
    const kvb_run_plot *p = &e->plots[i];
    fprintf(f, "%s\t%s\t%s\t%d\t%d\t%d\t", p->name, p->x, p->y, p->logx, p->logy, p->bands);
    tsv_field(f, p->bound, 0);
    tsv_field(f, p->bound_title, 0);
    tsv_field(f, p->title, 0);
    tsv_field(f, p->xlabel, 0);
    tsv_field(f, p->ylabel, 0);
    tsv_field(f, p->bound2, 0);
    tsv_field(f, p->bound2_title, 0);
    /* sweeps moving in step with x: they do not split the series */
    char in_step[256] = "";
    int xs = -1;
    for (size_t k = 0; k < e->nsweeps; k++)
      if (strcmp(e->sweeps[k].param, p->x) == 0) xs = e->sweeps[k].zip_with >= 0 ? e->sweeps[k].zip_with : (int)k;
    for (size_t k = 0, o = 0; xs >= 0 && k < e->nsweeps; k++) {
      int lead = e->sweeps[k].zip_with >= 0 ? e->sweeps[k].zip_with : (int)k;
      if (lead == xs && strcmp(e->sweeps[k].param, p->x) != 0 && o < sizeof in_step)
        o += (size_t)snprintf(in_step + o, sizeof in_step - o, "%s%s", o ? "," : "", e->sweeps[k].param);
    }
    tsv_field(f, in_step, 1);
  }
  return stage_close(f, "plots.tsv");
}

static int mkdir_p(const char *dir) {
  char buf[1024];
  if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
    return KVB_ERROR(KVB_EINVAL, "output directory name too long");
  for (char *c = buf + 1; *c; c++) {
    if (*c != '/') continue;
    *c = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return KVB_ERROR(KVB_EIO, "%s: cannot create directory (%s)", buf, strerror(errno));
    *c = '/';
  }
  if (mkdir(buf, 0777) != 0 && errno != EEXIST)
    return KVB_ERROR(KVB_EIO, "%s: cannot create directory (%s)", buf, strerror(errno));
  return KVB_OK;
}

/* Reads string field `key` of a meta.json written by write_meta (json_str escapes) into buf. */
static int meta_field(const char *json, const char *key, char *buf, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\": \"", key);
  const char *p = strstr(json, pat);
  if (!p || cap == 0) return -1;
  p += strlen(pat);
  size_t n = 0;
  for (; *p && *p != '"' && n + 1 < cap; p++) {
    if (*p == '\\' && p[1]) p++;
    buf[n++] = *p;
  }
  buf[n] = '\0';
  return 0;
}

/* A small metadata file (meta.json, shard.json, FAILED) whole, or NULL when it is absent, not
 * a regular file or larger than max (read_file.h). */
static char *slurp_small(const char *path, size_t max) {
  char *b = NULL;
  return kvb_read_file(path, max, "metadata", &b, NULL) ? NULL : b;
}

/* A directory path every buffer of the runner holds with its file names. */
static int dir_fits(const char *what, const char *dir) {
  size_t n = strlen(dir);
  return n > KVB_RUN_DIR_MAX ? KVB_ERROR(KVB_EINVAL, "%s: the path is %zu bytes long; the limit is "
                                         "%d", what, n, KVB_RUN_DIR_MAX)
                             : KVB_OK;
}

/* One writer per output directory: an advisory lock (flock) on the directory itself, taken
 * when the directory is prepared and held until the process ends or prepares another, so a
 * second run, shard or merge into the same directory stops with a clear error before any
 * trial instead of replacing the first one's results or plots as both finish. */
static int out_lock_fd = -1;

static int lock_out_dir(const char *dir) {
  if (out_lock_fd >= 0) close(out_lock_fd), out_lock_fd = -1;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return KVB_ERROR(KVB_EIO, "--out %s: cannot open (%s)", dir, strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    return err == EWOULDBLOCK
               ? KVB_ERROR(KVB_ESTATE, "--out %s is being written by another kvbound run, shard "
                           "or merge; wait for it to end or choose another --out", dir)
               : KVB_ERROR(KVB_EIO, "--out %s: cannot lock (%s)", dir, strerror(err));
  }
  out_lock_fd = fd;
  return KVB_OK;
}

int kvb_experiment_prepare_out(const kvb_experiment *e, const char *dir, int force) {
  if (!e || !dir) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  if (dir_fits("--out", dir)) return KVB_EINVAL;
  struct stat sb;
  if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
    return KVB_ERROR(KVB_EINVAL, "--out %s is a file, not a directory", dir);
  int st = mkdir_p(dir);
  if (st) return st;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return KVB_ERROR(KVB_EINVAL, "--out %s is not a directory", dir);
  if (access(dir, W_OK | X_OK) != 0)
    return KVB_ERROR(KVB_EIO, "--out %s is not writable (%s)", dir, strerror(errno));
  if ((st = lock_out_dir(dir)) != KVB_OK) return st;
  char path[1200];
  snprintf(path, sizeof path, "%s/meta.json", dir);
  char *meta = slurp_small(path, 1 << 20);
  if (!meta) return KVB_OK; /* empty, new, or holding no complete run */
  /* The same spec = the same name and the same spec file; its new results replace the old. */
  char name[KVB_LABEL_MAX + 16] = "", old_real[4096] = "", real[4096];
  meta_field(meta, "name", name, sizeof name);
  if (meta_field(meta, "spec_realpath", old_real, sizeof old_real) != 0)
    meta_field(meta, "spec_path", old_real, sizeof old_real);
  free(meta);
  const char *cur = realpath(e->spec_path, real) ? real : e->spec_path;
  int same = strcmp(name, e->name) == 0 && (!old_real[0] || strcmp(old_real, cur) == 0);
  if (!same && !force)
    return KVB_ERROR(KVB_EINVAL, "--out %s holds the results of another spec ('%s', %s); choose "
                     "another --out, or add --force to replace them (their plots are removed)",
                     dir, name, old_real[0] ? old_real : "unknown file");
  return KVB_OK;
}

int kvb_experiment_units(const kvb_experiment *e, size_t *points, size_t *units) {
  size_t p = 1;
  for (size_t i = 0; i < e->nsweeps; i++)
    if (e->sweeps[i].zip_with < 0) {
      if (e->sweeps[i].nvals && p > SIZE_MAX / e->sweeps[i].nvals) return -1;
      p *= e->sweeps[i].nvals;
    }
  if (points) *points = p;
  if (e->trials && p > SIZE_MAX / e->trials) return -1;
  if (units) *units = p * e->trials;
  return 0;
}

/* Runs the units on min(jobs, units, 256) threads (inline when none can start), drawing the
 * progress bar on stderr when asked. Returns the wall-clock seconds. */
static double run_pool(const kvb_experiment *e, unit_result *res, size_t first, size_t stride,
                       size_t units, int jobs, int progress) {
  pool P = {e, res, units, 0, 0, first, stride, PTHREAD_MUTEX_INITIALIZER};
  size_t nth = (size_t)jobs < units ? (size_t)jobs : units;
  pthread_t th[256];
  if (nth > 256) nth = 256;
  double t0 = now_s();
  size_t started = 0;
  for (size_t i = 0; i < nth; i++)
    if (pthread_create(&th[i], NULL, worker, &P) == 0) started++;
  if (started == 0) worker(&P); /* no threads available: run inline */
  if (progress) {
    for (;;) {
      pthread_mutex_lock(&P.mu);
      size_t done = P.done;
      pthread_mutex_unlock(&P.mu);
      draw_progress(done, units, now_s() - t0);
      if (done >= units) break;
      struct timespec ts = {0, 200000000L};
      nanosleep(&ts, NULL);
    }
    fputc('\n', stderr);
  }
  for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
  return now_s() - t0;
}

/* Every output, staged (temporary files) and renamed into place together, meta.json last; on
 * any error nothing is renamed and the temporary files are removed. */
static int write_outputs(const kvb_experiment *e, const char *dir, const unit_result *res,
                         size_t units, int jobs, size_t rows, size_t failed, double wall,
                         const char *real) {
  staged sg = {.n = 0};
  FILE *f;
  int st = (f = stage_open(&sg, dir, "results.csv")) ? write_csv(e, f, res, units) : KVB_EIO;
  if (!st) {
    FILE *ft = stage_open(&sg, dir, "summary.txt"), *fm = ft ? stage_open(&sg, dir, "summary.md") : NULL;
    FILE *fq = fm ? stage_open(&sg, dir, "quantiles.csv") : NULL;
    st = ft && fm && fq ? write_summary(e, ft, fm, fq, res, units) : KVB_EIO;
    if (!st) write_failures(ft, fm, res, units, rows);
    if (ft) st = stage_close(ft, "summary.txt") ? KVB_EIO : st;
    if (fm) st = stage_close(fm, "summary.md") ? KVB_EIO : st;
    if (fq) st = stage_close(fq, "quantiles.csv") ? KVB_EIO : st;
  }
  if (!st) st = (f = stage_open(&sg, dir, "plots.tsv")) ? write_plots(e, f) : KVB_EIO;
  if (!st) /* last: its presence marks a complete run */
    st = (f = stage_open(&sg, dir, "meta.json")) ? write_meta(e, f, jobs, units, rows, failed, wall, real)
                                                 : KVB_EIO;
  if (!st) st = stage_commit(&sg, dir);
  else stage_discard(&sg);
  return st;
}

/* What a run and a shard check before any trial: the spec has a stream and a method, its trials
 * are countable, and the output directory exists (created). */
static int run_prepare(const kvb_experiment *e, const char *dir, size_t *units) {
  if (e->nstreams == 0) return KVB_ERROR(KVB_EINVAL, "the spec declares no stream");
  if (e->nmethods == 0) return KVB_ERROR(KVB_EINVAL, "the spec declares no method or probe");
  if (kvb_experiment_units(e, NULL, units) != 0 || *units > KVB_RUN_MAX_UNITS)
    return KVB_ERROR(KVB_EINVAL, "the sweep points x trials exceed %.0e trials", (double)KVB_RUN_MAX_UNITS);
  return mkdir_p(dir);
}

int kvb_experiment_run(const kvb_experiment *e, const char *dir, int jobs, int progress,
                       kvb_run_report *rep) {
  if (!e || !dir || !rep) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  memset(rep, 0, sizeof *rep);
  size_t units = 0;
  int st = run_prepare(e, dir, &units);
  if (st) return st;
  if (jobs < 1) jobs = 1;
  struct stat sb;
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return KVB_ERROR(KVB_EINVAL, "%s is not a directory", dir);
  unit_result *res = calloc(units ? units : 1, sizeof *res);
  if (!res) return KVB_ERROR(KVB_ENOMEM, "run: out of memory for %zu trials", units);
  double wall = run_pool(e, res, 0, 1, units, jobs, progress);
  size_t rows = 0, failed = 0;
  for (size_t u = 0; u < units; u++) {
    rows += res[u].nrows;
    for (size_t i = 0; i < res[u].nrows; i++) failed += res[u].rows[i].status != 0;
    if (res[u].status && !st) /* a whole trial failed (stream, probe, memory): nothing is written */
      st = KVB_ERROR(res[u].status, "trial %zu (sweep point %zu, trial %zu): %s", u,
                     u / e->trials, u % e->trials, res[u].msg);
  }
  if (!st) st = write_outputs(e, dir, res, units, jobs, rows, failed, wall, NULL);
  if (!st) fill_report(rep, res, 0, 1, units, rows, failed);
  free_results(res, units);
  return st;
}

/* ---- shards and their merge (runner.h) ---- */

size_t kvb_shard_units(size_t units, size_t shard, size_t nshards) {
  return nshards == 0 || shard >= units ? 0 : (units - 1 - shard) / nshards + 1;
}

/* A row's message in rows.tsv: "-" for none, else "=" and the text with \ tab and line breaks
 * escaped, so that the merge restores it byte for byte. */
static void tsv_msg(FILE *f, const char *m) {
  if (!m) {
    fputc('-', f);
    return;
  }
  fputc('=', f);
  for (; *m; m++) {
    if (*m == '\\') fputs("\\\\", f);
    else if (*m == '\t') fputs("\\t", f);
    else if (*m == '\n') fputs("\\n", f);
    else if (*m == '\r') fputs("\\r", f);
    else fputc(*m, f);
  }
}

/* rows.tsv: every row of the shard's units, exactly: the measures as C99 hexadecimal floats
 * (%a), which strtod reads back to the same double. */
#define KVB_SHARD_ROWS_HEADER "# kvbound shard rows 1: unit stream method j status 25 x %a msg"
/* The digest a shard's shard.json commits to: FNV-1a 64 over the run's identity (spec hash,
 * seed, shard, shard count, units) and then every byte of rows.tsv. The merge recomputes it,
 * so edited, truncated, duplicated or borrowed rows (another seed's, another spec's) and a
 * forged identity field are refused. It guards against corruption and mix-ups, not against
 * someone who rewrites rows and digest together (README, shards and merge). */
static uint64_t digest_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ULL;
  return h;
}

static uint64_t digest_init(const char *spec_hash, unsigned long long seed, unsigned long long shard,
                            unsigned long long nshards, unsigned long long units) {
  char id[256];
  int n = snprintf(id, sizeof id, "kvbound shard rows v1\n%s\n%llu\n%llu\n%llu\n%llu\n",
                   spec_hash, seed, shard, nshards, units);
  return digest_bytes(1469598103934665603ULL, id, (size_t)n);
}

/* The digest of the file at path after h (rows.tsv as staged). */
static int digest_file(const char *path, uint64_t *h) {
  FILE *f = fopen(path, "rb");
  if (!f) return KVB_ERROR(KVB_EIO, "%s: cannot read back (%s)", path, strerror(errno));
  unsigned char buf[1 << 16];
  size_t r;
  while ((r = fread(buf, 1, sizeof buf, f)) > 0) *h = digest_bytes(*h, buf, r);
  int bad = ferror(f);
  fclose(f);
  return bad ? KVB_ERROR(KVB_EIO, "%s: read error", path) : KVB_OK;
}

static int write_shard_rows(FILE *f, const unit_result *res, size_t units) {
  fprintf(f, "%s\n", KVB_SHARD_ROWS_HEADER);
  for (size_t u = 0; u < units; u++)
    for (size_t i = 0; i < res[u].nrows; i++) {
      const row *w = &res[u].rows[i];
      fprintf(f, "%zu\t%zu\t%zu\t%zu\t%d", u, w->stream, w->method, w->j, w->status);
      for (size_t c = 0; c < KVB_RUN_NCOLS; c++) {
        if (isnan(w->v[c])) fputs("\tnan", f);
        else fprintf(f, "\t%a", w->v[c]);
      }
      fputc('\t', f);
      tsv_msg(f, w->status ? w->msg : NULL);
      fputc('\n', f);
    }
  return stage_close(f, "rows.tsv");
}

static int write_shard_meta(const kvb_experiment *e, FILE *f, size_t shard, size_t nshards,
                            size_t units, size_t count, size_t rows, size_t failed, int jobs,
                            double wall, uint64_t digest) {
  char real[4096];
  fprintf(f, "{\n  \"kvbound_version\": \"%s\",\n  \"name\": ", KVBOUND_VERSION);
  json_str(f, e->name);
  fprintf(f, ",\n  \"spec_path\": ");
  json_str(f, e->spec_path);
  fprintf(f, ",\n  \"spec_realpath\": ");
  json_str(f, realpath(e->spec_path, real) ? real : e->spec_path);
  fprintf(f, ",\n  \"spec_hash\": \"%016llx\",\n  \"seed\": \"%llu\",\n  \"shard\": \"%zu\",\n"
             "  \"nshards\": \"%zu\",\n  \"assignment\": \"unit u = point*trials + trial runs in "
             "shard u mod nshards\",\n  \"units_total\": \"%zu\",\n  \"units\": \"%zu\",\n"
             "  \"rows\": \"%zu\",\n  \"failed_rows\": \"%zu\",\n  \"jobs\": \"%d\",\n"
             "  \"wall_seconds\": \"%.3f\",\n  \"rows_digest\": \"%016llx\"\n}\n",
          (unsigned long long)text_hash(e->spec_text), (unsigned long long)e->seed, shard,
          nshards, units, count, rows, failed, jobs, wall, (unsigned long long)digest);
  return stage_close(f, "shard.json");
}

/* The failure marker of a shard: DIR/FAILED says which shard and why; the merge reports it. */
static void shard_mark_failed(const char *dir, size_t shard, size_t nshards, const char *why) {
  char path[1200], tmp[1200];
  snprintf(path, sizeof path, "%s/FAILED", dir);
  FILE *f = kvb_out_create(tmp, sizeof tmp, dir, "FAILED");
  if (!f) return;
  fprintf(f, "shard %zu/%zu failed: %s\n", shard, nshards, why);
  if (fclose(f) != 0 || rename(tmp, path) != 0) unlink(tmp);
}

int kvb_experiment_prepare_shard_out(const kvb_experiment *e, const char *dir, size_t shard,
                                     size_t nshards, int force) {
  if (!e || !dir) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  int st = kvb_experiment_prepare_out(e, dir, force); /* the same checks; meta.json's spec */
  if (st) return st;
  char path[1200];
  snprintf(path, sizeof path, "%s/shard.json", dir);
  char *meta = slurp_small(path, 1 << 20);
  if (!meta) return KVB_OK;
  char name[KVB_LABEL_MAX + 16] = "", old_real[4096] = "", real[4096], sh[32] = "", nsh[32] = "";
  meta_field(meta, "name", name, sizeof name);
  meta_field(meta, "spec_realpath", old_real, sizeof old_real);
  meta_field(meta, "shard", sh, sizeof sh);
  meta_field(meta, "nshards", nsh, sizeof nsh);
  free(meta);
  const char *cur = realpath(e->spec_path, real) ? real : e->spec_path;
  char want[64];
  snprintf(want, sizeof want, "%zu/%zu", shard, nshards);
  char have[80];
  snprintf(have, sizeof have, "%s/%s", sh, nsh);
  if (!force && (strcmp(name, e->name) || strcmp(old_real, cur) || strcmp(have, want)))
    return KVB_ERROR(KVB_EINVAL, "--out %s holds shard %s of another run ('%s', %s), not shard "
                     "%s of this spec; choose another --out, or add --force to replace it",
                     dir, have, name, old_real, want);
  return KVB_OK;
}

int kvb_experiment_run_shard(const kvb_experiment *e, const char *dir, size_t shard,
                             size_t nshards, int jobs, int progress, kvb_run_report *rep) {
  if (!e || !dir || !rep) return KVB_ERROR(KVB_ENULL, "run: NULL argument");
  memset(rep, 0, sizeof *rep);
  if (nshards < 1 || shard >= nshards)
    return KVB_ERROR(KVB_EINVAL, "shard %zu/%zu: need 0 <= I < N", shard, nshards);
  size_t units = 0;
  int st = run_prepare(e, dir, &units);
  if (st) return st;
  if (jobs < 1) jobs = 1;
  /* the previous shard's completion mark and failure marker go first: while this runs, the
   * directory claims no complete shard */
  char path[1200];
  snprintf(path, sizeof path, "%s/shard.json", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/FAILED", dir);
  unlink(path);
  size_t count = kvb_shard_units(units, shard, nshards);
  unit_result *res = calloc(units ? units : 1, sizeof *res);
  if (!res) {
    st = KVB_ERROR(KVB_ENOMEM, "run: out of memory for %zu trials", units);
    shard_mark_failed(dir, shard, nshards, kvb_strerror_last());
    return st;
  }
  double wall = run_pool(e, res, shard, nshards, count, jobs, progress);
  size_t rows = 0, failed = 0;
  for (size_t u = shard; u < units; u += nshards) {
    rows += res[u].nrows;
    for (size_t i = 0; i < res[u].nrows; i++) failed += res[u].rows[i].status != 0;
    if (res[u].status && !st)
      st = KVB_ERROR(res[u].status, "trial %zu (sweep point %zu, trial %zu): %s", u,
                     u / e->trials, u % e->trials, res[u].msg);
  }
  if (!st) {
    staged sg = {.n = 0};
    FILE *f;
    st = (f = stage_open(&sg, dir, "results.csv")) ? write_csv(e, f, res, units) : KVB_EIO;
    if (!st) st = (f = stage_open(&sg, dir, "rows.tsv")) ? write_shard_rows(f, res, units) : KVB_EIO;
    char hash[32];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)text_hash(e->spec_text));
    uint64_t digest = digest_init(hash, (unsigned long long)e->seed, shard, nshards, units);
    if (!st) st = digest_file(sg.tmp[sg.n - 1], &digest); /* rows.tsv as it was written */
    if (!st) /* last: its presence marks a complete shard */
      st = (f = stage_open(&sg, dir, "shard.json"))
               ? write_shard_meta(e, f, shard, nshards, units, count, rows, failed, jobs, wall,
                                  digest)
               : KVB_EIO;
    if (!st) st = stage_commit(&sg, dir);
    else stage_discard(&sg);
  }
  if (st) {
    shard_mark_failed(dir, shard, nshards, kvb_strerror_last());
  } else {
    fill_report(rep, res, shard, nshards, units, rows, failed);
  }
  free_results(res, units);
  return st;
}

/* One shard directory as the merge reads it. */
typedef struct {
  const char *dir;
  char version[32], name[KVB_LABEL_MAX + 16], spec_path[512], spec_real[4096], hash[32];
  char digest[32];
  unsigned long long seed, shard, nshards, units_total, units, rows, failed, jobs;
  double wall;
} shard_info;

static int meta_ull(const char *json, const char *key, unsigned long long *v) {
  char buf[64], *end;
  if (meta_field(json, key, buf, sizeof buf) || !buf[0]) return -1;
  *v = strtoull(buf, &end, 10);
  return *end ? -1 : 0;
}

/* Reads DIR/shard.json; a directory without it is a failed (DIR/FAILED) or unfinished shard. */
static int read_shard_info(const char *dir, shard_info *si) {
  char path[1200];
  memset(si, 0, sizeof *si);
  si->dir = dir;
  snprintf(path, sizeof path, "%s/shard.json", dir);
  char *m = slurp_small(path, 1 << 20);
  if (!m) {
    snprintf(path, sizeof path, "%s/FAILED", dir);
    char *why = slurp_small(path, 4096);
    if (why) {
      size_t n = strlen(why);
      while (n && (why[n - 1] == '\n' || why[n - 1] == '\r')) why[--n] = '\0';
      int st = KVB_ERROR(KVB_EINVAL, "%s: %s (re-run only this shard, with the same --shard and "
                         "--out, then merge again)", dir, why);
      free(why);
      return st;
    }
    return KVB_ERROR(KVB_EINVAL, "%s holds no complete shard (no shard.json: not a shard "
                     "directory, or its `kvbound run --shard` was interrupted or is still "
                     "running)", dir);
  }
  char buf[64];
  int bad = meta_field(m, "kvbound_version", si->version, sizeof si->version) |
            meta_field(m, "name", si->name, sizeof si->name) |
            meta_field(m, "spec_path", si->spec_path, sizeof si->spec_path) |
            meta_field(m, "spec_realpath", si->spec_real, sizeof si->spec_real) |
            meta_field(m, "spec_hash", si->hash, sizeof si->hash) |
            meta_ull(m, "seed", &si->seed) | meta_ull(m, "shard", &si->shard) |
            meta_ull(m, "nshards", &si->nshards) | meta_ull(m, "units_total", &si->units_total) |
            meta_ull(m, "units", &si->units) | meta_ull(m, "rows", &si->rows) |
            meta_ull(m, "failed_rows", &si->failed) | meta_ull(m, "jobs", &si->jobs) |
            meta_field(m, "wall_seconds", buf, sizeof buf) |
            meta_field(m, "rows_digest", si->digest, sizeof si->digest);
  free(m);
  if (bad || si->nshards == 0 || si->shard >= si->nshards)
    return KVB_ERROR(KVB_EFORMAT, "%s/shard.json: not a kvbound shard description", dir);
  si->wall = strtod(buf, NULL);
  return KVB_OK;
}

/* Reads DIR/rows.tsv of shard si into res (indexed by unit). */
static int read_shard_rows(const shard_info *si, const kvb_experiment *e, unit_result *res,
                           size_t units) {
  char path[1200];
  snprintf(path, sizeof path, "%s/rows.tsv", si->dir);
  FILE *f;
  int ost = kvb_open_regular(path, KVB_ROWS_FILE_MAX, "shard rows", &f);
  if (ost) return ost;
  /* a row is a few hundred bytes (its message is at most a few KiB): a longer line is refused
   * before it is held in memory */
  enum { ROW_LINE_MAX = 1 << 16 };
  size_t cap = ROW_LINE_MAX + 2, lineno = 0, nrows = 0;
  char *line = malloc(cap);
  size_t *rcap = NULL; /* allocated rows per unit of this shard, by k = (u - shard) / nshards */
  ssize_t len;
  int st = KVB_OK;
  size_t count = kvb_shard_units(units, (size_t)si->shard, (size_t)si->nshards);
  rcap = calloc(count ? count : 1, sizeof *rcap);
  if (!rcap || !line) st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
  uint64_t digest = digest_init(si->hash, si->seed, si->shard, si->nshards, si->units_total);
  while (!st && fgets(line, (int)cap, f) && (len = (ssize_t)strlen(line)) > 0) {
    lineno++;
    digest = digest_bytes(digest, line, (size_t)len);
    if (line[len - 1] == '\n') line[--len] = '\0';
    else if (!feof(f)) {
      st = KVB_ERROR(KVB_EFORMAT, "%s:%zu: a line longer than %d bytes (not a row)", path, lineno,
                     ROW_LINE_MAX);
      break;
    }
    if (lineno == 1) {
      if (strcmp(line, KVB_SHARD_ROWS_HEADER))
        st = KVB_ERROR(KVB_EFORMAT, "%s: not a kvbound shard rows file", path);
      continue;
    }
    char *p = line, *end;
    unsigned long long f5[5];
    for (int i = 0; i < 5 && !st; i++) {
      f5[i] = strtoull(p, &end, 10);
      if (end == p || *end != '\t') st = KVB_EFORMAT;
      p = end + 1;
    }
    double v[KVB_RUN_NCOLS];
    for (size_t c = 0; c < KVB_RUN_NCOLS && !st; c++) {
      v[c] = strtod(p, &end);
      if (end == p || *end != '\t') st = KVB_EFORMAT;
      p = end + 1;
    }
    size_t u = (size_t)f5[0];
    if (!st && (u >= units || u % si->nshards != si->shard || f5[1] >= e->nstreams ||
                f5[2] >= e->nmethods || (*p != '-' && *p != '=')))
      st = KVB_EFORMAT;
    if (st) {
      st = KVB_ERROR(KVB_EFORMAT, "%s:%zu: malformed row (or a unit outside shard %llu/%llu)",
                     path, lineno, si->shard, si->nshards);
      break;
    }
    size_t k = (u - (size_t)si->shard) / (size_t)si->nshards;
    unit_result *r = &res[u];
    if (r->nrows == rcap[k]) {
      size_t nc = rcap[k] ? 2 * rcap[k] : 8;
      row *nr = realloc(r->rows, nc * sizeof *nr);
      if (!nr) {
        st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
        break;
      }
      r->rows = nr;
      rcap[k] = nc;
    }
    row *w = &r->rows[r->nrows++];
    w->stream = (size_t)f5[1];
    w->method = (size_t)f5[2];
    w->j = (size_t)f5[3];
    w->status = (int)f5[4];
    memcpy(w->v, v, sizeof v);
    w->msg = NULL;
    if (*p == '=') {
      char *m = malloc(strlen(p));
      if (!m) {
        st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
        break;
      }
      size_t o = 0;
      for (const char *c = p + 1; *c; c++) {
        if (*c == '\\' && c[1]) {
          c++;
          m[o++] = *c == 't' ? '\t' : *c == 'n' ? '\n' : *c == 'r' ? '\r' : *c;
        } else {
          m[o++] = *c;
        }
      }
      m[o] = '\0';
      w->msg = m;
    }
    nrows++;
  }
  free(line);
  free(rcap);
  if (!st && ferror(f)) st = KVB_ERROR(KVB_EIO, "%s: read error", path);
  fclose(f);
  if (!st && nrows != si->rows)
    st = KVB_ERROR(KVB_EFORMAT, "%s: %zu rows, but shard.json says %llu (a truncated or "
                   "replaced file)", path, nrows, si->rows);
  char got[32];
  snprintf(got, sizeof got, "%016llx", (unsigned long long)digest);
  if (!st && strcmp(got, si->digest) != 0)
    st = KVB_ERROR(KVB_EFORMAT, "%s does not match the digest its shard.json commits to (%s, "
                   "recomputed %s): edited, duplicated or borrowed rows, or a changed seed, spec "
                   "or shard field; re-run this shard", path, si->digest, got);
  for (size_t u = (size_t)si->shard; !st && u < units; u += (size_t)si->nshards)
    if (res[u].nrows == 0)
      st = KVB_ERROR(KVB_EFORMAT, "%s: no row of unit %zu, which shard %llu/%llu runs", path, u,
                     si->shard, si->nshards);
  return st;
}

int kvb_experiment_merge(const char *const *dirs, size_t ndirs, const char *out, int force,
                         int allow_time, kvb_run_report *rep) {
  if (!dirs || !out || !rep) return KVB_ERROR(KVB_ENULL, "merge: NULL argument");
  memset(rep, 0, sizeof *rep);
  if (ndirs == 0) return KVB_ERROR(KVB_EINVAL, "merge: no shard directory given");
  if (dir_fits("merge --out", out)) return KVB_EINVAL;
  for (size_t i = 0; i < ndirs; i++)
    if (dir_fits("merge: shard directory", dirs[i])) return KVB_EINVAL;
  shard_info *si = calloc(ndirs, sizeof *si);
  if (!si) return KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
  int st = KVB_OK;
  for (size_t i = 0; i < ndirs && !st; i++) st = read_shard_info(dirs[i], &si[i]);
  /* one run: the same version, spec (name, file, text) and seed, split the same way */
  for (size_t i = 1; i < ndirs && !st; i++) {
    const shard_info *a = &si[0], *b = &si[i];
    const char *what = strcmp(a->version, b->version) ? "kvbound version"
                       : strcmp(a->hash, b->hash) || strcmp(a->name, b->name) ||
                               strcmp(a->spec_path, b->spec_path) ? "spec"
                       : a->seed != b->seed ? "seed"
                       : a->nshards != b->nshards ? "number of shards" : NULL;
    if (what)
      st = KVB_ERROR(KVB_EINVAL, "%s and %s are shards of different runs (another %s: "
                     "version %s/%s, spec '%s' %s hash %s / '%s' %s hash %s, seed %llu/%llu, "
                     "shard %llu/%llu vs %llu/%llu)", a->dir, b->dir, what, a->version, b->version,
                     a->name, a->spec_path, a->hash, b->name, b->spec_path, b->hash, a->seed,
                     b->seed, a->shard, a->nshards, b->shard, b->nshards);
  }
  size_t n = st ? 0 : (size_t)si[0].nshards;
  const shard_info **by = st ? NULL : calloc(n, sizeof *by);
  if (!st && !by) st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory");
  for (size_t i = 0; i < ndirs && !st; i++) {
    size_t k = (size_t)si[i].shard;
    if (by[k])
      st = KVB_ERROR(KVB_EINVAL, "shard %zu/%zu given twice: %s and %s", k, n, by[k]->dir,
                     si[i].dir);
    by[k] = &si[i];
  }
  if (!st) { /* name every missing shard */
    char miss[1024] = "";
    size_t o = 0, nmiss = 0;
    for (size_t k = 0; k < n; k++)
      if (!by[k]) {
        nmiss++;
        app(miss, sizeof miss, &o, "%s%zu/%zu", nmiss > 1 ? ", " : "", k, n);
      }
    if (nmiss)
      st = KVB_ERROR(KVB_EINVAL, "missing shard%s %s: no directory given holds %s (run `kvbound "
                     "run SPEC --shard I/N` for each, or pass its directory)", nmiss > 1 ? "s" : "",
                     miss, nmiss > 1 ? "them" : "it");
  }
  kvb_experiment e;
  kvb_experiment_init(&e);
  int have_e = 0;
  if (!st) { /* the experiment, from the spec file the shards ran, unchanged since */
    static char err[8192];
    const shard_info *a = &si[0];
    int lst = kvb_spec_load(a->spec_real[0] ? a->spec_real : a->spec_path, &e, err, sizeof err);
    if (lst && a->spec_real[0]) lst = kvb_spec_load(a->spec_path, &e, err, sizeof err);
    if (lst) {
      st = KVB_ERROR(KVB_EINVAL, "the shards' spec %s cannot be loaded here: %s", a->spec_path, err);
    } else {
      have_e = 1;
      char h[32];
      snprintf(h, sizeof h, "%016llx", (unsigned long long)text_hash(e.spec_text));
      snprintf(e.spec_path, sizeof e.spec_path, "%s", a->spec_path); /* as the shards ran it */
      e.seed = a->seed;
      size_t units = 0;
      if (strcmp(h, a->hash))
        st = KVB_ERROR(KVB_EINVAL, "the spec %s changed since the shards ran (hash %s, the "
                       "shards' %s): merge with the spec they ran, or run them again", a->spec_path,
                       h, a->hash);
      else if (strcmp(a->version, KVBOUND_VERSION))
        st = KVB_ERROR(KVB_EINVAL, "the shards were run by kvbound %s, this is %s", a->version,
                       KVBOUND_VERSION);
      else if (kvb_experiment_units(&e, NULL, &units) || units != a->units_total)
        st = KVB_ERROR(KVB_EFORMAT, "the spec has %zu trials, the shards %llu", units,
                       a->units_total);
      else if ((e.measures & KVB_MEASURE_TIME) && !allow_time)
        st = KVB_ERROR(KVB_EINVAL, "the spec measures time (update_s, query_s: wall clock, not "
                       "reproducible), so no merge equals a single run byte for byte; add "
                       "--allow-time to merge it anyway");
    }
  }
  size_t units = st ? 0 : (size_t)si[0].units_total;
  unit_result *res = NULL;
  if (!st) {
    res = calloc(units ? units : 1, sizeof *res);
    if (!res) st = KVB_ERROR(KVB_ENOMEM, "merge: out of memory for %zu trials", units);
  }
  for (size_t k = 0; k < n && !st; k++) st = read_shard_rows(by[k], &e, res, units);
  if (!st) st = kvb_experiment_prepare_out(&e, out, force);
  if (!st) {
    size_t rows = 0, failed = 0;
    unsigned long long jobs = 0;
    double wall = 0;
    for (size_t k = 0; k < n; k++) {
      wall += by[k]->wall; /* the trials' own time, summed over the machines */
      jobs = by[k]->jobs > jobs ? by[k]->jobs : jobs;
    }
    for (size_t u = 0; u < units; u++) {
      rows += res[u].nrows;
      for (size_t i = 0; i < res[u].nrows; i++) failed += res[u].rows[i].status != 0;
    }
    st = write_outputs(&e, out, res, units, (int)jobs, rows, failed, wall,
                       si[0].spec_real[0] ? si[0].spec_real : NULL);
    if (!st) fill_report(rep, res, 0, 1, units, rows, failed);
  }
  if (res) free_results(res, units);
  if (have_e) kvb_experiment_free(&e);
  free(by);
  free(si);
  return st;
}

/* runner_units.c — executing work units: a unit's streams, then every method, probe or decode
 * pass on them against the exact side, failures kept per row; the worker pool and progress bar.
 * Rows are kept per unit so the outputs do not depend on the number of jobs (runner.h). */
#include "runner_units.h"
#include "runner_backend.h"

#include "measures.h"
#include "probe.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* mem_bytes_fp16 prices memory as the field does (KIVI, llama.cpp: K and V in fp16, 2 bytes a
 * number): a method that keeps its vectors exactly holds them in float64 (method.h: bytes >=
 * 8·d·vectors), so its fp16 price is a quarter of its bytes; a quantized cache (bytes below that)
 * is already counted as stored. Comparing quantized caches with eviction at float64 prices would
 * tilt the comparison 4× toward quantization. */
double kvb_run_bytes_fp16(double bytes, double vectors, size_t d_key, size_t d_value) {
  double dmin = (double)(d_key < d_value ? d_key : d_value);
  return bytes >= 8.0 * dmin * vectors ? bytes / 4.0 : bytes;
}

static void record_memory(row *w, const kvb_method *m) {
  kvb_memory mem;
  kvb_method_memory(m, &mem);
  w->v[C_MB] = (double)mem.bytes;
  w->v[C_MV] = (double)mem.vectors;
  w->v[C_MB16] = kvb_run_bytes_fp16((double)mem.bytes, (double)mem.vectors, m->d_key, m->d_value);
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
  int st = runner_method_alloc(&e->methods[k], &cfg, &p, &m);
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
  int st = runner_method_alloc(&e->methods[k], &cfg, &p, &m);
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

void runner_free_results(unit_result *res, size_t units) {
  for (size_t u = 0; u < units && res; u++) {
    for (size_t i = 0; i < res[u].nrows; i++) free(res[u].rows[i].msg);
    free(res[u].rows);
  }
  free(res);
}

/* Runs the units on min(jobs, units, 256) threads (inline when none can start), drawing the
 * progress bar on stderr when asked. Returns the wall-clock seconds. */
double runner_pool(const kvb_experiment *e, unit_result *res, size_t first, size_t stride,
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

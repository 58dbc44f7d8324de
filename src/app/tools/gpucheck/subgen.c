/* subgen.c — kvb-gpucheck: SubGen's batched update (k_subgen.cl) against src/subgen/subgen.c fed
 * the same coins, the query on the device's state, and the exact δ ties. */
#include "gpucheck.h"
#include "gpu_ops.h"
#include "kvb_error.h"
#include "subgen.h"
#include "subgen_uniforms.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double gam(double k) { return k * U / (1 - k * U); }

/* ---- SubGen: the device's batched update against subgen.c fed the same coins, then the query
 * on the device's state against the double estimator on that state ----
 * Keys: per head `m` centers in [−R, R]^dk, each key a center plus a perturbation of norm <= r
 * (δ between 2r and the centers' distances: the clustering decisions are far from their
 * thresholds), or, with m = 0, keys uniform in [−1, 1]^dk (every distance a decision of its own).
 * zero_v: the first 3 values are zero (subgen.h's 0/0 reading: slots stay null).
 * Discrete outputs (m′, representatives, counts, every sample's and slot's stream position, and the
 * stored vectors) must equal the CPU's exactly. µ is continuous: float sums of ‖v‖² over n tokens,
 * |µ̂ − µ| <= (γ_{dv+1} + γ_{n+1})·µ (positive terms). A decision is a "near tie" when the float
 * computation could flip it: a distance with |d² − δ²| or a runner-up gap below (γ_{dk+2} + 2u)·(d₁² + d₂²),
 * a coin with |u − p| <= (2γ_{dv+1} + γ_{n+1} + 4u)·p (p = 1/n_i: the float count's reciprocal,
 * 2.5 ulp, against the double one; p = ‖v‖²/(µ + ‖v‖²): the float sums' γ's and the division).
 * Each difference must be excused by a near tie of its own, and each excused one is counted and
 * printed: a sample or a slot may hold, instead of the CPU's token, only a token the CPU's coins
 * allow once its near-tie coins may fall either way (the last replacement by a coin that is not
 * near, or a later near-tie token), with that token's vectors; a head whose clustering meets a
 * near-tie distance may differ only after that token (its clusters opened before it equal). µ is
 * never excused. */
const sg_case SG_SMALL[] = {
    {4, 300, 16, 16, 8, 16, 6, 128, 1.0, 1.0, 0.3, 0},   /* 3 launches (128, 128, 44 tokens) */
    {1, 1, 64, 64, 4, 4, 1, 1, 1.0, 1.0, 0.3, 0},       /* one token */
    {16, 96, 32, 8, 4, 70, 3, 96, 1.0, 1.0, 0.3, 1},    /* many heads, d_key != d_value, zero values first, s > wg */
    {2, 200, 8, 24, 3, 5, 0, 64, 0.5, 1.0, 0.0, 0},     /* no cluster structure: most keys open a cluster */
    {3, 150, 16, 16, 70, 8, 2, 50, 1.0, 1.0, 0.3, 0},   /* t > work-group */
    {2, 60, 8, 8, 2, 4, 1, 60, 1.0, 1.0, 0.3, 0, 1},    /* a forced coin tie (one cluster per head) */
};

const sg_case SG_FULL[] = {
    {32, 1000, 128, 128, 16, 64, 8, 256, 1.0, 1.0, 0.3, 0},
    {8, 513, 256, 64, 8, 300, 4, 200, 1.0, 1.0, 0.3, 0},
    {4, 600, 32, 32, 4, 16, 0, 600, 0.8, 1.0, 0.0, 1},
};

/* SubGen at exact δ ties (000 Alg. 1 line 13: join iff ‖k − x_i*‖₂ <= δ). The random cases above
 * excuse a difference at a near tie, so an exact tie needs its own known answer. δ = 5/8; every
 * number is dyadic, so distances are exact in float and double:
 *   head 0: x = (1, −2, ½, 0); x + (3/8, ½, 0, 0) at distance exactly δ (a 3-4-5 triangle / 8)
 *           joins; x + (3/8, ½ + 2⁻²⁰, 0, 0) is just beyond δ and opens: m′ = 2, n = (2, 1);
 *   head 1: (−3, 0, 0, 0) and (2, 2, 0, 0) open two clusters; (2, 2, −½, 3/8) is exactly δ from
 *           the second (the arg min over several representatives) and joins: m′ = 2, n = (1, 2).
 * The device and subgen.c (fed the same coins) must both give these counts; the mutant
 * KVB_MUT_SG_CLUSTER_LT (< instead of <=) must fail. Returns 1 OK, 0 FAIL, -1 error. */
int run_subgen_tie(kvb_gpu *g, int quiet, char *why, size_t whycap) {
  enum { H = 2, NT = 3, DK = 4, DV = 4, T = 2, SL = 2, UT = T + SL };
  const double delta = 0.625;
  const float K[H * NT * DK] = {1, -2, 0.5f, 0, 1.375f, -1.5f, 0.5f, 0, 1.375f, -1.5f + 0x1p-20f, 0.5f, 0,
                                -3, 0, 0, 0, 2, 2, 0, 0, 2, 2, -0.5f, 0.375f};
  float V[H * NT * DV], u[H * NT * UT];
  const int want_mc[H] = {2, 2}, want_cnt[H][2] = {{2, 1}, {1, 2}};
  for (size_t i = 0; i < H * NT * DV; i++) V[i] = (float)(1 + i % 3);
  for (size_t i = 0; i < H * NT * UT; i++) u[i] = 0.5f;
  const char *name = "subgen_tie(H=2,dk=4,dv=4,t=2,s=2,delta=0.625,keys at distance exactly delta)";
  /* the CPU reference */
  int cpu_ok = 1;
  char cpu_got[120] = "";
  gsl_rng *rng = gsl_rng_alloc(kvb_rng_pcg32);
  if (!rng) {
    snprintf(why, whycap, "%s: out of host memory", name);
    if (!quiet) printf("FAIL %s\n", why);
    return -1;
  }
  for (size_t h = 0; h < H; h++) {
    kvb_params p;
    kvb_params_init(&p);
    kvb_params_set(&p, "delta", delta), kvb_params_set(&p, "t", T), kvb_params_set(&p, "s", SL);
    kvb_method_config cfg = {DK, DV, 0.5, rng};
    kvb_method *m = NULL;
    if (kvb_method_alloc_type(&kvb_method_subgen, &cfg, &p, &m)) {
      snprintf(why, whycap, "%s: CPU reference: %s", name, kvb_strerror_last());
      gsl_rng_free(rng);
      if (!quiet) printf("FAIL %s\n", why);
      return -1;
    }
    for (size_t i = 0; i < NT; i++) {
      double kd[DK], vd[DV], ud[UT];
      for (size_t a = 0; a < DK; a++) kd[a] = K[(h * NT + i) * DK + a];
      for (size_t a = 0; a < DV; a++) vd[a] = V[(h * NT + i) * DV + a];
      for (size_t a = 0; a < UT; a++) ud[a] = u[(h * NT + i) * UT + a];
      if (kvb_subgen_update_uniforms(m, kd, vd, ud, UT, NULL)) {
        if (cpu_ok) snprintf(cpu_got, sizeof cpu_got, "CPU reference: %s", kvb_strerror_last());
        cpu_ok = 0;
      }
    }
    size_t mc = kvb_subgen_num_clusters(m);
    uint64_t c[2] = {0, 0};
    for (size_t ci = 0; ci < 2 && ci < mc; ci++) kvb_subgen_cluster(m, ci, NULL, &c[ci], NULL, NULL, NULL);
    if (mc != (size_t)want_mc[h] || c[0] != (uint64_t)want_cnt[h][0] || c[1] != (uint64_t)want_cnt[h][1]) {
      if (cpu_ok) /* the first failing head */
        snprintf(cpu_got, sizeof cpu_got, "CPU head %zu: m' %zu n (%llu, %llu)", h, mc, (unsigned long long)c[0],
               (unsigned long long)c[1]);
      cpu_ok = 0;
    }
    kvb_method_free(m);
  }
  gsl_rng_free(rng);
  /* the device */
  kvb_gpu_subgen st;
  memset(&st, 0, sizeof st);
  if (kvb_gpu_subgen_init(&st, H, DK, DV, T, SL, delta) || kvb_gpu_subgen_update(g, &st, NT, K, V, u, NULL)) {
    snprintf(why, whycap, "%s: device error: %s", name, kvb_strerror_last());
    kvb_gpu_subgen_free(&st);
    if (!quiet) printf("FAIL %s\n", why);
    return -1;
  }
  int dev_ok = 1;
  char dev_got[120] = "";
  for (size_t h = 0; h < H; h++) {
    int c0 = st.mc[h] > 0 ? st.cnt[h * st.cap] : 0, c1 = st.mc[h] > 1 ? st.cnt[h * st.cap + 1] : 0;
    if (st.mc[h] != want_mc[h] || c0 != want_cnt[h][0] || c1 != want_cnt[h][1]) {
      if (dev_ok) snprintf(dev_got, sizeof dev_got, "device head %zu: m' %d n (%d, %d)", h, st.mc[h], c0, c1);
      dev_ok = 0;
    }
  }
  kvb_gpu_subgen_free(&st);
  int ok = cpu_ok && dev_ok;
  if (ok)
    snprintf(why, whycap, "%s: OK (device and CPU: m' = (2, 2), n = (2, 1) and (1, 2): both ties joined, "
             "the key 2^-20 beyond delta opened a cluster)", name);
  else
    snprintf(why, whycap, "%s: FAIL (want m' = (2, 2), n = (2, 1) and (1, 2); %s%s%s)", name, cpu_got,
             cpu_got[0] && dev_got[0] ? "; " : "", dev_got);
  if (!quiet) printf("%s %s\n", ok ? "PASS" : "FAIL", why);
  return ok;
}

void sg_name(const sg_case *c, char *buf, size_t cap) {
  snprintf(buf, cap, "(H=%zu,n=%zu,dk=%zu,dv=%zu,t=%zu,s=%zu,delta=%g,%s%s,batch=%zu)", c->H, c->n, c->dk, c->dv,
           c->t, c->s, c->delta, c->m ? "clustered" : "unclustered", c->zero_v ? ",zero-values-first" : "", c->batch);
}

/* One sample's or slot's coin history on the CPU (the run_subgen comparison): `fixed` is the last
 * token that replaced it by a coin not near its threshold (or by opening the cluster; −1 none),
 * near[] the near-tie coins after it. With the clustering decisions equal, the device may hold any
 * token of {fixed} ∪ {near tokens} (its final holder is the last replacement, and only the near
 * coins may fall the other way). */
#define SG_NEAR_MAX 4
typedef struct {
  long pos;
  double u, p;
} sg_coin;
typedef struct {
  long fixed;
  int nnear; /* may pass SG_NEAR_MAX: then the later ones are not kept (and not allowed) */
  sg_coin near[SG_NEAR_MAX];
} sg_track;
static void sg_track_coin(sg_track *tr, long pos, double u, double p, double thr, size_t *near) {
  int isnear = thr > 0 && fabs(u - p) <= thr * p;
  if (isnear) {
    if (near) ++*near;
    if (tr->nnear < SG_NEAR_MAX) {
      sg_coin e = {pos, u, p};
      tr->near[tr->nnear] = e;
    }
    tr->nnear++;
  } else if (u < p) {
    tr->fixed = pos, tr->nnear = 0; /* a sure replacement: earlier near coins no longer matter */
  }
}
/* −2: pos is the sure holder; k >= 0: pos is the k-th near-tie token (or the holder the CPU left
 * through one: the first near coin is named); −1: not allowed. */
static int sg_track_allows(const sg_track *tr, long pos) {
  if (tr->nnear == 0) return -1; /* no near tie: nothing may differ */
  if (pos == tr->fixed) return 0;
  for (int k = 0; k < tr->nnear && k < SG_NEAR_MAX; k++)
    if (tr->near[k].pos == pos) return k;
  return -1;
}

int run_subgen(kvb_gpu *g, const sg_case *c, int quiet, char *why, size_t whycap) {
  char shape[200];
  sg_name(c, shape, sizeof shape);
  size_t H = c->H, n = c->n, dk = c->dk, dv = c->dv, t = c->t, s = c->s, ut = t + s, nq = 2;
  float *K = malloc(H * n * dk * 4), *V = malloc(H * n * dv * 4), *u = malloc(H * n * ut * 4);
  float *C = malloc((c->m ? c->m : 1) * dk * 4), *Kb = malloc(H * c->batch * dk * 4), *Vb = malloc(H * c->batch * dv * 4);
  float *ub = malloc(H * c->batch * ut * 4), *Q = malloc(nq * H * dk * 4), *Z = malloc(nq * H * dv * 4);
  double *kd = malloc(dk * 8), *vd = malloc(dv * 8), *ud = malloc(ut * 8);
  kvb_method **cpu = calloc(H, sizeof *cpu);
  gsl_rng *rng = gsl_rng_alloc(kvb_rng_pcg32);
  kvb_gpu_subgen st;
  int have_st = 0, ok = -1, uok = 0;
  char uwhy[900] = "";
  memset(&st, 0, sizeof st);
  if (!K || !V || !u || !C || !Kb || !Vb || !ub || !Q || !Z || !kd || !vd || !ud || !cpu || !rng) {
    snprintf(why, whycap, "subgen%s: out of host memory", shape);
    goto out;
  }
  kvb_pcg32 r;
  kvb_pcg32_seed(&r, 600 + n + dk, 13);
  for (size_t h = 0; h < H; h++) {
    fill(&r, C, (c->m ? c->m : 1) * dk, c->R);
    for (size_t i = 0; i < n; i++) {
      float *k = K + (h * n + i) * dk;
      if (c->m) {
        size_t ci = kvb_pcg32_bounded(&r, (uint32_t)c->m);
        fill(&r, k, dk, c->r / sqrt((double)dk)); /* |perturbation| <= r */
        for (size_t a = 0; a < dk; a++) k[a] += C[ci * dk + a];
      } else {
        fill(&r, k, dk, 1.0);
      }
    }
  }
  fill(&r, V, H * n * dv, 1.0);
  if (c->zero_v)
    for (size_t h = 0; h < H; h++) memset(V + h * n * dv, 0, (n < 3 ? n : 3) * dv * 4);
  for (size_t i = 0; i < H * n * ut; i++) u[i] = (float)kvb_pcg32_uniform(&r), u[i] = u[i] < 1 ? u[i] : 0.5f;
  if (c->tie && n > 25) { /* token 24 of head 0: the 25th member, p = 1/25; float(1/25) < 1/25 */
    u[24 * ut] = 1.0f / 25.0f;
    for (size_t i = 25; i < n; i++) u[i * ut] = 0.999f;
  }
  fill(&r, Q, nq * H * dk, 1.0);
  /* the CPU reference: one subgen method per head, fed the same coins */
  kvb_params p;
  kvb_params_init(&p);
  kvb_params_set(&p, "delta", c->delta), kvb_params_set(&p, "t", (double)t), kvb_params_set(&p, "s", (double)s);
  kvb_method_config cfg = {dk, dv, 1.0 / sqrt((double)dk), rng}; /* the scale of the queries below */
  size_t near = 0, decisions = 0;
  double thr_d = gam((double)dk + 2) + 2 * U, thr_p = 2 * gam((double)dv + 1) + gam((double)n + 1) + 4 * U;
  /* per sample (head, cluster, j) and per slot (head, j): the last replacement by a coin that is
   * not near a tie (or the opening), and the near-tie coins after it; per head the first token
   * whose clustering is a near tie */
  sg_track *trS = calloc(H * n * t, sizeof *trS), *trM = calloc(H * s, sizeof *trM);
  size_t *dtie = malloc(H * sizeof *dtie);
  if (!trS || !trM || !dtie) {
    free(trS), free(trM), free(dtie);
    snprintf(why, whycap, "subgen%s: out of host memory", shape);
    goto out;
  }
  for (size_t i = 0; i < H * n * t; i++) trS[i].fixed = -1;
  for (size_t i = 0; i < H * s; i++) trM[i].fixed = -1;
  for (size_t h = 0; h < H; h++) dtie[h] = SIZE_MAX;
  for (size_t h = 0; h < H; h++) {
    if (kvb_method_alloc_type(&kvb_method_subgen, &cfg, &p, &cpu[h])) {
      snprintf(why, whycap, "subgen%s: CPU reference: %s", shape, kvb_strerror_last());
      goto out;
    }
    for (size_t i = 0; i < n; i++) {
      for (size_t a = 0; a < dk; a++) kd[a] = K[(h * n + i) * dk + a];
      for (size_t a = 0; a < dv; a++) vd[a] = V[(h * n + i) * dv + a];
      for (size_t a = 0; a < ut; a++) ud[a] = u[(h * n + i) * ut + a];
      /* near-tie analysis of this token's decisions, in double, before the update */
      size_t mc = kvb_subgen_num_clusters(cpu[h]), best = 0;
      double d1 = INFINITY, d2 = INFINITY, d0 = c->delta * c->delta;
      for (size_t ci = 0; ci < mc; ci++) {
        const double *x;
        kvb_subgen_cluster(cpu[h], ci, &x, NULL, NULL, NULL, NULL);
        double dd = 0;
        for (size_t a = 0; a < dk; a++) dd += (x[a] - kd[a]) * (x[a] - kd[a]);
        if (dd < d1) d2 = d1, d1 = dd, best = ci;
        else if (dd < d2) d2 = dd;
      }
      if (mc) {
        int nd = fabs(d1 - d0) <= thr_d * (d1 + d0), nr = mc > 1 && d2 - d1 <= thr_d * (d1 + d2);
        decisions += 2, near += (size_t)(nd + nr);
        if ((nd || nr) && dtie[h] == SIZE_MAX) dtie[h] = i;
      }
      int joins = mc > 0 && sqrt(d1) <= c->delta;
      double v2 = 0, mu = kvb_subgen_mu(cpu[h]);
      for (size_t a = 0; a < dv; a++) v2 += vd[a] * vd[a];
      size_t cl = joins ? best : mc; /* the cluster this token joins or opens */
      if (joins) {
        uint64_t cnt;
        kvb_subgen_cluster(cpu[h], best, NULL, &cnt, NULL, NULL, NULL);
        double pj = 1.0 / (double)(cnt + 1);
        for (size_t j = 0; j < t; j++) {
          decisions++;
          sg_track_coin(&trS[(h * n + cl) * t + j], (long)i, ud[j], pj, thr_p, &near);
        }
      } else {
        for (size_t j = 0; j < t; j++) sg_track_coin(&trS[(h * n + cl) * t + j], (long)i, 0, 1, 0, NULL);
      }
      double pm = mu + v2 > 0 ? v2 / (mu + v2) : 0;
      for (size_t j = 0; j < s; j++) {
        decisions++;
        sg_track_coin(&trM[h * s + j], (long)i, ud[(joins ? t : 0) + j], pm, thr_p, &near);
      }
      if (kvb_subgen_update_uniforms(cpu[h], kd, vd, ud, ut, NULL)) {
        snprintf(why, whycap, "subgen%s: CPU reference: %s", shape, kvb_strerror_last());
        goto out;
      }
    }
  }
  /* the device, in batches of c->batch tokens */
  if (kvb_gpu_subgen_init(&st, H, dk, dv, t, s, c->delta)) {
    snprintf(why, whycap, "subgen%s: %s", shape, kvb_strerror_last());
    goto out;
  }
  have_st = 1;
  for (size_t i0 = 0; i0 < n; i0 += c->batch) {
    size_t nb = n - i0 < c->batch ? n - i0 : c->batch;
    for (size_t h = 0; h < H; h++) {
      memcpy(Kb + h * nb * dk, K + (h * n + i0) * dk, nb * dk * 4);
      memcpy(Vb + h * nb * dv, V + (h * n + i0) * dv, nb * dv * 4);
      memcpy(ub + h * nb * ut, u + (h * n + i0) * ut, nb * ut * 4);
    }
    if (kvb_gpu_subgen_update(g, &st, nb, Kb, Vb, ub, NULL)) {
      snprintf(why, whycap, "subgen_update%s: device error: %s", shape, kvb_strerror_last());
      goto out;
    }
  }
  /* compare the states: each difference excused by a near tie of its own, or counted */
  size_t diff = 0, items = 0, mtot = 0, nexc = 0, nexc_head = 0;
  double murel = 0, mubound = gam((double)dv + 1) + gam((double)n + 1);
  char exc[4][300];
  for (size_t h = 0; h < H; h++) {
    size_t mc = kvb_subgen_num_clusters(cpu[h]), hdiff = 0, hitems = 0;
    mtot += mc;
    hitems++, hdiff += (size_t)st.mc[h] != mc;
    /* a clustering near tie at token dtie[h]: the clusters opened before it must be equal */
    size_t pre = 0, predf = 0;
    for (size_t ci = 0; ci < mc && ci < (size_t)st.mc[h]; ci++) {
      const double *x, *S;
      const uint64_t *Sp;
      uint64_t cnt, rp;
      kvb_subgen_cluster(cpu[h], ci, &x, &cnt, &S, &Sp, &rp);
      size_t o = h * st.cap + ci;
      int repdiff = (uint64_t)st.rep_pos[o] != rp;
      for (size_t a = 0; a < dk; a++) repdiff |= st.rep[o * dk + a] != x[a];
      if (rp < dtie[h]) pre++, predf += repdiff;
      hitems += 2, hdiff += (uint64_t)st.cnt[o] != cnt, hdiff += (size_t)repdiff;
      for (size_t j = 0; j < t; j++) {
        int dp = st.S_pos[o * t + j], same = (uint64_t)dp == Sp[j];
        for (size_t a = 0; same && a < dk; a++) same = st.S[(o * t + j) * dk + a] == S[j * dk + a];
        hitems++;
        if (same) continue;
        const sg_track *tr = &trS[(h * n + ci) * t + j];
        int k = sg_track_allows(tr, dp);
        for (size_t a = 0; k >= 0 && dp >= 0 && (size_t)dp < n && a < dk; a++)
          if (st.S[(o * t + j) * dk + a] != K[(h * n + (size_t)dp) * dk + a]) k = -1;
        if (k < 0 || dtie[h] != SIZE_MAX) { hdiff++; continue; }
        const sg_coin *e = &tr->near[k < SG_NEAR_MAX ? k : 0];
        if (nexc < 4)
          snprintf(exc[nexc], sizeof exc[nexc], "head %zu cluster %zu sample %zu: token %ld's coin u = %.9g, p = %.9g (double), "
                   "|u - p| = %.2g <= bound %.2g; device holds token %d, CPU token %llu", h, ci, j, e->pos, e->u, e->p,
                   fabs(e->u - e->p), thr_p * e->p, dp, (unsigned long long)Sp[j]);
        nexc++;
      }
    }
    for (size_t j = 0; j < s; j++) {
      const double *mk, *mv;
      uint64_t mp;
      kvb_subgen_slot(cpu[h], j, &mk, &mv, &mp);
      int dp = st.M_pos[h * s + j], same = dp < 0 ? mp == UINT64_MAX : mp != UINT64_MAX && (uint64_t)dp == mp;
      for (size_t a = 0; same && dp >= 0 && a < dk; a++) same = st.Mk[(h * s + j) * dk + a] == mk[a];
      for (size_t a = 0; same && dp >= 0 && a < dv; a++) same = st.Mv[(h * s + j) * dv + a] == mv[a];
      hitems++;
      if (same) continue;
      const sg_track *tr = &trM[h * s + j];
      int k = sg_track_allows(tr, dp);
      for (size_t a = 0; k >= 0 && dp >= 0 && (size_t)dp < n && a < dk; a++)
        if (st.Mk[(h * s + j) * dk + a] != K[(h * n + (size_t)dp) * dk + a]) k = -1;
      for (size_t a = 0; k >= 0 && dp >= 0 && (size_t)dp < n && a < dv; a++)
        if (st.Mv[(h * s + j) * dv + a] != V[(h * n + (size_t)dp) * dv + a]) k = -1;
      if (k < 0 || dtie[h] != SIZE_MAX) { hdiff++; continue; }
      const sg_coin *e = &tr->near[k < SG_NEAR_MAX ? k : 0];
      if (nexc < 4)
        snprintf(exc[nexc], sizeof exc[nexc], "head %zu slot %zu: token %ld's coin u = %.9g, p = %.9g (double), |u - p| = %.2g "
                 "<= bound %.2g; device holds token %d, CPU %lld", h, j, e->pos, e->u, e->p, fabs(e->u - e->p), thr_p * e->p, dp,
                 mp == UINT64_MAX ? -1LL : (long long)mp);
      nexc++;
    }
    items += hitems;
    if (hdiff && dtie[h] != SIZE_MAX && predf == 0) { /* after a clustering near tie: excused as its consequence */
      if (nexc < 4)
        snprintf(exc[nexc], sizeof exc[nexc], "head %zu: clustering near tie at token %zu; %zu differences after it, the %zu "
                 "clusters opened before it equal", h, dtie[h], hdiff, pre);
      nexc++, nexc_head++;
    } else {
      diff += hdiff;
    }
    double mu = kvb_subgen_mu(cpu[h]);
    if (mu > 0) murel = fmax(murel, fabs(st.mu[h] - mu) / mu);
  }
  int muok = murel <= mubound;
  for (size_t e = 0; !quiet && e < nexc && e < 4; e++) printf("  near tie %zu of %zu: %s: excused\n", e + 1, nexc, exc[e]);
  if (!diff && muok) {
    uok = 1;
    snprintf(uwhy, sizeof uwhy, "subgen_update%s: OK (%zu clusters; %zu of %zu counts/positions differ from the CPU%s; "
             "mu rel err %.2g <= %.2g; %zu near ties in %zu decisions, coin bound (2g_{dv+1}+g_{n+1}+4u)p = %.2gp)", shape,
             mtot, nexc, items,
             !nexc ? ", exact equality required" : nexc_head ? ", each excused by a near tie of its own (a head after a "
                                                             "clustering tie counted once)" : ", each excused by a near tie of its own",
             murel, mubound, near, decisions, thr_p);
  } else {
    snprintf(uwhy, sizeof uwhy, "subgen_update%s: FAIL (%zu differences in %zu counts/positions and their vectors not "
             "explained by a near tie of their own, %zu excused; %zu near ties in %zu decisions; mu rel err %.2g %s %.2g)",
             shape, diff, items, nexc, near, decisions, murel, muok ? "<=" : ">", mubound);
  }
  free(trS), free(trM), free(dtie);
  if (!quiet) printf("%s %s\n", uok ? "PASS" : "FAIL", uwhy);
  /* the query on the device's state */
  if (kvb_gpu_subgen_query(g, &st, nq, 1.0 / sqrt((double)dk), Q, Z, NULL)) {
    snprintf(why, whycap, "subgen_query%s: device error: %s", shape, kvb_strerror_last());
    goto out;
  }
  {
    size_t cap = st.cap, nterm = s + cap * t;
    wterm *T = malloc(nterm * sizeof *T);
    double *z = malloc(dv * 8), *B = malloc(dv * 8), *work = malloc(2 * nterm * 8);
    double num = 0, den = 0, bnd = 0;
    int nonfinite = 0;
    if (!T || !z || !B || !work) {
      free(T), free(z), free(B), free(work);
      snprintf(why, whycap, "subgen_query%s: out of host memory", shape);
      goto out;
    }
    for (size_t qi = 0; qi < nq; qi++)
      for (size_t h = 0; h < H; h++) {
        size_t k = 0;
        double mu = st.mu[h], lmu = log(mu);
        for (size_t j = 0; j < s; j++) {
          if (st.M_pos[h * s + j] < 0) continue;
          const float *v = st.Mv + (h * s + j) * dv;
          double vv = 0;
          for (size_t a = 0; a < dv; a++) vv += (double)v[a] * v[a];
          double lw = lmu - log((double)s * vv);
          /* ω: ‖v‖² (γ_{dv+1}), s·vv (u), two logs within 3 ulp (OpenCL 1.2 §7.4), the subtraction */
          wterm w = {st.Mk + (h * s + j) * dk, v, lw, -INFINITY,
                     gam((double)dv + 1) + U + 3 * U * (fabs(lmu) + fabs(log((double)s * vv))) + U * fabs(lw), -1};
          T[k++] = w;
        }
        for (size_t ci = 0; ci < (size_t)st.mc[h]; ci++) {
          double lw = log((double)st.cnt[h * cap + ci] / (double)t);
          for (size_t j = 0; j < t; j++) {
            wterm w = {st.S + ((h * cap + ci) * t + j) * dk, NULL, -INFINITY, lw, 2 * U + 3 * U * fabs(lw),
                       (long)(ci * t + j)};
            T[k++] = w;
          }
        }
        ref_wterms(k, T, dk, dv, Q + (qi * H + h) * dk, 1.0 / sqrt((double)dk), z, B, work);
        acc_row(Z + (qi * H + h) * dv, z, B, dv, &num, &den, &bnd, &nonfinite);
      }
    free(T), free(z), free(B), free(work);
    /* End to end: the device's answers against subgen.c's own query (double) on its own state.
     * With the discrete state equal, the two estimators differ only by the kernel's float32 error
     * (the bound B above, on the device's state) and by µ, which scales every slot weight:
     * ‖ẑ − z_cpu‖ <= ‖ẑ − z_ref‖ + ρ‖z_cpu‖, ρ = max_h |µ̂ − µ|/µ; summed over the rows by
     * Minkowski: sqrt(Σ(ẑ − z_cpu)²) <= sqrt(Σ B²) + ρ·sqrt(Σ z_cpu²). With excused near ties
     * the discrete states differ, and only the query on the device's own state (below) applies. */
    if (uok && !diff && nexc && !quiet)
      printf("PASS subgen_e2e%s: not applicable (the states differ by %zu excused near ties; the query is checked on the "
             "device's own state)\n", shape, nexc);
    if (uok && !diff && !nexc) {
      double e2 = 0, zc2 = 0, *qd = malloc(dk * 8), *zc = malloc(dv * 8);
      int eok = qd && zc;
      for (size_t qi = 0; eok && qi < nq; qi++)
        for (size_t h = 0; eok && h < H; h++) {
          for (size_t a = 0; a < dk; a++) qd[a] = Q[(qi * H + h) * dk + a];
          if (kvb_method_query(cpu[h], qd, dk, zc, dv)) eok = 0;
          for (size_t a = 0; eok && a < dv; a++) {
            double d = Z[(qi * H + h) * dv + a] - zc[a];
            e2 += d * d, zc2 += zc[a] * zc[a];
          }
        }
      free(qd), free(zc);
      double lhs = sqrt(e2), rhs = sqrt(bnd) + murel * sqrt(zc2);
      eok = eok && lhs <= rhs;
      if (!quiet)
        printf("%s subgen_e2e%s: %s (device update+query vs subgen.c's query: |dz| %.3g %s %.3g = query bound + mu rel err x |z|)\n",
               eok ? "PASS" : "FAIL", shape, eok ? "OK" : "FAIL", lhs, eok ? "<=" : ">", rhs);
      if (!eok) uok = 0, snprintf(uwhy, sizeof uwhy, "subgen_e2e%s: FAIL (|dz| %.3g > %.3g)", shape, lhs, rhs);
    }
    /* all-zero answers (no slot filled) compare absolutely */
    double nmse = den > 0 ? num / den : num, tol = den > 0 ? bnd / den : bnd;
    int qok = nonfinite == 0 && nmse <= tol;
    if (nonfinite) snprintf(why, whycap, "subgen_query%s: FAIL (%d non-finite outputs)", shape, nonfinite);
    else snprintf(why, whycap, "subgen_query%s: %s (nmse %.3g %s running-error tolerance %.3g, margin %s)", shape, qok ? "OK" : "FAIL", nmse,
                  qok ? "<=" : ">", tol, margin(nmse, tol));
    if (!quiet) printf("%s %s\n", qok ? "PASS" : "FAIL", why);
    ok = uok && qok;
    if (!uok) snprintf(why, whycap, "%s", uwhy);
  }
  quiet = 1; /* both lines printed */
out:
  if (!quiet) printf("FAIL %s\n", why);
  if (have_st) kvb_gpu_subgen_free(&st);
  for (size_t h = 0; cpu && h < H; h++) kvb_method_free(cpu[h]);
  free(cpu);
  if (rng) gsl_rng_free(rng);
  free(K), free(V), free(u), free(C), free(Kb), free(Vb), free(ub), free(Q), free(Z), free(kd), free(vd), free(ud);
  return ok;
}

/* test_gpu_index64.c — the device kernels at shapes whose buffer offsets pass 2^31 (src/gpu/README.md, GPU
 * kernels; gpu_limits.h). The kernel text (k_prelude.cl + k_*.cl) is compiled here as C with the
 * prelude's host branch (KVB_HOST_EMU: the group id chosen by the test; one work-item per group, or
 * for the kernels whose work-items cooperate — k_decode_coop.cl, k_bkvb_gram.cl,
 * k_subgen_batch.cl — KVB_WG POSIX threads with a pthread barrier) and with UBSan's signed-overflow
 * check (the Makefile's rule for this test), so an `int` offset that wraps aborts the test. Buffers are reserved with MAP_NORESERVE: a 16 GiB K costs only the pages
 * the chosen groups touch. For each kernel the LAST group of a big shape (the largest offsets) runs
 * and must write exactly the bits the same group of a small shape with the same head data writes
 * (H = 1 or one query: offsets < 2^31) — the same C code, so any difference is an index error.
 * Then gpu_limits.h: the guard accepts these shapes (their offsets are 64-bit now) and refuses the
 * ones where a quantity the kernels keep in `int` (group ids, arguments) would overflow. */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS, MAP_NORESERVE */
#define KVB_HOST_EMU 1
#include "gpu_limits.h"
#include "unit.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>

int kvb_host_group, kvb_host_groups = 1, kvb_host_wg = 1;
_Thread_local int kvb_host_lid;
static pthread_barrier_t host_bar;
void kvb_host_barrier(void) {
  if (kvb_host_wg > 1) pthread_barrier_wait(&host_bar);
}
float kvb_host_half(uint16_t h) { /* IEEE binary16 -> float */
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
  return h & 0x8000 ? -v : v;
}

#include "k_prelude.cl"
#include "k_attention.cl"
#include "k_bkvb.cl"
#include "k_subgen.cl"
#include "k_decode_coop.cl"
#include "k_resident.cl"
#include "k_bkvb_gram.cl"
#include "k_subgen_batch.cl"
#include "k_perf.cl"

/* One work-group `group` of a launch of `groups`: wg work-items as threads (fn(arg) each, with its
 * kvb_host_lid), or wg = 1 in this thread. */
typedef struct {
  void (*fn)(void *);
  void *arg;
  int lid;
} host_lane;
static void *host_lane_main(void *p) {
  host_lane *l = p;
  kvb_host_lid = l->lid;
  l->fn(l->arg);
  return NULL;
}
static int run_group(int group, int groups, int wg, void (*fn)(void *), void *arg) {
  kvb_host_group = group, kvb_host_groups = groups, kvb_host_wg = wg, kvb_host_lid = 0;
  int ok = 1;
  if (wg == 1) {
    fn(arg);
  } else {
    pthread_t th[KVB_WG];
    host_lane ln[KVB_WG];
    int started = 0;
    if (wg > KVB_WG || pthread_barrier_init(&host_bar, NULL, (unsigned)wg)) return 0;
    for (; started < wg; started++) {
      ln[started].fn = fn, ln[started].arg = arg, ln[started].lid = started;
      if (pthread_create(&th[started], NULL, host_lane_main, &ln[started])) break;
    }
    if (started < wg) { /* cannot happen at wg threads unless the system refuses threads */
      printf("FAIL gpu_index64: pthread_create refused a work-item thread\n");
      exit(1);
    }
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&host_bar);
  }
  kvb_host_group = 0, kvb_host_groups = 1, kvb_host_wg = 1, kvb_host_lid = 0;
  return ok;
}
/* Work-items without barriers (grid-stride kernels): lanes one after another in this thread. */
static void run_lanes(int group, int groups, int wg, void (*fn)(void *), void *arg) {
  kvb_host_group = group, kvb_host_groups = groups, kvb_host_wg = wg;
  for (int l = 0; l < wg; l++) kvb_host_lid = l, fn(arg);
  kvb_host_group = 0, kvb_host_groups = 1, kvb_host_wg = 1, kvb_host_lid = 0;
}

static void *vmem(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}
static void vfree(void *p, size_t bytes) {
  if (p) munmap(p, bytes);
}
static uint64_t lcg = 88172645463325252ull;
static float rnd(void) { /* uniform in [-1, 1) */
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(lcg >> 11) * 0x1p-53 * 2 - 1);
}
static int same(const void *a, const void *b, size_t bytes) { return memcmp(a, b, bytes) == 0; }

/* attention: H = 2^14 heads of n = 2^10 tokens, d = 256, 64 queries, chunk 64: K and V have 2^32
 * floats (head offsets (h·n + t)·d up to 2^32) and the partials 16·2^14·64 groups × 256 = 2^32. */
static void test_attention(void) {
  const size_t H = 1 << 14, n = 1 << 10, d = 256, nq = 64, chunk = 64, nsplit = n / chunk;
  const size_t ng = nsplit * H * nq, hq = H * nq - 1, h = H - 1;
  size_t bK = H * n * d * 4, bQ = nq * H * d * 4, bO = ng * d * 4, bM = ng * 4;
  float *K = vmem(bK), *V = vmem(bK), *Q = vmem(bQ), *Oo = vmem(bO), *Mo = vmem(bM), *Lo = vmem(bM), *Z = vmem(bQ);
  /* the small shape: one head, one query */
  float *k1 = malloc(n * d * 4), *v1 = malloc(n * d * 4), *q1 = malloc(d * 4), *O1 = malloc(nsplit * d * 4);
  float *M1 = malloc(nsplit * 4), *L1 = malloc(nsplit * 4), *z1 = malloc(d * 4);
  if (!K || !V || !Q || !Oo || !Mo || !Lo || !Z || !k1 || !v1 || !q1 || !O1 || !M1 || !L1 || !z1) {
    printf("SKIP gpu_index64 attention: cannot reserve the address space (MAP_NORESERVE refused)\n");
    goto out;
  }
  CHECK(ng * d > (size_t)INT_MAX && H * n * d > (size_t)INT_MAX, "gpu_index64 attention shape passes 2^31",
        "ng·d = %zu, H·n·d = %zu", ng * d, H * n * d);
  for (size_t i = 0; i < n * d; i++) k1[i] = K[h * n * d + i] = rnd(), v1[i] = V[h * n * d + i] = rnd();
  for (size_t a = 0; a < d; a++) q1[a] = Q[hq * d + a] = rnd();
  for (size_t s = 0; s < nsplit; s++) {
    kvb_host_group = (int)(s + nsplit * hq);
    kvb_attn_split((int)n, (int)d, (int)d, (int)H, (int)chunk, (int)nsplit, 0.0625f, 0, 0, Q, K, NULL, V, NULL, NULL,
                   Mo, Lo, Oo);
    kvb_host_group = (int)s;
    kvb_attn_split((int)n, (int)d, (int)d, 1, (int)chunk, (int)nsplit, 0.0625f, 0, 0, q1, k1, NULL, v1, NULL, NULL,
                   M1, L1, O1);
  }
  kvb_host_group = (int)hq;
  kvb_attn_combine((int)d, (int)nsplit, Mo, Lo, Oo, Z);
  kvb_host_group = 0;
  kvb_attn_combine((int)d, (int)nsplit, M1, L1, O1, z1);
  CHECK(same(Oo + (nsplit * hq) * d, O1, nsplit * d * 4) && same(Mo + nsplit * hq, M1, nsplit * 4) &&
            same(Lo + nsplit * hq, L1, nsplit * 4) && same(Z + hq * d, z1, d * 4),
        "gpu_index64 kvb_attn_split + kvb_attn_combine: the last (head, query) at offsets up to 2^32 equals H = 1",
        "partials or output differ");
  /* the gather: group r = h·kk + j with (h·n + pos)·d up to 2^32 */
  {
    const size_t kk = 8;
    int *pos = vmem(H * kk * 4);
    float *Kc = vmem(H * kk * d * 4), *Vc = vmem(H * kk * d * 4);
    if (pos && Kc && Vc) {
      for (size_t j = 0; j < kk; j++) pos[h * kk + j] = (int)(n - 1 - 37 * j);
      for (size_t j = 0; j < kk; j++) {
        kvb_host_group = (int)(h * kk + j);
        kvb_usample_gather((int)n, (int)d, (int)d, (int)kk, pos, K, V, Kc, Vc);
      }
      int ok = 1;
      for (size_t j = 0; j < kk; j++)
        ok &= same(Kc + (h * kk + j) * d, k1 + (size_t)pos[h * kk + j] * d, d * 4) &&
              same(Vc + (h * kk + j) * d, v1 + (size_t)pos[h * kk + j] * d, d * 4);
      CHECK(ok, "gpu_index64 kvb_usample_gather: the last head's rows at offsets up to 2^32", "gathered rows differ");
    }
    vfree(pos, H * kk * 4), vfree(Kc, H * kk * d * 4), vfree(Vc, H * kk * d * 4);
  }
  /* the weighted query: (h·n + idx)·d up to 2^32 */
  {
    const size_t kk = 300; /* two chunks of KVB_CHUNK_MAX */
    int *idx = vmem(H * kk * 4), *i1 = malloc(kk * 4);
    float *ln = vmem(H * kk * 4), *ld = vmem(H * kk * 4), *l1 = malloc(kk * 4), *d1 = malloc(kk * 4);
    float *Zw = vmem(H * d * 4), *qw = vmem(H * d * 4), *zw1 = malloc(d * 4);
    if (idx && i1 && ln && ld && l1 && d1 && Zw && qw && zw1) {
      for (size_t j = 0; j < kk; j++) {
        i1[j] = idx[h * kk + j] = (int)((j * 7) % n);
        l1[j] = ln[h * kk + j] = (float)(j % 3) * 0.5f, d1[j] = ld[h * kk + j] = 0.25f;
      }
      memcpy(qw + h * d, q1, d * 4);
      kvb_host_group = (int)h;
      kvb_wquery((int)n, (int)d, (int)d, (int)H, (int)kk, 0.0625f, idx, ln, ld, qw, K, V, Zw);
      kvb_host_group = 0;
      kvb_wquery((int)n, (int)d, (int)d, 1, (int)kk, 0.0625f, i1, l1, d1, q1, k1, v1, zw1);
      CHECK(same(Zw + h * d, zw1, d * 4), "gpu_index64 kvb_wquery: the last head at offsets up to 2^32 equals H = 1",
            "outputs differ");
    }
    vfree(idx, H * kk * 4), vfree(ln, H * kk * 4), vfree(ld, H * kk * 4), vfree(Zw, H * d * 4), vfree(qw, H * d * 4);
    free(i1), free(l1), free(d1), free(zw1);
  }
  /* the BalanceKV walk and halving: (h·n + cur)·d up to 2^32, the last block of the last head */
  {
    const size_t b = 64, nblk = n / b;
    int *cur = vmem(H * n * 4), *S = vmem(H * n * 4), *ncur = vmem(H * n * 4);
    float *cw = vmem(H * n * 4), *u = vmem(H * n * 4), *P = vmem(H * n * 4), *ncw = vmem(H * n * 4);
    int *c1 = malloc(n * 4), *s1 = malloc(n * 4), *nc1 = malloc(n * 4);
    float *w1 = malloc(n * 4), *u1 = malloc(n * 4), *p1 = malloc(n * 4), *nw1 = malloc(n * 4);
    if (cur && S && ncur && cw && u && P && ncw && c1 && s1 && nc1 && w1 && u1 && p1 && nw1) {
      for (size_t i = 0; i < n; i++) {
        c1[i] = cur[h * n + i] = (int)i, w1[i] = cw[h * n + i] = 1.0f;
        u1[i] = u[h * n + i] = 0.5f * (rnd() + 1);
      }
      for (size_t blk = 0; blk < nblk; blk++) {
        kvb_host_group = (int)(h * nblk + blk);
        kvb_bkvb_walk((int)n, (int)d, (int)d, (int)n, (int)b, (int)nblk, 0.0625f, 0.5f, 0.1f, 0.3f, K, V, cur, cw, u, S, P);
        kvb_host_group = (int)blk;
        kvb_bkvb_walk((int)n, (int)d, (int)d, (int)n, (int)b, (int)nblk, 0.0625f, 0.5f, 0.1f, 0.3f, k1, v1, c1, w1, u1, s1, p1);
      }
      kvb_host_group = (int)h;
      kvb_bkvb_halving((int)n, (int)n, S, cur, cw, ncur, ncw);
      kvb_host_group = 0;
      kvb_bkvb_halving((int)n, (int)n, s1, c1, w1, nc1, nw1);
      CHECK(same(S + h * n, s1, n * 4) && same(P + h * n, p1, n * 4) && same(ncur + h * n, nc1, n / 2 * 4) &&
                same(ncw + h * n, nw1, n / 2 * 4),
            "gpu_index64 kvb_bkvb_walk + kvb_bkvb_halving: the last head at offsets up to 2^32 equals H = 1",
            "signs, probabilities or survivors differ");
    }
    vfree(cur, H * n * 4), vfree(S, H * n * 4), vfree(ncur, H * n * 4), vfree(cw, H * n * 4), vfree(u, H * n * 4);
    vfree(P, H * n * 4), vfree(ncw, H * n * 4);
    free(c1), free(s1), free(nc1), free(w1), free(u1), free(p1), free(nw1);
  }
out:
  vfree(K, bK), vfree(V, bK), vfree(Q, bQ), vfree(Oo, bO), vfree(Mo, bM), vfree(Lo, bM), vfree(Z, bQ);
  free(k1), free(v1), free(q1), free(O1), free(M1), free(L1), free(z1);
}

/* SubGen: H = 2^14 heads absorbing nt = 2^10 tokens each (K: (h·nt + step)·d up to 2^32), t = 2,
 * s = 8, the state's samples H·cap·t·d = 2^33; the last head's update and a query on it. */
static void test_subgen(void) {
  const size_t H = 1 << 14, nt = 1 << 10, d = 256, t = 2, s = 8, cap = 8, ut = t + s;
  size_t bK = H * nt * d * 4, bU = H * nt * ut * 4, bR = H * cap * d * 4, bS = H * cap * t * d * 4, bM = H * s * d * 4;
  float *K = vmem(bK), *V = vmem(bK), *u = vmem(bU), *rep = vmem(bR), *S = vmem(bS), *Mk = vmem(bM), *Mv = vmem(bM);
  int *mc = vmem(H * 4), *rp = vmem(H * cap * 4), *cnt = vmem(H * cap * 4), *Sp = vmem(H * cap * t * 4), *Mp = vmem(H * s * 4);
  float *mu = vmem(H * 4), *Q = vmem(H * d * 4), *Z = vmem(H * d * 4);
  float *k1 = calloc(nt * d, 4), *v1 = calloc(nt * d, 4), *u1 = calloc(nt * ut, 4), *r1 = calloc(cap * d, 4);
  float *S1 = calloc(cap * t * d, 4), *mk1 = calloc(s * d, 4), *mv1 = calloc(s * d, 4), *z1 = calloc(d, 4);
  int *rp1 = calloc(cap, 4), *cn1 = calloc(cap, 4), *Sp1 = calloc(cap * t, 4), *Mp1 = calloc(s, 4);
  int mc1 = 0;
  float mu1 = 0;
  const size_t h = H - 1;
  if (!K || !V || !u || !rep || !S || !Mk || !Mv || !mc || !rp || !cnt || !Sp || !Mp || !mu || !Q || !Z || !k1 || !v1 ||
      !u1 || !r1 || !S1 || !mk1 || !mv1 || !z1 || !rp1 || !cn1 || !Sp1 || !Mp1) {
    printf("SKIP gpu_index64 subgen: cannot reserve the address space (MAP_NORESERVE refused)\n");
    goto out;
  }
  float C[4][256];
  for (size_t c = 0; c < 4; c++)
    for (size_t a = 0; a < d; a++) C[c][a] = 4 * rnd();
  for (size_t i = 0; i < nt; i++) { /* keys: one of 4 well-separated centers plus a small jitter */
    for (size_t a = 0; a < d; a++) k1[i * d + a] = K[(h * nt + i) * d + a] = C[i % 4][a] + 0.01f * rnd();
    for (size_t a = 0; a < d; a++) v1[i * d + a] = V[(h * nt + i) * d + a] = rnd();
    for (size_t a = 0; a < ut; a++) u1[i * ut + a] = u[(h * nt + i) * ut + a] = 0.5f * (rnd() + 1);
  }
  for (size_t i = 0; i < s; i++) Mp1[i] = Mp[h * s + i] = -1;
  kvb_host_group = (int)h;
  kvb_subgen_update((int)nt, (int)d, (int)d, (int)t, (int)s, (int)cap, 0, 1.0f, K, V, u, mc, rep, rp, cnt, S, Sp, mu, Mk,
                    Mv, Mp);
  kvb_host_group = 0;
  kvb_subgen_update((int)nt, (int)d, (int)d, (int)t, (int)s, (int)cap, 0, 1.0f, k1, v1, u1, &mc1, r1, rp1, cn1, S1, Sp1,
                    &mu1, mk1, mv1, Mp1);
  CHECK(mc[h] == mc1 && mc1 == 4 && mu[h] == mu1 && same(rep + h * cap * d, r1, cap * d * 4) &&
            same(cnt + h * cap, cn1, cap * 4) && same(S + h * cap * t * d, S1, cap * t * d * 4) &&
            same(Sp + h * cap * t, Sp1, cap * t * 4) && same(Mk + h * s * d, mk1, s * d * 4) &&
            same(Mv + h * s * d, mv1, s * d * 4) && same(Mp + h * s, Mp1, s * 4),
        "gpu_index64 kvb_subgen_update: the last head at offsets up to 2^33 equals H = 1", "m' %d vs %d, state differs",
        mc[h], mc1);
  float q1[256];
  for (size_t a = 0; a < d; a++) q1[a] = Q[h * d + a] = rnd();
  kvb_host_group = (int)h;
  kvb_subgen_query((int)d, (int)d, (int)t, (int)s, (int)cap, (int)H, 0.0625f, Q, mc, cnt, S, mu, Mk, Mv, Mp, Z);
  kvb_host_group = 0;
  kvb_subgen_query((int)d, (int)d, (int)t, (int)s, (int)cap, 1, 0.0625f, q1, &mc1, cn1, S1, &mu1, mk1, mv1, Mp1, z1);
  CHECK(same(Z + h * d, z1, d * 4), "gpu_index64 kvb_subgen_query: the last head equals H = 1", "outputs differ");
out:
  vfree(K, bK), vfree(V, bK), vfree(u, bU), vfree(rep, bR), vfree(S, bS), vfree(Mk, bM), vfree(Mv, bM);
  vfree(mc, H * 4), vfree(rp, H * cap * 4), vfree(cnt, H * cap * 4), vfree(Sp, H * cap * t * 4), vfree(Mp, H * s * 4);
  vfree(mu, H * 4), vfree(Q, H * d * 4), vfree(Z, H * d * 4);
  free(k1), free(v1), free(u1), free(r1), free(S1), free(mk1), free(mv1), free(z1), free(rp1), free(cn1), free(Sp1), free(Mp1);
}

/* ---- the reshaped kernels (k_decode_coop.cl, k_resident.cl, k_bkvb_gram.cl, k_subgen_batch.cl,
 * k_perf.cl): the same rule, the last group(s) of a shape beyond 2^31 against a small shape ---- */
static uint16_t rnd_half(void) { /* a random binary16 in ±[0.25, 2) */
  float x = rnd();
  uint16_t m = (uint16_t)((x + 1) * 511.5f) & 1023, e = (uint16_t)(13 + (lcg >> 40) % 3);
  return (uint16_t)((x < 0 ? 0x8000 : 0) | e << 10 | m);
}

typedef struct {
  int n, ld, dk, dv, H, G, chunk, nsplit, is_half;
  float scale;
  const float *Q, *Kf, *Vf;
  const kvb_half *Kh, *Vh;
  float *Mo, *Lo, *Oo;
} coop_args;
static void coop_fn(void *p) {
  coop_args *a = p;
  kvb_attn_coop(a->n, a->ld, a->dk, a->dv, a->H, a->G, a->chunk, a->nsplit, a->scale, a->is_half, 0, a->Q, a->Kf, a->Kh,
                a->Vf, a->Vh, NULL, a->Mo, a->Lo, a->Oo);
}

/* Cooperative decode: Hkv = 2^12 KV heads of stride ld = 4096 (n = 1000 tokens), GQA 4 (H = 2^14),
 * d = 256, 1024 queries, chunk 256: K, V and Q have 2^32 elements, the partials 2^34. The last
 * (KV head, query) pack, every split, float32 and binary16, against Hkv = 1, one query, ld = n. */
static void test_coop(void) {
  const size_t Hkv = 1 << 12, G = 4, H = Hkv * G, n = 1000, ld = 4096, d = 256, nq = 1024, chunk = 256;
  const size_t nsplit = (n + chunk - 1) / chunk, hk = Hkv - 1, qi = nq - 1, h0 = hk * G;
  size_t bK = Hkv * ld * d * 4, bQ = nq * H * d * 4, bP = nsplit * H * nq * 4, bO = bP * d;
  float *K = vmem(bK), *V = vmem(bK), *Q = vmem(bQ), *Mo = vmem(bP), *Lo = vmem(bP), *Oo = vmem(bO);
  kvb_half *Kh = vmem(bK / 2), *Vh = vmem(bK / 2);
  float *k1 = malloc(n * d * 4), *v1 = malloc(n * d * 4), *q1 = malloc(G * d * 4), *M1 = malloc(nsplit * G * 4),
        *L1 = malloc(nsplit * G * 4), *O1 = malloc(nsplit * G * d * 4);
  kvb_half *kh1 = malloc(n * d * 2), *vh1 = malloc(n * d * 2);
  if (!K || !V || !Q || !Mo || !Lo || !Oo || !Kh || !Vh || !k1 || !v1 || !q1 || !M1 || !L1 || !O1 || !kh1 || !vh1) {
    printf("SKIP gpu_index64 coop: cannot reserve the address space (MAP_NORESERVE refused)\n");
    goto out;
  }
  CHECK(Hkv * ld * d > (size_t)INT_MAX && nq * H * d > (size_t)INT_MAX && nsplit * H * nq * d > (size_t)INT_MAX,
        "gpu_index64 coop shape passes 2^31 (K, Q and partial offsets)", "Hkv·ld·d = %zu", Hkv * ld * d);
  for (size_t i = 0; i < n * d; i++) {
    k1[i] = K[hk * ld * d + i] = rnd(), v1[i] = V[hk * ld * d + i] = rnd();
    kh1[i] = Kh[hk * ld * d + i] = rnd_half(), vh1[i] = Vh[hk * ld * d + i] = rnd_half();
  }
  for (size_t g = 0; g < G; g++)
    for (size_t a = 0; a < d; a++) q1[g * d + a] = Q[((h0 + g) + H * qi) * d + a] = rnd();
  int ok = 1;
  for (int half = 0; half < 2; half++) {
    coop_args big = {(int)n, (int)ld, (int)d, (int)d, (int)H, (int)G, (int)chunk, (int)nsplit, half, 0.0625f,
                     Q, K, V, Kh, Vh, Mo, Lo, Oo};
    coop_args small = {(int)n, (int)n, (int)d, (int)d, (int)G, (int)G, (int)chunk, (int)nsplit, half, 0.0625f,
                       q1, k1, v1, kh1, vh1, M1, L1, O1};
    size_t npack = 1, groups = nsplit * npack * Hkv * nq;
    for (size_t sp = 0; sp < nsplit; sp++) {
      ok &= run_group((int)(sp + nsplit * (0 + npack * (hk + Hkv * qi))), (int)groups, KVB_WG, coop_fn, &big);
      ok &= run_group((int)sp, (int)nsplit, KVB_WG, coop_fn, &small);
    }
    for (size_t g = 0; g < G; g++)
      for (size_t sp = 0; sp < nsplit; sp++) {
        size_t gb = sp + nsplit * ((h0 + g) + H * qi), gs = sp + nsplit * g;
        ok &= same(Oo + gb * d, O1 + gs * d, d * 4) && same(Mo + gb, M1 + gs, 4) && same(Lo + gb, L1 + gs, 4);
      }
  }
  CHECK(ok, "gpu_index64 kvb_attn_coop (f32 and f16, GQA 4): the last pack at offsets up to 2^34 equals Hkv = 1",
        "partials differ");
out:
  vfree(K, bK), vfree(V, bK), vfree(Q, bQ), vfree(Mo, bP), vfree(Lo, bP), vfree(Oo, bO), vfree(Kh, bK / 2), vfree(Vh, bK / 2);
  free(k1), free(v1), free(q1), free(M1), free(L1), free(O1), free(kh1), free(vh1);
}

typedef struct {
  int H, rows, w, ld_src, off_src, ld_dst, off_dst, v, m, off, f, mid, nr, kept, consistent, nf4;
  float lT;
  const int *src, *cur;
  int *dst, *idx;
  const float *cw, *lntab, *fsrc;
  float *ocw, *ln, *ldn, *fdst;
  int *ocur;
} res_args;
static void restride_fn(void *p) {
  res_args *a = p;
  kvb_restride(a->H, a->rows, a->w, a->ld_src, a->off_src, a->ld_dst, a->off_dst, a->src, a->dst);
}
static void fill_fn(void *p) {
  res_args *a = p;
  kvb_fill_i32(a->H, a->rows, a->w, a->v, a->dst);
}
static void binit_fn(void *p) {
  res_args *a = p;
  kvb_bkvb_init(a->H, a->ld_dst, a->m, a->off, a->ocur, a->ocw);
}
static void qlist_fn(void *p) {
  res_args *a = p;
  kvb_bkvb_qlist(a->H, a->f, a->mid, a->nr, a->kept, a->ld_dst, a->consistent, a->lT, a->cur, a->cw, a->lntab, a->idx,
                 a->ln, a->ldn);
}
static void copy_fn(void *p) {
  res_args *a = p;
  kvb_copy_f4(a->nf4, a->fsrc, a->fdst);
}

/* k_resident.cl and k_perf.cl. Grid-stride kernels: one work-item per group and as many groups as
 * items, the last head's items run (kvb_restride, kvb_bkvb_init, kvb_bkvb_qlist), or a launch of
 * 2^22 groups of 64 whose last group's stride passes 2^31 (kvb_fill_i32, kvb_copy_f4). */
static void test_resident(void) {
  /* restride: an append of 2 rows of 32 words into the last rows of H = 2^14 heads of stride 2^13 */
  {
    const size_t H = 1 << 14, rows = 2, w = 32, ld = 1 << 13, off = ld - rows, per = rows * w;
    int *src = vmem(H * per * 4), *dst = vmem(H * ld * w * 4);
    if (src && dst) {
      for (size_t i = 0; i < per; i++) src[(H - 1) * per + i] = (int)(lcg >> 33) ^ (int)i, lcg = lcg * 6364136223846793005ull + 1;
      res_args a = {.H = (int)H, .rows = (int)rows, .w = (int)w, .ld_src = (int)rows, .off_src = 0, .ld_dst = (int)ld,
                    .off_dst = (int)off, .src = src, .dst = dst};
      for (size_t g = (H - 1) * per; g < H * per; g++) run_group((int)g, (int)(H * per), 1, restride_fn, &a);
      CHECK(H * ld * w > (size_t)INT_MAX && same(dst + ((H - 1) * ld + off) * w, src + (H - 1) * per, per * 4),
            "gpu_index64 kvb_restride: the last head's rows land at offset 2^32 − 64", "rows differ");
    }
    vfree(src, H * per * 4), vfree(dst, H * ld * w * 4);
  }
  /* fill: 4 × 2^15 × (2^15 + 1) words (> 2^32); the last of 2^22 groups of 64 strides by 2^28 */
  {
    const size_t H = 4, rows = 1 << 15, w = (1 << 15) + 1, count = H * rows * w, groups = 1 << 22, gsz = groups * KVB_WG;
    int *dst = vmem(count * 4);
    if (dst) {
      res_args a = {.H = (int)H, .rows = (int)rows, .w = (int)w, .v = -7, .dst = dst};
      run_lanes((int)(groups - 1), (int)groups, KVB_WG, fill_fn, &a);
      int ok = 1;
      size_t last = 0;
      for (size_t l = 0; l < KVB_WG; l++)
        for (size_t i = (groups - 1) * KVB_WG + l; i < count; i += gsz) ok &= dst[i] == -7, last = i > last ? i : last;
      ok &= dst[(groups - 1) * KVB_WG - 1] == 0 && last > (size_t)INT_MAX;
      CHECK(ok, "gpu_index64 kvb_fill_i32: 2^32 + 2^17 words, the last group's items up to offset 2^32 − 1", "fill differs");
    }
    vfree(dst, count * 4);
  }
  /* copy: nf4 = 2^31 − 1 float4 elements; the last group of 2^22 × 64 items ends past 2^31 − 2^28 */
  {
    const size_t nf4 = INT_MAX, groups = 1 << 22, gsz = groups * KVB_WG;
    float *src = vmem(nf4 * 16), *dst = vmem(nf4 * 16);
    if (src && dst) {
      for (size_t l = 0; l < KVB_WG; l++)
        for (size_t i = (groups - 1) * KVB_WG + l; i < nf4; i += gsz)
          for (size_t c = 0; c < 4; c++) src[4 * i + c] = rnd();
      res_args a = {.nf4 = (int)nf4, .fsrc = src, .fdst = dst};
      run_lanes((int)(groups - 1), (int)groups, KVB_WG, copy_fn, &a);
      int ok = 1;
      for (size_t l = 0; l < KVB_WG; l++)
        for (size_t i = (groups - 1) * KVB_WG + l; i < nf4; i += gsz) ok &= same(dst + 4 * i, src + 4 * i, 16);
      CHECK(ok, "gpu_index64 kvb_copy_f4: nf4 = 2^31 − 1, the last group's stride past 2^31", "copies differ");
    }
    vfree(src, nf4 * 16), vfree(dst, nf4 * 16);
  }
  /* block BalanceKV's lists: H = 2^14 heads of stride 2^18 (cur, cw: 2^32 entries) */
  {
    const size_t H = 1 << 14, ld = 1 << 18, m = 4, f = 2, nr = 1, kept = 3, kk = f + nr + kept, h = H - 1;
    int *cur = vmem(H * ld * 4), *idx = vmem(H * kk * 4), c1[4], i1[6];
    float *cw = vmem(H * ld * 4), *ln = vmem(H * kk * 4), *ldn = vmem(H * kk * 4), w1[4], l1[6], d1[6], lt[64];
    for (int e = 0; e < 64; e++) lt[e] = (float)log(ldexp(1.0, e));
    if (cur && idx && cw && ln && ldn) {
      res_args a = {.H = (int)H, .ld_dst = (int)ld, .m = (int)m, .off = 5, .ocur = cur, .ocw = cw};
      for (size_t g = h * m; g < H * m; g++) run_group((int)g, (int)(H * m), 1, binit_fn, &a);
      res_args a1 = {.H = 1, .ld_dst = (int)ld, .m = (int)m, .off = 5, .ocur = c1, .ocw = w1};
      int *c1big = vmem(ld * 4);
      float *w1big = vmem(ld * 4);
      int ok = c1big && w1big;
      if (ok) {
        a1.ocur = c1big, a1.ocw = w1big;
        for (size_t g = 0; g < m; g++) run_group((int)g, (int)m, 1, binit_fn, &a1);
        ok &= same(cur + h * ld, c1big, m * 4) && same(cw + h * ld, w1big, m * 4);
        memcpy(c1, c1big, sizeof c1), memcpy(w1, w1big, sizeof w1);
      }
      CHECK(ok, "gpu_index64 kvb_bkvb_init: the last head at offset 2^32 − 2^18 equals H = 1", "lists differ");
      for (size_t k = 0; k < kept; k++) cw[h * ld + k] = w1big[k] = (float)(1 << k), cur[h * ld + k] = c1big[k] = (int)(900 + k);
      res_args q = {.H = (int)H, .f = (int)f, .mid = 100, .nr = (int)nr, .kept = (int)kept, .ld_dst = (int)ld,
                    .consistent = 1, .lT = 1.5f, .cur = cur, .cw = cw, .lntab = lt, .idx = idx, .ln = ln, .ldn = ldn};
      for (size_t g = h * kk; g < H * kk; g++) run_group((int)g, (int)(H * kk), 1, qlist_fn, &q);
      q.H = 1, q.cur = c1big, q.cw = w1big, q.idx = i1, q.ln = l1, q.ldn = d1;
      for (size_t g = 0; g < kk; g++) run_group((int)g, (int)kk, 1, qlist_fn, &q);
      CHECK(same(idx + h * kk, i1, kk * 4) && same(ln + h * kk, l1, kk * 4) && same(ldn + h * kk, d1, kk * 4) && i1[5] == 902,
            "gpu_index64 kvb_bkvb_qlist: the last head's list from offset 2^32 − 2^18 equals H = 1", "lists differ");
      vfree(c1big, ld * 4), vfree(w1big, ld * 4);
    }
    vfree(cur, H * ld * 4), vfree(idx, H * kk * 4), vfree(cw, H * ld * 4), vfree(ln, H * kk * 4), vfree(ldn, H * kk * 4);
  }
}

typedef struct {
  int n, d, dv, m, b, nblk;
  const float *K, *V, *cw, *u;
  const int *cur;
  int *S, *ncur;
  float *P, *ncw;
} gram_args;
static void gram_fn(void *p) {
  gram_args *a = p;
  kvb_bkvb_gram_walk(a->n, a->d, a->dv, a->m, a->b, a->nblk, 0.0625f, 0.5f, 0.1f, 0.3f, a->K, a->V, a->cur, a->cw, a->u,
                     a->S, a->P);
}
static void halve_fn(void *p) {
  gram_args *a = p;
  kvb_bkvb_halving_par(a->n, a->m, a->S, a->cur, a->cw, a->ncur, a->ncw);
}

/* The Gram-tile walk and the parallel halving: H = 2^14 heads of n = 1024 rows, d = 256 (K, V: 2^32),
 * a sequence of m = 128 rows (blocks of 64) scattered over the head, the last head against H = 1. */
static void test_gram(void) {
  const size_t H = 1 << 14, n = 1024, d = 256, m = 128, b = 64, nblk = m / b, h = H - 1;
  size_t bK = H * n * d * 4, bI = H * n * 4;
  float *K = vmem(bK), *V = vmem(bK), *cw = vmem(bI), *u = vmem(bI), *P = vmem(bI), *ncw = vmem(bI);
  int *cur = vmem(bI), *S = vmem(bI), *ncur = vmem(bI);
  float *k1 = malloc(n * d * 4), *v1 = malloc(n * d * 4), w1[128], u1[128], p1[128], nw1[64];
  int c1[128], s1[128], nc1[64];
  if (!K || !V || !cw || !u || !P || !ncw || !cur || !S || !ncur || !k1 || !v1) {
    printf("SKIP gpu_index64 gram: cannot reserve the address space (MAP_NORESERVE refused)\n");
    goto out;
  }
  for (size_t i = 0; i < n * d; i++) k1[i] = K[h * n * d + i] = rnd(), v1[i] = V[h * n * d + i] = rnd();
  for (size_t i = 0; i < m; i++) {
    c1[i] = cur[h * n + i] = (int)((i * 7 + 3) % n), w1[i] = cw[h * n + i] = (float)(1 + (i & 1));
    u1[i] = u[h * m + i] = 0.5f * (rnd() + 1);
  }
  gram_args big = {(int)n, (int)d, (int)d, (int)m, (int)b, (int)nblk, K, V, cw, u, cur, S, ncur, P, ncw};
  gram_args small = {(int)n, (int)d, (int)d, (int)m, (int)b, (int)nblk, k1, v1, w1, u1, c1, s1, nc1, p1, nw1};
  for (size_t blk = 0; blk < nblk; blk++) {
    run_group((int)(h * nblk + blk), (int)(H * nblk), KVB_WG, gram_fn, &big);
    run_group((int)blk, (int)nblk, KVB_WG, gram_fn, &small);
  }
  run_group((int)h, (int)H, KVB_WG, halve_fn, &big);
  run_group(0, 1, KVB_WG, halve_fn, &small);
  int flips = 0;
  for (size_t i = 1; i < m; i++) flips += s1[i] != s1[i - 1];
  CHECK(same(S + h * m, s1, m * 4) && same(P + h * m, p1, m * 4) && same(ncur + h * n, nc1, m / 2 * 4) &&
            same(ncw + h * n, nw1, m / 2 * 4) && flips > 0,
        "gpu_index64 kvb_bkvb_gram_walk + kvb_bkvb_halving_par: the last head at offsets up to 2^32 equals H = 1",
        "signs, probabilities or survivors differ");
  /* the halving's own offsets h·n + p pass 2^31 only with a stride n beyond the walk's: n = 2^18 */
  {
    const size_t n2 = 1 << 18;
    int *cur2 = vmem(H * n2 * 4), *ncur2 = vmem(H * n2 * 4);
    float *cw2 = vmem(H * n2 * 4), *ncw2 = vmem(H * n2 * 4);
    if (cur2 && ncur2 && cw2 && ncw2) {
      memcpy(cur2 + h * n2, c1, m * 4), memcpy(cw2 + h * n2, w1, m * 4);
      gram_args big2 = {(int)n2, (int)d, (int)d, (int)m, (int)b, (int)nblk, K, V, cw2, u, cur2, S, ncur2, P, ncw2};
      run_group((int)h, (int)H, KVB_WG, halve_fn, &big2);
      CHECK(H * n2 > (size_t)INT_MAX && same(ncur2 + h * n2, nc1, m / 2 * 4) && same(ncw2 + h * n2, nw1, m / 2 * 4),
            "gpu_index64 kvb_bkvb_halving_par: the last head at stride 2^18 (offsets up to 2^32) equals H = 1",
            "survivors differ");
    }
    vfree(cur2, H * n2 * 4), vfree(ncur2, H * n2 * 4), vfree(cw2, H * n2 * 4), vfree(ncw2, H * n2 * 4);
  }
out:
  vfree(K, bK), vfree(V, bK), vfree(cw, bI), vfree(u, bI), vfree(P, bI), vfree(ncw, bI), vfree(cur, bI), vfree(S, bI),
      vfree(ncur, bI);
  free(k1), free(v1);
}

typedef struct {
  int nt, dk, dv, t, s, cap, ntb, n0;
  float delta2;
  const float *K, *V, *u;
  int *mc, *rep_pos, *cnt, *S_pos, *M_pos, *pre_i;
  float *rep, *S, *mu, *Mk, *Mv, *pre_d, *pre_v;
} sgb_args;
static void prep_fn(void *p) {
  sgb_args *a = p;
  kvb_subgen_prep(a->nt, a->dk, a->dv, a->cap, a->ntb, a->K, a->V, a->rep, a->mc, a->pre_d, a->pre_i, a->pre_v);
}
static void updb_fn(void *p) {
  sgb_args *a = p;
  kvb_subgen_update_b(a->nt, a->dk, a->dv, a->t, a->s, a->cap, a->n0, a->delta2, a->K, a->V, a->u, a->pre_d, a->pre_i,
                      a->pre_v, a->mc, a->rep, a->rep_pos, a->cnt, a->S, a->S_pos, a->mu, a->Mk, a->Mv, a->M_pos);
}

/* SubGen's batched update: H = 2^16 heads, chunks of nt = 256 tokens, d = 256 (the chunk's K, V:
 * 2^32), cap = 512 clusters (rep: 2^33, S: 2^34); two chunks (the second finds the first's
 * representatives through kvb_subgen_prep) of the last head against H = 1. */
static void test_subgen_batch(void) {
  const size_t H = 1 << 16, nt = 256, d = 256, t = 2, s = 8, cap = 512, ut = t + s, ntb = nt / SG_PT, h = H - 1;
  size_t bK = H * nt * d * 4, bU = H * nt * ut * 4, bT = H * nt * 4, bR = H * cap * d * 4, bS = bR * t, bC = H * cap * 4;
  size_t bM = H * s * d * 4;
  float *K = vmem(bK), *V = vmem(bK), *u = vmem(bU), *pd = vmem(bT), *pv = vmem(bT), *rep = vmem(bR), *S = vmem(bS);
  float *mu = vmem(H * 4), *Mk = vmem(bM), *Mv = vmem(bM);
  int *pi = vmem(bT), *mc = vmem(H * 4), *rp = vmem(bC), *cnt = vmem(bC), *Sp = vmem(bC * t), *Mp = vmem(H * s * 4);
  float *k1 = calloc(nt * d, 4), *v1 = calloc(nt * d, 4), *u1 = calloc(nt * ut, 4), *pd1 = calloc(nt, 4), *pv1 = calloc(nt, 4);
  float *r1 = calloc(cap * d, 4), *S1 = calloc(cap * t * d, 4), *mk1 = calloc(s * d, 4), *mv1 = calloc(s * d, 4), mu1 = 0;
  int *pi1 = calloc(nt, 4), *rp1 = calloc(cap, 4), *cn1 = calloc(cap, 4), *Sp1 = calloc(cap * t, 4), Mp1[8], mc1 = 0;
  if (!K || !V || !u || !pd || !pv || !rep || !S || !mu || !Mk || !Mv || !pi || !mc || !rp || !cnt || !Sp || !Mp || !k1 ||
      !v1 || !u1 || !pd1 || !pv1 || !r1 || !S1 || !mk1 || !mv1 || !pi1 || !rp1 || !cn1 || !Sp1) {
    printf("SKIP gpu_index64 subgen batch: cannot reserve the address space (MAP_NORESERVE refused)\n");
    goto out;
  }
  float C[4][256];
  for (size_t c = 0; c < 4; c++)
    for (size_t a = 0; a < d; a++) C[c][a] = 4 * rnd();
  for (size_t i = 0; i < s; i++) Mp1[i] = Mp[h * s + i] = -1;
  sgb_args big = {(int)nt, (int)d, (int)d, (int)t, (int)s, (int)cap, (int)ntb, 0, 1.0f, K, V, u,
                  mc, rp, cnt, Sp, Mp, pi, rep, S, mu, Mk, Mv, pd, pv};
  sgb_args small = {(int)nt, (int)d, (int)d, (int)t, (int)s, (int)cap, (int)ntb, 0, 1.0f, k1, v1, u1,
                    &mc1, rp1, cn1, Sp1, Mp1, pi1, r1, S1, &mu1, mk1, mv1, pd1, pv1};
  for (int chunk = 0; chunk < 2; chunk++) {
    for (size_t i = 0; i < nt; i++) { /* keys: one of 4 well-separated centers plus a small jitter */
      for (size_t a = 0; a < d; a++) k1[i * d + a] = K[(h * nt + i) * d + a] = C[(i + (size_t)chunk) % 4][a] + 0.01f * rnd();
      for (size_t a = 0; a < d; a++) v1[i * d + a] = V[(h * nt + i) * d + a] = rnd();
      for (size_t a = 0; a < ut; a++) u1[i * ut + a] = u[(h * nt + i) * ut + a] = 0.5f * (rnd() + 1);
    }
    big.n0 = small.n0 = chunk * (int)nt;
    for (size_t tb = 0; tb < ntb; tb++) {
      run_group((int)(h * ntb + tb), (int)(H * ntb), KVB_WG, prep_fn, &big);
      run_group((int)tb, (int)ntb, KVB_WG, prep_fn, &small);
    }
    run_group((int)h, (int)H, KVB_WG, updb_fn, &big);
    run_group(0, 1, KVB_WG, updb_fn, &small);
  }
  CHECK(mc[h] == mc1 && mc1 == 4 && mu[h] == mu1 && same(rep + h * cap * d, r1, cap * d * 4) &&
            same(rp + h * cap, rp1, cap * 4) && same(cnt + h * cap, cn1, cap * 4) && cn1[0] == 128 &&
            same(S + h * cap * t * d, S1, cap * t * d * 4) && same(Sp + h * cap * t, Sp1, cap * t * 4) &&
            same(Mk + h * s * d, mk1, s * d * 4) && same(Mv + h * s * d, mv1, s * d * 4) && same(Mp + h * s, Mp1, s * 4) &&
            same(pi + h * nt, pi1, nt * 4) && same(pd + h * nt, pd1, nt * 4),
        "gpu_index64 kvb_subgen_prep + kvb_subgen_update_b: the last head at offsets up to 2^34 equals H = 1",
        "m' %d vs %d, state differs", mc[h], mc1);
out:
  vfree(K, bK), vfree(V, bK), vfree(u, bU), vfree(pd, bT), vfree(pv, bT), vfree(rep, bR), vfree(S, bS), vfree(mu, H * 4);
  vfree(Mk, bM), vfree(Mv, bM), vfree(pi, bT), vfree(mc, H * 4), vfree(rp, bC), vfree(cnt, bC), vfree(Sp, bC * t);
  vfree(Mp, H * s * 4);
  free(k1), free(v1), free(u1), free(pd1), free(pv1), free(r1), free(S1), free(mk1), free(mv1), free(pi1), free(rp1);
  free(cn1), free(Sp1);
}

/* gpu_limits.h at the shapes above (accepted: 64-bit offsets) and where an int would wrap. */
static void test_limits(void) {
  CHECK(kvb_gpu_fits_attention(1 << 14, 1 << 10, 256, 256, 64, 64), "gpu_index64 guard accepts the attention shape above",
        "refused");
  /* the shape: H = 8, n = 2^18, d = 256, 256 queries, chunk 64: g·dv = 2^31 */
  CHECK(kvb_gpu_fits_attention(8, 1 << 18, 256, 256, 256, 64), "gpu_index64 guard accepts H=8 n=2^18 d=256 nq=256 chunk 64",
        "refused");
  /* group ids: nsplit·H·nq = 2^31 work-groups do not fit an int group id */
  CHECK(!kvb_gpu_fits_attention(1 << 11, 1 << 16, 64, 64, 1 << 10, 64), "gpu_index64 guard refuses 2^31 attention work-groups",
        "accepted");
  CHECK(!kvb_gpu_fits_attention(1, (size_t)1 << 31, 64, 64, 1, 256), "gpu_index64 guard refuses n = 2^31 (an int argument)",
        "accepted");
  CHECK(kvb_gpu_fits_wquery(1 << 14, 1 << 10, 256, 256, 300, 1) && !kvb_gpu_fits_wquery(1 << 16, 1 << 10, 64, 64, 8, 1 << 15),
        "gpu_index64 guard: weighted query (2^32 offsets accepted, 2^31 groups refused)", "wrong verdict");
  CHECK(kvb_gpu_fits_bkvb(1 << 14, 1 << 10, 256, 256, 64) && !kvb_gpu_fits_bkvb((size_t)1 << 26, 1 << 10, 8, 8, 16),
        "gpu_index64 guard: BalanceKV walk (2^32 offsets accepted, 2^32 groups refused)", "wrong verdict");
  CHECK(kvb_gpu_fits_subgen(1 << 14, 256, 256, 2, 8, 8, 1 << 10, 1 << 10, 1) &&
            !kvb_gpu_fits_subgen(1 << 14, 64, 64, 4, 8, 1 << 18, 1 << 10, 1 << 10, 1) &&
            !kvb_gpu_fits_subgen(1, 64, 64, 4, 8, 8, (size_t)1 << 31, 1, 1),
        "gpu_index64 guard: SubGen (2^33 offsets accepted; h·cap = 2^32 and stream position 2^31 refused)", "wrong verdict");
  CHECK(kvb_gpu_fits_gather(1 << 14, 1 << 10, 256, 256, 8) && !kvb_gpu_fits_gather((size_t)1 << 28, 1 << 10, 8, 8, 8),
        "gpu_index64 guard: gather (2^32 offsets accepted, 2^31 groups refused)", "wrong verdict");
  /* the resident kernels: the shapes above accepted; an int stride, an int row count, 2^31 groups refused */
  CHECK(kvb_gpu_fits_kvcache(1 << 12, 1 << 12, 256, 256) && kvb_gpu_fits_kvcache(1 << 14, 1 << 13, 32, 32) &&
            kvb_gpu_fits_kvcache(1 << 14, 1 << 18, 4, 4) && !kvb_gpu_fits_kvcache(1, (size_t)1 << 31, 4, 4),
        "gpu_index64 guard: KV cache (Hkv·cap·d = 2^32 and Hkv·cap = 2^32 rows accepted; cap = 2^31 refused)", "wrong verdict");
  CHECK(kvb_gpu_fits_coop(1 << 12, 1 << 14, 1000, 4096, 256, 256, 1024, 256) &&
            !kvb_gpu_fits_coop(1 << 12, 1 << 14, 1 << 16, 1 << 16, 64, 64, 1 << 11, 64) &&
            !kvb_gpu_fits_coop(4, 6, 10, 10, 4, 4, 1, 4) && !kvb_gpu_fits_coop(1, 1, 100, 50, 4, 4, 1, 4),
        "gpu_index64 guard: cooperative decode (the shape above accepted; 2^32 groups, H not a multiple of Hkv, ld < n "
        "refused)", "wrong verdict");
  CHECK(kvb_gpu_fits_subgen_batch(1 << 16, 256) && kvb_gpu_fits_subgen(1 << 16, 256, 256, 2, 8, 512, 512, 256, 1) &&
            !kvb_gpu_fits_subgen_batch((size_t)1 << 27, 256),
        "gpu_index64 guard: SubGen batched (the shape above accepted; 2^27 heads × 17 prep groups refused)", "wrong verdict");
}

int main(void) {
  if (sizeof(void *) < 8) {
    printf("SKIP gpu_index64: a 64-bit address space is needed\n");
    return 0;
  }
  test_attention();
  test_subgen();
  test_coop();
  test_resident();
  test_gram();
  test_subgen_batch();
  test_limits();
  UNIT_EXIT();
}

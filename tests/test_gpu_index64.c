/* test_gpu_index64.c — the device kernels at shapes whose buffer offsets pass 2^31 (README, GPU
 * kernels; gpu_limits.h). The kernel text (k_prelude.cl + k_*.cl) is compiled here as C with the
 * prelude's host branch (KVB_HOST_EMU: one work-item per group, the group id chosen by the test)
 * and with UBSan's signed-overflow check (the Makefile's rule for this test), so an `int` offset that
 * wraps aborts the test. Buffers are reserved with MAP_NORESERVE: a 16 GiB K costs only the pages
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
#include <sys/mman.h>

int kvb_host_group;
float kvb_host_half(uint16_t h) { return (float)h; } /* the half path is not run here */

#include "k_prelude.cl"
#include "k_attention.cl"
#include "k_bkvb.cl"
#include "k_subgen.cl"

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
}

int main(void) {
  if (sizeof(void *) < 8) {
    printf("SKIP gpu_index64: a 64-bit address space is needed\n");
    return 0;
  }
  test_attention();
  test_subgen();
  test_limits();
  UNIT_EXIT();
}

/* test_gpu_roofline — the roofline model's in-flight (Little's law) estimate of the kernels shaped
 * for the hardware (src/gpu/roofline.h) against the H100 targets of the GPU manual: the
 * cooperative decode (k_decode_coop.cl) at >= 70% of HBM bandwidth in float32 and float16, and a
 * BalanceKV round (k_bkvb_gram.cl) at >= 30% of FP32 peak, at both DRAM latencies (700 and 1000
 * cycles). The loads in flight per lane come from the kernel text (#define KVB_COOP_MLP and
 * KVB_GRAM_MLP, which scripts/ptx-mlp-check holds against nvcc's PTX), so the model follows the
 * kernels: the mutant runs the same model on the text with both set to 1 (a load loop that stores
 * each vector after its load) and must miss the decode target. Deterministic (no draws). */
#include "gpu.h"
#include "roofline.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

const char *kvb_test_kernel_text(void); /* the embedded kernel text (Makefile: renamed) */
static const char *g_text;
const char *kvb_gpu_kernel_source(void) { return g_text; }

/* text with "#define NAME <digits>" rewritten to "#define NAME 1" (space-padded in place) */
static char *one_load(const char *src) {
  char *t = strdup(src);
  const char *names[] = {"KVB_COOP_MLP", "KVB_GRAM_MLP"};
  for (int i = 0; i < 2; i++) {
    char pat[64];
    snprintf(pat, sizeof pat, "#define %s ", names[i]);
    char *q = strstr(t, pat);
    if (!q) continue;
    q += strlen(pat);
    *q++ = '1';
    while (*q >= '0' && *q <= '9') *q++ = ' ';
  }
  return t;
}

typedef struct {
  double dec_if[2][2]; /* [f32, f16][700, 1000 cycles]: fraction of HBM bandwidth */
  double dec_pred[2];
  double bkvb_if[2], bkvb_pred; /* fraction of FP32 peak */
} figures;

static figures model(const kvb_roof_device *h) {
  figures f;
  for (int e = 0; e < 2; e++) {
    kvb_roof_kernel k;
    kvb_roof_decode(&k, 32, 32, 32768, 128, 128, 1, e ? 2 : 4, 256, 1, h);
    kvb_roof_result r = kvb_roof_predict(&k, h, 0);
    f.dec_pred[e] = r.frac_bw, f.dec_if[e][0] = r.frac_bw_if[0], f.dec_if[e][1] = r.frac_bw_if[1];
  }
  kvb_roof_kernel k;
  kvb_roof_bkvb_round(&k, 32, 32768, 128, 128, 256, 1, h);
  kvb_roof_result r = kvb_roof_predict(&k, h, 0);
  f.bkvb_pred = r.frac_peak, f.bkvb_if[0] = r.frac_peak_if[0], f.bkvb_if[1] = r.frac_peak_if[1];
  return f;
}

static int meets(const figures *f) {
  return f->dec_if[0][0] >= 0.70 && f->dec_if[0][1] >= 0.70 && f->dec_if[1][0] >= 0.70 && f->dec_if[1][1] >= 0.70 &&
         f->bkvb_if[0] >= 0.30 && f->bkvb_if[1] >= 0.30;
}

int main(void) {
  const kvb_roof_device *h = kvb_roof_device_find("H100");
  CHECK(h != NULL, "roofline: the H100 entry", "no H100 in kvb_roof_devices");
  if (!h) UNIT_EXIT();
  g_text = kvb_test_kernel_text();
  double cm = kvb_roof_kernel_define("KVB_COOP_MLP"), gm = kvb_roof_kernel_define("KVB_GRAM_MLP");
  CHECK(cm >= 1 && gm >= 1, "roofline: loads in flight read from the kernel text",
        "KVB_COOP_MLP = %g, KVB_GRAM_MLP = %g (a #define missing from k_decode_coop.cl / k_bkvb_gram.cl)", cm, gm);
  figures f = model(h);
  printf("  H100 model, loads in flight per lane %g (decode) / %g (Gram staging): decode f32 %.1f%% of HBM "
         "(in-flight-limited %.1f%% / %.1f%% at 700 / 1000 cycles), f16 %.1f%% (%.1f%% / %.1f%%); BalanceKV round "
         "%.1f%% of FP32 peak (%.1f%% / %.1f%%)\n",
         cm, gm, 100 * f.dec_pred[0], 100 * f.dec_if[0][0], 100 * f.dec_if[0][1], 100 * f.dec_pred[1],
         100 * f.dec_if[1][0], 100 * f.dec_if[1][1], 100 * f.bkvb_pred, 100 * f.bkvb_if[0], 100 * f.bkvb_if[1]);
  CHECK(meets(&f), "roofline: the in-flight-limited H100 estimate meets the targets (decode >= 70% of HBM at f32 and f16, "
        "BalanceKV round >= 30% of FP32 peak, DRAM latency 700 and 1000 cycles)",
        "decode f32 %.3f/%.3f, f16 %.3f/%.3f, BalanceKV %.3f/%.3f", f.dec_if[0][0], f.dec_if[0][1], f.dec_if[1][0],
        f.dec_if[1][1], f.bkvb_if[0], f.bkvb_if[1]);
  /* the mutant: the same kernels with one load in flight per lane */
  char *mut = one_load(g_text);
  g_text = mut;
  double cm1 = kvb_roof_kernel_define("KVB_COOP_MLP"), gm1 = kvb_roof_kernel_define("KVB_GRAM_MLP");
  figures m = model(h);
  printf("  the same with one load in flight per lane (KVB_COOP_MLP = %g, KVB_GRAM_MLP = %g): decode f32 %.1f%% / %.1f%%, "
         "f16 %.1f%% / %.1f%% of HBM; BalanceKV round %.1f%% / %.1f%% of FP32 peak\n",
         cm1, gm1, 100 * m.dec_if[0][0], 100 * m.dec_if[0][1], 100 * m.dec_if[1][0], 100 * m.dec_if[1][1],
         100 * m.bkvb_if[0], 100 * m.bkvb_if[1]);
  CHECK(cm1 == 1 && gm1 == 1 && !meets(&m) && m.dec_if[1][1] < 0.5 * f.dec_if[1][1],
        "roofline mutant one-load-in-flight rejected: the model misses the targets when the kernel text keeps one load in flight",
        "KVB_COOP_MLP %g, KVB_GRAM_MLP %g; f16 decode %.3f (with the kernels' loads: %.3f)", cm1, gm1, m.dec_if[1][1],
        f.dec_if[1][1]);
  free(mut);
  UNIT_EXIT();
}

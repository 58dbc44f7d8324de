/* k_perf.cl — a streaming copy for kvb-gpucheck perf: the bandwidth a plain coalesced 16-byte
 * copy reaches on the device, used as the roofline's BW when perf runs on the device itself
 * (roofline.h). Work-item i of the launch copies float4 elements i, i + G, i + 2G, ... (G the
 * launch's work-items), nf4 elements in all. Written once against k_prelude.cl. */
KVB_KERNEL kvb_copy_f4(int nf4, KVB_GLOBAL const float *src, KVB_GLOBAL float *dst) {
  /* i is kvb_idx: near nf4 = 2^31 − 1 the last i + G would wrap an int */
  kvb_idx gsz = (kvb_idx)KVB_LOCAL_SIZE() * KVB_NUM_GROUPS();
  for (kvb_idx i = (kvb_idx)KVB_GROUP_ID() * KVB_LOCAL_SIZE() + KVB_LOCAL_ID(); i < nf4; i += gsz)
    KVB_STORE_F4(dst, i, KVB_LOAD_F4(src, i));
}

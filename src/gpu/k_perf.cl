/* k_perf.cl — a streaming copy for kvb-gpucheck perf: the bandwidth a plain coalesced 16-byte
 * copy reaches on the device, used as the roofline's BW when perf runs on the device itself
 * (roofline.h). Work-item i of the launch copies float4 elements i, i + G, i + 2G, ... (G the
 * launch's work-items), nf4 elements in all. Written once against k_prelude.cl. */
KVB_KERNEL kvb_copy_f4(int nf4, KVB_GLOBAL const float *src, KVB_GLOBAL float *dst) {
  int gsz = KVB_LOCAL_SIZE() * KVB_NUM_GROUPS();
  for (int i = KVB_GROUP_ID() * KVB_LOCAL_SIZE() + KVB_LOCAL_ID(); i < nf4; i += gsz) KVB_STORE_F4(dst, i, KVB_LOAD_F4(src, i));
}

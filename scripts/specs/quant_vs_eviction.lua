-- Quantization against token eviction at equal bytes: the field's standard
-- comparison. KIVI (Liu et al., arXiv 2402.02750: keys per channel, values per token, 2 or 4
-- bits, groups of 32, the last 128 tokens in full precision) and llama.cpp's q8_0 / q4_0 block
-- formats keep every token in fewer bits; StreamingLLM (sink_recent) and uniform sampling keep
-- fewer tokens exactly. Bytes are priced as the field prices them: an exactly kept token costs
-- its key and value in fp16, 2·(d_key + d_value) = 128 bytes here (the column mem_bytes_fp16;
-- kvbound's reference holds them in float64, 4× that, which would tilt the comparison 4× toward
-- quantization). At n = 2048, d = 32 the quantized caches hold
--   q4_0 2048·2·18 = 73728 B (= 576 kept tokens), KIVI-2 128000 B (= 1000), q8_0 2048·2·34 =
--   139264 B (= 1088), KIVI-4 159744 B (= 1248),
-- so sink_recent sweeps exactly those budgets and uniform_sample (f = w = 32) runs T = 1 (1056
-- tokens, between KIVI-2's and q8_0's bytes) and T = 2 (560, q4_0's); the plot is error against
-- fp16-priced bytes, one query at n = 2048 per trial. Scores scaled by 1/sqrt(d). Stream:
-- clusterable keys with skewed clusters and heavy-tailed values (as balancekv_vs_uniform).
name "quant_vs_eviction"
stream "clusterable" { n = 2048, d_key = 32, d_value = 32, m = 16, delta = 2, key_norm = 6, r = 6,
                       value_spread = 0.5, cluster_skew = 1 }
scale "inv_sqrt_d"
method "kivi" { bits = 2, group = 32, residual = 128, label = "KIVI-2" }
method "kivi" { bits = 4, group = 32, residual = 128, label = "KIVI-4" }
method "q8_0" { label = "q8_0" }
method "q4_0" { label = "q4_0" }
method "sink_recent" { sink = 4, label = "StreamingLLM" }
for T = 1, 2 do
  method "uniform_sample" { f = 32, w = 32, T = T, label = "uniform-T" .. T }
end
sweep { budget = { 576, 1000, 1088, 1248 } }
trials(8)
queries { at = { 2048 } }
measures { "error", "memory" }
-- caption quant_vs_eviction: at fp16 prices the quantized caches (q8_0 about 0.01, q4_0 and
-- KIVI-4 about 0.1) err far less than keeping fewer tokens exactly at the same bytes
-- (StreamingLLM and uniform sampling 0.8-1.7): quantization wins this comparison even priced as
-- the field prices it.
plot { name = "quant_vs_eviction", x = "mem_bytes_fp16", y = "rel_error", logx = true, logy = true,
       bound = "1", bound_title = "z = 0 (answer 0, keep nothing): relative error 1",
       title = "Quantized caches vs token eviction at equal bytes, kept tokens priced in fp16 (n = 2048, d = 32)",
       xlabel = "bytes per cache (exactly kept tokens at fp16, quantized caches as stored)",
       ylabel = "|z - Attn| / |Attn|" }

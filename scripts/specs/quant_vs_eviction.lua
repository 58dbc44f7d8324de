-- Quantization against token eviction at equal bytes: the field's standard
-- comparison. KIVI (Liu et al., arXiv 2402.02750: keys per channel, values per token, 2 or 4
-- bits, groups of 32, the last 128 tokens in full precision) and llama.cpp's q8_0 / q4_0 block
-- formats keep every token in fewer bits; StreamingLLM (sink_recent) and uniform sampling keep
-- fewer tokens exactly. Memory is bytes as stored (README, Methods and streams: a kept token
-- costs 8·(d_key + d_value) = 512 bytes here). At n = 2048, d = 32 the quantized caches hold
--   q4_0 2048·2·18 = 73728 B (= 144 kept tokens), KIVI-2 128000 B (= 250), q8_0 2048·2·34 =
--   139264 B (= 272), KIVI-4 159744 B (= 312),
-- so sink_recent sweeps exactly those budgets and uniform_sample (f = w = 32) runs T = 3 (312
-- tokens, KIVI-4's bytes), 4 (188) and 5 (126); the plot is error against bytes, one query at
-- n = 2048 per trial. Scores scaled by 1/sqrt(d). Stream: clusterable keys with skewed clusters
-- and heavy-tailed values (as balancekv_vs_uniform).
name "quant_vs_eviction"
stream "clusterable" { n = 2048, d_key = 32, d_value = 32, m = 16, delta = 2, key_norm = 6, r = 6,
                       value_spread = 0.5, cluster_skew = 1 }
scale "inv_sqrt_d"
method "kivi" { bits = 2, group = 32, residual = 128, label = "KIVI-2" }
method "kivi" { bits = 4, group = 32, residual = 128, label = "KIVI-4" }
method "q8_0" { label = "q8_0" }
method "q4_0" { label = "q4_0" }
method "sink_recent" { sink = 4, label = "StreamingLLM" }
for T = 3, 5 do
  method "uniform_sample" { f = 32, w = 32, T = T, label = "uniform-T" .. T }
end
sweep { budget = { 144, 250, 272, 312 } }
trials(8)
queries { at = { 2048 } }
measures { "error", "memory" }
plot { name = "quant_vs_eviction", x = "mem_bytes", y = "rel_error", logx = true, logy = true,
       title = "Quantized caches vs token eviction at equal bytes (n = 2048, d = 32)",
       xlabel = "bytes stored", ylabel = "|z - Attn| / |Attn|" }

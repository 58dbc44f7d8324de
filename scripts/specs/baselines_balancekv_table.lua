-- 003 §4.2's LongBench comparison, attention-level synthetic analog (not the LLM benchmark):
-- block BalanceKV vs uniform sampling, StreamingLLM (sink_recent), SnapKV and PyramidKV at
-- equal memory. The budget of every token-eviction method equals balancekv_block's kept count
-- f + w + floor(m/2^T) with f = w = 32, m = 960 (n = 1024): 544, 304, 184 tokens at T = 1, 2, 3.
-- PyramidKV is run at its middle layer 15 of 32 (beta 20), whose budget is close to the mean.
-- Queries reach SnapKV/PyramidKV only at the query points (every 64 tokens), so their
-- observation window is the last 16 query points (src/baselines/snapkv.c, "Reading").
-- Error vs stored vectors, one curve per method; z = 0 is the trivial control.
name "baselines_balancekv_table"
stream "clusterable" { n = 1024, d_key = 32, d_value = 32, m = 16, delta = 2, key_norm = 6, r = 6,
                       value_spread = 0.5, cluster_skew = 1 }
scale "inv_sqrt_d"
method "balancekv_block" { f = 32, w = 32, b = 128, label = "BalanceKV" }
method "uniform_sample" { f = 32, w = 32, label = "uniform" }
method "sink_recent" { sink = 4, label = "StreamingLLM" }
method "snapkv" { window = 16, kernel = 5, label = "SnapKV" }
method "pyramidkv" { window = 16, kernel = 5, layers = 32, layer = 15, label = "PyramidKV" }
method "z_zero" { label = "z_zero" }
sweep { T = { 1, 2, 3 }, budget = { 544, 304, 184 } }
trials(8)
queries { every = 64 }
measures { "error", "memory" }
plot { name = "baselines_balancekv_table", x = "mem_vectors", y = "rel_error", logy = true,
       title = "003 LongBench-table analog: relative error vs memory (n = 1024, d = 32)",
       xlabel = "stored vectors", ylabel = "|z - Attn| / |Attn|" }

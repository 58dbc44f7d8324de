-- 000 §5 / 001 §5's LongEval comparison, attention-level synthetic analog (not the LLM
-- benchmark): ClusterGen's practical form (recent_kcenter: window B/2 + B/2 k-center tokens) vs
-- H2O, StreamingLLM (sink_recent) and uniform sampling at equal memory B = 48, 64, 160 tokens
-- (uniform: f = w = 16 + floor(512/2^T), T = 5, 4, 2; n = 544). Scores unscaled as in 000.
-- H2O accumulates attention only from the queries it is asked (every 8 tokens here:
-- src/baselines/h2o.c, "Reading"). Error vs stored vectors, one curve per method.
name "baselines_subgen_table"
stream "clusterable" { n = 544, d_key = 16, d_value = 16, m = 8, delta = 1, key_norm = 4, r = 1.5 }
scale(1)
method "recent_kcenter" { label = "ClusterGen" }
method "h2o" { label = "H2O" }
method "sink_recent" { sink = 4, label = "StreamingLLM" }
method "uniform_sample" { f = 16, w = 16, label = "uniform" }
method "z_zero" { label = "z_zero" }
-- (h2o's recent window defaults to budget/2: 24, 32, 80)
sweep { budget = { 48, 64, 160 }, window = { 24, 32, 80 }, centers = { 24, 32, 80 },
        T = { 5, 4, 2 } }
trials(8)
local at = {}
for j = 64, 544, 8 do at[#at + 1] = j end -- from 64 on: uniform's T = 5 needs a middle of 32
queries { at = at }
measures { "error", "memory" }
plot { name = "baselines_subgen_table", x = "mem_vectors", y = "rel_error", logy = true,
       title = "000/001 LongEval-table analog: relative error vs memory (n = 544, d = 16)",
       xlabel = "stored vectors", ylabel = "|z - Attn| / |Attn|" }

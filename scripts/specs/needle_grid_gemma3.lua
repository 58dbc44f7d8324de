-- Needle in a haystack inside Gemma 3 270M, question-agnostic (the twin of needle_grid): generated
-- niah_single tasks (BOS first; a task is its seed) at three needle depths of a 1024-token
-- context; the context alone is compressed, the question and the answer cue are fed after it
-- through the compressed cache. The methods replace attention on the three global layers (5, 11,
-- 17) only; the 15 local layers keep their 512-token window exactly, as the model does. Every
-- method holds the same memory per global cache after the prompt: B = 32 + (n0 - 32)/4 tokens
-- (compression about 1/4, as 003 Fig. 4), n0 ≈ 1000, so the budget methods get B = 272; KIVI-2
-- keeps every token in 2 bits. Columns: exact-match accuracy of the greedy answer and the
-- answer's log-likelihood relative to exact attention. The claims long_context.gemma3.* run the
-- question-aware grids (`kvb-props --full`).
-- tier: full
name "needle_grid_gemma3"
tasks { family = "niah_single", lengths = { 1024 }, depths = { 0.1, 0.5, 0.9 }, per_cell = 1,
        mode = "agnostic", seed = 1, model = "gemma3" }
method "balancekv_block" { T = 2, f = 16, w = 16, b = 64, label = "BalanceKV" }
method "uniform_sample" { T = 2, f = 16, w = 16, label = "uniform" }
method "sink_recent" { budget = 272, sink = 4, label = "StreamingLLM" }
method "snapkv" { budget = 272, window = 16, kernel = 5, label = "SnapKV" }
method "kivi" { bits = 2, group = 32, residual = 128, label = "KIVI-2" }
seed(1)

-- Block size x compression: error and runtime of the block-parallel BalanceKV (003 Fig. 3
-- analog, 003 App. B: blocks of 64, 128, 256 tokens). Time columns are wall clock (not
-- reproducible across machines or --jobs); the error columns are.
name "balancekv_block_size"
stream "clusterable" { n = 2048, d_key = 32, d_value = 32, m = 16, delta = 2, key_norm = 6, r = 6,
                       value_spread = 0.5, cluster_skew = 1 }
scale "inv_sqrt_d"
method "balancekv_block" { f = 32, w = 32, label = "BalanceKV" }
sweep "b" { 64, 128, 256 }
sweep "T" { 1, 2, 3 }
trials(8)
queries { last = true }
measures { "error", "memory", "time" }
-- caption block_error: error grows with T for every block size and the three sizes nearly
-- coincide (b = 64 highest at T = 3): 003 Fig. 3(b)'s decrease with b is small on this stream;
-- points above the dashed line (relative error 1) are worse than answering 0.
plot { name = "block_error", x = "T", y = "rel_error", logy = true,
       bound = "1", bound_title = "z = 0 (answer 0, keep nothing): relative error 1",
       title = "003 Fig. 3 analog: BalanceKV relative error vs T for block sizes b",
       xlabel = "T (compression 2^-T)", ylabel = "|z - Attn| / |Attn|" }
plot { name = "block_time", x = "T", y = "update_s", logy = true,
       title = "003 Fig. 3 analog: BalanceKV total update time vs T for block sizes b",
       xlabel = "T (compression 2^-T)", ylabel = "seconds for n = 2048 updates" }

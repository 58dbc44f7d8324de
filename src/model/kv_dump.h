/* kv_dump.h — a real model's post-RoPE queries, keys and values of every layer written as .npy
 * in the layout the "npy" stream reads (src/model/README.md, The real model); `kvbound dump-kv` and its alias
 * build/kvb-dump-kv are the command line around it (src/app/dump_kv_cli.c). */
#ifndef KVB_KV_DUMP_H
#define KVB_KV_DUMP_H

#include <stddef.h>

/* Runs the model (path NULL = SmolLM2 at the default path; a key of lm.h's registry = that model
 * at its default path, with its BOS first where it takes one, as llama.cpp feeds Gemma 3 270M;
 * another string = the path of a GGUF of a known architecture, arch.h) over the text (a file, or "debian-licenses":
 * real_text.h), keeping its first `tokens` tokens (0 = all, at most the model's context), and
 * writes into the directory out (created when absent):
 *   out/layerLL_q.npy [n_head, n, head_dim], out/layerLL_k.npy and out/layerLL_v.npy
 *   [n_head_kv, n, head_dim] (float32, LL = 00..29; Gemma 3: 00..17, [4, n, 256] and [1, n, 256]), out/tokens.txt (the token ids, one a line)
 *   and out/norms.tsv (per layer: mean and sd of ‖q‖, ‖k‖, ‖k − mean key‖, ‖v‖ over heads and
 *   tokens; 001 Table 1, 003 Table 3).
 * *n_out gets n. KVB_EINVAL when the text has fewer than `tokens` tokens or none; the model's
 * and the text's errors as kvb_model_load and kvb_text_read give them. */
int kvb_dump_kv(const char *text, long tokens, const char *model, const char *out, size_t *n_out);

#endif

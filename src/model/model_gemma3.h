/* model_gemma3.h — the Gemma 3 270M file (architecture "gemma3", read into the one model of
 * model.h by its architecture record, arch.h): where it is and how big. The known models and
 * their files are lm.h's table; these names stay for the callers that ask for this file. */
#ifndef KVB_MODEL_GEMMA3_H
#define KVB_MODEL_GEMMA3_H

#include <stddef.h>

#include "model.h"

#define KVB_GEMMA3_FILE "gemma-3-270m-q4_k_m.gguf"
#define KVB_GEMMA3_SIZE 253113024ull /* bytes; SHA-256 in scripts/fetch-model */
#define KVB_GEMMA3_ENV "KVB_MODEL_GEMMA3"

/* Default path lookup and availability (as kvb_model_default_path / kvb_model_available, with
 * $KVB_MODEL_GEMMA3 and scripts/fetch-model --model gemma3). */
int kvb_gemma3_default_path(char *buf, size_t cap);
int kvb_gemma3_available(void);

#endif

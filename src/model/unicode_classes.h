/* unicode_classes.h — the Unicode classes the BPE pre-tokenizer needs: letters (\p{L}),
 * numbers (\p{N}, what the Digits pre-tokenizer splits on) and White_Space (\s). The L and N
 * tables are generated data (scripts/gen-unicode-classes). */
#ifndef KVB_UNICODE_CLASSES_H
#define KVB_UNICODE_CLASSES_H

#include <stddef.h>
#include <stdint.h>

typedef struct { uint32_t lo, hi; } kvb_uc_range;
extern const kvb_uc_range kvb_uc_letter[];
extern const size_t kvb_uc_letter_n;
extern const kvb_uc_range kvb_uc_number[];
extern const size_t kvb_uc_number_n;

int kvb_uc_is_letter(uint32_t cp);
int kvb_uc_is_number(uint32_t cp);
/* The Unicode White_Space property (what \s matches in the tokenizer's regex). */
int kvb_uc_is_space(uint32_t cp);

#endif

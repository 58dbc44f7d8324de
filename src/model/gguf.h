/* gguf.h — reading GGUF version 3 files (the llama.cpp model format) and dequantizing their
 * tensors to float32.
 *
 * The layout (GGUF specification, ggml's docs/gguf.md), all little-endian:
 *   "GGUF" magic, uint32 version (3), uint64 tensor count, uint64 metadata count;
 *   metadata: key (uint64 length + bytes), uint32 value type, value — the scalar types
 *     uint8 int8 uint16 int16 uint32 int32 float32 bool string uint64 int64 float64, or an array
 *     (uint32 element type, uint64 count, elements; arrays may nest);
 *   tensor infos: name, uint32 ndim (1..4), ndim × uint64 dims (dims[0] is the contiguous one),
 *     uint32 ggml type, uint64 offset relative to the data section;
 *   padding to `general.alignment` (default 32, a power of two), then the data section.
 *
 * Every malformed file is KVB_EFORMAT with a message naming what is wrong — bad magic, another
 * version, a count or length larger than the bytes left could hold, an unknown value or tensor
 * type, a dimension of 0 or an element count that overflows, a row length that is not a whole
 * number of quantization blocks, a misaligned offset or a tensor running past the end of the
 * file, a duplicate key or tensor name. The parser never reads outside its buffer and allocates
 * only after a count has been checked against the bytes present (tests/fuzz_gguf.c). */
#ifndef KVB_GGUF_H
#define KVB_GGUF_H

#include <stddef.h>
#include <stdint.h>

enum {
  KVB_GGUF_UINT8 = 0, KVB_GGUF_INT8 = 1, KVB_GGUF_UINT16 = 2, KVB_GGUF_INT16 = 3,
  KVB_GGUF_UINT32 = 4, KVB_GGUF_INT32 = 5, KVB_GGUF_FLOAT32 = 6, KVB_GGUF_BOOL = 7,
  KVB_GGUF_STRING = 8, KVB_GGUF_ARRAY = 9, KVB_GGUF_UINT64 = 10, KVB_GGUF_INT64 = 11,
  KVB_GGUF_FLOAT64 = 12
};

/* ggml tensor types this reader knows the storage size of. Dequantization is implemented for
 * F32, F16, Q4_0, Q4_1, Q5_0, Q8_0, Q4_K and Q6_K (SmolLM2's Q4_1 file and Gemma 3's Q4_K_M
 * file, which mixes F32, Q5_0, Q8_0, Q4_K and Q6_K); the others are recognized (so their size
 * can be checked) but kvb_gguf_dequant refuses them. */
enum {
  KVB_GGML_F32 = 0, KVB_GGML_F16 = 1, KVB_GGML_Q4_0 = 2, KVB_GGML_Q4_1 = 3,
  KVB_GGML_Q5_0 = 6, KVB_GGML_Q5_1 = 7, KVB_GGML_Q8_0 = 8, KVB_GGML_Q4_K = 12,
  KVB_GGML_Q6_K = 14, KVB_GGML_BF16 = 30
};

#define KVB_GGUF_MAX_DIMS 4

typedef struct {
  char *key;      /* NUL-terminated copy */
  uint32_t type;  /* KVB_GGUF_* */
  union { uint64_t u; int64_t i; double f; } num; /* integer, bool (0/1) and float scalars */
  char *str;      /* STRING: NUL-terminated copy (the bytes may contain NULs: use str_len) */
  uint64_t str_len;
  /* ARRAY: element type and count. Scalar elements are widened into arr_u / arr_i / arr_f
   * (unsigned, signed or bool, float — the one matching arr_type); string elements into
   * arr_str / arr_str_len. Nested arrays are checked but not kept (arr_n counts them). */
  uint32_t arr_type;
  uint64_t arr_n;
  uint64_t *arr_u;
  int64_t *arr_i;
  double *arr_f;
  char **arr_str;
  uint64_t *arr_str_len;
} kvb_gguf_kv;

typedef struct {
  char *name;
  uint32_t ndim;
  uint64_t ne[KVB_GGUF_MAX_DIMS]; /* ne[0] contiguous; unused dims are 1 */
  uint64_t n_elements;
  uint32_t type;                  /* KVB_GGML_* */
  uint64_t offset;                /* from the start of the data section */
  uint64_t n_bytes;
  const unsigned char *data;      /* into the buffer the file was parsed from */
} kvb_gguf_tensor;

typedef struct {
  uint32_t version;
  uint64_t n_kv, n_tensors;
  kvb_gguf_kv *kv;
  kvb_gguf_tensor *tensors;
  uint64_t alignment;
  uint64_t data_offset;           /* start of the data section in the file */
  unsigned char *owned;           /* the file image when read by kvb_gguf_read */
  size_t owned_len;
} kvb_gguf;

/* Parses a GGUF image of len bytes. Tensor data pointers point into buf, which must outlive
 * *out. On error *out is zeroed and nothing stays allocated. */
int kvb_gguf_parse(const unsigned char *buf, size_t len, kvb_gguf *out);
/* Reads a whole file and parses it (the image is owned by *out); messages start with the path. */
int kvb_gguf_read(const char *path, kvb_gguf *out);
void kvb_gguf_free(kvb_gguf *g); /* NULL and a zeroed struct are fine */

/* Metadata lookups; NULL / KVB_ENOTFOUND when absent, KVB_EFORMAT when of another type. */
const kvb_gguf_kv *kvb_gguf_find(const kvb_gguf *g, const char *key);
/* Any integer type whose value fits in uint64 (negative values are refused). */
int kvb_gguf_get_uint(const kvb_gguf *g, const char *key, uint64_t *out);
int kvb_gguf_get_float(const kvb_gguf *g, const char *key, double *out); /* float32/64 */
int kvb_gguf_get_str(const kvb_gguf *g, const char *key, const char **out);
const kvb_gguf_tensor *kvb_gguf_tensor_find(const kvb_gguf *g, const char *name);

/* Name of a ggml type ("Q4_1"), NULL when unknown; elements per block and bytes per block. */
const char *kvb_ggml_type_name(uint32_t type);
int kvb_ggml_type_block(uint32_t type, uint64_t *block_elems, uint64_t *block_bytes);

/* Dequantizes n elements (a multiple of the type's block) of type `type` from src to float32.
 * The block formats (ggml's ggml-common.h), x = dequantized element:
 *   Q4_0: fp16 d, 16 bytes of nibbles; 32 elements; x = d·(q − 8);
 *   Q4_1: fp16 d, fp16 m, 16 bytes of nibbles; 32 elements; x = d·q + m;
 *   Q5_0: fp16 d, 4 bytes qh (a little-endian uint32), 16 bytes of nibbles; 32 elements;
 *         x = d·(q − 16) with q = nibble | (bit j of qh) << 4 for element j (0..31);
 *   Q8_0: fp16 d, 32 int8; x = d·q;
 * nibble layout: byte j holds element j in its low nibble and element j + 16 in its high one.
 * The "k-quants" work on super-blocks of 256 elements (ggml-common.h block_q4_K, block_q6_K;
 * the dequantization as in ggml-quants.c dequantize_row_q4_K / _q6_K — facts, not code):
 *   Q4_K (144 bytes): fp16 d, fp16 dmin, 12 bytes of packed 6-bit scales sc[8] and mins mn[8],
 *         128 bytes of nibbles. Sub-block s (elements 32s..32s+31) is x = d·sc[s]·q − dmin·mn[s].
 *         Packing: for s < 4, sc[s] = b[s] & 63, mn[s] = b[s+4] & 63; for s ≥ 4,
 *         sc[s] = (b[s+4] & 15) | (b[s−4] >> 6) << 4, mn[s] = (b[s+4] >> 4) | (b[s] >> 6) << 4.
 *         Nibbles: the 64 elements 64c..64c+63 use bytes 32c..32c+31: element 64c+i is the low
 *         nibble of byte 32c+i, element 64c+32+i its high nibble (i < 32).
 *   Q6_K (210 bytes): 128 bytes ql (low 4 bits), 64 bytes qh (high 2 bits), 16 int8 scales,
 *         fp16 d. Element e = 128h + 32r + i (h < 2, r < 4, i < 32) has the 6-bit
 *         q = lo | hi << 4 with lo a nibble of ql[64h + 32(r & 1) + i] (the low nibble for
 *         r < 2, the high one for r ≥ 2) and
 *         hi = (qh[32h + i] >> 2r) & 3; x = d·scale[8h + 2r + i/16]·(q − 32).
 * KVB_EINVAL for an unsupported type or n not a whole number of blocks. */
int kvb_gguf_dequant(uint32_t type, const void *src, uint64_t n, float *dst);
/* IEEE binary16 bits -> float (exact). */
float kvb_half_to_float(uint16_t h);

#endif

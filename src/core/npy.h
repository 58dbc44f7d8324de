/* npy.h — reading and writing NumPy .npy files, so users can feed Q/K/V dumped from their own
 * models to every method and check.
 *
 * Supported: format versions 1.0, 2.0 and 3.0 (the header length is 2 bytes in 1.0, 4 bytes in
 * 2.0/3.0; 3.0 only allows UTF-8 in the header), dtypes '<f2', '<f4', '<f8' (little-endian
 * IEEE half, single, double; half is widened to double exactly, every half being a double),
 * C order, 1 to 3 dimensions (the stream loader wants [n, d] or [heads, n, d]).
 *
 * Anything else — bad magic, unknown version, truncated header, a header that is not the dict
 * numpy writes, big-endian or non-float dtype, fortran_order True, a data size that disagrees
 * with the shape, a non-finite element — is KVB_EFORMAT (KVB_EIO for a file that cannot be
 * opened) with a message naming what is wrong. The parser never reads outside its buffer and
 * allocates only after the shape has been checked against the bytes actually present, so a
 * hostile file cannot make it allocate more than the file's size (tests/fuzz_npy.c). */
#ifndef KVB_NPY_H
#define KVB_NPY_H

#include <stddef.h>

#define KVB_NPY_MAX_DIMS 3

typedef struct {
  size_t ndim;
  size_t shape[KVB_NPY_MAX_DIMS];
  size_t count;  /* product of shape */
  double *data;  /* count doubles, C order; owned */
  int itemsize;  /* bytes per element in the file: 2, 4 or 8 */
  int version;   /* major format version of the file: 1, 2 or 3 */
} kvb_npy_array;

/* Parses a whole .npy image in memory. On success *out owns data (free with kvb_npy_free);
 * on error *out is zeroed. */
int kvb_npy_parse(const unsigned char *buf, size_t len, kvb_npy_array *out);
/* Reads and parses a file; messages start with the path. */
int kvb_npy_read(const char *path, kvb_npy_array *out);
void kvb_npy_free(kvb_npy_array *a); /* NULL is fine */

/* Serializes data (C order, shape[0..ndim-1], 1 <= ndim <= 3) as dtype "<f8" or "<f4"
 * (values rounded to float) with format major version 1, 2 or 3. *out is malloc'd. */
int kvb_npy_serialize(const double *data, size_t ndim, const size_t *shape, const char *dtype,
                      int version, unsigned char **out, size_t *out_len);
/* Writes a file as kvb_npy_serialize does. */
int kvb_npy_write(const char *path, const double *data, size_t ndim, const size_t *shape,
                  const char *dtype, int version);

/* IEEE binary16 bit pattern -> double (exact). */
double kvb_half_to_double(unsigned h);

#endif

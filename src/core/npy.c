/* npy.c — the .npy reader and writer (see npy.h for what is accepted and why).
 *
 * The header is a Python dict literal, e.g. {'descr': '<f8', 'fortran_order': False,
 * 'shape': (3, 4), } padded with spaces and ended by '\n'. It is parsed by a small
 * bounds-checked scanner that accepts exactly the three keys numpy writes, in any order. */
#include "npy.h"
#include "kvb_error.h"
#include "read_file.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

double kvb_half_to_double(unsigned h) {
  unsigned sign = (h >> 15) & 1u, ex = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  double v;
  if (ex == 0)
    v = ldexp((double)man, -24); /* subnormal (or zero): man · 2^-24 */
  else if (ex == 31)
    v = man ? NAN : INFINITY;
  else
    v = ldexp((double)(man | 0x400u), (int)ex - 25); /* (1024 + man) · 2^(ex-15-10) */
  return sign ? -v : v;
}

/* ---- header scanner ---- */

typedef struct {
  const char *p, *end;
} scan;

static void skip_ws(scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

static int eat(scan *s, char c) {
  skip_ws(s);
  if (s->p < s->end && *s->p == c) {
    s->p++;
    return 1;
  }
  return 0;
}

/* A quoted string (either quote) copied into buf (truncated safely; *len gets its length). */
static int read_str(scan *s, char *buf, size_t cap, size_t *len) {
  skip_ws(s);
  if (s->p >= s->end || (*s->p != '\'' && *s->p != '"')) return 0;
  char q = *s->p++;
  size_t n = 0;
  while (s->p < s->end && *s->p != q) {
    if (n + 1 < cap) buf[n] = *s->p;
    n++;
    s->p++;
  }
  if (s->p >= s->end) return 0;
  s->p++;
  buf[n + 1 < cap ? n : cap - 1] = '\0';
  *len = n;
  return 1;
}

static int read_word(scan *s, const char *w) {
  skip_ws(s);
  size_t n = strlen(w);
  if ((size_t)(s->end - s->p) >= n && memcmp(s->p, w, n) == 0) {
    s->p += n;
    return 1;
  }
  return 0;
}

static int parse_shape(scan *s, kvb_npy_array *a) {
  if (!eat(s, '(')) return KVB_ERROR(KVB_EFORMAT, "npy header: 'shape' is not a tuple");
  a->ndim = 0;
  for (;;) {
    skip_ws(s);
    if (eat(s, ')')) break;
    if (s->p >= s->end || *s->p < '0' || *s->p > '9')
      return KVB_ERROR(KVB_EFORMAT, "npy header: 'shape' holds something other than "
                                    "non-negative integers");
    uint64_t v = 0;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
      if (v > (UINT64_MAX - 9) / 10)
        return KVB_ERROR(KVB_EFORMAT, "npy header: a 'shape' entry overflows");
      v = v * 10 + (uint64_t)(*s->p++ - '0');
    }
    if (s->p < s->end && *s->p == 'L') s->p++; /* Python 2 long suffix */
    if (a->ndim == KVB_NPY_MAX_DIMS)
      return KVB_ERROR(KVB_EFORMAT, "npy header: more than %d dimensions (expected [n, d] or "
                                    "[heads, n, d])", KVB_NPY_MAX_DIMS);
    if (v > SIZE_MAX) return KVB_ERROR(KVB_EFORMAT, "npy header: a 'shape' entry overflows");
    a->shape[a->ndim++] = (size_t)v;
    if (eat(s, ')')) break;
    if (!eat(s, ',')) return KVB_ERROR(KVB_EFORMAT, "npy header: 'shape' tuple is malformed");
  }
  if (a->ndim == 0)
    return KVB_ERROR(KVB_EFORMAT, "npy header: shape () is a scalar (expected [n, d] or "
                                  "[heads, n, d])");
  return KVB_OK;
}

static int parse_header(const char *h, size_t len, kvb_npy_array *a) {
  scan s = {h, h + len};
  int have_descr = 0, have_fortran = 0, have_shape = 0;
  if (!eat(&s, '{')) return KVB_ERROR(KVB_EFORMAT, "npy header: does not start with '{'");
  for (;;) {
    if (eat(&s, '}')) break;
    char key[32];
    size_t klen;
    if (!read_str(&s, key, sizeof key, &klen))
      return KVB_ERROR(KVB_EFORMAT, "npy header: expected a quoted key or '}'");
    if (!eat(&s, ':')) return KVB_ERROR(KVB_EFORMAT, "npy header: expected ':' after '%s'", key);
    if (strcmp(key, "descr") == 0 && klen == 5) {
      char d[16];
      size_t dlen;
      if (!read_str(&s, d, sizeof d, &dlen))
        return KVB_ERROR(KVB_EFORMAT, "npy header: 'descr' is not a string (structured dtypes "
                                      "are unsupported)");
      if (dlen == 3 && d[1] == 'f' && (d[0] == '<' || d[0] == '|') && d[2] == '2')
        a->itemsize = 2;
      else if (dlen == 3 && d[0] == '<' && d[1] == 'f' && d[2] == '4')
        a->itemsize = 4;
      else if (dlen == 3 && d[0] == '<' && d[1] == 'f' && d[2] == '8')
        a->itemsize = 8;
      else if (dlen >= 2 && d[0] == '>')
        return KVB_ERROR(KVB_EFORMAT, "npy: dtype '%s' is big-endian (only little-endian "
                                      "<f2, <f4, <f8 are supported)", d);
      else
        return KVB_ERROR(KVB_EFORMAT, "npy: unsupported dtype '%s' (expected <f2, <f4 or <f8)",
                         d);
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0 && klen == 13) {
      if (read_word(&s, "False"))
        have_fortran = 1;
      else if (read_word(&s, "True"))
        return KVB_ERROR(KVB_EFORMAT, "npy: fortran_order is True (only C order is supported; "
                                      "save np.ascontiguousarray(x))");
      else
        return KVB_ERROR(KVB_EFORMAT, "npy header: 'fortran_order' is neither True nor False");
    } else if (strcmp(key, "shape") == 0 && klen == 5) {
      int st = parse_shape(&s, a);
      if (st) return st;
      have_shape = 1;
    } else {
      return KVB_ERROR(KVB_EFORMAT, "npy header: unexpected key '%s'", key);
    }
    if (eat(&s, '}')) break;
    if (!eat(&s, ',')) return KVB_ERROR(KVB_EFORMAT, "npy header: expected ',' or '}'");
  }
  if (!have_descr) return KVB_ERROR(KVB_EFORMAT, "npy header: key 'descr' is missing");
  if (!have_fortran) return KVB_ERROR(KVB_EFORMAT, "npy header: key 'fortran_order' is missing");
  if (!have_shape) return KVB_ERROR(KVB_EFORMAT, "npy header: key 'shape' is missing");
  skip_ws(&s);
  if (s.p != s.end) return KVB_ERROR(KVB_EFORMAT, "npy header: text after the closing '}'");
  return KVB_OK;
}

int kvb_npy_parse(const unsigned char *buf, size_t len, kvb_npy_array *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "npy: output is NULL");
  memset(out, 0, sizeof *out);
  if (!buf && len) return KVB_ERROR(KVB_ENULL, "npy: buffer is NULL");
  if (len < 8 || memcmp(buf, npy_magic, 6) != 0)
    return KVB_ERROR(KVB_EFORMAT, "npy: bad magic (not a .npy file: it must start with "
                                  "\\x93NUMPY)");
  int major = buf[6], minor = buf[7];
  size_t hlen, hstart;
  if (major == 1) {
    if (len < 10) return KVB_ERROR(KVB_EFORMAT, "npy: header truncated (no header length)");
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) return KVB_ERROR(KVB_EFORMAT, "npy: header truncated (no header length)");
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    hstart = 12;
  } else {
    return KVB_ERROR(KVB_EFORMAT, "npy: unsupported format version %d.%d (1.0, 2.0, 3.0 are)",
                     major, minor);
  }
  if (minor != 0)
    return KVB_ERROR(KVB_EFORMAT, "npy: unsupported format version %d.%d (1.0, 2.0, 3.0 are)",
                     major, minor);
  if (hlen > len - hstart)
    return KVB_ERROR(KVB_EFORMAT, "npy: header truncated (declares %zu bytes, %zu present)", hlen,
                     len - hstart);
  kvb_npy_array a;
  memset(&a, 0, sizeof a);
  a.version = major;
  int st = parse_header((const char *)buf + hstart, hlen, &a);
  if (st) return st;
  size_t avail = len - hstart - hlen, count = 1;
  /* Multiply with an overflow check against the bytes present, before any allocation. */
  for (size_t i = 0; i < a.ndim; i++) {
    if (a.shape[i] != 0 && count > SIZE_MAX / a.shape[i])
      return KVB_ERROR(KVB_EFORMAT, "npy: shape/data size mismatch (shape overflows)");
    count *= a.shape[i];
  }
  if (count > avail / (size_t)a.itemsize || count * (size_t)a.itemsize != avail)
    return KVB_ERROR(KVB_EFORMAT, "npy: shape/data size mismatch (shape needs %zu elements of "
                                  "%d bytes, file holds %zu data bytes)",
                     count, a.itemsize, avail);
  a.count = count;
  a.data = malloc((count ? count : 1) * sizeof(double));
  if (!a.data) return KVB_ERROR(KVB_ENOMEM, "npy: out of memory for %zu elements", count);
  const unsigned char *d = buf + hstart + hlen;
  for (size_t i = 0; i < count; i++) {
    const unsigned char *e = d + i * (size_t)a.itemsize;
    double v;
    if (a.itemsize == 2) {
      v = kvb_half_to_double((unsigned)e[0] | (unsigned)e[1] << 8);
    } else if (a.itemsize == 4) {
      uint32_t u = (uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 |
                   (uint32_t)e[3] << 24;
      float f;
      memcpy(&f, &u, 4);
      v = f;
    } else {
      uint64_t u = 0;
      for (int b = 7; b >= 0; b--) u = u << 8 | e[b];
      memcpy(&v, &u, 8);
    }
    if (!isfinite(v)) {
      free(a.data);
      return KVB_ERROR(KVB_EFORMAT, "npy: element %zu is not finite (NaN or Inf)", i);
    }
    a.data[i] = v;
  }
  *out = a;
  return KVB_OK;
}

int kvb_npy_read(const char *path, kvb_npy_array *out) {
  if (!out) return KVB_ERROR(KVB_ENULL, "npy: output is NULL");
  memset(out, 0, sizeof *out);
  if (!path) return KVB_ERROR(KVB_ENULL, "npy: path is NULL");
  /* a regular file of at most KVB_NPY_FILE_MAX bytes (read_file.h); its message is kept */
  FILE *f;
  int ost = kvb_open_regular(path, KVB_NPY_FILE_MAX, "npy", &f);
  if (ost) return ost;
  size_t cap = 1 << 16, len = 0;
  unsigned char *buf = malloc(cap);
  if (!buf) {
    fclose(f);
    return KVB_ERROR(KVB_ENOMEM, "%s: out of memory", path);
  }
  for (;;) {
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (len < cap) break;
    if (len > KVB_NPY_FILE_MAX) { /* it grew while being read */
      free(buf);
      fclose(f);
      return KVB_ERROR(KVB_EINVAL, "%s: more than the limit of %zu bytes", path, KVB_NPY_FILE_MAX);
    }
    unsigned char *nb = realloc(buf, cap * 2);
    if (!nb) {
      free(buf);
      fclose(f);
      return KVB_ERROR(KVB_ENOMEM, "%s: out of memory", path);
    }
    buf = nb;
    cap *= 2;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    return KVB_ERROR(KVB_EIO, "%s: read error", path);
  }
  int st = kvb_npy_parse(buf, len, out);
  free(buf);
  if (st) {
    char msg[400];
    snprintf(msg, sizeof msg, "%s", kvb_strerror_last());
    return KVB_ERROR(st, "%s: %s", path, msg);
  }
  return KVB_OK;
}

void kvb_npy_free(kvb_npy_array *a) {
  if (!a) return;
  free(a->data);
  a->data = NULL;
}

int kvb_npy_serialize(const double *data, size_t ndim, const size_t *shape, const char *dtype,
                      int version, unsigned char **out, size_t *out_len) {
  if (!out || !out_len || !shape || !dtype) return KVB_ERROR(KVB_ENULL, "npy: NULL argument");
  *out = NULL;
  *out_len = 0;
  if (ndim < 1 || ndim > KVB_NPY_MAX_DIMS)
    return KVB_ERROR(KVB_EINVAL, "npy: ndim %zu not in [1, %d]", ndim, KVB_NPY_MAX_DIMS);
  int isz;
  if (strcmp(dtype, "<f8") == 0)
    isz = 8;
  else if (strcmp(dtype, "<f4") == 0)
    isz = 4;
  else
    return KVB_ERROR(KVB_EINVAL, "npy: can write dtype <f8 or <f4, not '%s'", dtype);
  if (version < 1 || version > 3) return KVB_ERROR(KVB_EINVAL, "npy: version %d", version);
  size_t count = 1;
  for (size_t i = 0; i < ndim; i++) {
    if (shape[i] && count > SIZE_MAX / 16 / shape[i])
      return KVB_ERROR(KVB_EINVAL, "npy: shape too large");
    count *= shape[i];
  }
  if (count && !data) return KVB_ERROR(KVB_ENULL, "npy: data is NULL");
  for (size_t i = 0; i < count; i++)
    if (!isfinite(data[i]) || (isz == 4 && fabs(data[i]) > FLT_MAX))
      return KVB_ERROR(KVB_EDOM, "npy: element %zu is not finite (as %s)", i, dtype);
  char hdr[256];
  int hn = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", dtype);
  for (size_t i = 0; i < ndim; i++)
    hn += snprintf(hdr + hn, sizeof hdr - (size_t)hn, ndim == 1 ? "%zu,), }" : i + 1 < ndim ? "%zu, " : "%zu), }", shape[i]);
  size_t pre = version == 1 ? 10 : 12;
  size_t total_h = (pre + (size_t)hn + 1 + 63) / 64 * 64; /* numpy aligns data to 64 bytes */
  size_t hlen = total_h - pre;
  size_t len = total_h + count * (size_t)isz;
  unsigned char *b = malloc(len);
  if (!b) return KVB_ERROR(KVB_ENOMEM, "npy: out of memory");
  memcpy(b, npy_magic, 6);
  b[6] = (unsigned char)version;
  b[7] = 0;
  b[8] = (unsigned char)(hlen & 0xff);
  b[9] = (unsigned char)(hlen >> 8 & 0xff);
  if (version > 1) {
    b[10] = (unsigned char)(hlen >> 16 & 0xff);
    b[11] = (unsigned char)(hlen >> 24 & 0xff);
  }
  memcpy(b + pre, hdr, (size_t)hn);
  memset(b + pre + hn, ' ', hlen - (size_t)hn - 1);
  b[total_h - 1] = '\n';
  unsigned char *d = b + total_h;
  for (size_t i = 0; i < count; i++) {
    if (isz == 8) {
      uint64_t u;
      memcpy(&u, &data[i], 8);
      for (int k = 0; k < 8; k++) d[i * 8 + (size_t)k] = (unsigned char)(u >> (8 * k));
    } else {
      float f = (float)data[i];
      uint32_t u;
      memcpy(&u, &f, 4);
      for (int k = 0; k < 4; k++) d[i * 4 + (size_t)k] = (unsigned char)(u >> (8 * k));
    }
  }
  *out = b;
  *out_len = len;
  return KVB_OK;
}

int kvb_npy_write(const char *path, const double *data, size_t ndim, const size_t *shape,
                  const char *dtype, int version) {
  if (!path) return KVB_ERROR(KVB_ENULL, "npy: path is NULL");
  unsigned char *b;
  size_t len;
  int st = kvb_npy_serialize(data, ndim, shape, dtype, version, &b, &len);
  if (st) return st;
  FILE *f = fopen(path, "wb");
  if (!f) {
    free(b);
    return KVB_ERROR(KVB_EIO, "%s: cannot create", path);
  }
  size_t w = fwrite(b, 1, len, f);
  free(b);
  if (fclose(f) != 0 || w != len) return KVB_ERROR(KVB_EIO, "%s: write error", path);
  return KVB_OK;
}

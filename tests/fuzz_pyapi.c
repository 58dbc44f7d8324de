/* fuzz_pyapi.c — libFuzzer harness for the C entry points the Python bindings call
 * (src/python/kvbound/_lib.py, _declare): kvb_params_parse, kvb_method_alloc by name,
 * kvb_method_update / query / memory / free in any order with any dimensions and values (NaN and
 * Inf included), and kvb_attention_exact. The input is a little program: a method (any
 * registered one, by index), d_key and d_value (0..8, so a wrong one is tried too), a scale (any
 * double), "k=v" parameters, then operations. What must hold: a refused call says why (a
 * non-empty message) and leaves the method usable; a query that succeeds answers finite numbers;
 * nothing crashes, leaks or reads out of bounds. Parameters whose number exceeds 4096 in size are
 * dropped, so a fuzzed budget never asks for gigabytes (a refusal of those is the library's
 * params check, tested elsewhere). Built only by `make fuzz-pyapi` (clang
 * -fsanitize=fuzzer,address,undefined; the harness instrumented, libkvbound.a as built by all). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kvbound.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
  const uint8_t *p;
  size_t n;
} input;

static unsigned take_u8(input *in) {
  if (!in->n) return 0;
  in->n--;
  return *in->p++;
}

static double take_f64(input *in) {
  double x = 0;
  if (in->n >= sizeof x) {
    memcpy(&x, in->p, sizeof x);
    in->p += sizeof x, in->n -= sizeof x;
  }
  return x;
}

/* The message of a refused call must be there: the bindings raise it as KvbError's text. */
static void must_say_why(int st) {
  if (st && kvb_strerror_last()[0] == '\0') abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  size_t ntypes = 0;
  while (kvb_method_type_at(ntypes)) ntypes++;
  if (!ntypes) abort();
  const kvb_method_type *t = kvb_method_type_at(take_u8(&in) % ntypes);
  size_t dk = take_u8(&in) % 9, dv = take_u8(&in) % 9;
  double scale = take_f64(&in);
  /* up to 3 parameters "k=v", each a length-prefixed slice of the input */
  kvb_params p;
  kvb_params_init(&p);
  for (unsigned np = take_u8(&in) % 4; np; np--) {
    char item[64];
    size_t len = take_u8(&in) % sizeof item;
    if (len > in.n) len = in.n;
    memcpy(item, in.p, len);
    item[len] = '\0';
    in.p += len, in.n -= len;
    kvb_params q = p;
    int st = kvb_params_parse(&q, item);
    must_say_why(st);
    if (!st && q.n > p.n && (q.items[q.n - 1].is_string || fabs(q.items[q.n - 1].num) <= 4096))
      p = q;
  }
  gsl_rng *rng = kvb_rng_alloc_substream(take_u8(&in), take_u8(&in));
  if (!rng) return 0;
  kvb_method_config cfg = {dk, dv, scale, rng};
  kvb_method *m = NULL;
  int st = kvb_method_alloc(t->name, &cfg, &p, &m);
  must_say_why(st);
  if ((st == KVB_OK) != (m != NULL)) abort();
  double buf[2][16];
  for (unsigned ops = 0; m && in.n && ops < 64; ops++) {
    unsigned op = take_u8(&in);
    size_t a = (op >> 2) & 1 ? dk : take_u8(&in) % 9, b = (op >> 3) & 1 ? dv : take_u8(&in) % 9;
    for (size_t i = 0; i < 16; i++) buf[0][i] = (op >> 4) & 1 ? take_f64(&in) : (double)(take_u8(&in) % 7) - 3;
    switch (op & 3) {
    case 0:
      st = kvb_method_update(m, buf[0], a, buf[0] + 8, b);
      must_say_why(st);
      break;
    case 1:
      st = kvb_method_query(m, buf[0], a, buf[1], b);
      must_say_why(st);
      if (st == KVB_OK)
        for (size_t i = 0; i < b; i++)
          if (!isfinite(buf[1][i])) abort();
      break;
    case 2: {
      kvb_memory mem;
      kvb_method_memory(m, &mem);
      break;
    }
    default: /* exact attention over the buffers as a 2-token stream */
      if (a && b && a <= 4 && b <= 4) {
        double lse;
        st = kvb_attention_exact(2, a, b, buf[0], buf[0] + 8, buf[0] + 12, scale, buf[1], &lse);
        must_say_why(st);
      }
      break;
    }
  }
  kvb_method_free(m);
  gsl_rng_free(rng);
  return 0;
}

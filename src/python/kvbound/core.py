"""Streams by name, exact attention and methods by name, NumPy in and out.

Every array handed to C is first made a C-ordered float64 copy (np.ascontiguousarray), so a
caller's view, stride or dtype never reaches the library; shapes are checked here (the C entry
points take sizes, not shapes) and everything else — NaN/Inf, dimension mismatches, parameter
ranges — by the library, whose status and message come back as KvbError."""

import ctypes
from collections import namedtuple

import numpy as np

from . import _lib
from ._lib import KvbError, check, lib

Memory = namedtuple("Memory", "bytes vectors")
_PD = ctypes.POINTER(ctypes.c_double)
_SIZE_MAX = 2**(8 * ctypes.sizeof(ctypes.c_size_t)) - 1


def _ptr(a):
    return a.ctypes.data_as(_PD)


def _f64(x, ndim, what):
    """x as a C-ordered float64 array of `ndim` dimensions (None: any), or KvbError: EINVAL for
    something that is not real numbers (complex ones included: never silently cast), EDIM for
    the wrong number of dimensions."""
    try:
        if np.iscomplexobj(x):
            raise KvbError(_lib.EINVAL, "%s: complex numbers (attention is over real vectors)"
                           % what, "python")
        a = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise KvbError(_lib.EINVAL, "%s: not an array of numbers (%s)" % (what, e), "python")
    if ndim is not None and a.ndim != ndim:
        raise KvbError(_lib.EDIM, "%s: expected a %d-d array, got shape %s"
                       % (what, ndim, a.shape), "python")
    return a


def _finite(a, what):
    if not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise KvbError(_lib.EDOM, "%s has a NaN or Inf entry at %s" % (what, tuple(int(i) for i in bad)),
                       "python")


class _Rng:
    """A kvbound generator (PCG32 substream `index` of `seed`, pcg32.h), freed with its owner."""

    def __init__(self, seed, index=0):
        self.ptr = None
        seed = _lib.c_int(seed, "seed")
        index = _lib.c_int(index, "index")
        self.ptr = lib.kvb_rng_alloc_substream(seed, index)
        if not self.ptr:
            raise _lib.last_error(_lib.ENOMEM)

    def __del__(self):
        if getattr(self, "ptr", None):
            lib.gsl_rng_free(self.ptr)
            self.ptr = None


# ---- listings --------------------------------------------------------------------------------------

def streams():
    """Every registered stream generator: a list of dicts (name, summary, attacks, params,
    mutants), in `kvbound list` order."""
    out, i = [], 0
    while True:
        t = lib.kvb_stream_type_at(i)
        if not t:
            return out
        t = t.contents
        out.append({"name": _lib._text(t.name), "summary": _lib._text(t.summary),
                    "attacks": _lib._text(t.attacks) or None, "params": _lib.spec_rows(t.params),
                    "mutants": _lib.mutant_rows(t.mutants)})
        i += 1


def methods():
    """Every registered method (built-ins, plugins and Python methods registered in this
    process): a list of dicts (name, summary, source, randomized, params, mutants)."""
    out, i = [], 0
    while True:
        t = lib.kvb_method_type_at(i)
        if not t:
            return out
        t = t.contents
        out.append({"name": _lib._text(t.name), "summary": _lib._text(t.summary),
                    "source": _lib._text(t.source), "randomized": bool(t.randomized),
                    "params": _lib.spec_rows(t.params), "mutants": _lib.mutant_rows(t.mutants)})
        i += 1


# ---- streams ---------------------------------------------------------------------------------------

class Stream:
    """A generated stream: Q, K (n × d_key) and V (n × d_value) as float64 arrays (copies; the C
    stream is freed at once), the generator's guarantees m, delta (000 Definition 1) and r (a
    bound on ‖q‖; NaN where nothing is guaranteed), and the name and parameters it came from."""

    def __init__(self, name, params, Q, K, V, m, delta, r):
        self.name, self.params = name, params
        self.Q, self.K, self.V = Q, K, V
        self.m, self.delta, self.r = m, delta, r

    @property
    def n(self):
        return self.K.shape[0]

    def __repr__(self):
        return "Stream(%r, n=%d, d_key=%d, d_value=%d)" % (self.name, self.n, self.K.shape[1],
                                                          self.V.shape[1])


def stream(name, seed=1, index=0, **params):
    """Generates stream `name` ("gaussian", "clusterable", "adv_sphere", ...; see streams()) with
    named parameters (n, d_key, d_value and the generator's own, e.g. mutant="..."), drawing
    from PCG32 substream `index` of `seed`. `name` may carry parameters: "gaussian,n=64"."""
    base, rest = _lib.split_name(name)
    p = _lib.make_params(rest, **params)
    rng = _Rng(seed, index)
    out = ctypes.POINTER(_lib.StreamStruct)()
    check(lib.kvb_stream_generate(_lib.c_str(base, "stream name"), ctypes.byref(p), rng.ptr, ctypes.byref(out)))
    try:
        s = out.contents
        n, dk, dv = s.n, s.d_key, s.d_value

        def grab(ptr, d):
            return np.ctypeslib.as_array(ptr, shape=(n, d)).copy() if n * d else np.zeros((n, d))
        return Stream(base, _lib.params_to_dict(s.params), grab(s.Q, dk), grab(s.K, dk),
                      grab(s.V, dv), s.m, s.delta, s.r)
    finally:
        lib.kvb_stream_free(out)


# ---- exact attention -------------------------------------------------------------------------------

def exact_attention(K, V, q, scale=1.0, return_lse=False):
    """Exact attention softmax(scale·K q)ᵀ V by the library's double-precision reference
    (kvb_attention_exact, log-sum-exp). q is one query (d_key,) -> z (d_value,), or a batch
    (nq, d_key) -> Z (nq, d_value). With return_lse, also log Σ_i exp(scale·<q, k_i>)."""
    K = _f64(K, 2, "K")
    V = _f64(V, 2, "V")
    qa = _f64(q, None, "q")
    if qa.ndim not in (1, 2):
        raise KvbError(_lib.EDIM, "q: expected (d_key,) or (nq, d_key), got shape %s" % (qa.shape,),
                       "python")
    Q = qa.reshape(1, -1) if qa.ndim == 1 else qa
    n, dk = K.shape
    if V.shape[0] != n:
        raise KvbError(_lib.EDIM, "K has %d rows but V has %d" % (n, V.shape[0]), "python")
    if Q.shape[1] != dk:
        raise KvbError(_lib.EDIM, "queries have dimension %d, keys %d" % (Q.shape[1], dk), "python")
    # The reference checks nothing for finiteness (it is the inner loop of everything); refuse
    # NaN/Inf here so a bad input raises instead of answering NaN.
    for a, what in ((K, "K"), (V, "V"), (Q, "q")):
        _finite(a, what)
    dv = V.shape[1]
    Z = np.empty((Q.shape[0], dv))
    lse = np.empty(Q.shape[0])
    one = ctypes.c_double()
    for i in range(Q.shape[0]):
        zi = Z[i]
        check(lib.kvb_attention_exact(n, dk, dv, _ptr(K), _ptr(V), _ptr(Q[i]), float(scale),
                                      _ptr(zi), ctypes.byref(one)))
        lse[i] = one.value
    if qa.ndim == 1:
        Z, lse = Z[0], lse[0]
    return (Z, lse) if return_lse else Z


def attention_batch(K, V, Q, scale=1.0, threads=0, return_lse=False):
    """The fast many-heads × many-queries exact attention (attention_batch.h, float64 path):
    K (H, n, d), V (H, n, dv), Q (H, nq, d) -> Z (H, nq, dv); bit-identical for any thread
    count (threads <= 0: the library's default)."""
    K, V, Q = _f64(K, 3, "K"), _f64(V, 3, "V"), _f64(Q, 3, "Q")
    H, n, d = K.shape
    if V.shape[:2] != (H, n) or Q.shape[0] != H or Q.shape[2] != d:
        raise KvbError(_lib.EDIM, "shapes K %s, V %s, Q %s do not agree (K (H, n, d), V (H, n, dv), "
                       "Q (H, nq, d))" % (K.shape, V.shape, Q.shape), "python")
    nq, dv = Q.shape[1], V.shape[2]
    Z = np.empty((H, nq, dv))
    lse = np.empty((H, nq))
    check(lib.kvb_attention_batch_f64(H, n, nq, d, dv, _ptr(K), _ptr(V), _ptr(Q), float(scale),
                                      _lib.c_int(threads, "threads", -2**31, 2**31 - 1),
                                      _ptr(Z), _ptr(lse)))
    return (Z, lse) if return_lse else Z


# ---- methods ---------------------------------------------------------------------------------------

class Method:
    """A registered method by name ("subgen", "balancekv_block", a plugin's or a registered Python
    method's), created with key/value dimensions, the score scale, a seed (PCG32 substream
    `index` of `seed` is its generator) and named parameters (keywords, or "name,k=v,...").

    update(k, v) streams one token; query(q) -> z ≈ softmax(scale·K q)ᵀ V; memory() -> (bytes,
    vectors). A refused call (NaN/Inf, wrong dimension, query before any update, a parameter out
    of range) raises KvbError and leaves the method as it was."""

    def __init__(self, name, d_key, d_value, scale=1.0, seed=1, index=0, **params):
        self._ptr = None
        base, rest = _lib.split_name(name)
        self.name = base
        for what, x in (("d_key", d_key), ("d_value", d_value)):
            if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
                raise KvbError(_lib.EINVAL, "%s: %s must be a positive integer, got %r"
                               % (base, what, x), "python")
            _lib.c_int(x, "%s: %s" % (base, what), 1, _SIZE_MAX)
        try:
            self.d_key, self.d_value, self.scale = int(d_key), int(d_value), float(scale)
        except (TypeError, ValueError) as e:
            raise KvbError(_lib.EINVAL, "%s: scale must be a number (%s)" % (base, e), "python")
        p = _lib.make_params(rest, **params)
        self.params = _lib.params_to_dict(p)
        self._rng = _Rng(seed, index)
        cfg = _lib.MethodConfig(self.d_key, self.d_value, self.scale, self._rng.ptr)
        out = ctypes.c_void_p()
        check(lib.kvb_method_alloc(_lib.c_str(base, "method name"), ctypes.byref(cfg), ctypes.byref(p),
                                   ctypes.byref(out)))
        self._ptr = out
        self.n = 0  # tokens absorbed

    def close(self):
        """Frees the method; later calls raise KvbError (KVB_ESTATE). Called from inside one of
        the method's own callbacks (a Python method's update closing its handle), the library
        defers the free until that callback has returned (method.h), so the call in progress
        finishes on live memory."""
        p, self._ptr = self._ptr, None
        if p:
            lib.kvb_method_free(p)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _live(self):
        if not self._ptr:
            raise KvbError(_lib.ESTATE, "%s: the method was closed" % self.name, "python")
        return self._ptr

    def __repr__(self):
        return "Method(%r, d_key=%d, d_value=%d, scale=%g, n=%d)" % (
            self.name, self.d_key, self.d_value, self.scale, self.n)

    @property
    def mutant(self):
        return _lib._text(lib.kvb_method_mutant_name(self._live())) or None

    def update(self, k, v):
        k, v = _f64(k, 1, "key"), _f64(v, 1, "value")
        check(lib.kvb_method_update(self._live(), _ptr(k), k.size, _ptr(v), v.size))
        self.n += 1

    def update_many(self, K, V):
        """Streams the rows of K (n × d_key) and V (n × d_value) in order. The whole batch is
        checked (shapes, NaN/Inf) before any row is fed, so a bad batch is refused whole; an
        error the method itself raises at row i leaves rows 0..i-1 absorbed (the KvbError's
        message names the row)."""
        K, V = _f64(K, 2, "K"), _f64(V, 2, "V")
        if K.shape[0] != V.shape[0]:
            raise KvbError(_lib.EDIM, "K has %d rows but V has %d" % (K.shape[0], V.shape[0]), "python")
        if K.shape[1] != self.d_key or V.shape[1] != self.d_value:
            raise KvbError(_lib.EDIM, "%s: K, V are %d/%d wide, the method has d_key/d_value %d/%d"
                           % (self.name, K.shape[1], V.shape[1], self.d_key, self.d_value), "python")
        _finite(K, "K")
        _finite(V, "V")
        for i in range(K.shape[0]):
            # the handle is re-read for every row: a callback may have closed the method
            st = lib.kvb_method_update(self._live(), _ptr(K[i]), self.d_key, _ptr(V[i]),
                                       self.d_value)
            if st:
                e = _lib.last_error(st)
                e.message = "row %d: %s" % (i, e.message)
                e.args = ("%s: %s" % (e.name, e.message),)
                raise e
            self.n += 1

    def query(self, q):
        q = _f64(q, 1, "query")
        z = np.empty(self.d_value)
        check(lib.kvb_method_query(self._live(), _ptr(q), q.size, _ptr(z), self.d_value))
        return z

    def query_many(self, Q):
        """Answers every row of Q (nq × d_key) -> Z (nq × d_value)."""
        Q = _f64(Q, 2, "Q")
        if Q.shape[1] != self.d_key:
            raise KvbError(_lib.EDIM, "%s: queries are %d wide, the method has d_key %d"
                           % (self.name, Q.shape[1], self.d_key), "python")
        Z = np.empty((Q.shape[0], self.d_value))
        for i in range(Q.shape[0]):
            check(lib.kvb_method_query(self._live(), _ptr(Q[i]), self.d_key, _ptr(Z[i]),
                                       self.d_value))
        return Z

    def memory(self):
        mem = _lib.Memory()
        lib.kvb_method_memory(self._live(), ctypes.byref(mem))
        return Memory(mem.bytes, mem.vectors)


def run(name, K, V, Q, scale=1.0, seed=1, index=0, **params):
    """Streams K, V into a new method and answers Q: returns (Z, memory)."""
    with Method(name, np.shape(K)[-1], np.shape(V)[-1], scale, seed, index, **params) as m:
        m.update_many(K, V)
        return m.query_many(Q), m.memory()

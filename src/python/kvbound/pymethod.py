"""A Python class as a kvbound method: registered in libkvbound's method registry
(kvb_method_register, src/core/plugin.h), it is then created by name like a built-in — by
kvbound.Method, by the C battery run in this process (props_main(["--method", NAME])), by
anything in this process that looks methods up by name.

The class:

    class Mine:
        params = {"stride": (4, 1, 1e6, "keep every stride-th token")}   # optional
        randomized = False          # True: created with a generator; draw with ctx.uniform()
        def __init__(self, ctx): ...            # ctx: MethodContext (dimensions, scale, params)
        def update(self, k, v): ...             # k (d_key,), v (d_value,) float64 copies
        def query(self, q): return z            # (d_value,) array-like
        def memory(self): return (bytes, vectors)
        # optional, with declares= (plugin ABI v1):
        def query_parts(self, q): return (num, den)   # estimates of Σ e^s v and Σ e^s
        def error_bound(self, inp): return (eps, delta)   # inp: BoundInput fields as attributes

The library validates every argument before a callback runs (finite, right dimensions, a query
only after an update), so a callback sees only valid input. An exception inside a callback never
crosses into C: it becomes an error status (KvbError's status if it is one, KVB_ENOMEM for
MemoryError, else KVB_EINVAL) with a message naming the method, the callback and the exception,
which the caller (Python or C) sees as the call's failure; tracebacks are kept in
callback_errors. update must leave the instance unchanged when it raises (the contract the
battery checks)."""

import collections
import ctypes
import itertools
import math
import traceback

import numpy as np

from . import _lib
from ._lib import KvbError, lib

# Everything C may still point at: the type structs (the registry copies the struct but not the
# strings and tables it points to), the CFUNCTYPE callbacks and the instances by handle.
_keep = []
_by_name = {}
_instances = {}
_handles = itertools.count(1)
_SIZE_MAX = 2**(8 * ctypes.sizeof(ctypes.c_size_t)) - 1
callback_errors = collections.deque(maxlen=50)  # (method, callback, traceback text)

_DECLARE_BITS = {"unbiased_num": _lib.DECLARES_UNBIASED_NUM,
                 "unbiased_den": _lib.DECLARES_UNBIASED_DEN,
                 "error_bound": _lib.DECLARES_ERROR_BOUND}


class MethodContext:
    """What a Python method's __init__ gets: d_key, d_value, scale; params (every declared
    parameter's value, defaults filled in) and given (the names the caller set); mutant (the
    active mutant's name or None); uniform() a draw in [0, 1) from the method's generator (the
    only randomness a randomized method may use, so a seed reproduces its answers)."""

    def __init__(self, ptr, params, given, mutant):
        self._m = ptr
        self.d_key = lib.kvb_method_d_key(ptr)
        self.d_value = lib.kvb_method_d_value(ptr)
        self.scale = lib.kvb_method_scale(ptr)
        self.params, self.given, self.mutant = params, given, mutant

    def uniform(self):
        u = lib.kvb_method_uniform(self._m)
        if math.isnan(u):
            raise KvbError(_lib.ENULL, "uniform(): the method has no generator (declare "
                           "randomized = True)", "python")
        return u


def _spec_table(params, holder):
    """params {name: default | (default, min, max[, help])} -> a NULL-terminated kvb_param_spec
    array (kind from the default: int -> INT, float -> REAL, str -> STRING)."""
    rows = []
    for name, spec in (params or {}).items():
        if not isinstance(spec, tuple):
            spec = (spec,)
        default = spec[0]
        lo = spec[1] if len(spec) > 1 else -1e300
        hi = spec[2] if len(spec) > 2 else 1e300
        help_ = spec[3] if len(spec) > 3 else ""
        nb, hb = name.encode(), help_.encode()
        holder += [nb, hb]
        if isinstance(default, str):
            sb = default.encode()
            holder.append(sb)
            rows.append(_lib.ParamSpec(nb, _lib.PARAM_STRING, 0.0, 0.0, 0.0, sb, hb))
        elif isinstance(default, bool) or isinstance(default, int):
            rows.append(_lib.ParamSpec(nb, _lib.PARAM_INT, float(default), float(lo), float(hi), None, hb))
        elif isinstance(default, float):
            rows.append(_lib.ParamSpec(nb, _lib.PARAM_REAL, default, float(lo), float(hi), None, hb))
        else:
            raise KvbError(_lib.EINVAL, "parameter %s: default %r is not an int, float or str"
                           % (name, default), "python")
    arr = (_lib.ParamSpec * (len(rows) + 1))(*rows)
    holder.append(arr)
    return arr


def _mutant_table(mutants, holder):
    if not mutants:
        return None
    rows = []
    for name, help_ in mutants.items():
        nb, hb = name.encode(), help_.encode()
        holder += [nb, hb]
        rows.append(_lib.MutantSpec(nb, hb))
    arr = (_lib.MutantSpec * (len(rows) + 1))(*rows)
    holder.append(arr)
    return arr


def _report(method, callback, exc):
    """Turns an exception raised in a callback into this thread's kvbound error; its status."""
    if isinstance(exc, KvbError):
        status = exc.status or _lib.EINVAL
        what = exc.message
    else:
        status = _lib.ENOMEM if isinstance(exc, MemoryError) else _lib.EINVAL
        what = "%s: %s" % (type(exc).__name__, exc)
    tb = traceback.extract_tb(exc.__traceback__)
    where = "%s:%d" % (tb[-1].filename, tb[-1].lineno) if tb else "python"
    callback_errors.append((method, callback, "".join(
        traceback.format_exception(type(exc), exc, exc.__traceback__))))
    msg = "python method %s: %s raised %s" % (method, callback, what)
    try:
        lib.kvb_error_restore(status, msg.encode("utf-8", "replace"), where.encode("utf-8", "replace"))
    except BaseException:  # never let anything escape into C
        pass
    return status


def _vec(ptr, d):
    return np.ctypeslib.as_array(ptr, shape=(d,)).copy()


def _out(ptr, d, value, what):
    a = np.asarray(value, dtype=np.float64)
    if a.shape != (d,):
        raise KvbError(_lib.EDIM, "%s returned shape %s, want (%d,)" % (what, a.shape, d), "python")
    np.ctypeslib.as_array(ptr, shape=(d,))[:] = a


class _Registration:
    """The callbacks of one registered class (closures over it)."""

    def __init__(self, cls, name, spec_arr, spec_names):
        self.cls, self.name, self.spec_arr, self.spec_names = cls, name, spec_arr, spec_names

    def _inst(self, m):
        h = lib.kvb_method_state(m)
        inst = _instances.get(h)
        if inst is None:
            raise KvbError(_lib.ESTATE, "no Python instance behind this method (state %r)" % h, "python")
        return inst

    def init(self, m, p):
        try:
            params, given = {}, set()
            for nm, kind in self.spec_names:
                b = nm.encode()
                if kind == _lib.PARAM_STRING:
                    params[nm] = _lib._text(lib.kvb_params_get_str(p, self.spec_arr, b))
                elif kind == _lib.PARAM_INT:
                    params[nm] = int(lib.kvb_params_get(p, self.spec_arr, b))
                else:
                    params[nm] = float(lib.kvb_params_get(p, self.spec_arr, b))
                if lib.kvb_params_has(p, b):
                    given.add(nm)
            mutant = _lib._text(lib.kvb_method_mutant_name(m)) or None
            ctx = MethodContext(m, params, given, mutant)
            inst = self.cls(ctx)
            inst._kvb_ctx = ctx
            h = next(_handles)
            _instances[h] = inst
            lib.kvb_method_set_state(m, h)
            return 0
        except BaseException as e:
            return _report(self.name, "__init__", e)

    def update(self, m, k, v):
        try:
            inst = self._inst(m)
            ctx = inst._kvb_ctx
            inst.update(_vec(k, ctx.d_key), _vec(v, ctx.d_value))
            return 0
        except BaseException as e:
            return _report(self.name, "update", e)

    def query(self, m, q, z):
        try:
            inst = self._inst(m)
            ctx = inst._kvb_ctx
            _out(z, ctx.d_value, inst.query(_vec(q, ctx.d_key)), "query")
            return 0
        except BaseException as e:
            return _report(self.name, "query", e)

    def memory(self, m, out):
        try:
            mem = self._inst(m).memory()
            b, v = (mem["bytes"], mem["vectors"]) if isinstance(mem, dict) else mem
            if int(b) != b or int(v) != v or not 0 <= b <= _SIZE_MAX or not 0 <= v <= _SIZE_MAX:
                raise KvbError(_lib.EINVAL, "memory() returned %r, want non-negative integers "
                               "(bytes, vectors) below 2^%d" % (mem, 8 * ctypes.sizeof(ctypes.c_size_t)),
                               "python")
            out.contents.bytes, out.contents.vectors = int(b), int(v)
        except BaseException as e:
            # memory has no status: it reports nothing stored (the battery's accounting check
            # then fails) and leaves the message for the caller
            out.contents.bytes = out.contents.vectors = 0
            _report(self.name, "memory", e)

    def free_state(self, state):
        try:
            inst = _instances.pop(state, None)
            if inst is not None and hasattr(inst, "close"):
                inst.close()
        except BaseException as e:
            _report(self.name, "close", e)

    def query_parts(self, m, q, num, den):
        try:
            inst = self._inst(m)
            ctx = inst._kvb_ctx
            nn, dd = inst.query_parts(_vec(q, ctx.d_key))
            _out(num, ctx.d_value, nn, "query_parts (numerator)")
            den[0] = float(dd)
            return 0
        except BaseException as e:
            return _report(self.name, "query_parts", e)

    def error_bound(self, m, inp, eps, delta):
        try:
            i = inp.contents
            b = collections.namedtuple("BoundInput", [f for f, _ in _lib.BoundInput._fields_])(
                *(getattr(i, f) for f, _ in _lib.BoundInput._fields_))
            e, d = self._inst(m).error_bound(b)
            eps[0], delta[0] = float(e), float(d)
            return 0
        except BaseException as e:
            return _report(self.name, "error_bound", e)


def register_method(cls, name=None, summary=None, params=None, mutants=None, randomized=None,
                    declares=None, equivalent_to=None, equivalence_tol=None, source="Python"):
    """Registers class `cls` as method `name` (default: cls.name, else the class name in lower
    case) in libkvbound's registry; returns the name. params, mutants, randomized, declares,
    equivalent_to and equivalence_tol default to the class attributes of those names. declares: a set of "unbiased_num", "unbiased_den",
    "error_bound" (or the KVB_DECLARES_* bits as an int); the class must then have query_parts /
    error_bound. equivalent_to: "NAME[,k=v]" of a built-in it reproduces given the same
    generator, within equivalence_tol (0: bit for bit). Registration is for the life of the
    process (the registry keeps no way to remove a type). A refusal (duplicate name, a declared
    property without its method, ...) raises KvbError with the library's message."""
    _lib.require("kvb_method_register", "register_method")
    name = name or getattr(cls, "name", None) or cls.__name__.lower()
    _lib.c_str(name, "register_method: name")
    params = getattr(cls, "params", None) if params is None else params
    mutants = getattr(cls, "mutants", None) if mutants is None else mutants
    randomized = bool(getattr(cls, "randomized", False) if randomized is None else randomized)
    declares = getattr(cls, "declares", 0) if declares is None else declares
    if equivalent_to is None:
        equivalent_to = getattr(cls, "equivalent_to", None)
    if equivalence_tol is None:
        equivalence_tol = getattr(cls, "equivalence_tol", 0.0)
    if not isinstance(declares, int):
        unknown = set(declares) - set(_DECLARE_BITS)
        if unknown:
            raise KvbError(_lib.EINVAL, "declares: unknown %s (known: %s)"
                           % (sorted(unknown), sorted(_DECLARE_BITS)), "python")
        declares = sum(_DECLARE_BITS[d] for d in set(declares))
    for need in ("update", "query", "memory"):
        if not callable(getattr(cls, need, None)):
            raise KvbError(_lib.EINVAL, "method %s: class %s has no %s()" % (name, cls.__name__, need),
                           "python")
    holder = []
    spec_arr = _spec_table(params, holder)
    spec_names = [(_lib._text(r.name), r.kind) for r in spec_arr[:len(spec_arr) - 1]]
    reg = _Registration(cls, name, spec_arr, spec_names)
    t = _lib.MethodType()
    for field, value in (("name", name), ("summary", summary or (cls.__doc__ or "").strip().split("\n")[0]
                                           or "a Python method"),
                         ("source", source), ("equivalent_to", equivalent_to)):
        if value is not None:
            b = value.encode()
            holder.append(b)
            setattr(t, field, b)
    t.params = ctypes.cast(spec_arr, ctypes.POINTER(_lib.ParamSpec))
    mt = _mutant_table(mutants, holder)
    if mt is not None:
        t.mutants = ctypes.cast(mt, ctypes.POINTER(_lib.MutantSpec))
    t.randomized = int(randomized)
    cbs = [_lib.INIT_FN(reg.init), _lib.UPDATE_FN(reg.update), _lib.QUERY_FN(reg.query),
           _lib.MEMORY_FN(reg.memory), _lib.FREE_FN(reg.free_state)]
    t.init, t.update, t.query, t.memory, t.free_state = cbs
    if callable(getattr(cls, "query_parts", None)):
        cbs.append(_lib.PARTS_FN(reg.query_parts))
        t.query_parts = cbs[-1]
    if callable(getattr(cls, "error_bound", None)):
        cbs.append(_lib.BOUND_FN(reg.error_bound))
        t.error_bound = cbs[-1]
    t.declares = _lib.c_int(declares, "declares", 0, 2**32 - 1)
    t.equivalence_tol = float(equivalence_tol)
    _lib.check(lib.kvb_method_register(ctypes.byref(t), ctypes.sizeof(t)))
    _keep.append((t, cbs, holder, reg))
    _by_name[name] = cls
    return name


def registered():
    """{name: class} of the Python methods registered in this process."""
    return dict(_by_name)

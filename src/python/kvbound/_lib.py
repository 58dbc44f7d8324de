"""Finding and loading libkvbound.so, the C structures Python must see, and errors.

Only the structures that cross the boundary by value or by field are mirrored here (parameter
lists, streams, the type tables a listing reads, the method type a Python method registers);
struct kvb_method stays opaque (the accessors of method.h read it), so a change inside it never
breaks these bindings. Every function's signature is declared once, in _declare()."""

import ctypes
import operator
import os
import shutil
import subprocess
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_int, c_size_t,
                    c_uint, c_uint64, c_void_p)

# ---- errors -------------------------------------------------------------------------------------

STATUS = {0: "KVB_OK", 1: "KVB_EINVAL", 2: "KVB_EDOM", 3: "KVB_EDIM", 4: "KVB_ENULL",
          5: "KVB_ENOMEM", 6: "KVB_ENOTFOUND", 7: "KVB_ESTATE", 8: "KVB_EFAIL", 9: "KVB_EIO",
          10: "KVB_EFORMAT", 11: "KVB_ERANGE"}
EINVAL, EDOM, EDIM, ENULL, ENOMEM, ENOTFOUND, ESTATE, EFAIL, EIO, EFORMAT, ERANGE = range(1, 12)


class KvbError(Exception):
    """A libkvbound call failed: `status` (an int, kvb_status), `name` ("KVB_EDOM"), `message`
    (what went wrong, as the library words it) and `where` (the C source position that raised it,
    or "python" for a check these bindings make before calling C)."""

    def __init__(self, status, message, where=""):
        self.status = int(status)
        self.name = STATUS.get(self.status, "KVB_E%d" % self.status)
        self.message = message
        self.where = where
        super().__init__("%s: %s" % (self.name, message))


class LibraryNotFound(ImportError):
    """libkvbound.so was not found or could not be loaded; the message lists every place tried."""


# ---- structures (src/core/params.h, stream.h, method.h, mutant.h) -------------------------------

PARAMS_MAX, PARAM_NAME_MAX, PARAM_STR_MAX = 32, 32, 96
PARAM_REAL, PARAM_INT, PARAM_STRING = 0, 1, 2


class Param(Structure):
    _fields_ = [("name", c_char * PARAM_NAME_MAX), ("is_string", c_int), ("num", c_double),
                ("str", c_char * PARAM_STR_MAX)]


class Params(Structure):
    _fields_ = [("n", c_size_t), ("items", Param * PARAMS_MAX)]


class ParamSpec(Structure):
    _fields_ = [("name", c_char_p), ("kind", c_int), ("default", c_double), ("min", c_double),
                ("max", c_double), ("sdef", c_char_p), ("help", c_char_p)]


class MutantSpec(Structure):
    _fields_ = [("name", c_char_p), ("help", c_char_p)]


class StreamType(Structure):
    _fields_ = [("name", c_char_p), ("summary", c_char_p), ("attacks", c_char_p),
                ("params", POINTER(ParamSpec)), ("mutants", POINTER(MutantSpec)),
                ("generate", c_void_p)]


class StreamStruct(Structure):
    _fields_ = [("name", c_char * 64), ("n", c_size_t), ("d_key", c_size_t),
                ("d_value", c_size_t), ("Q", POINTER(c_double)), ("K", POINTER(c_double)),
                ("V", POINTER(c_double)), ("m", c_double), ("delta", c_double), ("r", c_double),
                ("params", Params), ("type", POINTER(StreamType)), ("mutant", c_int)]


class Memory(Structure):
    _fields_ = [("bytes", c_size_t), ("vectors", c_size_t)]


class MethodConfig(Structure):
    _fields_ = [("d_key", c_size_t), ("d_value", c_size_t), ("scale", c_double),
                ("rng", c_void_p)]


class BoundInput(Structure):
    """kvb_bound_input (method.h, plugin ABI v1): the stream statistics an error bound is
    stated in."""
    _fields_ = [("n", c_size_t), ("d_key", c_size_t), ("d_value", c_size_t), ("scale", c_double),
                ("max_key_norm", c_double), ("max_query_norm", c_double),
                ("max_value_norm", c_double), ("value_frobenius_norm", c_double)]


# The callbacks of kvb_method_type; kvb_method* is opaque (c_void_p).
INIT_FN = CFUNCTYPE(c_int, c_void_p, POINTER(Params))
UPDATE_FN = CFUNCTYPE(c_int, c_void_p, POINTER(c_double), POINTER(c_double))
QUERY_FN = CFUNCTYPE(c_int, c_void_p, POINTER(c_double), POINTER(c_double))
MEMORY_FN = CFUNCTYPE(None, c_void_p, POINTER(Memory))
FREE_FN = CFUNCTYPE(None, c_void_p)
PARTS_FN = CFUNCTYPE(c_int, c_void_p, POINTER(c_double), POINTER(c_double), POINTER(c_double))
BOUND_FN = CFUNCTYPE(c_int, c_void_p, POINTER(BoundInput), POINTER(c_double), POINTER(c_double))

DECLARES_UNBIASED_NUM, DECLARES_UNBIASED_DEN, DECLARES_ERROR_BOUND = 1, 2, 4


class MethodType(Structure):
    """kvb_method_type: the frozen members in order, then what plugin ABI v1 appends."""
    _fields_ = [("name", c_char_p), ("summary", c_char_p), ("source", c_char_p),
                ("params", POINTER(ParamSpec)), ("mutants", POINTER(MutantSpec)),
                ("randomized", c_int),
                ("init", INIT_FN), ("update", UPDATE_FN), ("query", QUERY_FN),
                ("memory", MEMORY_FN), ("free_state", FREE_FN),
                # ABI v1 (src/core/plugin.h)
                ("declares", c_uint), ("query_parts", PARTS_FN), ("error_bound", BOUND_FN),
                ("equivalent_to", c_char_p), ("equivalence_tol", c_double),
                ("in_model", c_uint), ("observe", c_uint)]


# ---- finding the library --------------------------------------------------------------------------

LIBNAME = "libkvbound.so"
PROPS_LIBNAME = "libkvbound-props.so"
CLI_LIBNAME = "libkvbound-cli.so"
_HERE = os.path.dirname(os.path.abspath(__file__))


def _pkg_config_libdir():
    exe = shutil.which("pkg-config")
    if not exe:
        return None, "pkg-config (not installed)"
    try:
        r = subprocess.run([exe, "--variable=libdir", "kvbound"], capture_output=True, text=True,
                           timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "pkg-config --variable=libdir kvbound (%s)" % e
    if r.returncode != 0 or not r.stdout.strip():
        return None, "pkg-config --variable=libdir kvbound (no kvbound.pc found)"
    return r.stdout.strip(), None


def _build_dirs():
    """The build trees a source checkout may hold: beside this package (src/python/kvbound ->
    ../../../build) and under the working directory."""
    out = []
    for d in (os.path.join(_HERE, "..", "..", "..", "build"), os.path.join(os.getcwd(), "build")):
        d = os.path.normpath(d)
        if d not in out:
            out.append(d)
    return out


def _candidates():
    """(path or None, how it was found) for libkvbound.so in the documented order:
    $KVBOUND_LIB (the file, or a directory holding it), pkg-config's libdir, the build tree."""
    env = os.environ.get("KVBOUND_LIB")
    if env:
        p = os.path.join(env, LIBNAME) if os.path.isdir(env) else env
        yield p, "$KVBOUND_LIB=%s" % env
    libdir, why = _pkg_config_libdir()
    if libdir:
        yield os.path.join(libdir, LIBNAME), "pkg-config libdir"
    else:
        yield None, why
    for d in _build_dirs():
        yield os.path.join(d, LIBNAME), "build tree"


def _load():
    tried = []
    for path, how in _candidates():
        if path is None:
            tried.append(how)
            continue
        if not os.path.exists(path):
            tried.append("%s: %s (no such file)" % (how, path))
            continue
        try:
            # RTLD_GLOBAL: a props library or plugin loaded later resolves kvb_* to this copy,
            # so they share one method registry.
            lib = ctypes.CDLL(os.path.abspath(path), mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append("%s: %s (%s)" % (how, path, e))
            continue
        return lib, os.path.abspath(path)
    raise LibraryNotFound(
        "kvbound: cannot load %s; tried, in order:\n  %s\n"
        "Build it (`make` in the kvbound checkout), install it (`make install`: pkg-config then "
        "finds it), or point KVBOUND_LIB at the file." % (LIBNAME, "\n  ".join(tried)))


def _declare(lib):
    """argtypes/restype of every function the bindings call."""
    P, D, S = POINTER(Params), POINTER(c_double), c_size_t
    sigs = {
        "kvb_status_name": (c_char_p, [c_int]),
        "kvb_strerror_last": (c_char_p, []),
        "kvb_error_where_last": (c_char_p, []),
        "kvb_error_clear": (None, []),
        "kvb_error_restore": (c_int, [c_int, c_char_p, c_char_p]),
        "kvb_params_init": (None, [P]),
        "kvb_params_set": (c_int, [P, c_char_p, c_double]),
        "kvb_params_set_str": (c_int, [P, c_char_p, c_char_p]),
        "kvb_params_parse": (c_int, [P, c_char_p]),
        "kvb_params_get": (c_double, [P, POINTER(ParamSpec), c_char_p]),
        "kvb_params_get_str": (c_char_p, [P, POINTER(ParamSpec), c_char_p]),
        "kvb_params_has": (c_int, [P, c_char_p]),
        "kvb_rng_alloc_substream": (c_void_p, [c_uint64, c_uint64]),
        "gsl_rng_free": (None, [c_void_p]),
        "kvb_stream_type_at": (POINTER(StreamType), [S]),
        "kvb_stream_generate": (c_int, [c_char_p, P, c_void_p, POINTER(POINTER(StreamStruct))]),
        "kvb_stream_free": (None, [POINTER(StreamStruct)]),
        "kvb_method_type_at": (POINTER(MethodType), [S]),
        "kvb_method_lookup": (POINTER(MethodType), [c_char_p]),
        "kvb_method_alloc": (c_int, [c_char_p, POINTER(MethodConfig), P, POINTER(c_void_p)]),
        "kvb_method_free": (None, [c_void_p]),
        "kvb_method_update": (c_int, [c_void_p, D, S, D, S]),
        "kvb_method_query": (c_int, [c_void_p, D, S, D, S]),
        "kvb_method_memory": (None, [c_void_p, POINTER(Memory)]),
        "kvb_method_mutant_name": (c_char_p, [c_void_p]),
        "kvb_attention_exact": (c_int, [S, S, S, D, D, D, c_double, D, D]),
        "kvb_attention_batch_f64": (c_int, [S, S, S, S, S, D, D, D, c_double, c_int, D, D]),
        "kvb_model_available": (c_int, []),
        "kvb_dump_kv": (c_int, [c_char_p, ctypes.c_long, c_char_p, c_char_p, POINTER(S)]),
        # plugin ABI v1 (src/core/plugin.h, method.h); absent from older libraries
        "kvb_method_register": (c_int, [POINTER(MethodType), S]),
        "kvb_plugin_load": (c_int, [c_char_p]),
        "kvb_method_state": (c_void_p, [c_void_p]),
        "kvb_method_set_state": (None, [c_void_p, c_void_p]),
        "kvb_method_d_key": (S, [c_void_p]),
        "kvb_method_d_value": (S, [c_void_p]),
        "kvb_method_scale": (c_double, [c_void_p]),
        "kvb_method_uniform": (c_double, [c_void_p]),
    }
    missing = []
    for name, (res, args) in sigs.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        f.restype, f.argtypes = res, args
    return missing


lib, lib_path = _load()
missing_symbols = _declare(lib)


def has(symbol):
    """Whether the loaded library exports `symbol` (the plugin ABI came in a later version)."""
    return symbol not in missing_symbols


def _text(b):
    return b.decode("utf-8", "replace") if b else ""


def last_error(status):
    return KvbError(status, _text(lib.kvb_strerror_last()), _text(lib.kvb_error_where_last()))


def check(status):
    """Raises the library's last error when status is not KVB_OK."""
    if status:
        raise last_error(status)
    return status


def require(symbol, what):
    if not has(symbol):
        raise KvbError(ENOTFOUND, "%s needs %s, which %s does not export (an older kvbound; "
                       "rebuild it)" % (what, symbol, lib_path), "python")


# ---- values crossing into C ------------------------------------------------------------------------
# ctypes converts a Python int to a C integer modulo 2^bits and a str to a char* that C reads up to
# its first NUL, both silently: seed -1 would become 2^64 - 1, d_key 2^64 + 4 would become 4 and
# "exact\0x" would name "exact". Every integer and string the bindings pass is checked here first.

UINT64_MAX = 2**64 - 1


def c_int(x, what, lo=0, hi=UINT64_MAX):
    """x as a Python int in [lo, hi] (the range of the C type it is passed as), or KvbError
    (KVB_EINVAL) naming `what`: not an integer (1.5, "3"), or out of range (never wrapped)."""
    try:
        v = operator.index(x)
    except TypeError:
        raise KvbError(EINVAL, "%s must be an integer, got %r" % (what, x), "python")
    if not lo <= v <= hi:
        raise KvbError(EINVAL, "%s = %d is out of range [%d, %d] (C would see it wrapped)"
                       % (what, v, lo, hi), "python")
    return v


def c_str(s, what):
    """s (str, or bytes) as the bytes of a C string, or KvbError (KVB_EINVAL) when it holds a NUL
    (C would read only what comes before it) or is not a string."""
    if isinstance(s, str):
        b = s.encode()
    elif isinstance(s, (bytes, bytearray)):
        b = bytes(s)
    else:
        raise KvbError(EINVAL, "%s must be a string, got %r" % (what, s), "python")
    if b"\0" in b:
        raise KvbError(EINVAL, "%s %r contains a NUL character (C would read only %r)"
                       % (what, s, b.split(b"\0")[0].decode("utf-8", "replace")), "python")
    return b


def _param_number(name, value):
    """A parameter's number as the double kvb_params holds: an int beyond 2^53 that a double
    cannot hold exactly, or one beyond double range, is refused rather than rounded."""
    try:
        f = float(value)
    except (OverflowError, TypeError, ValueError) as e:
        raise KvbError(EINVAL, "parameter %s: %r is not a number a double can hold (%s)"
                       % (name, value, e), "python")
    try:
        iv = None if isinstance(value, bool) else operator.index(value)  # int, NumPy integers
    except TypeError:
        iv = None
    if iv is not None and int(f) != iv:
        raise KvbError(EINVAL, "parameter %s: the integer %d is not exactly a double (|n| > 2^53 "
                       "would be rounded to %.17g)" % (name, iv, f), "python")
    return f


def make_params(spec=None, **kw):
    """A kvb_params from "k=v,k=v" (the text after a method's or stream's name) and keywords
    (numbers, bools, strings). Errors (too many, a name too long) raise KvbError."""
    p = Params()
    lib.kvb_params_init(ctypes.byref(p))
    if spec:
        for item in spec.split(","):
            item = item.strip()
            if item:
                check(lib.kvb_params_parse(ctypes.byref(p), c_str(item, "parameters")))
    for name, value in kw.items():
        nb = c_str(name, "parameter name")
        if isinstance(value, str):
            check(lib.kvb_params_set_str(ctypes.byref(p), nb, c_str(value, "parameter " + name)))
        elif isinstance(value, (bool, int, float)) or hasattr(value, "__float__"):
            check(lib.kvb_params_set(ctypes.byref(p), nb, _param_number(name, value)))
        else:
            raise KvbError(EINVAL, "parameter %s: %r is neither a number nor a string"
                           % (name, value), "python")
    return p


def params_to_dict(p):
    out = {}
    for i in range(p.n):
        it = p.items[i]
        out[_text(it.name)] = _text(it.str) if it.is_string else it.num
    return out


def spec_rows(ptr):
    """The rows of a NULL-name-terminated kvb_param_spec table as dicts."""
    rows = []
    i = 0
    while ptr and ptr[i].name:
        r = ptr[i]
        kind = {PARAM_REAL: "real", PARAM_INT: "int", PARAM_STRING: "string"}.get(r.kind, "?")
        rows.append({"name": _text(r.name), "kind": kind,
                     "default": _text(r.sdef) if r.kind == PARAM_STRING else r.default,
                     "min": r.min, "max": r.max, "help": _text(r.help)})
        i += 1
    return rows


def mutant_rows(ptr):
    rows = []
    i = 0
    while ptr and ptr[i].name:
        rows.append({"name": _text(ptr[i].name), "help": _text(ptr[i].help)})
        i += 1
    return rows


def split_name(name):
    """"subgen,delta=0.5" -> ("subgen", "delta=0.5")."""
    head, _, rest = name.partition(",")
    return head.strip(), rest

"""The C battery in this process (kvb_props_main of libkvbound-props.so, src/core/plugin.h), so
that it reaches the Python methods registered here, and C plugins loaded into the registry."""

import ctypes
import os
import sys

from . import _lib
from ._lib import KvbError, lib

_props = None


def _props_lib():
    global _props
    if _props is not None:
        return _props
    tried, cands = [], []
    env = os.environ.get("KVBOUND_PROPS_LIB")
    if env:
        cands.append((os.path.join(env, _lib.PROPS_LIBNAME) if os.path.isdir(env) else env,
                      "$KVBOUND_PROPS_LIB"))
    cands.append((os.path.join(os.path.dirname(_lib.lib_path), _lib.PROPS_LIBNAME),
                  "beside %s" % _lib.LIBNAME))
    for d in _lib._build_dirs():
        cands.append((os.path.join(d, _lib.PROPS_LIBNAME), "build tree"))
    for path, how in cands:
        if not os.path.exists(path):
            tried.append("%s: %s (no such file)" % (how, path))
            continue
        try:
            p = ctypes.CDLL(os.path.abspath(path))
            p.kvb_props_main.restype = ctypes.c_int
            p.kvb_props_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        except (OSError, AttributeError) as e:
            tried.append("%s: %s (%s)" % (how, path, e))
            continue
        _props = p
        return p
    raise KvbError(_lib.ENOTFOUND, "cannot load %s; tried:\n  %s\nbuild it with `make` (it is "
                   "part of `all`) or set KVBOUND_PROPS_LIB" % (_lib.PROPS_LIBNAME, "\n  ".join(tried)),
                   "python")


def _flush_c():
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


def props_main(args):
    """Runs the battery as `kvb-props ARGS...` would (e.g. ["--method", "mine,stride=2"]) in this
    process — so it sees the Python methods registered here — and returns its exit status. Its
    report goes to this process's stdout (file descriptor 1)."""
    p = _props_lib()
    argv = [b"kvb-props"] + [a.encode() if isinstance(a, str) else bytes(a) for a in args]
    arr = (ctypes.c_char_p * (len(argv) + 1))(*argv, None)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return p.kvb_props_main(len(argv), arr)
    finally:
        _flush_c()


def load_plugin(path):
    """Loads a C plugin (kvb_plugin_load: dlopen, ABI checks, registers its methods)."""
    _lib.require("kvb_plugin_load", "load_plugin")
    _lib.check(lib.kvb_plugin_load(os.fsencode(path)))

"""The C battery in this process (kvb_props_main of libkvbound-props.so, src/core/plugin.h), so
that it reaches the Python methods registered here, and C plugins loaded into the registry."""

import ctypes
import os
import sys

from . import _lib
from ._lib import KvbError, lib

_loaded = {}


def companion_lib(libname, env_var, entry):
    """A library built beside libkvbound.so (libkvbound-props.so, libkvbound-cli.so) with its
    `int ENTRY(int argc, char **argv)` declared: $ENV_VAR (the file or its directory), else beside
    the libkvbound.so in use, else a build tree. It links libkvbound.so by soname, so it shares
    this process's registry (the Python methods registered here)."""
    if libname in _loaded:
        return _loaded[libname]
    tried, cands = [], []
    env = os.environ.get(env_var)
    if env:
        cands.append((os.path.join(env, libname) if os.path.isdir(env) else env, "$" + env_var))
    cands.append((os.path.join(os.path.dirname(_lib.lib_path), libname),
                  "beside %s" % _lib.LIBNAME))
    for d in _lib._build_dirs():
        cands.append((os.path.join(d, libname), "build tree"))
    for path, how in cands:
        if not os.path.exists(path):
            tried.append("%s: %s (no such file)" % (how, path))
            continue
        try:
            p = ctypes.CDLL(os.path.abspath(path))
            fn = getattr(p, entry)
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        except (OSError, AttributeError) as e:
            tried.append("%s: %s (%s)" % (how, path, e))
            continue
        _loaded[libname] = p
        return p
    raise KvbError(_lib.ENOTFOUND, "cannot load %s; tried:\n  %s\nbuild it with `make` (it is "
                   "part of `all`) or set %s" % (libname, "\n  ".join(tried), env_var), "python")


def _props_lib():
    return companion_lib(_lib.PROPS_LIBNAME, "KVBOUND_PROPS_LIB", "kvb_props_main")


def call_main(fn, prog, args):
    """fn(argc, argv) with argv = [prog] + args, stdout/stderr flushed on both sides."""
    argv = [prog] + [_lib.c_str(a if isinstance(a, str) else bytes(a), "argument") for a in args]
    arr = (ctypes.c_char_p * (len(argv) + 1))(*argv, None)
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        return fn(len(argv), arr)
    finally:
        _flush_c()


def _flush_c():
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):
        pass


def props_main(args):
    """Runs the battery as `kvb-props ARGS...` would (e.g. ["--method", "mine,stride=2"]) in this
    process — so it sees the Python methods registered here — and returns its exit status. Its
    report goes to this process's stdout (file descriptor 1)."""
    return call_main(_props_lib().kvb_props_main, b"kvb-props", args)


def load_plugin(path):
    """Loads a C plugin (kvb_plugin_load: dlopen, ABI checks, registers its methods)."""
    _lib.require("kvb_plugin_load", "load_plugin")
    _lib.check(lib.kvb_plugin_load(_lib.c_str(os.fsencode(path), "plugin path")))

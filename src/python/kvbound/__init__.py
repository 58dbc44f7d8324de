"""kvbound — Python bindings (ctypes, no compiler) over libkvbound.so.

    import kvbound as kvb
    s = kvb.stream("clusterable", n=256, d_key=16, d_value=16, seed=7)
    z = kvb.exact_attention(s.K, s.V, s.Q[-1], scale=0.25)
    with kvb.Method("subgen", 16, 16, scale=0.25, seed=7, delta=0.5, t=64) as m:
        m.update_many(s.K, s.V); zh = m.query(s.Q[-1]); m.memory()
    kvb.register_method(MyMethod, "mine")          # a Python class as a kvbound method
    kvb.props_main(["--method", "mine"])           # the battery on it, in this process
    kvb.cli_main(["run", "spec.lua", "--out", "o"])  # `kvbound run` on a spec naming it, too
    d = kvb.read_dump("cache/")                    # `kvbound dump-kv --out cache/`

libkvbound.so is found through $KVBOUND_LIB (the file or its directory), then pkg-config's libdir
(`make install`), then a build tree (build/ beside this package's checkout, or under the working
directory); the error lists every place tried. Failures raise KvbError (status, name, message,
where)."""

from ._lib import KvbError, LibraryNotFound, lib_path, STATUS
from ._lib import DECLARES_UNBIASED_NUM, DECLARES_UNBIASED_DEN, DECLARES_ERROR_BOUND
from .core import Memory, Method, Stream, attention_batch, exact_attention, methods, run, stream, streams
from .dump import KVDump, dump_kv, model_available, read_dump
from .pymethod import MethodContext, register_method, registered
from .props import load_plugin, props_main
from .cli import cli_main

__version__ = "0.1.0"
__all__ = ["KvbError", "LibraryNotFound", "lib_path", "STATUS", "Memory", "Method", "Stream",
           "attention_batch", "exact_attention", "methods", "run", "stream", "streams", "KVDump",
           "dump_kv", "model_available", "read_dump", "MethodContext", "register_method", "registered", "load_plugin",
           "props_main", "cli_main", "DECLARES_UNBIASED_NUM", "DECLARES_UNBIASED_DEN", "DECLARES_ERROR_BOUND"]

"""The kvbound command line in this process (kvb_cli_main of libkvbound-cli.so; build/kvbound is
a thin main over it), so that `kvbound run` sees the Python methods registered here: a spec names
them like built-ins."""

from . import _lib
from .props import call_main, companion_lib


def cli_main(args):
    """Runs `kvbound ARGS...` (e.g. ["run", "spec.lua", "--out", "out/x"]) in this process and
    returns its exit status; its output goes to this process's stdout/stderr (file descriptors
    1 and 2)."""
    lib = companion_lib(_lib.CLI_LIBNAME, "KVBOUND_CLI_LIB", "kvb_cli_main")
    return call_main(lib.kvb_cli_main, b"kvbound", args)

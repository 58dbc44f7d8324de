"""python3 -m kvbound — the battery and the command line on Python methods.

    python3 -m kvbound props --register my_method.py --method my_method[,k=v,...] [kvb-props options]
    python3 -m kvbound run --register my_method.py SPEC.lua [kvbound run options]
    python3 -m kvbound list

`props` registers the methods of each --register FILE.py (every class defined in the file with
update, query and memory; FILE.py:Class for one class) and runs the C battery in this process
with the remaining arguments exactly as `kvb-props` takes them (kvb-props --help); its exit
status is the battery's. `run` (and `merge`, `plot`) registers the same way and runs `kvbound
run ...` in this process (kvb_cli_main of libkvbound-cli.so), so a spec names the registered
methods like built-ins (`method "my_method" { ... }`); its exit status is kvbound's. `list`
prints every method (built-in, plugin, registered) and stream."""

import importlib.util
import inspect
import os
import sys

from . import cli, core, props, pymethod


def _load_file(spec):
    path, _, cls_name = spec.partition(":")
    if not os.path.exists(path):
        raise SystemExit("kvbound: --register %s: no such file" % path)
    mod_name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its own imports
    s = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(s)
    sys.modules[mod_name] = mod
    s.loader.exec_module(mod)
    if cls_name:
        if not hasattr(mod, cls_name):
            raise SystemExit("kvbound: --register %s: %s defines no %s" % (spec, path, cls_name))
        classes = [getattr(mod, cls_name)]
    else:
        classes = [c for _, c in inspect.getmembers(mod, inspect.isclass)
                   if c.__module__ == mod_name
                   and all(callable(getattr(c, f, None)) for f in ("update", "query", "memory"))]
        if not classes:
            raise SystemExit("kvbound: --register %s: no class with update, query and memory" % path)
    return [pymethod.register_method(c) for c in classes]


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "list":
        for m in core.methods():
            print("method  %-24s %s" % (m["name"], m["summary"]))
        for s in core.streams():
            print("stream  %-24s %s" % (s["name"], s["summary"]))
        return 0
    if cmd in ("props", "run", "merge", "plot"):
        args, i = [], 0
        while i < len(rest):
            if rest[i] == "--register":
                if i + 1 >= len(rest):
                    raise SystemExit("kvbound: --register needs FILE.py[:Class]")
                names = _load_file(rest[i + 1])
                print("kvbound: registered %s" % ", ".join(names), file=sys.stderr)
                i += 2
            else:
                args.append(rest[i])
                i += 1
        if cmd == "props":
            return props.props_main(args)
        return cli.cli_main([cmd] + args)
    raise SystemExit("kvbound: unknown command %r (props, run, merge, plot, list; see python3 -m "
                     "kvbound --help)" % cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A redflow worker process that runs Python actors:

    python3 -m redflow.worker --connect tcp://HOST:PORT --actors my_actors.py [--slots 16 --slot-bytes 8388608]

It serves the driver as `redflow worker --connect` does (docs/remote.md):
a tile of a graph run, or a Task Manager of a SPITS job run with
redflow.spits_run(..., listen=...), which imports the job's execute from
its module.
its tiles running the built-in actors, C++ plugins (--lib) and every
function decorated with @redflow.actor in the --actors modules (files or
module names), registered as the driver registers them ("py.NAME"). Each
worker process has its own interpreter, so Python actors on several
workers run in parallel. A module may also define register(registry) to
add actors of its own.
"""
import argparse
import importlib
import importlib.util
import os
import sys

from ._redflow import Error, Registry, run_worker
from .delayed import register_actors


def load_module(source):
    if source.endswith(".py") or os.sep in source:
        name = os.path.splitext(os.path.basename(source))[0]
        spec = importlib.util.spec_from_file_location(name, source)
        if spec is None:
            raise SystemExit(f"redflow.worker: --actors {source}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(source)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m redflow.worker",
                                     description="A redflow worker whose tiles run Python actors (docs/python.md).")
    parser.add_argument("--connect", required=True, help="the driver's endpoint, tcp://HOST:PORT")
    parser.add_argument("--actors", action="append", default=[], metavar="MODULE",
                        help="a module (file or name) whose @redflow.actor functions this worker runs (repeatable)")
    parser.add_argument("--lib", action="append", default=[], metavar="PLUGIN.so", help="a C++ actor plugin (repeatable)")
    parser.add_argument("--slots", type=int, default=16, help="memory slots of the tile (default 16)")
    parser.add_argument("--slot-bytes", type=int, default=8 << 20, help="bytes per slot (default 8 MiB)")
    parser.add_argument("--cores", type=int, default=1, help="a tile's parallel width; a SPITS Task Manager's worker threads")
    parser.add_argument("--name", default="", help="how the driver names this worker (default HOST:PID)")
    parser.add_argument("--persist", action="store_true", help="serve driver after driver")
    parser.add_argument("--connect-timeout", type=float, default=30, help="seconds to wait for the driver's WELCOME")
    args = parser.parse_args(argv)

    registry = Registry()
    for plugin in args.lib:
        registry.load_plugin(plugin)
    for source in args.actors:
        module = load_module(source)
        register_actors(registry, module)
        if hasattr(module, "register"):
            module.register(registry)
    try:
        run_worker(registry, connect=args.connect, slots=args.slots, slot_bytes=args.slot_bytes, cores=args.cores, name=args.name,
                   persist=args.persist, connect_timeout_s=args.connect_timeout)
    except Error as e:
        print(f"redflow.worker: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

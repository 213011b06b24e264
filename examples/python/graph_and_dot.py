"""The explicit API: a graph of data nodes and actors built with
redflow.Graph (or read from DOT), a Python actor registered by name beside
the built-in C++ ones, loaded once and executed many times, outputs
written straight into the caller's arrays.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/graph_and_dot.py
"""
import numpy as np

import redflow


def clip(inputs, output, args):
    """A Python actor: inputs and output are uint8 views of the slots."""
    limit = int(dict(kv.split("=") for kv in args.split(","))["limit"])
    np.clip(inputs[0].view(np.int32), -limit, limit, out=output.view(np.int32))


def main():
    g = redflow.Graph("clipped_sum")
    g.input("x", shape=(1000,), dtype=np.int32)
    g.input("y", shape=(1000,), dtype=np.int32)
    g.inner("s", shape=(1000,), dtype=np.int32)
    g.output("z", shape=(1000,), dtype=np.int32)
    g.actor("add", "i32.add", ["x", "y"], "s")                      # a built-in C++ actor
    g.actor("clip", "py.clip", ["s"], "z", args="limit=100", redundancy="2x-same")
    print(g.to_dot())
    assert redflow.Graph.from_dot_string(g.to_dot()).to_dot() == g.to_dot()

    registry = redflow.Registry()
    registry.add("py.clip", clip, inputs=1)
    loaded = redflow.Runtime(tiles=2).load(g, registry)
    z = np.empty(1000, np.int32)
    rng = np.random.default_rng(1)
    for _ in range(10):
        x, y = rng.integers(-200, 200, 1000, dtype=np.int32), rng.integers(-200, 200, 1000, dtype=np.int32)
        loaded.execute_into({"x": x, "y": y}, {"z": z})
        assert np.array_equal(z, np.clip(x + y, -100, 100))
    print(f"10 executions equal NumPy's; the last ran {loaded.stats['actors_executed']} actor executions")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""What Python costs redflow, measured in one run (docs/python.md, "Cost"):

1. a chain of empty-ish C++ actors (i32.add on 4 bytes) built and executed
   from Python, against the same DOT graph executed by the `redflow`
   command (its own mean time per execution over --repeat runs);
2. the same chain of empty Python actors: the cost of a Python call under
   the GIL per actor;
3. a blocked matrix product of NumPy actors, on 2 tiles of this process
   (one GIL) and on 2 `python3 -m redflow.worker` processes (one
   interpreter each), against NumPy's own product (one call), OpenBLAS on
   one thread per call everywhere;
4. building graphs from Python, 10^5 independent C++ actors and a chain
   of 10^4, against dask.delayed building the same (Debian python3-dask).

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py [build/redflow]
"""
import os
import re
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

import redflow  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_bench_actors as actors  # noqa: E402

CHAIN = 1000
REPEAT = 200


def chain_graph(function):
    g = redflow.Graph("chain")
    g.input("x", shape=1, dtype=np.int32)
    prev = "x"
    for k in range(CHAIN):
        out = f"v{k}"
        (g.output if k == CHAIN - 1 else g.inner)(out, shape=1, dtype=np.int32)
        g.actor(f"a{k}", function, [prev, "x"] if function == "i32.add" else [prev], out)
        prev = out
    return g


def per_execution(loaded, inputs, repeat=REPEAT):
    loaded.execute(inputs)  # warm
    start = time.perf_counter()
    for _ in range(repeat):
        loaded.execute(inputs)
    return (time.perf_counter() - start) / repeat


def command_per_execution(command, dot, x_path):
    """The command's own mean time of an execution over --repeat runs (it prints it)."""
    done = subprocess.run([command, "run", dot, "--tiles", "1", "--input", f"x={x_path}", "--repeat", str(REPEAT)],
                          check=True, capture_output=True, text=True)
    mean = re.search(r"mean ([0-9.]+) ms", done.stdout + done.stderr)
    if not mean:
        sys.exit(f"python_overhead: no mean time in the command's output:\n{done.stdout}{done.stderr}")
    return float(mean.group(1)) / 1e3


def blocked_matmul(n, b):
    """C = A B in b x b blocks, each block of A and B an input (the caller splits them)."""
    s = n // b
    a = [[redflow.input(f"a{i}_{k}", shape=(s, s), dtype=np.float64) for k in range(b)] for i in range(b)]
    c = [[redflow.input(f"b{k}_{j}", shape=(s, s), dtype=np.float64) for j in range(b)] for k in range(b)]
    outs = []
    for i in range(b):
        for j in range(b):
            acc = actors.product(a[i][0], c[0][j])
            for k in range(1, b):
                acc = actors.total(acc, actors.product(a[i][k], c[k][j]))
            outs.append(acc)
    return redflow.program(*outs)


def block_inputs(m0, name, b):
    s = m0.shape[0] // b
    return {f"{name}{i}_{k}": np.ascontiguousarray(m0[i * s:(i + 1) * s, k * s:(k + 1) * s]) for i in range(b) for k in range(b)}


def timed_product(loaded, a0, b0, b, repeat=3):
    """Seconds per product, the split into blocks and the result's assembly included."""
    def once():
        inputs = {**block_inputs(a0, "a", b), **block_inputs(b0, "b", b)}
        blocks = loaded.execute(inputs)
        return np.block([[blocks[i * b + j] for j in range(b)] for i in range(b)])
    assert np.allclose(once(), a0 @ b0)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        once()
        best = min(best, time.perf_counter() - start)
    return best


def construction(shape, n):
    """Seconds to build n actors from Python, as a chain (each adds x to the
    one before) or a fan (each adds x to itself): redflow's values and its
    Program (the Graph itself), and dask.delayed's graph of the same."""
    start = time.perf_counter()
    x = redflow.input("x", shape=(1,), dtype=np.int32)
    v, values = x, []
    for _ in range(n):
        if shape == "chain":
            v = redflow.call("i32.add", v, x)
        else:
            values.append(redflow.call("i32.add", x, x))
    program = redflow.program(*(values or [v]))
    rf = time.perf_counter() - start
    assert len(program.graph.actors) == n
    try:
        import dask
    except ImportError:
        return rf, None
    start = time.perf_counter()
    add = dask.delayed(np.add, pure=False)
    d = dask.delayed(np.ones(1, np.int32))
    w, values = d, []
    for _ in range(n):
        if shape == "chain":
            w = add(w, d)
        else:
            values.append(add(d, d))
    graph = (w if shape == "chain" else dask.delayed(list)(values)).__dask_graph__()
    dk = time.perf_counter() - start
    assert len(graph) >= n
    return rf, dk


def main():
    command = sys.argv[1] if len(sys.argv) > 1 else "build/redflow"
    x = {"x": np.ones(1, np.int32)}
    with tempfile.TemporaryDirectory() as tmp:
        dot, x_path = os.path.join(tmp, "chain.dot"), os.path.join(tmp, "x.npy")
        graph = chain_graph("i32.add")
        graph.write_dot(dot)
        np.save(x_path, x["x"])
        # Alternating, best of three each: the machine's noise hits both alike.
        loaded = redflow.Runtime(tiles=1).load(graph, redflow.Registry())
        cxx_py, cxx_cmd = float("inf"), float("inf")
        for _ in range(3):
            cxx_py = min(cxx_py, per_execution(loaded, x))
            cxx_cmd = min(cxx_cmd, command_per_execution(command, dot, x_path))
    print(f"chain of {CHAIN} C++ actors, 1 tile: from Python {cxx_py / CHAIN * 1e9:.0f} ns/actor, "
          f"from the command {cxx_cmd / CHAIN * 1e9:.0f} ns/actor: ratio {cxx_py / cxx_cmd:.2f}")

    reg = redflow.Registry()
    reg.add("py.empty", lambda inputs, output, args: None, inputs=1)
    py = per_execution(redflow.Runtime(tiles=1).load(chain_graph("py.empty"), reg), x, repeat=20)
    print(f"chain of {CHAIN} empty Python actors, 1 tile: {py / CHAIN * 1e9:.0f} ns/actor: "
          f"{py / cxx_py:.1f} times the C++ actor's")

    # A dask.delayed chain costs time quadratic in its length (each call
    # merges the graph behind it): 10^4 is as long as it is measured.
    for shape, n in (("fan", 100_000), ("chain", 10_000)):
        rf, dk = construction(shape, n)
        print(f"a {shape} of {n} actors built from Python: redflow {rf:.2f} s" +
              (f", dask.delayed {dk:.2f} s: ratio {dk / rf:.1f} (>1: redflow faster)" if dk else " (no dask to compare)"))

    for n, b in ((1024, 4), (2048, 4)):
        matmul(n, b)


def matmul(n, b):
    rng = np.random.default_rng(1)
    a0, b0 = rng.random((n, n)), rng.random((n, n))
    ref = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        a0 @ b0
        ref = min(ref, time.perf_counter() - start)
    slot_bytes = max(1 << 20, (n // b) ** 2 * 8)
    local = timed_product(blocked_matmul(n, b).load(tiles=2, slot_bytes=slot_bytes), a0, b0, b)
    procs = []

    def start_workers(endpoint):
        for _ in range(2):
            procs.append(subprocess.Popen([sys.executable, "-m", "redflow.worker", "--connect", endpoint, "--actors",
                                           actors.__file__, "--slots", "16", "--slot-bytes", str(slot_bytes)]))

    rt = redflow.Runtime(tiles=0, listen="tcp://127.0.0.1:*", workers=2, on_listening=start_workers, slots=16,
                         slot_bytes=slot_bytes)
    loaded = blocked_matmul(n, b).load(rt)
    remote = timed_product(loaded, a0, b0, b)
    del loaded, rt
    for p in procs:
        p.wait(timeout=30)
    print(f"blocked matmul {n}x{n} in {b}x{b} blocks of NumPy actors, NumPy alone (one thread) {ref * 1e3:.1f} ms: "
          f"2 tiles of this process {local * 1e3:.1f} ms (ratio {ref / local:.2f}), "
          f"2 worker processes {remote * 1e3:.1f} ms (ratio {ref / remote:.2f}; >1: redflow faster)")

if __name__ == "__main__":
    main()

"""Python actors in worker processes (`python3 -m redflow.worker`), each
with its own interpreter: started here, connected to a driver in this
process that has no local tile, so every actor runs in a worker."""
import os
import pathlib
import subprocess
import sys

import numpy as np

import redflow
import worker_actors as wa

ACTORS = pathlib.Path(wa.__file__)


def runtime_with_workers(n, procs, **options):
    def start(endpoint):
        for i in range(n):
            procs.append(subprocess.Popen([sys.executable, "-m", "redflow.worker", "--connect", endpoint, "--actors", str(ACTORS),
                                           "--name", f"py{i}", "--slots", "8", "--slot-bytes", str(1 << 20)],
                                          env=dict(os.environ), stderr=subprocess.PIPE, text=True))
    return redflow.Runtime(tiles=0, listen="tcp://127.0.0.1:*", workers=n, wait_s=30, on_listening=start, slots=8,
                           slot_bytes=1 << 20, **options)


def finish(procs):
    for p in procs:
        _, err = p.communicate(timeout=30)
        assert p.returncode == 0, err


def test_python_actors_run_in_the_worker_processes():
    procs = []
    x = redflow.input("x", shape=(100,), dtype=np.int64)
    stamps = [wa.where_and_sum(wa.triple(x)) for _ in range(6)]
    rt = runtime_with_workers(2, procs)
    loaded = redflow.program(*stamps).load(rt)
    out = loaded.execute({"x": np.arange(100)})
    workers = {p.pid for p in procs}
    ran_in = {int(o[0]) for o in out}
    assert ran_in <= workers and os.getpid() not in ran_in, (ran_in, workers)
    assert all(int(o[1]) == 3 * sum(range(100)) for o in out)
    tiles = loaded.stats["tiles"]
    assert [t["worker"] for t in tiles] and all(t["worker"].startswith("py") for t in tiles)
    del loaded, rt
    finish(procs)


def test_redundancy_votes_on_python_actors_across_worker_processes():
    procs = []
    x = redflow.input("x", shape=(1000,), dtype=np.float64)
    y = wa.triple(wa.triple(x))
    rt = runtime_with_workers(2, procs, redundancy="2x-diff")
    loaded = redflow.program(y).load(rt)
    x0 = np.random.default_rng(4).random(1000)
    (got,) = loaded.execute({"x": x0})
    assert np.array_equal(got, 3 * (3 * x0))
    stats = loaded.stats
    assert all(t["actors"] > 0 for t in stats["tiles"]), "each replica on its own worker"
    assert stats["detected_faults"] == 0
    del loaded, rt
    finish(procs)


def test_a_worker_without_the_actor_is_refused_by_name(tmp_path):
    empty = tmp_path / "no_actors.py"
    empty.write_text("")
    procs = []

    def start(endpoint):
        procs.append(subprocess.Popen([sys.executable, "-m", "redflow.worker", "--connect", endpoint, "--actors", str(empty)],
                                      env=dict(os.environ), stderr=subprocess.PIPE, text=True))

    x = redflow.input("x", shape=(4,), dtype=np.float64)
    rt = redflow.Runtime(tiles=0, listen="tcp://127.0.0.1:*", workers=1, wait_s=5, on_listening=start)
    try:
        redflow.program(wa.triple(x)).load(rt)
        raised = None
    except redflow.Error as e:
        raised = str(e)
    for p in procs:
        p.kill()
        p.wait()
    assert raised is not None and "py.triple" in raised, raised

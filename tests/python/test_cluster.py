"""The cluster client from Python: a real `redflow server` with two
persistent `redflow worker` processes, started and stopped here; graph jobs
submitted from Python come back as NumPy arrays equal to the local run."""
import os
import signal
import subprocess
import time

import numpy as np
import pytest

import redflow


@pytest.fixture
def server(command, tmp_path):
    server_file = tmp_path / "server"
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen([command, "server", "--min-workers", "2", "--server-file", str(server_file),
                             "--journal", str(tmp_path / "journal"), "--wait", "60", "--heartbeat-timeout", "2"],
                            stdout=log, stderr=subprocess.STDOUT)
    workers = []
    try:
        deadline = time.monotonic() + 30
        while not server_file.exists() or len(server_file.read_text().splitlines()) < 2:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            assert time.monotonic() < deadline, "no server file within 30 s"
            time.sleep(0.05)
        worker_endpoint = server_file.read_text().splitlines()[1]
        for _ in range(2):
            workers.append(subprocess.Popen([command, "worker", "--connect", worker_endpoint, "--persist"],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield redflow.Client(server_file=str(server_file), timeout_s=30)
    finally:
        for p in workers + [proc]:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in workers + [proc]:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()


def mix_graph():
    x = redflow.input("x", shape=(64,), dtype=np.int32)
    w = redflow.input("w", shape=(64,), dtype=np.int32)
    s = redflow.call("i32.add", x, w, name="add")
    return redflow.program(redflow.call("i32.mul", s, x, name="mul"), s, name="mix")


def test_a_graph_job_comes_back_as_the_arrays_of_the_local_run(server, tmp_path):
    p = mix_graph()
    rng = np.random.default_rng(3)
    x0, w0 = rng.integers(-99, 99, 64, dtype=np.int32), rng.integers(-99, 99, 64, dtype=np.int32)
    local = p.load(tiles=2).execute({"x": x0, "w": w0})
    job = redflow.submit_graph(server, p, {"x": x0, "w": w0}, workdir=str(tmp_path / "job"), redundancy="2x-diff")
    assert isinstance(job.id, int)
    out = job.result(timeout=120)
    assert set(out) == {"mul_out", "add_out"}
    assert out["mul_out"].dtype == np.int32 and np.array_equal(out["mul_out"], local[0])
    assert np.array_equal(out["add_out"], local[1])
    status = job.status()
    assert status["state"] == "succeeded" and status["finished"]
    assert status["report"] is not None
    assert any(j["id"] == job.id for j in server.jobs())


def test_a_failing_job_raises_its_reason_and_a_queued_one_can_be_cancelled(server, tmp_path):
    g = redflow.Graph("bad")
    g.input("x", shape=4, dtype=np.int32)
    g.output("y", shape=4, dtype=np.int32)
    g.actor("f", "no.such.actor", ["x"], "y")
    job = redflow.submit_graph(server, g, {"x": np.arange(4, dtype=np.int32)}, workdir=str(tmp_path / "bad"))
    with pytest.raises(redflow.Error, match="no.such.actor"):
        job.result(timeout=120)
    # A job asking for more workers than the server has waits in the queue: cancel it there.
    big = redflow.submit_graph(server, mix_graph(), {"x": np.zeros(64, np.int32), "w": np.zeros(64, np.int32)},
                               workdir=str(tmp_path / "big"), workers=5)
    assert big.status()["state"] == "queued"
    assert big.cancel()["state"] == "cancelled"
    with pytest.raises(redflow.Error, match="cancelled"):
        big.result(timeout=30)


def test_python_actors_are_refused_for_a_server_job(server, tmp_path):
    @redflow.actor
    def double(a, out):
        np.multiply(a, 2, out=out)

    x = redflow.input("x", shape=(4,), dtype=np.int32)
    with pytest.raises(ValueError, match="C\\+\\+ actors only"):
        redflow.submit_graph(server, redflow.program(double(x)), {"x": np.ones(4, np.int32)}, workdir=str(tmp_path / "py"))
    with pytest.raises(ValueError, match="server_file or its client endpoint"):
        redflow.Client()

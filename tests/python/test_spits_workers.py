"""A Python SPITS job whose Task Managers are worker processes
(`python3 -m redflow.worker`), one of them killed mid-job: every task is
committed exactly once all the same."""
import collections
import os
import signal
import subprocess
import sys

import pytest

import redflow
import worker_actors as wa


def start_workers(n, procs):
    def start(endpoint):
        for i in range(n):
            procs.append(subprocess.Popen([sys.executable, "-m", "redflow.worker", "--connect", endpoint, "--name", f"tm{i}",
                                           "--cores", "2"], env=dict(os.environ), stderr=subprocess.PIPE, text=True))
    return start


def test_every_task_is_committed_once_with_a_worker_killed_mid_job():
    procs, killed = [], []
    committed = collections.Counter()

    def commit(task, result):
        assert result == task * task
        committed[task] += 1
        if len(committed) == 60 and not killed:
            procs[0].send_signal(signal.SIGKILL)
            killed.append(len(committed))

    report = redflow.spits_run(range(400), wa.slow_square, commit, name="killed", task_managers=0,
                               listen="tcp://127.0.0.1:*", min_workers=2, heartbeat_timeout_s=1,
                               on_listening=start_workers(2, procs))
    assert killed == [60], "the kill did not land mid-job"
    assert set(committed) == set(range(400)) and set(committed.values()) == {1}
    assert report["committed"] == 400
    lost = {tm["name"]: tm["lost"] for tm in report["task_managers"]}
    assert lost.get("tm0", 0) >= 1, report["task_managers"]
    assert procs[0].wait(timeout=30) == -signal.SIGKILL
    _, err = procs[1].communicate(timeout=30)
    assert procs[1].returncode == 0, err


def test_a_closure_cannot_be_executed_by_workers():
    with pytest.raises(ValueError, match="defined at the top of a module file"):
        redflow.spits_run(range(3), lambda t: t, lambda t, r: None, task_managers=0, listen="tcp://127.0.0.1:*", min_workers=1)

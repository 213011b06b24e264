"""SPITS from Python: a bag of tasks as three Python pieces, each task
committed exactly once, failing tasks set aside, a stopped job resumed from
its commit log without committing anything twice."""
import collections

import pytest

import redflow


def test_every_task_is_committed_once_with_its_result():
    committed = collections.Counter()
    results = {}

    def commit(task, result):
        committed[task] += 1
        results[task] = result

    report = redflow.spits_run(range(1000), lambda t: (t, t * t), commit, task_managers=2, workers=2)
    assert report["committed"] == 1000 and report["generated"] == 1000
    assert set(committed.values()) == {1} and len(committed) == 1000
    assert all(results[t] == (t, t * t) for t in range(1000))


def test_a_task_that_always_raises_is_set_aside_after_its_strikes():
    committed = []

    def execute(task):
        if task["n"] == 7:
            raise ArithmeticError("task seven cannot be done")
        return task["n"] + 1

    report = redflow.spits_run(({"n": n} for n in range(20)), execute, lambda t, r: committed.append(r), strikes=3)
    assert sorted(committed) == [n + 1 for n in range(20) if n != 7]
    (poisoned,) = report["poisoned"]
    assert poisoned["strikes"] == 3
    assert "ArithmeticError: task seven cannot be done" in poisoned["last_error"]
    assert "Traceback" in poisoned["last_error"]


def test_a_stopped_job_resumes_from_its_log_and_commits_nothing_twice(tmp_path):
    log = str(tmp_path / "job.log")
    committed = collections.Counter()

    def failing_commit(task, result):
        if len(committed) == 60:
            raise OSError("disk full")
        committed[task] += 1

    with pytest.raises(redflow.Error) as caught:
        redflow.spits_run(range(200), str, failing_commit, name="resume", log=log)
    assert "disk full" in str(caught.value) and "commit" in str(caught.value)
    assert len(committed) == 60

    def commit(task, result):
        assert result == str(task)
        committed[task] += 1

    report = redflow.spits_run(range(200), str, commit, name="resume", log=log)
    assert report["from_log"] == 60 and report["committed"] == 140
    assert set(committed) == set(range(200)) and set(committed.values()) == {1}
    # Run again: the log holds every task; nothing is committed.
    again = redflow.spits_run(range(200), str, commit, name="resume", log=log)
    assert again["committed"] == 0 and again["from_log"] == 200


def test_a_log_of_other_tasks_is_refused(tmp_path):
    log = str(tmp_path / "job.log")
    redflow.spits_run(range(10), str, lambda t, r: None, name="first", log=log)
    with pytest.raises(redflow.Error):
        redflow.spits_run(range(10), str, lambda t, r: None, name="other", log=log)
    with pytest.raises(redflow.Error):
        # Same name, other tasks: the log's hash of each task does not match.
        redflow.spits_run(range(100, 110), str, lambda t, r: None, name="first", log=log)


def test_bad_pieces_fail_by_name():
    def tasks():
        yield 1
        raise RuntimeError("generator broke")

    with pytest.raises(redflow.Error, match="generator broke"):
        redflow.spits_run(tasks(), str, lambda t, r: None)
    with pytest.raises(TypeError, match="execute is not callable"):
        redflow.spits_run(range(3), 5, lambda t, r: None)

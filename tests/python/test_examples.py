"""The examples in examples/python/ run and say what docs/python.md says they say."""
import os
import pathlib
import subprocess
import sys

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


def run(name, *args):
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_blocked_matmul_outvotes_the_faulty_tile():
    out = run("blocked_matmul.py")
    assert "blocked product equals numpy's: True" in out
    assert "tiles out of service [2]" in out


def test_graph_and_dot_runs_ten_executions():
    out = run("graph_and_dot.py")
    assert "10 executions equal NumPy's; the last ran 3 actor executions" in out
    assert '"clip" [actor="py.clip", args="limit=100", redundancy="2x-same"]' in out


def test_the_readmes_python_example_runs():
    readme = (EXAMPLES.parents[1] / "README.md").read_text()
    start = readme.index("```python\n# PYTHONPATH=build/python")
    code = readme[start + len("```python\n"):readme.index("```", start + 3)]
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert (scope["y"] == 2.0).all() and scope["y"].shape == (1000,)


def test_bag_of_tasks_commits_every_task_and_then_none_from_its_log(tmp_path):
    log = str(tmp_path / "pi.log")
    first = run("bag_of_tasks.py", log)
    assert "committed 64 task(s), 0 from the log" in first
    assert "pi is about 3.14" in first
    second = run("bag_of_tasks.py", log)
    assert "committed 0 task(s), 64 from the log" in second

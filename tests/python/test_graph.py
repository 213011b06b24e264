"""Graphs from Python: built with Graph, built by calling functions, read
from DOT and written back; the C++ command's results on the same graphs."""
import numpy as np
import pytest

import redflow
from conftest import run_command

DOT = """digraph "mix" {
  "x" [kind=input, bytes=64, type=i32];
  "w" [kind=input, bytes=64, type=i32];
  "s" [kind=inner, bytes=64, type=i32];
  "y" [kind=output, bytes=64, type=i32];
  "add" [actor="i32.add"];
  "mul" [actor="i32.mul"];
  "x" -> "add" [port=0];
  "w" -> "add" [port=1];
  "add" -> "s";
  "s" -> "mul" [port=0];
  "x" -> "mul" [port=1];
  "mul" -> "y";
}
"""


def mix_graph():
    g = redflow.Graph("mix")
    g.input("x", shape=(16,), dtype=np.int32)
    g.input("w", shape=16, dtype="int32")
    g.inner("s", shape=(4, 4), dtype=np.int32)
    g.output("y", nbytes=64, dtype=np.int32)
    g.actor("add", "i32.add", ["x", "w"], "s")
    g.actor("mul", "i32.mul", ["s", "x"], "y")
    return g


def test_a_graph_built_in_python_is_the_dot_form():
    assert mix_graph().to_dot() == redflow.Graph.from_dot_string(DOT).to_dot()
    # And the DOT text itself, node for node (the writer's order is the builder's).
    assert mix_graph().to_dot().strip() == DOT.strip()


def test_write_dot_and_read_it_back(tmp_path):
    g = mix_graph()
    g.constant("k", np.arange(16, dtype=np.int32))
    g.output("z", shape=16, dtype=np.int32)
    g.actor("addk", "i32.add", ["x", "k"], "z")
    g.write_dot(str(tmp_path / "g.dot"))
    again = redflow.Graph.from_dot(str(tmp_path / "g.dot"))
    assert again.data == g.data and again.actors == g.actors
    assert 'file="k.bin"' in again.to_dot()
    assert (tmp_path / "k.bin").read_bytes() == np.arange(16, dtype=np.int32).tobytes()
    rt = redflow.Runtime(tiles=2)
    out = rt.load(again, redflow.Registry()).execute({"x": np.arange(16, dtype=np.int32), "w": np.ones(16, np.int32)})
    assert np.array_equal(out["z"], 2 * np.arange(16, dtype=np.int32))


def test_a_graph_built_by_calling_functions_has_the_actors_called():
    x = redflow.input("x", shape=(16,), dtype=np.int32)
    w = redflow.input("w", shape=(16,), dtype=np.int32)
    s = redflow.call("i32.add", x, w, name="add")
    y = redflow.call("i32.mul", s, x, name="mul")
    p = redflow.program(y, name="mix")
    actors = {a["name"]: a for a in p.graph.actors}
    assert actors["add"]["function"] == "i32.add" and actors["add"]["inputs"] == ["x", "w"]
    assert actors["mul"]["inputs"] == ["add_out", "x"] and actors["mul"]["output"] == "mul_out"
    kinds = {d["name"]: d["kind"] for d in p.graph.data}
    assert kinds == {"x": "input", "w": "input", "add_out": "inner", "mul_out": "output"}
    # The same results as the explicit graph.
    x0, w0 = np.arange(16, dtype=np.int32), np.full(16, 3, np.int32)
    (got,) = p.load(tiles=2).execute({"x": x0, "w": w0})
    assert np.array_equal(got, (x0 + w0) * x0)


@pytest.mark.parametrize("redundancy", redflow.REDUNDANCIES)
def test_outputs_equal_the_commands_run_under_every_configuration(redundancy, command, tmp_path):
    rng = np.random.default_rng(5)
    x0 = rng.integers(-1000, 1000, 16, dtype=np.int32)
    w0 = rng.integers(-1000, 1000, 16, dtype=np.int32)
    (tmp_path / "mix.dot").write_text(DOT)
    expected, _ = run_command(command, tmp_path / "mix.dot", {"x": x0, "w": w0}, ["y"], tmp_path, "--tiles", "3",
                              "--redundancy", redundancy)
    rt = redflow.Runtime(tiles=3, redundancy=redundancy)
    loaded = rt.load(mix_graph(), redflow.Registry())
    got = loaded.execute({"x": x0, "w": w0})
    assert got["y"].dtype == np.int32
    assert np.array_equal(got["y"], expected["y"])
    assert np.array_equal(got["y"], (x0 + w0) * x0)  # and the arithmetic, independently of both
    assert loaded.stats["redundancy"] == redundancy


def test_a_bit_flip_campaign_reports_what_the_command_reports(command, tmp_path):
    (tmp_path / "mix.dot").write_text(DOT)
    x0, w0 = np.arange(16, dtype=np.int32), np.arange(16, dtype=np.int32)
    flags = ["--tiles", "3", "--redundancy", "3x-diff", "--inject", "bitflip:p=0.5,seed=11", "--quarantine-after", "0"]
    expected, cpp_stats = run_command(command, tmp_path / "mix.dot", {"x": x0, "w": w0}, ["y"], tmp_path, *flags)
    rt = redflow.Runtime(tiles=3, redundancy="3x-diff", inject=["bitflip:p=0.5,seed=11"], quarantine_after=0)
    loaded = rt.load(mix_graph(), redflow.Registry())
    got = loaded.execute({"x": x0, "w": w0})
    stats = loaded.stats
    assert stats["injected_faults"] > 0, "the campaign injected nothing: it tests nothing"
    for key in ("injected_faults", "detected_faults", "reexecutions"):
        assert stats[key] == cpp_stats[key], key
    assert np.array_equal(got["y"], expected["y"])
    assert np.array_equal(got["y"], (x0 + w0) * x0)


def test_an_actor_plugin_loads_and_runs(test_plugin):
    reg = redflow.Registry()
    reg.load_plugin(test_plugin)
    assert "test.sleep" in reg
    x = redflow.input("x", shape=(8,), dtype=np.uint32)
    y = redflow.call("test.sleep", x, args="ms=1")
    (got,) = redflow.compute(y, inputs={"x": np.arange(8, dtype=np.uint32)}, registry=reg, tiles=2)
    assert np.array_equal(got, np.arange(8, dtype=np.uint32))


def test_a_chain_deeper_than_pythons_recursion_limit_builds_and_runs():
    x = redflow.input("x", shape=(1,), dtype=np.int32)
    v = x
    for _ in range(3000):  # Python's recursion limit is 1000
        v = redflow.call("i32.add", v, x)
    p = redflow.program(v)
    assert len(p.graph.actors) == 3000
    (got,) = p.load(tiles=1).execute({"x": np.ones(1, np.int32)})
    assert got[0] == 3001


def test_a_campaign_from_python_counts_what_the_commands_campaign_counts(command, tmp_path):
    import json
    import subprocess
    (tmp_path / "mix.dot").write_text(DOT)
    x0, w0 = np.arange(16, dtype=np.int32), np.arange(16, dtype=np.int32) * 7
    np.save(tmp_path / "x.npy", x0)
    np.save(tmp_path / "w.npy", w0)
    done = subprocess.run([command, "campaign", str(tmp_path / "mix.dot"), "--input", f"x={tmp_path / 'x.npy'}",
                           "--input", f"w={tmp_path / 'w.npy'}", "--tiles", "3", "--runs", "25", "--inject",
                           "bitflip:p=0.3,seed=5", "--quarantine-after", "0", "--json", str(tmp_path / "c.json")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = {c["redundancy"]: c for c in json.loads((tmp_path / "c.json").read_text())["configurations"]}
    rows = redflow.campaign(mix_graph(), {"x": x0, "w": w0}, runs=25, inject=["bitflip:p=0.3,seed=5"], tiles=3,
                            quarantine_after=0)
    assert [r["redundancy"] for r in rows] == list(redflow.REDUNDANCIES)
    keys = ("runs", "injected", "detected", "corrected", "silent", "failed", "reexecutions")
    for row in rows:
        assert {k: row[k] for k in keys} == {k: expected[row["redundancy"]][k] for k in keys}, row["redundancy"]
    by = {r["redundancy"]: r for r in rows}
    assert by["none"]["injected"] > 0 and by["none"]["silent"] > 0, "unprotected runs are corrupted"
    assert by["3x-diff"]["silent"] == 0 and by["3x-diff"]["detected"] > 0

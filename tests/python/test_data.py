"""NumPy data in and out: no copy at the boundary, and bad input refused
with a clear error before anything runs or is written."""
import numpy as np
import pytest

import redflow


def add_graph(n=1024):
    g = redflow.Graph("add")
    g.input("a", shape=(n,), dtype=np.float64)
    g.input("b", shape=(n,), dtype=np.float64)
    g.output("y", shape=(n,), dtype=np.float64)
    g.actor("sum", "py.add", ["a", "b"], "y")
    return g


def add_registry(seen=None):
    reg = redflow.Registry()

    def add(inputs, output, args):
        a, b = (i.view(np.float64) for i in inputs)
        out = output.view(np.float64)
        if seen is not None:
            seen.append(out.__array_interface__["data"][0])
        np.add(a, b, out=out)

    reg.add("py.add", add, inputs=2)
    return reg


def address(array):
    return array.__array_interface__["data"][0]


def test_execute_returns_arrays_over_the_producers_bytes():
    loaded = redflow.Runtime(tiles=2).load(add_graph(), add_registry())
    a, b = np.arange(1024.0), np.full(1024, 0.5)
    y = loaded.execute({"a": a, "b": b})["y"]
    assert y.dtype == np.float64 and y.shape == (1024,)
    assert np.array_equal(y, a + b)
    # A view of the runtime's own buffer, held by a capsule: a copy would own its data.
    assert not y.flags.owndata
    assert type(y.base).__name__ == "PyCapsule"
    # The buffer outlives the execution and the runtime (the array owns it now).
    y2 = loaded.execute({"a": b, "b": b})["y"]
    assert address(y2) != address(y) and np.array_equal(y, a + b)


def test_execute_into_writes_straight_into_the_callers_array():
    seen = []
    loaded = redflow.Runtime(tiles=1).load(add_graph(), add_registry(seen))
    a, b = np.arange(1024.0), np.ones(1024)
    y = np.zeros(1024)
    before = address(y)
    assert loaded.execute_into({"a": a, "b": b}, {"y": y}) is None
    assert address(y) == before and np.array_equal(y, a + b)
    assert len(seen) == 1  # the Python actor ran once, into its tile's output slot


def test_python_actors_see_views_not_copies():
    """The actor's arrays are views of the runtime's slots: what it writes
    through `output` is the execution's result, with nothing copied back."""
    reg = redflow.Registry()
    ids = []

    def fill(inputs, output, args):
        assert not output.flags.owndata and output.flags.writeable
        assert not inputs[0].flags.writeable, "inputs are read-only views"
        ids.append(address(output))
        output.view(np.int64)[:] = np.frombuffer(inputs[0], dtype=np.int64) * 3

    reg.add("py.triple", fill)
    g = redflow.Graph("t")
    g.input("x", shape=8, dtype=np.int64)
    g.output("y", shape=8, dtype=np.int64)
    g.actor("triple", "py.triple", ["x"], "y")
    out = redflow.Runtime(tiles=1).load(g, reg).execute({"x": np.arange(8)})
    assert np.array_equal(out["y"], 3 * np.arange(8)) and len(ids) == 1


@pytest.mark.parametrize(
    "inputs, error, words",
    [
        ({"a": np.arange(1024, dtype=np.int64), "b": np.ones(1024)}, TypeError, ["input 'a'", "int64", "f64"]),
        ({"a": np.ones(1000), "b": np.ones(1024)}, ValueError, ["input 'a'", "8000 bytes", "8192"]),
        ({"a": np.ones((1024, 2))[:, 0], "b": np.ones(1024)}, ValueError, ["input 'a'", "C-contiguous"]),
        ({"a": np.ones(1024), "b": np.ones(1024), "c": np.ones(1)}, KeyError, ["'c' is not an input"]),
        ({"a": np.ones(1024), "b": "not an array"}, Exception, ["input 'b'"]),
    ],
)
def test_bad_inputs_are_refused_by_name_and_nothing_is_written(inputs, error, words):
    loaded = redflow.Runtime(tiles=1).load(add_graph(), add_registry())
    y = np.full(1024, 7.0)
    with pytest.raises(error) as caught:
        loaded.execute_into(inputs, {"y": y})
    for w in words:
        assert w in str(caught.value)
    assert np.all(y == 7.0), "a refused execution wrote into the output"


def test_a_missing_input_and_a_wrong_output_are_refused():
    loaded = redflow.Runtime(tiles=1).load(add_graph(), add_registry())
    with pytest.raises(redflow.Error) as caught:
        loaded.execute({"a": np.ones(1024)})
    assert "'b'" in str(caught.value) and caught.value.code == "invalid_argument"
    y = np.full(1024, 7.0)
    with pytest.raises(ValueError, match="read-only"):
        y.flags.writeable = False
        loaded.execute_into({"a": np.ones(1024), "b": np.ones(1024)}, {"y": y})
    with pytest.raises(TypeError, match="output 'y' has dtype float32"):
        loaded.execute_into({"a": np.ones(1024), "b": np.ones(1024)}, {"y": np.zeros(1024, np.float32)})


def test_unknown_actors_and_bad_graphs_raise_redflows_message(tmp_path):
    g = redflow.Graph("bad")
    g.input("x", shape=4, dtype=np.int32)
    g.output("y", shape=4, dtype=np.int32)
    g.actor("f", "no.such.actor", ["x"], "y")
    with pytest.raises(redflow.Error) as caught:
        redflow.Runtime(tiles=1).load(g, redflow.Registry())
    assert "no.such.actor" in str(caught.value) and "'f'" in str(caught.value)
    with pytest.raises(KeyError, match="no data node 'nope'"):
        g.actor("h", "i32.add", ["x", "nope"], "y")
    with pytest.raises(TypeError, match="complex128 has no redflow element type"):
        g.input("z", shape=4, dtype=np.complex128)
    with pytest.raises(ValueError, match="a shape needs a dtype"):
        g.input("z", shape=4)
    with pytest.raises(redflow.Error) as caught:
        redflow.Graph.from_dot_string('digraph "d" { "x" [kind=input, bytes=4]; "x" -> ; }')
    assert caught.value.code == "invalid_graph" or "DOT" in str(caught.value) or "syntax" in str(caught.value)
    # A graph that fails validation is not written: no half-written file either.
    cyclic = redflow.Graph("two writers")
    cyclic.input("x", shape=4, dtype=np.int32)
    cyclic.output("y", shape=4, dtype=np.int32)
    cyclic.actor("a", "i32.add", ["x", "x"], "y")
    cyclic.actor("b", "i32.add", ["x", "x"], "y")
    with pytest.raises(redflow.Error, match="'y'"):
        cyclic.validate()
    with pytest.raises(redflow.Error):
        redflow.Graph.from_dot(str(tmp_path / "missing.dot"))


def test_a_registered_name_is_not_replaced():
    reg = redflow.Registry()
    reg.add("py.f", lambda i, o, a: None)
    with pytest.raises(KeyError, match="already registered"):
        reg.add("py.f", lambda i, o, a: None)
    with pytest.raises(KeyError, match="already registered"):
        reg.add("i32.add", lambda i, o, a: None)
    with pytest.raises(TypeError, match="not callable"):
        reg.add("py.g", 42)
    # The registry still works after the refusals.
    g = redflow.Graph("ok")
    g.input("x", shape=4, dtype=np.int32)
    g.output("y", shape=4, dtype=np.int32)
    g.actor("a", "i32.add", ["x", "x"], "y")
    out = redflow.Runtime(tiles=1).load(g, reg).execute({"x": np.arange(4, dtype=np.int32)})
    assert np.array_equal(out["y"], 2 * np.arange(4, dtype=np.int32))

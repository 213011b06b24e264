"""Python callables as actors: the delayed-style API, redundancy and voting
over them, faults caught, and a raising actor's traceback in the error."""
import re

import numpy as np
import pytest

import redflow


@redflow.actor
def scale(a, out):
    np.multiply(a, 2.0, out=out)


@redflow.actor(redundancy="3x-diff")
def running_sum(a):
    return np.cumsum(a)


@redflow.actor(shape=lambda a, b: (a.shape[0], b.shape[1]))
def matmul(a, b, out):
    np.matmul(a, b, out=out)


def test_functions_called_on_values_compute_what_numpy_does():
    x = redflow.input("x", shape=(100,), dtype=np.float64)
    y = running_sum(scale(x))
    x0 = np.random.default_rng(1).random(100)
    (got,) = redflow.compute(y, inputs={"x": x0}, tiles=3)
    assert np.allclose(got, np.cumsum(2.0 * x0))


def test_two_dimensional_values_keep_their_shapes():
    a = redflow.input("a", shape=(8, 4), dtype=np.float64)
    b = redflow.constant(np.arange(12.0).reshape(4, 3), name="b")
    c = matmul(a, b)
    assert c.shape == (8, 3)
    a0 = np.random.default_rng(2).random((8, 4))
    got, same_a = redflow.compute(c, scale(a), inputs={"a": a0}, tiles=2)
    assert got.shape == (8, 3) and np.allclose(got, a0 @ np.arange(12.0).reshape(4, 3))
    assert same_a.shape == (8, 4) and np.allclose(same_a, 2 * a0)


@pytest.mark.parametrize("redundancy", redflow.REDUNDANCIES)
def test_python_actors_under_every_configuration(redundancy):
    calls = []

    @redflow.actor
    def counted(a, out):
        calls.append(1)
        np.add(a, 1, out=out)

    x = redflow.input("x", shape=(64,), dtype=np.int64)
    p = redflow.program(counted(x))
    loaded = p.load(tiles=3, redundancy=redundancy)
    (got,) = loaded.execute({"x": np.arange(64)})
    assert np.array_equal(got, np.arange(64) + 1)
    replicas = {"none": 1, "2x-same": 2, "3x-same": 3, "2x-diff": 2, "3x-diff": 3}[redundancy]
    assert len(calls) == replicas, f"{redundancy} ran the Python actor {len(calls)} times"


def test_a_faulty_tile_is_outvoted_and_the_result_stays_right():
    x = redflow.input("x", shape=(256,), dtype=np.float64)
    y = scale(scale(scale(x)))
    p = redflow.program(y)
    loaded = p.load(tiles=3, redundancy="3x-diff", inject=["faulty-tile:1"])
    x0 = np.random.default_rng(3).random(256)
    (got,) = loaded.execute({"x": x0})
    assert np.array_equal(got, 8.0 * x0)
    stats = loaded.stats
    assert stats["injected_faults"] > 0 and stats["detected_faults"] > 0
    assert 1 in stats["quarantined_tiles"] or stats["tiles"][1]["lost_votes"] > 0


def test_an_actor_that_raises_fails_the_run_with_its_traceback():
    @redflow.actor
    def broken(a):
        return helper_that_raises(a)

    x = redflow.input("x", shape=(4,), dtype=np.float64)
    with pytest.raises(redflow.Error) as caught:
        redflow.compute(broken(x), inputs={"x": np.ones(4)}, tiles=2)
    text = str(caught.value)
    assert caught.value.code == "actor_failed"
    assert "Traceback" in text and "helper_that_raises" in text and "ZeroDivisionError: on purpose" in text
    assert "'broken_" in text, "the error names the actor"


def helper_that_raises(a):
    raise ZeroDivisionError("on purpose")


def test_an_actor_returning_the_wrong_shape_or_nothing_fails_by_name():
    @redflow.actor
    def nothing(a):
        pass

    @redflow.actor
    def too_long(a):
        return np.zeros(a.size + 1)

    x = redflow.input("x", shape=(4,), dtype=np.float64)
    for f, words in ((nothing, "returned None"), (too_long, "returned shape (5,)")):
        with pytest.raises(redflow.Error, match=re.escape(words)):
            redflow.compute(f(x), inputs={"x": np.ones(4)}, tiles=1)


def test_a_program_runs_many_times_on_new_inputs_and_checks_them():
    x = redflow.input("x", shape=(3, 5), dtype=np.float32)
    loaded = redflow.program(scale(x)).load(tiles=2)
    for k in range(20):
        x0 = np.full((3, 5), k, np.float32)
        (got,) = loaded.execute({"x": x0})
        assert got.dtype == np.float32 and np.array_equal(got, 2 * x0)
    with pytest.raises(ValueError, match=r"shape \(5, 3\), the program declares \(3, 5\)"):
        loaded.execute({"x": np.zeros((5, 3), np.float32)})
    with pytest.raises(KeyError, match="no array given for input"):
        loaded.execute({})
    with pytest.raises(TypeError, match="float64"):
        loaded.execute({"x": np.zeros((3, 5))})


def test_values_must_be_redflow_values():
    with pytest.raises(TypeError, match="not a redflow value"):
        scale(np.ones(3))


def test_a_traced_execution_gives_a_chrome_trace_with_each_actor():
    x = redflow.input("x", shape=(64,), dtype=np.float64)
    p = redflow.program(scale(scale(x)))
    loaded = p.load(tiles=2, trace=True)
    loaded.execute({"x": np.ones(64)})
    names = {e.get("name") for e in loaded.trace["traceEvents"] if e.get("ph") == "X"}
    actors = {a["name"] for a in p.graph.actors}
    assert len(actors) == 2 and actors <= names, (actors, names)
    untraced = redflow.program(scale(x)).load(tiles=1)
    untraced.execute({"x": np.ones(64)})
    assert not [e for e in untraced.trace["traceEvents"] if e.get("ph") == "X"]

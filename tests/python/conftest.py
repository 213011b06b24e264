"""Shared fixtures of the Python suites: the build tree's `redflow` command
(REDFLOW_COMMAND) and test plugin (REDFLOW_TEST_PLUGIN), which CTest's
python_tests sets, and a C++ run of a DOT graph to compare against."""
import json
import os
import subprocess

import numpy as np
import pytest


@pytest.fixture
def command():
    path = os.environ.get("REDFLOW_COMMAND")
    if not path:
        pytest.fail("REDFLOW_COMMAND is not set: run the suite through ctest (python_tests)")
    return path


@pytest.fixture
def test_plugin():
    path = os.environ.get("REDFLOW_TEST_PLUGIN")
    if not path:
        pytest.fail("REDFLOW_TEST_PLUGIN is not set: run the suite through ctest (python_tests)")
    return path


def run_command(command, dot, inputs, outputs, tmp_path, *flags):
    """`redflow run` of the DOT file `dot`: inputs {name: array} as .npy,
    outputs [name, ...]; returns ({name: array}, stats dict)."""
    args = [command, "run", str(dot), *flags, "--stats", str(tmp_path / "stats.json")]
    for name, array in inputs.items():
        path = tmp_path / f"in_{name}.npy"
        np.save(path, array)
        args += ["--input", f"{name}={path}"]
    for name in outputs:
        args += ["--output", f"{name}={tmp_path / f'out_{name}.npy'}"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{' '.join(args)}\n{done.stderr}"
    result = {name: np.load(tmp_path / f"out_{name}.npy") for name in outputs}
    return result, json.loads((tmp_path / "stats.json").read_text())

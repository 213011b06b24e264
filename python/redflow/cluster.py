"""Graph jobs on a long-lived `redflow server`, as futures of NumPy arrays.

    client = redflow.Client(server_file="cluster.addr")
    job = redflow.submit_graph(client, graph, {"x": x0}, workdir="/shared/job1", redundancy="2x-diff")
    outputs = job.result(timeout=600)        # {output name: array}

The job is the `redflow run` of the graph's DOT on the server's workers:
its inputs go to ``workdir`` as .npy files (a directory the server can
read), its outputs come back through the server (``Client.fetch``). C++
actors only: Python actors run in the Python process (``compute``).
"""
import io
import os

import numpy as np

from ._redflow import Error, Graph


class JobFuture:
    """A submitted graph job: ``result()`` waits for it and returns its outputs."""

    def __init__(self, client, job_id, outputs):
        self.client, self.id, self.outputs = client, job_id, list(outputs)
        self._result = None

    def status(self):
        """The job as the server knows it (a dict: state, message, workers, ...)."""
        return self.client.status(self.id)

    def done(self):
        return self.status()["finished"]

    def cancel(self):
        return self.client.cancel(self.id)

    def result(self, timeout=600):
        """{output name: array} once the job succeeded; redflow.Error naming why it did not."""
        if self._result is None:
            job = self.client.wait(self.id, timeout)
            if job["state"] != "succeeded":
                raise Error(f"job {self.id} {job['state']}: {job['message'] or 'exit status ' + str(job['exit_status'])}")
            files = self.client.fetch(self.id)
            self._result = {name: np.load(io.BytesIO(files[_output_file(name)]), allow_pickle=False) for name in self.outputs}
        return self._result


def _output_file(name):
    return f"out_{name}.npy"


def submit_graph(client, graph, inputs, outputs=None, *, workdir, redundancy=None, flags=(), plugins=(), workers=0,
                 time_limit_s=0):
    """Submits the `redflow run` of ``graph`` (a Graph, a Program or a DOT path) on ``inputs``
    ({name: array}); returns a JobFuture of its ``outputs`` (default: every output node)."""
    program = None
    if hasattr(graph, "graph") and hasattr(graph, "outputs"):  # a Program
        program, graph = graph, graph.graph
        python = [v.actor for v in program._topological(program.outputs) if v.kind == "actor" and v.python is not None]
        if python:
            raise ValueError(f"a server job runs C++ actors only; Python actor(s) {', '.join(python)} "
                             "run in this process: use compute() or program().load()")
    if isinstance(graph, (str, os.PathLike)):
        graph = Graph.from_dot(str(graph))
    os.makedirs(workdir, exist_ok=True)
    dot = os.path.join(workdir, "graph.dot")
    graph.write_dot(dot)
    names = {d["name"]: d for d in graph.data}
    args = ["run", "graph.dot"]
    for name, array in inputs.items():
        if name not in names or names[name]["kind"] != "input":
            raise KeyError(f"'{name}' is not an input of graph '{graph.name}'")
        np.save(os.path.join(workdir, f"in_{name}.npy"), np.ascontiguousarray(array))
        args += ["--input", f"{name}=in_{name}.npy"]
    if outputs is None:
        outputs = [d["name"] for d in graph.data if d["kind"] == "output"]
    for name in outputs:
        if name not in names or names[name]["kind"] != "output":
            raise KeyError(f"'{name}' is not an output of graph '{graph.name}'")
        args += ["--output", f"{name}={_output_file(name)}"]
    if redundancy:
        args += ["--redundancy", redundancy]
    for p in plugins:
        args += ["--lib", str(p)]
    args += list(flags)
    job_id = client.submit(args, os.path.abspath(workdir), workers=workers, time_limit_s=time_limit_s)
    return JobFuture(client, job_id, outputs)


"""redflow from Python: dataflow graphs with redundancy and voting, NumPy data
in and out without copies, Python callables as actors (docs/python.md).

Two ways to build a graph:

* explicitly, with :class:`Graph` (data nodes and actors by name), or read
  from extended DOT with :meth:`Graph.from_dot`; then ``Runtime.load`` once
  and ``LoadedGraph.execute`` many times;
* by calling functions, as with ``dask.delayed``: :func:`input` and
  :func:`constant` make values, functions decorated with :func:`actor` (or
  C++ actors through :func:`call`) combine them, and :func:`compute` runs
  the graph they built (:func:`program` keeps it for many executions).

A bag of tasks (SPITS) is three Python pieces: :func:`spits_run` (tasks,
execute, commit), each task committed exactly once.

A long-lived ``redflow server`` is reached with :class:`Client`;
:func:`submit_graph` runs a graph there and returns a future of its arrays.
"""
from ._redflow import REDUNDANCIES, Client, Error, Graph, LoadedGraph, Registry, Runtime, run_worker, spits_run
from .campaign import campaign
from .cluster import JobFuture, submit_graph
from .delayed import Program, Value, actor, call, compute, constant, input, program, register_actors

__all__ = [
    "REDUNDANCIES", "Client", "Error", "Graph", "JobFuture", "LoadedGraph", "Registry", "Runtime", "run_worker", "spits_run",
    "submit_graph", "register_actors", "campaign",
    "Program", "Value", "actor", "call", "compute", "constant", "input", "program",
]

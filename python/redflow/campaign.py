"""Fault-injection campaigns from Python, as `redflow campaign` runs them
(docs/redundancy.md): a fault-free reference run, then `runs` executions
per redundancy configuration with the faults injected, each configuration
on a fresh runtime; per configuration, what was injected, detected and
corrected, and how many runs ended with silently wrong outputs."""
import time

import numpy as np

from ._redflow import REDUNDANCIES, Error, Graph, Registry, Runtime


def campaign(graph, inputs, *, inject, runs=100, redundancies=REDUNDANCIES, registry=None, plugins=(), **options):
    """Runs the campaign of ``graph`` (a Graph, a Program or a DOT path) on
    ``inputs`` ({name: array}) with the fault specs ``inject`` (e.g.
    ["bitflip:p=0.01,seed=7"]); returns a list of dicts, one per
    configuration, with the keys of `redflow campaign --json`. ``options``
    are the Runtime's (tiles, scheduler, quarantine_after, ...)."""
    if not inject:
        raise ValueError("a campaign needs faults to inject (e.g. inject=['bitflip:p=0.01'])")
    if any(spec.startswith("crash-tile") for spec in inject):
        raise ValueError("crash-tile campaigns need a runtime per run: use `redflow campaign`")
    if hasattr(graph, "graph") and hasattr(graph, "registry"):  # a Program
        registry = graph.registry if registry is None else registry
        graph = graph.graph
    elif isinstance(graph, str):
        graph = Graph.from_dot(graph)
    registry = Registry() if registry is None else registry
    for p in plugins:
        registry.load_plugin(str(p))
    inputs = {name: np.ascontiguousarray(a).reshape(-1) for name, a in inputs.items()}
    clean = dict(options, redundancy="none")
    reference_rt = Runtime(**clean)
    reference = reference_rt.load(graph, registry).execute(inputs)
    rows = []
    for r in redundancies:
        row = {"redundancy": r}
        rt = Runtime(inject=list(inject), **dict(options, redundancy=r))
        try:
            loaded = rt.load(graph, registry)
        except Error as e:
            row["skipped"] = e.message
            rows.append(row)
            continue
        row.update(runs=0, injected=0, detected=0, corrected=0, silent=0, failed=0, reexecutions=0,
                   runs_ending_with_tiles_out=0, degraded_runs=0, reinstated_tiles=0,
                   unprotected_actors=len(loaded.unprotected_actors(r)))
        start = time.perf_counter()
        for _ in range(runs):
            try:
                out = loaded.execute(inputs)
                failed = None
            except Error as e:
                out, failed = None, e
            st = loaded.stats
            row["runs"] += 1
            row["injected"] += st["injected_faults"]
            row["detected"] += st["detected_faults"]
            row["reexecutions"] += st["reexecutions"]
            row["runs_ending_with_tiles_out"] += bool(st["quarantined_tiles"])
            row["degraded_runs"] += st["degraded"]
            row["reinstated_tiles"] += len(st["reinstated_tiles"])
            if failed is not None:
                row["failed"] += 1
                row.setdefault("first_failure", str(failed))
            elif any(not np.array_equal(out[k], reference[k]) for k in reference):
                row["silent"] += 1
            else:
                row["corrected"] += st["detected_faults"]
        row["ms_per_run"] = (time.perf_counter() - start) * 1e3 / max(1, runs)
        row["quarantined_tiles"] = sorted(rt.quarantined_tiles)
        rows.append(row)
        del loaded, rt
    return rows

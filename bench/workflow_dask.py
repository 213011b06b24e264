#!/usr/bin/python3
"""Runs an imported workflow (redflow import wfformat ... --out DIR) on Dask
with the same task times, and prints the makespans: Dask's threaded
scheduler and Dask distributed, each with WORKERS workers of one thread.

    bench/workflow_dask.py DIR/workflow.dot WORKERS

The graph is read from the workflow.dot the importer wrote: one Dask task per
`wf.task` actor, sleeping its `micros=` (the time redflow's actor sleeps) and
returning as many bytes as the task's output data node holds, so that Dask
distributed moves what redflow moves; a task depends on the tasks whose
files it reads (through `rf.split`, which cuts a task's output into its
files in redflow and needs no task here). One last task gathers every task
no other reads, as `wf.digest` does. Each makespan is the wall time of one
`get` of that last task, the cluster already started, as redflow's is the
wall time of one execution. Prints one line: `threaded_s distributed_s
bound_s`, the last a lower bound on any schedule's makespan on WORKERS
tiles tighter than max(critical path, work / WORKERS) (tight_bound()).

Dask comes from Debian (python3-dask, python3-distributed); run this with
/usr/bin/python3, which has them.
"""
import re
import sys
import time


def parse(path):
    """Tasks (name -> (micros, output bytes)), and each task's parent tasks."""
    node = re.compile(r'^\s*"([^"]+)" \[(.*)\];\s*$')
    edge = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"')
    attrs = {}
    into = {}  # actor -> the data nodes it reads; data node -> [the actor that makes it]
    for line in open(path, encoding="utf-8"):
        m = edge.match(line)
        if m:
            a, b = m.groups()
            into.setdefault(b, []).append(a)
            continue
        m = node.match(line)
        if m:
            attrs[m.group(1)] = {k: quoted or bare for k, quoted, bare in re.findall(r'(\w+)=(?:"([^"]*)"|([^,\s]+))', m.group(2))}
    # An edge data -> actor reads; actor -> data makes. Which is which: actors have an `actor` attribute.
    is_actor = {n: "actor" in a for n, a in attrs.items()}
    reads = {n: [d for d in srcs if not is_actor.get(d, False)] for n, srcs in into.items() if is_actor.get(n)}
    maker = {}
    for d, srcs in into.items():
        if not is_actor.get(d, False):
            maker[d] = srcs[0]
    tasks = {}
    for n, a in attrs.items():
        if a.get("actor") != "wf.task":
            continue
        micros = int(re.search(r"micros=(\d+)", a.get("args", "")).group(1))
        out = n + "_out"
        tasks[n] = (micros, int(attrs.get(out, {}).get("bytes", "8")))

    def task_of(d):
        """The wf.task whose output data node `d` is, or cut from; None for a constant."""
        a = maker.get(d)
        while a is not None and attrs[a].get("actor") == "rf.split":
            a = maker.get(reads[a][0])
        return a if a in tasks else None

    parents = {t: sorted({p for d in reads.get(t, []) if (p := task_of(d)) is not None}) for t in tasks}
    return tasks, parents


def tight_bound(tasks, parents, workers):
    """A lower bound on the makespan on `workers` tiles, at least
    max(critical path, work / workers): a task that can start at the earliest
    at s (its longest path of parents) runs at least min(d, s + d - t) of its
    d seconds after time t in any schedule, so the makespan is at least
    t + (that work after t) / workers for every t. The same holds of the
    graph reversed (the work that must run in the last t seconds, by each
    task's longest path of children). The largest over the t where it can
    change (each task's earliest start and end) and both directions, and
    over a head and a tail cut at once (below)."""
    children = {t: [] for t in tasks}
    for t, ps in parents.items():
        for p in ps:
            children[p].append(t)
    d = {t: tasks[t][0] / 1e6 for t in tasks}

    def levels(before):
        start, order, seen = {}, [], set()
        for root in tasks:  # iterative depth-first post-order over `before`
            stack = [(root, iter(before[root]))]
            if root in seen:
                continue
            seen.add(root)
            while stack:
                node, it = stack[-1]
                nxt = next((n for n in it if n not in seen), None)
                if nxt is None:
                    stack.pop()
                    order.append(node)
                else:
                    seen.add(nxt)
                    stack.append((nxt, iter(before[nxt])))
        for t in order:
            start[t] = max((start[p] + d[p] for p in before[t]), default=0.0)
        return start

    best = 0.0
    head, tail = levels(parents), levels(children)
    for start in (head, tail):
        for t0 in {v for t in tasks for v in (start[t], start[t] + d[t])}:
            after = sum(min(d[t], max(0.0, start[t] + d[t] - t0)) for t in tasks)
            best = max(best, t0 + after / workers)
    # Both ends at once: task t can run at most max(0, t0 - head) of its d
    # seconds before t0 and max(0, t1 - tail) in the last t1 seconds, so the
    # rest runs within [t0, makespan - t1], and the makespan is at least
    # t0 + t1 + that rest / workers, wherever t0 + t1 is at most a bound
    # already shown (the window is then not empty). A serial head and tail
    # around a wide middle (BWA: an index, 1,001 alignments, a concatenation)
    # need both. Over the tasks' earliest starts and ends from either end (at
    # most 48 of each, evenly spread when there are more).
    def spread(values, most=48):
        values = sorted(values)
        if len(values) <= most:
            return values
        return [values[i * (len(values) - 1) // (most - 1)] for i in range(most)]

    def candidates(level):
        return sorted(set(spread({level[t] for t in tasks})) | set(spread({level[t] + d[t] for t in tasks})))
    shown = best
    for t0 in candidates(head):
        for t1 in candidates(tail):
            if t0 + t1 > shown:
                continue
            rest = sum(max(0.0, d[t] - max(0.0, t0 - head[t]) - max(0.0, t1 - tail[t])) for t in tasks)
            best = max(best, t0 + t1 + rest / workers)
    return best


def work(micros, nbytes, *_inputs):
    time.sleep(micros / 1e6)
    return bytes(nbytes)


def gather(*_inputs):
    return len(_inputs)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench/workflow_dask.py DIR/workflow.dot WORKERS")
    path, workers = sys.argv[1], int(sys.argv[2])
    tasks, parents = parse(path)
    read = {p for ps in parents.values() for p in ps}
    dsk = {t: (work, micros, nbytes, *parents[t]) for t, (micros, nbytes) in tasks.items()}
    dsk["__digest"] = (gather, *sorted(t for t in tasks if t not in read))

    import dask.threaded
    from dask.distributed import Client, LocalCluster

    t0 = time.perf_counter()
    dask.threaded.get(dsk, "__digest", num_workers=workers)
    threaded = time.perf_counter() - t0

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
        client.get({"warm": (gather,)}, "warm")
        t0 = time.perf_counter()
        client.get(dsk, "__digest")
        distributed = time.perf_counter() - t0
    print(f"{threaded:.3f} {distributed:.3f} {tight_bound(tasks, parents, workers):.3f}")


if __name__ == "__main__":
    main()

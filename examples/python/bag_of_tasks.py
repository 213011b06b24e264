"""A SPITS bag of tasks in Python: estimate pi by Monte Carlo in 64 tasks,
each executed on worker threads (maybe more than once), each committed
exactly once. Stopped and started again with the same --log, it commits
only the tasks the log does not hold.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/bag_of_tasks.py [LOG]
"""
import sys

import numpy as np

import redflow

TASKS, SAMPLES = 64, 200_000


def execute(seed):
    points = np.random.default_rng(seed).random((SAMPLES, 2))
    return int(np.count_nonzero((points ** 2).sum(axis=1) <= 1.0))


def main():
    inside = {}

    def commit(seed, hits):
        inside[seed] = hits

    log = sys.argv[1] if len(sys.argv) > 1 else ""
    report = redflow.spits_run(range(TASKS), execute, commit, name="pi", task_managers=1, workers=2, log=log)
    print(f"committed {report['committed']} task(s), {report['from_log']} from the log")
    if len(inside) == TASKS:
        print(f"pi is about {4 * sum(inside.values()) / (TASKS * SAMPLES):.3f}")


if __name__ == "__main__":
    main()

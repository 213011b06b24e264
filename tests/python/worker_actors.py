"""Python actors for the worker-process tests: imported by the driver (the
test) and by each `python3 -m redflow.worker --actors` process."""
import os
import time

import numpy as np

import redflow


@redflow.actor(shape=(2,), dtype=np.int64)
def where_and_sum(a, out):
    out[0] = os.getpid()
    out[1] = int(a.sum())


@redflow.actor
def triple(a, out):
    np.multiply(a, 3, out=out)


def slow_square(n):
    """A SPITS task's execute, imported by Task Managers in worker processes."""
    time.sleep(0.002)
    return n * n

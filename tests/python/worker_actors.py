"""Python actors for the worker-process tests: imported by the driver (the
test) and by each `python3 -m redflow.worker --actors` process."""
import os

import numpy as np

import redflow


@redflow.actor(shape=(2,), dtype=np.int64)
def where_and_sum(a, out):
    out[0] = os.getpid()
    out[1] = int(a.sum())


@redflow.actor
def triple(a, out):
    np.multiply(a, 3, out=out)

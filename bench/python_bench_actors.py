"""The NumPy actors of bench/python_overhead.py's blocked product, in a
module of their own so that `python3 -m redflow.worker --actors` processes
register them too."""
import numpy as np

import redflow


@redflow.actor(shape=lambda x, y: (x.shape[0], y.shape[1]))
def product(x, y, out):
    np.matmul(x, y, out=out)


@redflow.actor
def total(p, q, out):
    np.add(p, q, out=out)

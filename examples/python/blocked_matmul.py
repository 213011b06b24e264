"""A blocked matrix product built by calling NumPy functions as redflow
actors, run with 3x-diff redundancy while one tile corrupts everything it
computes: the votes outvote the faulty tile, and the result is NumPy's.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/blocked_matmul.py
"""
import numpy as np

import redflow

N, B = 256, 2          # a 256x256 product in 2x2 blocks of 128x128
S = N // B


@redflow.actor(shape=lambda a, b: (a.shape[0], b.shape[1]))
def block_product(a, b, out):
    np.matmul(a, b, out=out)


@redflow.actor
def block_sum(p, q, out):
    np.add(p, q, out=out)


def block(m, i, j, name):
    """Block (i, j) of the value m, as an actor of its own."""
    @redflow.actor(shape=(S, S), name=name)
    def take(whole, out):
        np.copyto(out, whole[i * S:(i + 1) * S, j * S:(j + 1) * S])
    return take(m)


def main():
    a = redflow.input("a", shape=(N, N), dtype=np.float64)
    b = redflow.input("b", shape=(N, N), dtype=np.float64)
    blocks_a = [[block(a, i, k, f"a{i}{k}") for k in range(B)] for i in range(B)]
    blocks_b = [[block(b, k, j, f"b{k}{j}") for j in range(B)] for k in range(B)]
    c = [[block_sum(block_product(blocks_a[i][0], blocks_b[0][j]), block_product(blocks_a[i][1], blocks_b[1][j]))
          for j in range(B)] for i in range(B)]
    program = redflow.program(*(c[i][j] for i in range(B) for j in range(B)))
    loaded = program.load(tiles=3, redundancy="3x-diff", inject=["faulty-tile:2"])

    rng = np.random.default_rng(7)
    a0, b0 = rng.random((N, N)), rng.random((N, N))
    blocks = loaded.execute({"a": a0, "b": b0})
    product = np.block([[blocks[i * B + j] for j in range(B)] for i in range(B)])
    stats = loaded.stats
    print(f"blocked product equals numpy's: {np.allclose(product, a0 @ b0)}")
    print(f"faults injected {stats['injected_faults']}, detected {stats['detected_faults']}, "
          f"tiles out of service {stats['quarantined_tiles']}")


if __name__ == "__main__":
    main()

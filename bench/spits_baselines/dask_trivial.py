#!/usr/bin/python3
"""dask_trivial.py - baseline: trivial-task throughput of Dask distributed
(Debian python3-distributed 2022.12.1), for comparison with redflow's SPITS runtime.

Measures: a LocalCluster on 127.0.0.1 with 2 worker *processes*, 1 thread each
(processes=True, no dashboard), running N tasks of `inc(x) = x + 1` submitted with
client.map(..., pure=False) and collected with client.gather. Prints:
    dask tasks=N seconds=S tasks_per_s=R

Run:  /usr/bin/python3 bench/spits_baselines/dask_trivial.py [N=10000]
      (use the Debian system python, not pyenv's: the package installs there;
       apt-get install python3-distributed if missing)

Excludes: interpreter/import time, cluster + worker start-up, Client connect,
and shutdown. Only submit -> gather is timed (client.map through client.gather
returning all N results). Includes: client->scheduler->worker messaging over
loopback TCP, scheduling, pickling of the function/args/results.
"""
import signal
import sys
import time

from dask.distributed import Client, LocalCluster


def inc(x):
    return x + 1


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    signal.alarm(300)  # hard bound: never hang longer than 5 minutes
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        # Every Dask node runs a small HTTP server (health/metrics; the bokeh
        # dashboard itself is absent because bokeh is not installed). Pin them
        # to loopback on a random port so nothing listens on other interfaces.
        dashboard_address="127.0.0.1:0",
        worker_dashboard_address="127.0.0.1:0",
    )
    client = Client(cluster)
    try:
        client.wait_for_workers(2, timeout=60)
        # Timed region: submit -> gather only (cluster start excluded).
        t0 = time.perf_counter()
        futures = client.map(inc, range(n), pure=False)
        results = client.gather(futures)
        dt = time.perf_counter() - t0
        assert len(results) == n and results[0] == 1 and results[-1] == n
        print(f"dask tasks={n} seconds={dt:.3f} tasks_per_s={n / dt:.1f}", flush=True)
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()

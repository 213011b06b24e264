#!/usr/bin/env bash
# workqueue_trivial.sh - baseline: trivial-task throughput of CCTools Work Queue
# (Debian coop-computing-tools 9.9), for comparison with redflow's SPITS runtime.
#
# Measures: one manager (C API, wq_manager.c) + 2 work_queue_worker processes with
# 1 core each, all on 127.0.0.1. N tasks whose command is ":" (shell no-op; Work
# Queue runs each command via /bin/sh -c in a per-task sandbox dir on the worker)
# are submitted through a sliding window (see WQ_WINDOW); time = first submit ->
# last task returned by work_queue_wait. Prints:  workqueue tasks=N seconds=S tasks_per_s=R
#
# Run:  bench/spits_baselines/workqueue_trivial.sh [N=10000] [TIMEOUT_S=300]
#       env WQ_WINDOW=W (default 16): keep at most W tasks outstanding at the
#       manager, refilling as tasks return. WQ_WINDOW=0 submits all N up front;
#       Work Queue 9.9's manager then does O(queued tasks) work per scheduling
#       step, so throughput collapses (~65 tasks/s at N=2000 here; at N=10000
#       only 1870 tasks finished in 120 s). The window is the fair, fast configuration.
# Needs: apt-get install coop-computing-tools coop-computing-tools-dev gcc
#        (installed automatically if missing and we are root).
#
# Excludes: compiling the manager, manager creation, worker start-up and
# connection (the manager waits until both workers are connected before the
# clock starts), and teardown. Includes per-task dispatch over loopback TCP,
# the worker's sandbox creation + fork/exec of /bin/sh, and result reporting.
# The manager listens on the first free port in 20000-32767 (Work Queue 9.9's C
# API binds it on all interfaces; there is no bind-address option), but the
# workers connect to 127.0.0.1 only and all traffic is loopback. No catalog
# server is contacted: the queue has no project name and workers get host:port.
set -euo pipefail
N=${1:-10000}
TIMEOUT=${2:-300}
HERE=$(cd "$(dirname "$0")" && pwd)

if ! command -v work_queue_worker >/dev/null || [ ! -f /usr/include/cctools/work_queue.h ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y coop-computing-tools coop-computing-tools-dev >/dev/null
fi

TMP=$(mktemp -d /tmp/wq_trivial.XXXXXX)
WPIDS=()
cleanup() {
  for p in "${WPIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for p in "${WPIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

gcc -O2 -o "$TMP/wq_manager" "$HERE/wq_manager.c" \
    -l:libwork_queue.a -l:libdttools.a -lz -lm

export WORK_QUEUE_LOW_PORT=20000 WORK_QUEUE_HIGH_PORT=32767
unset WORK_QUEUE_NAME CATALOG_HOST 2>/dev/null || true
timeout -k 5 "$((TIMEOUT + 15))" "$TMP/wq_manager" "$N" "$TMP/port" 2 "$TIMEOUT" "${WQ_WINDOW:-16}" &
MPID=$!

for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
[ -s "$TMP/port" ] || { echo "manager did not start" >&2; exit 1; }
PORT=$(cat "$TMP/port")

for i in 1 2; do
  mkdir -p "$TMP/w$i"
  # --single-shot: exit when the manager goes away; -t: never linger > TIMEOUT
  work_queue_worker --cores=1 --single-shot -t "$TIMEOUT" -s "$TMP/w$i" \
      127.0.0.1 "$PORT" >"$TMP/w$i.log" 2>&1 &
  WPIDS+=($!)
done

rc=0
wait "$MPID" || rc=$?
exit $rc

#!/bin/sh
# Under Open MPI's mpirun: rank 0 becomes the driver, the other ranks serve
# it a tile each, from the launcher's environment alone (redflow links no
# MPI library). They meet through DIR/redflow-mpirun-JOBID.address; DIR must
# be shared by all nodes (a home or scratch directory on a cluster). Runs
# the demo graph and checks its output against a one-process run.
#   usage: examples/cluster/mpirun.sh [SHARED_DIR] [RANKS]
# REDFLOW names the redflow binary (default: redflow on PATH).
# Across machines, give the driver a non-loopback --listen and keys
# (docs/security.md), as srun.sbatch does.
set -eu
REDFLOW=${REDFLOW:-redflow}
DIR=${1:-$(mktemp -d)}
RANKS=${2:-3}
DEMO=$(cd "$(dirname "$0")/../demo" && pwd)
mkdir -p "$DIR"
# --oversubscribe: more ranks than cores on a laptop; --allow-run-as-root: containers.
mpirun -n "$RANKS" --oversubscribe --allow-run-as-root \
  "$REDFLOW" run "$DEMO/pipeline.dot" --input A="$DEMO/A.bin" --output Y="$DIR/Y.bin" \
  --rendezvous-dir "$DIR" --wait 60 --slots 8 --slot-bytes 65536
"$REDFLOW" run "$DEMO/pipeline.dot" --input A="$DEMO/A.bin" --output Y="$DIR/Y.one.bin" 2> /dev/null
cmp "$DIR/Y.bin" "$DIR/Y.one.bin" && echo "mpirun.sh: the same output as a one-process run"

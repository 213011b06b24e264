#!/bin/sh
# Under Open MPI's mpirun: rank 0 becomes the driver, the other ranks tiles,
# from the launcher's environment alone (redflow links no MPI library). They
# meet through DIR/redflow-mpirun-JOBID.address; DIR must be shared by all
# nodes (a home or scratch directory on a cluster).
#   usage: examples/cluster/mpirun.sh [SHARED_DIR] [RANKS]
# REDFLOW names the redflow binary (default: redflow on PATH).
set -eu
REDFLOW=${REDFLOW:-redflow}
DIR=${1:-$(mktemp -d)}
RANKS=${2:-3}
mkdir -p "$DIR"
# --oversubscribe: more ranks than cores on a laptop; --allow-run-as-root: containers.
exec mpirun -n "$RANKS" --oversubscribe --allow-run-as-root \
  "$REDFLOW" launch-probe --rendezvous-dir "$DIR" --timeout 60

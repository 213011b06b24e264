#!/bin/sh
# Rendezvous through an address file, as a batch queue would start a job
# several times (PY-PITS section V.B): the first starter becomes the driver,
# the others find it through the file. Here three starters run at once on
# this machine, with CURVE keys, meeting in a fresh directory.
#   usage: examples/cluster/address_file.sh [SHARED_DIR]
# REDFLOW names the redflow binary (default: redflow on PATH).
set -eu
REDFLOW=${REDFLOW:-redflow}
DIR=${1:-$(mktemp -d)}
mkdir -p "$DIR"
# Each starter has its own key pair; the driver accepts the three listed.
: > "$DIR/workers.keys"
for n in 1 2 3; do
  [ -f "$DIR/node$n.key" ] || "$REDFLOW" keygen --out "$DIR/node$n" > /dev/null
  echo "$(cat "$DIR/node$n.pub") node$n" >> "$DIR/workers.keys"
done
# What a job script on a batch queue runs: the same line on every node.
# (With the transport merged, the same flags go to `redflow run` / `redflow tile`.)
start() {
  "$REDFLOW" launch-probe --address-file "$DIR/job.address" --tiles 2 --timeout 30 \
    --key "$DIR/node$1.key" --authorized-keys "$DIR/workers.keys" > "$DIR/starter$1.out" 2>&1
}
start 1 & p1=$!
start 2 & p2=$!
start 3 & p3=$!
status=0
for p in $p1 $p2 $p3; do wait "$p" || status=1; done
cat "$DIR"/starter*.out
exit $status

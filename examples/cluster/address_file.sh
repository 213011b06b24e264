#!/bin/sh
# Rendezvous through an address file, as a batch queue would start a job
# several times (PY-PITS section V.B): every starter runs the same
# `redflow run` line; the first to create the file (O_EXCL) becomes the
# driver and publishes where it listens, the others serve it a tile each.
# Here three starters run at once on this machine, with CURVE keys, meeting
# in a fresh directory, on the demo graph; the output is checked against a
# one-process run.
#   usage: examples/cluster/address_file.sh [SHARED_DIR]
# REDFLOW names the redflow binary (default: redflow on PATH).
set -eu
REDFLOW=${REDFLOW:-redflow}
DIR=${1:-$(mktemp -d)}
DEMO=$(cd "$(dirname "$0")/../demo" && pwd)
mkdir -p "$DIR"
# Each starter has its own key pair; the driver accepts the three listed.
: > "$DIR/workers.keys"
for n in 1 2 3; do
  [ -f "$DIR/node$n.key" ] || "$REDFLOW" keygen --out "$DIR/node$n" > /dev/null
  echo "$(cat "$DIR/node$n.pub") node$n" >> "$DIR/workers.keys"
done
# What a job script on a batch queue runs: the same line on every node
# (only the driver writes the output).
start() {
  "$REDFLOW" run "$DEMO/pipeline.dot" --input A="$DEMO/A.bin" --output Y="$DIR/Y.bin" \
    --address-file "$DIR/job.address" --min-workers 2 --wait 30 --slots 8 --slot-bytes 65536 \
    --key "$DIR/node$1.key" --authorized-keys "$DIR/workers.keys" > "$DIR/starter$1.out" 2>&1
}
start 1 & p1=$!
start 2 & p2=$!
start 3 & p3=$!
status=0
for p in $p1 $p2 $p3; do wait "$p" || status=1; done
cat "$DIR"/starter*.out
"$REDFLOW" run "$DEMO/pipeline.dot" --input A="$DEMO/A.bin" --output Y="$DIR/Y.one.bin" 2> /dev/null
cmp "$DIR/Y.bin" "$DIR/Y.one.bin" && echo "address_file.sh: the same output as a one-process run"
exit $status

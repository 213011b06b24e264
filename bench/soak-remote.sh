#!/bin/sh
# Soak test of lost workers (docs/remote.md): runs the kill -9 trials of
# tests/net_crash_test.cpp over and over (each round: 20 new seeds, a worker
# process killed at a random moment, and 5 more while 3 MiB values cross to
# it in pieces; outputs checked against the reference),
# until one fails or ROUNDS rounds passed. Bounded: the suite's own test runs
# 20 trials; this is for the nights.
#   bench/soak-remote.sh [BUILD_DIR] [ROUNDS]
set -eu
build=${1:-build}
rounds=${2:-50}
i=0
while [ "$i" -lt "$rounds" ]; do
  i=$((i + 1))
  echo "soak-remote: round $i of $rounds"
  REDFLOW_SOAK_ROUND=$i "$build/redflow_tests" --gtest_filter='NetCrash.*' --gtest_brief=1 || { echo "soak-remote: failed in round $i"; exit 1; }
done
echo "soak-remote: $rounds rounds, $((rounds * 25)) kill trials, all outputs equal the reference"

#!/bin/sh
# Soak test of SPITS over the network (docs/spits.md): runs the kill -9 trials
# of tests/spits_net_test.cpp (3 new seeds a round: 3 Task Manager processes,
# one killed at a random moment, every task committed exactly once) and the
# poisoned-task test over and over, until one fails or ROUNDS rounds passed.
#   bench/soak-spits.sh [BUILD_DIR] [ROUNDS]
set -eu
build=${1:-build}
rounds=${2:-30}
i=0
while [ "$i" -lt "$rounds" ]; do
  i=$((i + 1))
  echo "soak-spits: round $i of $rounds"
  REDFLOW_SOAK_ROUND=$i "$build/redflow_tests" --gtest_filter='SpitsNet.KillNine*:SpitsNet.ATaskThatCrashes*' --gtest_brief=1 ||
    { echo "soak-spits: failed in round $i"; exit 1; }
done
echo "soak-spits: $rounds rounds, $((rounds * 3)) kill trials and $rounds poisoned-task runs, every task committed exactly once"

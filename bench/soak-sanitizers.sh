#!/usr/bin/env bash
# Soak of the sanitizer stages on a loaded machine: runs the ASan+UBSan
# stage's tests and the TSan stage's tests (exactly as scripts/test runs them:
# scripts/sanitizer-stages) ROUNDS times each, both at once, so each runs
# with the other cores busy, a stand-in for a slower CI machine. A stage
# that ends its rounds early keeps one core busy with a spinning loop until
# the other ends. Stops a stage at its first failure; its log is kept.
#   bench/soak-sanitizers.sh [ROUNDS]     # default 5; needs build-asan/ and build-tsan/
# Build them first as scripts/test does, e.g.:
#   REDFLOW_BUILD_DIR=build-asan REDFLOW_CMAKE_ARGS="-DREDFLOW_SANITIZE=address -DREDFLOW_BUILD_BENCH=OFF" scripts/bootstrap
#   REDFLOW_BUILD_DIR=build-tsan REDFLOW_CMAKE_ARGS="-DREDFLOW_SANITIZE=thread -DREDFLOW_BUILD_BENCH=OFF" scripts/bootstrap
# Logs: $OUT (default a new directory under /tmp), one per stage and round,
# and `summary`, a line per round. CTEST_ARGS adds ctest arguments to both
# stages (e.g. CTEST_ARGS="-I 1,20" runs the first 20 tests of each: a quick try).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
for dir in build-asan build-tsan; do
  [ -f "$dir/CTestTestfile.cmake" ] || { echo "soak-sanitizers: no $dir/ (build it first, see the top of this script)" >&2; exit 2; }
done
out=${OUT:-$(mktemp -d /tmp/redflow-soak-sanitizers.XXXXXX)}
mkdir -p "$out"
source scripts/sanitizer-stages
jobs=$(($(nproc) + 1))  # as scripts/test runs each stage

# soak STAGE: the stage's rounds; writes $out/STAGE.done (its result) at the end.
soak() {
  local stage=$1 i start status
  for i in $(seq 1 "$rounds"); do
    start=$(date +%s)
    status=0
    # shellcheck disable=SC2086  # CTEST_ARGS: ctest arguments, split
    "${stage}_ctest" -j"$jobs" ${CTEST_ARGS:-} >"$out/$stage-$i.log" 2>&1 || status=$?
    echo "$stage round $i: $( ((status == 0)) && echo passed || echo "FAILED (exit $status)") in $(($(date +%s) - start)) s," \
      "$(grep -E 'tests passed' "$out/$stage-$i.log" | tail -1)" >>"$out/summary"
    if ((status != 0)); then
      echo "failed in round $i" >"$out/$stage.done"
      return
    fi
  done
  echo "passed $rounds rounds" >"$out/$stage.done"
}
# spin_until OTHER: keeps one core busy until OTHER's rounds end.
spin_until() {
  while [ ! -f "$out/$1.done" ]; do
    for _ in $(seq 1 100000); do :; done
  done
}

echo "soak-sanitizers: $rounds rounds of each stage, logs in $out" >&2
(soak asan; spin_until tsan) &
asan_pid=$!
(soak tsan; spin_until asan) &
tsan_pid=$!
wait "$asan_pid" "$tsan_pid"
cat "$out/summary"
asan=$(cat "$out/asan.done") tsan=$(cat "$out/tsan.done")
echo "soak-sanitizers: ASan+UBSan $asan, TSan $tsan (logs in $out)"
[[ $asan == passed* && $tsan == passed* ]]

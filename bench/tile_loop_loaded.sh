#!/usr/bin/env bash
# Parallel actors on a loaded machine (docs/performance.md, "Parallel actors
# on a loaded machine"):
#   bench/tile_loop_loaded.sh [BUILD_DIR]
# A bitonic sort of LOADED_N int32 in blocks of LOADED_BLOCK (its merges
# call ctx.parallel_for) on one tile, with --cores-per-tile 2 and with 1,
# rounds alternating, while LOADED_BUSY busy-looping processes compete for
# the cores; then the same without them. Prints each median and the ratio
# (2 cores per tile / 1): about 1 on a loaded machine when a parallel loop
# never waits for a helper the OS has not scheduled, far above 1 when it does.
# Environment: LOADED_ROUNDS=3, LOADED_BUSY=16, LOADED_N=262144, LOADED_BLOCK=1024.
set -euo pipefail
case ${1:-} in -h|--help) sed -n 2,11p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) if [ -d "$build" ]; then build=$(pwd)/$build; else build=$root/$build; fi ;; esac
cli=$build/redflow
[ -x "$cli" ] || { echo "tile_loop_loaded.sh: no $cli (build first, or give BUILD_DIR)" >&2; exit 1; }
rounds=${LOADED_ROUNDS:-3}
busy=${LOADED_BUSY:-16}
n=${LOADED_N:-262144}
block=${LOADED_BLOCK:-1024}
work=$(mktemp -d)
busy_pids=()
stop_busy() {
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  busy_pids=()
}
trap 'stop_busy; rm -rf "$work"' EXIT
"$cli" gen bitonic --n "$n" --block "$block" --tiles 1 --out "$work/sort" >/dev/null

# Seconds of one run with `cores` per tile.
run_once() {
  local cores=$1 t0 t1
  t0=$(date +%s.%N)
  "$cli" run "$work/sort/bitonic.dot" --input X="$work/sort/X.bin" --tiles 1 --cores-per-tile "$cores" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

measure() {
  local label=$1 one=() two=()
  for ((r = 0; r < rounds; r++)); do
    one+=("$(run_once 1)")
    two+=("$(run_once 2)")
  done
  local m1 m2
  m1=$(printf '%s\n' "${one[@]}" | median)
  m2=$(printf '%s\n' "${two[@]}" | median)
  printf '%-28s 1 core/tile %8.3f s   2 cores/tile %8.3f s   ratio 2/1 %6.2f\n' "$label" "$m1" "$m2" "$(echo "$m2 / $m1" | bc -l)"
}

echo "bitonic sort of $n int32, blocks of $block, one tile, $rounds rounds each; $(nproc) cores"
for ((i = 0; i < busy; i++)); do
  (while :; do :; done) &
  busy_pids+=($!)
done
measure "with $busy busy processes"
stop_busy
measure "alone"

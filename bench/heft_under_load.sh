#!/usr/bin/env bash
# HEFT on a loaded machine (docs/scheduling.md, "HEFT under load"): real
# workflows (WfCommons' WfFormat traces, imported as bench/workflows.sh does)
# run while BUSY processes spin on the machine's cores, ROUNDS times each
# with HEFT walking its plan as made (--heft-static), HEFT adapting to a
# tile that falls behind (the default), and work stealing, in turn within
# each round so the three meet the same load. Prints, per workflow, the
# median and the worst makespan of each over the lower bound
# max(critical path, work / tiles), and the adaptive HEFT's median and worst
# over work stealing's (goal: <= 1). Each run's digest is checked.
# EXTRA (environment) adds run flags to every run, e.g. a tile that falls
# behind for another reason than load: EXTRA="--inject slow-tile:1,factor=2".
#   bench/heft_under_load.sh [BUILD_DIR] [TILES] [SECONDS] [ROUNDS] [BUSY] TRACE.json...
# e.g. bench/heft_under_load.sh build 2 2 5 1 WfInstances/pegasus/montage/montage-chameleon-2mass-005d-001.json
set -euo pipefail
build=${1:-build}
tiles=${2:-2}
seconds=${3:-2}
rounds=${4:-5}
busy=${5:-1}
shift 5 || { echo "usage: bench/heft_under_load.sh BUILD_DIR TILES SECONDS ROUNDS BUSY TRACE.json..." >&2; exit 2; }
[ $# -gt 0 ] || { echo "bench/heft_under_load.sh: no trace given" >&2; exit 2; }
redflow=$build/redflow
work=$(mktemp -d /tmp/redflow-heft-load.XXXXXX)
spinners=()
stop_spinners() {
  for p in "${spinners[@]}"; do kill "$p" 2>/dev/null || true; done
  spinners=()
}
trap 'stop_spinners; rm -rf "$work"' EXIT
for ((i = 0; i < busy; i++)); do
  bash -c 'while :; do :; done' &
  spinners+=($!)
done
# median FILE / max FILE: of the numbers in FILE, one per line.
median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
worst() { sort -g "$1" | tail -n 1; }
ratio() { printf '%.3f' "$(echo "$1 / $2" | bc -l)"; }
echo "# $busy busy process(es) on $(nproc) core(s), $tiles tiles, $seconds s of task time, $rounds rounds${EXTRA:+, $EXTRA}"
printf '%-44s %7s %9s %9s %9s %9s %9s %9s %10s %10s\n' workflow bound_s static/lb static/max adapt/lb adapt/max steal/lb steal/max adapt/steal worst/worst
for trace; do
  name=$(basename "$trace" .json)
  out=$("$redflow" import wfformat "$trace" --out "$work/$name" --total-seconds "$seconds" --tiles "$tiles") ||
    { echo "$name: import failed: $out" >&2; continue; }
  bound=$(sed -n 's/.*at best \([0-9.]*\) s.*/\1/p' <<<"$out")
  run_line=$(tail -n 1 <<<"$out")
  for label in static adapt steal; do : >"$work/$name.$label"; done
  for ((round = 0; round < rounds; round++)); do
    for label in static adapt steal; do
      case $label in
        static) flags="--scheduler heft --heft-static" ;;
        adapt) flags="--scheduler heft" ;;
        steal) flags="--scheduler steal" ;;
      esac
      line=${run_line/ run / run $flags ${EXTRA:-} --stats $work/$name.stats.json }
      if ! eval "$line" >"$work/$name.$label.log" 2>&1; then
        echo "$name ($label): the run failed or its digest differs from the reference:" >&2
        tail -n 3 "$work/$name.$label.log" >&2
        exit 1
      fi
      jq .makespan_s "$work/$name.stats.json" >>"$work/$name.$label"
    done
  done
  declare -A med=() max=()
  for label in static adapt steal; do
    med[$label]=$(median "$work/$name.$label")
    max[$label]=$(worst "$work/$name.$label")
  done
  printf '%-44s %7.3f %9s %9s %9s %9s %9s %9s %10s %10s\n' "$name" "$bound" \
    "$(ratio "${med[static]}" "$bound")" "$(ratio "${max[static]}" "$bound")" \
    "$(ratio "${med[adapt]}" "$bound")" "$(ratio "${max[adapt]}" "$bound")" \
    "$(ratio "${med[steal]}" "$bound")" "$(ratio "${max[steal]}" "$bound")" \
    "$(ratio "${med[adapt]}" "${med[steal]}")" "$(ratio "${max[adapt]}" "${max[steal]}")"
done

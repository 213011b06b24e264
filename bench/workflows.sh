#!/usr/bin/env bash
# Makespans of real scientific workflows (WfCommons' WfFormat traces) on
# redflow, over the lower bound max(critical path, work / tiles), for HEFT
# (each task's time given exactly as its work= hint) and work stealing.
# Each trace is imported with `redflow import wfformat --total-seconds S`
# (docs/workflows.md), run once per scheduler, and its digest checked
# against the reference; the makespan is the execution's wall time as the
# driver measures it (--stats makespan_s).
# Beside them, the same workflow on Dask with the same task times, TILES
# workers of one thread: its threaded scheduler and Dask distributed
# (bench/workflow_dask.py; Debian's python3-dask and python3-distributed, run
# by /usr/bin/python3; the Dask columns say "-" without them), and a lower
# bound tighter than max(critical path, work / tiles) that the ratios are
# over (tight_s: bench/workflow_dask.py's tight_bound()).
# And HEFT with measured costs instead of the hints (docs/scheduling.md,
# "Measured costs"): the graph without its work= hints runs once with
# --learn-costs (unhint_s: HEFT knows only bytes), then again planned with
# what that one execution measured (learned_s); learned/heft is that
# makespan over the one with exact hints.
#   bench/workflows.sh [BUILD_DIR] [TILES] [SECONDS] TRACE.json...
# The traces are the wfcommons/WfInstances repository's (fetch it; they
# are not in this repository), e.g.:
#   bench/workflows.sh build 2 4 WfInstances/pegasus/montage/montage-chameleon-2mass-005d-001.json ...
set -euo pipefail
build=${1:-build}
tiles=${2:-2}
seconds=${3:-4}
shift 3 || { echo "usage: bench/workflows.sh BUILD_DIR TILES SECONDS TRACE.json..." >&2; exit 2; }
[ $# -gt 0 ] || { echo "bench/workflows.sh: no trace given" >&2; exit 2; }
redflow=$build/redflow
work=$(mktemp -d /tmp/redflow-workflows.XXXXXX)
trap 'rm -rf "$work"' EXIT
dask=$(dirname "$0")/workflow_dask.py
have_dask=0
/usr/bin/python3 -c 'import dask.threaded, distributed' 2>/dev/null && have_dask=1
ratio() { if [ "$1" = - ]; then echo -; else printf '%.3f' "$(echo "$1 / $2" | bc -l)"; fi; }
printf '%-44s %6s %7s %7s %7s %9s %9s %9s %9s %7s %7s %8s %9s %9s %9s %12s\n' workflow tasks cpath_s bound_s tight_s heft_s steal_s dthr_s ddist_s \
  heft/lb steal/lb dthr/lb ddist/lb unhint_s learned_s learned/heft
for trace; do
  name=$(basename "$trace" .json)
  out=$("$redflow" import wfformat "$trace" --out "$work/$name" --total-seconds "$seconds" --tiles "$tiles") ||
    { echo "$name: import failed: $out" >&2; continue; }
  tasks=$(sed -n 's/.*), \([0-9]*\) tasks as .*/\1/p' <<<"$out")
  cpath=$(sed -n 's/.*critical path \([0-9.]*\) s.*/\1/p' <<<"$out")
  bound=$(sed -n 's/.*at best \([0-9.]*\) s.*/\1/p' <<<"$out")
  run_line=$(tail -n 1 <<<"$out")
  declare -A makespan=()
  # run_checked LABEL FLAGS [GRAPH]: the import's run line with FLAGS (on GRAPH
  # instead of workflow.dot), its digest checked; makespan[LABEL] from its stats.
  run_checked() {
    local line=${run_line/ run / run $2 --stats $work/$name.stats.json }
    [ -z "${3:-}" ] || line=${line/workflow.dot/$3}
    if ! eval "$line" >"$work/$name.$1.log" 2>&1; then
      echo "$name ($1): the run failed or its digest differs from the reference:" >&2
      tail -n 3 "$work/$name.$1.log" >&2
      exit 1
    fi
    makespan[$1]=$(jq .makespan_s "$work/$name.stats.json")
  }
  run_checked heft "--scheduler heft"
  run_checked steal "--scheduler steal"
  # The same graph without its hints: one execution learns, the next plans with it.
  sed -E 's/, work=[^],;]+//; s/ work=[^],;]+,//' "$work/$name/workflow.dot" >"$work/$name/unhinted.dot"
  ! grep -q 'work=' "$work/$name/unhinted.dot" || { echo "$name: work= hints left in unhinted.dot" >&2; exit 1; }
  run_checked unhinted "--costs $work/$name.costs.json --learn-costs" unhinted.dot
  run_checked learned "--costs $work/$name.costs.json" unhinted.dot
  threaded=- distributed=- tight=$bound
  if [ "$have_dask" = 1 ]; then
    read -r threaded distributed tight < <(/usr/bin/python3 "$dask" "$work/$name/workflow.dot" "$tiles" 2>"$work/$name.dask.log") ||
      { echo "$name (dask): failed:" >&2; tail -n 3 "$work/$name.dask.log" >&2; exit 1; }
  fi
  # The ratios are over the tighter bound (the same as bound_s without Dask's Python).
  printf '%-44s %6s %7.3f %7.3f %7.3f %9.3f %9.3f %9s %9s %7s %7s %8s %9s %9.3f %9.3f %12s\n' "$name" "$tasks" "$cpath" "$bound" "$tight" \
    "${makespan[heft]}" "${makespan[steal]}" "$threaded" "$distributed" "$(ratio "${makespan[heft]}" "$tight")" \
    "$(ratio "${makespan[steal]}" "$tight")" "$(ratio "$threaded" "$tight")" "$(ratio "$distributed" "$tight")" \
    "${makespan[unhinted]}" "${makespan[learned]}" "$(ratio "${makespan[learned]}" "${makespan[heft]}")"
done

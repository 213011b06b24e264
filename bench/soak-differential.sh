#!/usr/bin/env bash
# Runs the differential tester for a given time and reports cases per second.
#   bench/soak-differential.sh [SECONDS] [FIRST_SEED] [EXTRA difftest FLAGS...]
# Defaults: 3600 s from seed 1000000, one case at a time at the lowest CPU
# priority (the machine is shared). Findings go to soak-findings/ (one shrunk
# reproducer per seed); the summary line is appended to soak-findings/summary.
# A case is a hang after SOAK_TIMEOUT seconds (default 60, as CI's seeds):
# difftest's own 20 s is too short for the largest cases over the wire on a
# loaded machine (5,491 actors x 8 executions took 18 s on a quiet one).
# Exit code: that of redflow difftest (0: no findings).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
first=${2:-1000000}
shift $(( $# > 2 ? 2 : $# ))
build=${REDFLOW_BUILD_DIR:-build}
out=${SOAK_OUT:-soak-findings}
mkdir -p "$out"
status=0
nice -n 19 "$build/redflow" difftest --seeds "$first.." --time-limit "$seconds" --jobs "${SOAK_JOBS:-1}" --timeout "${SOAK_TIMEOUT:-60}" --out "$out" "$@" \
  | tee -a "$out/log" || status=$?
grep '^difftest:' "$out/log" | tail -1 | sed "s/^/$(date -u +%FT%TZ) /" >> "$out/summary"
exit "$status"

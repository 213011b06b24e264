#!/usr/bin/env bash
# Trivial jobs through `redflow server` (docs/server.md, "What a job costs"):
# N graph jobs of the demo graph submitted at once to a server with W
# persistent workers, then the same graph run N times as `redflow run
# --listen` one-shots with the same workers. Prints jobs per second and the
# time per job each way.
#   bench/server_jobs.sh [BUILD_DIR] [N] [W]
set -euo pipefail
build=${1:-build}
n=${2:-20}
w=${3:-2}
redflow=$(realpath "$build/redflow")
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$dir"' EXIT
graph=(run "$src/examples/demo/pipeline.dot" --input "A=$src/examples/demo/A.bin")
now() { date +%s.%N; }

"$redflow" server --min-workers "$w" --heartbeat-timeout 1 --server-file "$dir/server" --journal "$dir/journal" 2>"$dir/server.log" &
for _ in $(seq 100); do [ -s "$dir/server" ] && break; sleep 0.1; done
endpoint=$(sed -n 2p "$dir/server")
for i in $(seq "$w"); do
  "$redflow" --log-level error worker --connect "$endpoint" --persist --connect-timeout 600 --name "b$i" 2>/dev/null &
done
start=$(now)
for i in $(seq "$n"); do "$redflow" submit --server-file "$dir/server" "${graph[@]}" --output "Y=$dir/y$i.bin" >/dev/null; done
"$redflow" wait "$n" --server-file "$dir/server" 2>/dev/null
served=$(echo "$(now) - $start" | bc -l)
failed=$("$redflow" jobs --server-file "$dir/server" | awk 'NR > 1 && $2 != "succeeded"' | wc -l)
kill %1; wait %1 2>/dev/null || true

# The same workers (still --persist) dialling one-shot drivers on the same endpoint.
start=$(now)
for i in $(seq "$n"); do
  "$redflow" --log-level error "${graph[@]}" --output "Y=$dir/z$i.bin" --listen "$endpoint" --min-workers "$w" --heartbeat-timeout 1 2>/dev/null
done
oneshot=$(echo "$(now) - $start" | bc -l)
cmp -s "$dir/y1.bin" "$dir/z1.bin" || { echo "server and one-shot outputs differ" >&2; exit 1; }
printf "%d jobs, %d workers, %d not succeeded\n" "$n" "$w" "$failed"
printf "through the server: %.2f s, %.2f jobs/s, %.0f ms per job\n" "$served" "$(echo "$n / $served" | bc -l)" "$(echo "$served * 1000 / $n" | bc -l)"
printf "one-shot run --listen: %.2f s, %.2f jobs/s, %.0f ms per job\n" "$oneshot" "$(echo "$n / $oneshot" | bc -l)" "$(echo "$oneshot * 1000 / $n" | bc -l)"

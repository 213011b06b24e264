#!/usr/bin/env bash
# What `redflow server` costs a job once it runs (docs/server.md, "What a
# job costs"), each figure beside its one-shot baseline measured in the same
# run, with the same W persistent worker processes:
#   1. trivial SPITS tasks per second: a server job against `redflow spits
#      --listen` (goal: the server's at least 0.9 of the one-shot's);
#   2. empty-actor dispatch inside a graph job (64 chains of i32.sort on
#      8 bytes, --repeat R): the driver's mean per execution through the server
#      against `redflow run --listen` (goal: at least 0.9);
#   3. the server's own CPU time per 100,000 tasks, during figure 1;
#   4. the time from a restart after `kill -9` of the server to work
#      resuming: the server answering, and the interrupted SPITS job
#      committing again.
#   bench/server_throughput.sh [BUILD_DIR] [TASKS] [W] [CHAIN] [R]
set -euo pipefail
build=${1:-build}
tasks=${2:-100000}
w=${3:-2}
chain=${4:-150}
repeat=${5:-5}
redflow=$(realpath "$build/redflow")
trivial=$(realpath "$build/examples/spits/libspits_trivial.so")
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$dir"; echo "$dir" >&2' EXIT
now() { date +%s.%N; }
ratio() { echo "$1 / $2" | bc -l; }
# CPU seconds (user + system) process $1 has used.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }

# The graph: 64 chains of CHAIN sorts of two int32s (about nothing to do), each chain's end an output.
{
  echo 'digraph "dispatch" {'
  echo '  "X" [kind=input, bytes=8];'
  for c in $(seq 0 63); do
    prev=X
    for i in $(seq 1 "$chain"); do
      node="d${c}_$i"
      [ "$i" = "$chain" ] && kind=output || kind=inner
      echo "  \"$node\" [kind=$kind, bytes=8]; \"a${c}_$i\" [actor=\"i32.sort\"];"
      echo "  \"$prev\" -> \"a${c}_$i\" [port=0]; \"a${c}_$i\" -> \"$node\";"
      prev=$node
    done
  done
  echo '}'
} >"$dir/dispatch.dot"
head -c 8 /dev/urandom >"$dir/x.bin"
actors=$((64 * chain))

start_server() {
  "$redflow" server --min-workers "$w" --heartbeat-timeout 1 --server-file "$dir/server" --journal "$dir/journal" 2>>"$dir/server.log" &
  server=$!
  for _ in $(seq 200); do [ -s "$dir/server" ] && break; sleep 0.05; done
}
rm -f "$dir/server"
start_server
endpoint=$(sed -n 2p "$dir/server")
for i in $(seq "$w"); do
  "$redflow" --log-level info worker --connect "$endpoint" --persist --connect-timeout 600 --name "b$i" 2>"$dir/worker$i.log" &
done
until "$redflow" workers --server-file "$dir/server" | grep -q "idle now: $w"; do sleep 0.1; done

# 1 and 3: a SPITS job through the server, the server's CPU around it.
cpu0=$(cpu_s "$server")
t0=$(now)
"$redflow" submit --server-file "$dir/server" --wait spits "$trivial" "tasks=$tasks" >/dev/null
spits_server_s=$(echo "$(now) - $t0" | bc -l)
# The driver's own rate: the job's body, without the process start and the workers' arrival.
rate() { sed -n "s/^spits: job .*committed in .* (\([0-9]*\) tasks\/s)$/\1/p" "$1" | tail -n 1; }
spits_server_rate=$(rate "$dir/journal/job-1.log")
server_cpu_s=$(echo "$(cpu_s "$server") - $cpu0" | bc -l)
# 2: the graph job through the server; its driver's line says the mean per execution.
"$redflow" submit --server-file "$dir/server" --wait run "$dir/dispatch.dot" --input "X=$dir/x.bin" --repeat "$repeat" --scheduler steal >/dev/null
graph_server_ms=$(sed -n 's/.*mean \([0-9.]*\) ms.*/\1/p' "$dir/journal/job-2.log" | tail -n 1)

# 4: a long SPITS job, the server killed with -9 once it commits, then started again.
"$redflow" submit --server-file "$dir/server" spits "$trivial" "tasks=100000000" "sleep_us=100" >/dev/null
# Mid-job: some thousands of records in the commit log (zeros after them are its room to grow).
records() { tr -d '\0' <"$dir/journal/job-3.commit.log" 2>/dev/null | wc -c; }
until [ "$(records)" -gt 65536 ]; do sleep 0.02; done
kill -9 "$server"
wait "$server" 2>/dev/null || true
sleep 0.5
size0=$(records)
rm -f "$dir/server"
t0=$(now)
start_server
until "$redflow" jobs --server-file "$dir/server" >/dev/null 2>&1; do sleep 0.01; done
answering_s=$(echo "$(now) - $t0" | bc -l)
until [ "$(records)" -gt "$size0" ]; do sleep 0.01; done
resumed_s=$(echo "$(now) - $t0" | bc -l)
"$redflow" cancel 3 --server-file "$dir/server" >/dev/null
"$redflow" wait 3 --server-file "$dir/server" >/dev/null 2>&1 || true
kill "$server"
wait "$server" 2>/dev/null || true

# The baselines: the same persistent workers dial one-shot drivers on the same endpoint
# (once the server's socket has let go of it).
oneshot() {
  for _ in $(seq 100); do
    "$redflow" --log-level error "$@" --listen "$endpoint" --min-workers "$w" --heartbeat-timeout 1 >"$dir/oneshot.log" 2>&1 && return 0
    grep -q "Address already in use" "$dir/oneshot.log" || { cat "$dir/oneshot.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "the workers' endpoint $endpoint stayed in use" >&2
  exit 1
}
t0=$(now)
oneshot spits "$trivial" "tasks=$tasks"
spits_oneshot_s=$(echo "$(now) - $t0" | bc -l)
spits_oneshot_rate=$(rate "$dir/oneshot.log")
oneshot run "$dir/dispatch.dot" --input "X=$dir/x.bin" --repeat "$repeat" --scheduler steal
graph_oneshot_ms=$(sed -n 's/.*mean \([0-9.]*\) ms.*/\1/p' "$dir/oneshot.log")

printf "W=%d workers, same processes throughout\n" "$w"
printf "SPITS, %d trivial tasks, submit to end: server job %.2f s (%.0f tasks/s), redflow spits --listen %.2f s (%.0f tasks/s): ratio %.2f\n" \
  "$tasks" "$spits_server_s" "$(ratio "$tasks" "$spits_server_s")" "$spits_oneshot_s" "$(ratio "$tasks" "$spits_oneshot_s")" \
  "$(ratio "$spits_oneshot_s" "$spits_server_s")"
printf "SPITS, as the Job Manager measures it: server job %d tasks/s, redflow spits --listen %d tasks/s: ratio %.2f\n" \
  "$spits_server_rate" "$spits_oneshot_rate" "$(ratio "$spits_server_rate" "$spits_oneshot_rate")"
printf "dispatch, %d empty actors x %d executions: server job %.2f ms per execution (%.0f actors/s), run --listen %.2f ms (%.0f actors/s): ratio %.2f\n" \
  "$actors" "$repeat" "$graph_server_ms" "$(ratio "$actors * 1000" "$graph_server_ms")" "$graph_oneshot_ms" \
  "$(ratio "$actors * 1000" "$graph_oneshot_ms")" "$(ratio "$graph_oneshot_ms" "$graph_server_ms")"
printf "server CPU during the SPITS job: %.3f s, %.3f s per 100,000 tasks\n" "$server_cpu_s" "$(ratio "$server_cpu_s * 100000" "$tasks")"
printf "restart after kill -9: answering clients %.2f s, the interrupted SPITS job committing again %.2f s\n" "$answering_s" "$resumed_s"

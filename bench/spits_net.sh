#!/usr/bin/env bash
# SPITS over the network, measured (docs/spits.md, "Measured over the network"):
#   bench/spits_net.sh trivial [BUILD_DIR] [N]   trivial tasks/s, 2 Task Manager processes on loopback,
#                                                beside Work Queue and Dask in the same run (bench/spits_baselines/)
#   bench/spits_net.sh dialin [BUILD_DIR] [N] [REPS]   trivial tasks/s with 2 Task Managers of 1 Worker, announce list
#                                                (`spits-worker`) against dial-in (`redflow worker`), REPS runs each, alternating
#   bench/spits_net.sh fig1 [BUILD_DIR]          the paper's Fig. 1 scaled: Workers 1 -> 2 -> 14, then the
#                                                12-Worker Task Manager cut off (SIGSTOP: silent); commit rate per phase
#   bench/spits_net.sh fig2 [BUILD_DIR]          the paper's Fig. 2 scaled: N tasks of T and S on W Workers over a
#                                                link limited with tc (root: a network namespace), against
#                                                max(N*T/W, N*S/BW) with BW measured on the same link in the same run
# Each prints its table on stdout. Loopback and namespaces it makes only.
set -euo pipefail
what=${1:-trivial}
build=${2:-build}
cli=$build/redflow
job=$build/examples/spits/libspits_trivial.so
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill -9 "$p" 2>/dev/null || true; done
  [ -n "${ns:-}" ] && { ip netns del "$ns" 2>/dev/null || true; ip link del "$ns-h" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT

tm() {  # tm NAME WORKERS [extra flags...]: a Task Manager in the background
  local name=$1 w=$2
  shift 2
  "$cli" --log-level error spits-worker "$job" --announce-dir "$work/tms" --name "$name" -w "$w" --wait 120 --linger 5 "$@" &
  pids+=($!)
}
wait_tms() {  # wait_tms N
  for _ in $(seq 200); do
    [ "$(ls "$work/tms" 2>/dev/null | grep -c '\.tm$')" -ge "$1" ] && return 0
    sleep 0.05
  done
  echo "spits_net.sh: Task Managers did not announce themselves" >&2
  exit 1
}

case $what in
trivial)
  n=${3:-1000000}
  tm a 1
  tm b 1
  wait_tms 2
  "$cli" spits "$job" tasks="$n" quiet=1 --announce-dir "$work/tms" --stats "$work/s.json" >/dev/null
  ours=$(jq .commits_per_second "$work/s.json")
  printf 'redflow spits, 2 Task Manager processes x 1 Worker, %s trivial tasks: %.0f tasks/s\n' "$n" "$ours"
  nb=${SPITS_BASELINE_TASKS:-20000}
  wq=$("$here/spits_baselines/workqueue_trivial.sh" "$nb" | sed -n 's/.*tasks_per_s=\([0-9.]*\).*/\1/p' || true)
  dk=$(/usr/bin/python3 "$here/spits_baselines/dask_trivial.py" "$nb" 2>/dev/null | sed -n 's/.*tasks_per_s=\([0-9.]*\).*/\1/p' || true)
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
  # A baseline that could not run (its package missing) is named, not a failure of the measurement.
  if [ -n "$wq" ]; then
    printf 'CCTools Work Queue, 2 workers, %s tasks: %.0f tasks/s; redflow / Work Queue = %.0fx\n' "$nb" "$wq" "$(ratio "$ours" "$wq")"
  else
    echo "CCTools Work Queue: not measured (bench/spits_baselines/workqueue_trivial.sh printed no rate; it needs coop-computing-tools-dev)"
  fi
  if [ -n "$dk" ]; then
    printf 'Dask distributed, 2 worker processes, %s tasks: %.0f tasks/s; redflow / Dask = %.0fx\n' "$nb" "$dk" "$(ratio "$ours" "$dk")"
  else
    echo "Dask distributed: not measured (needs Debian's python3-distributed for /usr/bin/python3)"
  fi
  ;;
dialin)
  n=${3:-1000000}
  reps=${4:-3}
  for r in $(seq "$reps"); do
    rm -rf "$work/tms"
    tm a 1
    tm b 1
    wait_tms 2
    "$cli" spits "$job" tasks="$n" quiet=1 --announce-dir "$work/tms" --stats "$work/a.json" >/dev/null
    printf 'run %s: announce list (2 spits-worker x 1 Worker), %s trivial tasks: %.0f tasks/s\n' "$r" "$n" "$(jq .commits_per_second "$work/a.json")"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    for w in a b; do
      "$cli" --log-level error worker --connect "tcp://127.0.0.1:$port" --cores 1 --name "$w" --connect-timeout 60 &
      pids+=($!)
    done
    "$cli" spits "$job" tasks="$n" quiet=1 --listen "tcp://127.0.0.1:$port" --min-workers 2 --stats "$work/d.json" >/dev/null 2>&1
    printf 'run %s: dial-in (2 redflow worker --cores 1), %s trivial tasks: %.0f tasks/s\n' "$r" "$n" "$(jq .commits_per_second "$work/d.json")"
    wait
  done
  ;;
fig1)
  # Tasks sleep T = 50 ms: one Worker commits 20 tasks/s.
  phase=${SPITS_FIG1_PHASE_S:-5}
  tm w1 1
  wait_tms 1
  "$cli" spits "$job" tasks=2000 quiet=1 sleep_us=50000 --announce-dir "$work/tms" --progress --heartbeat-timeout 2 \
    --stats "$work/s.json" >/dev/null 2>"$work/progress.txt" &
  jm=$!
  sleep "$phase"; tm w2 1; t1=$phase
  sleep "$phase"; tm w12 12; big=${pids[-1]}; t2=$((2 * phase))
  sleep "$phase"; kill -STOP "$big"; t3=$((3 * phase))
  wait "$jm"
  kill -CONT "$big" 2>/dev/null || true
  # progress lines: "spits: N committed  R tasks/s  T s", one a second
  awk -v t1="$t1" -v t2="$t2" -v t3="$t3" '
    /committed/ { t = $6 + 0; n = $2 + 0; p = (t <= t1) ? 1 : (t <= t2) ? 2 : (t <= t3) ? 3 : 4
                  if (!(p in first)) { first[p] = n; ft[p] = t } last[p] = n; lt[p] = t }
    END { split("1 Worker|2 Workers|14 Workers|12-Worker Task Manager cut off (2 left)", name, "|")
          printf "phase | Workers | commits/s (measured) | commits/s (ideal, T = 50 ms)\n"
          split("20 40 280 40", ideal, " ")
          for (p = 1; p <= 4; p++) if (p in first && lt[p] > ft[p])
            printf "%d | %s | %.0f | %s\n", p, name[p], (last[p] - first[p]) / (lt[p] - ft[p]), ideal[p] }' "$work/progress.txt"
  printf 'committed %s of 2000, re-submissions %s, duplicates %s\n' "$(jq .committed "$work/s.json")" "$(jq .resubmissions "$work/s.json")" \
    "$(jq .duplicates_discarded "$work/s.json")"
  ;;
fig2)
  [ "$(id -u)" = 0 ] || { echo "fig2 needs root (a network namespace and tc)" >&2; exit 1; }
  rate=${SPITS_FIG2_RATE:-40mbit} w=4 n=200 t_us=10000
  ns=rfs$$
  ip netns add "$ns"
  ip link add "$ns-h" type veth peer name "$ns-n"
  ip link set "$ns-n" netns "$ns"
  ip addr add 10.232.7.1/30 dev "$ns-h"; ip link set "$ns-h" up
  ip -n "$ns" addr add 10.232.7.2/30 dev "$ns-n"; ip -n "$ns" link set "$ns-n" up; ip -n "$ns" link set lo up
  # tasks flow Job Manager -> Task Manager: limit that direction
  tc qdisc replace dev "$ns-h" root tbf rate "$rate" burst 32kbit latency 5s
  "$cli" keygen --out "$work/jm" >/dev/null; "$cli" keygen --out "$work/tm" >/dev/null
  run() {  # run S T_US -> seconds
    rm -rf "$work/tms"
    ip netns exec "$ns" "$cli" --log-level error spits-worker "$job" --announce-dir "$work/tms" --name far -w "$w" --wait 60 --linger 5 \
      --listen tcp://10.232.7.2:* --key "$work/tm.key" --authorized-keys "$work/jm.pub" &
    local p=$!
    wait_tms 1
    "$cli" spits "$job" tasks="$n" quiet=1 sleep_us="$2" bytes="$1" --announce-dir "$work/tms" --key "$work/jm.key" --stats "$work/f.json" >/dev/null
    wait "$p" || true
    jq .seconds "$work/f.json"
  }
  big=1048576 nbig=40
  saved_n=$n; n=$nbig
  secs=$(run $big 0 | tail -n 1)
  n=$saved_n
  bw=$(awk -v n="$nbig" -v s="$big" -v t="$secs" 'BEGIN { print n * s / t }')
  printf 'link: tbf %s; measured BW (%d tasks of 1 MiB, T=0, %.2f s): %.2f MB/s\n' "$rate" "$nbig" "$secs" "$(awk -v b="$bw" 'BEGIN { print b / 1e6 }')"
  printf 'knee S* = T*BW/W = %.0f bytes (T = %d us, W = %d, N = %d)\n' "$(awk -v t="$t_us" -v b="$bw" -v w="$w" 'BEGIN { print t / 1e6 * b / w }')" "$t_us" "$w" "$n"
  printf 'S bytes | model s = max(N*T/W, N*S/BW) | measured s | measured / model\n'
  for s in 1024 4096 8192 16384 32768 65536 262144; do
    m=$(awk -v n="$n" -v t="$t_us" -v w="$w" -v s="$s" -v bw="$bw" 'BEGIN { a = n * t / 1e6 / w; b = n * s / bw; print (a > b) ? a : b }')
    got=$(run "$s" "$t_us" | tail -n 1)
    printf '%d | %.3f | %.3f | %.2f\n' "$s" "$m" "$got" "$(awk -v g="$got" -v m="$m" 'BEGIN { print g / m }')"
  done
  ;;
*) echo "usage: bench/spits_net.sh trivial|fig1|fig2 [BUILD_DIR]" >&2; exit 2 ;;
esac

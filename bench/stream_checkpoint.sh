#!/usr/bin/env bash
# What checkpoints cost a stream program over worker processes, and how long
# a lost node takes to recover (docs/streams.md, "When a node is lost"):
#   bench/stream_checkpoint.sh [BUILD_DIR]
# 1. Throughput: each program over 3 worker processes on loopback, rounds
#    alternating --checkpoint-every 1 and --checkpoint-every 0 (none); the
#    median makespan of each and their ratio (none / with: 1.0 means free).
#    Programs: a pipeline of 8-byte tokens through three nodes whose sink is a
#    sum, its source paced at CKPT_RATE tokens/s (a sensor: without
#    back-pressure an unpaced source runs arbitrarily far ahead of the
#    network, and an unaligned checkpoint then holds everything queued);
#    the wavelet encoder on a CKPT_SIDE^2 picture; the Compute Heavy
#    Application (compute-bound, 64-byte blocks).
# 2. Recovery: the CHA with checkpoints every second, one worker killed with
#    SIGKILL 2 s in: the run's makespan against an undisturbed one, and the
#    time from the loss to the survivors running again (the run's report).
# Environment: CKPT_ROUNDS=5 (rounds of each), CKPT_TOKENS=60000000 and
# CKPT_RATE=10000000 (the pipeline), CKPT_SIDE=2048, CKPT_CHA="blocks=3000
# work=60000", CKPT_HEARTBEAT=3 (s).
set -euo pipefail
case ${1:-} in -h|--help) sed -n 2,17p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
case $build in /*) ;; *) if [ -d "$build" ]; then build=$(pwd)/$build; else build=$root/$build; fi ;; esac
cli=$build/redflow
[ -x "$cli" ] || { echo "stream_checkpoint.sh: no $cli (build first, or give BUILD_DIR)" >&2; exit 1; }
rounds=${CKPT_ROUNDS:-5}
tokens=${CKPT_TOKENS:-60000000}
rate=${CKPT_RATE:-10000000}
side=${CKPT_SIDE:-2048}
cha=${CKPT_CHA:-blocks=3000 work=60000}
hb=${CKPT_HEARTBEAT:-3}
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

cat >"$tmp/pipeline.dot" <<EOF
digraph pipeline {
  src [operator="counter", args="n=$tokens rate=$rate"];
  a [operator="scale", args="k=3"];
  b [operator="scale", args="k=5"];
  s [operator="sum"];
  out [operator="collect"];
  src -> a [token=8]; a -> b [token=8]; b -> s [token=8]; s -> out [token=8];
}
EOF
# The CHA from the example, with this run's args.
python3 - "$root/examples/streams/compute_heavy.dot" "$tmp/cha.dot" "$cha" <<'EOF'
import re, sys
src, dst, args = sys.argv[1], sys.argv[2], dict(kv.split("=") for kv in sys.argv[3].split())
text = open(src).read()
text = re.sub(r'(operator="cha.source", args=")blocks=\d+', lambda m: m.group(1) + "blocks=" + args["blocks"], text)
text = re.sub(r'(operator="cha.mix", args="[^"]*?)work=\d+', lambda m: m.group(1) + "work=" + args["work"], text)
open(dst, "w").write(text)
EOF

# A picture with some structure, and the wavelet encoder on it.
python3 - "$tmp/picture.pgm" "$side" <<'EOF'
import sys
path, n = sys.argv[1], int(sys.argv[2])
pixels = bytes(((x * 7 + y * 3 + ((x // 64 + y // 64) % 2) * 90) & 0xff) for y in range(n) for x in range(n))
open(path, "wb").write(b"P5\n%d %d\n255\n" % (n, n) + pixels)
EOF
sed "s|path=[^ \"]*|path=$tmp/picture.pgm|" "$root/examples/streams/wavelet.dot" >"$tmp/wavelet.dot"

# One run over 3 fresh workers; prints the makespan (s). $1 program, $2
# checkpoint interval, $3 seconds after which to kill one worker (0: none).
run_once() {
  local prog=$1 every=$2 kill_at=$3 port out
  port=$((20000 + RANDOM % 20000))
  out=$tmp/out.txt
  "$cli" stream "$prog" --listen "tcp://127.0.0.1:$port" --min-workers 3 --place topological \
    --checkpoint-every "$every" --heartbeat-timeout "$hb" >"$out" 2>"$tmp/err.txt" &
  local driver=$!
  sleep 0.3
  pids=()
  for w in 0 1 2; do "$cli" worker --connect "tcp://127.0.0.1:$port" --cores 1 --name "w$w" >/dev/null 2>&1 & pids+=($!); done
  if [ "$kill_at" != 0 ]; then (sleep "$kill_at"; kill -9 "${pids[1]}" 2>/dev/null || true) & fi
  wait "$driver" || { echo "stream_checkpoint.sh: a run failed:" >&2; cat "$tmp/err.txt" >&2; exit 1; }
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  grep -o 'in [0-9.]* s' "$out" | head -1 | awk '{print $2}'
  grep -E "lost|checkpoints:" "$out" >&2 || true
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "# stream checkpoints over 3 worker processes on loopback ($(nproc) cores), $rounds rounds each"
for prog in pipeline wavelet cha; do
  with=() without=()
  for ((r = 0; r < rounds; r++)); do
    with+=("$(run_once "$tmp/$prog.dot" 1 0 2>/dev/null)")
    without+=("$(run_once "$tmp/$prog.dot" 0 0 2>/dev/null)")
  done
  w=$(printf '%s\n' "${with[@]}" | median)
  n=$(printf '%s\n' "${without[@]}" | median)
  printf '%-9s every 1 s: median %.3f s (%s)   none: median %.3f s (%s)   throughput ratio (none / every 1 s): %.3f\n' \
    "$prog" "$w" "${with[*]}" "$n" "${without[*]}" "$(echo "$n $w" | awk '{print $1 / $2}')"
done

echo "# recovery: the CHA, checkpoints every 1 s, worker w1 killed 2 s in (heartbeat timeout $hb s)"
base=$(run_once "$tmp/cha.dot" 1 0 2>/dev/null)
lost=$(run_once "$tmp/cha.dot" 1 2 2>"$tmp/lost.txt")
cat "$tmp/lost.txt"
printf 'undisturbed %.3f s, with the loss %.3f s: the loss cost %.3f s\n' "$base" "$lost" "$(echo "$lost $base" | awk '{print $1 - $2}')"

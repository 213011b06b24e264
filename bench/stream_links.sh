#!/usr/bin/env bash
# Tokens between two stream nodes on loopback: straight from node to node (the default) against through
# the driver (--no-direct-links, a star), in the same run, alternating, so the machine's noise falls on both:
#   bench/stream_links.sh [BUILD_DIR]
# The program: a counter of STREAM_LINK_TOKENS 8-byte tokens -> scale -> sum -> collect, placed naive on
# two `redflow worker` processes (--cores 1 each) so that two streams cross the nodes: each token crosses
# the loopback twice (2 x 8 B x tokens in all). Prints each run's makespan (the driver's report), the
# medians, and direct / relay (below 1: direct links are faster).
# Environment: STREAM_LINK_TOKENS=30000000 (240 MB per crossing), STREAM_LINK_RUNS=5.
set -euo pipefail
case ${1:-} in -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
build=${1:-build}
cli=$build/redflow
[ -x "$cli" ] || { echo "stream_links.sh: no $cli (build first, or give BUILD_DIR)" >&2; exit 1; }
tokens=${STREAM_LINK_TOKENS:-30000000}
runs=${STREAM_LINK_RUNS:-5}
[[ $tokens =~ ^[1-9][0-9]*$ && $runs =~ ^[1-9][0-9]*$ ]] || { echo "stream_links.sh: STREAM_LINK_TOKENS and STREAM_LINK_RUNS are positive integers" >&2; exit 2; }
work=$(mktemp -d /tmp/stream_links.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cat >"$work/pipe.dot" <<DOT
digraph pipe { src [operator="counter", args="n=$tokens"]; a [operator="scale", args="k=1"];
  total [operator="sum"]; out [operator="collect"];
  src -> a [token=8]; a -> total [token=8]; total -> out [token=8]; }
DOT
want=$(( tokens * (tokens - 1) / 2 ))

one() {  # one FLAGS -> seconds of one run (exits on a wrong result)
  "$cli" --log-level warn stream "$work/pipe.dot" --listen 'tcp://127.0.0.1:*' --min-workers 2 --place naive --print "$@" \
    >"$work/out" 2>"$work/err" &
  local drv=$! port=""
  for _ in $(seq 400); do
    port=$(sed -n 's/^redflow: listening on tcp:\/\/[^ ]*:\([0-9][0-9]*\)[;,: ].*/\1/p' "$work/err" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.025
  done
  [ -n "$port" ] || { echo "stream_links.sh: the driver did not listen:" >&2; cat "$work/err" >&2; exit 1; }
  "$cli" --log-level warn worker --connect "tcp://127.0.0.1:$port" --cores 1 --name a >/dev/null 2>&1 &
  "$cli" --log-level warn worker --connect "tcp://127.0.0.1:$port" --cores 1 --name b >/dev/null 2>&1 &
  wait "$drv" || { echo "stream_links.sh: run $* failed:" >&2; cat "$work/err" "$work/out" >&2; exit 1; }
  wait
  grep -q "^out: $want\$" "$work/out" || { echo "stream_links.sh: wrong sum ($*):" >&2; cat "$work/out" >&2; exit 1; }
  sed -n 's/^stream: .* tokens in \([0-9.]*\) s .*/\1/p' "$work/out"
}
median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "stream_links.sh: $tokens 8-byte tokens, two streams crossing two worker processes on loopback; $(nproc) cores"
direct="" relay=""
for i in $(seq "$runs"); do
  d=$(one); r=$(one --no-direct-links)
  echo "run $i: direct $d s, through the driver $r s"
  direct="$direct $d" relay="$relay $r"
done
md=$(echo "$direct" | median) mr=$(echo "$relay" | median)
mb=$(awk -v t="$tokens" 'BEGIN { printf "%.0f", 2 * 8 * t / 1e6 }')
echo "median: direct $md s ($(awk -v m="$mb" -v s="$md" 'BEGIN { printf "%.0f", m / s }') MB/s), through the driver $mr s ($(awk -v m="$mb" -v s="$mr" 'BEGIN { printf "%.0f", m / s }') MB/s)"
echo "direct / through the driver: $(awk -v a="$md" -v b="$mr" 'BEGIN { printf "%.2f", a / b }')"

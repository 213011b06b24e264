#!/usr/bin/env bash
# SCORE on Millennium, Figs. 4-6, scaled to this machine (docs/stream-apps.md, docs/streams.md):
#   bench/stream_cluster.sh [BUILD_DIR]        (root: network namespaces and tc)
# The makespan of the wavelet encoder (communication-bound) and of the Compute Heavy Application (CHA,
# compute-bound) against the number of worker processes (nodes, 1-4), for every placement algorithm
# (naive, topological, smart, smart_min, smart_max). Each worker runs in its own network namespace, joined
# to the driver (root namespace) by a veth pair whose two directions are both limited by tbf (and delayed
# by netem where the kernel has it), so a token that crosses nodes costs what it would on a small cluster:
# worker -> its link -> the root namespace (which forwards between the links, as a switch would) -> the
# other worker's link -> worker, straight between the nodes' links (the default) or through the driver
# (--no-direct-links). Then ablations on the wavelet (smart placement, the most nodes): aggregation off
# (--no-aggregate), two-level buffering off (--one-level), tokens through the driver (--no-direct-links).
# Environment:
#   STREAM_RATE=10mbit      tbf rate of each direction of each worker's link
#   STREAM_DELAY=0.2ms      netem delay of each direction (skipped, saying so, when the kernel has no netem; 0: none)
#   STREAM_NODES="1 2 3 4"  node counts (at most 4)
#   STREAM_REPEAT=1         runs per point; the median is printed when more than one
#   STREAM_WAVELET_SIZE=512 side of the wavelet's image: 512 is the camera image itself; 1024 or 2048
#                           tile it (mirrored) for more tokens
#   STREAM_CHA="blocks=500 work=80000"   the CHA's source and mix args
#   STREAM_TIMEOUT=60       seconds before a run is killed (and reported as a failure)
#   STREAM_APPS="wavelet CHA ablations"   which parts to run
#   STREAM_ALGOS="naive topological smart smart_min smart_max"
#   STREAM_VERBOSE=1        the driver's report of every run (its nodes, their operators and bytes) on stderr
#   STREAM_BURST=32kbit STREAM_QUEUE=5s   tbf's burst and latency (its queue, in time at the rate)
#   STREAM_BUFFER=16384     --stream-buffer of every cluster run: bytes a stream holds, and the credit window of
#                           a stream between nodes (below)
#   STREAM_FLAGS=""         more flags for the driver of every cluster run
# Why 10mbit: the camera image moves ~405,000 8-byte tokens; a placement cuts 0.4-2.9 MB of them, which
# at 100mbit is 0.05-0.25 s, too close to a run's fixed costs to rank placements; at 10mbit a run takes
# 0.4-3.5 s and its makespan follows 1/rate (about the ratio of a 2000-era cluster's CPU to its 100 Mbit
# network, with today's CPU). STREAM_RATE=100mbit STREAM_WAVELET_SIZE=2048 is the same ratio at 100mbit,
# but then the workers (and with --no-direct-links the driver) compete for the 2 cores.
# Why a 16 KiB window: a node sends as far ahead as its windows allow, and tbf queues whatever is sent (5 s of
# it here), so a window is also the queue it builds on each link a stream crosses. The default 512 KiB is
# ~0.4 s of a 10mbit link: the streams of the coarse bands, which cross more nodes, fall that far behind the
# fine ones, and the packer, which needs rows of all, waits. 16 KiB is 13 ms at 10mbit (STREAM_BUFFER=524288
# for the default).
# CHA: blocks=500 work=80000 is ~1.6 s on one thread and moves only 3,500 64-byte tokens (<0.25 MB).
# Prints its tables on stdout, progress and failures on stderr. Takes ~1.5 min (x STREAM_REPEAT).
set -euo pipefail
usage() { echo "usage: bench/stream_cluster.sh [BUILD_DIR]   (as root; BUILD_DIR defaults to build; env STREAM_RATE STREAM_DELAY STREAM_NODES STREAM_REPEAT STREAM_WAVELET_SIZE STREAM_CHA STREAM_TIMEOUT STREAM_APPS STREAM_ALGOS STREAM_VERBOSE STREAM_BUFFER STREAM_FLAGS: see the script's header)" >&2; }
case ${1:-} in -h|--help) usage; exit 0 ;; esac
[ $# -le 1 ] || { usage; exit 2; }
[ "$(id -u)" = 0 ] || { echo "stream_cluster.sh needs root (network namespaces, veth pairs and tc); run it with sudo" >&2; usage; exit 1; }
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
case $build in /*) ;; *) if [ -d "$build" ]; then build=$(pwd)/$build; else build=$root/$build; fi ;; esac
cli=$build/redflow
[ -x "$cli" ] || { echo "stream_cluster.sh: no $cli (build first, or give BUILD_DIR)" >&2; exit 1; }
for t in ip tc python3 timeout; do command -v "$t" >/dev/null || { echo "stream_cluster.sh: needs $t" >&2; exit 1; }; done

rate=${STREAM_RATE:-10mbit}
delay=${STREAM_DELAY:-0.2ms}
nodes_list=${STREAM_NODES:-1 2 3 4}
repeat=${STREAM_REPEAT:-1}
wsize=${STREAM_WAVELET_SIZE:-512}
cha_args=${STREAM_CHA:-blocks=500 work=80000}
tmo=${STREAM_TIMEOUT:-60}
rate_bps=$(echo "$rate" | awk '{ v = $0 + 0; u = tolower($0); sub(/^[0-9.]+/, "", u)
  m["bit"] = 1 / 8; m["kbit"] = 1e3 / 8; m["mbit"] = 1e6 / 8; m["gbit"] = 1e9 / 8; m["bps"] = 1; m["kbps"] = 1e3; m["mbps"] = 1e6
  print (u in m) ? v * m[u] : 0 }')   # bytes/s (tc: kbit = 1000 bit/s, kbps = 1000 bytes/s)
algos=${STREAM_ALGOS:-naive topological smart smart_min smart_max}
apps=${STREAM_APPS:-wavelet CHA ablations}
burst=${STREAM_BURST:-32kbit}
qlat=${STREAM_QUEUE:-5s}
sbuf=${STREAM_BUFFER:-16384}
[[ $sbuf =~ ^[0-9]+$ ]] || { echo "stream_cluster.sh: STREAM_BUFFER must be a number of bytes" >&2; exit 2; }
maxn=0
for n in $nodes_list; do
  [[ $n =~ ^[1-4]$ ]] || { echo "stream_cluster.sh: STREAM_NODES: $n is not 1-4" >&2; exit 2; }
  if [ "$n" -gt "$maxn" ]; then maxn=$n; fi
done
if ! [[ $wsize =~ ^[1-9][0-9]*$ ]] || [ "$wsize" -lt 8 ] || [ "$wsize" -gt 16384 ]; then
  echo "stream_cluster.sh: STREAM_WAVELET_SIZE must be 8-16384" >&2; exit 2
fi
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "stream_cluster.sh: STREAM_REPEAT must be a positive integer" >&2; exit 2; }

work=$(mktemp -d /tmp/stream_cluster.XXXXXX)
tag=rfc$$        # namespace rfc<PID>n<I>; links rfc<PID>h<I> (root side) and rfc<PID>p<I> (namespace side)
made_ns=()
pids=()
forward_was=$(cat /proc/sys/net/ipv4/ip_forward)
cleanup() {
  local p n
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 0.2
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  for n in "${made_ns[@]}"; do
    for p in $(ip netns pids "$tag"n"$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$tag"n"$n" 2>/dev/null || true
    ip link del "$tag"h"$n" 2>/dev/null || true
  done
  echo "$forward_was" >/proc/sys/net/ipv4/ip_forward 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "stream_cluster.sh: interrupted" >&2; exit 130' INT TERM HUP
# run a copy: a rebuild of BUILD_DIR in the middle of the benchmark must not change (or break) the binary it measures
binary="$cli, built $(date -r "$cli" '+%F %T')"
cp "$cli" "$work/redflow"
cli=$work/redflow

# --- the cluster: one namespace per worker, a veth pair each, 10.233.I.0/30 --------------------------------------
netem=yes
[ -n "$delay" ] && [ "$delay" != 0 ] || netem=off
shape() {  # shape DEV [ip netns exec NS]: tbf on DEV's egress, under netem delay when the kernel has netem
  local dev=$1
  shift
  if [ "$netem" = yes ] && "$@" tc qdisc add dev "$dev" root handle 1: netem delay "$delay" 2>>"$work/netem.err"; then
    "$@" tc qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$rate" burst "$burst" latency "$qlat" && return 0
    "$@" tc qdisc del dev "$dev" root  # netem, but no tbf under it: tbf alone, as without netem
  fi
  if [ "$netem" = yes ]; then netem=no; fi
  "$@" tc qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency "$qlat"
}
echo 1 >/proc/sys/net/ipv4/ip_forward  # worker to worker through the root namespace (put back at exit)
for i in $(seq "$maxn"); do
  ns=$tag"n$i" h=$tag"h$i" p=$tag"p$i"
  ip netns add "$ns"
  made_ns+=("$i")
  ip link add "$h" type veth peer name "$p"
  ip link set "$p" netns "$ns"
  ip addr add "10.233.$i.1/30" dev "$h"
  ip link set "$h" up
  ip -n "$ns" addr add "10.233.$i.2/30" dev "$p"
  ip -n "$ns" link set "$p" up
  ip -n "$ns" link set lo up
  ip -n "$ns" route add default via "10.233.$i.1"  # the other workers: through the root namespace
  shape "$h"                    # driver -> worker I
  shape "$p" ip netns exec "$ns" # worker I -> driver
done
if [ "$netem" = yes ]; then
  link="tbf $rate + netem delay $delay, each direction"
elif [ "$netem" = off ]; then
  link="tbf $rate each direction, no delay (STREAM_DELAY=${delay:-empty})"
else
  link="tbf $rate each direction; NO netem in this kernel ($(head -n 1 "$work/netem.err" | tr -d '\n')): bandwidth limited, no added delay"
fi

# --- keys: the driver listens on 0.0.0.0, so it needs its own and each worker's -----------------------------------
"$cli" keygen --out "$work/driver" >/dev/null
: >"$work/workers.keys"
for i in $(seq "$maxn"); do
  "$cli" keygen --out "$work/w$i" >/dev/null
  echo "$(cat "$work/w$i.pub") w$i" >>"$work/workers.keys"
done

# --- the programs -------------------------------------------------------------------------------------------------
cd "$work"
"$root/scripts/camera-pgm" "$work/camera.pgm" >/dev/null
if [ "$wsize" != 512 ]; then
  python3 - "$work/camera.pgm" "$wsize" <<'EOF'
import sys
path, side = sys.argv[1], int(sys.argv[2])
data = open(path, 'rb').read()
# P5 header: magic, width, height, maxval, each followed by whitespace
fields, pos = [], 0
while len(fields) < 4:
    while data[pos:pos + 1].isspace(): pos += 1
    start = pos
    while not data[pos:pos + 1].isspace(): pos += 1
    fields.append(data[start:pos])
pos += 1
w, h = int(fields[1]), int(fields[2])
px = data[pos:pos + w * h]
rows = [px[r * w:(r + 1) * w] for r in range(h)]
def mirrored(i, n):  # 0..n-1, n-1..0, 0..n-1, ...
    i %= 2 * n
    return i if i < n else 2 * n - 1 - i
out = bytearray()
for r in range(side):
    row = rows[mirrored(r, h)]
    out += bytes(row[mirrored(c, w)] for c in range(side))
open(path, 'wb').write(b'P5\n%d %d\n255\n' % (side, side) + bytes(out))
EOF
fi
wdot=$root/examples/streams/wavelet.dot          # reads camera.pgm from the working directory ($work)
cdot=$work/cha.dot
cblocks=500 cwork=80000
for kv in $cha_args; do
  case $kv in
  blocks=*) cblocks=${kv#blocks=} ;;
  work=*) cwork=${kv#work=} ;;
  *) echo "stream_cluster.sh: STREAM_CHA: $kv is neither blocks=N nor work=K" >&2; exit 2 ;;
  esac
done
sed -e "s/blocks=1000/blocks=$cblocks/" -e "s/work=10000/work=$cwork/g" "$root/examples/streams/compute_heavy.dot" >"$cdot"

# --- runs ---------------------------------------------------------------------------------------------------------
secs_of() { sed -n 's/^stream: .* tokens in \([0-9.]*\) s .*/\1/p' "$1"; }
tokens_of() { sed -n 's/^stream: .* streams, \([0-9]*\) tokens in .*/\1/p' "$1"; }
median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "FAIL"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run_s=""     # what the last run measured (seconds, or FAIL)
run_mb=0     # MB of tokens between nodes (straight or relayed) in the last cluster run
run_link=0   # MB through the busiest direction of a worker's link in the last cluster run
local_run() {  # local_run DOT THREADS: a run in one process on a pool of THREADS -> run_s
  timeout "$tmo" "$cli" --log-level error stream "$1" --threads "$2" >"$work/local.out" 2>"$work/local.err" &
  local p=$! rc=0
  pids+=("$p")
  wait "$p" || rc=$?
  pids=()
  run_s=$(secs_of "$work/local.out")
  if [ "$rc" != 0 ] || [ -z "$run_s" ]; then
    { echo "stream_cluster.sh: local run of $1 on $2 thread(s) failed (exit $rc):"; cat "$work/local.err"; } >&2
    run_s=FAIL
  fi
}

cluster_run() {  # cluster_run DOT N ALGO EXPECTED_TOKENS [driver flags...] -> run_s, run_mb (FAIL: the outputs on stderr)
  local dot=$1 n=$2 algo=$3 want=$4
  shift 4
  local prof=()
  case $algo in smart_min|smart_max) prof=(--place-profile "$work/$(basename "$dot" .dot).prof.json") ;; esac
  rm -f "$work"/w*.log
  # Made before the driver starts: the loop below reads drv.err at once, and under
  # load the background job may not have opened it yet (sed then fails the script).
  : >"$work/drv.out"
  : >"$work/drv.err"
  timeout "$tmo" "$cli" stream "$dot" --listen 'tcp://0.0.0.0:*' --min-workers "$n" --place "$algo" "${prof[@]}" \
    --key "$work/driver.key" --authorized-keys "$work/workers.keys" --wait 20 --stream-buffer "$sbuf" ${STREAM_FLAGS:-} "$@" >"$work/drv.out" 2>"$work/drv.err" &
  local drv=$! port="" i
  pids+=("$drv")
  for _ in $(seq 400); do
    port=$(sed -n 's/^redflow: listening on tcp:\/\/[^ ]*:\([0-9][0-9]*\)[;,: ].*/\1/p' "$work/drv.err" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$drv" 2>/dev/null || break
    sleep 0.025
  done
  local ws=() before=()
  for i in $(seq "$n"); do before+=("$(link_bytes "$i")"); done
  if [ -n "$port" ]; then
    for i in $(seq "$n"); do
      ip netns exec "$tag"n"$i" timeout "$tmo" "$cli" worker --connect "tcp://10.233.$i.1:$port" --cores 1 \
        --name "w$i" --key "$work/w$i.key" --server-key "$work/driver.pub" --connect-timeout 20 >"$work/w$i.log" 2>&1 &
      ws+=($!)
      pids+=($!)
    done
  fi
  local rc=0 wrc=0 got
  wait "$drv" || rc=$?
  for i in "${ws[@]}"; do wait "$i" || wrc=$?; done
  pids=()
  run_s=$(secs_of "$work/drv.out")
  got=$(tokens_of "$work/drv.out")
  if [ "$rc" != 0 ] || [ "$wrc" != 0 ] || [ -z "$run_s" ] || [ "$got" != "$want" ]; then
    { echo "stream_cluster.sh: $(basename "$dot") on $n nodes, $algo $*: driver exit $rc, a worker's exit $wrc (124: killed after ${tmo}s), tokens ${got:-?} (want $want)"
      sed 's/^/  driver: /' "$work/drv.err" "$work/drv.out"
      for i in $(seq "$n"); do if [ -s "$work/w$i.log" ]; then sed "s/^/  w$i: /" "$work/w$i.log"; fi; done; } >&2
    run_s=FAIL run_mb=- run_link=-
    return 0
  fi
  if [ -n "${STREAM_VERBOSE:-}" ]; then sed 's/^/    /' "$work/drv.out" >&2; fi
  # the busiest direction of any worker's link, bytes on the wire (payload, framing, CURVE, TCP/IP headers, acks)
  run_link=0
  for i in $(seq "$n"); do
    run_link=$(echo "${before[$((i - 1))]} $(link_bytes "$i") $run_link" |
      awk '{ tx = $3 - $1; rx = $4 - $2; m = $5 * 1e6; if (tx > m) m = tx; if (rx > m) m = rx; printf "%.2f", m / 1e6 }')
  done
  # the bytes between nodes: the sum of the nodes' bytes out to the driver and straight to other nodes
  # (each crossed two limited links either way)
  run_mb=$(awk '/^  node .* bytes out/ { for (k = 1; k < NF; k++) if ($(k + 1) == "bytes" && ($(k + 2) ~ /^out/ || $(k + 2) == "straight")) b += $k }
                END { printf "%.2f", b / 1e6 }' "$work/drv.out")
}

link_bytes() {  # link_bytes I -> "TX RX" bytes of worker I's link, root side (TX: driver -> worker)
  echo "$(cat /sys/class/net/"$tag"h"$1"/statistics/tx_bytes) $(cat /sys/class/net/"$tag"h"$1"/statistics/rx_bytes)"
}

pt_s="" pt_mb="" pt_link=""
point() {  # point DOT N ALGO TOKENS [flags...] -> pt_s (the median of STREAM_REPEAT runs), pt_mb
  local vals="" i
  for i in $(seq "$repeat"); do
    cluster_run "$@"
    [ "$run_s" = FAIL ] || vals="$vals $run_s"
  done
  pt_s=$(echo "$vals" | median)
  pt_mb=$run_mb
  pt_link=$run_link
}

cut_of() {  # cut_of DOT N ALGO -> edge cut in tokens (redflow place weighing streams by the local run's profile)
  "$cli" place "$1" --nodes "$2" --algo "$3" --profile "$work/$(basename "$1" .dot).prof.json" 2>/dev/null |
    sed -n 's/.*edge cut \([0-9.e+]*\),.*/\1/p' | awk '{ printf "%.0f", $1 }'
}

started=$(date +%s)
echo "stream_cluster.sh: $(nproc) cores; the driver in the root namespace, each worker in its own namespace with --cores 1"
echo "binary: $binary"
echo "links: $link; streams hold (and windows between nodes are) $sbuf bytes"
if [ "$(nproc)" -lt "$maxn" ]; then echo "note: $(nproc) cores for up to $maxn workers plus the driver: compute cannot scale past $(nproc) nodes here (the paper had a node per SMP)"; fi
echo "repeats per point: $repeat$([ "$repeat" -gt 1 ] && echo ' (median)')"

app() {  # app NAME DOT DESCRIPTION
  local name=$1 dot=$2 what=$3 l1 l2 tokens n a pfile
  pfile=$work/$(basename "$dot" .dot).prof.json
  timeout "$tmo" "$cli" --log-level error stream "$dot" --profile "$pfile" >"$work/local.out" 2>"$work/local.err" || {
    echo "stream_cluster.sh: local profiling run of $dot failed:" >&2; cat "$work/local.err" >&2; exit 1; }
  tokens=$(tokens_of "$work/local.out")
  local v1="" v2="" i
  for i in $(seq "$repeat"); do
    local_run "$dot" 1; v1="$v1 $run_s"
    local_run "$dot" "$(nproc)"; v2="$v2 $run_s"
  done
  l1=$(echo "$v1" | sed 's/FAIL//g' | median)
  l2=$(echo "$v2" | sed 's/FAIL//g' | median)
  echo
  echo "== $name: $what; $(sed -n 's/^stream: \([0-9]* operators, [0-9]* streams, [0-9]* tokens\).*/\1/p' "$work/local.out")"
  echo "local, one process: ${l1} s on 1 thread, ${l2} s on $(nproc) threads"
  declare -A res mb lk
  for n in $nodes_list; do
    for a in $algos; do
      echo "  $name: $n node(s), $a ..." >&2
      point "$dot" "$n" "$a" "$tokens"
      res[$n,$a]=$pt_s
      mb[$n,$a]=$pt_mb
      lk[$n,$a]=$pt_link
    done
  done
  echo "makespan, s (each worker on its own limited link)"
  printf '%-5s' N; for a in $algos; do printf ' | %-11s' "$a"; done; printf ' | %s\n' "local 1 thr"
  for n in $nodes_list; do
    printf '%-5s' "$n"; for a in $algos; do printf ' | %-11s' "${res[$n,$a]}"; done; printf ' | %s\n' "$l1"
  done
  echo "busiest link direction: MB on the wire / the seconds that takes at $rate (a lower bound on the makespan)"
  printf '%-5s' N; for a in $algos; do printf ' | %-14s' "$a"; done; echo
  for n in $nodes_list; do
    printf '%-5s' "$n"
    for a in $algos; do
      printf ' | %-14s' "${lk[$n,$a]} / $(awk -v m="${lk[$n,$a]}" -v r="$rate_bps" 'BEGIN { if (m == "-") print "-"; else if (r > 0) printf "%.2f", m * 1e6 / r; else print "?" }')"
    done
    echo
  done
  echo "edge cut (tokens that cross nodes, redflow place) / MB sent between nodes and to the driver"
  printf '%-5s' N; for a in $algos; do printf ' | %-17s' "$a"; done; echo
  for n in $nodes_list; do
    printf '%-5s' "$n"; for a in $algos; do printf ' | %-17s' "$(cut_of "$dot" "$n" "$a") / ${mb[$n,$a]}"; done; echo
  done
}

case " $apps " in *" wavelet "*) app wavelet "$wdot" "wavelet encoder, ${wsize}x${wsize} image, 3 levels" ;; esac
case " $apps " in *" CHA "*) app CHA "$cdot" "compute-heavy application, $cha_args" ;; esac

# --- ablations ----------------------------------------------------------------------------------------------------
ablations() {
  local v label flags s ratio base="" tokens
  "$cli" --log-level error stream "$wdot" >"$work/local.out" 2>/dev/null
  tokens=$(tokens_of "$work/local.out")
  echo
  echo "== ablations: wavelet on $maxn nodes, smart placement"
  printf '%-40s | %-8s | %-8s | %s\n' variant "s" "x default" "MB sent"
  for v in "default|" "through the driver|--no-direct-links" "aggregation off|--no-aggregate" "two-level buffering off|--one-level" "both off|--no-aggregate --one-level"; do
    label=${v%%|*} flags=${v#*|}
    echo "  ablation: $label ..." >&2
    # shellcheck disable=SC2086
    point "$wdot" "$maxn" smart "$tokens" $flags
    s=$pt_s
    if [ -z "$base" ]; then base=$s; fi
    ratio=$(awk -v s="$s" -v b="$base" 'BEGIN { if (s == "FAIL" || b == "FAIL" || b == 0) print "-"; else printf "%.2f", s / b }')
    printf '%-40s | %-8s | %-8s | %s\n' "$label ${flags:+($flags)}" "$s" "$ratio" "$pt_mb"
  done
}
case " $apps " in *" ablations "*) ablations ;; esac
echo
echo "total $(( $(date +%s) - started )) s"

#!/bin/sh
# Remote tiles, measured (docs/remote.md, "Figures"): bench/net_remote
# (dispatch rate to 2 worker processes, tile-to-tile bandwidth against a
# loopback TCP socket pair, time to declare a killed or frozen worker lost;
# then dispatch where values cross workers, --peer-only),
# then the matmul 2048 graph (`redflow gen`) over 2 worker processes against
# 2 local tiles, same run, same machine.
#   bench/remote.sh [BUILD_DIR] [N]
set -eu
build=${1:-build}
n=${2:-2048}
cli=$build/redflow
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$build/net_remote" --cli "$cli" --actors 20000 2>/dev/null
"$build/net_remote" --cli "$cli" --actors 20000 --peer-only 2>/dev/null

"$cli" gen matmul --n "$n" --tiles 2 --out "$work/mm" >/dev/null
local_ms=$("$cli" run "$work/mm/matmul.dot" --input A="$work/mm/A.bin" --input B="$work/mm/B.bin" --output C="$work/local.bin" \
  --tiles 2 --repeat 3 2>&1 | sed -n 's/.*mean \([0-9.]*\) ms.*/\1/p')
"$cli" run "$work/mm/matmul.dot" --input A="$work/mm/A.bin" --input B="$work/mm/B.bin" --output C="$work/remote.bin" \
  --listen 'tcp://127.0.0.1:*' --min-workers 2 --repeat 3 2>"$work/driver.log" &
driver=$!
endpoint=""
while [ -z "$endpoint" ]; do
  sleep 0.1
  endpoint=$(sed -n 's/.*redflow tile --connect \(tcp:[^ ]*\)$/\1/p' "$work/driver.log" | head -n 1)
done
"$cli" tile --connect "$endpoint" & w1=$!
"$cli" tile --connect "$endpoint" & w2=$!
wait "$driver"
wait "$w1" "$w2"
remote_ms=$(sed -n 's/.*mean \([0-9.]*\) ms.*/\1/p' "$work/driver.log")
same=no
cmp -s "$work/local.bin" "$work/remote.bin" && same=yes
echo "{\"matmul_n\": $n, \"two_local_tiles_mean_ms\": $local_ms, \"two_workers_mean_ms\": $remote_ms, \"same_output\": \"$same\"}"

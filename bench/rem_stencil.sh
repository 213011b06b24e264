#!/usr/bin/env bash
# The REM stencil figures of docs/rem.md: starts a memcached of its own on a
# free loopback port (UDP off, evictions off; MEMCACHED_MB and MEMCACHED_ITEM set
# its memory and item limit), runs build/rem_stencil against
# it and against the in-process store, then stops the server.
#   bench/rem_stencil.sh [--n 1024 --tiles 8 --steps 20 --threads 2 --depth 1 --repeat 3]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${REDFLOW_BUILD_DIR:-build}/rem_stencil
[ -x "$bin" ] || { echo "rem_stencil: $bin not built (cmake --build build --target rem_stencil)" >&2; exit 1; }
command -v memcached >/dev/null || { echo "rem_stencil: memcached not installed (scripts/bootstrap installs it)" >&2; exit 1; }
# A free loopback port: a random one nobody answers on.
port=$(shuf -i 20000-60000 -n 1)
while (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null; do port=$(shuf -i 20000-60000 -n 1); done
user=(); [ "$(id -u)" = 0 ] && user=(-u root)
memcached "${user[@]}" -l 127.0.0.1 -p "$port" -U 0 -M -m "${MEMCACHED_MB:-4096}" -I "${MEMCACHED_ITEM:-1m}" -t 2 &
mc=$!
trap 'kill $mc 2>/dev/null || true' EXIT
for _ in $(seq 50); do (echo > /dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
nice "$bin" --store "memcached://127.0.0.1:$port" "$@"

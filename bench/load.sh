#!/usr/bin/env bash
# Load time and peak resident memory of a chain of N empty actors (0-byte
# data nodes, steal scheduler, 2 tiles) at 10^4, 10^5 and 10^6 actors: the
# load figures of docs/performance.md. Each size runs in its own process (the
# peak is the process's) with bench/load_scale.cpp; one JSON line per run on stdout
# (keys: load_scale.cpp). Lazy (the default: the runtime's configuration at
# load) at every size, each also with malloc's huge pages
# (GLIBC_TUNABLES=glibc.malloc.hugetlb=1); eager (--eager-schedules: all five configurations at
# load, as the paper does) at EAGER_SIZES.
#
#   bench/load.sh                      # builds $BUILD (Release) first
#   SIZES="10000 100000" EAGER_SIZES=10000 bench/load.sh
#   SKIP_BUILD=1 BUILD=build bench/load.sh
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build-rel}
SIZES=${SIZES:-"10000 100000 1000000"}
EAGER_SIZES=${EAGER_SIZES:-"10000 100000"}
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "load: building $BUILD (Release)" >&2
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DREDFLOW_BUILD_TESTS=OFF >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target load_scale >/dev/null
fi
for n in $SIZES; do
  echo "load: $n actors" >&2
  "$BUILD/load_scale" --n "$n"
  # The same with glibc's malloc asking for transparent huge pages: on a VM
  # that refills address translation page by page, big graphs load ~2x faster.
  echo "load: $n actors, GLIBC_TUNABLES=glibc.malloc.hugetlb=1" >&2
  GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$BUILD/load_scale" --n "$n"
done
for n in $EAGER_SIZES; do
  echo "load: $n actors, --eager-schedules" >&2
  "$BUILD/load_scale" --n "$n" --eager
done

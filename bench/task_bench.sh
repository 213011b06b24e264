#!/usr/bin/env bash
# METG of redflow beside Task Bench's OpenMP and MPI implementations, on this
# machine, in one run: Task Bench (Slaughter et al., SC'20) measures the
# minimum effective task granularity, METG(50%): the smallest task duration
# at which a system still reaches half of the machine's peak FLOP/s, over
# dependence patterns. docs/performance.md ("Task Bench") has the table this
# prints and how to read it.
#
#   bench/task_bench.sh TASK_BENCH_DIR     # a task-bench tree, fetched, never committed
#
# Settings (environment): PATTERNS (default: trivial stencil_1d fft tree
# all_to_all nearest spread random_nearest), STEPS (1000), WIDTH (the core
# count), REPS (3, the median kept), ITERATIONS (the compute_bound kernel's
# iteration counts swept, largest first: 2^19 down to 2^4), SYSTEMS
# (redflow-heft redflow-steal redflow-heft-warm redflow-steal-warm openmp
# mpi), OUT (the runs' logs; default a new directory under /tmp).
#
# How: every system runs the same task graph (STEPS x WIDTH tasks, the
# pattern, the compute_bound kernel) for each iteration count. A run's time
# per task is elapsed x cores / tasks; its efficiency is its FLOP/s over the
# peak, the highest FLOP/s any system reached on that pattern in this run.
# METG is the smallest time per task whose efficiency is at least 50%,
# interpolated towards the next, smaller granularity as Task Bench's
# scripts/chart_metg.py does. redflow's elapsed time covers building,
# loading (validation, HEFT's plan) and executing the graph
# (bench/task_bench/redflow_main.cpp), as the other two create their tasks
# inside their timed region; the -warm systems time a second execution of
# the loaded graph, what each execution costs a program that loads its
# graph once and runs it many times (redflow's model).
#
# It builds task-bench's core library, OpenMP and MPI implementations with
# task-bench's own Makefiles (in a copy under OUT, -O3), and redflow's with
# CMake in build-task-bench/ (Release, -DREDFLOW_TASK_BENCH_DIR), and
# installs what it needs (libopenmpi-dev, openmpi-bin, python3-numpy).
set -euo pipefail
cd "$(dirname "$0")/.."
tb=${1:?usage: bench/task_bench.sh TASK_BENCH_DIR (a task-bench tree: github.com/StanfordLegion/task-bench)}
tb=$(cd "$tb" && pwd)
[ -f "$tb/core/core.h" ] || { echo "task_bench: $tb/core/core.h not found: expected a task-bench tree" >&2; exit 2; }
cores=$(nproc)
patterns=${PATTERNS:-"trivial stencil_1d fft tree all_to_all nearest spread random_nearest"}
steps=${STEPS:-1000}
width=${WIDTH:-$cores}
reps=${REPS:-3}
iterations=${ITERATIONS:-"524288 262144 131072 65536 32768 16384 8192 4096 2048 1024 512 256 128 64 32 16"}
systems=${SYSTEMS:-"redflow-heft redflow-steal redflow-heft-warm redflow-steal-warm openmp mpi"}
out=${OUT:-$(mktemp -d /tmp/redflow-task-bench.XXXXXX)}
mkdir -p "$out"

missing=()
for p in libopenmpi-dev openmpi-bin python3-numpy; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "task_bench: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

echo "task_bench: building task-bench's core, openmp and mpi in $out/task-bench" >&2
rm -rf "$out/task-bench" && mkdir -p "$out/task-bench"
cp -r "$tb/core" "$tb/openmp" "$tb/mpi" "$out/task-bench/"
make -s -C "$out/task-bench/core" -j"$cores" >"$out/build.log" 2>&1
make -s -C "$out/task-bench/openmp" main >>"$out/build.log" 2>&1
make -s -C "$out/task-bench/mpi" nonblock >>"$out/build.log" 2>&1
echo "task_bench: building task_bench_redflow in build-task-bench/" >&2
cmake -S . -B build-task-bench -DCMAKE_BUILD_TYPE=Release -DREDFLOW_BUILD_TESTS=OFF -DREDFLOW_BUILD_BENCH=OFF \
  -DREDFLOW_TASK_BENCH_DIR="$tb" >>"$out/build.log"
cmake --build build-task-bench -j"$cores" --target task_bench_redflow >>"$out/build.log"

# run SYSTEM PATTERN ITERATIONS: one run's Task Bench report on stdout.
run() {
  local args=(-steps "$steps" -width "$width" -type "$2" -kernel compute_bound -iter "$3")
  # Task Bench refuses a radix above the width (3 by default; 2 on 2 cores)
  # and a spread period above ceil(width / radix) (3 by default; 1 on 2 cores).
  local radix=$((width < 3 ? width : 3))
  local spread=$(((width + radix - 1) / radix))
  case $2 in nearest | spread | random_nearest | random_spread) args+=(-radix "$radix") ;; esac
  case $2 in spread | random_spread) args+=(-period "$((spread < 3 ? spread : 3))") ;; esac
  case $1 in
    redflow-heft | redflow-steal) build-task-bench/task_bench_redflow "${args[@]}" -scheduler "${1#redflow-}" -tiles "$cores" ;;
    redflow-heft-warm | redflow-steal-warm)
      local s=${1#redflow-}
      build-task-bench/task_bench_redflow "${args[@]}" -scheduler "${s%-warm}" -tiles "$cores" -warm ;;
    openmp) OMP_NUM_THREADS=$cores "$out/task-bench/openmp/main" "${args[@]}" ;;
    mpi) mpirun --allow-run-as-root --oversubscribe -np "$cores" "$out/task-bench/mpi/nonblock" "${args[@]}" ;;
    *) echo "task_bench: unknown system '$1' (expected redflow-heft, redflow-steal, their -warm, openmp or mpi)" >&2; return 2 ;;
  esac
}

# One line per run: system pattern iterations rep elapsed_s tasks flops.
results=$out/runs.tsv
: >"$results"
for pattern in $patterns; do
  for it in $iterations; do
    for rep in $(seq 1 "$reps"); do
      for system in $systems; do  # interleaved, so a noisy moment hits every system
        log=$out/$system-$pattern-$it-$rep.log
        if ! run "$system" "$pattern" "$it" >"$log" 2>&1; then
          echo "task_bench: $system $pattern -iter $it failed (log: $log)" >&2
          tail -5 "$log" >&2
          exit 1
        fi
        elapsed=$(sed -n 's/^Elapsed Time \([0-9.e+-]*\) seconds$/\1/p' "$log" | head -1)
        tasks=$(sed -n 's/^Total Tasks \([0-9]*\)$/\1/p' "$log" | head -1)
        flops=$(sed -n 's/^Total FLOPs \([0-9]*\)$/\1/p' "$log" | head -1)
        [ -n "$elapsed" ] && [ -n "$tasks" ] && [ -n "$flops" ] ||
          { echo "task_bench: $system $pattern -iter $it: no Task Bench report in $log" >&2; exit 1; }
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$system" "$pattern" "$it" "$rep" "$elapsed" "$tasks" "$flops" >>"$results"
      done
    done
    echo "task_bench: $pattern -iter $it done" >&2
  done
done
echo "task_bench: logs and runs.tsv in $out" >&2
/usr/bin/python3 bench/task_bench/metg.py "$results" --cores "$cores" --systems $systems

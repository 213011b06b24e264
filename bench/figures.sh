#!/usr/bin/env bash
# Regenerates the measurements of docs/performance.md: the paper's Fig. 5
# (execution time against input size, HEFT and work stealing against the
# direct baseline), its Table 1 (stolen actors), its Fig. 6 (each redundancy
# configuration normalised to none) and the per-actor overhead of the four
# overhead shapes. Plots go to docs/figures/*.svg (gnuplot), raw results to
# docs/figures/data/*.json (one `redflow bench --json` file per run), and the
# tables replace the part of docs/performance.md between the
# `figures:begin` and `figures:end` markers. These are our graphs (`--profile
# fast`); bench/paper.sh runs the paper's own graphs and machine beside its
# Table 1 and Figs. 5/6.
#
#   bench/figures.sh                # everything, about 5 minutes on 2 cores
#   QUICK=1 bench/figures.sh        # smaller sizes, 1 run each: checks the pipeline
#   BUILD=build-rel RUNS=5 bench/figures.sh
#   MEASURE=0 bench/figures.sh      # redraw from the JSON files already in docs/figures/data
#
# It builds the redflow command in $BUILD (Release) first. Run it on a quiet
# machine: each result records how many cores other processes used while it
# was measured (others_load), and the tables show it.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build-rel}
RUNS=${RUNS:-5}
QUICK=${QUICK:-0}
out=docs/figures
data=$out/data
mkdir -p "$data"

echo "figures: building $BUILD (Release)" >&2
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DREDFLOW_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target redflow_cli load_scale >/dev/null
rf="$BUILD/redflow"

if [ "$QUICK" = 1 ]; then
  RUNS=1
  matmul_sizes="128 256"; fft_sizes="4096 16384"; bitonic_sizes="16384 65536"; overhead_n=10000
  load_sizes="10000 100000"; load_eager_sizes="10000"
  red_matmul="256"; red_fft="16384"; red_bitonic="65536"
else
  matmul_sizes="256 512 1024 1536 2048"
  fft_sizes="65536 262144 1048576 2097152 4194304"
  bitonic_sizes="262144 1048576 4194304 8388608 16777216"
  overhead_n=100000
  load_sizes="10000 100000 1000000"; load_eager_sizes="10000 100000"
  red_matmul="512 1024 2048"; red_fft="262144 1048576 4194304"; red_bitonic="1048576 4194304 16777216"
fi
sizes_of() { eval echo "\$${1}_sizes"; }

# Cores' worth of CPU the whole machine used over the last second (we run nothing meanwhile).
busy_cores() {
  local a b
  a=$(awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
  sleep 1
  b=$(awk 'NR == 1 { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
  echo "$a $b" | awk -v n="$(nproc)" '{ printf "%.2f", ($3 - $1) * n / ($4 - $2) }'
}
# Waits (up to QUIET_WAIT seconds, default 300) until other processes leave the machine idle:
# on a shared machine their load skews every time measured.
QUIET_WAIT=${QUIET_WAIT:-300}
wait_quiet() {
  local waited=0 busy
  while busy=$(busy_cores); awk -v b="$busy" 'BEGIN { exit !(b > 0.2) }'; do
    if [ "$waited" -ge "$QUIET_WAIT" ]; then
      echo "figures: machine still busy ($busy cores used by others); measuring anyway" >&2
      return
    fi
    [ "$waited" = 0 ] && echo "figures: waiting for other processes to finish ($busy cores busy)" >&2
    sleep 4
    waited=$((waited + 5))
  done
}

# One measurement: bench APP N TAG [extra args...] -> $data/APP-N[TAG].json. HEFT and
# stealing are measured in the same process, interleaved with the baseline.
bench() {
  local app=$1 n=$2 tag=$3
  shift 3
  local file="$data/$app-$n$tag.json"
  wait_quiet
  echo "figures: $app n=$n $*" >&2
  "$rf" bench "$app" --n "$n" --scheduler heft,steal --runs "$RUNS" --json "$file" "$@" >/dev/null
}

if [ "${MEASURE:-1}" = 1 ]; then
# Not paper-*.json: bench/paper.sh's results live beside ours.
find "$data" -maxdepth 1 -name '*.json' ! -name 'paper-*' -delete
# What was measured, for the tables (MEASURE=0 redraws keep it).
echo "$(date -u +%Y-%m-%d) $(git rev-parse --short HEAD)$(git diff --quiet -- . ':!docs' || echo '+changes') $RUNS" >"$data/measured"
# Fig. 5 and Table 1.
for app in matmul fft bitonic; do
  for n in $(sizes_of $app); do bench "$app" "$n" ""; done
done
# Overhead per actor, 4 shapes x 2 schedulers.
for shape in chain fanout tree wavefront; do bench overhead "$overhead_n" "-$shape" --shape "$shape"; done
# Load time and peak resident memory, one process per size (bench/load.sh).
wait_quiet
SKIP_BUILD=1 BUILD="$BUILD" SIZES="$load_sizes" EAGER_SIZES="$load_eager_sizes" bench/load.sh >"$data/load.jsonl"
# Fig. 6: all five configurations in one run each, normalised to none.
redundancy_ok=1
configs=none,2x-same,3x-same,2x-diff,3x-diff
if ! "$rf" bench matmul --n 64 --runs 1 --tiles 3 --no-baseline --redundancy "$configs" >/dev/null 2>"$data/redundancy.err"; then
  redundancy_ok=0
  echo "figures: redundancy not available, Fig. 6 skipped: $(cat "$data/redundancy.err")" >&2
else
  for app in matmul fft bitonic; do
    # 3 tiles (on any machine): 3x-diff needs a tile per replica.
    for n in $(eval echo "\$red_$app"); do bench "$app" "$n" "-redundancy" --tiles 3 --no-baseline --redundancy "$configs"; done
  done
fi
rm -f "$data/redundancy.err"
else
  # MEASURE=0: redraw plots and tables from the JSON already in $data.
  redundancy_ok=0
  ls "$data"/*-redundancy.json >/dev/null 2>&1 && redundancy_ok=1
fi

# ---------------------------------------------------------------- plots
fmt=${FORMAT:-svg}  # FORMAT=png for raster images
if [ "$fmt" = png ]; then
  term="pngcairo size 1500,520 font 'sans,10'"; term6="pngcairo size 1500,900 font 'sans,10'"
else
  term="svg size 1200,420 dynamic font 'sans,11'"; term6="svg size 1200,760 dynamic font 'sans,11'"
fi
# TSV per app: n heft_s steal_s baseline_s
for app in matmul fft bitonic; do
  for n in $(sizes_of $app); do
    jq -r '[.n, .configs[0].redflow_s, .configs[1].redflow_s, .baseline_s] | @tsv' "$data/$app-$n.json"
  done >"$data/$app.tsv"
done
gnuplot <<EOF
set terminal $term
set output "$out/fig5.$fmt"
set multiplot layout 1,3 title "Execution time against input size ($(nproc) hardware threads; lower is better)"
set key top left Left reverse
set grid
set logscale y
set format y "%g"
set ylabel "seconds"
set style data linespoints
set xlabel "matrix side n"
set xtics 512
set title "int32 matrix multiplication"
plot "$data/matmul.tsv" using 1:4 title "direct kernel (baseline)" lw 2, "" using 1:2 title "redflow HEFT" lw 2, "" using 1:3 title "redflow stealing" lw 2
set logscale x 2
set xtics auto
set format x "2^{%L}"
set xlabel "points"
set title "FFT (complex double)"
plot "$data/fft.tsv" using 1:4 title "FFTW3 threads (baseline)" lw 2, "" using 1:2 title "redflow HEFT" lw 2, "" using 1:3 title "redflow stealing" lw 2
set xlabel "int32 elements"
set title "bitonic sort"
plot "$data/bitonic.tsv" using 1:4 title "oneTBB parallel\\\\_sort (baseline)" lw 2, "" using 1:2 title "redflow HEFT" lw 2, "" using 1:3 title "redflow stealing" lw 2
unset multiplot
EOF

if [ "$redundancy_ok" = 1 ]; then
  for app in matmul fft bitonic; do
    for sched in heft steal; do
      for n in $(eval echo "\$red_$app"); do
        jq -r --arg s "$sched" '[.n] + [.configs[] | select(.scheduler == $s) | .normalized] | @tsv' "$data/$app-$n-redundancy.json"
      done >"$data/$app-$sched-redundancy.tsv"
    done
  done
  gnuplot <<EOF
set terminal $term6
set output "$out/fig6.$fmt"
set multiplot layout 2,3 title "Execution time of each redundancy configuration divided by none's (3 tiles; 1 = no cost)"
set key bottom right
set grid
set style data linespoints
set logscale x 2
set yrange [0:*]
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dashtype 2
do for [sched in "heft steal"] {
  do for [app in "matmul fft bitonic"] {
    set title app." (".sched.")"
    set xlabel (app eq "matmul" ? "matrix side n" : "elements")
    set format x (app eq "matmul" ? "%g" : "2^{%L}")
    plot for [c=3:6] "$data/".app."-".sched."-redundancy.tsv" using 1:c title word("2x-same 3x-same 2x-diff 3x-diff", c-2) lw 2
  }
}
unset multiplot
EOF
fi

# ---------------------------------------------------------------- markdown
md=$(mktemp)
# jq: seconds -> milliseconds with 3 significant digits (about).
ms='def ms: (. * 1000) | if . < 10 then (. * 100 | round / 100) elif . < 100 then (. * 10 | round / 10) else round end;'
{
  echo "<!-- figures:begin (generated by bench/figures.sh; edits here are overwritten) -->"
  echo
  read -r m_date m_commit m_runs <"$data/measured"
  echo "Measured $m_date at commit \`$m_commit\` by \`bench/figures.sh\` (RUNS=$m_runs: medians of that many runs after a warm-up)."
  echo "Machine: $(jq -r '.machine.cpu' "$data"/matmul-$(sizes_of matmul | awk '{print $1}').json | head -1), $(nproc) hardware threads, $(uname -sr), $(${CXX:-c++} --version | head -1)."
  echo "Every run uses the default runtime options (tiles = hardware threads, 16 slots of 8 MiB), except FFT above 2^22 points."
  echo "\`others\` is the number of cores other processes used during the measurement (0 on a quiet machine)."
  echo
  echo "### Fig. 5: execution time against size"
  echo
  echo "![Fig. 5](figures/fig5.$fmt)"
  echo
  echo "| app | n | actors | baseline ms | HEFT ms | ratio HEFT | steal ms | ratio steal | others |"
  echo "|-----|--:|-------:|-----------:|-------:|-----------:|--------:|------------:|-------:|"
  for app in matmul fft bitonic; do
    for n in $(sizes_of $app); do
      jq -r "$ms"'(.configs[0]) as $h | (.configs[1]) as $s |
        "| \(.app) | \(.n) | \(.actors) | \(.baseline_s|ms) | \($h.redflow_s|ms) | \($h.ratio*100|round/100) | \($s.redflow_s|ms) | \($s.ratio*100|round/100) | \(.machine.others_load*10|round/10) |"' \
        "$data/$app-$n.json"
    done
  done
  echo
  echo "Ratio = baseline time / redflow time (≥ 1: redflow is faster). Baselines: the direct int32 kernel on all threads (matmul), FFTW3 with threads and FFTW_MEASURE (FFT), oneTBB parallel_sort (bitonic). OpenBLAS sgemm on float matrices of the same size, for reference: $(jq -r "$ms"'"\(.sgemm_s|ms) ms at n = \(.n)"' "$data/matmul-$(sizes_of matmul | awk '{print $NF}').json")."
  echo
  echo "### Table 1: stolen actors under work stealing"
  echo
  echo "| app | n | actors in total | average stolen | percent |"
  echo "|-----|--:|----------------:|---------------:|--------:|"
  for app in matmul fft bitonic; do
    for n in $(sizes_of $app); do
      jq -r '(.configs[1]) as $s | "| \(.app) | \(.n) | \(.actors) | \($s.steals*10|round/10) | \($s.steals/.actors*1000|round/10) % |"' "$data/$app-$n.json"
    done
  done
  echo
  echo "### Overhead per actor ($overhead_n empty actors, 0-byte data nodes)"
  echo
  echo "| shape | scheduler | actors | redflow ns/actor | oneTBB ns/actor | ratio tbb/redflow | others |"
  echo "|-------|-----------|-------:|-----------------:|----------------:|------------------:|-------:|"
  for shape in chain fanout tree wavefront; do
    jq -r '.actors as $a | .baseline_s as $b | .machine.others_load as $o | .configs[] |
      "| \(.scheduler) | \($a) | \(.redflow_s*1e9/$a*10|round/10) | \($b*1e9/$a*10|round/10) | \(.ratio*100|round/100) | \($o*10|round/10) |"' \
      "$data/overhead-$overhead_n-$shape.json" | sed "s/^/| $shape /"
  done
  echo
  echo "### Load time and memory"
  echo
  echo "A chain of N empty actors with 0-byte data nodes, steal scheduler, 2 tiles (bench/load.sh). Lazy: only the runtime's configuration at load (the default); eager: all five (--eager-schedules, as the paper). Peak = the process's VmHWM after load and one execution, graph included; load = what load() added to the resident memory after the graph was built. \"malloc huge pages\": run with GLIBC_TUNABLES=glibc.malloc.hugetlb=1."
  echo
  echo "| actors | configurations at load | build graph s | load s | load CPU s | execute s | peak RSS MB | peak B/actor | load B/actor |"
  echo "|-------:|------------------------|--------------:|-------:|-----------:|----------:|------------:|-------------:|-------------:|"
  if [ -f "$data/load.jsonl" ]; then
    jq -r '"| \(.actors) | \(if .eager then "all five (eager)" else "the runtime'"'"'s (lazy)" end)\(if .malloc_hugetlb then ", malloc huge pages" else "" end) | \(.build_s*100|round/100) | \(.load_s*100|round/100) | \(.load_cpu_s*100|round/100) | \(.execute_s*1000|round/1000) | \(.peak_rss_bytes/1e6|round) | \(.peak_rss_per_actor|round) | \(.load_rss_per_actor|round) |"' "$data/load.jsonl"
  fi
  echo
  echo "### Fig. 6: redundancy configurations normalised to none"
  echo
  if [ "$redundancy_ok" = 1 ]; then
    echo "Every configuration on 3 tiles (so that 3x-diff has a tile per replica; on this machine that is more tiles than cores), without the baseline; each value is that configuration's median time divided by none's, measured interleaved in the same process."
    echo
    echo "![Fig. 6](figures/fig6.$fmt)"
    echo
    echo "| app | n | scheduler | none ms | 2x-same | 3x-same | 2x-diff | 3x-diff |"
    echo "|-----|--:|-----------|-------:|--------:|--------:|--------:|--------:|"
    for app in matmul fft bitonic; do
      for n in $(eval echo "\$red_$app"); do
        jq -r "$ms"'.app as $app | .n as $n | .configs as $c | ["heft", "steal"][] as $s |
          [$c[] | select(.scheduler == $s)] as $r |
          "| \($app) | \($n) | \($s) | \($r[0].redflow_s|ms) | " + ([$r[1:][] | .normalized*100|round/100|tostring] | join(" | ")) + " |"' \
          "$data/$app-$n-redundancy.json"
      done
    done
  else
    echo "Not measured: this build's runtime does not execute redundant configurations yet."
  fi
  echo
  echo "<!-- figures:end -->"
} >"$md"

doc=docs/performance.md
bench/splice_markdown.sh "$doc" figures "$md"
rm -f "$md"
echo "figures: updated $doc, $out/fig5.$fmt$( [ "$redundancy_ok" = 1 ] && echo " and $out/fig6.$fmt")" >&2

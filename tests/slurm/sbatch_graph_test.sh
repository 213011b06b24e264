#!/usr/bin/env bash
# `sbatch examples/cluster/srun.sbatch GRAPH INPUT` on a real one-node Slurm
# cluster (tests/slurm/cluster.sh): the demo graph on 3 tasks (the driver
# and two remote tiles, met through the srun rendezvous) on loopback,
# without keys. Its output must equal a one-process `redflow run` on the
# same input (random, made here), the job's log must show both tiles served
# by srun ranks, and nothing of the job may be left running after it.
# Usage: sbatch_graph_test.sh SOURCE_DIR REDFLOW   (exit 77: skipped, why on stderr)
set -euo pipefail
source_dir=$1
REDFLOW=$(realpath "$2")
source "$source_dir/tests/slurm/cluster.sh"
slurm_cluster_start
work=$SLURM_TEST_DIR/work
mkdir -p "$work"
cd "$work"

seed=${SLURM_TEST_SEED:-$RANDOM}
echo "sbatch_graph_test: input seed $seed"
python3 -c 'import random, struct, sys
r = random.Random(int(sys.argv[1]))
sys.stdout.buffer.write(struct.pack("<64i", *[r.randrange(-1000, 1000) for _ in range(64)]))' "$seed" >A.bin
graph=$source_dir/examples/demo/pipeline.dot

# --overcommit: three tasks on a node with fewer CPUs (the driver and its
# tiles mostly wait on one another).
set +e
REDFLOW=$REDFLOW REDFLOW_SHARED_DIR=$work/shared REDFLOW_LISTEN_HOST=127.0.0.1 \
  timeout 90 sbatch --wait --overcommit --output="$work/job.out" --parsable \
  "$source_dir/examples/cluster/srun.sbatch" "$graph" A.bin >sbatch.out 2>&1
code=$?
set -e
job=$(head -n 1 sbatch.out | cut -d';' -f1)
[ "$code" = 0 ] || { cat sbatch.out job.out >&2; slurm_cluster_logs; slurm_fail "sbatch srun.sbatch exited $code"; }
for rank in 1 2; do
  grep -q "rank $rank of 3 (srun) serves a tile" job.out || { cat job.out >&2; slurm_fail "no srun rank $rank served a tile"; }
done
grep -q " on 2 tiles" job.out || { cat job.out >&2; slurm_fail "the driver did not run on 2 remote tiles"; }

[ -s shared/Y.bin ] || { cat job.out >&2; slurm_fail "the job wrote no shared/Y.bin"; }
"$REDFLOW" run "$graph" --input A=A.bin --output Y=one.bin 2>one.err || { cat one.err >&2; slurm_fail "the one-process run failed"; }
cmp one.bin shared/Y.bin || slurm_fail "the Slurm job's Y differs from the one-process run's (input seed $seed)"

slurm_wait_for 20 "job $job to leave the queue" slurm_no_jobs || slurm_fail "job $job still listed: $(squeue 2>&1)"
left=$(slurm_job_pids "$job")
[ -z "$left" ] || slurm_fail "processes of job $job still running: $(ps -o pid,args -p "$(paste -sd, <<<"$left")")"
echo "sbatch_graph_test: ok (job $job: the same Y as a one-process run)"

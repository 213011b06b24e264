#!/usr/bin/env bash
# A `redflow server` inside a real Slurm allocation (tests/slurm/cluster.sh):
# `sbatch --ntasks=2 examples/cluster/server.sbatch` starts the server in the
# batch step and two `redflow worker --persist` with srun, all on loopback.
# The test checks that the workers the server lists are the srun tasks of
# that job, submits a graph job and a SPITS job, checks each output against
# its one-process run and that both ran on those workers, then ends the
# allocation with scancel and checks that nothing of it is left running and
# that the server no longer answers. A second allocation on the same
# directory must list both jobs from the journal and, given no work, end by
# itself once its workers have been idle REDFLOW_WORKER_IDLE seconds.
# Usage: server_allocation_test.sh SOURCE_DIR REDFLOW SPITS_PI.so   (exit 77: skipped, why on stderr)
set -euo pipefail
source_dir=$1
REDFLOW=$(realpath "$2")
pi_job=$(realpath "$3")
source "$source_dir/tests/slurm/cluster.sh"
slurm_cluster_start
work=$SLURM_TEST_DIR/work
mkdir -p "$work"
cd "$work"
shared=$work/shared
rf() { timeout 60 "$REDFLOW" "$1" --server-file "$shared/server" "${@:2}"; }
show_logs() {
  for f in job.out job2.out shared/server.log; do
    [ -f "$f" ] && { echo "--- $f"; cat "$f"; }
  done >&2
  slurm_cluster_logs
}
fail() {
  show_logs
  slurm_fail "$@"
}

seed=${SLURM_TEST_SEED:-$RANDOM}
echo "server_allocation_test: input seed $seed"
python3 -c 'import random, struct, sys
r = random.Random(int(sys.argv[1]))
sys.stdout.buffer.write(struct.pack("<64i", *[r.randrange(-1000, 1000) for _ in range(64)]))' "$seed" >A.bin
graph=$source_dir/examples/demo/pipeline.dot

job=$(REDFLOW=$REDFLOW REDFLOW_SHARED_DIR=$shared REDFLOW_LISTEN_HOST=127.0.0.1 REDFLOW_WORKER_IDLE=120 \
  timeout 20 sbatch --parsable --ntasks=2 --output="$work/job.out" "$source_dir/examples/cluster/server.sbatch") ||
  fail "sbatch server.sbatch failed: $job"
job=${job%%;*}

# True when a TCP connect to ENDPOINT succeeds (a client would wait 10 s
# for an answer from a server that is gone; a connect is refused at once).
listening() {
  python3 -c 'import socket, sys
host, port = sys.argv[1].removeprefix("tcp://").rsplit(":", 1)
try:
    socket.create_connection((host, int(port)), timeout=2).close()
except OSError:
    sys.exit(1)' "$1"
}
# Both workers at the server: `redflow workers` lists the idle ones.
two_idle() { rf workers 2>/dev/null | grep -q "^idle now: 2$"; }
slurm_wait_for 30 "two idle workers" two_idle ||
  fail "job $job: no two idle workers at the server within 30 s: $(rf workers 2>&1 || true); squeue: $(squeue 2>&1)"
# Their names are HOST:PID: each must be a task of step 0 (srun) of this job.
worker_pids=$(rf workers | sed -n 's/^  [^ ]*:\([0-9]*\) on .*/\1/p' | sort -n)
[ "$(wc -w <<<"$worker_pids")" = 2 ] || fail "expected two worker pids in: $(rf workers)"
job_pids=$(slurm_job_pids "$job")
for pid in $worker_pids; do
  grep -qx "$pid" <<<"$job_pids" || fail "worker pid $pid is not a process of job $job (its processes: $job_pids)"
  [ "$(slurm_pid_env "$pid" SLURM_STEP_ID)" = 0 ] || fail "worker pid $pid is not a task of step $job.0 (srun)"
done
server_pid=$(cat "$shared/server.pid")
grep -qx "$server_pid" <<<"$job_pids" || fail "the server (pid $server_pid) is not a process of job $job"
while read -r endpoint; do
  listening "$endpoint" || fail "nothing listens at the server's endpoint $endpoint"
done <"$shared/server"

# A graph job and a SPITS job, each against its one-process run.
id=$(rf submit run "$graph" --input A=A.bin --output Y=Y.bin) || fail "submit run failed: $id"
rf wait "$id" --timeout 50 || fail "graph job $id did not succeed: $(rf job "$id" 2>&1)"
"$REDFLOW" run "$graph" --input A=A.bin --output Y=one.bin 2>one.err || { cat one.err >&2; fail "the one-process run failed"; }
cmp one.bin Y.bin || fail "graph job $id: Y differs from the one-process run's (input seed $seed)"

tasks=40
sid=$(rf submit spits "$pi_job" tasks=$tasks samples=2000 seed="$seed" out=pi.txt) || fail "submit spits failed: $sid"
rf wait "$sid" --timeout 50 || fail "SPITS job $sid did not succeed: $(rf job "$sid" 2>&1)"
"$REDFLOW" spits "$pi_job" tasks=$tasks samples=2000 seed="$seed" out=pi.one.txt --local-workers 2 >one.out 2>&1 ||
  { cat one.out >&2; fail "the one-process SPITS run failed"; }
[ "$(wc -l <pi.txt)" = "$tasks" ] || fail "SPITS job $sid committed $(wc -l <pi.txt) lines, expected $tasks: $(cat pi.txt)"
cmp <(sort pi.one.txt) <(sort pi.txt) || fail "SPITS job $sid: its commits differ from the one-process run's"

for j in "$id" "$sid"; do
  ran_on=$(rf job "$j" | sed -n 's/^  workers: //p')
  for pid in $worker_pids; do
    grep -q ":$pid on " <<<"$ran_on" || fail "job $j did not run on the srun worker pid $pid (it ran on: $ran_on)"
  done
done

# The end of the allocation ends the server, its drivers and the workers.
scancel "$job"
slurm_wait_for 30 "job $job to leave the queue" slurm_no_jobs || fail "job $job still listed 30 s after scancel: $(squeue 2>&1)"
slurm_wait_for 10 "job $job's processes to end" test -z "$(slurm_job_pids "$job")" ||
  fail "processes of job $job still running after scancel: $(ps -o pid,args -p "$(slurm_job_pids "$job" | paste -sd,)")"
# Exiting, a process leaves its environment before its pid goes.
all_gone() {
  local pid
  for pid; do ! kill -0 "$pid" 2>/dev/null || return 1; done
}
# shellcheck disable=SC2086  # lists of pids
slurm_wait_for 10 "the server and workers to end" all_gone $server_pid $worker_pids ||
  fail "the server (pid $server_pid) or a worker (pids $worker_pids) still runs 10 s after scancel: $(ps -o pid,stat,args -p "$(echo $server_pid $worker_pids | tr ' ' ,)")"
# Nothing listens at the server's endpoints any more.
while read -r endpoint; do
  ! listening "$endpoint" || fail "something still listens at the server's endpoint $endpoint after scancel"
done <"$shared/server"

# A second allocation on the same DIR: the server resumes from the journal
# (both jobs listed as succeeded), and with no job to run its workers end
# after REDFLOW_WORKER_IDLE seconds, and so does the allocation, completed.
rm -f "$shared/server"
job2=$(REDFLOW=$REDFLOW REDFLOW_SHARED_DIR=$shared REDFLOW_LISTEN_HOST=127.0.0.1 REDFLOW_WORKER_IDLE=2 \
  timeout 20 sbatch --parsable --ntasks=2 --output="$work/job2.out" "$source_dir/examples/cluster/server.sbatch") ||
  fail "the second sbatch server.sbatch failed: $job2"
job2=${job2%%;*}
server_up() { [ -f "$shared/server" ] && [ "$(wc -l <"$shared/server")" -ge 2 ]; }
slurm_wait_for 30 "the second server" server_up || fail "job $job2: no server file within 30 s"
listed=$(rf jobs) || fail "the second server does not answer: $listed"
for j in "$id" "$sid"; do
  grep -Eq "^ +$j +succeeded +0 " <<<"$listed" || fail "the second server (job $job2) does not list job $j as succeeded from the journal: $listed"
done
job_state() { timeout 10 scontrol show job "$job2" --oneliner 2>/dev/null; }
completed() { job_state | grep -q " JobState=COMPLETED .* ExitCode=0:0 "; }
slurm_wait_for 30 "job $job2 to complete" completed ||
  fail "job $job2 did not complete by itself within 30 s of idle workers: $(job_state)"
slurm_wait_for 10 "job $job2's processes to end" test -z "$(slurm_job_pids "$job2")" ||
  fail "processes of job $job2 still running after it completed: $(slurm_job_pids "$job2" | paste -sd,)"
echo "server_allocation_test: ok (job $job: graph job $id and SPITS job $sid right on its srun workers, nothing left after scancel;" \
  "job $job2: the journal's jobs listed, ended by itself when idle)"

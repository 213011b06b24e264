#!/usr/bin/env bash
# A `redflow server --slurm-workers 2` with no workers of its own, against a
# real one-node Slurm (tests/slurm/cluster.sh): it asks Slurm for nothing
# while no job waits; a graph job submitted makes it ask for allocations
# (never more than 2 workers' worth in the queue at any moment, watched
# throughout), whose srun workers join and run the job, with the right
# output; once idle for --slurm-idle seconds the workers leave and the
# allocations end by themselves. Then, with the node drained (allocations
# can only wait), a job that wants 3 workers gets requests for 2 and no
# more, and cancelling it makes the server take the waiting requests back
# (scancel), visibly in `redflow workers`; and a server stopped with SIGTERM
# cancels the requests still waiting.
# Usage: server_slurm_workers_test.sh SOURCE_DIR REDFLOW   (exit 77: skipped, why on stderr)
set -euo pipefail
source_dir=$1
REDFLOW=$(realpath "$2")
source "$source_dir/tests/slurm/cluster.sh"
slurm_test_cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "${watch_pid:-}" ] && kill "$watch_pid" 2>/dev/null || true
  [ -n "${SLURM_NODE:-}" ] && timeout 10 scontrol update NodeName="$SLURM_NODE" State=RESUME 2>/dev/null || true
}
slurm_cluster_start
work=$SLURM_TEST_DIR/work
mkdir -p "$work"
cd "$work"
rf() { timeout 60 "$REDFLOW" "$1" --server-file "$work/server" "${@:2}"; }
fail() {
  { echo "--- server.log"; cat server.log; echo "--- redflow workers"; rf workers 2>&1 || true; echo "--- squeue"; squeue 2>&1 || true; } >&2
  slurm_cluster_logs
  slurm_fail "$@"
}

seed=${SLURM_TEST_SEED:-$RANDOM}
echo "server_slurm_workers_test: input seed $seed"
python3 -c 'import random, struct, sys
r = random.Random(int(sys.argv[1]))
sys.stdout.buffer.write(struct.pack("<64i", *[r.randrange(-1000, 1000) for _ in range(64)]))' "$seed" >A.bin
graph=$source_dir/examples/demo/pipeline.dot

"$REDFLOW" --log-level info server --min-workers 2 --slurm-workers 2 --slurm-per-allocation 1 --slurm-idle 3 \
  --server-file "$work/server" --journal "$work/journal" 2>server.log &
server_pid=$!
server_up() { [ -f server ] && [ "$(wc -l <server)" -ge 2 ]; }
slurm_wait_for 20 "the server's file" server_up || fail "the server wrote no server file within 20 s"
endpoint=$(sed -n 2p server)
name=$(sed -n 's/.*allocations named \(redflow-workers-[0-9a-f]*\).*/\1/p' server.log)
[ -n "$name" ] || fail "the server's log does not name its allocations"
ours() { timeout 10 squeue --noheader --name="$name" --format="%i %T" 2>/dev/null; }

# No job waits: nothing is asked for.
sleep 3
[ -z "$(ours)" ] || fail "the server asked Slurm for workers with no job waiting: $(ours)"
rf workers | grep -q "^workers from Slurm: at most 2 workers, 1 per allocation; 0 asked for now" ||
  fail "redflow workers does not show the Slurm bounds: $(rf workers)"

# Watch the queue throughout: the most allocations of ours listed at once.
(while :; do ours | wc -l; sleep 0.2; done) >counts.txt 2>/dev/null &
watch_pid=$!

id=$(rf submit run "$graph" --input A=A.bin --output Y=Y.bin) || fail "submit run failed: $id"
rf wait "$id" --timeout 60 || fail "graph job $id did not succeed on workers from Slurm: $(rf job "$id" 2>&1)"
"$REDFLOW" run "$graph" --input A=A.bin --output Y=one.bin 2>one.err || { cat one.err >&2; fail "the one-process run failed"; }
cmp one.bin Y.bin || fail "graph job $id: Y differs from the one-process run's (input seed $seed)"
ran_on=$(rf job "$id" | sed -n 's/^  workers: //p')
allocs=$(grep -o '/slurm-[0-9]*' <<<"$ran_on" | sort -u | sed 's,/slurm-,,')
[ "$(wc -w <<<"$allocs")" -ge 1 ] || fail "job $id did not run on workers from Slurm allocations (it ran on: $ran_on)"
for a in $allocs; do
  grep -q "asked Slurm for 1 worker(s): allocation $a " server.log || fail "allocation $a (a worker of job $id came from it) is not one the server asked for"
  [ "$(timeout 10 scontrol show job "$a" --oneliner | sed -n 's/.* JobName=\([^ ]*\).*/\1/p')" = "$name" ] ||
    fail "Slurm job $a is not named $name"
done

# Idle for --slurm-idle seconds, the workers leave and the allocations end by themselves.
none_ours() { [ -z "$(ours)" ]; }
slurm_wait_for 40 "the allocations to end once idle" none_ours || fail "allocations still listed 40 s after the job: $(ours)"
kill "$watch_pid"
wait "$watch_pid" 2>/dev/null || true
watch_pid=
most=$(sort -n counts.txt | tail -n 1)
[ "${most:-0}" -ge 1 ] || fail "the queue watch never saw an allocation of ours"
[ "$most" -le 2 ] || fail "$most allocations of one worker listed at once, over --slurm-workers 2"
no_worker() { rf workers | grep -q '^idle now: 0$'; }
slurm_wait_for 10 "no worker at the server" no_worker ||
  fail "workers still at the server after their allocations ended"

# The node drained: allocations can only wait. A job that wants 3 workers gets 2 asked for, no more.
timeout 10 scontrol update NodeName="$SLURM_NODE" State=DRAIN Reason=redflow-test || fail "cannot drain $SLURM_NODE"
big=$(rf submit --workers 3 run "$graph" --input A=A.bin --output Y3=Y3.bin) || fail "submit --workers 3 failed: $big"
two_pending() { [ "$(ours | grep -c ' PENDING$')" = 2 ]; }
slurm_wait_for 20 "two waiting allocations" two_pending || fail "not two pending allocations for a job that wants 3 workers: $(ours)"
sleep 5  # two more rounds of squeue and plan
[ "$(ours | wc -l)" = 2 ] || fail "over the bound of 2 workers: $(ours)"
rf cancel "$big" >/dev/null || fail "cancel $big failed"
slurm_wait_for 20 "the waiting allocations to be taken back" none_ours || fail "allocations still listed 20 s after their job was cancelled: $(ours)"
rf workers | grep -q "cancelled: no job waits for its workers any more" ||
  fail "redflow workers does not say why the allocations were cancelled: $(rf workers)"
grep -q "cancelling Slurm allocation" server.log || fail "the server's log does not say it cancelled allocations"
kill -0 "$server_pid" || fail "the server died"

# A server stopped (SIGTERM) takes back what still waits in the queue: no
# allocation outlives it unasked, not even one whose sbatch was under way
# when the signal came (stopped as soon as the first request is queued).
again=$(rf submit run "$graph" --input A=A.bin --output Y4=Y4.bin) || fail "submit failed: $again"
one_pending() { ours | grep -q ' PENDING$'; }
slurm_wait_for 20 "a waiting allocation" one_pending || fail "no pending allocation for job $again: $(ours)"
kill -TERM "$server_pid"
server_gone() {  # exited: gone, or a zombie until the wait below
  local state
  state=$(awk '{print $3}' "/proc/$server_pid/stat" 2>/dev/null) || return 0
  [ -z "$state" ] || [ "$state" = Z ]
}
slurm_wait_for 20 "the server to stop" server_gone || fail "the server still runs 20 s after SIGTERM"
wait "$server_pid" || fail "the server exited with status $? after SIGTERM"
server_pid=
none_ours || fail "allocations still queued after the server stopped: $(ours)"
grep -q "stopping: cancelling the Slurm allocation(s) still queued" server.log || fail "the server's log does not say it cancelled its queued allocations"
echo "server_slurm_workers_test: ok (job $id right on workers of allocation(s) $(echo $allocs), at most $most listed at once," \
  "ended when idle; a job wanting 3 got 2 requests, taken back when it was cancelled, and when the server stopped)"

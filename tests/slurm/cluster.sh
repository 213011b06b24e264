# shellcheck shell=bash
# A single-node Slurm cluster on this machine for one test, sourced by the
# tests/slurm/*_test.sh scripts:
#   source tests/slurm/cluster.sh
#   slurm_cluster_start            # or exits 77 (ctest's skip code) saying why
#   sbatch ... ; srun ... ; squeue ...   (SLURM_CONF points at its slurm.conf)
# It writes a munge key and a slurm.conf into a fresh directory
# ($SLURM_TEST_DIR): this host as the one node (its real CPUs and memory,
# from `slurmd -C`), free ports for slurmctld and slurmd, state, spool, logs
# and pid files all inside the directory, no cgroups (proctrack/linuxproc,
# task/none). It starts munged on its own socket and key, then slurmctld and
# slurmd with -f that file, and waits for the node to be idle. On exit (a
# trap) it cancels the cluster's jobs, stops the three daemons it started
# (by their pids) and removes the directory. Every wait is bounded.
# A test that must clean up more defines slurm_test_cleanup; the trap
# calls it first. Set SLURM_KEEP_DIR=1 to keep the directory for a look.
# Needs root (slurmd runs jobs as their users) and Debian's slurm-wlm and
# munge (scripts/bootstrap installs them).

SLURM_SKIP=77

# Skips the test: the reason goes on the line after "NAME: Skipped", where
# scripts/skipped-tests finds it in ctest's log (as it finds GTEST_SKIP's).
slurm_skip() {
  printf '%s: Skipped\n%s\n' "${0##*/}" "$*" >&2
  exit "$SLURM_SKIP"
}

slurm_fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# slurm_wait_for SECONDS WHAT COMMAND...: runs COMMAND every 0.2 s until it
# succeeds; fails naming WHAT after SECONDS.
slurm_wait_for() {
  local seconds=$1 what=$2
  shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "cluster.sh: gave up waiting for $what after $seconds s" >&2
      return 1
    fi
    sleep 0.2
  done
}

slurm_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Prints the daemons' logs, for a failure's diagnosis.
slurm_cluster_logs() {
  local f
  for f in "$SLURM_TEST_DIR"/munged.log "$SLURM_TEST_DIR"/slurmctld.log "$SLURM_TEST_DIR"/slurmd.log; do
    [ -f "$f" ] && { echo "--- $f (last 30 lines)"; tail -n 30 "$f"; }
  done >&2
}

# Stops the daemon whose pid FILE holds, if that process is still one this
# cluster started (its command line names the cluster's directory): a pid
# left in a file by a daemon that died may belong to another process since.
slurm_stop_pid_file() {
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file" 2>/dev/null) || return 0
  [ -n "$pid" ] || return 0
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$SLURM_TEST_DIR/" || return 0
  kill "$pid" 2>/dev/null || return 0
  local deadline=$((SECONDS + 10))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

slurm_cluster_stop() {
  # A test's own clean-up first (processes it started outside Slurm).
  if declare -F slurm_test_cleanup >/dev/null; then slurm_test_cleanup || true; fi
  [ -n "${SLURM_TEST_DIR:-}" ] && [ -d "$SLURM_TEST_DIR" ] || return 0
  if [ -f "$SLURM_TEST_DIR/slurmctld.pid" ]; then
    timeout 10 scancel --full --quiet --user="$(id -un)" 2>/dev/null || true
    slurm_wait_for 20 "the cluster's jobs to end" slurm_no_jobs || echo "cluster.sh: jobs still listed at exit" >&2
  fi
  slurm_stop_pid_file "$SLURM_TEST_DIR/slurmd.pid"
  slurm_stop_pid_file "$SLURM_TEST_DIR/slurmctld.pid"
  slurm_stop_pid_file "$SLURM_TEST_DIR/munged.pid"
  if [ "${SLURM_KEEP_DIR:-0}" = 1 ]; then
    echo "cluster.sh: kept $SLURM_TEST_DIR" >&2
  else
    rm -rf "$SLURM_TEST_DIR"
  fi
}

# True when squeue lists no job of this cluster.
slurm_no_jobs() {
  local out
  out=$(timeout 10 squeue --noheader --format=%i 2>/dev/null) || return 1
  [ -z "$out" ]
}

# The pids of this cluster's job JOBID still running: every process whose
# environment has this cluster's SLURM_CONF and SLURM_JOB_ID=JOBID (the
# batch script, what it started, srun and the tasks srun started).
slurm_job_pids() {
  local job=$1 p env
  for p in /proc/[0-9]*; do
    env=$(tr '\0' '\n' 2>/dev/null <"$p/environ") || continue
    grep -qx "SLURM_CONF=$SLURM_CONF" <<<"$env" && grep -qx "SLURM_JOB_ID=$job" <<<"$env" && echo "${p#/proc/}"
  done
  return 0
}

# The value of variable NAME in process PID's environment ("" if unset).
slurm_pid_env() {
  tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | sed -n "s/^$2=//p"
}

slurm_node_idle() {
  local state
  state=$(timeout 10 sinfo --noheader --nodes="$SLURM_NODE" --format=%T 2>/dev/null) || return 1
  [ "$state" = idle ]
}

slurm_cluster_start() {
  [ "$(id -u)" = 0 ] || slurm_skip "not root: slurmd must run as root to start jobs as their users"
  local tool
  for tool in munged slurmctld slurmd sbatch srun squeue sinfo scancel python3; do
    command -v "$tool" >/dev/null || slurm_skip "$tool is not installed (Debian: apt-get install slurm-wlm munge; scripts/bootstrap installs them)"
  done
  SLURM_TEST_DIR=$(mktemp -d /tmp/redflow-slurm.XXXXXX)
  trap slurm_cluster_stop EXIT
  # A test killed outright (ctest's timeout) runs no trap: a guard outside
  # its process tree stops the cluster once the test's shell is gone (after
  # a normal exit it finds the directory removed and does nothing).
  # shellcheck disable=SC2016  # expanded by the guard's shell
  setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done
    source "$2"; SLURM_TEST_DIR=$3; export SLURM_CONF=$3/slurm.conf; slurm_cluster_stop' \
    slurm-guard "$$" "${BASH_SOURCE[0]}" "$SLURM_TEST_DIR" </dev/null >/dev/null 2>&1 &
  local d=$SLURM_TEST_DIR
  chmod 0700 "$d"
  mkdir -p "$d/state" "$d/spool" "$d/munge"
  chmod 0700 "$d/munge"

  # munged: its own key, socket, pid, log and seed files.
  head -c 1024 /dev/urandom >"$d/munge/munge.key"
  chmod 0400 "$d/munge/munge.key"
  timeout 10 munged --force --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
    --pid-file="$d/munged.pid" --log-file="$d/munged.log" --seed-file="$d/munge/munged.seed" 2>"$d/munged.err" ||
    slurm_skip "munged does not start here: $(cat "$d/munged.err")"
  slurm_wait_for 10 "munged's socket" test -S "$d/munge/munge.socket" ||
    slurm_skip "munged made no socket within 10 s: $(cat "$d/munged.err" "$d/munged.log" 2>/dev/null)"

  # This host as the one node, with what slurmd finds here.
  local probe
  probe=$(timeout 20 slurmd -C 2>&1 | head -n 1) || slurm_skip "slurmd -C fails here: $probe"
  SLURM_NODE=$(hostname -s)
  SLURM_CPUS=$(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$probe")
  local memory
  memory=$(sed -n 's/.* RealMemory=\([0-9]*\).*/\1/p' <<<"$probe")
  if [ -z "$SLURM_CPUS" ] || [ -z "$memory" ]; then slurm_skip "slurmd -C printed no CPUs or RealMemory: $probe"; fi
  local ctld_port slurmd_port
  ctld_port=$(slurm_free_port)
  slurmd_port=$(slurm_free_port)
  while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(slurm_free_port); done
  cat >"$d/slurm.conf" <<CONF
ClusterName=redflowtest
SlurmctldHost=$SLURM_NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
ReturnToService=2
InactiveLimit=0
KillWait=2
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$SLURM_NODE NodeAddr=127.0.0.1 CPUs=$SLURM_CPUS RealMemory=$memory State=UNKNOWN
PartitionName=test Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$d/slurm.conf

  timeout 20 slurmctld -f "$SLURM_CONF" 2>"$d/slurmctld.err" ||
    { slurm_cluster_logs; slurm_skip "slurmctld does not start here: $(cat "$d/slurmctld.err")"; }
  timeout 20 slurmd -f "$SLURM_CONF" 2>"$d/slurmd.err" ||
    { slurm_cluster_logs; slurm_skip "slurmd does not start here: $(cat "$d/slurmd.err")"; }
  slurm_wait_for 30 "node $SLURM_NODE idle" slurm_node_idle ||
    { slurm_cluster_logs; slurm_skip "node $SLURM_NODE is not idle 30 s after slurmd started: $(timeout 5 sinfo -N -l 2>&1)"; }
}

// SPITS jobs: a bag of tasks the PY-PITS way (docs/spits.md).
//
// A job is a plugin (.so) that exports ONE C entry point,
//
//   extern "C" const redflow_spits_job* redflow_spits_job_v1(void);
//
// returning a table of functions. The runtime calls them in this order:
//
//   setup(args)                      once, on the Job Manager
//   main(runner) or one phase        each phase: generate_task until it says DONE,
//     generate_task -> bytes         (Job Manager, one thread)
//     execute_task(bytes) -> bytes   (Workers, many threads at once, maybe many times per task)
//     commit_task(task, result)      (Committer, one thread, exactly once per task)
//   teardown(completed)              once
//
// The contract (what the runtime relies on, what it promises):
// - generate_task is deterministic: after a restart with the same --log the
//   runtime generates again from the start and skips what the log says was
//   committed; it checks each task's bytes against the hash in the log and
//   stops with a named error if they differ.
// - execute_task is idempotent and thread-safe: it reads the task and the job's
//   setup state, writes only its result, and may run several times for the
//   same task at once on different Workers (re-submission as the circular
//   queue wraps); the runtime keeps the first result and discards the others.
// - commit_task is not idempotent and is called exactly once per task, in no
//   particular order, never concurrently with itself or generate_task.
// - Failure: a function returns an error code (and may say why with
//   out->error()). A failing or throwing execute_task is a strike against its
//   task; after 3 strikes the task is set aside as poisoned, named in the
//   report, and never committed. A failing or throwing setup, generate_task,
//   commit_task, main or teardown ends the job with a named error (exit 1);
//   what was committed before stays committed (and logged, with --log).
//   A crash (SIGSEGV) in the embedded form ends the process; restart it
//   with the same --log to resume.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REDFLOW_SPITS_ABI_VERSION 1
#define REDFLOW_SPITS_ENTRY_POINT "redflow_spits_job_v1"

// generate_task's answers; every other function returns 0 on success.
#define REDFLOW_SPITS_TASK 1  // a task was written to `task`
#define REDFLOW_SPITS_DONE 0  // no more tasks in this phase
#define REDFLOW_SPITS_ERROR (-1)

// Where a job function writes its bytes (a task, a result) and, on failure,
// why. write() appends; error() keeps the last message.
typedef struct redflow_spits_out {
  void* runtime;  // the runtime's, do not touch
  void (*write)(struct redflow_spits_out* out, const void* data, size_t size);
  void (*error)(struct redflow_spits_out* out, const char* message);
} redflow_spits_out;

// Given to a job's main(): run_phase runs one parallel phase (generate,
// execute, commit until generate_task says DONE and every task is committed
// or poisoned) and returns 0, or nonzero when the job must stop (return it).
typedef struct redflow_spits_runner {
  void* runtime;
  int (*run_phase)(const struct redflow_spits_runner* runner, const char* phase_name);
} redflow_spits_runner;

typedef struct redflow_spits_job {
  uint32_t abi_version;  // REDFLOW_SPITS_ABI_VERSION
  const char* name;      // shown in reports
  // Parses the job's args (those after JOB.so on the command line) and
  // returns the job's state, or NULL after out->error().
  void* (*setup)(int argc, const char* const* argv, redflow_spits_out* out);
  int (*generate_task)(void* job, redflow_spits_out* task);
  int (*execute_task)(void* job, const void* task, size_t task_size, redflow_spits_out* result);
  int (*commit_task)(void* job, const void* task, size_t task_size, const void* result, size_t result_size,
                     redflow_spits_out* out);
  // completed: 1 when every phase finished, 0 when the job stops on an error.
  // Frees the job's state either way.
  int (*teardown)(void* job, int completed, redflow_spits_out* out);
  // Optional (NULL: one phase). Runs phases in sequence with runner->run_phase.
  int (*main)(void* job, const redflow_spits_runner* runner, redflow_spits_out* out);
  // Optional (NULL: such a task is committed again). After a Job Manager was
  // killed between commit_task and its log record, the log holds the task
  // "in doubt"; the runtime asks here: 1 if the job's output already holds
  // it (the runtime then skips it), 0 if not.
  int (*was_committed)(void* job, const void* task, size_t task_size);
} redflow_spits_job;

typedef const redflow_spits_job* (*redflow_spits_entry_point)(void);

#ifdef __cplusplus
}  // extern "C"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "redflow/cluster.hpp"
#include "redflow/status.hpp"

namespace redflow::spits {

struct Report;  // below

// How the embedded runtime runs a job: W Workers in each of `task_managers`
// in-process Task Managers (so 1, 2, 5 Task Managers work as they will when
// remote), each with a queue of workers + prefetch tasks.
struct Options {
  unsigned task_managers = 1;
  unsigned workers = 1;                 // per Task Manager
  unsigned prefetch = 0;                // 0: adaptive, from max(workers, 4) up to 1024 for ~10 ms of queued work
  unsigned strikes = 3;                 // failures before a task is poisoned
  std::string log_path;                 // empty: no commit log
  // Over the network (docs/spits.md, "Over the network"), with either or
  // both of cluster.listen and announce_dir; task_managers (embedded ones)
  // may then be 0. Task Managers join whenever they come, mid-job too.
  // Dial-in: `redflow worker --connect ADDR` processes connect at
  // cluster.listen and are WELCOMEd as Task Managers with the job (its
  // plugin's path, which must exist on their machines too).
  // cluster.min_workers: Task Managers to wait for (within cluster.wait_s)
  // before the first phase; cluster.wait_s is also how long the job may go
  // without any live Task Manager before it fails (default here: 60 s). A
  // Task Manager silent for cluster.heartbeat_timeout_s is lost and its
  // tasks go back to the queue. cluster.key_file is also this Job Manager's
  // client key towards announced Task Managers that require keys.
  redflow::ClusterOptions cluster = {.wait_s = 60};
  // Announce list: Task Manager processes (`redflow spits-worker`) listen
  // and announce themselves in this directory; the Job Manager connects.
  std::string announce_dir;
  // Record each task's time on each Task Manager for Report::trace (--trace;
  // seen with to_chrome_trace(report), visualize.hpp).
  bool trace = false;
  // Called on the Job Manager thread after each batch of commits, with the
  // report so far: tasks generated and committed, and every Task Manager
  // that joined with its counts, its time per task and its losses (the rest
  // of the report comes at the end). It runs on the Job Manager's thread:
  // keep it short (the progress line and the dashboard take a few numbers).
  std::function<void(const Report& so_far)> on_progress;
};

struct PoisonedTask {
  std::uint64_t id = 0;
  unsigned strikes = 0;
  std::string last_error;
  std::string preview;  // the task's first bytes, hex
};

struct TaskManagerCounts {
  std::string name;
  std::string host;             // where it ran ("" for embedded ones)
  unsigned workers = 0;
  std::uint64_t lost = 0;       // times it was declared lost (silent, cut off, dead)
  std::uint64_t late = 0;       // results it delivered after coming back, of tasks taken from it when it was lost
  std::uint64_t pushed = 0;     // tasks pushed into its queue
  std::uint64_t results = 0;    // results pulled from it (committed or discarded)
  std::uint64_t committed = 0;  // of those, committed
  std::uint64_t failed = 0;     // strikes it reported
  double task_s = 0;            // its Workers' mean time per task inside execute_task, over the tasks executed (0: none yet)
};

// One stay of a task on a Task Manager, as the Job Manager saw it: pushed
// at start_s, its result (or loss) back at end_s (seconds from the job's start).
struct TracedTask {
  enum class Outcome : std::uint8_t { kCommitted, kDuplicate, kFailed, kLost, kReturned };
  std::uint64_t id = 0;
  std::uint32_t task_manager = 0;  // index into Report::task_managers
  double start_s = 0, end_s = 0;
  Outcome outcome = Outcome::kCommitted;
};

struct Report {
  std::string job;
  unsigned phases = 0;
  std::uint64_t generated = 0;       // tasks generate_task returned (this run)
  std::uint64_t committed = 0;       // committed in this run
  std::uint64_t resubmissions = 0;   // pushes of a task already pushed before
  std::uint64_t duplicates = 0;      // results of already committed tasks, discarded
  std::uint64_t strikes = 0;         // failed executions
  std::uint64_t from_log = 0;        // skipped: committed (or poisoned) before, per the log
  std::uint64_t in_doubt = 0;        // in the log as begun, not finished
  std::uint64_t in_doubt_recommitted = 0;
  std::uint64_t torn_log_bytes = 0;  // torn tail found in the log and ignored
  double seconds = 0;
  std::vector<PoisonedTask> poisoned;
  std::vector<TaskManagerCounts> task_managers;
  std::vector<TracedTask> trace;     // with Options::trace: at most kMaxTracedTasks stays
  bool trace_truncated = false;      // more stays than that happened
  static constexpr std::size_t kMaxTracedTasks = 200000;
};

// Loads JOB.so, runs it to the end with embedded Task Managers, and reports.
// Errors name the plugin and what failed ("job 'x.so': generate_task failed
// at task 7: disk full").
Result<Report> run_job(const std::string& plugin_path, const std::vector<std::string>& job_args, const Options& options);

}  // namespace redflow::spits
#endif

// JobDriver: a job's driver process, the one-shot command itself. The server
// runs a job as `redflow run|spits|stream|rem ARGS` started in the submitter's
// directory, with the server's cluster flags added (--listen on the workers'
// endpoint, --min-workers, keys, --report-json, and for SPITS a --log in the
// journal directory; a REM job only --report-json), so a job's flags, outputs, errors and exit status are
// exactly those of the one-shot command, and a driver that crashes or is
// cancelled takes nothing of the server with it. The driver dies with the
// server (PR_SET_PDEATHSIG): a server killed with -9 leaves no driver
// holding the workers.
//
// Thread-safety: one thread owns a JobDriver.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "redflow/cluster.hpp"
#include "redflow/status.hpp"

namespace redflow::server {

// Whether a model's job runs on the server's workers: `run`, `spits` and
// `stream` drivers do; a `rem` job runs its own scheduler processes (--procs)
// over its store, which is where they meet.
bool on_workers(const std::string& model);

// The flags a submitted job may not give: the server gives them.
// "submit: --listen is the server's ..." for the first one found, an
// unknown model word, or an empty list.
Status check_job_words(const std::vector<std::string>& args);

struct DriverFiles {
  std::string log;          // its stdout and stderr
  std::string report_json;  // its RunReport
  std::string commit_log;   // a SPITS job's --log, unless it gives one
  std::string resume;       // a graph job's --resume-file, unless it gives one: its completed executions
};
DriverFiles driver_files(const std::string& dir, std::uint64_t id);

// The driver's full command line: `exe`, the model word, the server's flags, the job's other words.
std::vector<std::string> driver_argv(const std::string& exe, const std::vector<std::string>& args, const ClusterOptions& cluster,
                                     const DriverFiles& files);

class JobDriver {
 public:
  // Starts `argv` in `cwd`, its output appended to `log`. (The server runs
  // its batch-system commands, sbatch and the like, the same way.)
  static Result<JobDriver> start(const std::vector<std::string>& argv, const std::string& cwd, const std::string& log);
  JobDriver() = default;

  // Asks it to stop (SIGTERM), and kills it (SIGKILL) `grace_s` later if it has not.
  void stop(double grace_s);
  // Non-blocking: true once it ended, with `exit_status` the command's
  // status (128 + N after signal N) and `message` what went wrong ("" on 0).
  bool ended(int& exit_status, std::string& message);

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string log_;
  std::chrono::steady_clock::time_point kill_at_ = std::chrono::steady_clock::time_point::max();
};

}  // namespace redflow::server

// SlurmAllocations: the effects of the server's Allocator (allocator.hpp)
// on a real Slurm: `sbatch` to ask for an allocation of workers, `squeue` to
// see what Slurm has of them, `scancel` to take one back. Each command is a
// child process (JobDriver) the server's loop polls, one at a time and each
// bounded in time, so a slow or unreachable slurmctld never stalls the
// server: requests wait, jobs and clients are served.
//
// An allocation runs the batch script written at open() (DIR/slurm-workers.sh):
// `srun` starts one `redflow worker --connect ENDPOINT --persist
// --idle-timeout IDLE` per task, named HOST:PID/slurm-JOBID so the server
// knows which allocation each came from. A worker idle for IDLE seconds
// leaves; when the last has, the allocation ends: Slurm gets its nodes back.
// Every allocation has the job name redflow-workers-HASH (a hash of the
// workers' endpoint), so a server restarted on the same journal (the same
// endpoint) finds its predecessor's allocations with squeue and adopts them.
// A server stopped (SIGTERM) cancels the allocations still in the queue.
//
// Thread-safety: none; the server's one thread owns it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "redflow/status.hpp"
#include "server/allocator.hpp"
#include "server/job_driver.hpp"

namespace redflow::server {

struct SlurmOptions {
  AllocatorOptions allocator = {};  // max_workers 0: the server asks Slurm for nothing
  // Each worker's --idle-timeout: how long it waits for a job before leaving.
  double worker_idle_s = 60;
  // More sbatch arguments (--partition=..., --time=..., --account=...).
  std::vector<std::string> sbatch_args = {};
  // Beyond loopback: each worker's key is KEY_DIR/HOST.key, and the server's
  // public key is its --key with .key replaced by .pub (docs/security.md).
  std::string key_dir = {};
  // How often squeue is asked, and how long any one command may take.
  double poll_s = 2;
  double command_timeout_s = 30;
};

// The job name of a server's allocations: redflow-workers-HASH of its workers' endpoint.
std::string allocation_job_name(const std::string& workers_endpoint);

class SlurmAllocations {
 public:
  // Finds sbatch, squeue and scancel on PATH and writes the batch script
  // into `dir`. `exe`: the redflow executable the workers run; `endpoint`:
  // where they connect; `server_key_file`: the server's --key ("" without keys).
  static Result<std::unique_ptr<SlurmAllocations>> open(const SlurmOptions& options, const std::string& dir, const std::string& exe,
                                                        const std::string& endpoint, const std::string& server_key_file);
  ~SlurmAllocations();

  // One step, `now_s` seconds into the server's life: takes the result of
  // the command that ended, then starts the next one due. `wanted`: the
  // workers the jobs want beyond the idle and returning ones; `workers`:
  // the names of the workers at the server now.
  void tick(std::size_t wanted, const std::vector<std::string>& workers, double now_s);

  // The server is stopping: waits for a command in flight (an sbatch may
  // already have made an allocation), lists what Slurm has of this server's
  // allocations, and cancels those still waiting in the queue (running ones
  // end with their idle workers, or serve the server started again on the
  // same journal). Each command is waited for at most the command timeout.
  void stop(double now_s);

  const Allocator& allocator() const { return allocator_; }

 private:
  enum class Kind { kList, kAsk, kCancel };
  SlurmAllocations(const SlurmOptions& options, std::string dir) : o_(options), dir_(std::move(dir)), allocator_(options.allocator) {}
  void start(Kind kind, std::vector<std::string> argv, double now_s);
  void finish(int exit_status, const std::string& message, double now_s);

  SlurmOptions o_;
  std::string dir_, script_, job_name_;
  std::string sbatch_, squeue_, scancel_;
  Allocator allocator_;
  struct Command {
    Kind kind;
    JobDriver process;
    std::string output;
    double deadline_s;
    std::vector<std::string> ids;  // scancel's
  };
  std::optional<Command> command_;
  double next_list_s_ = 0;
};

}  // namespace redflow::server

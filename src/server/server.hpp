// run_server: the loop of `redflow server` (docs/server.md). It binds the
// client endpoint (a ROUTER, loopback only) and the workers' endpoint (a
// WorkerPool, where `redflow worker --connect ENDPOINT --persist` processes
// wait for jobs), keeps the JobTable, writes the Journal, and starts every
// job the table's policy lets start as a JobDriver on a port of its own,
// sending it the idle workers it asked for. With ServerOptions::slurm it
// asks Slurm for workers when jobs wait for them (allocator.hpp). Requests
// are answered at once, except a wait, answered when its job ends.
//
// Thread-safety: run_server runs on the calling thread; `stop` may be set
// from any thread (or a signal handler).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "redflow/client.hpp"
#include "redflow/cluster.hpp"
#include "redflow/status.hpp"
#include "server/slurm_allocations.hpp"

namespace redflow::server {

// The server as a live view shows it (ServerOptions::on_state).
struct ServerState {
  std::vector<JobInfo> jobs;         // every job, in submission order
  std::vector<std::string> workers;  // "NAME on HOST" of every worker the server knows: idle, sent, serving a job
  std::vector<std::string> idle;     // of those, the ones waiting at the server for a job
};

struct ServerOptions {
  // How the workers meet the server and each job's driver: listen (tcp; a
  // port of "*" is chosen once and kept, in the journal too; each job's
  // driver listens on another port of the same host), min_workers (the
  // workers a job runs on unless it asks otherwise), wait_s (how long a
  // driver waits for its workers), heartbeat_timeout_s, keys.
  ClusterOptions cluster;
  // Where clients connect: loopback only. Default: a free port.
  std::string client_listen = "tcp://127.0.0.1:*";
  // Written once listening: line 1 the client endpoint, line 2 the workers'.
  std::string server_file;
  // The journal directory; empty: a fresh temporary directory for the job
  // files, and no journal.
  std::string journal_dir;
  // The redflow executable that runs each job's driver.
  std::string exe;
  // Workers from Slurm when jobs wait (max_workers 0: none): slurm_allocations.hpp.
  SlurmOptions slurm;
  // Seconds a cancelled driver has after SIGTERM before SIGKILL.
  double stop_grace_s = 2;
  // Called once listening: (client endpoint, workers endpoint).
  std::function<void(const std::string&, const std::string&)> on_listening;
  // Called from the server's loop with its jobs and workers: once listening,
  // then every kStatePeriodS while anything changed (`redflow server
  // --dashboard`). Never from a request's path: a client waits for nothing.
  std::function<void(const ServerState&)> on_state;
  static constexpr double kStatePeriodS = 0.2;
};

// The options' own mistakes (a usage error for the command): no
// --min-workers, a listen address that is not tcp, clients off loopback.
Status check_server_options(const ServerOptions& options);
// Serves until `stop` is set; checks the options first.
Status run_server(const ServerOptions& options, const std::atomic<bool>& stop);

}  // namespace redflow::server

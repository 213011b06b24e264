// A Task Manager process (`redflow spits-worker JOB.so --announce-dir DIR`): W
// Worker threads (a LocalTaskManager) behind a listening socket, as in
// PY-PITS, where Task Managers are the servers and the Job Manager finds them
// through the announce list (announce.hpp) and connects.
//
// It serves one Job Manager at a time. The first HELLO sets the job up
// (setup with the Job Manager's args) and is WELCOMEd; tasks come in batches
// (REQUEST, acknowledged) and results go back in batches (REPLY) that it keeps
// until the Job Manager acknowledges them. So when the link drops and the
// same Job Manager comes back (a HELLO with the same incarnation), it
// re-sends what it kept: results computed while cut off still commit. A HELLO
// from another Job Manager (a restart from its commit log) is taken once the
// first has been silent past the heartbeat timeout; what was queued for the
// old one is dropped. It ends on the Job Manager's BYE (the job is over), or
// with an error when no Job Manager came within `wait_s` or the one it serves
// stayed silent for `linger_s`.
#pragma once

#include <functional>
#include <string>

#include "net/security.hpp"
#include "redflow/status.hpp"

namespace redflow::spits {

struct TaskManagerProcessOptions {
  std::string plugin;                       // the job's .so (the same as the Job Manager's)
  std::string announce_dir;                 // where it announces itself
  std::string listen = "tcp://127.0.0.1:*";
  std::string name;                         // empty: host-pid
  unsigned workers = 1;
  unsigned prefetch = 0;                    // 0: adaptive (LocalTaskManager)
  double wait_s = 300;                      // for a first HELLO
  double linger_s = 60;                     // keeps results for a silent Job Manager this long
  net::SecurityOptions security = {};       // its key pair, and the Job Managers' public keys (--authorized-keys)
  std::function<void(const std::string& endpoint)> on_listening = {};  // tests: where it bound
};

// Serves until BYE (Ok) or an error that says why it stopped.
Status run_task_manager(const TaskManagerProcessOptions& options);

}  // namespace redflow::spits

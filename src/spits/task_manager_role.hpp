// The SPITS Task Manager role of a worker (`redflow worker --connect ADDR`
// to a `redflow spits JOB.so --listen ADDR`): the Job Manager's WELCOME
// names the job (a JobWelcome in its `service` bytes: the plugin's path, the
// job's name and args). The role loads the plugin, sets the job up with the
// args and runs `cores` Workers (a TaskManagerWork) until the Job Manager's
// BYE; then the job's teardown runs here and the Workers stop.
//
// The plugin's path must exist on the worker's machine (a shared file
// system, as with `--lib`): a path it cannot open ends the session with an
// error naming it (the session says BYE; the Job Manager loses this Task
// Manager and goes on with the others). Plugins stay loaded by path across
// sessions, so a persistent worker serves the same job again without
// loading it twice.
//
// A dial-in Task Manager's heartbeats carry the last task batch it took: a
// batch acknowledged by neither ACK nor heartbeat never reached it. Results
// are kept until acknowledged, as with the announce list; a Task Manager the
// Job Manager declared lost is told BYE and, with `--persist`, comes back
// as a fresh one (its tasks were re-queued).
//
// Thread-safety: called on the session's thread; the Workers are the
// service's own threads.
#pragma once

#include <memory>
#include <string>

#include "net/security.hpp"
#include "net/worker_session.hpp"
#include "redflow/status.hpp"

namespace redflow::spits {

std::unique_ptr<net::WorkerRole> make_task_manager_role(unsigned cores);

struct DialInTaskManagerOptions {
  net::DriverAddress driver;        // the Job Manager's endpoint (and public key, from its address file)
  net::SecurityOptions security{};  // this Task Manager's key file (none: plain text)
  std::string name;                 // empty: host:pid
  unsigned workers = 1;             // its Workers
  double connect_timeout_s = 30;    // for the WELCOME
};

// A session that offers only this role, for one Job Manager: a later starter
// of `redflow spits --address-file FILE` (the first one drives), and
// `redflow spits-worker --address-file FILE`. Ok after the Job Manager's BYE.
Status serve_job_manager(const DialInTaskManagerOptions& options);

}  // namespace redflow::spits

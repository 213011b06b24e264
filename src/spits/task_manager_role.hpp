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

#include "net/worker_session.hpp"

namespace redflow::spits {

std::unique_ptr<net::WorkerRole> make_task_manager_role(unsigned cores);

}  // namespace redflow::spits

// One redflow worker: a process (or a thread of an application that embeds
// redflow) that connects to a driver and serves whichever role the driver
// names: a remote tile of a graph run (`redflow run --listen`), a node of a
// stream program (`redflow stream --listen`) or a SPITS Task Manager
// (`redflow spits --listen`). `redflow worker` is this function behind a
// command line (docs/remote.md, "One worker for every model").
//
//   redflow::WorkerOptions options;
//   options.connect = "tcp://127.0.0.1:5555";
//   options.persist = true;                       // serve driver after driver
//   redflow::Registry actors = redflow::Registry::with_builtins();
//   actors.add("my_actor", ...);                  // what its tiles can run
//   redflow::Status s = redflow::run_worker(options, actors);
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "redflow/registry.hpp"
#include "redflow/status.hpp"
#include "redflow/stream.hpp"

namespace redflow {

struct WorkerOptions {
  // --- Where the driver is: exactly one of the two.
  std::string connect;       // its endpoint, tcp://HOST:PORT
  std::string address_file;  // the file a driver published (read again for every driver)

  // --- What this worker has.
  unsigned cores = 1;                             // a tile's ctx.parallel_for width, a node's pool threads, a Task Manager's Workers
  unsigned slots = 16;                            // a tile's memory: this many slots...
  std::size_t slot_bytes = std::size_t{8} << 20;  // ...of this many bytes (at least the driver's --slots/--slot-bytes)
  std::string name;                               // how drivers name it in logs and reports (default: HOST:PID)

  // --- Keys (docs/security.md; none: plain text, loopback only).
  std::string key_file;         // its secret key (redflow keygen)
  std::string server_key_file;  // the driver's public key (with address_file: the one it published)

  // --- Its life.
  double connect_timeout_s = 30;  // for each driver's WELCOME (and, with address_file, for the file)
  bool persist = false;           // after a driver's BYE, wait for the next one (default: serve one driver)
  // Waiting at a `redflow server` for a job (whose heartbeats keep it
  // waiting past connect_timeout_s), end after this long with none, with
  // success: a batch allocation given back when idle. 0: wait as long as
  // the server is there.
  double idle_timeout_s = 0;
  // Called with the role ("tile", "stream node", "task manager") and id of
  // each WELCOME, on the worker's thread (a log, a test).
  std::function<void(const std::string& role, unsigned id)> on_welcome = {};
};

// Serves drivers until the last one said BYE (Ok), or an error says why it
// stopped: refused, no driver within connect_timeout_s, a driver gone
// silent. Its tiles run `actors`; its stream nodes run `operators`.
Status run_worker(const WorkerOptions& options, const Registry& actors,
                  const stream::OperatorRegistry& operators = stream::OperatorRegistry::with_builtins());

}  // namespace redflow

// ClusterOptions: how a driver meets its worker processes, the same for every
// model that runs over them (docs/remote.md): a graph run's remote tiles
// (RuntimeOptions::cluster), a stream program's nodes
// (stream::ClusterOptions::cluster) and a SPITS job's dial-in Task Managers
// (spits::Options::cluster). Workers are `redflow worker --connect ADDR`
// processes, or run_worker() inside an application (worker.hpp).
//
//   redflow::RuntimeOptions o;
//   o.cluster.listen = "tcp://127.0.0.1:*";   // a free port, told to on_listening
//   o.cluster.min_workers = 2;                // wait for two workers before the first run
//   o.cluster.on_listening = [](const std::string& endpoint) { /* start workers that connect there */ };
//
// A plain struct: copy it, fill it on one thread, hand it to a model.
#pragma once

#include <functional>
#include <string>

#include "redflow/status.hpp"

namespace redflow {

struct ClusterOptions {
  // --- Where workers connect.

  // The ZeroMQ endpoint the driver binds, e.g. "tcp://127.0.0.1:*" (a free
  // port: on_listening tells which). Anything but loopback (127.x, ::1,
  // localhost, ipc://, inproc://) needs both key files below.
  // Default: empty, no workers (a graph runs on local tiles only); a stream
  // program's run_cluster() defaults to "tcp://127.0.0.1:*".
  std::string listen = {};

  // --- Keys (docs/security.md).

  // The driver's secret key file (redflow keygen) and the authorized-keys
  // file listing the workers' public keys it lets in: with both, every link
  // is CURVE-encrypted and any other peer is refused and logged. With
  // `listen`, one without the other is an error. Default: none, plain text
  // on loopback only. (A SPITS Job Manager also uses key_file as its client
  // key towards announced Task Managers that require keys.)
  std::string key_file = {};
  std::string authorized_keys_file = {};

  // --- Workers.

  // Workers to wait for (within wait_s) before the first run: a graph run's
  // remote tiles, a stream program's nodes, a SPITS job's Task Managers.
  // Default: 0. A graph run with `listen` needs at least 1; run_cluster()
  // defaults to 1 (a stream node each); a SPITS job with `listen` given 0
  // starts at once with its embedded Task Managers.
  unsigned min_workers = 0;
  // Graph runs: workers in all, min_workers included; the ones beyond may
  // join at any time, mid-run too (docs/remote.md, "Joins"), and one more is
  // refused. Default: 0, meaning min_workers + 8. SPITS Task Managers join
  // without a limit; a stream program uses min_workers nodes exactly.
  unsigned max_workers = 0;
  // Seconds to wait for min_workers workers; for SPITS also how long a job
  // may go without any live Task Manager before it fails. Default: 30 (a
  // SPITS job's Options set 60).
  double wait_s = 30;
  // Seconds of silence after which a worker is lost: a graph run re-runs its
  // work elsewhere, a SPITS job re-queues its tasks, a stream program fails
  // naming it (its operators hold state). Default: 2.
  double heartbeat_timeout_s = 2;

  // Called with the bound endpoint once the driver listens, before it waits
  // (how a caller that asked for port * learns which port to give workers).
  // On the caller's thread. Default: none.
  std::function<void(const std::string& endpoint)> on_listening = {};

  // The errors every model gives for these options before it binds anything:
  // a listen address that is not tcp://, ipc:// or inproc://, a non-loopback
  // address without both key files, one key file without the other,
  // max_workers below min_workers, and a wait or heartbeat timeout that is
  // not a positive number of seconds. Ok when `listen` is empty and nothing
  // else is set wrong.
  Status validate() const;
};

}  // namespace redflow

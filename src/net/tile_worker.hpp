// The tile role of a worker process: one tile in this process, served to a
// driver (`redflow run --listen`) over the worker session
// (worker_session.hpp). The session says HELLO (this role adds the slots, the
// actor functions of its Registry and its peer socket); WELCOMEd as a tile,
// it answers tile-protocol REQUESTs with a LocalTile on an executor thread
// while the session's thread keeps the socket and the heartbeat.
//
// Its heartbeats say up to which request it has answered everything
// (docs/remote.md, "Deadlines"). When the session ends with an actor still
// running (it cannot be stopped), that actor's thread is left to end with the
// process. A tile that dies (a crash-tile fault) ends the session, with BYE
// so that the driver loses the worker at once instead of waiting out its
// silence. A driver never takes a lost worker back (tile_server.hpp): a
// worker started with `--persist` (or a supervisor restarting it) is the way
// to bring a tile back for the next run.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "net/security.hpp"
#include "net/worker_session.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

struct TileRoleOptions {
  unsigned cores = 1;                             // the width of ctx.parallel_for
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
  // Where actor tables find their functions. Empty: the role's Registry (a
  // worker process). A worker in the driver's process (wire mode,
  // loopback_tiles.cpp) is handed the registry of the driver's graph before
  // each table, and reads it here when the table comes; it keeps it until
  // the next table.
  std::function<std::shared_ptr<const Registry>()> tables = {};
  // The session's end waits for an actor still running instead of leaving
  // it to end with the process: a worker in the driver's process, whose
  // process does not end with it.
  bool wait_for_running_actor = false;
};

// The tile role, for a WorkerSession. `registry` outlives it; `origin` names
// where its functions came from, for their versions in HELLO.
std::unique_ptr<WorkerRole> make_tile_role(const TileRoleOptions& options, const Registry& registry, std::string_view origin);

struct TileWorkerOptions {
  std::string connect;                            // the driver's endpoint, e.g. tcp://127.0.0.1:5555
  unsigned cores = 1;
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::string name;                               // empty: host:pid
  double connect_timeout_s = 30;                  // for the WELCOME
  SecurityOptions security = {};                  // its key pair and the driver's public key (none: plain text)
};

// A session that offers only the tile role, for one driver: serves until BYE
// (Ok) or an error that says why it stopped (a rank of `mpirun redflow run`).
Status run_tile_worker(const TileWorkerOptions& options, const Registry& registry, std::string_view origin);

}  // namespace redflow::net

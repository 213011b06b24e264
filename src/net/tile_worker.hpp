// The worker process's loop (`redflow tile --connect ADDR`): one tile in this
// process, served to a driver over ZeroMQ. It says HELLO (who it is, what
// actor functions its Registry has), is WELCOMEd with a tile id or REFUSED,
// then answers tile-protocol REQUESTs with a LocalTile on an executor thread
// while its main thread keeps the socket and the heartbeat.
//
// It ends: on the driver's BYE (Ok); when REFUSED (the reason); when the
// driver has been silent past the heartbeat timeout WELCOME gave, or no
// WELCOME came within connect_timeout_s (an error). An actor still running
// then is not waited for (it cannot be stopped): its thread is left to end
// with the process. Its heartbeats say up to which request it has answered
// everything (docs/remote.md, "Deadlines"). It does not reconnect by
// itself: the driver never takes a lost worker back (tile_server.hpp), so a
// supervisor restarting `redflow tile` is the way to bring a tile back for
// the next run.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "net/security.hpp"
#include "redflow/registry.hpp"
#include "redflow/status.hpp"

namespace redflow::net {

struct TileWorkerOptions {
  std::string connect;                            // the driver's endpoint, e.g. tcp://127.0.0.1:5555
  unsigned cores = 1;
  unsigned slots = 16;
  std::size_t slot_bytes = std::size_t{8} << 20;
  std::string name;                               // empty: host:pid
  double connect_timeout_s = 30;                  // for the WELCOME
  SecurityOptions security = {};                  // its key pair and the driver's public key (none: plain text)
};

// Serves until BYE (Ok) or an error that says why it stopped. `origin` names
// where the registry's functions came from, for their versions in HELLO.
Status run_tile_worker(const TileWorkerOptions& options, const Registry& registry, std::string_view origin);

}  // namespace redflow::net

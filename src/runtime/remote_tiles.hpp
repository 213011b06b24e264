// RemoteTiles: where an engine's remote tiles come from (ClusterOptions::listen),
// and WorkerTile: a tile in a worker process as the engine holds it. The
// runtime declares what it needs from them and does not know how workers are
// reached: src/net implements both over its tile server (net/server_tiles.cpp
// defines listen_for_tiles()), and the build checks that no file of
// src/runtime includes src/net (cmake/check_layers.cmake). An Engine is
// given its factory when it is made; Runtime gives it listen_for_tiles(), or
// in wire mode serve_tiles_in_process().
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "redflow/cluster.hpp"
#include "redflow/graph.hpp"
#include "redflow/status.hpp"
#include "runtime/tile.hpp"

namespace redflow::runtime {

// What the engine asks of the place workers connect to: the run's
// ClusterOptions as the user gave them, and what only a graph run's tiles need.
struct RemoteTilesOptions {
  // Read here: listen (the endpoint to bind), min_workers (how many
  // wait_for_workers() waits for), heartbeat_timeout_s (the silence after
  // which a worker is lost), key_file and authorized_keys_file (docs/remote.md;
  // none: plain text, loopback only). on_listening is the engine's to call.
  ClusterOptions cluster = {.min_workers = 1};
  unsigned capacity = 0;               // how many it welcomes in all: cluster.min_workers and the places kept for joins
  unsigned first_tile = 0;             // tile id of the first worker welcomed
  // Called on the I/O thread, under its lock, when a worker beyond the first
  // cluster.min_workers is welcomed (its 0-based index): it must only note it.
  std::function<void(unsigned worker)> on_join = {};
  unsigned slots = 2;                  // a worker must have at least these slots...
  std::size_t slot_bytes = 1;          // ...of at least these bytes (the driver plans with them)
  unsigned cores = 1;                  // serve_tiles_in_process(): each worker's ctx.parallel_for width
};

// What a worker said of itself when it came (its HELLO).
struct RemoteWorker {
  std::string name;                    // --name, or host:pid
  std::string host;
  std::vector<std::string> functions;  // the actor functions its registry has
  // A worker in the driver's process (serve_tiles_in_process()): it resolves
  // each actor table in the registry the driver loaded the graph with, so it
  // has every function `functions` does not list.
  bool driver_registry = false;
};

// A worker's traffic over the source's life (ExecutionStats' per-tile bytes).
struct RemoteTraffic {
  std::uint64_t bytes_sent = 0;        // driver -> worker
  std::uint64_t bytes_received = 0;    // worker -> driver
};

// The counts of ExecutionStats that the transport keeps.
struct RemoteCounts {
  std::uint64_t late_messages = 0;     // replies nobody waited for any more (a lost worker's)
  std::uint64_t refused_messages = 0;  // malformed, oversized, from strangers
  std::uint64_t batched_messages = 0;  // requests and replies that travelled in a batch
};

// A tile in a worker process. Beyond Tile, what the engine asks of it when a
// worker joins and when it reports; called by the engine's threads as Tile is.
class WorkerTile : public Tile {
 public:
  // The worker for this place has come (a join): read what its HELLO said.
  virtual void attach() = 0;
  virtual const std::string& name() const = 0;  // the worker's name, for logs and marks
  // false: every transfer relays through the driver (RuntimeOptions::peer_transfers).
  virtual void set_peer_transfers(bool on) = 0;
  // Bytes fetched straight from another worker since the last call.
  virtual std::uint64_t take_peer_bytes_in() = 0;
  // The end-to-end check: values to or from this worker whose bytes did not
  // match their checksum since the last call (each was fetched again, placed
  // again or recomputed), with the data node of each.
  struct Corrupted {
    DataId data = 0;
    std::chrono::steady_clock::time_point when;
  };
  virtual std::vector<Corrupted> take_corrupted() = 0;
};

// The workers of one engine: binds, welcomes and keeps them, and makes a
// WorkerTile for each place. Its methods are safe from any thread; the tiles
// it made must be destroyed before it.
class RemoteTiles {
 public:
  virtual ~RemoteTiles() = default;
  virtual const std::string& endpoint() const = 0;  // where workers connect (the port resolved)
  // Waits until RemoteTilesOptions::cluster.min_workers workers are welcomed; an error
  // naming the wait when they are not there within `timeout_s`.
  virtual Status wait_for_workers(double timeout_s) = 0;
  virtual unsigned welcomed() const = 0;            // workers welcomed so far
  virtual bool lost(unsigned worker) const = 0;
  // Tells worker `worker` why it cannot serve (it exits naming it), and loses it.
  virtual void refuse(unsigned worker, const std::string& why) = 0;
  virtual RemoteWorker worker(unsigned worker) const = 0;  // empty before it came
  virtual RemoteTraffic traffic(unsigned worker) const = 0;
  virtual RemoteCounts counts() const = 0;
  // The tile of place `worker` (0-based; it may not have come yet: the tile
  // is lost() until it does, and WorkerTile::attach() then reads its HELLO),
  // with tile id `index`, keeping up to `pipeline_depth` actor messages on the wire.
  virtual std::unique_ptr<WorkerTile> make_tile(unsigned worker, unsigned index, unsigned pipeline_depth) = 0;
};

using RemoteTilesFactory = std::function<Result<std::unique_ptr<RemoteTiles>>(const RemoteTilesOptions&)>;

// Binds RemoteTilesOptions::cluster.listen and serves workers over the tile protocol
// (src/net). Defined in src/net, so the runtime reaches the network only at link time.
Result<std::unique_ptr<RemoteTiles>> listen_for_tiles(const RemoteTilesOptions& options);

// Wire mode (RuntimeOptions::tile_transport): listen_for_tiles() on
// RemoteTilesOptions::cluster.listen (a loopback endpoint), and
// RemoteTilesOptions::cluster.min_workers threads of this process, each running the
// worker session and tile role a `redflow worker` process runs, dial in.
// Defined in src/net (net/loopback_tiles.cpp).
Result<std::unique_ptr<RemoteTiles>> serve_tiles_in_process(const RemoteTilesOptions& options);

}  // namespace redflow::runtime

// LoopbackTiles: the tiles of wire mode (RuntimeOptions::tile_transport =
// kWire, REDFLOW_TILE_TRANSPORT=wire), which serve_tiles_in_process() makes.
// The engine's tiles are remote tiles, and their workers are threads of this
// process that run the worker session and the tile role a `redflow worker`
// process runs (worker_session.hpp, tile_worker.hpp), dialling a tile server
// on the loopback interface. So a run in wire mode takes the path of a run
// with worker processes: RemoteTile, the TileServer and its TileHub, ZeroMQ
// over TCP, the session, the tile role's executor, TileService, LocalTile,
// and transfers between the workers' peer sockets; the engine takes its
// remote extensions (pipelining, deadlines, lost tiles, speculation).
//
// Two things differ from a worker process, both because the worker shares
// the driver's process:
//   - it has no registry of its own (its HELLO lists no function, and
//     RemoteWorker::driver_registry tells the engine it has them all): each
//     actor table is resolved in a copy of the registry the driver loaded the
//     graph with, handed over by the RemoteTile before it sends the table;
//   - the session's end waits for an actor still running, where a process
//     would leave it to end with the process.
// A tile that dies (crash-tile) ends its worker's session with BYE, as in a
// worker process, and the driver loses it at once.
//
// Thread-safety: as TileServer (every call goes to the server); the
// hand-over under a mutex, read by the workers' executor threads.
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/remote_tile.hpp"
#include "net/tile_worker.hpp"
#include "net/worker_session.hpp"
#include "runtime/remote_tiles.hpp"

namespace redflow::net {

namespace {

// The registry of the actor table the driver sends, copied once per table
// id. The engine configures one tile at a time and waits for its answer
// (Engine::configure_tiles), so the worker that reads it serves the table
// that was handed over last.
class HandedRegistry {
 public:
  void hand_over(std::uint32_t table, const Registry& registry) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (current_ && table == table_) return;
    current_ = std::make_shared<const Registry>(registry);
    table_ = table;
  }
  std::shared_ptr<const Registry> current() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const Registry> current_;
  std::uint32_t table_ = 0;
};

class LoopbackTiles final : public runtime::RemoteTiles {
 public:
  LoopbackTiles(std::unique_ptr<runtime::RemoteTiles> server, const runtime::RemoteTilesOptions& options)
      : server_(std::move(server)), ended_(options.cluster.min_workers) {
    // The endpoint is read here: the workers' threads never touch server_,
    // which the destructor resets before it joins them.
    for (unsigned i = 0; i < options.cluster.min_workers; ++i)
      threads_.emplace_back([this, i, options, endpoint = server_->endpoint()] { serve(i, options, endpoint); });
  }
  ~LoopbackTiles() override {
    server_.reset();  // BYE to every worker it still serves: their sessions end
    for (std::thread& t : threads_) t.join();
  }
  LoopbackTiles(const LoopbackTiles&) = delete;
  LoopbackTiles& operator=(const LoopbackTiles&) = delete;

  const std::string& endpoint() const override { return server_->endpoint(); }
  unsigned welcomed() const override { return server_->welcomed(); }
  bool lost(unsigned w) const override { return server_->lost(w); }
  void refuse(unsigned w, const std::string& why) override { server_->refuse(w, why); }
  runtime::RemoteTraffic traffic(unsigned w) const override { return server_->traffic(w); }
  runtime::RemoteCounts counts() const override { return server_->counts(); }

  runtime::RemoteWorker worker(unsigned w) const override {
    runtime::RemoteWorker out = server_->worker(w);
    out.driver_registry = true;
    return out;
  }

  // The server's wait, cut short by a worker whose session ended before it
  // was welcomed (with that worker's error, not a timeout).
  Status wait_for_workers(double timeout_s) override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
      Status s = server_->wait_for_workers(std::max(0.0, std::min(left, 0.05)));
      if (s.ok() || left <= 0) return s;
      std::lock_guard<std::mutex> lock(mutex_);
      for (unsigned i = 0; i < ended_.size(); ++i)
        if (ended_[i] && !ended_[i]->ok())
          return Status::IOError("in-process worker " + std::to_string(i) + " ended before the driver welcomed it: " + ended_[i]->ToString());
    }
  }

  std::unique_ptr<runtime::WorkerTile> make_tile(unsigned w, unsigned index, unsigned pipeline_depth) override {
    std::unique_ptr<runtime::WorkerTile> tile = server_->make_tile(w, index, pipeline_depth);
    // listen_for_tiles() makes RemoteTiles.
    if (auto* remote = dynamic_cast<RemoteTile*>(tile.get()))
      remote->set_hand_over([this](std::uint32_t table, const Registry& registry) { tables_.hand_over(table, registry); });
    return tile;
  }

 private:
  // Worker i's thread: one session with this driver, in the tile role.
  void serve(unsigned i, const runtime::RemoteTilesOptions& options, const std::string& endpoint) {
    WorkerSessionOptions session;
    session.driver = [endpoint]() -> Result<DriverAddress> { return DriverAddress{endpoint, {}}; };
    session.name = "in-process-" + std::to_string(i);
    session.cores = options.cores;
    WorkerSession worker(std::move(session));
    TileRoleOptions role;
    role.cores = options.cores;
    role.slots = options.slots;
    role.slot_bytes = options.slot_bytes;
    role.tables = [this] { return tables_.current(); };
    role.wait_for_running_actor = true;
    worker.add(make_tile_role(role, no_functions_, "in-process"));
    Status s = worker.run();
    std::lock_guard<std::mutex> lock(mutex_);
    ended_[i] = std::move(s);
  }

  std::unique_ptr<runtime::RemoteTiles> server_;
  HandedRegistry tables_;
  const Registry no_functions_{};  // the workers' own registry (HELLO): none
  std::mutex mutex_;
  std::vector<std::optional<Status>> ended_;  // per worker thread: how its session ended, once it has
  std::vector<std::thread> threads_;          // last: they use everything above
};

}  // namespace

}  // namespace redflow::net

namespace redflow::runtime {

Result<std::unique_ptr<RemoteTiles>> serve_tiles_in_process(const RemoteTilesOptions& options) {
  // One process, the loopback interface: plain text (keys are for workers elsewhere).
  RemoteTilesOptions o = options;
  o.cluster.key_file.clear();
  o.cluster.authorized_keys_file.clear();
  auto server = listen_for_tiles(o);
  if (!server.ok()) return server.status();
  return std::unique_ptr<RemoteTiles>(std::make_unique<net::LoopbackTiles>(std::move(*server), o));
}

}  // namespace redflow::runtime

// ServerTiles: the engine's remote tiles (runtime/remote_tiles.hpp) served by
// a TileServer, each place a RemoteTile. listen_for_tiles(), which the
// runtime declares and calls, is defined here: the runtime reaches the
// network through it at link time and never includes src/net.
#include <memory>
#include <string>

#include "net/remote_tile.hpp"
#include "net/tile_server.hpp"
#include "runtime/remote_tiles.hpp"

namespace redflow::net {

namespace {

// Thread-safe as TileServer is: every call goes to the server.
class ServerTiles final : public runtime::RemoteTiles {
 public:
  explicit ServerTiles(std::unique_ptr<TileServer> server) : server_(std::move(server)) {}

  const std::string& endpoint() const override { return server_->endpoint(); }
  Status wait_for_workers(double timeout_s) override { return server_->wait_for_workers(timeout_s); }
  unsigned welcomed() const override { return server_->welcomed(); }
  bool lost(unsigned w) const override { return server_->lost(w); }
  void refuse(unsigned w, const std::string& why) override { server_->refuse(w, why); }

  runtime::RemoteWorker worker(unsigned w) const override {
    HelloMessage hello = server_->hello(w);
    runtime::RemoteWorker out{std::move(hello.name), std::move(hello.host), {}, false};
    out.functions.reserve(hello.functions.size());
    for (ActorFunctionInfo& f : hello.functions) out.functions.push_back(std::move(f.name));
    return out;
  }

  runtime::RemoteTraffic traffic(unsigned w) const override {
    const WorkerTraffic t = server_->traffic(w);
    return runtime::RemoteTraffic{t.bytes_sent, t.bytes_received};
  }

  runtime::RemoteCounts counts() const override {
    const TileServerCounts c = server_->counts();
    return runtime::RemoteCounts{c.discarded_late, c.refused_messages, c.batched_requests + c.batched_replies};
  }

  std::unique_ptr<runtime::WorkerTile> make_tile(unsigned w, unsigned index, unsigned pipeline_depth) override {
    auto tile = std::make_unique<RemoteTile>(*server_, w, index);
    tile->set_pipeline_depth(pipeline_depth);
    return tile;
  }

 private:
  std::unique_ptr<TileServer> server_;
};

}  // namespace

}  // namespace redflow::net

namespace redflow::runtime {

Result<std::unique_ptr<RemoteTiles>> listen_for_tiles(const RemoteTilesOptions& options) {
  net::TileServerOptions so;
  so.listen = options.cluster.listen;
  so.workers = options.cluster.min_workers;
  so.capacity = options.capacity;
  so.first_tile = options.first_tile;
  so.on_join = options.on_join;
  so.heartbeat_timeout_s = options.cluster.heartbeat_timeout_s;
  so.slots = options.slots;
  so.slot_bytes = options.slot_bytes;
  so.security.key_file = options.cluster.key_file;
  so.security.authorized_keys_file = options.cluster.authorized_keys_file;
  auto server = net::TileServer::start(so);
  if (!server.ok()) return server.status();
  return std::unique_ptr<RemoteTiles>(std::make_unique<net::ServerTiles>(std::move(*server)));
}

}  // namespace redflow::runtime

// WireTile: a local tile reached only through the tile protocol's bytes, the
// proof that the driver needs nothing else (RuntimeOptions::tile_transport =
// kWire, --tile-transport wire, REDFLOW_TILE_TRANSPORT=wire). Every message is
// encoded, queued to the tile's own executor thread, decoded there and
// answered with an encoded frame; no other thread touches the LocalTile. A
// transfer from another tile is relayed: read from the source's executor,
// then sent along with the bytes. When the tile dies its executor answers
// `lost` to everything queued and stops; later calls are answered `lost` at
// once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/local_tile.hpp"
#include "runtime/tile_service.hpp"

namespace redflow::runtime {

class WireTile final : public Tile {
 public:
  explicit WireTile(std::unique_ptr<LocalTile> tile);
  ~WireTile() override;
  WireTile(const WireTile&) = delete;
  WireTile& operator=(const WireTile&) = delete;

  unsigned index() const override { return index_; }

  Status load_actors(const ActorTableMessage& table, const Registry& registry) override;
  Status configure_faults(const FaultConfigMessage& faults) override;
  Status data_node(const DataNodeMessage& message) override;
  void clear_slot(SlotId slot) override;
  void clear_all() override;
  Completion actor(const ActorMessage& message) override;
  bool read_slot(const ReadSlotMessage& message, std::span<std::byte> out) override;
  bool lost() const override { return lost_.load(std::memory_order_acquire); }
  // Framed as a worker's values are, so checked as theirs are: the wire
  // suites run the end-to-end check's bookkeeping (which checksum each
  // transfer carries) on every graph they run.
  bool checks_values() const override { return true; }

  // The tiles a transfer may name as its source (relayed through their executors).
  void set_peers(std::span<Tile* const> peers) override { peers_ = peers; }

  // Frames sent and answered so far (tests: the wire really carried the run).
  std::uint64_t frames() const { return frames_.load(std::memory_order_relaxed); }

 private:
  struct Request {
    std::vector<std::byte> frame;
    const Registry* registry = nullptr;  // kActorTable: the process's registry
    bool wants_reply = true;
    bool done = false;
    std::vector<std::byte> reply;
  };

  // Sends `frame` and waits for the answer (decoded into `out`); a lost tile answers kLost.
  Status call(std::vector<std::byte> frame, DecodedFrame& out, const Registry* registry = nullptr);
  void post(std::vector<std::byte> frame);  // no answer wanted (clears)
  void executor();
  void answer(Request& request, std::vector<std::byte> reply);
  void handle(Request& request);
  Status status_reply(const DecodedFrame& reply) const;

  std::unique_ptr<LocalTile> tile_;
  TileService service_;  // executor only
  unsigned index_;
  std::span<Tile* const> peers_;
  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable answered_;
  std::deque<std::shared_ptr<Request>> queue_;
  bool stop_ = false;
  bool exited_ = false;
  std::atomic<bool> lost_{false};
  std::atomic<std::uint64_t> frames_{0};
  std::thread thread_;
};

}  // namespace redflow::runtime

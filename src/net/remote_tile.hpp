// RemoteTile: a tile in a worker process (`redflow worker --connect`), held by
// the engine as a WorkerTile (runtime/remote_tiles.hpp), which ServerTiles
// (server_tiles.cpp) makes. Every message is encoded as a tile-protocol frame
// and sent through the TileServer; the worker answers with the same frames a
// WireTile's executor would. A transfer from another worker with a peer
// socket is fetched by this worker straight from that one (kPeerDataNode,
// peer_links.hpp); any other transfer is relayed through the driver: read
// from the source tile (local or remote), then sent along with the bytes.
// A worker the server declares lost makes every pending and later call
// answer `lost`, and the engine's lost-tile path takes over; an answer that
// cannot be read, or is not what was asked, makes the server declare it so.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <string>

#include "net/tile_server.hpp"
#include "runtime/remote_tiles.hpp"

namespace redflow::net {

class RemoteTile final : public runtime::WorkerTile {
 public:
  // `worker` may not have come yet (a place kept for a join): the tile is
  // lost() until it does, and attach() then reads what its HELLO said.
  RemoteTile(TileServer& server, unsigned worker, unsigned index);
  void attach() override;

  unsigned index() const override { return index_; }
  const std::string& name() const override { return name_; }

  // The worker resolves the table in its own registry; `registry` goes to
  // the hand-over, if there is one.
  Status load_actors(const runtime::ActorTableMessage& table, const Registry& registry) override;
  // A worker in this process (loopback_tiles.cpp) resolves tables in the
  // driver's registry: `hand_over` is given it, with the table's id, before
  // each table is sent. Set before the tile is used.
  using HandOver = std::function<void(std::uint32_t table, const Registry& registry)>;
  void set_hand_over(HandOver hand_over) { hand_over_ = std::move(hand_over); }
  Status configure_faults(const runtime::FaultConfigMessage& faults) override;
  Status data_node(const runtime::DataNodeMessage& message) override;
  void clear_slot(runtime::SlotId slot) override;
  void clear_all() override;
  runtime::Completion actor(const runtime::ActorMessage& message) override;
  bool read_slot(const runtime::ReadSlotMessage& message, std::span<std::byte> out) override;
  bool lost() const override;
  bool checks_values() const override { return true; }
  // Actor messages are pipelined: up to `depth` on the wire at once (the
  // worker's executor takes them in order), so dispatch is not one round
  // trip per actor. With depth > 1, data nodes are too, from main memory
  // and from other workers' slots alike: sent ahead of the actor that needs
  // them, their answers taken with its completion. A failed transfer from
  // main memory fails that completion; a fetch from a peer that no longer
  // held the value names its slot in Completion::missing_inputs (the worker
  // ran nothing), and the engine places that input again from main memory.
  unsigned pipeline_depth() const override { return depth_; }
  void send_actor(const runtime::ActorMessage& message) override;
  runtime::Completion next_completion() override;
  bool completion_within(double timeout_s) override;
  void abandon_completion() override;
  void bound_completion(std::size_t i, double seconds) override;
  void set_pipeline_depth(unsigned depth) { depth_ = depth < 1 ? 1 : depth; }

  void set_peers(std::span<runtime::Tile* const> peers) override { peers_ = peers; }
  void set_peer_transfers(bool on) override { peer_transfers_ = on; }
  // Bytes fetched straight from another worker since the last call (a
  // pipelined fetch counts from when it is sent until it fails, if it does).
  std::uint64_t take_peer_bytes_in() override { return peer_bytes_in_.exchange(0); }
  std::vector<Corrupted> take_corrupted() override;
  // A worker whose values arrive corrupted this many times in a row is lost:
  // a transient flip on the wire passes with one more try, a link or memory
  // that keeps flipping bits must not hold the run.
  static constexpr unsigned kCorruptedInARow = 3;

 private:
  // Sends `frame`, decodes the answer into `out`; a lost worker answers kLost.
  Status call(std::vector<std::byte> frame, runtime::DecodedFrame& out, runtime::WireKind expect = runtime::WireKind::kStatus);
  // The answer to a request, which must be a frame of kind `expect` (or
  // kLost); one that cannot be read, or of another kind, loses the worker
  // (TileServer::lose) and reads as kLost, so the engine re-runs its work.
  Status receive(TileServer::Ticket& ticket, runtime::DecodedFrame& out, runtime::WireKind expect);
  // Marks this tile lost and makes `out` the kLost answer.
  Status answered_lost(runtime::DecodedFrame& out);
  Status status_reply(const runtime::DecodedFrame& reply) const;
  std::string who() const;  // "tile N (worker 'NAME')", for errors
  // The source of a transfer this worker can fetch from itself (a live worker with a peer socket), or null.
  const RemoteTile* peer_source(const runtime::DataNodeMessage& message) const;
  Status fetch_from_peer(const runtime::DataNodeMessage& message, const RemoteTile& source);
  // A value larger than a chunk, from main memory, in pieces (kDataNodePiece);
  // `ahead`: sent ahead of the actor, answered with its completion; `hash`:
  // its checksum taken as the pieces go (else the message's is sent).
  Status send_in_pieces(const runtime::DataNodeMessage& message, bool ahead, bool hash);
  // Sends a value the driver holds (from main memory or relayed), checked;
  // a reply that the bytes arrived corrupted sends them again.
  // `hash_pieces`: a value in pieces is hashed as they go.
  Status send_value(const runtime::DataNodeMessage& message, bool hash_pieces);
  // Books a value that arrived corrupted (`what` says which and how); the
  // worker is lost once they come kCorruptedInARow times in a row.
  void corrupted(DataId data, const std::string& what);
  void checked_ok() { corrupted_in_a_row_.store(0, std::memory_order_relaxed); }
  // `checksum`, when not null: the XXH3-64 of the bytes read, taken as they come.
  bool read_once(const runtime::ReadSlotMessage& message, std::span<std::byte> out, std::uint64_t* checksum);
  // A transfer sent ahead of an actor message, not yet answered.
  struct Placement {
    TileServer::Ticket ticket;
    runtime::SlotId slot = 0;
    int source_worker = -1;  // a fetch from this worker's peer socket; -1: bytes from main memory
    std::uint64_t bytes = 0;
    DataId data = 0;
  };

  TileServer& server_;
  unsigned worker_;
  unsigned index_;
  std::size_t slot_bytes_;
  std::string name_;
  std::span<runtime::Tile* const> peers_;
  std::atomic<bool> lost_{false};
  bool peer_transfers_ = true;
  std::atomic<std::uint64_t> peer_bytes_in_{0};
  std::atomic<unsigned> corrupted_in_a_row_{0};
  std::mutex corrupted_mutex_;
  std::vector<Corrupted> corrupted_;  // since take_corrupted()
  unsigned depth_ = 1;
  HandOver hand_over_;
  struct Sent {
    TileServer::Ticket ticket;
    ActorId actor;
    std::vector<Placement> placements;  // data nodes sent just before it, unanswered
  };
  // Awaits the placements sent ahead of an actor: the first error of a
  // transfer from main memory, if any (one the engine would otherwise only
  // see as the actor reading a slot never filled); the slots of fetches
  // from peers that found no value go to `missing`.
  Status settle(std::vector<Placement>& placements, std::vector<runtime::SlotId>& missing);
  std::deque<Sent> sent_;  // actor messages whose completions next_completion() has not returned
  // Data nodes on the wire, not yet followed by an actor message.
  std::vector<Placement> placing_;
};

}  // namespace redflow::net

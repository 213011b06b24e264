// LocalTile: a compute tile inside this process: a block of fixed-size slots
// (its tile-local memory) and `cores` threads. The tile's first thread is its
// executor, the one that sends it messages (in direct mode the engine's runner
// thread for this tile, in wire mode WireTile's executor); the others only
// help with ActorContext's parallel loop. In direct mode the transport lets
// other threads read a slot concurrently (a tile pulling from a peer, the
// driver reading a value back), so a slot is pinned while it is read and
// clear_slot() waits for readers.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "runtime/tile.hpp"
#include "runtime/tile_loop.hpp"

namespace redflow::runtime {

}  // namespace redflow::runtime
namespace redflow::fault {
class FaultInjector;
}
namespace redflow::runtime {

class LocalTile final : public Tile {
 public:
  LocalTile(unsigned slots, std::size_t slot_bytes, unsigned cores, unsigned index = 0);
  ~LocalTile() override;
  LocalTile(const LocalTile&) = delete;
  LocalTile& operator=(const LocalTile&) = delete;

  unsigned index() const override { return index_; }
  unsigned slot_count() const { return static_cast<unsigned>(slots_.size()); }
  std::size_t slot_bytes() const { return slot_bytes_; }

  // The table's strings must outlive its use: the direct path shares the
  // plan's, WireTile's executor keeps the decoded frame.
  Status load_actors(const ActorTableMessage& table, const Registry& registry) override;
  Status configure_faults(const FaultConfigMessage& faults) override;
  Status data_node(const DataNodeMessage& message) override;
  // Writes `piece` at `offset` of data node `message` (its payload unused)
  // into its slot: the first piece (offset 0) clears the slot, the one that
  // ends the value publishes it. A worker's transport places a value
  // fetched from a peer in chunks so, as they come, in order, and the tile
  // service the pieces the driver sends (kDataNodePiece); a piece that does
  // not start at 0 or continue the one before is refused.
  Status write_piece(const DataNodeMessage& message, std::uint64_t offset, std::span<const std::byte> piece);
  void clear_slot(SlotId slot) override;
  // Empties a slot whose value no other thread can be reading: a dead value
  // (its last consumer is done) or one no other tile was ever told of. No
  // seq_cst store, no wait for readers; the fast path's clear_slot.
  void drop_slot(SlotId slot) { slots_[slot].tag.store(kEmpty, std::memory_order_release); }
  void clear_all() override;
  Completion actor(const ActorMessage& message) override;
  bool read_slot(const ReadSlotMessage& message, std::span<std::byte> out) override;
  // read_slot() without a buffer of the caller's: `use` sees the bytes the
  // message names where they lie, while the slot is pinned, when it holds
  // them (true). A reply frame is filled from it in one pass (no zeroed
  // buffer first).
  template <typename Use>
  bool with_slot(const ReadSlotMessage& m, Use&& use) {
    if (lost() || m.slot >= slots_.size() || m.bytes > slot_bytes_ || m.offset > m.bytes || m.range() > m.bytes - m.offset) return false;
    Slot& s = slots_[m.slot];
    s.pins.fetch_add(1, std::memory_order_seq_cst);
    const bool holds = s.tag.load(std::memory_order_seq_cst) == pack(m.tag) && s.round == m.tag.round;
    if (holds) use(std::span<const std::byte>(s.memory + m.offset, m.range()));
    if (s.pins.fetch_sub(1, std::memory_order_release) == 1) s.pins.notify_all();  // a clear_slot() may sleep on it
    return holds;
  }
  bool lost() const override { return lost_.load(std::memory_order_acquire); }

  // Direct transport: the tiles a data node message may name as its source
  // (this tile pulls from the peer's pinned slot). Without peers such a
  // message is refused: a transport that relays sends the bytes along.
  void set_peers(std::span<Tile* const> peers) override { peers_ = peers; }

  // The local fast path (no redundancy, no fault injection): runs the actor
  // on `inputs` (this tile's slot memory, or main memory read in place) into
  // `out_slot` and publishes its value, with no ActorMessage or Completion in
  // between. kNoSlot: a 0-byte output, no slot. The clock is read only when
  // `seconds` is not null. Returns false when the actor failed (`failure`).
  // The actor is `actor` of `graph` (its name and args are read only if asked).
  bool run_local(const ActorFunction& function, const Graph& graph, ActorId actor,
                 std::span<const std::span<const std::byte>> inputs, SlotId out_slot, DataTag tag, std::size_t bytes,
                 double* seconds, std::string& failure);

  // The same with `out` already in place (main memory): no slot, nothing to
  // publish. Inline: the leanest path (Engine::run_in_place) calls it per actor.
  bool run_into(const ActorFunction& function, const Graph& graph, ActorId actor,
                std::span<const std::span<const std::byte>> inputs, std::span<std::byte> out, double* seconds,
                std::string& failure) {
    if (seconds != nullptr) return run_into_timed(function, graph, actor, inputs, out, *seconds, failure);
    ActorContext ctx(graph, actor, inputs, out, loop_.get());
    invoke_actor(function, ctx);
    if (ctx.failure()) [[unlikely]] {
      failure = *ctx.failure();
      return false;
    }
    return true;
  }

  // The parallel loop an actor on this tile is given (ActorContext::parallel_for).
  ParallelLoop* parallel_loop() const { return loop_.get(); }

  // run_into with the actor's time added to `seconds`.
  bool run_into_timed(const ActorFunction& function, const Graph& graph, ActorId actor,
                      std::span<const std::span<const std::byte>> inputs, std::span<std::byte> out, double& seconds,
                      std::string& failure);

  // Direct transport, fast path only: the slot's memory, read in place by the actor that runs here next.
  std::span<std::byte> slot_memory(SlotId slot, std::size_t bytes) { return {slots_[slot].memory, bytes}; }

 private:
  // What data_node() and write_piece() both require of a placement: a live tile, the slot, a value that fits.
  Status check_placement(const DataNodeMessage& message) const;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  static std::uint64_t pack(DataTag t) { return (std::uint64_t{t.execution} << 32) | t.data; }

  // A slot's value is named by `tag` (execution, data) and `round`. Like
  // `bytes`, `round` is written before `tag` is published and read only
  // after the tag was seen to match, so it needs no atomic of its own.
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> tag{kEmpty};
    std::atomic<std::uint32_t> pins{0};
    std::uint32_t round = 0;
    std::size_t bytes = 0;  // size of the value held; written before `tag` is published
    std::byte* memory = nullptr;
    // Where the next piece of a value placed in pieces must start
    // (write_piece); kEmpty: none is being placed. A piece that does not
    // continue one (a garbled or reordered sender) is refused rather than
    // written over a value another actor may be reading.
    std::uint64_t next_piece = kEmpty;
  };

  // An actor of the loaded table as this tile runs it: the table's entry
  // (the sender keeps it until the next table) and its function, resolved here.
  struct TableEntry {
    const ActorTableEntry& entry;
    const ActorFunction& function;
    unsigned runs;
  };

  // Makes `slot` hold the value `tag` (its bytes are in place).
  void publish(SlotId slot, DataTag tag) {
    slots_[slot].round = tag.round;
    slots_[slot].tag.store(pack(tag), std::memory_order_release);
  }
  // One run of the actor into `slot`, with fault injection; returns its
  // checksum if wanted, and in `flipped` the bit injection flipped, if any.
  bool run_once(const ActorMessage& m, const TableEntry& e, SlotId slot, unsigned run, unsigned round, Completion& done, std::uint64_t& checksum,
                std::optional<std::uint64_t>& flipped);

  // Dies (crash-tile): lost for good, answering nothing but `lost`.
  Completion die(ActorId actor);

  std::size_t slot_bytes_;
  unsigned cores_;
  unsigned index_;
  std::unique_ptr<std::byte[]> memory_;
  std::vector<Slot> slots_;
  std::vector<std::span<const std::byte>> input_spans_;  // grows to the widest actor once, then reused
  std::unique_ptr<TileLoop> loop_;
  // The actor table (the sender keeps it valid until the next load_actors)
  // and each of its functions resolved in this tile's registry: nothing per
  // actor here, where a copy of names and arguments per tile cost 48 bytes.
  std::span<const ActorTableEntry> table_;
  std::vector<const ActorFunction*> functions_;  // by ActorTableEntry::function
  std::span<Tile* const> peers_;
  std::unique_ptr<fault::FaultInjector> faults_;  // null: no injection here
  std::uint64_t crash_after_ = kNeverCrash;        // actor messages answered before the tile dies
  std::uint64_t answered_ = 0;
  std::atomic<bool> lost_{false};
};

}  // namespace redflow::runtime

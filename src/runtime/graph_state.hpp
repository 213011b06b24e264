// GraphState: everything an execution of one loaded graph mutates (readiness
// counters, where each data node lives, main memory, each tile's slot
// directory, the redundancy bookkeeping), allocated once per load so
// executions do not allocate.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "redflow/huge_page_allocator.hpp"
#include "runtime/slot_index.hpp"
#include "runtime/tile.hpp"

namespace redflow::runtime {

struct GraphState {
  HugePageArray<std::atomic<std::uint32_t>> pending;    // per actor: inputs not yet produced
  HugePageArray<std::atomic<std::uint32_t>> claim;      // per actor, HEFT with joins only: execution that ran it (Engine::claim)
  // Speculation (remote tiles, no redundancy; speculation.cpp), per actor:
  // the execution that started a copy of it, the one that booked its result,
  // and the seconds its last run on a tile took.
  HugePageArray<std::atomic<std::uint32_t>> copied;
  HugePageArray<std::atomic<std::uint32_t>> booked;
  HugePageArray<std::atomic<float>> measured_s;
  HugePageArray<std::atomic<std::uint32_t>> remaining;  // per data node: consumer edges not yet done
  HugePageArray<std::atomic<std::uint32_t>> home_state; // per data node: main memory's copy, (round << 2) | state
  HugePageArray<std::atomic<std::uint64_t>> location;   // per data node: the producer's (tile, slot)
  // Main memory's own bytes for the inner and output nodes that own theirs
  // (not: 0 bytes, or placed inside a collect's output):
  // one zeroed allocation (calloc: pages cost nothing until written), each
  // node's part 64-byte aligned (16 below 64 bytes), rather than a buffer
  // and a pointer per node.
  struct FreeBytes {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, FreeBytes> arena;
  HugePageVector<std::span<const std::byte>> home;             // per data node: its bytes in main memory
  // Per data node: where its producer writes it in main memory. A collect's
  // input points into the collect's output (zero-copy). A split's output has
  // one too, but its home is set to a range of the split's input when it
  // runs, unless that range is misaligned and is copied here.
  HugePageVector<std::byte*> home_write;
  std::vector<std::span<const std::byte>> driver_inputs;    // scratch, reserved: no allocation per driver actor
  // Output nodes, and the inner nodes placed inside an output's buffer (a
  // collect's zero-copy inputs) with their offset in it: when execute_into()
  // puts an output in the caller's buffer, they follow it, so their bytes
  // land in the caller's memory once.
  struct Nested {
    DataId root, node;
    std::size_t offset;
  };
  std::vector<DataId> outputs;
  std::vector<std::byte*> own_output;  // per `outputs` entry: its own bytes in the arena, or null
  std::vector<Nested> nested_in_output;
  std::vector<DataId> given;                                // input and constant nodes
  // The last execution ran on the fast path (Job::plain) to the end,
  // so the per-execution counters need no O(actors) reset: each actor puts
  // its own pending count back when it runs, each producer its output's
  // consumer count and main-memory state before anyone reads them, and where
  // a value lives is only ever looked up after its producer has set it.
  bool clean = false;
  // Per data node: an inner node read only by driver actors (split, collect,
  // oversized actors). On the fast path its producer's tile writes it to main
  // memory at once and frees the slot, instead of the driver pulling it later.
  HugePageVector<std::uint8_t> write_through;

  // Redundancy. Written by a producer before it releases its consumers (or
  // by the voter before it releases the compare actor's consumers), so the
  // readers see them through the readiness counters' acquire/release.
  // Allocated only for a redundant plan (Plan::redundant), except `alias`
  // (and `checksum`, also allocated when a tile checks values).
  HugePageVector<std::uint64_t> checksum;          // per data node: XXH3 of the value, when computed
  // Per data node: 1 + the execution whose value `checksum` holds, for the
  // end-to-end check of values that cross a process boundary (0: not
  // known). Allocated when a tile checks values (Tile::checks_values).
  HugePageVector<std::uint32_t> checksum_of;
  HugePageVector<int> producer_tile;               // per data node: tile that computed it
  HugePageVector<DataId> alias;                    // per data node: the node holding its bytes (a vote's winner)
  HugePageArray<std::atomic<std::uint32_t>> round;  // per data node: voting round, bumped when a replica is re-executed
  HugePageArray<std::atomic<int>> replica_tile;     // per actor: tile a *-diff replica was given to
  HugePageArray<std::atomic<std::uint8_t>> skipped; // per actor: replica left out (no healthy tile for it)
  std::vector<std::uint32_t> vote_round;        // per compare actor: failed votes so far
  std::vector<std::vector<std::pair<int, std::uint64_t>>> vote_history;  // per compare actor: (tile, checksum) of failed rounds
  std::vector<ActorId> voted;                   // compare actors with history to clear next execution

  // The driver's view of one tile's slots, kept by the tile's own runner.
  struct TileDirectory {
    SlotIndex slot_of;                   // data node -> slot it was placed in (may be stale: check held)
    std::vector<DataTag> held;           // per slot: the value held (stale once its round is superseded)
    std::vector<std::uint64_t> occupied_bits;  // per slot, one bit: holds a value (the free-slot bitmap)
    bool occupied(SlotId s) const { return (occupied_bits[s >> 6] >> (s & 63)) & 1; }
    void occupy(SlotId s) { occupied_bits[s >> 6] |= std::uint64_t{1} << (s & 63); }
    void release(SlotId s) { occupied_bits[s >> 6] &= ~(std::uint64_t{1} << (s & 63)); }
    // Indexes `d` at `slot` (held[slot] already says so), first dropping
    // entries no slot holds any more when the index is full.
    void index(DataId d, SlotId slot) {
      if (slot_of.full()) slot_of.prune([&](DataId x, std::int32_t t) { return occupied(static_cast<SlotId>(t)) && held[t].data == x; });
      slot_of.set(d, static_cast<std::int32_t>(slot));
    }
    void unindex(DataId d, SlotId slot) { slot_of.erase_if(d, static_cast<std::int32_t>(slot)); }
    unsigned used() const {
      unsigned n = 0;
      for (std::uint64_t w : occupied_bits) n += static_cast<unsigned>(std::popcount(w));
      return n;
    }
    // The slot holding exactly `tag` (that execution's value, that round), or -1.
    std::int32_t slot_holding(DataTag tag) const {
      const std::int32_t s = slot_of.find(tag.data);
      return s >= 0 && occupied(static_cast<SlotId>(s)) && held[s] == tag ? s : -1;
    }
    std::vector<std::uint64_t> last_use; // per slot: LRU clock
    std::vector<std::uint64_t> stamp;    // per slot: actor serial that needs it now
  };
  std::vector<TileDirectory> dirs;
};

}  // namespace redflow::runtime

// MainMemory: the driver's memory (section 4.4 of Kühbacher et al.), where
// every data node has its home. It lays out an execution's homes (zero-copy
// for split and collect), places the outputs, and moves values between the
// tiles' slots and the homes under the validity word (round << 2 | state)
// that says which value a home holds: write-backs from tiles, the driver's
// pulls, a voted output's copy. It counts the bytes that crossed into main
// memory from threads that have no counter of their own.
//
// Owned by the Engine for its life; an execution's homes live in its
// GraphState (home, home_write, home_state, location, checksums). Asks the
// Engine (EngineCalls, inline calls) for tiles, runners and the recompute
// of a value lost with its tile.
// Thread-safe: every call may come from any runner thread and the driver at
// once; a home's writer holds its state word (kHomeWriting) while copying.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

#include "runtime/engine_calls.hpp"
#include "runtime/graph_state.hpp"
#include "runtime/plan.hpp"
#include "runtime/tile.hpp"

namespace redflow::runtime {

struct TraceBuffer;

class MainMemory {
 public:
  explicit MainMemory(EngineCalls engine) : engine_(engine) {}

  // Gives every inner and output node of `plan` its home in `state`.
  static void assign(const Plan& plan, GraphState& state);
  // Where this execution's outputs go: `output_to[i]` (not null) for output
  // state.outputs[i], else main memory's own buffer.
  static void place_outputs(GraphState& state, std::span<std::byte* const> output_to);

  // Whether node `d`'s home holds its value of voting round `round`
  // (inline, engine_job.hpp: every actor on the fast path asks it).
  bool valid(const Job& job, DataId d, std::uint32_t round) const;
  // The checksum value `tag` must hash to, where a checked completion of
  // this execution reported it (the end-to-end check, Tile::checks_values).
  bool known_checksum(const Job& job, DataTag tag, std::uint64_t& sum) const;
  // Brings node `d`'s current value home for the driver (pulled from its
  // tile, or recomputed when that tile was lost); false if it cannot.
  bool ensure(Job& job, DataId d);
  // Copies value `tag` from `tile`'s slot home, unless home already has it
  // or a later round. `stats` and `trace`: the calling thread's (default
  // trace: the driver's for the driver's stats, else the tile's runner's).
  void write(Job& job, DataTag tag, Tile& tile, SlotId slot, TileStats& stats, TraceBuffer* trace = nullptr);
  // Copies the confirmed replica `winner`'s bytes home for output `logical`.
  void copy_voted(Job& job, DataId logical, DataId winner, TileStats& stats);

  // The bytes counted here since the last call (an execution's report).
  std::uint64_t take_transfer_bytes() { return transfer_bytes_.exchange(0); }

 private:
  EngineCalls engine_;
  std::atomic<std::uint64_t> transfer_bytes_{0};
};

}  // namespace redflow::runtime

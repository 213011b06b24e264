// SlotDirectory: the driver's view of each tile's slots (the tile
// directories in GraphState::dirs). It places an actor's inputs in its
// tile's slots, moving each value from the producer's tile or from main
// memory, and chooses a slot for a new value, displacing a live one (least
// recently used, cheapest first) if need be.
//
// Owned by the Engine for its life; an execution's directories live in its
// GraphState. Asks MainMemory for homes and write-backs, and the Engine
// (EngineCalls, inline calls) for tiles, failures and recomputes.
// Thread-safety: tile t's directory is used only by tile t's runner, so
// calls for different tiles run at once; the values they read from main
// memory are under MainMemory's validity words.
#pragma once

#include "runtime/engine_calls.hpp"
#include "runtime/graph_state.hpp"
#include "runtime/main_memory.hpp"

namespace redflow::runtime {

class SlotDirectory {
 public:
  SlotDirectory(MainMemory& memory, EngineCalls engine) : memory_(memory), engine_(engine) {}

  // Gives `state` one directory of `slots` free slots per tile.
  static void prepare(GraphState& state, std::size_t tiles, std::size_t slots);
  // Slot `i` of `dir` is free, or holds what nobody needs any more.
  static bool reusable(const Job& job, const GraphState::TileDirectory& dir, SlotId i);
  // A slot of tile r for a new value; false when every slot is pinned.
  bool allocate(Runner& r, Job& job, SlotId& slot);
  // Places value `d` in one of tile r's slots for actor `a`. False when no
  // slot was free, the tile was lost or the job failed, and also, failing
  // nothing, when another run of `a` (the original or a speculative copy)
  // was booked meanwhile and freed the value.
  bool place_input(Runner& r, Job& job, ActorId a, DataId d, SlotId& slot);

 private:
  // A slot handed out again is no longer one a failed fetch left empty.
  static void forget_emptied(Runner& r, SlotId slot);

  MainMemory& memory_;
  EngineCalls engine_;
};

}  // namespace redflow::runtime

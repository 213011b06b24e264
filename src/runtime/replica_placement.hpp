// ReplicaPlacement: where *-diff replicas run (section 5.1 of Kühbacher et
// al.) and where work goes when its tile leaves service. It keeps the
// insertion rule (never two replicas of one actor on one tile), picks a tile
// for a replica (one that computed an input, then the shortest queue, tiles
// of a failed round last) or any tile in service, skips a replica no tile
// may take, and hands an actor on from a quarantined or lost tile.
//
// Owned by the Engine for its life; it holds only the claim locks, and reads
// TilePlaces and each execution's GraphState (replica_tile, skipped).
// Thread-safe: any runner and the driver call it; checking the insertion
// rule and recording a replica's tile are one step under its compare
// actor's striped lock (claim_lock()).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>

#include "runtime/engine_calls.hpp"
#include "runtime/tile_places.hpp"

namespace redflow::runtime {

class ReplicaPlacement {
 public:
  ReplicaPlacement(const TilePlaces& places, EngineCalls engine) : places_(places), engine_(engine) {}

  // Held while checking may_take() and recording a replica's tile.
  std::mutex& claim_lock(ActorId vote) { return locks_[vote % locks_.size()]; }
  // Tile `tile` is in service and, for a replica, holds no sibling of it.
  bool may_take(const Job& job, ActorId a, unsigned tile) const;
  // A random tile in service other than `except`; -1 when there is none.
  int pick_healthy_tile(std::uint64_t& rng, int except) const;

  // Replica `c` became ready: returns it when the calling tile (`from`) may
  // run it next (work-first, `may_run_here`), else queues it on the tile the
  // insertion rule picks and returns kNone, or skips it when no tile may
  // take it (returning what that made ready).
  ActorId place(Job& job, ActorId c, Runner* from, bool may_run_here);
  // A failed vote runs replica `c` again: away from the tiles of failed
  // rounds where possible, skipped where no tile may take it.
  void place_again(Job& job, ActorId c, Runner* from);
  // Re-dispatch: moves `a` away from `from`'s tile, quarantined or lost.
  void forward(Job& job, ActorId a, Runner& from);

 private:
  bool sibling_on(const Job& job, ActorId a, unsigned tile) const;
  int pick_replica_tile(Job& job, ActorId a, std::uint64_t& rng, bool avoid_failed) const;
  ActorId skip(Job& job, ActorId c, Runner* from);
  // What a skip made ready goes to a random tile in service.
  void hand_out(ActorId next, std::uint64_t& rng);

  const TilePlaces& places_;
  EngineCalls engine_;
  // Striped by compare actor: two tiles must not claim siblings at once.
  std::array<std::mutex, 64> locks_;
};

}  // namespace redflow::runtime

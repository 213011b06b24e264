// Voting: the compare actor's vote (section 5.2 of Kühbacher et al.) and what
// follows a failed one: the replicas run again (non-speculative rollback,
// placed by ReplicaPlacement) up to kMaxVoteRounds times, and tiles whose
// results lose a vote move towards quarantine (section 5.3: TilePlaces
// decides; a quarantined tile is woken to hand its queue on).
//
// Owned by the Engine for its life; an execution's voting state lives in its
// GraphState (vote rounds, history, the voted list, checksums, aliases).
// Thread-safe: a vote runs on the thread that finished its actor's last
// replica, once per round; votes of different actors run at once, and the
// voted list they share is under a mutex.
#pragma once

#include <mutex>

#include "runtime/engine_calls.hpp"
#include "runtime/replica_placement.hpp"
#include "runtime/tile_places.hpp"

namespace redflow::runtime {

class Voting {
 public:
  Voting(TilePlaces& places, ReplicaPlacement& placement, EngineCalls engine) : places_(places), placement_(placement), engine_(engine) {}

  // Votes compare actor `v`, whose replicas are done: returns what its
  // confirmed result made ready to run next on the calling tile, or kNone
  // (the replicas run again, or the execution failed).
  ActorId vote(Job& job, ActorId v, Runner* from);
  // Tile `tile` (-1: none) gave a result a vote or its own *-same runs rejected.
  void lose_vote(Job& job, int tile);

 private:
  void run_again(Job& job, ActorId v, Runner* from);

  TilePlaces& places_;
  ReplicaPlacement& placement_;
  EngineCalls engine_;
  std::mutex voted_mutex_;  // GraphState::voted
};

}  // namespace redflow::runtime

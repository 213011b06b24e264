// Quarantine (section 5.3): a tile that loses too many votes in one
// execution is taken out of service at once, never leaving fewer tiles than
// the redundancy configuration needs, and is on probation until a
// known-answer test puts it back or quarantines it for good (probation.cpp).
// TilePlaces decides; Voting marks it and wakes it to hand its queue to the
// others (ReplicaPlacement::forward).
#include <string>

#include "runtime/engine_job.hpp"
#include "runtime/voting.hpp"

namespace redflow::runtime {

void Voting::lose_vote(Job& job, int tile) {
  if (tile < 0 || static_cast<unsigned>(tile) >= engine_.tiles()) return;
  const std::uint32_t lost = places_.lose_vote(static_cast<unsigned>(tile), engine_.tiles(), job.min_healthy);
  if (lost == 0) return;
  engine_.mark(job, "quarantine",
               "tile " + std::to_string(tile) + " lost " + std::to_string(lost) + " votes: out of service" +
                   (places_.on_probation(static_cast<unsigned>(tile)) ? ", on probation until a known-answer test" : " for good"),
               tile);
  engine_.wake_to_hand_on(static_cast<unsigned>(tile));
}

}  // namespace redflow::runtime

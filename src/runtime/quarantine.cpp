// Quarantine (section 5.3): a tile that loses too many votes is taken out of
// service for the runtime's life, never leaving fewer tiles than the
// redundancy configuration needs. TilePlaces decides; the engine marks it
// and hands the tile's queue to the others.
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

void Engine::lose_vote(Job& job, int tile) {
  if (tile < 0 || static_cast<unsigned>(tile) >= tiles()) return;
  const std::uint32_t lost = places_.lose_vote(static_cast<unsigned>(tile), tiles(), job.min_healthy);
  if (lost == 0) return;
  mark(job, "quarantine", "tile " + std::to_string(tile) + " lost " + std::to_string(lost) + " votes", tile);
  // Its queue moves to the others: wake it so it hands its work over.
  runners_[static_cast<unsigned>(tile)]->notifier.notify_all();
  steal_notifier_.notify_all();
}

}  // namespace redflow::runtime

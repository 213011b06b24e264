// Quarantine (section 5.3): a tile that loses too many votes is taken out of
// service for the runtime's life, never leaving fewer tiles than the
// redundancy configuration needs.
#include <mutex>
#include <string>

#include "runtime/engine_job.hpp"

namespace redflow::runtime {

std::vector<unsigned> Engine::quarantined_tiles() const {
  std::vector<unsigned> out;
  // A lost tile is out of service too, but not for its votes; a place kept for a join has no tile yet.
  for (unsigned t = 0; t < tiles(); ++t)
    if (!healthy(t) && !tile_lost(t) && !absent_[t].load(std::memory_order_acquire)) out.push_back(t);
  return out;
}

std::string describe_tiles(const std::vector<unsigned>& tiles) {
  if (tiles.empty()) return "no tile";
  std::string out = tiles.size() == 1 ? "tile " : "tiles ";
  for (std::size_t i = 0; i < tiles.size(); ++i) out += (i ? ", " : "") + std::to_string(tiles[i]);
  return out;
}

std::string Engine::out_of_service() const {
  std::vector<unsigned> lost;
  unsigned places = 0, in_service = 0;
  for (unsigned t = 0; t < tiles(); ++t) {
    if (absent_[t].load(std::memory_order_acquire)) continue;  // a place kept for a join: no tile yet
    ++places;
    in_service += healthy(t);
    if (tile_lost(t)) lost.push_back(t);
  }
  const std::vector<unsigned> quarantined = quarantined_tiles();
  std::string out;
  if (!quarantined.empty()) out = describe_tiles(quarantined) + " quarantined, ";
  if (!lost.empty()) out += describe_tiles(lost) + " lost, ";
  return out + std::to_string(in_service) + " of " + std::to_string(places) + " compute tiles in service";
}

void Engine::lose_vote(Job& job, int tile) {
  if (tile < 0 || static_cast<unsigned>(tile) >= tiles()) return;
  const std::uint32_t lost = job.lost_votes[tile].fetch_add(1, std::memory_order_acq_rel) + 1;
  if (options_.quarantine_after == 0 || lost < options_.quarantine_after || !healthy(static_cast<unsigned>(tile))) return;
  // Never below the tiles the configuration needs; one quarantine at a time.
  std::lock_guard<std::mutex> lock(quarantine_mutex_);
  unsigned in_service = 0;
  for (unsigned t = 0; t < tiles(); ++t) in_service += healthy(t);
  if (in_service <= job.min_healthy) return;
  quarantined_[tile].store(true, std::memory_order_release);
  mark(job, "quarantine", "tile " + std::to_string(tile) + " lost " + std::to_string(lost) + " votes", tile);
  // Its queue moves to the others: wake it so it hands its work over.
  runners_[static_cast<unsigned>(tile)]->notifier.notify_all();
  steal_notifier_.notify_all();
}

}  // namespace redflow::runtime

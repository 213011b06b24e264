// TilePlaces (tile_places.hpp): the service state of every tile place and
// the quarantine rule of section 5.3.
#include "runtime/tile_places.hpp"

namespace redflow::runtime {

TilePlaces::TilePlaces(unsigned places, unsigned quarantine_after, unsigned probation_rounds)
    : quarantine_after_(quarantine_after),
      probation_rounds_(probation_rounds),
      quarantined_(std::make_unique<std::atomic<bool>[]>(places)),
      lost_(std::make_unique<std::atomic<bool>[]>(places)),
      absent_(std::make_unique<std::atomic<bool>[]>(places)),
      joined_(std::make_unique<std::atomic<bool>[]>(places)),
      lost_votes_(std::make_unique<std::atomic<std::uint32_t>[]>(places)),
      probation_(std::make_unique<std::atomic<bool>[]>(places)),
      failed_(std::make_unique<std::atomic<unsigned>[]>(places)) {}

void TilePlaces::keep_for_join(unsigned t) {
  absent_[t].store(true);
  quarantined_[t].store(true);
}

void TilePlaces::note_join(unsigned t) { joined_[t].store(true, std::memory_order_release); }

void TilePlaces::refuse_join(unsigned t) { absent_[t].store(false, std::memory_order_release); }

void TilePlaces::admit(unsigned t) {
  std::lock_guard<std::mutex> lock(service_mutex_);
  absent_[t].store(false, std::memory_order_release);
  quarantined_[t].store(false, std::memory_order_release);
}

bool TilePlaces::lose(unsigned t) {
  std::lock_guard<std::mutex> lock(service_mutex_);
  if (lost_[t].load(std::memory_order_acquire)) return false;
  lost_[t].store(true, std::memory_order_release);
  quarantined_[t].store(true, std::memory_order_release);  // out of service: its queue moves to the others
  return true;
}

void TilePlaces::reset_votes(unsigned places) {
  for (unsigned t = 0; t < places; ++t) lost_votes_[t].store(0, std::memory_order_relaxed);
}

std::uint32_t TilePlaces::lose_vote(unsigned t, unsigned tiles, unsigned min_healthy) {
  const std::uint32_t lost = lost_votes_[t].fetch_add(1, std::memory_order_acq_rel) + 1;
  if (quarantine_after_ == 0 || lost < quarantine_after_ || !healthy(t)) return 0;
  // Never below the tiles the configuration needs; one quarantine at a time.
  std::lock_guard<std::mutex> lock(service_mutex_);
  unsigned in_service = 0;
  for (unsigned u = 0; u < tiles; ++u) in_service += healthy(u);
  if (in_service <= min_healthy) return 0;
  quarantined_[t].store(true, std::memory_order_release);
  if (probation_rounds_ > 0) probation_[t].store(true, std::memory_order_release);
  return lost;
}

void TilePlaces::pass_probation(unsigned t) {
  std::lock_guard<std::mutex> lock(service_mutex_);
  if (!probation_[t].load(std::memory_order_acquire) || lost_[t].load(std::memory_order_acquire)) return;
  probation_[t].store(false, std::memory_order_release);
  failed_[t].store(0, std::memory_order_release);
  quarantined_[t].store(false, std::memory_order_release);
}

bool TilePlaces::fail_probation(unsigned t) {
  std::lock_guard<std::mutex> lock(service_mutex_);
  if (!probation_[t].load(std::memory_order_acquire)) return false;
  const unsigned failed = failed_[t].fetch_add(1, std::memory_order_acq_rel) + 1;
  if (failed < probation_rounds_) return false;
  probation_[t].store(false, std::memory_order_release);  // out of service for good
  return true;
}

std::vector<unsigned> TilePlaces::quarantined(unsigned tiles) const {
  std::vector<unsigned> out;
  // A lost tile is out of service too, but not for its votes; a place kept for a join has no tile yet.
  for (unsigned t = 0; t < tiles; ++t)
    if (!healthy(t) && !lost(t) && !absent(t)) out.push_back(t);
  return out;
}

std::vector<unsigned> TilePlaces::probation_tiles(unsigned tiles) const {
  std::vector<unsigned> out;
  for (unsigned t = 0; t < tiles; ++t)
    if (on_probation(t) && !lost(t)) out.push_back(t);
  return out;
}

std::string TilePlaces::out_of_service(unsigned tiles) const {
  std::vector<unsigned> gone;
  unsigned places = 0, in_service = 0;
  for (unsigned t = 0; t < tiles; ++t) {
    if (absent(t)) continue;  // a place kept for a join: no tile yet
    ++places;
    in_service += healthy(t);
    if (lost(t)) gone.push_back(t);
  }
  std::vector<unsigned> q = quarantined(tiles);
  const std::vector<unsigned> p = probation_tiles(tiles);
  std::erase_if(q, [&](unsigned t) { return on_probation(t); });
  std::string out;
  if (!q.empty()) out = describe_tiles(q) + " quarantined, ";
  if (!p.empty()) out += describe_tiles(p) + " on probation, ";
  if (!gone.empty()) out += describe_tiles(gone) + " lost, ";
  return out + std::to_string(in_service) + " of " + std::to_string(places) + " compute tiles in service";
}

std::string describe_tiles(const std::vector<unsigned>& tiles) {
  if (tiles.empty()) return "no tile";
  std::string out = tiles.size() == 1 ? "tile " : "tiles ";
  for (std::size_t i = 0; i < tiles.size(); ++i) out += (i ? ", " : "") + std::to_string(tiles[i]);
  return out;
}

}  // namespace redflow::runtime

// TilePlaces: whether each tile place is in service, for the runtime's life
// (section 5.3's quarantine, lost tiles, places kept for joins), and the
// votes each tile lost in the current execution. A place is a tile, or a
// place kept for a worker that may join (RuntimeOptions::max_remote_tiles).
//
// It owns the per-place flags and decides a quarantine: a tile that lost
// `quarantine_after` votes leaves service unless fewer tiles than the
// redundancy configuration needs would be left. It does not wake runners or
// write marks: its caller (the Engine) does, on what it returns.
//
// Thread-safe: readers use acquire loads (healthy() is on the hot path, one
// load); changes of service (quarantine, loss, admission) are serialized by
// one mutex so that the count of tiles in service is never raced.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace redflow::runtime {

class TilePlaces {
 public:
  // `places`: every tile and every place kept for a join. `quarantine_after`:
  // lost votes in one execution that quarantine a tile (0: never).
  TilePlaces(unsigned places, unsigned quarantine_after);
  TilePlaces(const TilePlaces&) = delete;
  TilePlaces& operator=(const TilePlaces&) = delete;

  // In service as far as votes and losses go (not quarantined, not lost, not
  // an unfilled place).
  bool healthy(unsigned t) const { return !quarantined_[t].load(std::memory_order_acquire); }
  // Lost for good (its completion said so; lose()).
  bool lost(unsigned t) const { return lost_[t].load(std::memory_order_acquire); }
  // A place kept for a join that no worker filled yet.
  bool absent(unsigned t) const { return absent_[t].load(std::memory_order_acquire); }
  // A worker came for place t and it was not admitted yet.
  bool join_pending(unsigned t) const { return joined_[t].load(std::memory_order_acquire) && absent(t); }

  // Place t waits for a worker: absent and out of service (before any runner starts).
  void keep_for_join(unsigned t);
  // A worker came for place t (any thread; admitted later by its runner).
  void note_join(unsigned t);
  // The worker of place t cannot serve (it cannot run the graph, or died at
  // once): the place is filled but stays out of service.
  void refuse_join(unsigned t);
  // The worker of place t is in service from now on.
  void admit(unsigned t);
  // Takes tile t out of service for good; false when it was lost already.
  bool lose(unsigned t);

  // Votes lost this execution: reset_votes() before it starts (`places`
  // first ones), lost_votes() for its report.
  void reset_votes(unsigned places);
  std::uint32_t lost_votes(unsigned t) const { return lost_votes_[t].load(std::memory_order_acquire); }
  // Counts a lost vote of tile t. Returns the tile's lost votes when this
  // one quarantined it, else 0. Never leaves fewer than `min_healthy` of the
  // first `tiles` places in service.
  std::uint32_t lose_vote(unsigned t, unsigned tiles, unsigned min_healthy);

  // Of the first `tiles` places: the quarantined ones (for their votes; lost
  // tiles and unfilled places are out of service for other reasons).
  std::vector<unsigned> quarantined(unsigned tiles) const;
  // For a give-up's message: "tile 0 quarantined, tiles 1, 2 lost, 1 of 4
  // compute tiles in service".
  std::string out_of_service(unsigned tiles) const;

 private:
  unsigned quarantine_after_;
  std::unique_ptr<std::atomic<bool>[]> quarantined_;  // out of service: quarantined, lost, or unfilled
  std::unique_ptr<std::atomic<bool>[]> lost_;
  std::unique_ptr<std::atomic<bool>[]> absent_;
  std::unique_ptr<std::atomic<bool>[]> joined_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> lost_votes_;
  std::mutex service_mutex_;  // one change of service at a time, per engine
};

// "tile 3", "tiles 0, 2", or "no tile": tile numbers in messages, so that
// "0" is never read as "none".
std::string describe_tiles(const std::vector<unsigned>& tiles);

}  // namespace redflow::runtime

// TilePlaces: whether each tile place is in service, for the runtime's life
// (section 5.3's quarantine, lost tiles, places kept for joins), and the
// votes each tile lost in the current execution. A place is a tile, or a
// place kept for a worker that may join (RuntimeOptions::max_remote_tiles).
//
// It owns the per-place flags and decides a quarantine in two steps
// (docs/redundancy.md, "Quarantine"): a tile that lost `quarantine_after`
// votes in one execution is suspected and leaves service at once (unless
// fewer tiles than the redundancy configuration needs would be left); it
// is then on probation: each known-answer test it passes puts it back in
// service, and `probation_rounds` failed tests in a row quarantine it for
// good. It does not run the tests, wake runners or write marks: its caller
// (the Engine) does, on what it returns.
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
  // lost votes in one execution that make a tile suspect (0: never).
  // `probation_rounds`: failed known-answer tests in a row that quarantine a
  // suspected tile for good (0: suspicion alone does).
  TilePlaces(unsigned places, unsigned quarantine_after, unsigned probation_rounds = 3);
  TilePlaces(const TilePlaces&) = delete;
  TilePlaces& operator=(const TilePlaces&) = delete;

  // In service as far as votes and losses go (not quarantined, not lost, not
  // an unfilled place).
  bool healthy(unsigned t) const { return !quarantined_[t].load(std::memory_order_acquire); }
  // The word healthy(t) reads, for a loop that asks it per actor (its place never moves).
  const std::atomic<bool>& quarantine_word(unsigned t) const { return quarantined_[t]; }
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
  // one took it out of service (suspected, or with probation_rounds 0
  // quarantined for good), else 0. Never leaves fewer than `min_healthy` of
  // the first `tiles` places in service.
  std::uint32_t lose_vote(unsigned t, unsigned tiles, unsigned min_healthy);

  // On probation: out of service for its votes, and not quarantined for
  // good yet (a known-answer test may put it back).
  bool on_probation(unsigned t) const { return probation_[t].load(std::memory_order_acquire); }
  // Tile t passed a known-answer test: in service again, its record clean.
  void pass_probation(unsigned t);
  // Tile t failed one: true when that quarantined it for good
  // (probation_rounds failed in a row).
  bool fail_probation(unsigned t);
  // Failed known-answer tests in a row of a tile on probation.
  unsigned failed_probations(unsigned t) const { return failed_[t].load(std::memory_order_acquire); }

  // Of the first `tiles` places: the ones out of service for their votes,
  // on probation or quarantined for good (lost tiles and unfilled places are
  // out of service for other reasons).
  std::vector<unsigned> quarantined(unsigned tiles) const;
  // Of those, the ones on probation.
  std::vector<unsigned> probation_tiles(unsigned tiles) const;
  // For a give-up's message: "tile 0 quarantined, tiles 1, 2 lost, 1 of 4
  // compute tiles in service".
  std::string out_of_service(unsigned tiles) const;

 private:
  unsigned quarantine_after_;
  unsigned probation_rounds_;
  std::unique_ptr<std::atomic<bool>[]> quarantined_;  // out of service: quarantined, lost, or unfilled
  std::unique_ptr<std::atomic<bool>[]> lost_;
  std::unique_ptr<std::atomic<bool>[]> absent_;
  std::unique_ptr<std::atomic<bool>[]> joined_;
  std::unique_ptr<std::atomic<std::uint32_t>[]> lost_votes_;
  std::unique_ptr<std::atomic<bool>[]> probation_;
  std::unique_ptr<std::atomic<unsigned>[]> failed_;
  std::mutex service_mutex_;  // one change of service at a time, per engine
};

// "tile 3", "tiles 0, 2", or "no tile": tile numbers in messages, so that
// "0" is never read as "none".
std::string describe_tiles(const std::vector<unsigned>& tiles);

}  // namespace redflow::runtime

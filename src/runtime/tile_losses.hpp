// TileLosses: one execution's part of lost tiles (lost_tiles.cpp): how many
// tiles it lost and how many values it recomputed, and per actor the tiles
// lost while it ran on them. An actor under which RuntimeOptions::crash_limit
// tiles were lost is poisoned (it may be what kills them): the execution
// fails rather than hand it to the next worker.
//
// Owned by the Job; the engine's lost-tile and speculation code update it.
// Thread-safe: counts are relaxed atomics; the actors' losses are under a
// mutex (losses are rare: a map).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "redflow/graph.hpp"

namespace redflow::runtime {

class TileLosses {
 public:
  void count_lost_tile() { lost_tiles_.fetch_add(1, std::memory_order_relaxed); }
  void count_recomputed() { recomputed_.fetch_add(1, std::memory_order_relaxed); }
  std::uint32_t lost_tiles() const { return lost_tiles_.load(); }
  std::uint64_t recomputed() const { return recomputed_.load(); }

  // Tile `tile` was lost while `a` ran on it: the tiles lost under `a` so far, this one included.
  std::vector<unsigned> lost_under(ActorId a, unsigned tile) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<unsigned>& under = under_[a];
    under.push_back(tile);
    return under;
  }
  // A copy of `a` may run beside its original (speculation.cpp): two runs at
  // once may both die, so not when all but one of the `crash_limit` tiles
  // poisoning allows were lost under `a` already, or the copy and its
  // original together would take down one tile beyond that limit.
  bool may_run_twice(ActorId a, unsigned crash_limit) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = under_.find(a);
    return (it == under_.end() ? 0 : it->second.size()) + 2 <= crash_limit;
  }

 private:
  std::atomic<std::uint32_t> lost_tiles_{0};
  std::atomic<std::uint64_t> recomputed_{0};
  std::mutex mutex_;
  std::map<ActorId, std::vector<unsigned>> under_;
};

}  // namespace redflow::runtime

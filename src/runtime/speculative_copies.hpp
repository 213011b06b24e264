// SpeculativeCopies: one execution's part of speculation (speculation.cpp,
// docs/remote.md): whether the execution makes copies of stragglers at all,
// how many it made and how they ended, and the copies running now, each with
// whether the run it copies was lost meanwhile ("One run stands for both":
// then the copy, if it ends without a result, hands its actor on).
//
// Owned by the Job; the engine's speculation code reads and updates it.
// Thread-safe: on() is set before the runners start and only read after;
// the counts are relaxed atomics; the running copies are under a mutex
// (copies are rare: a map).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

#include "redflow/graph.hpp"

namespace redflow::runtime {

class SpeculativeCopies {
 public:
  // Whether this execution speculates (remote tiles, no redundancy).
  bool on() const { return on_; }
  void set_on(bool on) { on_ = on; }  // before the runners start

  // A copy of `a` runs from now.
  void started(ActorId a) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_[a] = false;
  }
  // The copy of `a` ended. True: the run it copied was lost meanwhile, so
  // the copy stood for it (stand_for()).
  bool ended(ActorId a) {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool original_lost = running_[a];
    running_.erase(a);
    return original_lost;
  }
  // The run of `a` that a tile's loss ended: true when a copy of it is
  // running, which then stands for it.
  bool stand_for(ActorId a) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = running_.find(a);
    if (it == running_.end()) return false;
    it->second = true;
    return true;
  }

  // This execution's counts, for its stats.
  void count_copy() { copies_.fetch_add(1, std::memory_order_relaxed); }
  void count_win() { wins_.fetch_add(1, std::memory_order_relaxed); }
  void count_abandoned() { abandoned_.fetch_add(1, std::memory_order_relaxed); }
  void count_taken_over() { taken_over_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t copies() const { return copies_.load(); }
  std::uint64_t wins() const { return wins_.load(); }
  std::uint64_t abandoned() const { return abandoned_.load(); }
  std::uint64_t taken_over() const { return taken_over_.load(); }

 private:
  bool on_ = false;
  std::atomic<std::uint64_t> copies_{0}, wins_{0}, abandoned_{0}, taken_over_{0};
  std::mutex mutex_;
  std::map<ActorId, bool> running_;  // actor -> the run it copies was lost
};

}  // namespace redflow::runtime

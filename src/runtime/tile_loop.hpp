// TileLoop: the parallel loop over a tile's cores (ActorContext::parallel_for).
//
// A tile of C cores has C - 1 helper threads; the thread that runs the actor
// is the C-th. run() splits [begin, end) into at most C chunks and publishes
// them; the caller and the helpers *claim* chunks one at a time, and run()
// returns when every chunk is done. The caller waits only for chunks a helper
// has claimed: a helper the operating system has not scheduled yet claims
// nothing, and the caller runs the rest itself.
//
// Why claims: a loop that waited for every helper to take part cost each
// parallel actor two scheduling latencies (the helper's wake-up, then the
// caller's), which on a loaded machine grow to tens of milliseconds. On 2
// cores busy with 16 other processes, a bitonic sort with 2 cores per tile
// took 34 times as long as with 1, 93 s (docs/performance.md, "Parallel
// actors on a loaded machine").
//
// Thread-safety: run() is called by one thread at a time (the tile's runner,
// or a worker's executor); the helpers are internal. cores() is constant.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "redflow/actor_context.hpp"

namespace redflow::runtime {

class TileLoop final : public ParallelLoop {
 public:
  // Helpers start serving loops at once, or (kHeld, a test seam) only after
  // release_helpers(): a held helper stands for one the operating system has
  // not scheduled.
  enum class Helpers { kServing, kHeld };
  explicit TileLoop(unsigned cores, Helpers helpers = Helpers::kServing);
  ~TileLoop() override;
  TileLoop(const TileLoop&) = delete;
  TileLoop& operator=(const TileLoop&) = delete;

  unsigned cores() const override { return cores_; }
  void run(std::size_t begin, std::size_t end, void (*chunk)(void*, std::size_t, std::size_t), void* closure) override;

  // Test seam: lets held helpers serve loops.
  void release_helpers();

 private:
  // Claims one chunk of the published loop: its index, or -1 when none is left.
  std::int64_t claim();
  // Runs chunk `part` of the published loop and counts it done.
  void run_part(std::size_t part);
  void helper();

  const unsigned cores_;
  std::vector<std::thread> helpers_;
  // Chunks of the published loop not yet claimed; claiming one is a
  // compare-and-swap from k > 0 to k - 1, which takes chunk k - 1. A helper
  // that wakes after its loop ended finds 0, or a later loop's count: a claim
  // that succeeds is always of the loop published now, since run() sets the
  // count only after the loop's fields, and publishes no other loop before
  // every chunk of this one is done.
  alignas(64) std::atomic<std::uint32_t> unclaimed_{0};
  // Chunks of the published loop that are done; run() waits for all.
  alignas(64) std::atomic<std::uint32_t> done_{0};
  // Generations published; helpers sleep on it between loops.
  alignas(64) std::atomic<std::uint32_t> epoch_{0};
  std::atomic<bool> held_{false};
  std::atomic<bool> stop_{false};
  // The published loop. Written by run() before it publishes the loop, read
  // by a thread only after it claimed a chunk of it: the loop cannot end (and
  // the next one overwrite these) before that chunk is counted done.
  std::size_t begin_ = 0, end_ = 0;
  std::uint32_t parts_ = 0;
  void (*chunk_)(void*, std::size_t, std::size_t) = nullptr;
  void* closure_ = nullptr;
};

}  // namespace redflow::runtime

// The parallel loop over a tile's cores (src/runtime/tile_loop.hpp): every
// index once, helpers that really run chunks beside the caller, and a loop
// that ends although its helper is never scheduled (the seam Helpers::kHeld
// stands for a helper the operating system has not run yet).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "runtime/tile_loop.hpp"

namespace redflow::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Runs body(b, e) over [begin, end) on `loop`, as ActorContext::parallel_chunks does.
template <typename Body>
void run_chunks(TileLoop& loop, std::size_t begin, std::size_t end, Body& body) {
  loop.run(begin, end, [](void* c, std::size_t b, std::size_t e) { (*static_cast<Body*>(c))(b, e); }, &body);
}

TEST(TileLoop, ALoopWhoseHelperIsNeverScheduledEndsOnTheCallersThread) {
  // A loop that waited for every helper to take part would wait here until
  // the helper is released: two scheduling latencies per parallel actor on a
  // loaded machine, and forever while a helper is held.
  TileLoop loop(2, TileLoop::Helpers::kHeld);
  std::vector<std::thread::id> ran_on(100);
  std::atomic<int> runs{0};
  auto body = [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) ran_on[i] = std::this_thread::get_id();
    ++runs;
  };
  std::thread::id caller;
  auto ended = std::async(std::launch::async, [&] {
    caller = std::this_thread::get_id();
    run_chunks(loop, 0, ran_on.size(), body);
  });
  const bool in_time = ended.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  loop.release_helpers();  // lets a loop that waits for the helper end, so the test can report it
  ended.get();
  ASSERT_TRUE(in_time) << "run() waited for a helper that never ran";
  EXPECT_EQ(runs.load(), 2) << "the two chunks, each once";
  for (std::size_t i = 0; i < ran_on.size(); ++i) EXPECT_EQ(ran_on[i], caller) << "index " << i;
}

TEST(TileLoop, HelpersRunChunksBesideTheCaller) {
  // Each chunk waits until every chunk has started: that ends only if the
  // helpers run chunks at the same time as the caller.
  for (unsigned cores : {2u, 4u}) {
    SCOPED_TRACE("cores " + std::to_string(cores));
    TileLoop loop(cores);
    std::atomic<unsigned> started{0};
    std::atomic<bool> all_met{true};
    auto body = [&](std::size_t, std::size_t) {
      ++started;
      const auto deadline = Clock::now() + std::chrono::seconds(10);
      while (started.load() < cores && Clock::now() < deadline) std::this_thread::yield();
      if (started.load() < cores) all_met = false;
    };
    run_chunks(loop, 0, cores, body);
    EXPECT_EQ(started.load(), cores);
    EXPECT_TRUE(all_met.load()) << "a chunk waited 10 s for the others to start";
  }
}

TEST(TileLoop, EveryIndexRunsOnceOverManyLoopsOfEverySize) {
  std::mt19937 rng(7);
  for (unsigned cores : {2u, 3u, 4u}) {
    SCOPED_TRACE("cores " + std::to_string(cores));
    TileLoop loop(cores);
    for (int round = 0; round < 2000; ++round) {
      const std::size_t begin = rng() % 5, n = rng() % 40;
      std::vector<std::atomic<int>> hits(begin + n);
      auto body = [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1, std::memory_order_relaxed);
      };
      run_chunks(loop, begin, begin + n, body);
      for (std::size_t i = 0; i < hits.size(); ++i)
        if (hits[i].load() != (i >= begin ? 1 : 0)) FAIL() << "round " << round << ": index " << i << " ran " << hits[i].load() << " times";
    }
  }
}

TEST(TileLoop, HelpersReleasedMidLoopServeTheLoopsThatFollow) {
  // The helpers miss the first loops (held), wake in the middle of one and
  // then serve the rest; no chunk runs twice and none is lost.
  TileLoop loop(3, TileLoop::Helpers::kHeld);
  std::atomic<long> total{0};
  std::atomic<bool> release{false};
  std::thread releaser([&] {
    while (!release.load()) std::this_thread::yield();
    loop.release_helpers();
  });
  auto sum = [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) total.fetch_add(static_cast<long>(i), std::memory_order_relaxed);
  };
  for (int round = 0; round < 3000; ++round) {
    if (round == 100) release = true;
    run_chunks(loop, 0, 30, sum);
  }
  releaser.join();
  EXPECT_EQ(total.load(), 3000L * (29 * 30 / 2));
  // Released, the helpers run chunks beside the caller.
  std::atomic<unsigned> started{0};
  auto meet = [&](std::size_t, std::size_t) {
    ++started;
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (started.load() < 3 && Clock::now() < deadline) std::this_thread::yield();
  };
  const auto t0 = Clock::now();
  run_chunks(loop, 0, 3, meet);
  EXPECT_EQ(started.load(), 3u);
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(10)) << "the released helpers ran no chunk beside the caller";
}

}  // namespace
}  // namespace redflow::runtime

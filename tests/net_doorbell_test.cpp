// The doorbell (src/net/doorbell.hpp) wakes every I/O thread of the remote
// tiles, SPITS and SCORE. Two promises: only the first ring after a drain
// writes to the eventfd (a system call per reply was a twentieth of a
// dispatch run), and no ring is lost to that, however rings and drains
// interleave (an early version cleared its flag before reading and hung
// bench/net_remote within seconds).
#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "net/doorbell.hpp"

namespace redflow::net {
namespace {

TEST(NetDoorbell, OnlyTheFirstRingAfterADrainWrites) {
  const Doorbell bell;
  ASSERT_TRUE(bell.ok());
  EXPECT_EQ(bell.drain(), 0u) << "nothing rang yet";
  bell.ring();
  bell.ring();
  bell.ring();
  EXPECT_EQ(bell.drain(), 1u) << "three rings, one write";
  EXPECT_EQ(bell.drain(), 0u);
  bell.ring();
  EXPECT_EQ(bell.drain(), 1u) << "a ring after a drain writes again";
}

// Ringers publish work under a lock and ring, as the executors and the
// engine's runners do; one thread sleeps in poll() on the eventfd, drains,
// and takes the work, as the I/O threads do. Every piece of work must be
// taken, and no poll may sleep a whole second while work waits.
TEST(NetDoorbell, NoRingIsLostWhileRingsAndDrainsInterleave) {
  const Doorbell bell;
  ASSERT_TRUE(bell.ok());
  constexpr int kRingers = 3, kEach = 20000;
  std::mutex mutex;
  std::deque<int> work;
  std::atomic<bool> go{false};
  std::vector<std::thread> ringers;
  for (int t = 0; t < kRingers; ++t)
    ringers.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kEach; ++i) {
        {
          std::lock_guard<std::mutex> lock(mutex);
          work.push_back(t);
        }
        bell.ring();
        if (i % 64 == t) std::this_thread::yield();  // vary the interleaving
      }
    });
  int taken = 0, stalls = 0;
  std::uint64_t writes = 0, drains = 0;
  go = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (taken < kRingers * kEach && std::chrono::steady_clock::now() < deadline) {
    pollfd p{bell.fd(), POLLIN, 0};
    if (::poll(&p, 1, 1000) == 0) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!work.empty()) ++stalls;  // work waited, nobody woke this thread
    }
    if (p.revents & POLLIN) writes += bell.drain(), ++drains;
    std::lock_guard<std::mutex> lock(mutex);
    taken += static_cast<int>(work.size());
    work.clear();
  }
  for (auto& t : ringers) t.join();
  EXPECT_EQ(taken, kRingers * kEach);
  EXPECT_EQ(stalls, 0) << "a ring was lost: work waited a whole second with the eventfd silent";
  // Only the first ring after a drain writes: at most one write per drain
  // (and one before the first), however many of the 60,000 rings came between.
  EXPECT_LE(writes, drains + 1) << "rings that found the bell rung wrote to the eventfd again";
}

}  // namespace
}  // namespace redflow::net

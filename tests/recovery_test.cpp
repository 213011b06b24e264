// Executions after a failed one: an execution that stops because an
// actor fails leaves nothing behind (queued work, slot claims) that a later
// execution of the same loaded graph could trip over. A watchdog turns a hang
// into a test failure instead of a stuck CI job.
#include <gtest/gtest.h>

#include <cstring>

#include "test_graphs.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

// X feeds `width` actors; one of them fails when X starts with kFailWord. A
// driver actor joins them all.
Graph fan_out_with_a_failing_actor(int width, int failing) {
  Graph g("fan_fail");
  const DataId x = g.input("X", testing::kBytes);
  std::vector<DataId> parts;
  for (int i = 0; i < width; ++i) {
    const DataId p = g.inner("p" + std::to_string(i), testing::kBytes);
    g.actor("w" + std::to_string(i), i == failing ? "t.fail_if" : "t.mix", {x}, p).args("salt=" + std::to_string(i));
    parts.push_back(p);
  }
  g.actor("join", "t.mix_driver", parts, g.output("Y", testing::kBytes));
  return g;
}

TEST(Recovery, FailedAndCleanExecutionsAlternateOnOneLoadedGraph) {
  const Registry reg = testing::test_registry();
  const Graph g = fan_out_with_a_failing_actor(256, 200);
  std::vector<std::byte> failing = testing::random_bytes(testing::kBytes, 1), clean = testing::random_bytes(testing::kBytes, 2);
  std::memcpy(failing.data(), &testing::kFailWord, 4);
  if (std::memcmp(clean.data(), &testing::kFailWord, 4) == 0) clean[0] = std::byte{0};
  const Outputs expected = testing::run_sequential(g, reg, {{"X", clean}});
  for (Scheduler sched : {Scheduler::kSteal, Scheduler::kHeft}) {
    Runtime rt(RuntimeOptions{.tiles = 2, .slots = 16, .slot_bytes = testing::kBytes, .scheduler = sched});
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    for (int i = 0; i < 200; ++i) {
      const std::string where = std::string(to_string(sched)) + " alternation " + std::to_string(i);
      const bool fail = i % 2 == 0;
      auto out = testing::within_seconds(30, where, [&] { return loaded->execute({{"X", fail ? failing : clean}}); });
      if (fail) {
        ASSERT_FALSE(out.ok()) << where;
        EXPECT_NE(out.status().message().find("'w200'"), std::string::npos) << where << ": " << out.status().message();
      } else {
        ASSERT_TRUE(out.ok()) << where << ": " << out.status().ToString();
        ASSERT_TRUE(*out == expected) << where;
        ASSERT_EQ(loaded->last_stats().actors_executed, 257u) << where << ": every actor runs exactly once";
      }
    }
  }
}

}  // namespace
}  // namespace redflow

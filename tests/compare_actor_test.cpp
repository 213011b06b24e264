// Compare actors (rf.compare) in a user's graph: the transformed graph of
// Fig. 3 written as DOT runs as written and votes; a compare over graph inputs
// or over a mix of actors and inputs votes on the bytes as docs/actors.md
// says. And per-actor *-diff inside a graph-wide *-same run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "test_graphs.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

constexpr std::size_t kBlock = 64;  // bytes per sorted block: 16 int32

Graph compare_of_inputs() {
  Graph g("vote_inputs");
  const DataId a = g.input("A", 16), b = g.input("B", 16), c = g.input("C", 16);
  g.actor("pick", "rf.compare", {a, b, c}, g.output("Y", 16));
  return g;
}

TEST(CompareInAUsersGraph, OverGraphInputsItVotesOnTheBytes) {
  const Registry reg = Registry::with_builtins();
  for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
    Runtime rt(RuntimeOptions{.tiles = 3, .scheduler = sched});
    auto loaded = rt.load(compare_of_inputs(), reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const std::vector<std::byte> one = testing::random_bytes(16, 1), two = testing::random_bytes(16, 2), three = testing::random_bytes(16, 3);
    auto run = [&](const std::vector<std::byte>& a, const std::vector<std::byte>& b, const std::vector<std::byte>& c) {
      return testing::within_seconds(30, std::string("compare under ") + to_string(sched),
                                     [&] { return loaded->execute({{"A", a}, {"B", b}, {"C", c}}); });
    };
    auto out = run(one, two, two);
    ASSERT_TRUE(out.ok()) << to_string(sched) << ": " << out.status().ToString();
    EXPECT_EQ(out->at("Y"), two) << to_string(sched);
    auto bad = run(one, two, three);
    ASSERT_FALSE(bad.ok()) << to_string(sched);
    EXPECT_NE(bad.status().message().find("'pick'"), std::string::npos) << bad.status().message();
    EXPECT_NE(bad.status().message().find("agree"), std::string::npos) << bad.status().message();
    out = run(three, one, three);
    ASSERT_TRUE(out.ok()) << to_string(sched) << ": " << out.status().ToString();
    EXPECT_EQ(out->at("Y"), three);
  }
}

TEST(CompareInAUsersGraph, OverAMixOfAnActorAndAnInputItVotesOnTheBytes) {
  const Registry reg = Registry::with_builtins();
  Graph g("mixed");
  const DataId x = g.input("X", kBlock), z = g.input("Z", kBlock), s = g.inner("S", kBlock);
  g.actor("sort", "i32.sort", {x}, s);
  g.actor("check", "rf.compare", {s, z}, g.output("Y", kBlock));
  const std::vector<std::byte> in = testing::random_bytes(kBlock, 4);
  // The sorted bytes of X, computed by the actor itself.
  std::vector<std::int32_t> v(kBlock / 4);
  std::memcpy(v.data(), in.data(), kBlock);
  std::sort(v.begin(), v.end());
  std::vector<std::byte> want(kBlock);
  std::memcpy(want.data(), v.data(), kBlock);
  for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
    Runtime rt(RuntimeOptions{.tiles = 2, .scheduler = sched});
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto run = [&](const std::vector<std::byte>& z) {
      return testing::within_seconds(30, std::string("compare under ") + to_string(sched), [&] { return loaded->execute({{"X", in}, {"Z", z}}); });
    };
    auto out = run(want);
    ASSERT_TRUE(out.ok()) << to_string(sched) << ": " << out.status().ToString();
    EXPECT_EQ(out->at("Y"), want);
    EXPECT_FALSE(run(in).ok()) << to_string(sched) << ": unsorted Z disagrees";
  }
}

// The transformed graph (Fig. 3) written as DOT and read back runs as
// written, under both schedulers and both *-diff configurations, with faults.
TEST(CompareInAUsersGraph, TheWrittenTransformationRunsAsWritten) {
  const Registry reg = Registry::with_builtins();
  const Graph g = testing::split_sort(8, kBlock);
  for (Redundancy r : {Redundancy::kDoubleDiff, Redundancy::kTripleDiff})
    for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
      const std::string where = std::string(to_string(r)) + "/" + to_string(sched);
      RuntimeOptions o{.tiles = 3, .slots = 3, .slot_bytes = kBlock, .scheduler = sched};
      o.quarantine_after = 0;
      o.faults.bitflip_probability = 0.1;
      o.faults.seed = 7;
      Runtime rt(o);
      auto t = apply_redundancy(g, r, rt.machine(), reg);
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      auto reread = Graph::from_dot_string(t->to_dot());
      ASSERT_TRUE(reread.ok()) << reread.status().ToString();
      auto loaded = rt.load(*reread, reg);
      ASSERT_TRUE(loaded.ok()) << where << ": " << loaded.status().ToString();
      const std::vector<std::byte> x = testing::random_bytes(8 * kBlock, 5);
      const Outputs expected = testing::run_sequential(g, reg, {{"X", x}});
      std::uint64_t detected = 0;
      for (int run = 0; run < 20; ++run) {
        auto out = loaded->execute({{"X", x}});
        ASSERT_TRUE(out.ok()) << where << ": " << out.status().ToString();
        EXPECT_TRUE(*out == expected) << where << " run " << run;
        EXPECT_EQ(loaded->last_stats().detected_faults, loaded->last_stats().injected_faults) << where;
        detected += loaded->last_stats().detected_faults;
      }
      EXPECT_GT(detected, 0u) << where << ": the compare actors must vote, not just copy";
    }
}

// ---------------------------------------------------------------- per-actor *-diff inside graph-wide *-same

TEST(PerActorDiffInsideSame, ReplicasRunOnceEach) {
  const Registry reg = testing::test_registry();
  Graph g("two");
  const DataId x = g.input("X", testing::kBytes), m = g.inner("M", testing::kBytes);
  g.actor("first", "t.mix", {x}, m).redundancy(Redundancy::kTripleDiff);
  g.actor("second", "t.mix", {m}, g.output("Y", testing::kBytes)).args("salt=3");
  const std::vector<std::byte> in = testing::random_bytes(testing::kBytes, 8);
  const Outputs expected = testing::run_sequential(g, reg, {{"X", in}});
  for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
    Runtime rt(RuntimeOptions{.tiles = 3, .slots = 8, .slot_bytes = testing::kBytes, .scheduler = sched, .trace = true});
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    for (Redundancy r : {Redundancy::kNone, Redundancy::kDoubleSame, Redundancy::kTripleSame}) {
      const std::string where = std::string(to_string(sched)) + "/" + to_string(r);
      auto out = loaded->execute({{"X", in}}, ExecuteOptions{.redundancy = r});
      ASSERT_TRUE(out.ok()) << where << ": " << out.status().ToString();
      EXPECT_EQ(*out, expected) << where;
      // Three replicas of 'first', each run once; 'second' runs as the graph says.
      EXPECT_EQ(loaded->last_stats().actors_executed, 3u + replica_count(r)) << where;
      unsigned replica_runs = 0;
      for (const TracedActor& a : loaded->last_trace().actors) replica_runs += a.original == "first";
      EXPECT_EQ(replica_runs, 3u) << where;
    }
  }
}

}  // namespace
}  // namespace redflow

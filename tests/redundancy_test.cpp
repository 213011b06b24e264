// Redundant execution (section 5 of Kühbacher et al.): every configuration
// under both schedulers against the sequential reference, replicas on
// distinct tiles (schedule and executed trace), voting under injected bit
// flips and a permanently faulty tile, switching configurations between
// executions, per-actor redundancy, and the errors users meet.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "schedule/heft.hpp"
#include "test_graphs.hpp"

namespace redflow {
namespace {

using testing::Shape;
using testing::make_inputs;

std::vector<Shape> shapes() {
  std::vector<Shape> v;
  v.push_back(testing::chain(10));
  v.push_back(testing::diamond());
  v.push_back(testing::fan_out_fan_in(6));
  v.push_back(testing::random_dag(40, 1));
  v.push_back(testing::random_dag(40, 2));
  return v;
}

RuntimeOptions options(Scheduler sched, unsigned tiles, Redundancy r) {
  RuntimeOptions o = testing::redundancy_options(sched, tiles, r);
  o.trace = true;
  return o;
}

// Replicas of one actor in one attempt must run on distinct tiles.
void expect_replicas_on_distinct_tiles(const ExecutionTrace& trace, const std::string& where) {
  std::map<std::pair<std::string, unsigned>, std::multiset<int>> tiles;
  for (const TracedActor& a : trace.actors)
    if (a.replica != 0 && a.name != a.original) tiles[{a.original, a.attempt}].insert(a.tile);
  for (const auto& [key, set] : tiles)
    EXPECT_EQ(std::set<int>(set.begin(), set.end()).size(), set.size()) << where << ": replicas of '" << key.first << "' share a tile";
}

struct RedundancyCase {
  Scheduler scheduler;
  Redundancy redundancy;
};

class EveryConfiguration : public ::testing::TestWithParam<RedundancyCase> {};

TEST_P(EveryConfiguration, OutputsEqualTheFaultFreeReference) {
  const RedundancyCase c = GetParam();
  Registry reg = testing::test_registry();
  Runtime rt(options(c.scheduler, 3, c.redundancy));
  for (Shape& s : shapes()) {
    auto loaded = rt.load(s.graph, reg);
    ASSERT_TRUE(loaded.ok()) << s.name << ": " << loaded.status().ToString();
    for (std::uint32_t round = 0; round < 2; ++round) {
      std::vector<std::vector<std::byte>> storage;
      Inputs in = make_inputs(s, storage, 7 * round + 3);
      auto out = loaded->execute(in);
      ASSERT_TRUE(out.ok()) << s.name << ": " << out.status().ToString();
      Outputs expected = testing::run_sequential(s.graph, reg, in);
      for (const auto& [name, bytes] : expected) EXPECT_TRUE(out->at(name) == bytes) << s.name << " output " << name;
      const ExecutionStats& st = loaded->last_stats();
      EXPECT_EQ(st.redundancy, to_string(c.redundancy));
      EXPECT_EQ(st.injected_faults, 0u);
      EXPECT_EQ(st.detected_faults, 0u);
      EXPECT_EQ(st.reexecutions, 0u);
      // Every compute actor runs once per replica; driver actors once.
      std::uint64_t expected_runs = 0;
      for (ActorId a = 0; a < s.graph.actors().size(); ++a)
        expected_runs += s.graph.actor(a).function == "t.mix_driver" ? 1 : replica_count(c.redundancy);
      EXPECT_EQ(st.actors_executed, expected_runs) << s.name;
      expect_replicas_on_distinct_tiles(loaded->last_trace(), s.name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothSchedulers, EveryConfiguration,
                         ::testing::Values(RedundancyCase{Scheduler::kHeft, Redundancy::kNone}, RedundancyCase{Scheduler::kHeft, Redundancy::kDoubleSame},
                                           RedundancyCase{Scheduler::kHeft, Redundancy::kTripleSame}, RedundancyCase{Scheduler::kHeft, Redundancy::kDoubleDiff},
                                           RedundancyCase{Scheduler::kHeft, Redundancy::kTripleDiff}, RedundancyCase{Scheduler::kSteal, Redundancy::kNone},
                                           RedundancyCase{Scheduler::kSteal, Redundancy::kDoubleSame}, RedundancyCase{Scheduler::kSteal, Redundancy::kTripleSame},
                                           RedundancyCase{Scheduler::kSteal, Redundancy::kDoubleDiff}, RedundancyCase{Scheduler::kSteal, Redundancy::kTripleDiff}),
                         [](const auto& info) {
                           std::string n = std::string(to_string(info.param.scheduler)) + "_" + to_string(info.param.redundancy);
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(RedundantHeft, ReplicasAreScheduledConsecutivelyOnDistinctTiles) {
  Registry reg = testing::test_registry();
  for (Redundancy r : {Redundancy::kDoubleDiff, Redundancy::kTripleDiff}) {
    Runtime rt(options(Scheduler::kHeft, 4, r));
    Shape s = testing::random_dag(60, 5);
    auto loaded = rt.load(s.graph, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ASSERT_TRUE(loaded->executed_graph(r).ok());
    const Graph& g = **loaded->executed_graph(r);
    const Schedule& sched = **loaded->heft_schedule(r);
    std::map<std::string, std::set<int>> tiles;
    std::map<std::string, unsigned> count;
    for (ActorId a = 0; a < g.actors().size(); ++a) {
      auto of = g.actor(a).extra.find("replica_of");
      if (of == g.actor(a).extra.end()) continue;
      EXPECT_NE(sched.actors[a].tile, kDriverTile) << g.actor(a).name;
      tiles[of->second].insert(sched.actors[a].tile);
      ++count[of->second];
    }
    ASSERT_FALSE(tiles.empty());
    for (const auto& [name, set] : tiles) {
      EXPECT_EQ(set.size(), replica_count(r)) << name;
      EXPECT_EQ(count[name], replica_count(r)) << name;
    }
    // Compare actors sit on the driver, as in the paper.
    for (ActorId a = 0; a < g.actors().size(); ++a) {
      if (g.actor(a).function == "rf.compare") {
        EXPECT_EQ(sched.actors[a].tile, kDriverTile);
      }
    }
  }
}

TEST(RedundantHeft, GroupsInTheCoreNeverShareAProcessor) {
  // Two independent tasks of a group on 2 processors, the second would be faster on processor 0.
  schedule::HeftProblem p;
  p.processors = 2;
  p.cost = {{1, 5}, {1, 5}, {1, 1}};
  p.successors = {{{2, 0}}, {{2, 0}}, {}};
  p.group = {0, 0, -1};
  ASSERT_TRUE(schedule::check_heft_problem(p).ok());
  auto r = schedule::heft(p);
  EXPECT_NE(r.proc[0], r.proc[1]);
  // Placed one after the other in the list.
  auto pos = [&](std::size_t t) { return std::find(r.order.begin(), r.order.end(), t) - r.order.begin(); };
  EXPECT_EQ(std::abs(pos(0) - pos(1)), 1);
  p.group = {0, 0, 0};
  EXPECT_FALSE(schedule::check_heft_problem(p).ok()) << "three replicas cannot fit two processors";
}

TEST(Voting, FaultyTileIsOutvotedAndQuarantinedUnder3xDiff) {
  Registry reg = testing::test_registry();
  for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
    RuntimeOptions o = options(sched, 4, Redundancy::kTripleDiff);
    ASSERT_TRUE(parse_fault_spec("faulty-tile:1", o.faults).ok());
    Runtime rt(o);
    Shape s = testing::random_dag(40, 3);
    auto loaded = rt.load(s.graph, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    std::uint64_t injected = 0, detected = 0;
    // Quarantine needs 3 lost votes in one execution, which random stealing
    // may not give tile 1 at once: run until it is quarantined, then once
    // more. Under steal a starved runner thread may get no replica for many
    // executions of a few milliseconds (ASan with the other core busy: none
    // in 14), so the bound is generous; it only stops a run that never ends.
    std::uint32_t rounds = 3;
    for (std::uint32_t round = 0; round < rounds && round < 200; ++round) {
      std::vector<std::vector<std::byte>> storage;
      Inputs in = make_inputs(s, storage, round + 11);
      auto out = loaded->execute(in);
      ASSERT_TRUE(out.ok()) << to_string(sched) << ": " << out.status().ToString();
      Outputs expected = testing::run_sequential(s.graph, reg, in);
      for (const auto& [name, bytes] : expected) EXPECT_TRUE(out->at(name) == bytes) << to_string(sched) << " output " << name;
      injected += loaded->last_stats().injected_faults;
      detected += loaded->last_stats().detected_faults;
      expect_replicas_on_distinct_tiles(loaded->last_trace(), to_string(sched));
      if (rt.quarantined_tiles().empty()) rounds = std::max(rounds, round + 3);  // quarantined in round + 1 at the earliest
    }
    EXPECT_GT(injected, 0u) << "tile 1 never ran anything";
    EXPECT_EQ(detected, injected) << "every corrupted replica is outvoted";
    EXPECT_EQ(rt.quarantined_tiles(), std::vector<unsigned>{1}) << to_string(sched);
    const ExecutionStats& st = loaded->last_stats();
    EXPECT_EQ(st.quarantined_tiles, std::vector<unsigned>{1});
    EXPECT_TRUE(st.tiles[1].quarantined);
    // Once quarantined (in an earlier execution), the tile runs nothing.
    EXPECT_EQ(st.tiles[1].actors, 0u) << to_string(sched);
  }
}

TEST(Voting, EveryBitFlipIsDetectedAndCorrectedUnderTwoReplicas) {
  Registry reg = testing::test_registry();
  for (Redundancy r : {Redundancy::kDoubleSame, Redundancy::kDoubleDiff, Redundancy::kTripleSame, Redundancy::kTripleDiff})
    for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
      const std::string where = std::string(to_string(r)) + "/" + to_string(sched);
      RuntimeOptions o = options(sched, 3, r);
      o.quarantine_after = 0;
      ASSERT_TRUE(parse_fault_spec("bitflip:p=0.05,seed=42", o.faults).ok());
      Runtime rt(o);
      Shape s = testing::random_dag(40, 4);
      auto loaded = rt.load(s.graph, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      std::uint64_t injected = 0, detected = 0, reexecuted = 0;
      for (std::uint32_t round = 0; round < 8; ++round) {
        std::vector<std::vector<std::byte>> storage;
        Inputs in = make_inputs(s, storage, round + 1);
        auto out = loaded->execute(in);
        ASSERT_TRUE(out.ok()) << where << ": " << out.status().ToString();
        Outputs expected = testing::run_sequential(s.graph, reg, in);
        for (const auto& [name, bytes] : expected) ASSERT_TRUE(out->at(name) == bytes) << where << " output " << name << " run " << round;
        injected += loaded->last_stats().injected_faults;
        detected += loaded->last_stats().detected_faults;
        reexecuted += loaded->last_stats().reexecutions;
      }
      EXPECT_GT(injected, 0u) << where;
      EXPECT_EQ(detected, injected) << where;
      if (replica_count(r) == 2) {
        EXPECT_GT(reexecuted, 0u) << where << ": two replicas that disagree must run again";
      }
    }
}

TEST(Voting, WithoutRedundancyBitFlipsCorruptOutputsSilently) {
  Registry reg = testing::test_registry();
  RuntimeOptions o = options(Scheduler::kSteal, 2, Redundancy::kNone);
  ASSERT_TRUE(parse_fault_spec("bitflip:p=0.2,seed=9", o.faults).ok());
  Runtime rt(o);
  Shape s = testing::chain(10);
  auto loaded = rt.load(s.graph, reg);
  ASSERT_TRUE(loaded.ok());
  unsigned silent = 0;
  std::uint64_t injected = 0;
  for (std::uint32_t round = 0; round < 10; ++round) {
    std::vector<std::vector<std::byte>> storage;
    Inputs in = make_inputs(s, storage, round + 1);
    auto out = loaded->execute(in);
    ASSERT_TRUE(out.ok());
    silent += out->at("Y") != testing::run_sequential(s.graph, reg, in).at("Y");
    injected += loaded->last_stats().injected_faults;
    EXPECT_EQ(loaded->last_stats().detected_faults, 0u);
  }
  EXPECT_GT(injected, 0u);
  EXPECT_GT(silent, 0u) << "flipped bits in a chain must reach the output";
}

TEST(Voting, SameSeedSameFaults) {
  Registry reg = testing::test_registry();
  auto campaign = [&](std::uint64_t seed) {
    RuntimeOptions o = options(Scheduler::kSteal, 3, Redundancy::kTripleDiff);
    o.faults.bitflip_probability = 0.1;
    o.faults.seed = seed;
    o.quarantine_after = 0;
    Runtime rt(o);
    Shape s = testing::random_dag(30, 8);
    auto loaded = rt.load(s.graph, reg);
    std::vector<std::uint64_t> injected;
    for (std::uint32_t round = 0; round < 5; ++round) {
      std::vector<std::vector<std::byte>> storage;
      EXPECT_TRUE(loaded->execute(make_inputs(s, storage, round)).ok());
      injected.push_back(loaded->last_stats().injected_faults);
    }
    return injected;
  };
  EXPECT_EQ(campaign(5), campaign(5));
  EXPECT_NE(campaign(5), campaign(6));
}

TEST(Configurations, ChangeBetweenExecutionsWithoutReloading) {
  Registry reg = testing::test_registry();
  for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
    Runtime rt(options(sched, 3, Redundancy::kNone));
    Shape s = testing::random_dag(30, 6);
    auto loaded = rt.load(s.graph, reg);
    ASSERT_TRUE(loaded.ok());
    std::vector<std::vector<std::byte>> storage;
    Inputs in = make_inputs(s, storage, 99);
    Outputs expected = testing::run_sequential(s.graph, reg, in);
    for (Redundancy r : {Redundancy::kTripleDiff, Redundancy::kNone, Redundancy::kDoubleSame, Redundancy::kDoubleDiff, Redundancy::kTripleDiff}) {
      auto out = loaded->execute(in, ExecuteOptions{.redundancy = r});
      ASSERT_TRUE(out.ok()) << to_string(r) << ": " << out.status().ToString();
      EXPECT_EQ(*out, expected) << to_string(r);
      EXPECT_EQ(loaded->last_stats().redundancy, to_string(r));
    }
  }
}

TEST(Configurations, PerActorRedundancyOverridesTheGraph) {
  Registry reg = testing::test_registry();
  Shape s = testing::diamond();
  s.graph.mutable_actor(*s.graph.find_actor("join")).redundancy = Redundancy::kTripleDiff;
  s.graph.mutable_actor(*s.graph.find_actor("top_left")).redundancy = Redundancy::kDoubleSame;
  // The attribute survives DOT.
  auto reparsed = Graph::from_dot_string(s.graph.to_dot());
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  ASSERT_TRUE(reparsed->actor(*reparsed->find_actor("join")).redundancy.has_value());
  EXPECT_EQ(*reparsed->actor(*reparsed->find_actor("join")).redundancy, Redundancy::kTripleDiff);

  Runtime rt(options(Scheduler::kSteal, 3, Redundancy::kNone));
  auto loaded = rt.load(*reparsed, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->executed_graph(Redundancy::kNone).ok());
  const Graph& g = **loaded->executed_graph(Redundancy::kNone);
  EXPECT_TRUE(g.find_actor("join.r3").has_value());
  EXPECT_TRUE(g.find_actor("join.compare").has_value());
  EXPECT_FALSE(g.find_actor("top_right.r1").has_value()) << "best-effort actors stay single";
  std::vector<std::vector<std::byte>> storage;
  Inputs in = make_inputs(s, storage, 5);
  auto out = loaded->execute(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, testing::run_sequential(s.graph, reg, in));
  // join x3, top_left x2, top_right x1.
  EXPECT_EQ(loaded->last_stats().actors_executed, 6u);
}

TEST(Configurations, TransformedGraphRunsAsAPlainGraph) {
  // Fig. 3 written out and read back is an ordinary graph whose compare actors still vote.
  Registry reg = testing::test_registry();
  Shape s = testing::random_dag(20, 9);
  RuntimeOptions o = options(Scheduler::kHeft, 3, Redundancy::kNone);
  MachineModel m;
  m.tiles = 3;
  m.slots = o.slots;
  m.slot_bytes = o.slot_bytes;
  Registry with_compare = reg;
  with_compare.add("rf.compare", *Registry::with_builtins().find("rf.compare"));
  auto t = apply_redundancy(s.graph, Redundancy::kTripleDiff, m, with_compare);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const std::string dir = ::testing::TempDir() + "/redflow_fig3";
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(t->write_dot_file(dir + "/fig3.dot").ok());
  auto reread = Graph::from_dot_file(dir + "/fig3.dot");
  ASSERT_TRUE(reread.ok()) << reread.status().ToString();
  EXPECT_TRUE(reread->find_actor("a0.compare").has_value());
  Runtime rt(o);
  auto loaded = rt.load(*reread, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::vector<std::vector<std::byte>> storage;
  Inputs in = make_inputs(s, storage, 1);
  auto out = loaded->execute(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, testing::run_sequential(s.graph, reg, in));
}

TEST(Configurations, ClearErrors) {
  Registry reg = testing::test_registry();
  Shape s = testing::diamond();
  {
    Runtime rt(options(Scheduler::kHeft, 2, Redundancy::kNone));
    auto loaded = rt.load(s.graph, reg);
    ASSERT_TRUE(loaded.ok());
    EXPECT_FALSE(loaded->usable(Redundancy::kTripleDiff).ok());
    std::vector<std::vector<std::byte>> storage;
    auto out = loaded->execute(make_inputs(s, storage, 1), ExecuteOptions{.redundancy = Redundancy::kTripleDiff});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("3 compute tiles"), std::string::npos) << out.status().message();
    EXPECT_TRUE(loaded->execute(make_inputs(s, storage, 1), ExecuteOptions{.redundancy = Redundancy::kDoubleDiff}).ok());
  }
  {
    Runtime rt(options(Scheduler::kHeft, 2, Redundancy::kTripleDiff));
    auto loaded = rt.load(s.graph, reg);
    ASSERT_FALSE(loaded.ok()) << "the runtime's own configuration must be possible";
  }
  {
    Shape f = testing::fan_out_fan_in(4);
    f.graph.mutable_actor(*f.graph.find_actor("join_driver")).redundancy = Redundancy::kDoubleDiff;
    Runtime rt(options(Scheduler::kHeft, 3, Redundancy::kNone));
    auto loaded = rt.load(f.graph, reg);
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.status().message().find("'join_driver'"), std::string::npos) << loaded.status().message();
  }
  {
    auto bad = Graph::from_dot_string("digraph g { X [kind=input, bytes=4]; Y [kind=output, bytes=4]; a [actor=\"t.mix\", redundancy=\"4x-same\"]; X -> a [port=0]; a -> Y; }");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("4x-same"), std::string::npos);
  }
  FaultInjection f;
  EXPECT_FALSE(parse_fault_spec("bitflip:p=2", f).ok());
  EXPECT_FALSE(parse_fault_spec("bitflip:q=0.1", f).ok());
  EXPECT_FALSE(parse_fault_spec("cosmic-ray:1", f).ok());
  EXPECT_FALSE(parse_fault_spec("slow-tile:0", f).ok());
  EXPECT_TRUE(parse_fault_spec("slow-tile:0,factor=3", f).ok());
  EXPECT_FALSE(parse_redundancy_list("none,4x-diff").ok());
  EXPECT_EQ(parse_redundancy_list("none,3x-diff")->size(), 2u);
}

}  // namespace
}  // namespace redflow

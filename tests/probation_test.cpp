// Quarantine in two steps (docs/redundancy.md, "Quarantine"): a tile that
// loses too many votes in one execution leaves service on probation, a
// known-answer test puts a healthy one back, and only a tile that keeps
// failing it is quarantined for good. A run that cannot get the distinct
// tiles its replicas need says it ran degraded, or fails when protection is
// required.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/tile_places.hpp"
#include "test_graphs.hpp"

namespace redflow {
namespace {

using testing::make_inputs;

TEST(TilePlacesProbation, ASuspectedTileIsBackAfterAPassAndOutForGoodAfterTheRoundsFailedInARow) {
  runtime::TilePlaces places(4, 2, 3);
  places.lose_vote(1, 4, 2);
  EXPECT_EQ(places.lose_vote(1, 4, 2), 2u);  // suspected: out of service, on probation
  EXPECT_FALSE(places.healthy(1));
  EXPECT_TRUE(places.on_probation(1));
  EXPECT_EQ(places.quarantined(4), std::vector<unsigned>{1});
  EXPECT_EQ(places.probation_tiles(4), std::vector<unsigned>{1});
  EXPECT_EQ(places.out_of_service(4), "tile 1 on probation, 3 of 4 compute tiles in service");
  EXPECT_FALSE(places.fail_probation(1));
  EXPECT_EQ(places.failed_probations(1), 1u);
  places.pass_probation(1);  // a pass clears the record
  EXPECT_TRUE(places.healthy(1));
  EXPECT_FALSE(places.on_probation(1));
  EXPECT_EQ(places.failed_probations(1), 0u);
  EXPECT_TRUE(places.quarantined(4).empty());
  places.reset_votes(4);
  places.lose_vote(1, 4, 2);
  places.lose_vote(1, 4, 2);
  EXPECT_FALSE(places.fail_probation(1));
  EXPECT_FALSE(places.fail_probation(1));
  EXPECT_TRUE(places.fail_probation(1));  // the third in a row: for good
  EXPECT_FALSE(places.on_probation(1));
  EXPECT_FALSE(places.healthy(1));
  places.pass_probation(1);  // too late: no test puts it back
  EXPECT_FALSE(places.healthy(1));
  EXPECT_EQ(places.quarantined(4), std::vector<unsigned>{1});
  EXPECT_TRUE(places.probation_tiles(4).empty());
  EXPECT_EQ(places.out_of_service(4), "tile 1 quarantined, 3 of 4 compute tiles in service");
}

TEST(TilePlacesProbation, ZeroRoundsQuarantinesForGoodAtTheSuspicion) {
  runtime::TilePlaces places(3, 1, 0);
  EXPECT_EQ(places.lose_vote(2, 3, 1), 1u);
  EXPECT_FALSE(places.healthy(2));
  EXPECT_FALSE(places.on_probation(2));
  places.pass_probation(2);
  EXPECT_FALSE(places.healthy(2));
}

// Runs `loaded` once on inputs seeded by `round` and checks its outputs
// against the sequential reference.
void execute_and_check(LoadedGraph& loaded, const testing::Shape& s, const Registry& reg, std::uint32_t round, const ExecuteOptions& eo = {}) {
  std::vector<std::vector<std::byte>> storage;
  const Inputs in = make_inputs(s, storage, round);
  auto out = loaded.execute(in, eo);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, testing::run_sequential(s.graph, reg, in)) << "round " << round;
}

// A tile that corrupts everything it computes is suspected in the first
// execution in which it loses 3 votes, and quarantined for good after three
// failed known-answer tests: at the end of that execution and before each
// of the next two. It runs nothing from its suspicion on.
TEST(Probation, APermanentlyFaultyTileIsQuarantinedForGoodTwoExecutionsAfterItsSuspicion) {
  const Registry reg = testing::test_registry();
  for (Scheduler sched : {Scheduler::kHeft, Scheduler::kSteal}) {
    SCOPED_TRACE(to_string(sched));
    RuntimeOptions o = testing::redundancy_options(sched, 4, Redundancy::kTripleDiff);
    ASSERT_TRUE(parse_fault_spec("faulty-tile:1", o.faults).ok());
    Runtime rt(o);
    const testing::Shape s = testing::random_dag(40, 3);
    auto loaded = rt.load(s.graph, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    std::uint32_t round = 0;
    // Under stealing, tile 1 loses votes only for the replicas it takes: on a
    // loaded machine (a sanitizer stage, three tests at once) its runner may
    // be scheduled too late to take three in each of a dozen short executions.
    for (; round < 200 && rt.quarantined_tiles().empty(); ++round) execute_and_check(*loaded, s, reg, round);
    ASSERT_EQ(rt.quarantined_tiles(), std::vector<unsigned>{1}) << "tile 1 never lost 3 votes in one execution";
    const ExecutionStats first = loaded->last_stats();
    EXPECT_EQ(first.probation_tiles, std::vector<unsigned>{1}) << "suspected, not yet quarantined for good";
    EXPECT_TRUE(first.tiles[1].on_probation);
    EXPECT_EQ(first.probation_tests, 1u) << "tested once, at the end of the execution that suspected it";
    EXPECT_TRUE(first.reinstated_tiles.empty());
    execute_and_check(*loaded, s, reg, round++);
    EXPECT_EQ(loaded->last_stats().probation_tests, 1u) << "tested again before the next execution";
    EXPECT_EQ(loaded->last_stats().probation_tiles, std::vector<unsigned>{1});
    EXPECT_EQ(loaded->last_stats().tiles[1].actors, 0u) << "a tile on probation runs nothing";
    execute_and_check(*loaded, s, reg, round++);
    const ExecutionStats& last = loaded->last_stats();
    EXPECT_EQ(last.probation_tests, 1u);
    EXPECT_TRUE(last.probation_tiles.empty()) << "the third failed test quarantines it for good";
    EXPECT_EQ(last.quarantined_tiles, std::vector<unsigned>{1});
    EXPECT_TRUE(last.tiles[1].quarantined);
    EXPECT_FALSE(last.tiles[1].on_probation);
    EXPECT_EQ(last.tiles[1].actors, 0u);
    execute_and_check(*loaded, s, reg, round++);
    EXPECT_EQ(loaded->last_stats().probation_tests, 0u) << "no test puts a tile quarantined for good back";
    EXPECT_EQ(rt.quarantined_tiles(), std::vector<unsigned>{1});
  }
}

// A tile faulty for a while (its faults given per execution) is suspected,
// fails its tests while it is faulty, and serves again at the first test
// after it healed; its record is clean after that.
TEST(Probation, ATileFaultyForAWhileIsPutBackWhenItHeals) {
  const Registry reg = testing::test_registry();
  RuntimeOptions o = testing::redundancy_options(Scheduler::kHeft, 4, Redundancy::kTripleDiff);
  Runtime rt(o);
  const testing::Shape s = testing::random_dag(40, 4);
  auto loaded = rt.load(s.graph, reg);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ExecuteOptions faulty;
  faulty.faults = FaultInjection{};
  ASSERT_TRUE(parse_fault_spec("faulty-tile:2", *faulty.faults).ok());
  std::uint32_t round = 0;
  for (; round < 12 && rt.quarantined_tiles().empty(); ++round) execute_and_check(*loaded, s, reg, round, faulty);
  ASSERT_EQ(rt.quarantined_tiles(), std::vector<unsigned>{2});
  execute_and_check(*loaded, s, reg, round++, faulty);  // still faulty: its second test fails
  EXPECT_EQ(loaded->last_stats().probation_tiles, std::vector<unsigned>{2});
  EXPECT_TRUE(loaded->last_stats().reinstated_tiles.empty());
  execute_and_check(*loaded, s, reg, round++);  // healed: the test before this execution passes
  const ExecutionStats& st = loaded->last_stats();
  EXPECT_EQ(st.reinstated_tiles, std::vector<unsigned>{2});
  EXPECT_TRUE(st.quarantined_tiles.empty());
  EXPECT_FALSE(st.tiles[2].quarantined);
  EXPECT_GT(st.tiles[2].actors, 0u) << "back in service for the execution its test came before";
  EXPECT_TRUE(rt.quarantined_tiles().empty());
}

// Transient flips on 3 tiles: tiles are suspected now and then, and every
// one passes its test at the end of that execution, so no run ends with a
// tile out of service, and no run's output is wrong.
TEST(Probation, TransientFlipsLeaveNoTileOutOfServiceAtTheEndOfAnyRun) {
  const Registry reg = testing::test_registry();
  const testing::Shape s = testing::random_dag(60, 7);
  for (Redundancy r : {Redundancy::kDoubleDiff, Redundancy::kTripleDiff}) {
    for (double p : {0.01, 0.05}) {
      SCOPED_TRACE(std::string(to_string(r)) + " p=" + std::to_string(p));
      RuntimeOptions o = testing::redundancy_options(Scheduler::kSteal, 3, r);
      o.faults.bitflip_probability = p;
      o.faults.seed = 11;
      Runtime rt(o);
      auto loaded = rt.load(s.graph, reg);
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      std::uint64_t reinstated = 0, injected = 0;
      for (std::uint32_t round = 0; round < 150; ++round) {
        std::vector<std::vector<std::byte>> storage;
        const Inputs in = make_inputs(s, storage, round);
        auto out = loaded->execute(in);
        ASSERT_TRUE(out.ok()) << "round " << round << ": " << out.status().ToString();
        ASSERT_EQ(*out, testing::run_sequential(s.graph, reg, in)) << "silent corruption in round " << round;
        const ExecutionStats& st = loaded->last_stats();
        ASSERT_TRUE(st.quarantined_tiles.empty()) << "round " << round << " ended with a healthy tile out of service";
        reinstated += st.reinstated_tiles.size();
        injected += st.injected_faults;
      }
      EXPECT_GT(injected, 0u);
      if (p == 0.05) {
        EXPECT_GT(reinstated, 0u) << "no tile was ever suspected: the case this test is for never came";
      }
    }
  }
}

// 3x-diff on 3 tiles with one tile out of service cannot place its third
// replicas: the stats say so (degraded, with the replicas skipped), and
// with require_protection the execution fails naming why instead.
TEST(Probation, TooFewTilesForTheReplicasIsDegradedAndFailsWhenProtectionIsRequired) {
  const Registry reg = testing::test_registry();
  const testing::Shape s = testing::random_dag(40, 5);
  for (bool required : {false, true}) {
    SCOPED_TRACE(required ? "required" : "not required");
    RuntimeOptions o = testing::redundancy_options(Scheduler::kHeft, 3, Redundancy::kTripleDiff);
    o.require_protection = required;
    o.probation_rounds = 0;  // quarantined for good at once
    ASSERT_TRUE(parse_fault_spec("faulty-tile:0", o.faults).ok());
    Runtime rt(o);
    auto loaded = rt.load(s.graph, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    bool failed = false, degraded = false;
    for (std::uint32_t round = 0; round < 6 && !failed; ++round) {
      std::vector<std::vector<std::byte>> storage;
      const Inputs in = make_inputs(s, storage, round);
      const bool out_before = !rt.quarantined_tiles().empty();
      auto out = loaded->execute(in);
      if (!out.ok()) {
        failed = true;
        EXPECT_TRUE(required) << out.status().ToString();
        EXPECT_EQ(out.status().code(), Status::Code::kGaveUp) << out.status().ToString();
        EXPECT_NE(out.status().message().find("cannot have its replicas on distinct tiles"), std::string::npos) << out.status().ToString();
        EXPECT_NE(out.status().message().find("tile 0 quarantined"), std::string::npos) << out.status().ToString();
        continue;
      }
      EXPECT_EQ(*out, testing::run_sequential(s.graph, reg, in));
      const ExecutionStats& st = loaded->last_stats();
      EXPECT_EQ(st.degraded(), st.skipped_replicas > 0);
      degraded = degraded || st.degraded();
      if (out_before) {
        EXPECT_TRUE(st.degraded()) << "a whole execution with 2 tiles for 3 replicas must skip some";
      }
    }
    EXPECT_EQ(failed, required);
    if (!required) {
      EXPECT_TRUE(degraded);
    }
  }
}

}  // namespace
}  // namespace redflow

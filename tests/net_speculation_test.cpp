// Speculative copies of stragglers (src/runtime/speculation.cpp):
// a worker made slow (slow-tile fault injection: its actors take 30 times as
// long) keeps actors on the wire while the other tile runs out of work; the
// idle tile runs copies, the first result of each actor is used, and the
// outputs are those of a one-process run.
#include <gtest/gtest.h>

#include <string>

#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

using testing::has_mark;
using testing::WorkerProcesses;

Graph sleepy_fanout(int n, int ms) { return testing::sleep_then_add("net_speculation", n, ms, 100); }

struct StragglerRun {
  Outputs out;
  ExecutionStats stats;
  bool marked = false;
};

// One execution of `g` on 2 workers, worker tile 1 slowed 30 times.
// `slowdown`: how many times slower tile 1 runs each actor. The straggler's
// actors sleep while the copies need CPU, so on a loaded machine the factor
// must leave the copies far ahead for the straggler to be still busy at the end.
StragglerRun run_with_straggler(const Graph& g, Scheduler scheduler, double speculate_after_s, double slowdown) {
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 3);
  WorkerProcesses workers;
  std::vector<std::string> extra = testing::kWorkerSlots;
  extra.insert(extra.end(), {"--lib", REDFLOW_TEST_PLUGIN});
  RuntimeOptions o = testing::remote_options(0, 2, scheduler);
  o.speculate_after_s = speculate_after_s;
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(2, endpoint, extra); };
  StragglerRun run;
  testing::within_seconds(60, "a run with a straggler", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, testing::registry_with_test_plugin());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExecuteOptions eo;
    eo.trace = true;
    FaultInjection slow;
    slow.slow_tiles = {{1, slowdown}};
    eo.faults = slow;
    auto out = loaded->execute({{"X0", x0}}, eo);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    run.out = *out;
    run.stats = loaded->last_stats();
    run.marked = has_mark(loaded->last_trace(), "speculative-copy");
    // Copies fetch their inputs from the straggler, and the execution ends
    // without waiting for the straggler's own fetches: still in step.
    testing::expect_trace_shows_what_peers_fetched(loaded->last_trace(), run.stats);
  });
  return run;
}

class NetSpeculation : public ::testing::TestWithParam<Scheduler> {};

TEST_P(NetSpeculation, AnIdleTileCopiesAStragglersActorsAndTheFirstResultOfEachIsUsed) {
  const Graph g = sleepy_fanout(8, 10);  // 10 ms actors; 1 s on the slowed worker
  const StragglerRun run = run_with_straggler(g, GetParam(), 0.05, 100);
  EXPECT_EQ(run.out, testing::plugin_reference(g, {{"X0", testing::seeded_bytes(testing::kNetBytes, 3)}}));
  EXPECT_GE(run.stats.speculative_copies, 1u);
  EXPECT_GE(run.stats.speculative_wins, 1u) << "a 10 ms copy beats a 1 s straggler";
  EXPECT_LE(run.stats.speculative_wins, run.stats.speculative_copies);
  EXPECT_GE(run.stats.tiles[0].speculative, 1u) << "the fast tile ran the copies";
  EXPECT_EQ(run.stats.tiles[1].speculative, 0u);
  EXPECT_TRUE(run.marked) << "the trace marks each copy";
  EXPECT_GE(run.stats.abandoned, 1u) << "the execution ended on copies without waiting for the straggler's answers";
  const std::string json = run.stats.to_json();
  EXPECT_NE(json.find("\"speculative_copies\": " + std::to_string(run.stats.speculative_copies)), std::string::npos) << json;
}

INSTANTIATE_TEST_SUITE_P(Schedulers, NetSpeculation, ::testing::Values(Scheduler::kSteal, Scheduler::kHeft),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(NetSpeculationOff, WithSpeculationOffTheStragglerRunsItsOwnActors) {
  const Graph g = sleepy_fanout(4, 10);
  const StragglerRun run = run_with_straggler(g, Scheduler::kHeft, 0, 30);
  EXPECT_EQ(run.out, testing::plugin_reference(g, {{"X0", testing::seeded_bytes(testing::kNetBytes, 3)}}));
  EXPECT_EQ(run.stats.speculative_copies, 0u);
  EXPECT_GT(run.stats.tiles[1].actors, 0u);
  EXPECT_FALSE(run.marked);
}

// Six 10 ms actors and one of 600 ms on 2 workers, none slowed: the long one
// is no straggler. `long_hint`: its work= hint (0: none).
Graph one_long_among_short(double long_hint) {
  Graph g("net_speculation_long");
  const DataId x0 = g.input("X0", testing::kNetBytes);
  for (int c = 0; c < 7; ++c) {
    const std::string i = std::to_string(c);
    const int ms = c == 0 ? 600 : 10;
    const DataId k = g.constant("K" + i, testing::seeded_bytes(testing::kNetBytes, 200 + static_cast<std::uint32_t>(c)));
    const DataId slept = g.inner("s" + i, testing::kNetBytes);
    ActorBuilder sleep = g.actor("sleep" + i, "test.sleep", {k}, slept);
    sleep.args("ms=" + std::to_string(ms));
    if (c != 0) sleep.work(ms * 1e6);
    if (c == 0 && long_hint > 0) sleep.work(long_hint);
    g.actor("add" + i, "i32.add", {slept, x0}, g.output("y" + i, testing::kNetBytes));
  }
  return g;
}

struct PlainRun {
  ExecutionStats stats;
  ExecutionTrace trace;
};

// The first execution of `g` in a new runtime on 2 workers, copies after 50 ms.
PlainRun first_execution(const Graph& g) {
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 3);
  WorkerProcesses workers;
  std::vector<std::string> extra = testing::kWorkerSlots;
  extra.insert(extra.end(), {"--lib", REDFLOW_TEST_PLUGIN});
  RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kSteal);
  o.speculate_after_s = 0.05;
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(2, endpoint, extra); };
  PlainRun run;
  testing::within_seconds(60, "a run with one long actor", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, testing::registry_with_test_plugin());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExecuteOptions eo;
    eo.trace = true;
    auto out = loaded->execute({{"X0", x0}}, eo);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, testing::plugin_reference(g, {{"X0", x0}}));
    run.stats = loaded->last_stats();
    run.trace = loaded->last_trace();
  });
  return run;
}

// Unknown, the long actor's estimate is the tiles' mean run (milliseconds),
// and the idle tile copies it: the control that shows the others mean something.
TEST(NetSpeculationEstimate, ALongActorWithoutAKnownCostIsTakenForAStraggler) {
  const PlainRun run = first_execution(one_long_among_short(0));
  EXPECT_GE(run.stats.speculative_copies, 1u);
}

// Its cost known from a work= hint, the straggler estimate waits for it.
TEST(NetSpeculationEstimate, ALongActorWithAWorkHintIsNotCopiedInTheFirstExecution) {
  const PlainRun run = first_execution(one_long_among_short(600e6));  // 600 ms at 1e9 ops/s
  EXPECT_EQ(run.stats.speculative_copies, 0u) << "a 600 ms actor planned as such was copied as a straggler";
}

// Its cost learned from an earlier run's trace (what `redflow run` keeps per
// host) and set on a new load: the first execution there copies nothing.
TEST(NetSpeculationEstimate, ALongActorWithALearnedCostIsNotCopiedInTheFirstExecution) {
  const Graph unhinted = one_long_among_short(0);
  const PlainRun earlier = first_execution(unhinted);
  CostModel costs;
  const CostLearning learned = costs.learn(unhinted, earlier.trace, testing::registry_with_test_plugin());
  ASSERT_GT(learned.samples, 0u);
  Graph g = unhinted;
  ASSERT_GE(costs.apply(g, testing::registry_with_test_plugin()), 1u);
  const ActorId long_actor = *g.find_actor("sleep0");
  EXPECT_GT(g.actor(long_actor).work, 0.3e9) << "the long actor's learned cost";
  const PlainRun run = first_execution(g);
  EXPECT_EQ(run.stats.speculative_copies, 0u) << "a 600 ms actor with a learned cost was copied as a straggler";
}

}  // namespace
}  // namespace redflow

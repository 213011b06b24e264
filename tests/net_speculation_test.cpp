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

}  // namespace
}  // namespace redflow

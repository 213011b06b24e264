// Joins (src/runtime/joins.cpp): a worker process that connects
// after the runtime started fills a place kept for it and is used at once:
// work stealing steals with it, HEFT schedules the unstarted part again for
// the tiles now in service. The outputs are those of a one-process run, and a
// worker beyond RuntimeOptions::max_remote_tiles is refused.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

using testing::has_mark;
using testing::WorkerProcesses;

// `chains` chains of `length` links; a link sleeps `ms` (test.sleep, from the
// test plugin) then adds X1, so each output is X0 + length * X1 computed
// through every link, and one worker alone takes chains * length * ms.
// With a `gate` path, each chain's first link waits (at most a minute)
// until that file exists, instead of sleeping: a test opens it on an event.
Graph sleepy_chains(int chains, int length, int ms, const std::string& gate = "") {
  Graph g("net_join");
  const DataId x0 = g.input("X0", testing::kNetBytes), x1 = g.input("X1", testing::kNetBytes);
  for (int c = 0; c < chains; ++c) {
    DataId prev = x0;
    for (int i = 0; i < length; ++i) {
      const std::string n = std::to_string(c) + "_" + std::to_string(i);
      const DataId slept = g.inner("s" + n, testing::kNetBytes);
      const std::string args = i == 0 && !gate.empty() ? "ms=60000,until=" + gate : "ms=" + std::to_string(ms);
      g.actor("sleep" + n, "test.sleep", {prev}, slept).args(args).work(ms * 1e6);  // HEFT: ms at 1e9 ops/s
      const DataId out = i + 1 == length ? g.output("y" + std::to_string(c), testing::kNetBytes) : g.inner("d" + n, testing::kNetBytes);
      g.actor("add" + n, "i32.add", {slept, x1}, out);
      prev = out;
    }
  }
  return g;
}

std::vector<std::string> worker_flags() {
  std::vector<std::string> extra = testing::kWorkerSlots;
  extra.insert(extra.end(), {"--lib", REDFLOW_TEST_PLUGIN});
  return extra;
}

class NetJoin : public ::testing::TestWithParam<Scheduler> {};

TEST_P(NetJoin, AWorkerJoiningMidRunTakesActorsAndTheOutputsEqualTheLocalRun) {
  // One worker alone needs 16 x 12 x 10 ms = 1.9 s; the second connects as
  // the execution starts. The first tile waits at its first link until the
  // join is marked (the gate file), however long the second worker takes to
  // start: the join lands inside the execution, with nearly all of it left.
  const std::string gate = ::testing::TempDir() + "/net_join_gate_" + std::to_string(::getpid()) + "_" + std::to_string(static_cast<int>(GetParam()));
  std::filesystem::remove(gate);
  const Graph g = sleepy_chains(16, 12, 10, gate);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 7), x1 = testing::seeded_bytes(testing::kNetBytes, 8);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::plugin_reference(sleepy_chains(16, 12, 10), inputs);  // the gates change no value
  WorkerProcesses workers;
  std::string endpoint;
  RuntimeOptions o = testing::remote_options(0, 1, GetParam());
  // Each actor runs once here: no speculative copy of a link a loaded
  // machine (TSan, 1 run in about 60) made 0.1 s late counts twice.
  o.speculate_after_s = 0;
  o.cluster.on_listening = [&](const std::string& e) {
    endpoint = e;
    workers.spawn(e, worker_flags());
  };
  o.on_mark = [&gate](const TracedMark& m) {
    if (m.what == "tile-joined") std::ofstream(gate) << "joined\n";
  };
  testing::within_seconds(90, "a run a worker joins", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, testing::registry_with_test_plugin());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExecuteOptions traced;
    traced.trace = true;
    std::thread joiner([&] { workers.spawn(endpoint, worker_flags()); });
    auto out = loaded->execute(inputs, traced);
    joiner.join();
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, want);
    const ExecutionStats& st = loaded->last_stats();
    std::string marks;
    for (const TracedMark& m : loaded->last_trace().marks) marks += m.what + " " + m.detail + "; ";
    ASSERT_EQ(st.tiles.size(), 2u) << "the place the worker filled is reported, the empty ones are not; the gate "
                                   << (std::filesystem::exists(gate) ? "opened" : "stayed shut") << "; marks: " << marks << "\n"
                                   << st.to_json();
    EXPECT_EQ(st.joined_tiles, 1u);
    EXPECT_TRUE(st.tiles[1].joined);
    EXPECT_FALSE(st.tiles[0].joined);
    EXPECT_TRUE(has_mark(loaded->last_trace(), "tile-joined")) << "it joined while the execution ran";
    // Used at once: a fair share of the 384 actors, not a leftover or two.
    EXPECT_GT(st.tiles[1].actors, 384u / 8) << "the joined tile ran " << st.tiles[1].actors << " actors";
    EXPECT_EQ(st.tiles[0].actors + st.tiles[1].actors, 384u) << "every actor ran once; speculative copies " << st.speculative_copies << ", lost tiles "
                                                              << st.lost_tiles << ", abandoned " << st.abandoned;
    if (GetParam() == Scheduler::kHeft) {
      EXPECT_GE(st.replans, 1u) << "HEFT scheduled the unstarted part again";
    }
    const std::string json = st.to_json();
    EXPECT_NE(json.find("\"joined_tiles\": 1"), std::string::npos) << json;
    EXPECT_NE(json.find("\"joined\": true"), std::string::npos) << json;

    // The next execution starts with both tiles in its schedule.
    auto again = loaded->execute(inputs);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(*again, want);
    EXPECT_EQ(loaded->last_stats().joined_tiles, 0u);
    EXPECT_GT(loaded->last_stats().tiles[1].actors, 384u / 4);
  });
  std::filesystem::remove(gate);
}

INSTANTIATE_TEST_SUITE_P(Schedulers, NetJoin, ::testing::Values(Scheduler::kSteal, Scheduler::kHeft),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(NetJoinBetween, AWorkerThatCameBetweenExecutionsIsInTheNextHeftSchedule) {
  const Graph g = sleepy_chains(8, 4, 1);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 9), x1 = testing::seeded_bytes(testing::kNetBytes, 10);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::plugin_reference(g, inputs);
  WorkerProcesses workers;
  std::string endpoint;
  RuntimeOptions o = testing::remote_options(0, 1, Scheduler::kHeft);
  o.cluster.on_listening = [&](const std::string& e) {
    endpoint = e;
    workers.spawn(e, worker_flags());
  };
  testing::within_seconds(60, "a join between executions", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, testing::registry_with_test_plugin());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto out = loaded->execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(loaded->last_stats().tiles.size(), 1u);
    workers.spawn(endpoint, worker_flags());
    // Until the worker's HELLO arrives, executions run on the first tile
    // alone; it may also come during one (a join mid-run, NetJoin's case,
    // marked "tile-joined" in the trace): then the next execution is the
    // first to start with it in service. One that admits it as it starts
    // counts it in joined_tiles too, but is not marked, and is the one
    // whose schedule is made for two tiles (later ones reuse it).
    ExecuteOptions eo;
    eo.trace = true;
    auto joined_mid_run = [&] { return has_mark(loaded->last_trace(), "tile-joined"); };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      out = loaded->execute(inputs, eo);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, want);
    } while ((loaded->last_stats().tiles.size() < 2 || joined_mid_run()) && std::chrono::steady_clock::now() < deadline);
    const ExecutionStats& st = loaded->last_stats();
    ASSERT_EQ(st.tiles.size(), 2u) << "the worker never joined";
    ASSERT_FALSE(joined_mid_run()) << "the worker joined mid-run every time";
    EXPECT_GE(st.replans, 1u) << "the plan's schedule is for one tile: the execution made one for two";
    EXPECT_GT(st.tiles[1].actors, 0u) << "the joined tile is in the new schedule";
  });
}

TEST(NetJoinBetween, AWorkerWithoutTheGraphsActorFunctionsIsLeftOutOfService) {
  const Graph g = sleepy_chains(4, 2, 1);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 11), x1 = testing::seeded_bytes(testing::kNetBytes, 12);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::plugin_reference(g, inputs);
  WorkerProcesses workers;
  std::string endpoint;
  RuntimeOptions o = testing::remote_options(0, 1, Scheduler::kSteal);
  o.cluster.on_listening = [&](const std::string& e) {
    endpoint = e;
    workers.spawn(e, worker_flags());
  };
  testing::within_seconds(60, "a join without the plugin", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, testing::registry_with_test_plugin());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    workers.spawn(endpoint, testing::kWorkerSlots);  // no --lib: it has no test.sleep
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      auto out = loaded->execute(inputs);
      ASSERT_TRUE(out.ok()) << "a worker that cannot run the graph must not fail the run: " << out.status().ToString();
      EXPECT_EQ(*out, want);
    } while (loaded->last_stats().tiles.size() < 2 && std::chrono::steady_clock::now() < deadline);
    const ExecutionStats& st = loaded->last_stats();
    ASSERT_EQ(st.tiles.size(), 2u) << "the worker never came";
    EXPECT_EQ(st.tiles[1].actors, 0u);
    EXPECT_EQ(st.quarantined_tiles, std::vector<unsigned>{1}) << "out of service, and said so";
    EXPECT_EQ(st.joined_tiles, 0u) << "a join that was not taken is not counted";
  });
}

TEST(NetJoinBetween, AWorkerBeyondMaxRemoteTilesIsRefused) {
  WorkerProcesses workers;
  std::string endpoint;
  RuntimeOptions o = testing::remote_options(0, 1, Scheduler::kSteal);
  o.cluster.max_workers = 1;
  o.cluster.on_listening = [&](const std::string& e) {
    endpoint = e;
    workers.spawn(e, testing::kWorkerSlots);
  };
  testing::within_seconds(30, "a worker beyond the places", [&] {
    Runtime rt(o);
    const Graph g = testing::random_builtin_dag(8, 3);
    auto loaded = rt.load(g, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const std::string log = ::testing::TempDir() + "/beyond_max_" + std::to_string(::getpid()) + ".log";
    const pid_t extra = workers.spawn_logged(log, endpoint, testing::kWorkerSlots);
    EXPECT_EQ(workers.wait_exit(extra, 20), 1) << "a refused worker exits with status 1";
    const std::string said = testing::file_text(log);
    EXPECT_NE(said.find("refused this worker: the driver has taken the 1 remote tile(s) it may have (raise --max-workers"), std::string::npos)
        << said;
    std::remove(log.c_str());
    const auto x = testing::seeded_bytes(testing::kNetBytes, 1);
    auto out = loaded->execute({{"X0", x}, {"X1", x}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(loaded->last_stats().tiles.size(), 1u);
  });
  RuntimeOptions bad = testing::remote_options(0, 2, Scheduler::kSteal);
  bad.cluster.max_workers = 1;
  Runtime rt(bad);
  auto loaded = rt.load(testing::random_builtin_dag(4, 1), Registry::with_builtins());
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("max_workers (--max-workers) 1 is below min_workers (--min-workers) 2"), std::string::npos) << loaded.status().message();
}

}  // namespace
}  // namespace redflow

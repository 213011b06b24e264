// Remote tiles in real worker processes (`redflow tile`, started here on
// loopback with a free port): results equal the single-process run for every
// redundancy configuration and both schedulers, with 2 workers and with 1
// local tile + 1 worker; a graph needing an actor function a worker lacks is
// a named error at load; a worker that never comes is a timeout naming how
// many came; a worker refused tells why.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

using testing::WorkerProcesses;

struct Reference {
  Graph graph = testing::random_builtin_dag(40, 11);
  std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, 1), x1 = testing::seeded_bytes(testing::kNetBytes, 2);
  Inputs inputs{{"X0", x0}, {"X1", x1}};
  Outputs outputs;
  Reference() { outputs = testing::local_reference(graph, inputs); }
};

class RemoteEqualsLocal : public ::testing::TestWithParam<std::tuple<Scheduler, unsigned>> {};

TEST_P(RemoteEqualsLocal, EveryRedundancyConfiguration) {
  const auto [scheduler, local] = GetParam();
  const unsigned remote = 3 - local;  // 3 tiles in all: 3x-diff needs three
  const Reference ref;
  WorkerProcesses workers;
  RuntimeOptions o = testing::remote_options(local, remote, scheduler);
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(remote, endpoint, testing::kWorkerSlots); };
  testing::within_seconds(60, "remote runs", [&] {
    Runtime rt(o);
    auto loaded = rt.load(ref.graph, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    for (Redundancy r : kAllRedundancies) {
      ExecuteOptions eo;
      eo.redundancy = r;
      auto out = loaded->execute(ref.inputs, eo);
      ASSERT_TRUE(out.ok()) << to_string(r) << ": " << out.status().ToString();
      EXPECT_EQ(*out, ref.outputs) << to_string(r);
      const ExecutionStats& st = loaded->last_stats();
      EXPECT_EQ(st.lost_tiles, 0u);
      std::uint64_t on_remote = 0;
      for (unsigned t = local; t < 3; ++t) on_remote += st.tiles[t].actors;
      // HEFT places actors on every tile; 3x-diff puts each actor's replicas on
      // 3 distinct tiles. (Stealing may leave a slow remote tile idle otherwise.)
      if (scheduler == Scheduler::kHeft || r == Redundancy::kTripleDiff) {
        EXPECT_GT(on_remote, 0u) << to_string(r) << ": no actor ran on a worker process";
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Net, RemoteEqualsLocal,
                         ::testing::Combine(::testing::Values(Scheduler::kSteal, Scheduler::kHeft), ::testing::Values(0u, 1u)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == Scheduler::kSteal ? "Steal" : "Heft") +
                                  (std::get<1>(info.param) == 0 ? "ThreeWorkers" : "OneLocalTwoWorkers");
                         });

TEST(NetRemote, StatsAndTracesNameEachRemoteTilesWorkerHostAndTraffic) {
  const Reference ref;
  WorkerProcesses workers;
  RuntimeOptions o = testing::remote_options(1, 1, Scheduler::kHeft);
  std::vector<std::string> extra = testing::kWorkerSlots;
  extra.insert(extra.end(), {"--name", "node-b"});
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn(endpoint, extra); };
  testing::within_seconds(60, "a remote run", [&] {
    Runtime rt(o);
    auto loaded = rt.load(ref.graph, Registry::with_builtins());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExecuteOptions eo;
    eo.trace = true;
    for (int round = 0; round < 2; ++round) {
      auto out = loaded->execute(ref.inputs, eo);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const ExecutionStats& st = loaded->last_stats();
      ASSERT_EQ(st.tiles.size(), 2u);
      char host[256] = {};
      ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
      EXPECT_TRUE(st.tiles[0].host.empty() && st.tiles[0].worker.empty() && st.tiles[0].bytes_sent == 0) << "a local tile has no host or traffic";
      EXPECT_EQ(st.tiles[1].worker, "node-b");
      EXPECT_EQ(st.tiles[1].host, host);
      EXPECT_FALSE(st.tiles[1].lost);
      // HEFT gives the worker actors: their inputs go there and their results come back, each execution.
      EXPECT_GT(st.tiles[1].actors, 0u);
      EXPECT_GT(st.tiles[1].bytes_sent, 0u) << "round " << round;
      EXPECT_GT(st.tiles[1].bytes_received, 0u) << "round " << round;
      const std::string json = st.to_json();
      EXPECT_NE(json.find("\"host\": \"" + std::string(host) + "\""), std::string::npos) << json;
      const ExecutionTrace& trace = loaded->last_trace();
      ASSERT_EQ(trace.tile_hosts.size(), 2u);
      EXPECT_EQ(trace.tile_hosts[1], "node-b on " + std::string(host));
      EXPECT_NE(to_chrome_trace(trace, &ref.graph).find("tile 1 (node-b on " + std::string(host) + ")"), std::string::npos);
      EXPECT_NE(to_gantt_svg(trace, &ref.graph).find("tile 1 (node-b on " + std::string(host) + ")"), std::string::npos);
    }
  });
}

TEST(NetRemote, AMissingActorFunctionOnAWorkerIsANamedErrorAtLoad) {
  Graph g("needs_plugin");
  const DataId x = g.input("X", 16);
  g.actor("neg", "test.negate", {x}, g.output("Y", 16));
  Registry reg = Registry::with_builtins();
  ASSERT_TRUE(reg.load_plugin(REDFLOW_TEST_PLUGIN).ok());
  WorkerProcesses workers;
  RuntimeOptions o = testing::remote_options(0, 1, Scheduler::kSteal);
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn(endpoint, testing::kWorkerSlots); };  // no --lib
  testing::within_seconds(30, "load", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, reg);
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), Status::Code::kNotFound);
    const std::string m = loaded.status().message();
    EXPECT_NE(m.find("actor 'neg'"), std::string::npos) << m;
    EXPECT_NE(m.find("'test.negate'"), std::string::npos) << m;
    EXPECT_NE(m.find("worker '"), std::string::npos) << m;
  });
}

TEST(NetRemote, AWorkerWithThePluginRunsItsActors) {
  Graph g("needs_plugin");
  const DataId x = g.input("X", 16);
  g.actor("neg", "test.negate", {x}, g.output("Y", 16));
  Registry reg = Registry::with_builtins();
  ASSERT_TRUE(reg.load_plugin(REDFLOW_TEST_PLUGIN).ok());
  WorkerProcesses workers;
  RuntimeOptions o = testing::remote_options(0, 1, Scheduler::kSteal);
  std::vector<std::string> extra = testing::kWorkerSlots;
  extra.insert(extra.end(), {"--lib", REDFLOW_TEST_PLUGIN});
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn(endpoint, extra); };
  testing::within_seconds(30, "run", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, reg);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const std::vector<std::int32_t> in = {1, -2, 3, -4};
    auto out = loaded->execute({{"X", std::as_bytes(std::span(in))}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    const std::vector<std::int32_t> want = {-1, 2, -3, 4};
    EXPECT_EQ(out->at("Y"), std::vector<std::byte>(std::as_bytes(std::span(want)).begin(), std::as_bytes(std::span(want)).end()));
    EXPECT_EQ(loaded->last_stats().tiles[0].actors, 1u);
  });
}

TEST(NetRemote, AWorkerThatNeverComesIsATimeoutNamingHowManyCame) {
  WorkerProcesses workers;
  RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kSteal);
  o.cluster.wait_s = 1;
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn(endpoint, testing::kWorkerSlots); };  // one of two
  testing::within_seconds(30, "load", [&] {
    Runtime rt(o);
    auto loaded = rt.load(testing::random_builtin_dag(5, 1), Registry::with_builtins());
    ASSERT_FALSE(loaded.ok());
    const std::string m = loaded.status().message();
    EXPECT_NE(m.find("2 remote tile(s)"), std::string::npos) << m;
    EXPECT_NE(m.find("1 came"), std::string::npos) << m;
  });
}

TEST(NetRemote, AWorkerWithTooFewSlotsIsRefusedAndSaysWhy) {
  WorkerProcesses workers;
  workers.set_quiet(false);
  RuntimeOptions o = testing::remote_options(0, 1, Scheduler::kSteal);
  o.cluster.wait_s = 2;
  pid_t small = 0;
  const std::string log = ::testing::TempDir() + "/few_slots_" + std::to_string(::getpid()) + ".log";
  o.cluster.on_listening = [&](const std::string& endpoint) {
    small = workers.spawn_logged(log, endpoint, {"--slots", "2", "--slot-bytes", "65536"});
  };
  testing::within_seconds(30, "load", [&] {
    Runtime rt(o);
    auto loaded = rt.load(testing::random_builtin_dag(5, 1), Registry::with_builtins());
    EXPECT_FALSE(loaded.ok());
    EXPECT_EQ(workers.wait_exit(small, 10), 1) << "a refused worker exits with status 1";
  });
  const std::string said = testing::file_text(log);
  EXPECT_NE(said.find("refused this worker: worker has 2 slots of 65536 bytes; the driver plans with 8 slots of 65536"), std::string::npos)
      << said;
  std::remove(log.c_str());
}

TEST(NetRemote, WorkersLeaveOnTheDriversByeWithStatusZero) {
  WorkerProcesses workers;
  RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kHeft);
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(2, endpoint, testing::kWorkerSlots); };
  testing::within_seconds(30, "run", [&] {
    {
      Runtime rt(o);
      auto loaded = rt.load(testing::random_builtin_dag(10, 3), Registry::with_builtins());
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    }
    const std::vector<pid_t> pids = workers.pids();
    for (pid_t p : pids) EXPECT_EQ(workers.wait_exit(p, 10), 0);
  });
}

}  // namespace
}  // namespace redflow

namespace redflow {
namespace {

TEST(NetRemote, MoreRemoteTilesThanTilesInAllIsRefusedBeforeListening) {
  RuntimeOptions o = testing::remote_options(0, 2, Scheduler::kSteal);
  o.tiles = 1;
  Runtime rt(o);
  auto loaded = rt.load(testing::random_builtin_dag(5, 1), Registry::with_builtins());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(loaded.status().message().find("2 remote tiles, but only 1 tiles in all"), std::string::npos) << loaded.status().message();
}

}  // namespace
}  // namespace redflow

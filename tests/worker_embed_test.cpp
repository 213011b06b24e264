// The one worker embedded in an application (redflow::run_worker,
// redflow/worker.hpp): a thread of the test serves a graph driver as a tile
// running the application's own actor, then, persisting, a stream driver as
// a node: one worker, the role each driver's WELCOME names, each result equal
// to its one-process run. (tests/net_*, stream_cluster_test and the SPITS
// suites run `redflow worker` processes.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "redflow/redflow.hpp"
#include "redflow/worker.hpp"
#include "watchdog.hpp"

namespace redflow {
namespace {

constexpr std::size_t kValues = 64;

// Y = 3 * X over int32, through an actor only the application's registry has.
Graph triple_graph() {
  Graph g("triple");
  const DataId x = g.input("X", kValues * 4);
  g.actor("t", "app.triple", {x}, g.output("Y", kValues * 4));
  return g;
}

Registry with_triple() {
  Registry reg = Registry::with_builtins();
  reg.add("app.triple", [](ActorContext& ctx) {
    auto in = ctx.input<const std::int32_t>(0);
    auto out = ctx.output<std::int32_t>();
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = 3 * in[i];
  });
  return reg;
}

constexpr const char* kStreamProgram = R"(digraph p {
  src [operator="counter", args="n=300 start=1"];
  s   [operator="scale", args="k=7"];
  out [operator="collect"];
  src -> s [token=8]; s -> out [token=8];
})";

void graph_then_stream() {
  const Registry actors = with_triple();
  std::vector<std::int32_t> xs(kValues);
  for (std::size_t i = 0; i < kValues; ++i) xs[i] = static_cast<std::int32_t>(i) - 20;

  std::mutex mutex;
  std::vector<std::string> roles;  // what each WELCOME named
  Status worker_outcome;
  std::thread worker;
  std::string endpoint;
  auto start_worker = [&](const std::string& ep) {
    endpoint = ep;
    WorkerOptions w;
    w.connect = ep;
    w.persist = true;
    w.name = "embedded";
    w.connect_timeout_s = 5;  // after the last driver: ends 5 s later, saying no driver came
    w.on_welcome = [&](const std::string& role, unsigned) {
      std::lock_guard<std::mutex> lock(mutex);
      roles.push_back(role);
    };
    worker = std::thread([&actors, &worker_outcome, w] { worker_outcome = run_worker(w, actors); });
  };

  {
    // The graph driver: one remote tile, none local. The worker is started
    // once it listens, and only it has app.triple.
    RuntimeOptions o;
    o.cluster.listen = "tcp://127.0.0.1:*";
    o.cluster.min_workers = 1;
    o.tiles = 1;
    o.slots = 4;
    o.slot_bytes = 4096;
    o.cluster.on_listening = start_worker;
    Runtime rt(o);
    auto loaded = rt.load(triple_graph(), actors);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    for (int round = 0; round < 3; ++round) {
      auto out = loaded->execute({{"X", as_bytes_of(xs)}});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      ASSERT_EQ(out->at("Y").size(), kValues * 4);
      const auto* ys = reinterpret_cast<const std::int32_t*>(out->at("Y").data());
      for (std::size_t i = 0; i < kValues; ++i) ASSERT_EQ(ys[i], 3 * xs[i]) << i;
    }
    EXPECT_EQ(loaded->last_stats().lost_tiles, 0u);
  }  // the driver says BYE; the worker waits for the next one

  ASSERT_FALSE(endpoint.empty());
  const auto operators = stream::OperatorRegistry::with_builtins();
  auto program = stream::Program::from_dot(kStreamProgram, operators);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  auto local = stream::run(*program);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  stream::ClusterOptions c;
  c.cluster.listen = endpoint;  // where the persistent worker dials
  c.cluster.min_workers = 1;
  c.cluster.wait_s = 20;
  auto remote = stream::run_cluster(*program, stream::RunOptions{}, c);
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  EXPECT_EQ(remote->outputs, local->outputs);
  ASSERT_EQ(remote->nodes.size(), 1u);
  EXPECT_EQ(remote->nodes[0].worker, "embedded");

  worker.join();
  // No third driver came: the worker says so, after serving both.
  EXPECT_FALSE(worker_outcome.ok());
  EXPECT_NE(worker_outcome.message().find("no WELCOME"), std::string::npos) << worker_outcome.ToString();
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(roles, (std::vector<std::string>{"tile", "stream node"}));
}

TEST(EmbeddedWorker, OneWorkerServesAGraphRunAsATileThenAStreamProgramAsANode) {
  testing::within_seconds(120, "a graph run then a stream program on one embedded worker", graph_then_stream);
}

// A worker without a driver to reach is a named error, not a hang; one told
// neither where its driver is nor how many cores it has is refused at once.
TEST(EmbeddedWorker, BadOptionsAndAnAbsentDriverAreNamedErrors) {
  const Registry actors = Registry::with_builtins();
  WorkerOptions w;
  Status none = run_worker(w, actors);
  EXPECT_EQ(none.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(none.message().find("endpoint"), std::string::npos) << none.ToString();
  w.connect = "tcp://127.0.0.1:1";
  w.cores = 0;
  EXPECT_NE(run_worker(w, actors).message().find("at least 1 core"), std::string::npos);
  w.cores = 1;
  w.connect_timeout_s = 0.3;
  Status absent = run_worker(w, actors);
  EXPECT_FALSE(absent.ok());
  EXPECT_NE(absent.message().find("no WELCOME"), std::string::npos) << absent.ToString();
}

}  // namespace
}  // namespace redflow

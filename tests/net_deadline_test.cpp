// Deadlines: heartbeats alone are not progress (docs/remote.md, "Deadlines").
// A worker stuck on an actor (slow-tile fault injection, 100,000 times
// slower), a completion dropped on the way or sent under another request id
// (tests/wire_proxy.hpp between the driver and an honest worker), a worker
// that never answers its first request, and a worker whose driver was
// killed while its executor sleeps in a slow actor: each run finishes right,
// or the worker exits, within a bound in seconds, in every execution.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "net_fake_worker.hpp"
#include "net_workers.hpp"
#include "redflow/redflow.hpp"
#include "spawn_process.hpp"
#include "watchdog.hpp"
#include "wire_proxy.hpp"

namespace redflow {
namespace {

using net::EnvelopeKind;
using testing::ProxyAction;
using testing::WireProxy;
using testing::WorkerProcesses;

// The driver's heartbeat timeout in these tests; the least deadline is
// TileServer::kFloorBeats (4) of them, 8 s.
constexpr double kDeadlineHeartbeat = 2;
// What each execution must finish within: the 8 s floor, the run itself, and
// room for a loaded 2-core machine under a sanitizer. Before deadlines the
// same runs took 30 s to forever.
constexpr double kDeadlineBound = 30;

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

Graph stuck_fanout(int n, int ms) { return testing::sleep_then_add("net_deadline", n, ms, 300); }

class NetDeadline : public ::testing::TestWithParam<Scheduler> {};

// The run: one of three workers 100,000 times slower (a 2 ms actor
// takes 200 s), three executions. The first ends on copies; the worker is
// still inside that execution's actors when the next ones start.
TEST_P(NetDeadline, AWorkerStuckOnAnActorStallsNoExecution) {
  const Graph g = stuck_fanout(12, 2);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 7);
  const Outputs want = testing::plugin_reference(g, {{"X0", x0}});
  WorkerProcesses workers;
  std::vector<std::string> extra = testing::kWorkerSlots;
  extra.insert(extra.end(), {"--lib", REDFLOW_TEST_PLUGIN});
  RuntimeOptions o = testing::remote_options(0, 3, GetParam(), kDeadlineHeartbeat);
  o.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_n(3, endpoint, extra); };
  testing::within_seconds(150, "executions beside a stuck worker", [&] {
    Runtime rt(o);
    auto loaded = rt.load(g, testing::registry_with_test_plugin());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ExecuteOptions eo;
    FaultInjection stuck;
    stuck.slow_tiles = {{1, 100000.0}};
    eo.faults = stuck;
    for (int e = 1; e <= 3; ++e) {
      SCOPED_TRACE("execution " + std::to_string(e));
      const auto t0 = std::chrono::steady_clock::now();
      auto out = loaded->execute({{"X0", x0}}, eo);
      const double took = seconds_between(t0, std::chrono::steady_clock::now());
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, want);
      EXPECT_LT(took, kDeadlineBound);
      const ExecutionStats& st = loaded->last_stats();
      EXPECT_GE(st.speculative_copies + st.lost_tiles, 1u) << "the stuck worker's actors ran elsewhere";
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Schedulers, NetDeadline, ::testing::Values(Scheduler::kSteal, Scheduler::kHeft),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// Two workers, one behind the proxy. In execution 2 the proxied worker's
// next completion goes astray; executions 2 to 4 finish right within the
// bound, and the proxied worker is lost (its heartbeat said it had answered).
// A 4 s heartbeat timeout puts the floor at 16 s, beyond these runs: that
// the worker is lost shows the heartbeat's ledger (a beat each second) found
// the answer missing (without it, copies end the execution and the worker
// stays, owing the answer, until the floor).
void answers_astray(ProxyAction how) {
  const Graph g = stuck_fanout(16, 5);
  const auto x0 = testing::seeded_bytes(testing::kNetBytes, 5);
  const Outputs want = testing::plugin_reference(g, {{"X0", x0}});
  for (Scheduler scheduler : {Scheduler::kSteal, Scheduler::kHeft}) {
    SCOPED_TRACE(to_string(scheduler));
    WorkerProcesses workers;
    std::unique_ptr<WireProxy> proxy;
    RuntimeOptions o = testing::remote_options(0, 2, scheduler, 4);
    o.cluster.on_listening = [&](const std::string& endpoint) {
      proxy = std::make_unique<WireProxy>(endpoint);
      proxy->start();
      workers.spawn(proxy->endpoint(), {"--slots", "8", "--slot-bytes", "65536", "--lib", REDFLOW_TEST_PLUGIN, "--name", "proxied"});
      workers.spawn(endpoint, {"--slots", "8", "--slot-bytes", "65536", "--lib", REDFLOW_TEST_PLUGIN});
    };
    testing::within_seconds(150, "runs whose answers go astray", [&] {
      Runtime rt(o);
      auto loaded = rt.load(g, testing::registry_with_test_plugin());
      ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
      bool lost = false;
      std::size_t rule = 0;
      for (int e = 1; e <= 4; ++e) {
        SCOPED_TRACE("execution " + std::to_string(e));
        // The proxied worker's next answer that holds a completion (a batch's entry, or a lone REPLY).
        if (e == 2)
          rule = proxy->add({.action = how, .envelope = EnvelopeKind::kReply, .frame = runtime::WireKind::kCompletion, .nth = 1, .id_delta = 1000000});
        const auto t0 = std::chrono::steady_clock::now();
        auto out = loaded->execute({{"X0", x0}});
        const double took = seconds_between(t0, std::chrono::steady_clock::now());
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        EXPECT_EQ(*out, want);
        EXPECT_LT(took, kDeadlineBound);
        for (const TileStats& t : loaded->last_stats().tiles) lost = lost || (t.worker == "proxied" && t.lost);
        if (e == 2) {
          EXPECT_EQ(proxy->applied(rule), 1) << "the proxied worker completed no actor in execution 2";
          EXPECT_LT(took, 10.0) << "waited for the answer that went astray";
        }
        if (e == 3) std::this_thread::sleep_for(std::chrono::seconds(2));  // a heartbeat after the last answer
      }
      EXPECT_TRUE(lost) << "its answer went astray, so it is lost";
    });
  }
}

TEST(NetDeadlineAstray, ADroppedCompletionLosesItsWorkerAndTheRunFinishesRight) { answers_astray(ProxyAction::kDrop); }

TEST(NetDeadlineAstray, AnAnswerUnderAnotherRequestIdLosesItsWorkerAndTheRunFinishesRight) {
  answers_astray(ProxyAction::kRewriteId);
}

// Says HELLO, is welcomed, beats every 100 ms, and answers nothing.
struct MuteWorker : testing::FakeWorker {
  std::atomic<unsigned> requests{0};
  void run(const std::string& endpoint) override {
    zmq::context_t context;
    zmq::socket_t s(context, zmq::socket_type::dealer);
    testing::connect_and_say_hello(s, endpoint, testing::fake_tile_hello("mute"));
    std::vector<zmq::message_t> parts;
    net::Envelope e;
    bool bye = false;
    while (!stop && !bye) {
      zmq::pollitem_t items[] = {{s.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 1, std::chrono::milliseconds(20));
      beat_when_due(s);
      while (next_envelope(s, parts, e)) {
        bye = bye || e.kind == EnvelopeKind::kBye;
        requests += e.kind == EnvelopeKind::kRequest || e.kind == EnvelopeKind::kRequests;
      }
    }
  }
};

TEST(NetDeadlineMute, AWorkerThatNeverAnswersItsFirstRequestHoldsTheRunOnlyUntilItsDeadline) {
  const Graph g = testing::random_builtin_dag(40, 43);
  const std::vector<std::byte> x0 = testing::seeded_bytes(testing::kNetBytes, 8), x1 = testing::seeded_bytes(testing::kNetBytes, 9);
  const Inputs inputs{{"X0", x0}, {"X1", x1}};
  const Outputs want = testing::local_reference(g, inputs);
  testing::each_scheduler_beside_a_fake_worker<MuteWorker>(g, 90, "a run beside a worker that answers nothing", [&](LoadedGraph& loaded, MuteWorker& mute) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = loaded.execute(inputs);
    const double took = seconds_between(t0, std::chrono::steady_clock::now());
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(*out, want);
    EXPECT_LT(took, kDeadlineBound);
    EXPECT_GE(took, 4 * 2.0 - 0.5) << "lost before the floor (4 heartbeat timeouts of 2 s)";
    EXPECT_GE(mute.requests.load(), 1u);
    unsigned lost = 0;
    for (const TileStats& t : loaded.last_stats().tiles) lost += t.worker == "mute" && t.lost;
    EXPECT_EQ(lost, 1u) << "the mute worker is lost";
  });
}

// A worker whose driver is killed (kill -9) while its executor sleeps in
// a 60 s actor leaves within the heartbeat timeout (1 s) and a beat's grace,
// not when the actor ends.
TEST(NetDeadlineOrphan, AWorkerWhoseDriverDiedExitsWhileItsActorStillRuns) {
  const std::string dir = ::testing::TempDir() + "redflow_orphan_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::string d;
    ~Cleanup() { std::filesystem::remove_all(d); }
  } cleanup{dir};
  std::ofstream(dir + "/orphan.dot") << "digraph orphan {\n  X [kind=input, bytes=1024];\n  S [kind=output, bytes=1024];\n"
                                        "  nap [actor=\"test.sleep\", args=\"ms=60000\"];\n  X -> nap [port=0]; nap -> S;\n}\n";
  const auto x = testing::seeded_bytes(1024, 11);
  std::ofstream(dir + "/x.bin", std::ios::binary).write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size()));
  const std::string addr = dir + "/driver.addr";
  WorkerProcesses driver;
  const pid_t driver_pid = driver.spawn_cli({"run", dir + "/orphan.dot", "--lib", REDFLOW_TEST_PLUGIN, "-i", "X=" + dir + "/x.bin", "--listen",
                                             "tcp://127.0.0.1:*", "--min-workers", "1", "--address-file", addr, "--heartbeat-timeout", "1"});
  for (int i = 0; i < 400 && !std::filesystem::exists(addr); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(std::filesystem::exists(addr)) << "the driver wrote no address file";
  const std::string log = dir + "/worker.log";
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(log_fd, 0);
  const pid_t worker = testing::spawn_process({REDFLOW_CLI, "--log-level", "info", "worker", "--address-file", addr, "--lib", REDFLOW_TEST_PLUGIN},
                                              {.err_fd = log_fd});
  ::close(log_fd);
  ASSERT_GT(worker, 0);
  auto logged = [&](const std::string& what) {
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return text.find(what) != std::string::npos;
  };
  for (int i = 0; i < 400 && !logged("welcomed as tile"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the actor table, the input and the actor reach it
  driver.kill9(driver_pid);
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  pid_t got = 0;
  while ((got = ::waitpid(worker, &status, WNOHANG)) == 0 && seconds_between(t0, std::chrono::steady_clock::now()) < 20)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double took = seconds_between(t0, std::chrono::steady_clock::now());
  if (got != worker) {
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
  }
  ASSERT_EQ(got, worker) << "the worker outlived its driver by 20 s";
  EXPECT_LT(took, 10.0) << "heartbeat timeout 1 s and a beat's grace";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << "status " << status;
  EXPECT_TRUE(logged("leaving an actor still running")) << "the actor was not running yet: the test proves nothing";
  EXPECT_TRUE(logged("has been silent")) << "it left because the driver went silent";
}

}  // namespace
}  // namespace redflow

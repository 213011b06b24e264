// Stream programs over real worker processes (`redflow worker`) on
// loopback: results equal the local run for every placement algorithm, node
// count (1-4) and local mode, with and without aggregation and two-level
// buffering; without checkpoints, a worker killed mid-stream is an error naming it; a worker that
// cannot serve is refused by name. Plus the stream messages' decoders.
#include <gtest/gtest.h>
#include <fcntl.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <map>
#include <optional>
#include <memory>

#include "net_workers.hpp"
#include "redflow/stream.hpp"
#include "redflow/visualize.hpp"
#include "net/keys.hpp"
#include "stream/apps/wavelet.hpp"
#include "stream/profile.hpp"
#include "stream/stream_messages.hpp"
#include "tcp_relay.hpp"

namespace redflow::stream {
namespace {

using testing::WorkerProcesses;

// A source, a fan-out, a zip, a cycle through a delay, and a sum: every kind
// of stream crosses nodes under some placement. Few tokens: a cycle that
// crosses nodes costs a round trip through the network per token.
constexpr std::uint64_t kMixTokens = 500;
constexpr const char* kMix = R"(digraph mix {
  src   [operator="counter", args="n=500 start=1"];
  d     [operator="dup", args="outputs=3"];
  s     [operator="scale", args="k=3"];
  z     [operator="add"];
  zipped [operator="collect"];
  a     [operator="add"];
  back  [operator="delay", args="initial=0 count=1"];
  da    [operator="dup", args="outputs=3"];
  running [operator="collect"];
  tot   [operator="sum"];
  total [operator="collect"];
  src -> d [token=8];
  d -> s [token=8, from_port=0];
  d -> z [token=8, from_port=1, to_port=1];
  s -> z [token=8, to_port=0];
  z -> zipped [token=8];
  d -> a [token=8, from_port=2, to_port=0];
  back -> a [token=8, to_port=1];
  a -> da [token=8];
  da -> back [token=8, from_port=0];
  da -> running [token=8, from_port=1];
  da -> tot [token=8, from_port=2];
  tot -> total [token=8];
})";

class StreamCluster : public ::testing::TestWithParam<const char*> {
 protected:
  static Program program(const OperatorRegistry& reg, const char* text = kMix) {
    auto p = Program::from_dot(text, reg);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return std::move(*p);
  }
  // Runs over `nodes` fresh worker processes, each named w0, w1, ...
  static Result<RunResult> run_on(const Program& p, unsigned nodes, ClusterOptions c, Mode mode = Mode::kPool) {
    WorkerProcesses workers;
    c.cluster.min_workers = nodes;
    c.cluster.wait_s = 20;
    c.cluster.on_listening = [&](const std::string& endpoint) {
      for (unsigned n = 0; n < nodes; ++n) workers.spawn_cli({"worker", "--connect", endpoint, "--cores", "2", "--name", "w" + std::to_string(n)});
    };
    RunOptions o;
    o.mode = mode;
    auto r = run_cluster(p, o, c);
    for (pid_t pid : std::vector<pid_t>(workers.pids())) EXPECT_EQ(workers.wait_exit(pid, 10), r.ok() ? 0 : 1) << "a worker's exit status";
    return r;
  }
};

// What kMix computes, sequentially: zipped 4x, running sums, their total.
ByteMap mix_expected(std::uint64_t n = kMixTokens) {
  ByteMap out;
  std::uint64_t run_sum = 0, total = 0;
  auto put = [&](const char* name, std::uint64_t v) {
    const auto* at = reinterpret_cast<const std::byte*>(&v);
    out[name].insert(out[name].end(), at, at + 8);
  };
  for (std::uint64_t x = 1; x <= n; ++x) {
    put("zipped", 4 * x);
    run_sum += x;
    put("running", run_sum);
    total += run_sum;
  }
  put("total", total);
  return out;
}

// The matrix below runs kMix 8 times per algorithm, and a cycle that crosses
// nodes costs a round trip per token: under the sanitizers (20-40x slower
// there) that one test took 2 minutes of ASan's stage and 4 of TSan's, so
// there it streams 100 tokens, which take every path 500 do.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::uint64_t kMatrixTokens = 100;
#else
constexpr std::uint64_t kMatrixTokens = kMixTokens;
#endif

std::string mix_with_tokens(std::uint64_t n) {
  std::string text = kMix;
  const std::string from = "n=" + std::to_string(kMixTokens) + " ";
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "kMix's counter is no longer " << from;
  if (at != std::string::npos) text.replace(at, from.size(), "n=" + std::to_string(n) + " ");
  return text;
}

TEST_P(StreamCluster, EqualsTheSequentialResultOnOneToFourNodesInBothModes) {
  const auto reg = OperatorRegistry::with_builtins();
  const std::string text = mix_with_tokens(kMatrixTokens);
  const Program p = program(reg, text.c_str());
  const auto expected = mix_expected(kMatrixTokens);
  auto local = run(p, RunOptions{Mode::kPool, 2});
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  ASSERT_EQ(local->outputs, expected);
  ClusterOptions c;
  c.place = GetParam();
  c.profile_json = profile_json(*local);  // smart_min/max weigh by it; the others ignore it
  for (unsigned nodes = 1; nodes <= 4; ++nodes)
    for (Mode mode : {Mode::kPool, Mode::kThreadPerOperator}) {
      SCOPED_TRACE(std::string(GetParam()) + " on " + std::to_string(nodes) + " nodes, " + (mode == Mode::kPool ? "pool" : "threads"));
      auto r = run_on(p, nodes, c, mode);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->outputs, expected);
      // Every operator ran, on a node that exists; every node is reported.
      ASSERT_EQ(r->operators.size(), p.instances().size());
      ASSERT_EQ(r->nodes.size(), nodes);
      std::size_t placed = 0;
      for (const auto& o : r->operators) {
        EXPECT_GT(o.firings, 0u) << o.name;
        EXPECT_TRUE(o.node >= 0 && o.node < static_cast<int>(nodes)) << o.name;
      }
      for (const auto& node : r->nodes) placed += node.operators;
      EXPECT_EQ(placed, p.instances().size());
      // The profile covers every stream once (counted where its producer ran).
      EXPECT_EQ(r->streams.size(), p.streams().size());
    }
}

INSTANTIATE_TEST_SUITE_P(Algos, StreamCluster, ::testing::Values("naive", "topological", "smart", "smart_min", "smart_max"),
                         [](const auto& info) { return std::string(info.param); });

// The paper's application end to end: the wavelet encoder on the real
// camera image, over 3 worker processes with the communication-aware
// placement, gives the sequential encoder's bytes.
TEST(StreamClusterApps, TheWaveletEncoderOverThreeNodesEqualsTheSequentialEncoder) {
  const std::string dir = ::testing::TempDir() + "/stream_cluster_wavelet_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string pgm = dir + "/camera.pgm";
  const std::string cmd = std::string(REDFLOW_SOURCE_DIR) + "/scripts/camera-pgm " + pgm;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd << " (python3-pywt: scripts/bootstrap installs it)";
  auto image = read_pgm(pgm);
  ASSERT_TRUE(image.ok()) << image.status().ToString();
  const auto reg = OperatorRegistry::with_builtins();
  auto p = wavelet_program(reg, pgm);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  WorkerProcesses workers;
  ClusterOptions c;
  c.cluster.min_workers = 3;
  c.place = "smart";
  c.cluster.on_listening = [&](const std::string& ep) {
    for (int n = 0; n < 3; ++n) workers.spawn_cli({"worker", "--connect", ep, "--cores", "1"});
  };
  auto r = run_cluster(*p, RunOptions{}, c);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_TRUE(r->outputs.begin()->second == wavelet_encode_sequential(*image)) << "the encoded bytes differ from the sequential encoder's";
  std::set<int> used;
  for (const auto& o : r->operators) used.insert(o.node);
  EXPECT_EQ(used.size(), 3u) << "every node ran a part";
}

// The two optimisations are switches: off, the results stay the same, and
// without aggregation the same tokens take more bytes on the wire (one
// message, with its headers, per token).
TEST(StreamClusterSwitches, AggregationAndTwoLevelBufferingCanBeSwitchedOffWithoutChangingResults) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(R"(digraph chain {
    src [operator="counter", args="n=20000"];
    a [operator="scale", args="k=3"];
    b [operator="scale", args="k=5"];
    d [operator="dup", args="outputs=2"];
    s [operator="sum"];
    all [operator="collect"];
    total [operator="collect"];
    src -> a [token=8]; a -> b [token=8]; b -> d [token=8];
    d -> all [token=8, from_port=0]; d -> s [token=8, from_port=1]; s -> total [token=8];
  })",
                             reg);
  ASSERT_TRUE(p.ok());
  auto local = run(*p);
  ASSERT_TRUE(local.ok());
  std::uint64_t wire[2] = {0, 0};
  for (int off = 0; off < 2; ++off) {
    ClusterOptions c;
    c.place = "naive";  // cuts streams at random
    c.aggregate = off == 0;
    c.two_level = off == 0;
    WorkerProcesses workers;
    c.cluster.min_workers = 3;
    c.cluster.on_listening = [&](const std::string& ep) {
      for (int n = 0; n < 3; ++n) workers.spawn_cli({"worker", "--connect", ep, "--cores", "1"});
    };
    auto r = run_cluster(*p, RunOptions{}, c);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->outputs, local->outputs);
    for (const auto& n : r->nodes) wire[off] += n.bytes_in + n.bytes_to_nodes;
  }
  EXPECT_GT(wire[1], 2 * wire[0]) << "tokens one by one should cost far more bytes than aggregated ones";
}

// Without checkpoints a stream program's operators hold state that nothing
// else has: a worker killed mid-stream ends the run, with an error naming the
// worker and what it held, within the heartbeat timeout; the other worker is
// told and exits with an error. (With checkpoints: stream_recovery_test.cpp.)
TEST(StreamClusterFaults, AWorkerKilledMidStreamIsAnErrorNamingIt) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(R"(digraph forever {
    src [operator="counter", args="n=1000000000000 rate=50000"];
    x [operator="scale", args="k=2"];
    s [operator="sum"];
    out [operator="collect"];
    src -> x [token=8]; x -> s [token=8]; s -> out [token=8];
  })",
                             reg);
  ASSERT_TRUE(p.ok());
  WorkerProcesses workers;
  pid_t survivor = 0, victim = 0;
  ClusterOptions c;
  c.cluster.min_workers = 2;
  c.place = "smart";
  c.cluster.heartbeat_timeout_s = 2;
  c.checkpoint_every_s = 0;  // no checkpoints: nothing to go on from
  c.cluster.on_listening = [&](const std::string& ep) {
    survivor = workers.spawn_cli({"worker", "--connect", ep, "--name", "steady"});
    victim = workers.spawn_cli({"worker", "--connect", ep, "--name", "victim"});
  };
  // Killed at the first progress report: the nodes have started streaming.
  std::optional<std::chrono::steady_clock::time_point> killed;
  c.on_progress = [&](unsigned, std::uint64_t) {
    if (killed || victim <= 0) return;
    workers.kill9(victim);
    killed = std::chrono::steady_clock::now();
  };
  auto r = run_cluster(*p, RunOptions{}, c);
  ASSERT_TRUE(killed.has_value()) << "the stream never started: " << r.status().ToString();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - *killed).count();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'victim'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("lost mid-stream"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("operators "), std::string::npos) << r.status().ToString();
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_NE(r.status().message().find(std::string(" on ") + host + ","), std::string::npos) << "the error names the lost node's host "
                                                                                           << host << ": " << r.status().ToString();
  // Measured from the kill, with a loaded machine's grace: the promise is
  // the heartbeat timeout, not how fast a run starts.
  EXPECT_LT(s, 2 + 4) << "the loss is noticed within the heartbeat timeout (and a few beats' grace)";
  EXPECT_EQ(workers.wait_exit(survivor, 10), 1) << "the surviving worker is told the run ended";
}

// A node whose part finished before another node was lost is told why the
// run failed (the driver's REFUSED with its error): it exits with an error
// that names the lost node, not 0 as after a finished run.
TEST(StreamClusterFaults, ANodeWhosePartFinishedIsToldWhyTheRunFailed) {
  const auto reg = OperatorRegistry::with_builtins();
  // Two pipelines, one per node (smart placement splits them): a short one
  // that finishes at once, and an endless one on the node that is killed.
  auto text = [](bool short_first) {
    const std::string finite = "args=\"n=10\"", endless = "args=\"n=1000000000000 rate=50000\"";
    return "digraph two { a [operator=\"counter\", " + (short_first ? finite : endless) + "]; ca [operator=\"collect\"];\n"
           "b [operator=\"counter\", " + (short_first ? endless : finite) + "]; cb [operator=\"collect\"];\n"
           "a -> ca [token=8]; b -> cb [token=8]; }";
  };
  ClusterOptions c;
  c.cluster.min_workers = 2;
  c.cluster.heartbeat_timeout_s = 2;
  c.checkpoint_every_s = 0;  // no checkpoints: a loss ends the run
  c.place = "smart";
  auto placed = place_program(*Program::from_dot(text(true), reg), 2, c.place, "", "", c.seed);
  ASSERT_TRUE(placed.ok()) << placed.status().ToString();
  const std::vector<unsigned>& node_of = placed->placement.node_of;  // a, ca, b, cb
  ASSERT_EQ(node_of.size(), 4u);
  ASSERT_TRUE(node_of[0] == node_of[1] && node_of[2] == node_of[3] && node_of[0] != node_of[2]) << "smart placement keeps a pipeline on one node";
  // The short pipeline on the node that arrived first... whichever worker that is.
  auto p = Program::from_dot(text(node_of[0] == 0), reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();

  const auto dir = std::filesystem::temp_directory_path() / ("redflow_stream_refused_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string logs[2] = {(dir / "w0.log").string(), (dir / "w1.log").string()};
  auto read_log = [](const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  WorkerProcesses workers;
  std::atomic<pid_t> pids[2] = {0, 0};  // written on the driver's thread, read by the killer thread
  c.cluster.on_listening = [&](const std::string& ep) {
    for (int w = 0; w < 2; ++w) {
      const int fd = ::open(logs[w].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      pids[w] = workers.spawn_cli({"worker", "--connect", ep, "--name", "w" + std::to_string(w)}, testing::SpawnOptions{.out_fd = fd, .err_fd = fd});
      ::close(fd);
    }
  };
  // Kills the worker that became node 1 (the endless pipeline's) once the
  // short pipeline has long finished.
  std::atomic<int> killed{-1};
  std::thread killer([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (killed < 0 && std::chrono::steady_clock::now() < deadline) {
      for (int w = 0; w < 2; ++w)
        if (read_log(logs[w]).find("as stream node 1") != std::string::npos) killed = w;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (killed < 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    workers.kill9(pids[killed]);
  });
  auto r = run_cluster(*p, RunOptions{}, c);
  killer.join();
  ASSERT_GE(killed.load(), 0) << "no worker became node 1:\n" << read_log(logs[0]) << read_log(logs[1]);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("lost mid-stream"), std::string::npos) << r.status().ToString();
  const int survivor = 1 - killed;
  EXPECT_EQ(workers.wait_exit(pids[survivor], 10), 1) << read_log(logs[survivor]);
  const std::string said = read_log(logs[survivor]);
  EXPECT_NE(said.find("refused this worker: the stream program failed"), std::string::npos) << said;
  EXPECT_NE(said.find("'w" + std::to_string(killed.load()) + "'"), std::string::npos) << "the survivor names the lost node:\n" << said;
  EXPECT_NE(said.find("lost mid-stream"), std::string::npos) << said;
  std::filesystem::remove_all(dir);
}

// An operator that fails on a node (here: the wavelet source's image is
// missing) ends the run with an error naming the node and the operator; the
// worker exits with an error too.
TEST(StreamClusterFaults, AnOperatorFailingOnANodeIsAnErrorNamingIt) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(wavelet_dot("/nonexistent/redflow-test.pgm"), reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  WorkerProcesses workers;
  pid_t pids[2] = {0, 0};
  ClusterOptions c;
  c.cluster.min_workers = 2;
  c.cluster.on_listening = [&](const std::string& ep) {
    for (int n = 0; n < 2; ++n) pids[n] = workers.spawn_cli({"worker", "--connect", ep, "--name", "n" + std::to_string(n)});
  };
  auto r = run_cluster(*p, RunOptions{}, c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("failed"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("'source'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("redflow-test.pgm"), std::string::npos) << r.status().ToString();
  for (pid_t pid : pids) EXPECT_EQ(workers.wait_exit(pid, 10), 1);
}

// No worker within the wait: a named error that says how many came and how to start them.
TEST(StreamClusterFaults, MissingWorkersAreANamedErrorAfterTheWait) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(kMix, reg);
  ASSERT_TRUE(p.ok());
  ClusterOptions c;
  c.cluster.min_workers = 2;
  c.cluster.wait_s = 0.5;
  auto r = run_cluster(*p, RunOptions{}, c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("0 came"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("redflow worker --connect tcp://127.0.0.1:"), std::string::npos) << r.status().ToString();
}

// `redflow tile` (the worker that serves only as a tile) is refused by a
// stream driver, by name and role; the driver waits on for a node, and its
// error at the end of the wait names the refusal.
TEST(StreamClusterFaults, ATileWorkerIsRefusedByName) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(kMix, reg);
  ASSERT_TRUE(p.ok());
  WorkerProcesses workers;
  pid_t tile = 0;
  ClusterOptions c;
  c.cluster.min_workers = 1;
  c.cluster.wait_s = 3;
  c.cluster.on_listening = [&](const std::string& ep) { tile = workers.spawn_cli({"tile", "--connect", ep, "--name", "graph-tile"}); };
  auto r = run_cluster(*p, RunOptions{}, c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'graph-tile'"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("not stream node"), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().message().find("0 came"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(workers.wait_exit(tile, 10), 1);
}

// With keys (docs/security.md): an authorized stream worker runs its part
// over CURVE; one whose key is not listed is never let in, and says why.
TEST(StreamClusterKeys, OnlyAuthorizedWorkersJoinAndTheRunIsEncrypted) {
  const std::string dir = ::testing::TempDir() + "/stream_keys_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::string authorized;
  for (const char* who : {"driver", "node1", "stranger"}) {
    auto keys = net::generate_key_pair();
    ASSERT_TRUE(keys.ok());
    ASSERT_TRUE(net::write_key_pair(dir + "/" + who, *keys, false).ok());
    if (std::string(who) == "node1") authorized = keys->public_key + " node1\n";
  }
  std::ofstream(dir + "/workers.keys") << authorized;
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(kMix, reg);
  ASSERT_TRUE(p.ok());
  WorkerProcesses workers;
  int stranger_exit = -1, plain_exit = -1;
  std::unique_ptr<testing::TcpRelay> relay;
  ClusterOptions c;
  c.cluster.min_workers = 1;
  c.cluster.key_file = dir + "/driver.key";
  c.cluster.authorized_keys_file = dir + "/workers.keys";
  c.cluster.on_listening = [&](const std::string& ep) {
    // Each turned away alone, while the driver still waits for its one
    // node, and each told why: a worker that comes once the driver has its
    // nodes is turned away whatever its key.
    const pid_t stranger = workers.spawn_cli({"worker", "--connect", ep, "--key", dir + "/stranger.key", "--server-key", dir + "/driver.pub",
                                              "--connect-timeout", "3"},
                                             dir + "/stranger.log");
    stranger_exit = workers.wait_exit(stranger, 20);
    const pid_t plain = workers.spawn_cli({"worker", "--connect", ep, "--connect-timeout", "3"}, dir + "/plain.log");
    plain_exit = workers.wait_exit(plain, 20);
    // The node that runs the program, through a relay that keeps every byte.
    relay = std::make_unique<testing::TcpRelay>(std::stoi(ep.substr(ep.rfind(':') + 1)));
    workers.spawn_cli({"worker", "--connect", "tcp://127.0.0.1:" + std::to_string(relay->port()), "--key", dir + "/node1.key", "--server-key",
                       dir + "/driver.pub"});
  };
  auto r = run_cluster(*p, RunOptions{}, c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->outputs, mix_expected());
  EXPECT_EQ(stranger_exit, 1) << "the unlisted worker gives up";
  EXPECT_EQ(plain_exit, 1) << "the worker without a key gives up";
  std::string said = testing::file_text(dir + "/stranger.log");
  EXPECT_NE(said.find("the driver refused this worker's key: add this worker's public key to the driver's --authorized-keys"), std::string::npos)
      << said;
  said = testing::file_text(dir + "/plain.log");
  EXPECT_NE(said.find("it requires keys and this worker has none; give this worker --key FILE"), std::string::npos) << said;
  // The SETUP names every instance and operator and the results come back
  // over the same link: in plain text they would show on the wire.
  ASSERT_NE(relay, nullptr);
  const std::string wire = relay->seen();
  EXPECT_NE(wire.find("CURVE"), std::string::npos) << "the greeting names the mechanism";
  for (const char* plain_text : {"counter", "zipped", "running", "n=500 start=1"})
    EXPECT_EQ(wire.find(plain_text), std::string::npos) << "'" << plain_text << "' crossed the wire in plain text";
  std::filesystem::remove_all(dir);
}

// A traced cluster run: every operator's firing spans come back from its
// node, within the run, and the trace has a process per node.
TEST(StreamClusterTrace, SpansComeBackFromEveryNode) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(kMix, reg);
  ASSERT_TRUE(p.ok());
  WorkerProcesses workers;
  ClusterOptions c;
  c.cluster.min_workers = 2;
  c.cluster.on_listening = [&](const std::string& ep) {
    for (int n = 0; n < 2; ++n) workers.spawn_cli({"worker", "--connect", ep, "--name", "t" + std::to_string(n)});
  };
  RunOptions o;
  o.trace = true;
  auto r = run_cluster(*p, o, c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& op : r->operators) {
    ASSERT_FALSE(op.spans.empty()) << op.name;
    for (const auto& s : op.spans) {
      EXPECT_LE(s.start_s, s.end_s) << op.name;
      EXPECT_LE(s.end_s, r->nodes.at(op.node).seconds + 1e-3) << op.name;
    }
  }
  const std::string json = to_chrome_trace(*r);
  EXPECT_NE(json.find("node 0 (t"), std::string::npos);
  EXPECT_NE(json.find("node 1 (t"), std::string::npos);
  const std::string svg = to_gantt_svg(*r);
  EXPECT_NE(svg.find("on 2 node(s)"), std::string::npos);
}

// The stream messages refuse what is malformed, and round-trip what is not.
TEST(StreamMessages, SetupDoneAndTokensRoundTripAndRefuseWhatIsMalformed) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(kMix, reg);
  ASSERT_TRUE(p.ok());
  std::vector<unsigned> node_of(p->instances().size());
  for (std::size_t i = 0; i < node_of.size(); ++i) node_of[i] = i % 3;
  SetupMessage m = make_setup(*p, node_of, 2, 3);
  m.links = {NodeLink{"tcp://10.0.0.1:4000", "key-a"}, NodeLink{}, NodeLink{"tcp://10.0.0.3:4001", ""}};
  std::vector<std::byte> body;
  encode(m, body);
  SetupMessage back;
  ASSERT_TRUE(decode(body, back).ok());
  EXPECT_TRUE(back == m);
  EXPECT_EQ(back.links.at(0).endpoint, "tcp://10.0.0.1:4000");
  auto rebuilt = program_of(back, reg);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  EXPECT_EQ(rebuilt->instances().size(), p->instances().size());
  // Every truncation of a SETUP is refused, never read past.
  for (std::size_t cut = 0; cut < body.size(); cut += 7) {
    SetupMessage x;
    EXPECT_FALSE(decode(std::span(body).first(cut), x).ok()) << cut;
  }
  // Links to another count of nodes than the program's are refused by name.
  m.links.pop_back();
  body.clear();
  encode(m, body);
  SetupMessage y;
  const Status short_links = decode(body, y);
  EXPECT_NE(short_links.message().find("links to 2 nodes of 3"), std::string::npos) << short_links.ToString();
  // A placement on a node beyond the count is refused by name.
  m.links.clear();
  m.node_of[0] = 9;
  body.clear();
  encode(m, body);
  SetupMessage x;
  const Status bad = decode(body, x);
  EXPECT_NE(bad.message().find("node 9"), std::string::npos) << bad.ToString();

  // TOKENS: two entries; a stream that does not come here refuses the whole body.
  std::vector<std::byte> tokens;
  TokenBatchWriter w(tokens);
  w.begin(1);
  const std::uint64_t vals[3] = {7, 8, 9};
  w.add(4, false, std::as_bytes(std::span(vals)), 3);
  w.add(5, true, {}, 0);
  EXPECT_EQ(*tokens_node(tokens), 1u);
  std::vector<std::uint64_t> got;
  int closes = 0;
  auto deliver = [&](std::uint32_t, bool close, std::span<const std::byte> t, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t v;  // the tokens sit at any alignment in the message
      std::memcpy(&v, t.data() + i * 8, 8);
      got.push_back(v);
    }
    closes += close;
  };
  ASSERT_TRUE(decode_tokens(tokens, [](std::uint32_t k) -> std::size_t { return k == 4 || k == 5 ? 8 : 0; }, deliver).ok());
  EXPECT_EQ(got, (std::vector<std::uint64_t>{7, 8, 9}));
  EXPECT_EQ(closes, 1);
  got.clear();
  const Status stranger = decode_tokens(tokens, [](std::uint32_t k) -> std::size_t { return k == 4 ? 8 : 0; }, deliver);
  EXPECT_NE(stranger.message().find("stream 5 does not come to this node"), std::string::npos) << stranger.ToString();
  EXPECT_TRUE(got.empty()) << "nothing is delivered from a body with a bad entry";
  const Status cut = decode_tokens(std::span(tokens).first(tokens.size() - 12), [](std::uint32_t) -> std::size_t { return 8; }, deliver);
  EXPECT_FALSE(cut.ok());
  EXPECT_TRUE(got.empty());

  // DONE round-trips outputs and the profile.
  RunResult r;
  r.seconds = 1.5;
  r.outputs["total"] = Bytes{std::byte{1}, std::byte{2}, std::byte{3}};
  r.operators.push_back({"src", 12, 0.25});
  r.streams.push_back({"src", "d", 20000});
  std::vector<std::byte> done;
  encode_done(r, done, 4096);
  RunResult d;
  std::uint64_t most = 0;
  ASSERT_TRUE(decode_done(done, d, &most).ok());
  EXPECT_EQ(most, 4096u);
  EXPECT_EQ(d.outputs, r.outputs);
  EXPECT_EQ(d.operators.at(0).firings, 12u);
  EXPECT_EQ(d.streams.at(0).tokens, 20000u);
  // CREDIT round-trips; a cut one is refused, naming it.
  std::vector<std::byte> credit;
  encode_credits(3, {TokenCount{4, 4096}, TokenCount{9, 1}}, credit);
  std::uint32_t to = 0;
  std::vector<TokenCount> credits;
  ASSERT_TRUE(decode_credits(credit, to, credits).ok());
  EXPECT_EQ(to, 3u);
  EXPECT_EQ(credits, (std::vector<TokenCount>{{4, 4096}, {9, 1}}));
  const Status cut_credit = decode_credits(std::span(credit).first(credit.size() - 1), to, credits);
  EXPECT_NE(cut_credit.message().find("stream CREDIT"), std::string::npos) << cut_credit.ToString();
  // SENT round-trips; a cut one is refused, naming it.
  std::vector<std::byte> sent;
  encode_sent(123456, {TokenCount{2, 77}}, sent);
  std::uint64_t sent_bytes = 0;
  std::vector<TokenCount> counts;
  ASSERT_TRUE(decode_sent(sent, sent_bytes, counts).ok());
  EXPECT_EQ(sent_bytes, 123456u);
  EXPECT_EQ(counts, (std::vector<TokenCount>{{2, 77}}));
  const Status cut_sent = decode_sent(std::span(sent).first(sent.size() - 1), sent_bytes, counts);
  EXPECT_NE(cut_sent.message().find("stream SENT"), std::string::npos) << cut_sent.ToString();
  // OUTPUT round-trips; a cut one, or one whose bytes would end past the largest output, is refused, naming it.
  const OutputMessage out{7, 1u << 20, {std::byte{1}, std::byte{2}, std::byte{3}}};
  std::vector<std::byte> output;
  encode(out, output);
  EXPECT_EQ(*message_type(output), StreamMessage::kOutput);
  OutputMessage output_back;
  ASSERT_TRUE(decode(output, output_back).ok());
  EXPECT_EQ(output_back, out);
  const Status cut_output = decode(std::span(output).first(output.size() - 1), output_back);
  EXPECT_NE(cut_output.message().find("stream OUTPUT"), std::string::npos) << cut_output.ToString();
  std::vector<std::byte> far;
  encode(OutputMessage{7, kMaxValueBytes, {std::byte{1}}}, far);
  const Status beyond = decode(far, output_back);
  EXPECT_NE(beyond.message().find("beyond the largest output"), std::string::npos) << beyond.ToString();
  EXPECT_FALSE(message_type(std::vector<std::byte>{std::byte{42}}).ok());
  EXPECT_FALSE(message_type({}).ok());
}

}  // namespace
}  // namespace redflow::stream

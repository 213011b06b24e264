// What crosses between nodes, and how much. Back-pressure (docs/streams.md,
// "Back-pressure"): which streams get a credit window (every one that
// crosses nodes), and, over real worker
// processes, a producer far faster than its reader on another node keeps
// the reader's node within the window while the run's result stays right.
// A window that holds back what the program needs grows (a concat across
// nodes). And a node's output crosses its link to the driver once, with
// checkpoints or without.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <set>

#include "net_workers.hpp"
#include "redflow/stream.hpp"
#include "stream/apps/wavelet.hpp"
#include "stream/credit_window.hpp"
#include "watchdog.hpp"

namespace redflow::stream {
namespace {

Program credit_program(const char* dot) {
  static const OperatorRegistry reg = OperatorRegistry::with_builtins();  // a program keeps its registry's address
  auto p = Program::from_dot(dot, reg);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(*p);
}

std::uint32_t operator_index(const Program& p, const std::string& name) {
  for (std::uint32_t i = 0; i < p.instances().size(); ++i)
    if (p.instances()[i].name == name) return i;
  ADD_FAILURE() << "no operator " << name;
  return 0;
}

std::size_t stream_between(const Program& p, const std::string& from, const std::string& to) {
  for (std::size_t k = 0; k < p.streams().size(); ++k)
    if (p.instances()[p.streams()[k].from].name == from && p.instances()[p.streams()[k].to].name == to) return k;
  ADD_FAILURE() << "no stream " << from << " -> " << to;
  return 0;
}

// src -> a; a splits to b and c, which meet again in d (a diamond); d -> e;
// e feeds a cycle with f: every stream between two nodes gets a window,
// on the diamond and the cycle too (Parks' rule on the reader's node grows
// one that holds back what the program needs).
TEST(StreamCredits, EveryStreamBetweenNodesGetsAWindow) {
  const Program p = credit_program(R"(digraph g {
      src [operator="counter", args="n=10"]; a [operator="dup"]; b [operator="scale"]; c [operator="scale"];
      d [operator="add"]; e [operator="add"]; f [operator="dup"]; back [operator="delay"]; out [operator="collect"];
      src -> a [token=8]; a -> b [token=8, from_port=0]; a -> c [token=8, from_port=1];
      b -> d [token=8, to_port=0]; c -> d [token=8, to_port=1]; d -> e [token=8, to_port=0];
      e -> f [token=8]; f -> back [token=8, from_port=0]; back -> e [token=8, to_port=1]; f -> out [token=8, from_port=1]; })");
  // Each operator on a node of its own: every stream crosses, each gets 4 KiB / 8 = 512 tokens.
  std::vector<std::uint32_t> own(p.instances().size());
  for (std::uint32_t i = 0; i < own.size(); ++i) own[i] = i;
  for (const std::uint64_t x : credit_windows(p, own, 4096)) EXPECT_EQ(x, 512u);
  // The cycle e -> f -> back -> e on one node: its streams stay within it, no window.
  std::vector<std::uint32_t> cycle_together = own;
  cycle_together[operator_index(p, "f")] = cycle_together[operator_index(p, "back")] = cycle_together[operator_index(p, "e")];
  const std::vector<std::uint64_t> w = credit_windows(p, cycle_together, 4096);
  for (std::size_t k = 0; k < w.size(); ++k) {
    const std::string from = p.instances()[p.streams()[k].from].name, to = p.instances()[p.streams()[k].to].name;
    const bool inside = (from == "e" && to == "f") || (from == "f" && to == "back") || (from == "back" && to == "e");
    EXPECT_EQ(w[k], inside ? 0u : 512u) << from << " -> " << to;
  }
  // All on one node: nothing crosses, no windows; no buffer: none either.
  for (std::uint64_t x : credit_windows(p, std::vector<std::uint32_t>(own.size(), 0), 4096)) EXPECT_EQ(x, 0u);
  for (std::uint64_t x : credit_windows(p, own, 0)) EXPECT_EQ(x, 0u);
  // A window is at least one token, however large the token.
  const Program big = credit_program(R"(digraph g { s [operator="counter"]; t [operator="throttle", args="rate=10"]; o [operator="collect"];
      s -> t [token=8]; t -> o [token=8]; })");
  EXPECT_EQ(credit_windows(big, {0, 1, 1}, 3)[stream_between(big, "s", "t")], 1u);
}

// counter -> scale on node 0, throttle -> collect on node 1 (topological
// placement fills node 0 with the first two): the counter makes 300,000
// tokens in milliseconds, the throttle reads 300,000 a second.
constexpr const char* kFastToSlow = R"(digraph g {
  src [operator="counter", args="n=300000"]; pass [operator="scale", args="k=1"];
  slow [operator="throttle", args="rate=300000"]; out [operator="collect"];
  src -> pass [token=8]; pass -> slow [token=8]; slow -> out [token=8]; })";

// Two worker processes of `cores` cores each, the program placed on them in
// topological order (the first operators on node 0).
ClusterOptions two_nodes_in_order(WorkerProcesses& workers, const std::string& cores) {
  ClusterOptions c;
  c.place = "topological";
  c.cluster.min_workers = 2;
  c.cluster.wait_s = 20;
  c.cluster.on_listening = [&workers, cores](const std::string& endpoint) {
    for (int n = 0; n < 2; ++n) workers.spawn_cli({"worker", "--connect", endpoint, "--cores", cores, "--name", "c" + std::to_string(n)});
  };
  return c;
}

Result<RunResult> run_fast_to_slow(std::size_t buffer_bytes) {
  const Program p = credit_program(kFastToSlow);
  WorkerProcesses workers;
  const ClusterOptions c = two_nodes_in_order(workers, "2");
  RunOptions o;
  o.stream_buffer_bytes = buffer_bytes;
  auto r = run_cluster(p, o, c);
  for (pid_t pid : std::vector<pid_t>(workers.pids())) EXPECT_EQ(workers.wait_exit(pid, 10), r.ok() ? 0 : 1) << "a worker's exit status";
  return r;
}

void expect_counted_to(const RunResult& r, std::uint64_t n) {
  const Bytes& out = r.outputs.at("out");
  ASSERT_EQ(out.size(), n * 8);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, out.data() + i * 8, 8);
    ASSERT_EQ(v, i) << "token " << i;
  }
}

TEST(StreamCredits, AFastProducerKeepsItsRemoteReadersNodeWithinTheWindow) {
  auto bounded = run_fast_to_slow(64 << 10);
  ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
  expect_counted_to(*bounded, 300000);
  for (const auto& op : bounded->operators) EXPECT_EQ(op.node, op.name == "src" || op.name == "pass" ? 0 : 1) << op.name << "'s node";
  ASSERT_EQ(bounded->nodes.size(), 2u);
  std::uint64_t reader = 0;
  for (const auto& n : bounded->nodes) reader = std::max(reader, n.most_waiting_bytes);
  EXPECT_GT(reader, 0u);
  EXPECT_LE(reader, std::uint64_t{64} << 10) << "the reader's node held more than the window";
  // Without a buffer bound the producer's node sends all it makes at once:
  // the reader's node holds far more (the bound is what held it).
  auto unbounded = run_fast_to_slow(0);
  ASSERT_TRUE(unbounded.ok()) << unbounded.status().ToString();
  expect_counted_to(*unbounded, 300000);
  std::uint64_t flooded = 0;
  for (const auto& n : unbounded->nodes) flooded = std::max(flooded, n.most_waiting_bytes);
  EXPECT_GT(flooded, 4 * (std::uint64_t{64} << 10));
}

// The wavelet encoder's packer takes a group of rows from each band in
// turn, the coarsest band's row first, and that row is made last of its
// group: each finer band's stream holds the group's rows meanwhile. With
// the packer on one node and band coders on the other (topological
// placement) and streams and windows of 8 tokens, less than one coded row,
// the program still finishes with the sequential encoder's bytes: what it
// needs beyond a bound, Parks' rule grows (on a node, or across nodes).
TEST(StreamCredits, TheWaveletEncoderWithWindowsSmallerThanARowFinishesAcrossNodes) {
  GrayImage image;
  image.width = image.height = 256;
  image.pixels.resize(std::size_t{256} * 256);
  for (int y = 0; y < 256; ++y)
    for (int x = 0; x < 256; ++x) image.pixels[std::size_t(y) * 256 + x] = static_cast<std::uint8_t>((x * 5 + y * 9 + ((x / 32 + y / 32) % 2) * 100) & 0xff);
  const std::string pgm = ::testing::TempDir() + "/stream_credit_" + std::to_string(getpid()) + ".pgm";
  ASSERT_TRUE(write_pgm(image, pgm).ok());
  const auto reg = OperatorRegistry::with_builtins();
  auto p = wavelet_program(reg, pgm);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  WorkerProcesses workers;
  const ClusterOptions c = two_nodes_in_order(workers, "1");
  RunOptions o;
  o.stream_buffer_bytes = 64;  // 8 tokens of 8 bytes
  auto r = testing::within_seconds(60, "the wavelet encoder with windows of 8 tokens", [&] { return run_cluster(*p, o, c); });
  std::filesystem::remove(pgm);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_TRUE(r->outputs.begin()->second == wavelet_encode_sequential(image)) << "the encoded bytes differ from the sequential encoder's";
  int pack = -1;
  std::set<int> coders;
  for (const auto& op : r->operators) {
    if (op.name == "pack") pack = op.node;
    if (op.name.rfind("rle_", 0) == 0) coders.insert(op.node);
  }
  ASSERT_GE(pack, 0);
  EXPECT_TRUE(coders.size() > 1 || !coders.contains(pack)) << "some band's coder runs on another node than the packer";
}

// counter and dup on node 0, concat and collect on node 1 (topological
// placement): the concat reads the dup's first stream to its end before
// the second, so the second's window, 8 tokens, must grow across the link
// to hold all 20,000 tokens (Parks' rule on the reader's node); the run
// gives both streams in order.
TEST(StreamCredits, AConcatAcrossNodesGrowsTheSecondWindowUntilTheFirstStreamEnds) {
  const Program p = credit_program(R"(digraph g {
      src [operator="counter", args="n=20000"]; d [operator="dup"]; cat [operator="concat"]; out [operator="collect"];
      src -> d [token=8]; d -> cat [token=8, from_port=0, to_port=0]; d -> cat [token=8, from_port=1, to_port=1];
      cat -> out [token=8]; })");
  WorkerProcesses workers;
  const ClusterOptions c = two_nodes_in_order(workers, "1");
  RunOptions o;
  o.stream_buffer_bytes = 64;  // 8 tokens of 8 bytes
  auto r = testing::within_seconds(60, "a concat across nodes with windows of 8 tokens", [&] { return run_cluster(p, o, c); });
  for (pid_t pid : std::vector<pid_t>(workers.pids())) EXPECT_EQ(workers.wait_exit(pid, 10), r.ok() ? 0 : 1) << "a worker's exit status";
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const auto& op : r->operators) EXPECT_EQ(op.node, op.name == "src" || op.name == "d" ? 0 : 1) << op.name << "'s node";
  const Bytes& out = r->outputs.at("out");
  ASSERT_EQ(out.size(), 2 * 20000 * 8);
  for (std::uint64_t i = 0; i < 2 * 20000; ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, out.data() + i * 8, 8);
    ASSERT_EQ(v, i % 20000) << "token " << i;
  }
  std::uint64_t reader = 0;
  for (const auto& n : r->nodes) reader = std::max(reader, n.most_waiting_bytes);
  EXPECT_GE(reader, 20000u * 8 / 2) << "the reader's node never held what the second stream had to";
}

// 2 MB of tokens into a collect on one node: with checkpoints (each
// operator's final state goes to the driver as it finishes, and a
// collect's is its output) DONE does not carry the output again.
TEST(StreamCredits, AnOutputCrossesTheLinkToTheDriverOnce) {
  const Program p = credit_program(R"(digraph g { src [operator="counter", args="n=250000"]; out [operator="collect"]; src -> out [token=8]; })");
  for (const double every : {1.0, 0.0}) {
    WorkerProcesses workers;
    ClusterOptions c;
    c.checkpoint_every_s = every;
    c.cluster.min_workers = 1;
    c.cluster.wait_s = 20;
    c.cluster.on_listening = [&](const std::string& endpoint) { workers.spawn_cli({"worker", "--connect", endpoint, "--name", "once"}); };
    auto r = run_cluster(p, RunOptions{}, c);
    for (pid_t pid : std::vector<pid_t>(workers.pids())) EXPECT_EQ(workers.wait_exit(pid, 10), r.ok() ? 0 : 1) << "a worker's exit status";
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    expect_counted_to(*r, 250000);
    ASSERT_EQ(r->nodes.size(), 1u);
    EXPECT_GT(r->nodes[0].bytes_out, 2000000u) << "checkpoints every " << every << " s";
    EXPECT_LT(r->nodes[0].bytes_out, 2100000u) << "checkpoints every " << every << " s: the output crossed more than once";
  }
}

}  // namespace
}  // namespace redflow::stream

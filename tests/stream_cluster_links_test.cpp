// Tokens between stream nodes over real worker processes (`redflow worker`)
// on loopback: with direct links (the default) they go node to node and the
// driver carries only the program, the reports and the checkpoints; with
// ClusterOptions::direct_links off they go through the driver; with keys the
// nodes' links are CURVE and the run is the same. Each result equals the
// local run's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "key_dir.hpp"
#include "net_workers.hpp"
#include "redflow/report.hpp"
#include "redflow/stream.hpp"

namespace redflow::stream {
namespace {

using testing::WorkerProcesses;

constexpr std::uint64_t kLinkTokens = 200000;
// A chain placed in two halves (topological): two streams cross the nodes, one each way at most.
constexpr const char* kLinkChain = R"(digraph chain {
  src [operator="counter", args="n=200000"];
  a [operator="scale", args="k=3"];
  b [operator="scale", args="k=5"];
  s [operator="sum"];
  out [operator="collect"];
  src -> a [token=8]; a -> b [token=8]; b -> s [token=8]; s -> out [token=8];
})";

struct LinkRun {
  RunResult result;
  std::uint64_t to_nodes = 0, driver_in = 0, driver_out = 0;
};

// Runs kLinkChain on two worker processes; with `keys` (driver, node1 and node2 made in it), keyed.
LinkRun run_chain(bool direct, const testing::KeyDir* keys = nullptr) {
  LinkRun out;
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(kLinkChain, reg);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return out;
  ClusterOptions c;
  c.place = "topological";
  c.direct_links = direct;
  c.cluster.min_workers = 2;
  if (keys != nullptr) {
    c.cluster.key_file = keys->path("driver.key");
    c.cluster.authorized_keys_file = keys->authorize({"node1", "node2"});
  }
  WorkerProcesses workers;
  c.cluster.on_listening = [&](const std::string& ep) {
    for (const char* name : {"node1", "node2"}) {
      if (keys == nullptr) {
        workers.spawn_cli({"worker", "--connect", ep, "--cores", "1", "--name", name});
      } else {
        workers.spawn_cli({"worker", "--connect", ep, "--cores", "1", "--name", name, "--key", keys->path(std::string(name) + ".key"), "--server-key",
                           keys->path("driver.pub")});
      }
    }
  };
  auto r = run_cluster(*p, RunOptions{}, c);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return out;
  out.result = std::move(*r);
  for (const NodeReport& n : out.result.nodes) {
    out.to_nodes += n.bytes_to_nodes;
    out.driver_in += n.bytes_in;
    out.driver_out += n.bytes_out;
  }
  return out;
}

RunResult local_chain() {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(kLinkChain, reg);
  EXPECT_TRUE(p.ok());
  auto r = run(*p);
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : RunResult{};
}

TEST(StreamClusterLinks, TokensGoNodeToNodeAndTheDriverOnlyWatches) {
  const RunResult local = local_chain();
  const std::uint64_t token_bytes = kLinkTokens * 8;
  const LinkRun direct = run_chain(true);
  EXPECT_EQ(direct.result.outputs, local.outputs);
  ASSERT_EQ(direct.result.nodes.size(), 2u);
  EXPECT_GE(direct.to_nodes, token_bytes) << "the tokens of the cut stream went node to node";
  EXPECT_LT(direct.driver_in, token_bytes / 10) << "the driver forwarded tokens although the nodes have links";
  EXPECT_LT(direct.driver_out, token_bytes / 10) << "the nodes sent tokens to the driver although they have links";
  // The one report (--report-json) says the same.
  std::uint64_t peers = 0;
  for (const RunReport::Place& place : report(direct.result, "chain").places) peers += place.bytes_peers;
  EXPECT_EQ(peers, direct.to_nodes);

  const LinkRun relayed = run_chain(false);
  EXPECT_EQ(relayed.result.outputs, local.outputs);
  EXPECT_EQ(relayed.to_nodes, 0u) << "with direct links off nothing goes node to node";
  EXPECT_GE(relayed.driver_in, token_bytes) << "through the driver, the tokens reach the reader's node from it";
}

TEST(StreamClusterLinks, WithKeysTheNodesLinksAreCurveAndTheResultTheSame) {
  testing::KeyDir keys;
  for (const char* who : {"driver", "node1", "node2"}) ASSERT_FALSE(keys.make(who).empty()) << who;
  const LinkRun keyed = run_chain(true, &keys);
  EXPECT_EQ(keyed.result.outputs, local_chain().outputs);
  EXPECT_GE(keyed.to_nodes, kLinkTokens * 8) << "with keys the nodes still link to each other (over CURVE)";
}

// The live sample (RunOptions::on_sample) counts the tokens of the streams
// between nodes although the driver never sees them: the nodes' SENTs.
TEST(StreamClusterLinks, TheLiveSampleCountsTokensSentNodeToNode) {
  const auto reg = OperatorRegistry::with_builtins();
  // Paced: about a second, so samples (every 0.2 s) come while it runs.
  auto p = Program::from_dot(R"(digraph paced {
    src [operator="counter", args="n=8000 start=1 rate=8000"];
    x [operator="scale", args="k=2"];
    s [operator="sum"];
    out [operator="collect"];
    src -> x [token=8]; x -> s [token=8]; s -> out [token=8];
  })",
                             reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ClusterOptions c;
  c.place = "topological";  // x -> s crosses the nodes
  c.cluster.min_workers = 2;
  WorkerProcesses workers;
  c.cluster.on_listening = [&](const std::string& ep) {
    for (int n = 0; n < 2; ++n) workers.spawn_cli({"worker", "--connect", ep, "--cores", "1"});
  };
  RunOptions o;
  std::vector<std::uint64_t> seen;  // the cut stream's tokens, sample by sample
  o.on_sample = [&](const std::vector<StreamProfile>& streams) {
    for (const StreamProfile& st : streams)
      if (st.from == "x" && st.to == "s") seen.push_back(st.tokens);
  };
  auto r = run_cluster(*p, o, c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::uint64_t total = 0;
  for (std::uint64_t i = 1; i <= 8000; ++i) total += 2 * i;
  ASSERT_EQ(r->outputs.at("out").size(), 8u);
  std::uint64_t got = 0;
  std::memcpy(&got, r->outputs.at("out").data(), 8);
  EXPECT_EQ(got, total);
  ASSERT_GE(seen.size(), 2u) << "samples while a one-second run went on";
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GT(seen.back(), 0u) << "the tokens sent node to node were counted";
  EXPECT_LE(seen.back(), 8000u);
  EXPECT_TRUE(std::any_of(seen.begin(), seen.end(), [](std::uint64_t t) { return t > 0 && t < 8000; }))
      << "a count while the stream was still going: the samples follow the run, not only its end";
}

}  // namespace
}  // namespace redflow::stream

// A stream node reached through a man in the middle (wire_proxy.hpp) whose
// message is garbled after READY. Without checkpoints a node's operators
// hold state nothing else has, so losing it cannot be survived
// (docs/streams.md, "When a node is lost"): the run ends at once with an
// error naming the node and what was wrong with its message, never a crash,
// a hang or a wrong result. With checkpoints, a node whose messages cannot
// be read is lost and the run goes on without it, to the right result.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "net_workers.hpp"
#include "redflow/stream.hpp"
#include "watchdog.hpp"
#include "wire_proxy.hpp"

namespace redflow::stream {
namespace {

using net::EnvelopeKind;
using testing::ProxyAction;
using testing::ProxyRule;
using testing::WireProxy;

// Runs a two-node program of about a second, node "proxied" behind a proxy
// with `rule`; the run's error. Every node sends the driver READY, then
// what it sent the other node straight (SENT; unless it holds only the sink)
// and DONE: its second message is always there.
Result<RunResult> proxied_stream(const ProxyRule& rule, int& applied, double checkpoint_every_s) {
  const auto reg = OperatorRegistry::with_builtins();
  auto p = Program::from_dot(R"(digraph second {
    src [operator="counter", args="n=20000 rate=20000"];
    x [operator="scale", args="k=2"];
    s [operator="sum"];
    out [operator="collect"];
    src -> x [token=8]; x -> s [token=8]; s -> out [token=8];
  })",
                             reg);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return p.status();
  testing::WorkerProcesses workers;
  std::unique_ptr<WireProxy> proxy;
  std::size_t hit = 0;
  ClusterOptions c;
  c.cluster.min_workers = 2;
  c.place = "smart";
  c.cluster.wait_s = 20;
  c.checkpoint_every_s = checkpoint_every_s;
  c.cluster.on_listening = [&](const std::string& ep) {
    proxy = std::make_unique<WireProxy>(ep);
    hit = proxy->add(rule);
    proxy->start();
    workers.spawn_cli({"worker", "--connect", ep, "--name", "direct"});
    workers.spawn_cli({"worker", "--connect", proxy->endpoint(), "--name", "proxied"});
  };
  Result<RunResult> result = Status::Internal("not run");
  testing::within_seconds(60, "a stream run with a garbled message", [&] { result = run_cluster(*p, RunOptions{}, c); });
  applied = proxy ? proxy->applied(hit) : 0;
  return result;
}
Status proxied_stream_error(const ProxyRule& rule, int& applied) {
  auto r = proxied_stream(rule, applied, /*checkpoint_every_s=*/0);
  return r.ok() ? Status::Ok() : r.status();
}

ProxyRule second_reply(ProxyAction action) {
  ProxyRule r;
  r.action = action;
  r.envelope = EnvelopeKind::kReply;
  r.nth = 2;  // after READY: tokens mid-stream, or DONE
  return r;
}

TEST(StreamClusterProxy, AnUnreadableMessageEndsTheRunNamingTheNode) {
  int applied = 0;
  const Status s = proxied_stream_error(second_reply(ProxyAction::kGarbleEnvelope), applied);
  EXPECT_EQ(applied, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'proxied'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("cannot be read"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("bad magic"), std::string::npos) << s.ToString();
}

TEST(StreamClusterProxy, AGarbledBodyEndsTheRunNamingTheNode) {
  int applied = 0;
  const Status s = proxied_stream_error(second_reply(ProxyAction::kGarble), applied);
  EXPECT_EQ(applied, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'proxied'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("malformed"), std::string::npos) << s.ToString();
}

TEST(StreamClusterProxy, AMessageOnlyADriverSendsEndsTheRunNamingTheNode) {
  ProxyRule r = second_reply(ProxyAction::kRewriteKind);
  r.new_kind = EnvelopeKind::kRequest;
  int applied = 0;
  const Status s = proxied_stream_error(r, applied);
  EXPECT_EQ(applied, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'proxied'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("sent a REQUEST, which a welcomed stream node never sends"), std::string::npos) << s.ToString();
}

TEST(StreamClusterProxy, WithCheckpointsANodeWhoseMessageCannotBeReadIsLostAndTheRunGoesOn) {
  int applied = 0;
  auto r = proxied_stream(second_reply(ProxyAction::kGarbleEnvelope), applied, 0.1);
  EXPECT_EQ(applied, 1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->losses.size(), 1u);
  EXPECT_EQ(r->losses[0].worker, "proxied");
  EXPECT_NE(r->losses[0].why.find("bad magic"), std::string::npos) << r->losses[0].why;
  std::uint64_t total = 0;
  for (std::uint64_t i = 0; i < 20000; ++i) total += 2 * i;
  ASSERT_EQ(r->outputs["out"].size(), 8u);
  std::uint64_t got = 0;
  std::memcpy(&got, r->outputs["out"].data(), 8);
  EXPECT_EQ(got, total);
}

}  // namespace
}  // namespace redflow::stream

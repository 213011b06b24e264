// The stream driver's node service (src/stream/node_service.hpp) on the peer
// hub, driven without a socket or a process: HELLOs and messages are handed
// to the hub as bytes from a routing id, the clock is a value the test
// advances, and what the driver sends is recorded. Who is refused while the
// run goes on, when SETUP goes out, and which losses end the run.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "hub_recording.hpp"
#include "net/worker_messages.hpp"
#include "redflow/stream.hpp"
#include "stream/node_service.hpp"
#include "stream/stream_messages.hpp"

namespace redflow::stream {
namespace {

using namespace std::chrono_literals;
using testing::HubSent;
using testing::of_kind;
using testing::refusal_to;

constexpr const char* kCountAndCollect = R"(digraph g {
  src [operator="counter", args="n=10"];
  out [operator="collect"];
  src -> out [token=8];
})";

net::HelloMessage node_hello(const std::string& name, std::vector<std::string> operators = {"counter", "collect"}) {
  net::HelloMessage h = testing::hello_offering(net::Role::kNode, kStreamProtocolVersion, name);
  h.operators = std::move(operators);
  return h;
}

class StreamNodeServiceTest : public ::testing::Test {
 protected:
  StreamNodeServiceTest() : program_(make_program()) {}
  static Program make_program() {
    auto p = Program::from_dot(kCountAndCollect, OperatorRegistry::with_builtins());
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return std::move(*p);
  }
  // A service for `nodes` nodes, both operators on node 0 (or as `node_of` says).
  void start(unsigned nodes, std::vector<unsigned> node_of = {0, 0}) {
    options_.cluster.min_workers = nodes;
    options_.cluster.heartbeat_timeout_s = 2;
    service_ = std::make_unique<NodeService>(program_, run_, options_, std::move(node_of));
    driver_ = std::make_unique<testing::HubDriver>(service_->hub());
  }
  std::vector<HubSent> say(const std::string& from, net::EnvelopeKind kind, std::vector<std::byte> body, net::PeerHub::Time at) {
    return driver_->say(from, kind, 0, std::move(body), at);
  }
  std::vector<HubSent> say_hello(const std::string& from, const net::HelloMessage& hello, net::PeerHub::Time at) {
    return driver_->say_hello(from, hello, at);
  }

  Program program_;
  RunOptions run_;
  ClusterOptions options_;
  std::unique_ptr<NodeService> service_;
  std::unique_ptr<testing::HubDriver> driver_;
  const net::PeerHub::Time t0_ = net::PeerHub::Time{} + 1000s;
};

TEST_F(StreamNodeServiceTest, AWorkerLackingAnOperatorIsRefusedAndTheRunWaitsForAnother) {
  start(1);
  std::vector<HubSent> sent = say_hello("lacking", node_hello("lacking", {"counter"}), t0_);
  EXPECT_EQ(refusal_to(sent, "lacking"), "it lacks the operator(s) 'collect' that the program uses");
  EXPECT_TRUE(service_->error().ok()) << service_->error().ToString();
  EXPECT_EQ(service_->hub().size(), 0u);
  // The wait's error names the refusal, should nobody else come.
  const Status none = service_->none_came("tcp://127.0.0.1:1");
  EXPECT_NE(none.message().find("0 came"), std::string::npos) << none.ToString();
  EXPECT_NE(none.message().find("refused worker 'lacking' (host pid 9): it lacks the operator(s) 'collect'"), std::string::npos)
      << none.ToString();
  // A worker with every operator is welcomed as node 0 and given its SETUP after its WELCOME.
  sent = say_hello("full", node_hello("full"), t0_ + 1s);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].kind, net::EnvelopeKind::kWelcome);
  EXPECT_EQ(sent[1].kind, net::EnvelopeKind::kRequest);
  SetupMessage setup;
  ASSERT_TRUE(decode(sent[1].body, setup).ok());
  EXPECT_EQ(setup.node, 0u);
  EXPECT_TRUE(service_->error().ok());
}

TEST_F(StreamNodeServiceTest, SetupWaitsForEveryNode) {
  start(2);
  std::vector<HubSent> sent = say_hello("a", node_hello("a"), t0_);
  EXPECT_TRUE(of_kind(sent, "a", net::EnvelopeKind::kRequest).empty());
  sent = say_hello("b", node_hello("b"), t0_);
  EXPECT_EQ(of_kind(sent, "a", net::EnvelopeKind::kRequest).size(), 1u);
  EXPECT_EQ(of_kind(sent, "b", net::EnvelopeKind::kRequest).size(), 1u);
  // A third is refused: the program has its nodes.
  EXPECT_EQ(refusal_to(say_hello("c", node_hello("c"), t0_), "c"), "this stream program has all the 2 nodes it waits for");
  EXPECT_TRUE(service_->error().ok());
}

TEST_F(StreamNodeServiceTest, ASilentNodeEndsTheRunWithAnErrorNamingItsOperators) {
  start(1);
  say_hello("w", node_hello("w"), t0_);
  service_->hub().on_tick(t0_ + 1s);
  EXPECT_TRUE(service_->error().ok());
  const std::vector<HubSent> sent = driver_->tick(t0_ + 2500ms);
  ASSERT_FALSE(service_->error().ok());
  EXPECT_NE(service_->error().message().find("stream worker 'w' (node 0 on host, operators src, out) was lost mid-stream: silent for more than 2 s"),
            std::string::npos)
      << service_->error().ToString();
  EXPECT_EQ(of_kind(sent, "w", net::EnvelopeKind::kBye).size(), 1u);
}

TEST_F(StreamNodeServiceTest, ADroppedConnectionEndsTheRun) {
  start(1);
  driver_->out.unreachable.insert("w");
  say_hello("w", node_hello("w"), t0_);  // its WELCOME cannot be routed
  ASSERT_FALSE(service_->error().ok());
  EXPECT_NE(service_->error().message().find("its connection dropped"), std::string::npos) << service_->error().ToString();
}

TEST_F(StreamNodeServiceTest, ALateMessageFromALostNodeIsDiscardedAndCounted) {
  start(1);
  say_hello("w", node_hello("w"), t0_);
  say("w", net::EnvelopeKind::kBye, {}, t0_ + 1s);
  ASSERT_FALSE(service_->error().ok());
  const Status first = service_->error();
  std::vector<std::byte> ready;
  encode_type(StreamMessage::kReady, ready);
  EXPECT_TRUE(say("w", net::EnvelopeKind::kReply, ready, t0_ + 2s).empty());
  EXPECT_EQ(service_->hub().counts().discarded_late, 1u);
  EXPECT_FALSE(service_->started());
  EXPECT_EQ(service_->error().message(), first.message());
}

// The live sample over worker processes (RunOptions::on_sample): the
// streams between nodes, each with the tokens the driver relayed on it,
// read from the TOKENS bodies it forwards.
TEST_F(StreamNodeServiceTest, TokensRelayedBetweenNodesAreCountedByStream) {
  run_.on_sample = [](const std::vector<StreamProfile>&) {};
  start(2, {0, 1});  // src on node 0, out on node 1: the one stream crosses
  say_hello("a", node_hello("a"), t0_);
  say_hello("b", node_hello("b"), t0_);
  const std::vector<std::byte> tokens(7 * 8, std::byte{1});
  for (std::size_t n : {3u, 4u}) {
    std::vector<std::byte> body;
    TokenBatchWriter w(body);
    w.begin(1);
    w.add(0, n == 4, std::span(tokens).first(n * 8), n);
    const std::vector<HubSent> sent = say("a", net::EnvelopeKind::kReply, body, t0_ + 1s);
    EXPECT_EQ(of_kind(sent, "b", net::EnvelopeKind::kRequest).size(), 1u) << "forwarded to node 1";
  }
  EXPECT_TRUE(service_->error().ok()) << service_->error().ToString();
  const std::vector<StreamProfile> relayed = service_->relayed_streams();
  ASSERT_EQ(relayed.size(), 1u);
  EXPECT_EQ(relayed[0].from, "src");
  EXPECT_EQ(relayed[0].to, "out");
  EXPECT_EQ(relayed[0].tokens, 7u);
  EXPECT_EQ(relayed[0].queued, 0u);
}

TEST_F(StreamNodeServiceTest, StreamsWithinANodeAreNotAmongTheRelayed) {
  start(1);
  EXPECT_TRUE(service_->relayed_streams().empty());
}

}  // namespace
}  // namespace redflow::stream

// The stream driver's node service (src/stream/node_service.hpp) on the peer
// hub, driven without a socket or a process: HELLOs and messages are handed
// to the hub as bytes from a routing id, the clock is a value the test
// advances, and what the driver sends is recorded. Who is refused while the
// run goes on, when SETUP goes out, and which losses end the run.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
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

std::vector<std::byte> bytes_of(const std::string& text) {
  return std::vector<std::byte>(reinterpret_cast<const std::byte*>(text.data()), reinterpret_cast<const std::byte*>(text.data() + text.size()));
}
// A collect operator's saved state holding `text` (CollectOperator::snapshot's form).
std::vector<std::byte> collect_state(const std::string& text) {
  StateWriter w;
  w.values(bytes_of(text));
  return std::move(w.bytes);
}
std::vector<std::byte> output(std::uint32_t op, std::uint64_t offset, const std::string& text) {
  std::vector<std::byte> b;
  encode(OutputMessage{op, offset, bytes_of(text)}, b);
  return b;
}

class StreamNodeServiceTest : public ::testing::Test {
 protected:
  StreamNodeServiceTest() : program_(make_program()) {}
  static Program make_program() {
    static const OperatorRegistry reg = OperatorRegistry::with_builtins();  // a program keeps its registry's address
    auto p = Program::from_dot(kCountAndCollect, reg);
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

// With direct links each SETUP says where every node's peer socket is (the
// address the driver saw it at, the port and key its HELLO gave), and each
// WELCOME lists the keys the nodes' sockets let in; without, no links.
TEST_F(StreamNodeServiceTest, SetupSaysWhereEveryNodeListensAndWelcomeWhichKeysGetIn) {
  for (const bool direct : {true, false}) {
    options_.cluster.min_workers = 2;
    options_.direct_links = direct;
    service_ = std::make_unique<NodeService>(program_, run_, options_, std::vector<unsigned>{0, 1}, std::vector<std::string>{"KEY-A", "KEY-B"});
    driver_ = std::make_unique<testing::HubDriver>(service_->hub());
    net::HelloMessage a = node_hello("a"), b = node_hello("b");
    a.peer_port = 4000;
    a.public_key = "KEY-A";
    b.peer_port = 4001;
    b.public_key = "KEY-B";
    std::vector<HubSent> sent = say_hello("a", a, t0_);
    EXPECT_EQ(testing::welcome_to(sent, "a").peer_keys, (std::vector<std::string>{"KEY-A", "KEY-B"}));
    sent = say_hello("b", b, t0_);
    for (const char* node : {"a", "b"}) {
      const auto requests = of_kind(sent, node, net::EnvelopeKind::kRequest);
      ASSERT_EQ(requests.size(), 1u) << node;
      SetupMessage setup;
      ASSERT_TRUE(decode(requests[0].body, setup).ok()) << node;
      if (direct) {
        EXPECT_EQ(setup.links, (std::vector<NodeLink>{{"tcp://10.0.0.9:4000", "KEY-A"}, {"tcp://10.0.0.9:4001", "KEY-B"}})) << node;
      } else {
        EXPECT_TRUE(setup.links.empty()) << node << ": through the driver";
      }
    }
  }
}

// SENT: what a node sent straight to others feeds the progress and the live
// sample; a count on a stream that does not leave that node ends the run, naming it.
TEST_F(StreamNodeServiceTest, SentCountsWhatWentNodeToNodeAndRefusesAStreamThatDoesNotLeaveTheNode) {
  run_.on_sample = [](const std::vector<StreamProfile>&) {};
  start(2, {0, 1});
  say_hello("a", node_hello("a"), t0_);
  say_hello("b", node_hello("b"), t0_);
  std::vector<std::byte> sent;
  encode_sent(4096, {TokenCount{0, 500}}, sent);
  say("a", net::EnvelopeKind::kReply, sent, t0_);
  EXPECT_TRUE(service_->error().ok()) << service_->error().ToString();
  EXPECT_EQ(service_->relayed(), 4096u);
  const std::vector<StreamProfile> streams = service_->relayed_streams();
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].tokens, 500u);
  say("b", net::EnvelopeKind::kReply, sent, t0_);
  EXPECT_NE(service_->error().message().find("counted tokens on stream 0, which does not leave it"), std::string::npos)
      << service_->error().ToString();
}

// A collect operator's output comes as OUTPUTs while the run goes on, each
// where the last ended; DONE carries only other operators' outputs. One at the wrong offset, for an
// operator that is not a collect, or from a node that does not run it ends
// the run, naming it.
TEST_F(StreamNodeServiceTest, OutputGathersInOrderAndRefusesAGapOrAStranger) {
  options_.checkpoint_every_s = 0;  // no final state to wait for
  start(2, {0, 1});
  say_hello("a", node_hello("a"), t0_);
  say_hello("b", node_hello("b"), t0_);
  std::vector<std::byte> ready, done;
  encode_ready(0, ready);
  say("a", net::EnvelopeKind::kReply, ready, t0_);
  say("b", net::EnvelopeKind::kReply, ready, t0_);
  ASSERT_TRUE(service_->started());
  say("b", net::EnvelopeKind::kReply, output(1, 0, "head "), t0_);
  say("b", net::EnvelopeKind::kReply, output(1, 5, "and tail"), t0_);
  encode_done(RunResult{}, done);
  say("a", net::EnvelopeKind::kReply, done, t0_);
  // An operator that is not a collect but leaves an output reports it in its DONE.
  RunResult with_output;
  with_output.outputs["other"] = bytes_of("at the end");
  std::vector<std::byte> done_b;
  encode_done(with_output, done_b);
  say("b", net::EnvelopeKind::kReply, done_b, t0_);
  ASSERT_TRUE(service_->done());
  EXPECT_TRUE(service_->error().ok()) << service_->error().ToString();
  const RunResult r = service_->finish();
  EXPECT_EQ(r.outputs.at("out"), bytes_of("head and tail"));
  EXPECT_EQ(r.outputs.at("other"), bytes_of("at the end"));

  for (auto [from, body, says] : {std::tuple{"b", output(1, 3, "gap"), "at byte 3, but the driver holds 0"},
                                  std::tuple{"a", output(1, 0, "x"), "output of operator 1, which is not a collect operator it runs"},
                                  std::tuple{"a", output(0, 0, "x"), "output of operator 0, which is not a collect operator it runs"},
                                  std::tuple{"b", std::vector<std::byte>{std::byte{12}, std::byte{1}}, "malformed"}}) {
    start(2, {0, 1});
    say_hello("a", node_hello("a"), t0_);
    say_hello("b", node_hello("b"), t0_);
    say(from, net::EnvelopeKind::kReply, body, t0_);
    EXPECT_NE(service_->error().message().find(says), std::string::npos) << says << ": " << service_->error().ToString();
  }
}

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

// A reader's CREDIT goes to the producer's node unchanged; one on a stream
// the sender does not read from that node ends the run naming both.
TEST_F(StreamNodeServiceTest, CreditGoesToTheProducersNodeAndAStrangersIsRefused) {
  start(2, {0, 1});  // src on node 0, out on node 1
  say_hello("a", node_hello("a"), t0_);
  say_hello("b", node_hello("b"), t0_);
  std::vector<std::byte> grant;
  encode_credits(0, {TokenCount{0, 4096}}, grant);
  std::vector<HubSent> sent = say("b", net::EnvelopeKind::kReply, grant, t0_ + 1s);
  const auto to_a = of_kind(sent, "a", net::EnvelopeKind::kRequest);
  ASSERT_EQ(to_a.size(), 1u) << "forwarded to node 0";
  EXPECT_EQ(to_a[0].body, grant);
  EXPECT_TRUE(service_->error().ok()) << service_->error().ToString();
  // Node 0 produces the stream; it cannot grant credit on it.
  std::vector<std::byte> wrong;
  encode_credits(1, {TokenCount{0, 1}}, wrong);
  sent = say("a", net::EnvelopeKind::kReply, wrong, t0_ + 2s);
  EXPECT_TRUE(of_kind(sent, "b", net::EnvelopeKind::kRequest).empty()) << "not forwarded";
  EXPECT_NE(service_->error().message().find("granted credit on stream 0 from node 1, which it does not read from there"), std::string::npos)
      << service_->error().ToString();
}

TEST_F(StreamNodeServiceTest, StreamsWithinANodeAreNotAmongTheRelayed) {
  start(1);
  EXPECT_TRUE(service_->relayed_streams().empty());
}

// Checkpoints and a lost node, message by message: a CHECKPOINT to every
// node once the nodes started and checkpoint_every_s passed; a BARRIER
// passed on to the node that reads the stream; each operator's SNAPSHOT
// making the checkpoint whole; then a node silent: the survivor gets a SETUP
// of the next incarnation holding both operators' checkpoints, what it sends
// before its READY of that incarnation is dropped, and the run ends with the
// loss in its report.
TEST_F(StreamNodeServiceTest, ALostNodesOperatorsGoToTheSurvivorWithTheLastWholeCheckpoint) {
  options_.checkpoint_every_s = 0.5;
  start(2, {0, 1});
  say_hello("a", node_hello("a"), t0_);
  say_hello("b", node_hello("b"), t0_);
  std::vector<std::byte> ready;
  encode_ready(0, ready);
  say("a", net::EnvelopeKind::kReply, ready, t0_);
  std::vector<HubSent> sent = say("b", net::EnvelopeKind::kReply, ready, t0_);
  ASSERT_EQ(of_kind(sent, "a", net::EnvelopeKind::kRequest).size(), 1u) << "START";
  ASSERT_TRUE(service_->started());
  service_->tick(t0_ + 100ms);
  EXPECT_TRUE(driver_->flush().empty()) << "no checkpoint before checkpoint_every_s";
  service_->tick(t0_ + 600ms);
  sent = driver_->flush();
  for (const char* node : {"a", "b"}) {
    const auto got = of_kind(sent, node, net::EnvelopeKind::kRequest);
    ASSERT_EQ(got.size(), 1u) << node;
    std::uint32_t epoch = 0;
    ASSERT_TRUE(decode_checkpoint(got[0].body, epoch).ok());
    EXPECT_EQ(epoch, 1u);
  }
  // src's barrier on the stream to node 1, passed on unchanged (no tokens restored yet).
  std::vector<std::byte> barrier;
  encode_barriers({BarrierEntry{0, 1, 6}}, barrier);
  sent = say("a", net::EnvelopeKind::kReply, barrier, t0_ + 700ms);
  const auto forwarded = of_kind(sent, "b", net::EnvelopeKind::kRequest);
  ASSERT_EQ(forwarded.size(), 1u);
  std::vector<BarrierEntry> got;
  ASSERT_TRUE(decode_barriers(forwarded[0].body, got).ok());
  EXPECT_EQ(got, (std::vector<BarrierEntry>{{0, 1, 6}}));
  // Both parts: the checkpoint is whole. out had 2 tokens in flight.
  const std::vector<std::byte> two_tokens(16, std::byte{7});
  for (auto [node, op, part] : {std::tuple{"a", 0u, OperatorCheckpoint{false, {std::byte{1}}, {}}},
                                std::tuple{"b", 1u, OperatorCheckpoint{false, collect_state("abcdefgh"), {two_tokens}}}}) {
    std::vector<std::byte> b;
    encode(SnapshotMessage{1, op, part}, b);
    say(node, net::EnvelopeKind::kReply, b, t0_ + 800ms);
  }
  // Node b goes silent: lost (the driver's turn ticks the service, which
  // starts checkpoint 2, then the hub, which finds b silent); node a gets a
  // SETUP of incarnation 1 with both operators as checkpoint 1 has them.
  say("a", net::EnvelopeKind::kHeartbeat, {}, t0_ + 2s);
  service_->tick(t0_ + 3s);
  sent = driver_->tick(t0_ + 3s);
  ASSERT_TRUE(service_->error().ok()) << service_->error().ToString();
  std::vector<SetupMessage> setups;
  for (const HubSent& m : of_kind(sent, "a", net::EnvelopeKind::kRequest))
    if (SetupMessage setup; decode(m.body, setup).ok()) setups.push_back(setup);
  ASSERT_EQ(setups.size(), 1u);
  const SetupMessage& setup = setups[0];
  EXPECT_EQ(setup.incarnation, 1u);
  EXPECT_EQ(setup.epoch, 2u) << "the next checkpoint is 3: 2 was abandoned";
  EXPECT_EQ(setup.node_of, (std::vector<std::uint32_t>{0, 0}));
  ASSERT_EQ(setup.restore.size(), 2u);
  EXPECT_EQ(setup.restore[1].second.channels, (std::vector<std::vector<std::byte>>{two_tokens}));
  // Before its READY of incarnation 1, what node a sends is the abandoned incarnation's: dropped.
  std::vector<std::byte> done;
  encode_done(RunResult{}, done);
  say("a", net::EnvelopeKind::kReply, done, t0_ + 3100ms);
  say("a", net::EnvelopeKind::kReply, output(1, 8, "stale"), t0_ + 3100ms);
  EXPECT_FALSE(service_->done());
  EXPECT_TRUE(service_->error().ok()) << service_->error().ToString();
  encode_ready(1, ready = {});
  sent = say("a", net::EnvelopeKind::kReply, ready, t0_ + 3200ms);
  EXPECT_EQ(of_kind(sent, "a", net::EnvelopeKind::kRequest).size(), 1u) << "START again";
  // The collect goes on from the 8 bytes its checkpoint holds; its final
  // state says it finished and carries none of them.
  say("a", net::EnvelopeKind::kReply, output(1, 8, "ij"), t0_ + 3250ms);
  std::vector<std::byte> final_state;
  encode(SnapshotMessage{kFinalEpoch, 1, OperatorCheckpoint{true, collect_state(""), {}}}, final_state);
  say("a", net::EnvelopeKind::kReply, final_state, t0_ + 3250ms);
  say("a", net::EnvelopeKind::kReply, done, t0_ + 3300ms);
  ASSERT_TRUE(service_->done());
  const RunResult r = service_->finish();
  EXPECT_TRUE(service_->error().ok()) << service_->error().ToString();
  EXPECT_EQ(r.outputs.at("out"), bytes_of("abcdefghij"));
  EXPECT_EQ(r.checkpoints, 1u);
  ASSERT_EQ(r.losses.size(), 1u);
  EXPECT_EQ(r.losses[0].worker, "b");
  EXPECT_EQ(r.losses[0].checkpoint, 1u);
  EXPECT_NE(r.losses[0].why.find("silent"), std::string::npos) << r.losses[0].why;
  EXPECT_NEAR(r.losses[0].resumed_s, 0.2, 1e-6);
}

// An operator that cannot snapshot its state: no checkpoints, and a lost
// node ends the run with the error naming the node and that operator.
TEST_F(StreamNodeServiceTest, WithAnOperatorThatCannotSnapshotALostNodeEndsTheRunNamingIt) {
  OperatorRegistry reg = OperatorRegistry::with_builtins();
  const OperatorFactory* collect = reg.find("collect");
  ASSERT_NE(collect, nullptr);
  reg.add("opaque", OperatorFactory{[](const Args&) -> Result<OperatorSpec> { return OperatorSpec{1, 0, {8}, {}}; }, collect->make});
  auto p = Program::from_dot(R"(digraph g { src [operator="counter", args="n=10"]; out [operator="opaque"]; src -> out [token=8]; })", reg);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  program_ = std::move(*p);
  start(2, {0, 1});
  net::HelloMessage ha = node_hello("a", {"counter", "opaque"}), hb = node_hello("b", {"counter", "opaque"});
  say_hello("a", ha, t0_);
  say_hello("b", hb, t0_);
  std::vector<std::byte> ready;
  encode_ready(0, ready);
  say("a", net::EnvelopeKind::kReply, ready, t0_);
  say("b", net::EnvelopeKind::kReply, ready, t0_);
  ASSERT_TRUE(service_->started());
  say("a", net::EnvelopeKind::kHeartbeat, {}, t0_ + 2s);
  driver_->tick(t0_ + 3s);
  ASSERT_FALSE(service_->error().ok());
  EXPECT_NE(service_->error().message().find("'b'"), std::string::npos) << service_->error().ToString();
  EXPECT_NE(service_->error().message().find("'out' (opaque) cannot snapshot"), std::string::npos) << service_->error().ToString();
}

}  // namespace
}  // namespace redflow::stream
